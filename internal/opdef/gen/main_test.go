package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesFresh: every file generated from internal/opdef is
// what the table gives now, so a row changed without `go generate
// ./internal/opdef` fails here, naming the file.
func TestGeneratedFilesFresh(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := render(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range sortedKeys(files) {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./internal/opdef)", rel, err)
			continue
		}
		if !bytes.Equal(got, files[rel]) {
			t.Errorf("%s is stale: run go generate ./internal/opdef", rel)
		}
	}
}

// TestRegionsNeedMarkers: a hand-written file that lost its markers is an
// error naming them, not a silent skip.
func TestRegionsNeedMarkers(t *testing.T) {
	_, err := replaceRegion([]byte("no markers\n"), "attrs", "x")
	if err == nil || !strings.Contains(err.Error(), "<!-- opdef:attrs -->") {
		t.Fatalf("err = %v", err)
	}
	got, err := replaceRegion([]byte("a\n  <!-- opdef:x -->\n  old\n  <!-- /opdef:x -->\nb\n"), "x", "new text")
	if want := "a\n  <!-- opdef:x -->\n  new text\n  <!-- /opdef:x -->\nb\n"; err != nil || string(got) != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}
