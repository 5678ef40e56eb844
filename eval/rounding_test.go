package eval

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// Every fp16 value of the half-precision fixtures stays on the fp16 grid
// with the rounding rule of rounding.go, which is what lets it skip
// grid-preserving ops: each traced output is unchanged by rounding it again.
func TestRoundingRuleKeepsGrid(t *testing.T) {
	for _, name := range []string{"cpa3d_fp16", "timm_vit_fp16", "sdpa_h16d4_fp16"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "testdata", "models", name)
			if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
				t.Skip("fixture not present")
			}
			m, err := graph.Load(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			ins, _, err := loadDataSet(m, filepath.Join(dir, "test_data_set_0"))
			if err != nil {
				t.Skip(err)
			}
			checked := 0
			trace := func(n *graph.Node, outs []*Tensor) {
				for _, o := range outs {
					if o == nil || o.DType != graph.Float16 {
						continue
					}
					again := append([]float32{}, o.F...)
					roundTo(graph.Float16, again)
					for i, x := range again {
						if math.Float32bits(x) != math.Float32bits(o.F[i]) && x == x {
							t.Fatalf("%s (%s) output element %d = %g is off the fp16 grid", n.Label(), n.OpType, i, o.F[i])
						}
					}
					checked++
				}
			}
			if _, err := Run(m, ins, Options{Trace: trace}); err != nil {
				t.Fatal(err)
			}
			if checked == 0 {
				t.Fatal("no fp16 outputs traced")
			}
		})
	}
}
