package eval

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// Loop runs its body as a model of its own (bodyModel), once per iteration,
// like If; the body is loaded once. Scan outputs are stacked on a new first
// axis. ONNX Loop: inputs (M, cond, v_initial…), body (iteration_num,
// condition, v…) → (condition, v…, scan…).

func init() {
	register("", "Loop", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return nil, fmt.Errorf("Loop runs through execute")
	})
}

// maxLoopIterations bounds a Loop whose trip count and condition never stop
// it, so a malformed model fails instead of hanging.
const maxLoopIterations = 1 << 20

func runLoop(m *graph.Model, n *graph.Node, in []*Tensor, get func(string) (*Tensor, error), opts Options) ([]*Tensor, error) {
	a := n.Attr("body")
	if a == nil || a.GraphProto() == nil {
		return nil, fmt.Errorf("Loop has no body graph")
	}
	gp := a.GraphProto()
	sub, feeds, err := bodyModel(m, gp, get)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	carried := in[min(2, len(in)):]
	bodyIn, bodyOut := gp.GetInput(), gp.GetOutput()
	if len(bodyIn) != 2+len(carried) || len(bodyOut) < 1+len(carried) {
		return nil, fmt.Errorf("body has %d inputs and %d outputs for %d loop-carried values", len(bodyIn), len(bodyOut), len(carried))
	}
	trips := int64(-1)
	if len(in) > 0 && in[0] != nil {
		if in[0].Numel() != 1 || in[0].I == nil {
			return nil, fmt.Errorf("Loop trip count must be one int64")
		}
		trips = in[0].I[0]
	}
	cond := true
	if len(in) > 1 && in[1] != nil {
		if in[1].Numel() != 1 || in[1].B == nil {
			return nil, fmt.Errorf("Loop condition must be one bool")
		}
		cond = in[1].B[0]
	}
	if trips < 0 && (len(in) < 2 || in[1] == nil) {
		return nil, fmt.Errorf("Loop without a trip count or a condition never ends")
	}
	vals := append([]*Tensor(nil), carried...)
	var scans [][]*Tensor
	for i := int64(0); cond && (trips < 0 || i < trips); i++ {
		if i >= maxLoopIterations {
			return nil, fmt.Errorf("Loop ran %d iterations without stopping", i)
		}
		feeds[bodyIn[0].GetName()] = FromInts(nil, []int64{i})
		feeds[bodyIn[1].GetName()] = FromBools(nil, []bool{cond})
		for k, v := range vals {
			feeds[bodyIn[2+k].GetName()] = v
		}
		res, err := Run(sub, feeds, opts)
		if err != nil {
			return nil, fmt.Errorf("body, iteration %d: %w", i, err)
		}
		c := res[bodyOut[0].GetName()]
		if c == nil || c.Numel() != 1 || c.B == nil {
			return nil, fmt.Errorf("body's condition output must be one bool")
		}
		cond = c.B[0]
		for k := range vals {
			vals[k] = res[bodyOut[1+k].GetName()]
		}
		var row []*Tensor
		for _, o := range bodyOut[1+len(vals):] {
			row = append(row, res[o.GetName()])
		}
		scans = append(scans, row)
	}
	outs := vals
	for k := range bodyOut[1+len(vals):] {
		st, err := stack(scans, k)
		if err != nil {
			return nil, fmt.Errorf("scan output %d: %w", k, err)
		}
		outs = append(outs, st)
	}
	return outs, nil
}

// stack joins column k of every row on a new first axis.
func stack(rows [][]*Tensor, k int) (*Tensor, error) {
	if len(rows) == 0 {
		// No iteration ran: an empty tensor (the element shape is unknown).
		return NewTensor(graph.Float32, []int{0}), nil
	}
	first := rows[0][k]
	out := NewTensor(first.DType, append([]int{len(rows)}, first.Shape...))
	per := first.Numel()
	for i, r := range rows {
		t := r[k]
		if t.DType != first.DType || numel(t.Shape) != per {
			return nil, fmt.Errorf("iteration %d gives shape %v, iteration 0 %v", i, t.Shape, first.Shape)
		}
		switch storageOf(t.DType) {
		case stFloat:
			copy(out.F[i*per:], t.F)
		case stInt:
			copy(out.I[i*per:], t.I)
		default:
			copy(out.B[i*per:], t.B)
		}
	}
	return out, nil
}
