package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// hostileStrings holds what each format must escape: HTML's markup characters,
// Markdown's cell separator and code quote, and the tab and newline that
// separate text cells and rows.
const hostileStrings = "<script>x</script>&\"'|`\t\n+"

// Strings from a model (names, paths, reasons) reach every format escaped:
// HTML shows them as text, a Markdown table keeps its columns, a text table
// keeps one row a line and its columns.
func TestFormatsEscapeModelStrings(t *testing.T) {
	rewrite, _ := fixtureReports(t, "sagan")
	r := *rewrite
	r.A.Path, r.B.Path = "a"+hostileStrings, "b"+hostileStrings
	r.Sites = append([]SiteReport{}, r.Sites...)
	s := &r.Sites[0]
	s.Softmax, s.Variant, s.Reason = "sm"+hostileStrings, "v"+hostileStrings, "why"+hostileStrings
	r.Notes = []string{"note" + hostileStrings}
	render := func(f Format) string {
		var buf bytes.Buffer
		if err := Render(&buf, f, &r, RenderOptions{}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	html := render(HTML)
	if strings.Contains(html, "<script>x") || strings.Count(html, "<script>") != 1 {
		t.Error("HTML: a model string is markup")
	}
	for _, want := range []string{"sm&lt;script&gt;x&lt;/script&gt;&amp;&#34;&#39;|`", `data-site="0"`} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}

	md := render(Markdown)
	row := regexp.MustCompile("(?m)^\\| 0 \\|.*$").FindString(md)
	if n := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(row, -1)); n != 15 {
		t.Errorf("Markdown site row has %d cell separators, want 15: %s", n, row)
	}

	text := render(Text)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "SITE\t") {
			header, site := strings.Count(l, "\t"), lines[i+1]
			if !strings.HasPrefix(site, "0\tsm<script>") || strings.Count(site, "\t") != header {
				t.Errorf("text site row %q: want %d tabs", site, header)
			}
		}
	}
	if !strings.Contains(text, "note: note"+hostileStrings) {
		t.Error("text lacks the note as given")
	}
}
