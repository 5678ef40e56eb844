package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

func findNode(g *onnxpb.GraphProto, pred func(n *onnxpb.NodeProto) bool) *onnxpb.NodeProto {
	for _, n := range g.Node {
		if pred(n) {
			return n
		}
	}
	return nil
}

func byOp(op string) func(*onnxpb.NodeProto) bool {
	return func(n *onnxpb.NodeProto) bool { return n.GetOpType() == op }
}

func byName(name string) func(*onnxpb.NodeProto) bool {
	return func(n *onnxpb.NodeProto) bool { return n.GetName() == name }
}

func setAttr(n *onnxpb.NodeProto, a *onnxpb.AttributeProto) {
	for i, b := range n.Attribute {
		if b.GetName() == a.GetName() {
			n.Attribute[i] = a
			return
		}
	}
	n.Attribute = append(n.Attribute, a)
}

// scaleOutput inserts Mul(fused output, c) before its reader.
func scaleOutput(g *onnxpb.GraphProto, c float32) {
	fa := findNode(g, byOp("FlashAttention"))
	out := fa.Output[0]
	dt := int32(graph.Float32)
	raw, _ := graph.EncodeFloats(graph.Float32, []float64{float64(c)})
	g.Initializer = append(g.Initializer, &onnxpb.TensorProto{Name: proto.String("corrupt_c"), DataType: &dt, RawData: raw})
	for _, n := range g.Node {
		for i, in := range n.Input {
			if in == out {
				n.Input[i] = "corrupt_out"
			}
		}
	}
	g.Node = append(g.Node, &onnxpb.NodeProto{Name: proto.String("corrupt"), OpType: proto.String("Mul"), Input: []string{out, "corrupt_c"}, Output: []string{"corrupt_out"}})
}

