package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportsShowWindowAndSoftcap: every format that shows a site's mask
// also shows its sliding window and softcap (issue 39: `rewrite --report`
// had no softcap field, and the tables printed Gemma 2's sites as
// `bool+causal`). Each rewrite is validated (the numbers), its JSON report
// checked against report.v1.json.
func TestReportsShowWindowAndSoftcap(t *testing.T) {
	cases := []struct {
		model string
		text  string         // the mask cell of every site
		json  map[string]any // fields every site of the JSON report has
	}{
		{"hf_mistral_window", "bool+causal window 4", map[string]any{"sliding_window": 4.0}},
		{"hf_gemma2_softcap", "softcap 0.5", map[string]any{"softcap": 0.5}},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			in := fixtureCopy(t, c.model)
			code, out, errs := runCLI("inspect", in)
			if code != 0 || !strings.Contains(out, c.text) {
				t.Fatalf("inspect: exit %d, mask %q missing:\n%s%s", code, c.text, out, errs)
			}
			dir := t.TempDir()
			for _, ext := range []string{"json", "md", "html", "txt"} {
				rep := filepath.Join(dir, "r."+ext)
				args := []string{"rewrite", in, "-o", filepath.Join(dir, ext+".onnx"), "--min-scores", "0", "--validate", "--report", rep}
				code, out, errs := runCLI(args...)
				if code != 0 {
					t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
				}
				data, err := os.ReadFile(rep)
				if err != nil {
					t.Fatal(err)
				}
				if ext != "json" {
					if n := strings.Count(string(data), c.text); n < 2 {
						t.Errorf("%s report shows %q %d times, want once per site (2):\n%s", ext, c.text, n, data)
					}
					continue
				}
				conforms(t, "report.v1.json", string(data))
				var doc struct {
					Sites  []map[string]any `json:"sites"`
					Totals struct {
						Fused int `json:"fused"`
					} `json:"totals"`
				}
				if err := json.Unmarshal(data, &doc); err != nil {
					t.Fatal(err)
				}
				if len(doc.Sites) != 2 || doc.Totals.Fused != 2 {
					t.Fatalf("%d sites, %d fused, want 2 and 2", len(doc.Sites), doc.Totals.Fused)
				}
				for _, s := range doc.Sites {
					for k, v := range c.json {
						if s[k] != v {
							t.Errorf("site %v: %s = %v, want %v", s["id"], k, s[k], v)
						}
					}
					if s["status"] != "fused" {
						t.Errorf("site %v: status %v", s["id"], s["status"])
					}
					v, _ := s["validation"].(map[string]any)
					outs, _ := v["outputs"].([]any)
					if v == nil || v["pass"] != true || v["verdict"] != "ok" || len(outs) != 1 {
						t.Fatalf("site %v: validation %v, want one passing output", s["id"], s["validation"])
					}
					if e, _ := outs[0].(map[string]any)["max_abs"].(float64); e > 1e-5 {
						t.Errorf("site %v: max abs error %.3g against the original", s["id"], e)
					}
				}
			}
		})
	}
}
