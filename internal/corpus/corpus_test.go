package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// A clone without the corpus skips with one line; $ATTNOPT_CORPUS points
// at one anywhere.
func TestRequireSkipsOrFinds(t *testing.T) {
	present := t.TempDir()
	os.MkdirAll(filepath.Join(present, "onnxruntime"), 0o755)
	os.WriteFile(filepath.Join(present, "onnxruntime", "m.onnx"), nil, 0o644)
	cases := []struct {
		name    string
		env     string
		parts   []string
		skipped bool
	}{
		{"env names a corpus", present, nil, false},
		{"entry present", present, []string{"onnxruntime", "m.onnx"}, false},
		{"entry absent", present, []string{"onnxruntime", "other.onnx"}, true},
		{"env names nothing", filepath.Join(present, "missing"), nil, true},
	}
	for _, tc := range cases {
		t.Setenv(Env, tc.env)
		var skipped bool
		var got string
		t.Run(tc.name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			if tc.parts == nil {
				got = Require(t)
			} else {
				got = Path(t, tc.parts...)
			}
		})
		if skipped != tc.skipped {
			t.Errorf("%s: skipped = %v, want %v", tc.name, skipped, tc.skipped)
		}
		if !tc.skipped && got != filepath.Join(append([]string{tc.env}, tc.parts...)...) {
			t.Errorf("%s: got %q", tc.name, got)
		}
	}
}

// Without the variable the corpus is shared/corpus beside the folder that
// holds go.mod.
func TestRootBesideTheRepository(t *testing.T) {
	t.Setenv(Env, "")
	dir, _ := Root()
	repo := repoRoot()
	if repo == "" || dir != filepath.Join(filepath.Dir(repo), "shared", "corpus") {
		t.Fatalf("Root() = %q (repository %q)", dir, repo)
	}
	if _, err := os.Stat(filepath.Join(repo, "go.mod")); err != nil {
		t.Fatal(err)
	}
}
