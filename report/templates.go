package report

import (
	"bytes"
	"embed"
	"fmt"
	"html"
	htmltemplate "html/template"
	"io"
	"strings"
	"text/tabwriter"
	"text/template"
)

// The text and Markdown forms of each document are text/template files,
// the HTML form an html/template file, all under templates/, each walking
// the document's one view model (view.go, check_view.go).

//go:embed templates/*.tmpl
var templateFiles embed.FS

var (
	textTemplates *template.Template
	htmlTemplates *htmltemplate.Template
)

func init() {
	textTemplates = template.Must(template.New("").Funcs(textFuncs).ParseFS(templateFiles, "templates/*.txt.tmpl", "templates/*.md.tmpl"))
	htmlTemplates = htmltemplate.Must(htmltemplate.New("").Funcs(htmlFuncs).ParseFS(templateFiles, "templates/*.html.tmpl"))
}

// sharedFuncs format the numbers of every form.
var sharedFuncs = map[string]any{
	"bytes": HumanBytes,
	"opset": opsetText,
	"delta": delta,
}

var textFuncs = merge(sharedFuncs, map[string]any{
	"row":   textRow,
	"table": textTable,
	"cell":  mdCell,
	"code":  mdCode,
	"esc":   html.EscapeString,
})

var htmlFuncs = merge(sharedFuncs, map[string]any{
	"text":      htmlText,
	"bytesData": bytesData,
	"passClass": passClass,
	"minus":     func(a, b int) int { return a - b },
	"add": func(xs ...float64) float64 {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		return sum
	},
	"f0": func(x float64) string { return fmt.Sprintf("%.0f", x) },
	"f1": func(x float64) string { return fmt.Sprintf("%.1f", x) },
})

func merge(a, b map[string]any) map[string]any {
	m := map[string]any{}
	for _, x := range []map[string]any{a, b} {
		for k, v := range x {
			m[k] = v
		}
	}
	return m
}

// executeText executes the text or Markdown template name.
func executeText(w io.Writer, name string, data any) error {
	return textTemplates.ExecuteTemplate(w, name, data)
}

// executeHTML executes the HTML template name.
func executeHTML(w io.Writer, name string, data any) error {
	return htmlTemplates.ExecuteTemplate(w, name, data)
}

// The replacers of table cells, built once (a Replacer builds its tables
// on first use; one per cell cost a seventh of a report's rendering).
var (
	cellBreaks = strings.NewReplacer("\t", " ", "\n", " ")
	mdCellText = strings.NewReplacer("|", `\|`, "\n", " ", "`", "'")
	mdCodeText = strings.NewReplacer("`", "'", "|", `\|`, "\n", " ")
)

// textRow is one line of a text table: cells joined by tabs, each without
// the separator or a line break, "-" for an empty one.
func textRow(cells ...any) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		s := cellBreaks.Replace(fmt.Sprint(c))
		if s == "" {
			s = "-"
		}
		out[i] = s
	}
	return strings.Join(out, "\t") + "\n"
}

// textTable executes the template name, whose lines are textRow's, and
// pads its columns when aligned (a terminal); otherwise the rows stay
// tab-separated, one a line, for pipes and files.
func textTable(aligned bool, name string, data any) (string, error) {
	var buf bytes.Buffer
	var w io.Writer = &buf
	var tw *tabwriter.Writer
	if aligned {
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		w = tw
	}
	if err := textTemplates.ExecuteTemplate(w, name, data); err != nil {
		return "", err
	}
	if tw != nil {
		tw.Flush()
	}
	return buf.String(), nil
}

// mdCell escapes a Markdown table cell.
func mdCell(s string) string {
	if s == "" {
		return "–"
	}
	return mdCellText.Replace(s)
}

// mdCode is s as inline code in a table cell, which a line break would end
// (as mdCell's does).
func mdCode(s string) string {
	if s == "" {
		return "–"
	}
	return "`" + mdCodeText.Replace(s) + "`"
}

// htmlText escapes element text as html.EscapeString does. html/template
// would also write "+" as "&#43;" (a defence for pages without a charset;
// these declare UTF-8), so text goes through this to keep the reports'
// bytes, "+1" and "mask+causal" as they read. Attributes and everything
// not passed through it keep html/template's contextual escaping.
func htmlText(v any) htmltemplate.HTML { return htmltemplate.HTML(html.EscapeString(fmt.Sprint(v))) }

func bytesData(p *int64) string {
	if p == nil {
		return "-1"
	}
	return fmt.Sprint(*p)
}
