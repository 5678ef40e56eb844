package eval

import (
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// The torch.cond fixture holds full attention in If's then_branch and causal
// attention in its else_branch, reading q, k, v from the enclosing graph:
// each branch, chosen by the sign of sum(x), gives what Attention gives alone.
func TestIfRunsTheChosenBranch(t *testing.T) {
	m, err := graph.Load(filepath.Join("..", "testdata", "models", "cond_dynamo_op23", "model.onnx"))
	if err != nil {
		t.Skip(err)
	}
	rng := rand.New(rand.NewSource(1))
	q, k, v := randTensor(rng, 1, 4, 16, 8), randTensor(rng, 1, 4, 16, 8), randTensor(rng, 1, 4, 16, 8)
	for _, tc := range []struct {
		x      float32
		causal int64
	}{{1, 0}, {-1, 1}} {
		x := FromFloats([]int{3}, []float32{tc.x, tc.x, tc.x})
		got, err := Run(m, map[string]*Tensor{"x": x, "q": q, "k": k, "v": v}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := runOp("Attention", "", 23, attrs{"is_causal": tc.causal}, []*Tensor{q, k, v}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(got["y"], want[0], 1e-6, 0); d != "" {
			t.Errorf("sum(x) %g: %s", 3*tc.x, d)
		}
	}
}
