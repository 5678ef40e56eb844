package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/report"
)

// conforms fails t when a JSON output does not match its schema.
func conforms(t *testing.T, schema, data string) {
	t.Helper()
	if err := report.ValidateJSON(schema, []byte(data)); err != nil {
		t.Error(err)
	}
}

// fixtureCopy copies a testdata fixture into a temporary directory so
// commands that write beside their input never touch the repository.
func fixtureCopy(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", name, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name+".onnx")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rewritten returns a fixture copy and its `--target attnopt` rewrite.
func rewritten(t *testing.T, name string) (orig, out string) {
	t.Helper()
	orig = fixtureCopy(t, name)
	out = strings.TrimSuffix(orig, ".onnx") + ".attnopt.onnx"
	if code, _, stderr := runCLI("rewrite", orig, "-o", out, "--target", "attnopt"); code != 0 {
		t.Fatalf("rewrite: exit %d: %s", code, stderr)
	}
	return orig, out
}

// check judges a fused op by what it adds beyond its inputs and output
// (docs/design.md §6), not by Q/K/V/O, which the original holds too: the
// 64x64 SAGAN's rewrite keeps 1.1 MiB of packed K/V tiles per CPU thread
// (4096 query rows read them in 16 chunks), over a 1 MiB budget and within
// 2 MiB; its Q/K/V/O (2.2 MiB) count against neither.
func TestCheckJudgesFusedOpsByWhatTheyAdd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sagan.attnopt.onnx")
	if code, _, stderr := runCLI("rewrite", filepath.Join("..", "..", "testdata", "examples", "sagan_64x64.onnx"), "-o", out, "--quiet"); code != 0 {
		t.Fatalf("rewrite: exit %d: %s", code, stderr)
	}
	cases := []struct {
		budget, status string
		code           int
	}{{"1MiB", "over", 1}, {"2MiB", "ok", 0}}
	for _, c := range cases {
		code, stdout, stderr := runCLI("check", out, "--memory-budget", c.budget)
		if code != c.code || !strings.Contains(stdout, "fused: attnopt.FlashAttention attnopt/site0/FlashAttention adds 1.1 MiB") {
			t.Errorf("--memory-budget %s: exit %d, want %d\n%s%s", c.budget, code, c.code, stdout, stderr)
		}
		if c.code == 1 && !strings.Contains(stderr, "fused op attnopt/site0/FlashAttention adds 1.1 MiB") {
			t.Errorf("--memory-budget %s: stderr does not name the fused op:\n%s", c.budget, stderr)
		}
		_, js, _ := runCLI("check", out, "--memory-budget", c.budget, "--format", "json")
		conforms(t, "check.v1.json", js)
		if !strings.Contains(js, `"fused_bytes": 1179648`) || !strings.Contains(js, `"status": "`+c.status+`"`) {
			t.Errorf("--memory-budget %s: JSON:\n%s", c.budget, js)
		}
	}
}

