package report

import "testing"

func TestFormats(t *testing.T) {
	for in, want := range map[string]Format{"text": Text, "txt": Text, "md": Markdown, "markdown": Markdown, "JSON": JSON, "html": HTML} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil {
		t.Error("ParseFormat(pdf) accepted")
	}
	for in, want := range map[string]Format{"r.md": Markdown, "out/R.JSON": JSON, "x.html": HTML, "x.htm": HTML, "report.txt": Text} {
		if got, err := FormatForPath(in); err != nil || got != want {
			t.Errorf("FormatForPath(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"report", "report.pdf", "report.md.gz"} {
		if _, err := FormatForPath(in); err == nil {
			t.Errorf("FormatForPath(%q) accepted", in)
		}
	}
}
