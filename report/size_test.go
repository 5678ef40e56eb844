package report

import "testing"

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"1000000": 1000000,
		"16GiB":   16 << 30,
		"512MiB":  512 << 20,
		"1.5GB":   1500000000,
		"1.5gb":   1500000000,
		"200KiB":  200 << 10,
		"2kB":     2000,
		"1TiB":    1 << 40,
		" 64 MiB": 64 << 20,
		"0.5KiB":  512,
		"7B":      7,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "lots", "16XB", "-1GiB", "0", "0.1B", "1.5", "1e9", "16 G i B", "99999999999EiB", "9000PiB", "1.2.3MB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

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
