// Command mkexamples writes the small example models bundled under
// testdata/examples/ (go run ./internal/testgraph/mkexamples).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

func main() {
	dir := filepath.Join("testdata", "examples")
	models := map[string]*testgraph.B{
		// SAGAN self-attention at 64×64 (N = 4096): the GAN case of docs/design.md §1, small.
		"sagan_64x64.onnx": testgraph.SAGAN(17, 64, 64, 64),
		// The same block at 128×128 (N = 16,384), for memory benchmarks.
		"sagan_128x128.onnx": testgraph.SAGAN(17, 64, 128, 128),
		// SDPA with a bool mask, 16 heads of dim 4, fp16.
		"sdpa_mask_h16_d4.onnx": testgraph.SDPABoolMask(17, graph.Float16, 1, 16, 256, 4),
		// BERT-style block with dynamic batch and sequence.
		"bert_block_dynamic.onnx": testgraph.HFSelfAttention(17, "batch", "seq", 64, 4),
		// The three cases of docs/design.md §1 at their real sizes (weights are
		// small; only the token counts are large).
		"seed_cpa3d_128.onnx":       testgraph.CPA3D(17, 128, 128, 128, 128, 4),
		"seed_sagan_256.onnx":       testgraph.SAGAN(17, 64, 256, 256),
		"seed_sdpa_mask_h16d4.onnx": testgraph.SDPABoolMask(17, graph.Float16, 1, 16, 10000, 4),
	}
	for name, b := range models {
		if err := graph.WriteFileAtomic(filepath.Join(dir, name), b.Bytes()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
