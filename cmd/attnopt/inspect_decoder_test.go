package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inspect shows what a decoder's attention became: causal in the MASK
// column and in JSON, kv_heads below heads for grouped-query attention, and
// only the (B, 1, 1, Nk) padding term as the mask.
func TestInspectDecoderCausalGQA(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "models", "hf_llama_gqa", "model.onnx")
	if _, err := os.Stat(in); err != nil {
		t.Skip("fixture not present")
	}
	code, stdout, stderr := runCLI("inspect", in)
	if code != 0 || strings.Count(stdout, "bool+causal") != 2 {
		t.Fatalf("exit %d, want two bool+causal sites:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("inspect", in, "--json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var rep struct {
		Sites []struct {
			Causal    bool  `json:"causal"`
			Heads     int64 `json:"heads"`
			KVHeads   int64 `json:"kv_heads"`
			MaskShape []any `json:"mask_shape"`
		} `json:"sites"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sites) != 2 {
		t.Fatalf("%d sites", len(rep.Sites))
	}
	for i, s := range rep.Sites {
		if !s.Causal || s.Heads != 4 || s.KVHeads != 2 || len(s.MaskShape) != 4 || s.MaskShape[2] != 1.0 {
			t.Errorf("site %d: causal %v heads %d kv_heads %d mask %v; want causal, 4 over 2, (2,1,1,12)", i, s.Causal, s.Heads, s.KVHeads, s.MaskShape)
		}
	}
}