// TestValidateCatchesCorruptedBigSite: the SAGAN 128×128 site's scores are
// 1 GiB, over the 256 MiB at which validation runs reduced; every
// corruption of the rewritten file must still fail (exit 1), because both
// files' sites are extracted and run, and what the rewrite did not own is
// compared as is.
func TestValidateCatchesCorruptedBigSite(t *testing.T) {
	if testing.Short() {
		t.Skip("ten validations of a 16384-token site at 4096 tokens")
	}
	orig := "../../testdata/examples/sagan_128x128.onnx"
	dir := t.TempDir()
	good := filepath.Join(dir, "good.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "-o", good, "--quiet"); code != 0 {
		t.Fatal(stderr)
	}
	data, _ := os.ReadFile(good)
	corruptions := []struct {
		name string
		edit func(g *onnxpb.GraphProto)
	}{
		{"output times 0", func(g *onnxpb.GraphProto) { scaleOutput(g, 0) }},
		{"output times 2", func(g *onnxpb.GraphProto) { scaleOutput(g, 2) }},
		{"K and V swapped", func(g *onnxpb.GraphProto) {
			n := findNode(g, byOp("FlashAttention"))
			n.Input[1], n.Input[2] = n.Input[2], n.Input[1]
		}},
		{"Q and K swapped", func(g *onnxpb.GraphProto) {
			n := findNode(g, byOp("FlashAttention"))
			n.Input[0], n.Input[1] = n.Input[1], n.Input[0]
		}},
		{"scale doubled", func(g *onnxpb.GraphProto) {
			setAttr(findNode(g, byOp("FlashAttention")), &onnxpb.AttributeProto{Name: proto.String("scale"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(2)})
		}},
		{"made causal", func(g *onnxpb.GraphProto) {
			setAttr(findNode(g, byOp("FlashAttention")), &onnxpb.AttributeProto{Name: proto.String("causal"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(1)})
		}},
		{"output transpose dropped", func(g *onnxpb.GraphProto) {
			fa := findNode(g, byOp("FlashAttention"))
			tr := findNode(g, func(n *onnxpb.NodeProto) bool { return len(n.Input) > 0 && n.Input[0] == fa.Output[0] })
			tr.OpType, tr.Attribute = proto.String("Identity"), nil
		}},
		// Outside the site: numerics of the site cannot see these.
		{"dilation of an untouched Conv", func(g *onnxpb.GraphProto) {
			setAttr(findNode(g, byOp("Conv")), &onnxpb.AttributeProto{Name: proto.String("dilations"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{2, 2}})
		}},
		{"residual gamma changed", func(g *onnxpb.GraphProto) {
			mul := findNode(g, byName("Mul_24"))
			for _, t := range g.Initializer {
				if t.GetName() == mul.Input[0] {
					t.RawData, _ = graph.EncodeFloats(graph.Float32, []float64{0.25})
				}
			}
		}},
	}
	// Corruptions that break the op's geometry (K's head size 64, Q's 8)
	// are refused on load as bad input, as the library refuses them
	// (passes/schema/fused.go's checkFlash; issue 34).
	refusedOnLoad := map[string]string{"K and V swapped": `has head size 8, K "attnopt/site0/Transpose_out_1" 64`}
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			var mp onnxpb.ModelProto
			if err := proto.Unmarshal(data, &mp); err != nil {
				t.Fatal(err)
			}
			c.edit(mp.Graph)
			bad := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".onnx")
			b, _ := proto.Marshal(&mp)
			os.WriteFile(bad, b, 0o644)
			code, stdout, stderr := runCLI("validate", orig, bad, "--quiet")
			if want, ok := refusedOnLoad[c.name]; ok {
				if code != exitBadInput || !strings.Contains(stderr, want) {
					t.Fatalf("exit %d, want 2 naming %q\n%s%s", code, want, stdout, stderr)
				}
				return
			}
			if code != exitFailed || !strings.Contains(stderr, "validation failed") {
				t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
			}
		})
	}
	code, stdout, stderr := runCLI("validate", orig, good, "--quiet")
	if code != 0 || !strings.Contains(stdout, "both files' sites run reduced") {
		t.Fatalf("the uncorrupted rewrite: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestValidateCatchesCorruptedApproximateBigSite: an approximate site's
// constants are sized for the full grid, so it runs as a fresh rewrite at a
// reduced grid; the rewritten file's site must equal that rewrite at full
// size, so corruptions of it fail too.
func TestValidateCatchesCorruptedApproximateBigSite(t *testing.T) {
	if testing.Short() {
		t.Skip("validations of a 16384-token site at a reduced grid")
	}
	orig := "../../testdata/examples/sagan_128x128.onnx"
	dir := t.TempDir()
	const fresh = "differs from a fresh rewrite"
	huge := []int64{99999999999, 99999999999}
	cases := []struct {
		name, plan string
		edit       func(g *onnxpb.GraphProto)
		want       string
		code       int // 1 for a forged record; 2 for an op the library refuses (bad input, refused on load)
	}{
		// (A changed window or stride is a different plan, which the file
		// itself states; its error is measured, not refused.)
		{"pool kv, output times 0", "--pool=kv", func(g *onnxpb.GraphProto) { scaleOutput(g, 0) }, fresh, exitFailed},
		{"window 16x16, K and V swapped", "--window=16x16", func(g *onnxpb.GraphProto) {
			n := findNode(g, byOp("WindowAttention"))
			n.Input[1], n.Input[2] = n.Input[2], n.Input[1]
		}, "has head size 8, K", exitBadInput},
		// The reduced-grid arithmetic once overflowed on this (q_len
		// 65536 → -8757194024499019776) and passed: range-checked first now.
		{"window 16x16, grid 99999999999² recorded and in spatial_shape", "--window=16x16", func(g *onnxpb.GraphProto) {
			n := findNode(g, byOp("WindowAttention"))
			setAttr(n, &onnxpb.AttributeProto{Name: proto.String("spatial_shape"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: huge})
			for _, e := range n.MetadataProps {
				if e.GetKey() == "attnopt.grid" {
					e.Value = proto.String("99999999999x99999999999")
				}
			}
		}, "is not a grid of windows", exitBadInput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good := filepath.Join(dir, "good.onnx")
			if code, _, stderr := runCLI("rewrite", orig, c.plan, "-o", good, "--quiet"); code != exitApproximate {
				t.Fatalf("rewrite: exit %d, want 4 (approximate, no --max-error): %s", code, stderr)
			}
			data, _ := os.ReadFile(good)
			var mp onnxpb.ModelProto
			if err := proto.Unmarshal(data, &mp); err != nil {
				t.Fatal(err)
			}
			c.edit(mp.Graph)
			bad := filepath.Join(dir, "bad.onnx")
			b, _ := proto.Marshal(&mp)
			os.WriteFile(bad, b, 0o644)
			code, stdout, stderr := runCLI("validate", orig, bad, "--quiet")
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want %d naming %q\n%s%s", code, c.code, c.want, stdout, stderr)
			}
		})
	}
}
