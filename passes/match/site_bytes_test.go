package match

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// The memory figures compare like with like (docs/design.md §6): the
// scores against what the fused op adds beyond its inputs and output (the
// CPU kernel's kept K/V tiles), with Q/K/V/O apart, held by both graphs.
func TestSiteMemoryFigures(t *testing.T) {
	f32 := graph.Float32
	cases := []struct {
		name                         string
		b, h, hkv, nq, nk, dqk, dv   int64
		wantFused, wantIO, wantScore int64
	}{
		// timm ViT-S: 197 tokens, one query chunk per head: nothing kept.
		{"vit 197 tokens", 1, 6, 6, 197, 197, 64, 64, 0, 4 * 6 * 197 * 64 * 4, 4 * 6 * 197 * 197},
		// A decode step with GQA: 4 query heads of a group share a chunk.
		{"decode gqa 32/8", 1, 32, 8, 1, 512, 128, 128, 0, 4 * (32*128*2 + 8*512*128*2), 4 * 32 * 512},
		// A long prefill: every kv head's tiles are read by 16 chunks.
		{"sagan 4096", 1, 1, 1, 4096, 4096, 8, 64, 4 * 4096 * 72, 4 * 4096 * (8 + 8 + 64 + 64), 4 * 4096 * 4096},
		// Keys not a multiple of the 64-key tile round up.
		{"nk 300", 1, 1, 1, 300, 300, 16, 16, 4 * 320 * 32, 4 * 300 * 64, 4 * 300 * 300},
		// CPA3D's 2M tokens: the kept tiles stop at 64 MiB.
		{"cpa3d capped", 1, 4, 4, 2097152, 2097152, 32, 32, 64 << 20, 4 * 4 * 2097152 * 128, 4 * 4 * 2097152 * 2097152},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &Match{Batch: graph.D(c.b), Heads: graph.D(c.h), KVHeads: graph.D(c.hkv), QLen: graph.D(c.nq), KVLen: graph.D(c.nk),
				HeadDim: graph.D(c.dqk), VHeadDim: graph.D(c.dv), DType: f32}
			fused, ok1 := m.FusedBytes()
			io, ok2 := m.IOBytes()
			score, ok3 := m.ScoreBytes()
			if !ok1 || !ok2 || !ok3 || fused != c.wantFused || io != c.wantIO || score != c.wantScore {
				t.Errorf("fused %d (%v), io %d (%v), scores %d (%v); want %d, %d, %d", fused, ok1, io, ok2, score, ok3, c.wantFused, c.wantIO, c.wantScore)
			}
			if foot, ok := m.FootprintBytes(); !ok || foot != io+4*c.b*c.h*c.nq {
				t.Errorf("footprint %d, want Q/K/V/O + a float32 row statistic, %d", foot, io+4*c.b*c.h*c.nq)
			}
		})
	}
	sym := &Match{Batch: graph.D(1), Heads: graph.D(2), KVHeads: graph.D(2), QLen: graph.Sym("seq"), KVLen: graph.Sym("seq"),
		HeadDim: graph.D(8), VHeadDim: graph.D(8), DType: f32}
	if _, ok := sym.FusedBytes(); ok {
		t.Error("a symbolic length has a known fused size")
	}
}
