package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/internal/version"
)

// Every JSON document a command prints carries its schema tag, attnopt's
// version and the provenance of the run (the command line as given), and
// conforms to its schema file; --json is the same as --format json.
func TestEveryJSONCarriesSchemaAndVersion(t *testing.T) {
	orig, out := rewritten(t, "sagan")
	cases := []struct {
		args   []string
		schema string
		file   string
	}{
		{[]string{"inspect", orig, "--json"}, "attnopt.inspect/v1", "inspect.v1.json"},
		{[]string{"inspect", orig, "--format", "json"}, "attnopt.inspect/v1", "inspect.v1.json"},
		{[]string{"validate", orig, out, "--json"}, "attnopt.validate/v1", "validate.v1.json"},
		{[]string{"validate", orig, out, "--format", "json", "--seed", "7"}, "attnopt.validate/v1", "validate.v1.json"},
		{[]string{"rewrite", orig, "-o", filepath.Join(t.TempDir(), "r.onnx"), "--json"}, "attnopt.report/v1", "report.v1.json"},
		{[]string{"rewrite", orig, "-o", filepath.Join(t.TempDir(), "r.onnx"), "--json", "--validate"}, "attnopt.report/v1", "report.v1.json"},
		{[]string{"diff", orig, out, "--json"}, "attnopt.report/v1", "report.v1.json"},
		{[]string{"diff", orig, out, "--format", "json"}, "attnopt.report/v1", "report.v1.json"},
		{[]string{"check", orig, "--memory-budget", "1GiB", "--json"}, "attnopt.check/v1", "check.v1.json"},
		{[]string{"check", out, "--memory-budget", "1GiB", "--format", "json"}, "attnopt.check/v1", "check.v1.json"},
		{[]string{"version", "--json"}, "attnopt.version/v1", "version.v1.json"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			if code != 0 || withoutLoadLines(stderr) != "" {
				t.Fatalf("%v: exit %d, stderr %q", tc.args, code, stderr)
			}
			var doc struct {
				Schema     string `json:"schema"`
				Version    string `json:"version"`
				Provenance *struct {
					Tool    string   `json:"tool"`
					Version string   `json:"version"`
					Command []string `json:"command"`
					Runtime *struct {
						Name string `json:"name"`
					} `json:"runtime"`
					Seed *int64 `json:"seed"`
				} `json:"provenance"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("%v: stdout is not one JSON document: %v\n%s", tc.args, err, stdout)
			}
			if doc.Schema != tc.schema || doc.Version != version.Version {
				t.Errorf("%v: schema %q version %q, want %q %q", tc.args, doc.Schema, doc.Version, tc.schema, version.Version)
			}
			conforms(t, tc.file, stdout)
			if tc.args[0] == "version" {
				return
			}
			p := doc.Provenance
			if p == nil || p.Tool != "attnopt" || p.Version != version.Version || !reflect.DeepEqual(p.Command, append([]string{"attnopt"}, tc.args...)) {
				t.Fatalf("%v: provenance %+v", tc.args, p)
			}
			// A document made by running seeded inputs names the runtime and seed.
			ran := tc.args[0] == "validate" || (tc.args[0] == "rewrite" && strings.Contains(strings.Join(tc.args, " "), "--validate"))
			if ran != (p.Runtime != nil && p.Seed != nil) {
				t.Errorf("%v: runtime %+v seed %v", tc.args, p.Runtime, p.Seed)
			}
			if ran && (p.Runtime.Name != "go" || (*p.Seed != 1 && *p.Seed != 7)) {
				t.Errorf("%v: runtime %q seed %d", tc.args, p.Runtime.Name, *p.Seed)
			}
		})
	}
}

// rewrite --json prints the rewrite report instead of the text lines, and
// still writes the model (and --report's file); validation failing is
// exit 1 with the report printed.
func TestRewriteJSON(t *testing.T) {
	orig := fixtureCopy(t, "sagan")
	dir := t.TempDir()
	out, md := filepath.Join(dir, "out.onnx"), filepath.Join(dir, "report.md")
	code, stdout, stderr := runCLI("rewrite", orig, "-o", out, "--json", "--validate", "--report", md)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Kind  string                `json:"kind"`
		B     struct{ Path string } `json:"b"`
		Sites []struct {
			Status string `json:"status"`
		} `json:"sites"`
		Validation *struct {
			Pass bool `json:"pass"`
		} `json:"validation"`
		RunsWith string `json:"runs_with"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if rep.Kind != "rewrite" || rep.B.Path != out || len(rep.Sites) != 1 || rep.Sites[0].Status != "fused" || rep.Validation == nil || !rep.Validation.Pass {
		t.Errorf("report: %+v", rep)
	}
	if !strings.Contains(rep.RunsWith, "custom-op library") {
		t.Errorf("runs_with %q", rep.RunsWith)
	}
	for _, f := range []string{out, md} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("not written: %v", err)
		}
	}
	if strings.Contains(stdout, "report (md)") || strings.Contains(stdout, "fused into") {
		t.Errorf("text lines mixed into the JSON:\n%s", stdout)
	}
	// Bad usage stays exit 2 with nothing on stdout.
	code, stdout, stderr = runCLI("rewrite", orig, "-o", filepath.Join(dir, "x.onnx"), "--json", "--target", "bogus")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "bogus") {
		t.Errorf("bad target: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// --version and `version` say the same build; --json and --format that
// disagree, or a format a command does not write, are usage errors.
func TestVersionAndFormatFlags(t *testing.T) {
	code, stdout, _ := runCLI("--version")
	want := "attnopt " + version.Get().String() + "\n"
	if code != 0 || stdout != want {
		t.Errorf("--version: exit %d %q, want %q", code, stdout, want)
	}
	code, stdout, _ = runCLI("version")
	if code != 0 || !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, "\nONNX Runtime: ") || !strings.Contains(stdout, "\ncustom ops: ") ||
		!strings.Contains(stdout, "\nlicense: Apache-2.0\n") || !strings.Contains(stdout, "\nCUDA: ") {
		t.Errorf("version: exit %d\n%s", code, stdout)
	}
	orig := fixtureCopy(t, "sagan")
	for _, args := range [][]string{
		{"inspect", orig, "--format", "md"},
		{"inspect", orig, "--format", "html"},
		{"validate", orig, orig, "--format", "html"},
		{"diff", orig, orig, "--json", "--format", "md"},
		{"validate", orig, orig, "--runtime", "tpu"},
		{"rewrite", orig, "-o", filepath.Join(t.TempDir(), "o.onnx"), "--runtime", "tpu"},
	} {
		if code, stdout, stderr := runCLI(args...); code != 2 || stdout != "" || !strings.HasPrefix(stderr, "attnopt: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

// check writes all four formats, HTML included.
func TestCheckHTML(t *testing.T) {
	orig := fixtureCopy(t, "sagan")
	code, stdout, _ := runCLI("check", orig, "--memory-budget", "200KiB", "--format", "html")
	if code != 1 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stdout, `<tr class="site st-over">`) || !strings.Contains(stdout, `id="provenance"`) {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

// --report may be given once per format; all are written, and none may be
// the output model.
func TestRewriteSeveralReports(t *testing.T) {
	orig := fixtureCopy(t, "sagan")
	dir := t.TempDir()
	out := filepath.Join(dir, "o.onnx")
	md, js := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI("rewrite", orig, "-o", out, "--report", md, "--report", js)
	if code != 0 || !strings.Contains(stdout, "report (md): "+md+"\n") || !strings.Contains(stdout, "report (json): "+js+"\n") {
		t.Fatalf("exit %d %s\n%s", code, stderr, stdout)
	}
	data, _ := os.ReadFile(js)
	conforms(t, "report.v1.json", string(data))
	if code, _, stderr := runCLI("rewrite", orig, "-o", filepath.Join(dir, "x.json"), "--report", filepath.Join(dir, "x.json")); code != 2 || !strings.Contains(stderr, "is the output model") {
		t.Errorf("report onto the output: exit %d %s", code, stderr)
	}
}

// Off a terminal every table is tab-separated, one row a line (README
// says so): inspect's, validate's and rewrite --validate's as well as
// diff's and check's.
func TestTablesAreTabSeparatedOffATerminal(t *testing.T) {
	orig, out := rewritten(t, "sagan")
	cases := []struct {
		args []string
		row  string
	}{
		{[]string{"inspect", orig}, "0\t/softmax/Softmax\t1\t1\t256\t256\t8\t64\tfloat32\tnone\t1\t16x16\t256.0 KiB\t0 B\t144.0 KiB"},
		{[]string{"validate", orig, out}, "site 0 (/softmax/Softmax)\t/MatMul_1_output_0\t"},
		{[]string{"rewrite", orig, "-o", filepath.Join(t.TempDir(), "v.onnx"), "--validate"}, "site 0 (/softmax/Softmax)\t/MatMul_1_output_0\t"},
		{[]string{"check", orig, "--memory-budget", "1GiB"}, "0\t/softmax/Softmax\t1\t1\t256\t256\tfloat32\t256.0 KiB\t0 B\tok"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runCLI(tc.args...)
		if code != 0 || !strings.Contains(stdout, tc.row) || strings.Contains(stdout, "  /") {
			t.Errorf("%v: exit %d %s\n%s", tc.args[:1], code, stderr, stdout)
		}
	}
}

// withoutLoadLines drops the lines that announce a library before it loads
// (runner.go's announceLoad, announceDevMode): the only stderr a JSON run
// may print.
func withoutLoadLines(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "attnopt: loading ") && !strings.HasPrefix(l, "attnopt: development mode") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}