func TestCheckBudgetBetweenOriginalAndRewrite(t *testing.T) {
	// SAGAN: the score tensor is 256 KiB; the fused op adds nothing beyond
	// its inputs and output (Q, K, V, O: 144 KiB, in both graphs). A budget
	// below the scores fails the original and passes the rewrite.
	orig, out := rewritten(t, "sagan")
	code, stdout, stderr := runCLI("check", orig, "--memory-budget", "200KiB")
	if code != 1 {
		t.Fatalf("original: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "1 site(s) or fused op(s) over the 200.0 KiB budget") || !strings.Contains(stderr, "site 0 (/softmax/Softmax) 256.0 KiB") {
		t.Errorf("stderr does not name the site over budget:\n%s", stderr)
	}
	if !strings.Contains(stdout, "/softmax/Softmax\t1\t1\t256\t256\tfloat32\t256.0 KiB\t0 B\tover") {
		t.Errorf("stdout (tab-separated off a terminal):\n%s", stdout)
	}
	code, stdout, stderr = runCLI("check", out, "--memory-budget", "200KiB")
	if code != 0 {
		t.Fatalf("rewrite: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "0 unfused attention site(s), 1 fused op(s)") || !strings.Contains(stdout, "adds 0 B") || !strings.Contains(stdout, "PASS") {
		t.Errorf("rewrite check output:\n%s", stdout)
	}
	// A budget above the scores passes the original too.
	if code, stdout, _ := runCLI("check", orig, "--memory-budget", "262144"); code != 0 || !strings.Contains(stdout, "PASS: all 1 unfused site(s) within 256.0 KiB") {
		t.Errorf("budget = scores: exit %d\n%s", code, stdout)
	}
}

func TestCheckFormatsAndJSONSchemaFields(t *testing.T) {
	orig := fixtureCopy(t, "hf_bert")
	code, stdout, _ := runCLI("check", orig, "--memory-budget", "4KiB", "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	conforms(t, "check.v1.json", stdout)
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if doc["schema"] != "attnopt.check/v1" || doc["over"] != 2.0 || doc["pass"] != false || doc["budget_bytes"] != 4096.0 {
		t.Errorf("json: %v", doc)
	}
	code, stdout, _ = runCLI("check", orig, "--memory-budget", "1GiB", "--format", "md")
	if code != 0 || !strings.Contains(stdout, "## attnopt check") || !strings.Contains(stdout, "| 0 | `/model/encoder/layer.0/attention/self/Softmax` |") {
		t.Errorf("md: exit %d\n%s", code, stdout)
	}
}

func TestCheckUsageErrors(t *testing.T) {
	orig := fixtureCopy(t, "sagan")
	for _, args := range [][]string{
		{"check", orig},
		{"check", orig, "--memory-budget", "lots"},
		{"check", orig, "--memory-budget", "16XB"},
		{"check", orig, "--memory-budget", "-1GiB"},
		{"check", orig, "--memory-budget", "1GiB", "--format", "pdf"},
		{"check", orig, "--memory-budget", "1GiB", "--json", "--format", "md"},
		{"check", filepath.Join(t.TempDir(), "missing.onnx"), "--memory-budget", "1GiB"},
	} {
		if code, _, stderr := runCLI(args...); code != 2 || !strings.HasPrefix(stderr, "attnopt: ") {
			t.Errorf("%v: exit %d, stderr %q", args[1:], code, stderr)
		}
	}
}

func TestCheckSymbolicSizesAreUnknownUnlessStrictOrPinned(t *testing.T) {
	p := fixtureCopy(t, "hf_bert_dynamic")
	code, stdout, stderr := runCLI("check", p, "--memory-budget", "1KiB")
	if code != 0 || !strings.Contains(stdout, "unknown") {
		t.Fatalf("unpinned: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI("check", p, "--memory-budget", "1KiB", "--strict"); code != 1 || !strings.Contains(stderr, "unknown size (--strict)") {
		t.Errorf("--strict: exit %d: %s", code, stderr)
	}
	// Pinned, the size is known: 2·4·16·16·4 B = 8 KiB, over 1 KiB.
	code, stdout, _ = runCLI("check", p, "--memory-budget", "1KiB", "--dim", "batch=2", "--dim", "sequence=16")
	if code != 1 || !strings.Contains(stdout, "8.0 KiB") {
		t.Errorf("pinned: exit %d\n%s", code, stdout)
	}
}

func TestDiffOfModelWithItself(t *testing.T) {
	p := fixtureCopy(t, "hf_bert")
	code, stdout, stderr := runCLI("diff", p, p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "no change: the models have the same inputs, outputs, opsets, 168 node(s) and 19 initializer(s)") {
		t.Errorf("diff with itself:\n%s", stdout)
	}
	code, stdout, _ = runCLI("diff", p, p, "--format", "json")
	conforms(t, "report.v1.json", stdout)
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || doc["changed"] != false || doc["schema"] != "attnopt.report/v1" {
		t.Errorf("json diff with itself: exit %d\n%.400s", code, stdout)
	}
}

func TestDiffOriginalAndRewriteEveryFormat(t *testing.T) {
	orig, out := rewritten(t, "sagan")
	dir := t.TempDir()
	want := map[string]string{
		"text": "0\t/softmax/Softmax\tMatMul/kt/scale-none/v-channels-first\t1\t1\t256\t256\t8\t64\tfloat32\tnone\tfused\tattnopt.FlashAttention",
		"md":   "| 0 | `/softmax/Softmax` |",
		"json": `"status": "fused"`,
		"html": `<rect class="bar after" data-site="0" data-bytes="0"`,
	}
	for f, w := range want {
		code, stdout, stderr := runCLI("diff", orig, out, "--format", f)
		if code != 0 || !strings.Contains(stdout, w) {
			t.Errorf("--format %s: exit %d %s\n%s", f, code, stderr, stdout)
		}
		if f == "json" {
			conforms(t, "report.v1.json", stdout)
		}
		// -o writes the same bytes to a file, atomically.
		file := filepath.Join(dir, "report."+map[string]string{"text": "txt"}[f]+f)
		if f == "text" {
			file = filepath.Join(dir, "report.txt")
		}
		if code, _, stderr := runCLI("diff", orig, out, "-o", file); code != 0 {
			t.Fatalf("-o %s: exit %d: %s", file, code, stderr)
		}
		got, _ := os.ReadFile(file)
		// The same but for the command line the provenance records.
		if f != "text" && withoutProvenance(t, string(got)) != withoutProvenance(t, stdout) {
			t.Errorf("-o %s differs from stdout", file)
		}
		if !strings.Contains(string(got), "/softmax/Softmax") || !strings.Contains(string(got), "fused") {
			t.Errorf("-o %s: %.300s", file, got)
		}
	}
	if code, _, _ := runCLI("diff", orig, out, "--format", "pdf"); code != 2 {
		t.Errorf("--format pdf: exit %d, want 2", code)
	}
	if code, _, _ := runCLI("diff", orig, out, "-o", filepath.Join(dir, "r.pdf")); code != 2 {
		t.Errorf("-o r.pdf: exit %d, want 2", code)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// withoutProvenance drops the provenance a report records (its command
// line differs between two runs), in whichever format it is.
func withoutProvenance(t *testing.T, doc string) string {
	t.Helper()
	if strings.HasPrefix(doc, "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["provenance"]; !ok {
			t.Errorf("JSON without provenance")
		}
		delete(m, "provenance")
		b, _ := json.Marshal(m)
		return string(b)
	}
	var keep []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "<sub>attnopt ") && !strings.HasPrefix(l, `<p class="note" id="provenance">`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestRewriteReportFlag(t *testing.T) {
	orig := fixtureCopy(t, "sagan")
	dir := t.TempDir()
	for _, ext := range []string{"md", "json", "html", "txt"} {
		rep := filepath.Join(dir, "report."+ext)
		out := filepath.Join(dir, "out."+ext+".onnx")
		code, stdout, stderr := runCLI("rewrite", orig, "-o", out, "--validate", "--report", rep)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, stderr)
		}
		if !strings.Contains(stdout, "report ("+map[string]string{"txt": "text"}[ext]) && !strings.Contains(stdout, "report ("+ext+"): "+rep) {
			t.Errorf("%s: stdout does not name the report:\n%s", ext, stdout)
		}
		data, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		maxAbs := "1.91e-06"
		if ext == "json" {
			maxAbs = `"max_abs": 0.00000190734`
		}
		for _, w := range []string{"/softmax/Softmax", "fused", maxAbs} {
			if !strings.Contains(s, w) {
				t.Errorf("%s report lacks %q:\n%.600s", ext, w, s)
			}
		}
		if ext == "json" {
			conforms(t, "report.v1.json", s)
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			v, _ := doc["validation"].(map[string]any)
			if doc["kind"] != "rewrite" || v == nil || v["verdict"] != "PASS" {
				t.Errorf("json report: kind %v, validation %v", doc["kind"], doc["validation"])
			}
		}
	}
	// Unknown extension: usage error before any work, nothing written.
	out := filepath.Join(dir, "never.onnx")
	code, _, stderr := runCLI("rewrite", orig, "-o", out, "--report", filepath.Join(dir, "report.pdf"))
	if code != 2 || !strings.Contains(stderr, `unknown extension ".pdf"`) {
		t.Errorf("--report report.pdf: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the rewrite ran although --report was bad")
	}
	// Without --validate the report has no validation.
	rep := filepath.Join(dir, "plain.json")
	if code, _, stderr := runCLI("rewrite", orig, "-o", filepath.Join(dir, "plain.onnx"), "--report", rep); code != 0 {
		t.Fatal(stderr)
	}
	data, _ := os.ReadFile(rep)
	conforms(t, "report.v1.json", string(data))
	if !strings.Contains(string(data), `"validation": null`) {
		t.Errorf("report without --validate:\n%.400s", data)
	}
}

func TestCheckJSONConformsForSymbolicAndFusedModels(t *testing.T) {
	_, out := rewritten(t, "hf_bert")
	for _, args := range [][]string{
		{"check", fixtureCopy(t, "hf_bert_dynamic"), "--memory-budget", "1GiB", "--format", "json"},
		{"check", out, "--memory-budget", "1GiB", "--format", "json"},
	} {
		code, stdout, stderr := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		conforms(t, "check.v1.json", stdout)
	}
}

// check reads sizes as rewrite's --memory-budget does; a bad one is exit 2.
func TestCheckBudgetSizes(t *testing.T) {
	orig := fixtureCopy(t, "sagan") // scores: 262,144 bytes
	for size, want := range map[string]int{
		"16GiB": 0, "512MiB": 0, "1.5GB": 0, "1000000": 0, "4G": 0, "262144": 0, "0.25MiB": 0,
		"262143": 1, "200KiB": 1, "0.2MB": 1,
		"lots": 2, "16XB": 2, "-1GiB": 2, "0": 2, "": 2, "GiB": 2,
	} {
		if code, _, stderr := runCLI("check", orig, "--memory-budget", size); code != want {
			t.Errorf("--memory-budget %q: exit %d, want %d (%s)", size, code, want, stderr)
		}
	}
}
