package validate

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// shrink rewrites the input shapes of an extracted site, replacing the query
// and key lengths by at most n, and re-infers the rest.
func shrink(m *graph.Model, nq, nk graph.Dim, n int64) (*graph.Model, string, error) {
	// ToProto shares messages with m; the input dims are edited on a copy.
	pb := proto.Clone(m.ToProto()).(*onnxpb.ModelProto)
	gp := pb.Graph
	newQ, newK := reduce(nq, n), reduce(nk, n)
	for _, vi := range gp.Input {
		tt := vi.GetType().GetTensorType()
		if tt == nil || tt.Shape == nil {
			continue
		}
		for _, d := range tt.Shape.Dim {
			x, ok := d.Value.(*onnxpb.TensorShapeProto_Dimension_DimValue)
			if !ok {
				continue
			}
			switch {
			case nq.Static() && x.DimValue == nq.C:
				x.DimValue = newQ
			case nk.Static() && x.DimValue == nk.C:
				x.DimValue = newK
			}
		}
	}
	gp.ValueInfo, gp.Output = nil, []*onnxpb.ValueInfoProto{{Name: gp.Output[0].Name}}
	out, err := graph.FromProto(pb, "")
	if err != nil {
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
