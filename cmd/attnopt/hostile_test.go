package main

import (
	"bytes"
	"os"
	"runtime/debug"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attnopt/attnopt/internal/hostile"
)

// TestHostileInputs runs every command on every hostile class of issue 13:
// invalid models exit 2 with one stderr line naming the file and the fault;
// valid ones load; nothing panics ("bug") or hangs.
func TestHostileInputs(t *testing.T) {
	for _, c := range hostile.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			model, err := c.Build(dir)
			if err != nil {
				t.Skipf("cannot build the case here: %v", err)
			}
			out := filepath.Join(t.TempDir(), "out.onnx")
			cmds := [][]string{
				{"inspect", model},
				{"check", model, "--memory-budget", "1GiB"},
				{"rewrite", model, "-o", out},
				{"validate", model, model},
				{"diff", model, model},
			}
			for _, args := range cmds {
				code, _, stderr := runWithTimeout(t, args, 60*time.Second)
				if strings.Contains(stderr, "bug") || strings.Contains(stderr, "internal error") {
					t.Fatalf("%v: panicked: %s", args, stderr)
				}
				if c.Valid {
					if code == exitBadInput {
						t.Errorf("%v: valid input refused: %s", args, stderr)
					}
					continue
				}
				if code != exitBadInput {
					t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
					continue
				}
				lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
				if len(lines) != 1 || !strings.HasPrefix(lines[0], "attnopt: "+model+": ") || !strings.Contains(lines[0], c.Want) {
					t.Errorf("%v: want one line naming %s and containing %q, got:\n%s", args, model, c.Want, stderr)
				}
			}
		})
	}
}

// runWithTimeout fails the test instead of hanging it.
func runWithTimeout(t *testing.T, args []string, d time.Duration) (int, string, string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, o, e := runCLI(append([]string{"--quiet"}, args...)...)
		done <- result{code, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(d):
		t.Fatalf("%v: still running after %v (hang)", args, d)
	}
	return 0, "", ""
}

// A panic that still slips through names the file and says it is a bug.
func TestPanicNamesFileAndSaysBug(t *testing.T) {
	model := writeModel(t, testgraph.Classifier())
	var stderr bytes.Buffer
	code := func() (code int) {
		defer guard([]string{"inspect", model, "--json"}, &stderr, &code)
		panic("boom")
	}()
	want := "attnopt: " + model + ": internal error (a bug in attnopt; please report it with this file): boom\n"
	if code != exitBadInput || stderr.String() != want {
		t.Fatalf("exit %d, stderr %q; want 2, %q", code, stderr.String(), want)
	}
}

// --scope model on a 131k-token site would need 64 GiB of scores: refused
// before any run (exit 2, naming the file), not killed by the OOM killer.
func TestValidateModelScopeRefusesHugeTensors(t *testing.T) {
	model := writeModel(t, testgraph.Attention(testgraph.Opts{B: 1, H: 1, N: 131072, D: 8}))
	code, _, stderr := runCLI("validate", model, model, "--scope", "model")
	if code != exitBadInput || !strings.HasPrefix(stderr, "attnopt: "+model+": --scope model would compute") || !strings.Contains(stderr, "64.0 GiB") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// A mapped model truncated by someone else while attnopt reads it faults;
// that is reported as a changed file (exit 2), not a crash.
func TestTruncatedWhileMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.onnx")
	if err := os.WriteFile(path, testgraph.Transformer(1, 1024, 8, "seq").Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := graph.Load(path) // over 16 MiB: mapped
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := func() (code int) {
		defer guard([]string{"rewrite", path}, &stderr, &code)
		debug.SetPanicOnFault(true)
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, v := range m.Graph.Inits {
			raw, _ := v.Const.Raw()
			for _, b := range raw {
				sum += int(b)
			}
		}
		t.Logf("read %d without a fault", sum)
		return 0
	}()
	if code != exitBadInput || !strings.Contains(stderr.String(), path+": the file changed while attnopt was reading it") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// attnopt ops already in a model whose shapes disagree (issue 34) are
// refused on load by inspect and by validate --scope model, which used to
// PASS the mask-batch-2 one: exit 2, one line naming the file and node.
func TestGeometryOfInputAttnoptOps(t *testing.T) {
	for _, c := range hostile.GeometryCases() {
		t.Run(c.Name, func(t *testing.T) {
			model, err := c.Build(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"inspect", model}, {"validate", model, model, "--scope", "model", "--runtime", "go"}} {
				code, _, stderr := runWithTimeout(t, args, 60*time.Second)
				lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
				if code != exitBadInput || len(lines) != 1 || !strings.HasPrefix(lines[0], "attnopt: "+model+": ") || !strings.Contains(lines[0], c.Want) {
					t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming the file and %q", args, code, stderr, c.Want)
				}
			}
		})
	}
}

// A size without a unit is bytes; a fraction without one (1.5) is refused
// rather than read as a 1-byte budget (issue 34).
func TestMemoryBudgetWithoutUnit(t *testing.T) {
	model := writeModel(t, testgraph.Classifier())
	code, _, stderr := runCLI("check", model, "--memory-budget", "1.5")
	if code != exitBadInput || !strings.Contains(stderr, "give a unit") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line asking for a unit", code, stderr)
	}
}
