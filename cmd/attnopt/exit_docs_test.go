package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/attnopt/attnopt/validate"
)

var updateDocs = flag.Bool("update", false, "rewrite the exit-code tables of docs/cli.md and docs/design.md from exit.go")

// The exit codes are documented once, in exit.go: docs/cli.md and
// docs/design.md carry the table it renders, word for word (issue 38:
// design.md had lost code 4).
func TestExitCodeDocs(t *testing.T) {
	open, end := []byte("<!-- exit-codes -->\n"), []byte("<!-- /exit-codes -->")
	for _, doc := range []string{"cli.md", "design.md"} {
		path := filepath.Join("..", "..", "docs", doc)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		i, j := bytes.Index(text, open), bytes.Index(text, end)
		if i < 0 || j < i {
			t.Fatalf("docs/%s has no %s … %s region", doc, open, end)
		}
		want := append(append(append([]byte{}, text[:i+len(open)]...), exitCodesTable()...), text[j:]...)
		if bytes.Equal(text, want) {
			continue
		}
		if *updateDocs {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("docs/%s: the exit-code table differs from exit.go's; go test ./cmd/attnopt -run TestExitCodeDocs -update", doc)
	}
}

// docs/validate.md's verdict table gives each verdict the code validate
// exits with.
func TestVerdictExitCodesInDocs(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "validate.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []validate.Verdict{validate.Pass, validate.Fail, validate.NoChecks, validate.CannotCheck, validate.Approximate} {
		rep := &validate.Report{Verdict: v, Checks: []validate.Check{{Name: "site 0", Verdict: v}}}
		code := exitCode(verdictError(rep, "a.onnx", "b.onnx"), io.Discard)
		row := regexp.MustCompile(fmt.Sprintf("(?m)^\\| `%s` \\| %d \\|", regexp.QuoteMeta(v.ReportString()), code))
		if !row.Match(text) {
			t.Errorf("docs/validate.md: no row | `%s` | %d |", v.ReportString(), code)
		}
	}
}
