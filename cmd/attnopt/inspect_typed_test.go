package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The window and row semantics are typed JSON fields, not only variant
// text: a Mistral sliding-window site states its window, a padded site
// what its fully masked rows yield.
func TestInspectTypedFields(t *testing.T) {
	type site struct {
		Causal        bool  `json:"causal"`
		SlidingWindow int64 `json:"sliding_window"`
		Rows          *struct {
			Empty    string   `json:"empty"`
			MaskFill *float64 `json:"mask_fill"`
		} `json:"rows"`
	}
	for _, tc := range []struct {
		fixture string
		window  int64
		empty   string // "" when every row sees a key
	}{
		// transformers guards rows that see no key with its own Where: zeros.
		{"hf_mistral_window", 4, "zero"},
		// BERT adds finfo.min: a fully padded row is the softmax of its
		// literal scores.
		{"hf_bert", 0, "literal"},
		{"timm_vit", 0, ""},
	} {
		in := filepath.Join("..", "..", "testdata", "models", tc.fixture, "model.onnx")
		if _, err := os.Stat(in); err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		code, stdout, stderr := runCLI("inspect", in, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.fixture, code, stderr)
		}
		var rep struct {
			Sites []site `json:"sites"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Sites) == 0 {
			t.Fatalf("%s: no sites", tc.fixture)
		}
		for i, s := range rep.Sites {
			if s.SlidingWindow != tc.window {
				t.Errorf("%s site %d: sliding_window %d, want %d", tc.fixture, i, s.SlidingWindow, tc.window)
			}
			got := ""
			if s.Rows != nil {
				got = s.Rows.Empty
			}
			if got != tc.empty {
				t.Errorf("%s site %d: rows.empty %q, want %q", tc.fixture, i, got, tc.empty)
			}
		}
	}
}
