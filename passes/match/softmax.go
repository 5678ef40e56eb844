package match

import "github.com/attnopt/attnopt/graph"

// checkSoftmaxAxis accepts a Softmax only when it normalises the last axis
// alone. Before opset 13 Softmax(axis=a) normalises the flattened dims from a
// on, which is a row softmax only when a is the last axis.
func (m *matcher) checkSoftmaxAxis(sm *graph.Node) *Reject {
	in := sm.Input(0)
	rank := in.Type.Rank()
	if m.opset < 13 {
		axis := sm.AttrInt("axis", 1)
		if rank < 0 {
			return reject(CodeSoftmaxAxis, in, "rank of %q is unknown, so Softmax(axis=%d) at opset %d cannot be proved a row softmax", in.Name, axis, m.opset)
		}
		if axis < 0 {
			axis += int64(rank)
		}
		if axis != int64(rank-1) {
			return reject(CodeSoftmaxAxis, sm, "opset-%d Softmax(axis=%d) normalises the flattened dims %d..%d of %q, not the key axis alone", m.opset, sm.AttrInt("axis", 1), axis, rank-1, in.Name)
		}
		return nil
	}
	axis := sm.AttrInt("axis", -1)
	if axis == -1 {
		return nil
	}
	if rank < 0 {
		return reject(CodeSoftmaxAxis, in, "rank of %q is unknown, so Softmax(axis=%d) cannot be proved to run over the last axis", in.Name, axis)
	}
	if axis != int64(rank-1) {
		return reject(CodeSoftmaxAxis, sm, "softmax over axis %d of rank-%d %q, not the key (last) axis", axis, rank, in.Name)
	}
	return nil
}
