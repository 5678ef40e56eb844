package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
		rec := &skipRecorder{TB: t}
		var got string
		if tc.parts == nil {
			got = Require(rec)
		} else {
			got = Path(rec, tc.parts...)
		}
		if skipped := rec.msg != ""; skipped != tc.skipped {
			t.Errorf("%s: skipped = %v (%q), want %v", tc.name, skipped, rec.msg, tc.skipped)
		}
		if strings.Contains(rec.msg, "\n") {
			t.Errorf("%s: skip message is not one line: %q", tc.name, rec.msg)
		}
		if !tc.skipped && got != filepath.Join(append([]string{tc.env}, tc.parts...)...) {
			t.Errorf("%s: got %q", tc.name, got)
		}
	}
}

// skipRecorder records a skip instead of ending the test.
type skipRecorder struct {
	testing.TB
	msg string
}

func (r *skipRecorder) Skipf(format string, args ...any) {
	if r.msg == "" {
		r.msg = fmt.Sprintf(format, args...)
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
