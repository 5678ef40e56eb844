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

// Document is a report Render can write. A document that has no form in
// some format returns an error from that writer.
type Document interface {
	writeText(w io.Writer, aligned bool) error
	writeMarkdown(w io.Writer) error
	writeHTML(w io.Writer) error
}

// RenderOptions tune Render. Aligned pads text tables into columns (for a
// terminal); otherwise text tables are tab-separated, one row a line.
type RenderOptions struct {
	Aligned bool
}

// Render writes d in format f: the one switch every report goes through.
func Render(w io.Writer, f Format, d Document, o RenderOptions) error {
	switch f {
	case Text:
		return d.writeText(w, o.Aligned)
	case Markdown:
		return d.writeMarkdown(w)
	case JSON:
		return WriteJSON(w, d)
	case HTML:
		return d.writeHTML(w)
	}
	return fmt.Errorf("unknown format %q", f)
}

// flushWriter is a tabwriter, or a plain writer whose Flush does nothing.
type flushWriter interface {
	io.Writer
	Flush() error
}

type noFlush struct{ io.Writer }

func (noFlush) Flush() error { return nil }

// tableWriter aligns tab-separated rows for a terminal, or passes them on
// as they are.
func tableWriter(w io.Writer, aligned bool) flushWriter {
	if aligned {
		return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	}
	return noFlush{w}
}

// table writes rows aligned (tabwriter) or tab-separated.
type table struct {
	w  io.Writer
	tw *tabwriter.Writer
}

func newTable(w io.Writer, aligned bool) *table {
	t := &table{w: w}
	if aligned {
		t.tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	}
	return t
}

func (t *table) row(cols ...string) {
	for i, c := range cols {
		// A cell never contains the separator or a line break.
		cols[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
		if cols[i] == "" {
			cols[i] = "-"
		}
	}
	line := strings.Join(cols, "\t") + "\n"
	if t.tw != nil {
		io.WriteString(t.tw, line)
	} else {
		io.WriteString(t.w, line)
	}
}

func (t *table) flush() {
	if t.tw != nil {
		t.tw.Flush()
	}
}

// errWriter remembers the first write error so writers can stay linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, nil
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
