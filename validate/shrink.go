package validate

import (
	"encoding/binary"
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// shrink rewrites an extracted site to run with its query and key lengths
// cut to at most n, through every tensor that holds them: the input dims,
// the shape constants (a dynamo export folds each Reshape target of its
// SDPA decomposition, [1, H, d, Nk] for Kᵀ, to a constant), spatial dims
// whose product is a length (an NCHW layout's H, W become 1, n), and
// constants laid over the queries and keys (a causal or position bias),
// kept on their last n rows and keys so a bottom-right causal band stays
// one. It re-infers the rest and refuses a result whose shapes disagree.
func shrink(m *graph.Model, nq, nk graph.Dim, n int64) (*graph.Model, string, error) {
	// ToProto shares messages with m; what changes is edited on a copy.
	pb := proto.Clone(m.ToProto()).(*onnxpb.ModelProto)
	gp := pb.Graph
	newQ, newK := reduce(nq, n), reduce(nk, n)
	cuts := map[int64]int64{}
	if nq.Static() && nq.C != newQ {
		cuts[nq.C] = newQ
	}
	if nk.Static() && nk.C != newK {
		cuts[nk.C] = newK
	}
	for _, vi := range gp.Input {
		tt := vi.GetType().GetTensorType()
		if tt == nil || tt.Shape == nil {
			continue
		}
		dims := make([]int64, len(tt.Shape.Dim))
		static := true
		for i, d := range tt.Shape.Dim {
			x, ok := d.Value.(*onnxpb.TensorShapeProto_Dimension_DimValue)
			if !ok {
				static = false
				dims[i] = -1
				continue
			}
			dims[i] = x.DimValue
		}
		cut, ok := cutShape(dims, cuts, static)
		if !ok {
			continue
		}
		for i, d := range tt.Shape.Dim {
			if x, ok := d.Value.(*onnxpb.TensorShapeProto_Dimension_DimValue); ok {
				x.DimValue = cut[i]
			}
		}
	}
	for i, tp := range gp.Initializer {
		if t, err := cutConstant(tp, cuts, nq, nk); err != nil {
			return nil, "", err
		} else if t != nil {
			gp.Initializer[i] = t
		}
	}
	for _, np := range gp.Node {
		if np.GetOpType() != "Constant" || np.GetDomain() != "" {
			continue
		}
		for _, a := range np.Attribute {
			if a.GetName() != "value" || a.T == nil {
				continue
			}
			if t, err := cutConstant(a.T, cuts, nq, nk); err != nil {
				return nil, "", err
			} else if t != nil {
				a.T = t
			}
		}
	}
	gp.ValueInfo, gp.Output = nil, []*onnxpb.ValueInfoProto{{Name: gp.Output[0].Name}}
	out, err := graph.FromProto(pb, "")
	if err != nil {
		return nil, "", err
	}
	if err := shapesAgree(out); err != nil {
		return nil, "", err
	}
	return out, fmt.Sprintf("run at reduced length: q_len %s → %d, kv_len %s → %d", nq, newQ, nk, newK), nil
}

func reduce(d graph.Dim, n int64) int64 {
	if v, ok := d.Value(); ok && v < n {
		return v
	}
	return n
}

// cutShape applies the length cuts to a shape (input dims, or a shape
// constant's values): each length becomes its cut; failing that, when the
// shape is fully known and of rank 4 or more, a trailing run of 2 or 3
// dims whose product is a length (H·W or D·H·W of a folded NCHW layout)
// becomes 1, …, 1, cut, which keeps a flattening Reshape consistent.
func cutShape(dims []int64, cuts map[int64]int64, static bool) ([]int64, bool) {
	out := append([]int64(nil), dims...)
	changed := false
	for i, d := range out {
		if to, ok := cuts[d]; ok {
			out[i], changed = to, true
		}
	}
	if changed || !static || len(out) < 4 {
		return out, changed
	}
	for k := 2; k <= 3; k++ {
		tail := out[len(out)-k:]
		prod := int64(1)
		for _, d := range tail {
			if d <= 1 || prod > (1<<40)/d {
				prod = -1
				break
			}
			prod *= d
		}
		if to, ok := cuts[prod]; ok {
			for i := range tail {
				tail[i] = 1
			}
			tail[k-1] = to
			return out, true
		}
	}
	return out, false
}

// cutConstant is tp with the length cuts applied, or nil when they do not
// touch it: an integer vector of up to 8 values is a shape (cutShape); a
// tensor whose last axis is the key length, or whose next-to-last is the
// query length, keeps its last newK keys and newQ queries.
func cutConstant(tp *onnxpb.TensorProto, cuts map[int64]int64, nq, nk graph.Dim) (*onnxpb.TensorProto, error) {
	if len(cuts) == 0 || tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, nil // weights held outside are never a site's lengths
	}
	t, err := graph.TensorFromProto(tp)
	if err != nil {
		return nil, err
	}
	dims := t.Dims
	if (t.DType == graph.Int64 || t.DType == graph.Int32) && len(dims) <= 1 && t.Numel() <= 8 {
		vals, err := t.Int64s()
		if err != nil {
			return nil, err
		}
		cut, ok := cutShape(vals, cuts, true)
		if !ok {
			return nil, nil
		}
		es := t.DType.StorageBytes(1)
		raw := make([]byte, es*int64(len(cut)))
		for i, v := range cut {
			if es == 8 {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
			} else {
				binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(v)))
			}
		}
		return rawTensor(tp, dims, raw), nil
	}
	r := len(dims)
	if r == 0 || t.DType.Bits() < 8 {
		return nil, nil
	}
	rows, cols := int64(1), dims[r-1]
	if r >= 2 {
		rows = dims[r-2]
	}
	newRows, newCols := rows, cols
	if to, ok := cuts[cols]; ok && nk.Static() && cols == nk.C {
		newCols = to
	}
	if to, ok := cuts[rows]; ok && r >= 2 && nq.Static() && rows == nq.C {
		newRows = to
	}
	if newRows == rows && newCols == cols {
		return nil, nil
	}
	raw, err := t.Raw()
	if err != nil {
		return nil, err
	}
	es := t.DType.StorageBytes(1)
	outer := t.Numel() / (rows * cols)
	out := make([]byte, 0, outer*newRows*newCols*es)
	for o := int64(0); o < outer; o++ {
		for i := rows - newRows; i < rows; i++ {
			at := ((o*rows+i)*cols + cols - newCols) * es
			out = append(out, raw[at:at+newCols*es]...)
		}
	}
	nd := append([]int64(nil), dims...)
	nd[r-1] = newCols
	if r >= 2 {
		nd[r-2] = newRows
	}
	return rawTensor(tp, nd, out), nil
}

// rawTensor is tp with new dims and little-endian data.
func rawTensor(tp *onnxpb.TensorProto, dims []int64, raw []byte) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: tp.Name, DataType: tp.DataType, Dims: dims, RawData: raw}
}

// shapesAgree refuses a cut site in which a Reshape would change its
// input's element count: a length folded with another dim in a shape
// constant ([1, H·Nq, d]) that the cut cannot reach.
func shapesAgree(m *graph.Model) error {
	for _, n := range m.Graph.Nodes {
		if !n.Is("Reshape") || n.Input(0) == nil || n.Output(0) == nil {
			continue
		}
		in, out := n.Input(0).Type, n.Output(0).Type
		if !in.Ranked || !out.Ranked {
			continue
		}
		a, okA := in.Shape.Numel().Value()
		b, okB := out.Shape.Numel().Value()
		if okA && okB && a != b {
			return fmt.Errorf("node %q (Reshape) would reshape %s to %s", n.Label(), in, out)
		}
	}
	return nil
}
