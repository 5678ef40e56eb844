package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// Formats lists the formats of Render, in the order help texts give them.
var Formats = []Format{Text, Markdown, JSON, HTML}

// ParseFormat accepts text, md (or markdown), json and html.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "text", "txt":
		return Text, nil
	case "md", "markdown":
		return Markdown, nil
	case "json":
		return JSON, nil
	case "html":
		return HTML, nil
	}
	return "", fmt.Errorf("unknown format %q: want text, md, json or html", s)
}

// FormatForPath picks the format from a file name's extension: .txt, .md,
// .json, .html (or .htm).
func FormatForPath(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".txt", ".text":
		return Text, nil
	case ".md", ".markdown":
		return Markdown, nil
	case ".json":
		return JSON, nil
	case ".html", ".htm":
		return HTML, nil
	}
	return "", fmt.Errorf("report file %q: unknown extension %q, want .md, .json, .html or .txt", path, filepath.Ext(path))
}

// Document is a report Render can write: JSON encodes the document
// itself; the other formats render its one view model through the
// templates named after it (templates/NAME.txt.tmpl, .md.tmpl, .html.tmpl).
type Document interface {
	view(o RenderOptions) (name string, model any)
}

// RenderOptions tune Render. Aligned pads text tables into columns (for a
// terminal); otherwise text tables are tab-separated, one row a line.
type RenderOptions struct {
	Aligned bool
}

// Render writes d in format f: the one switch every report goes through.
func Render(w io.Writer, f Format, d Document, o RenderOptions) error {
	name, model := d.view(o)
	switch f {
	case Text:
		return executeText(w, name+".txt", model)
	case Markdown:
		return executeText(w, name+".md", model)
	case JSON:
		return WriteJSON(w, d)
	case HTML:
		return executeHTML(w, name+".html", model)
	}
	return fmt.Errorf("unknown format %q", f)
}

func (r *Report) view(o RenderOptions) (string, any) { return "report", newReportView(r, o.Aligned) }
func (c *Check) view(o RenderOptions) (string, any)  { return "check", newCheckView(c, o.Aligned) }

// tableWriter aligns tab-separated rows for a terminal, or passes them on
// as they are.
func tableWriter(w io.Writer, aligned bool) flushWriter {
	if aligned {
		return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	}
	return noFlush{w}
}

// flushWriter is a tabwriter, or a plain writer whose Flush does nothing.
type flushWriter interface {
	io.Writer
	Flush() error
}

type noFlush struct{ io.Writer }

func (noFlush) Flush() error { return nil }
