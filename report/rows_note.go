package report

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// rowsNote is the one line a rewrite prints when it fused sites lifted from
// ONNX Attention (opset 23/24) whose rows may see no key: the fused op gives
// zeros there, as the spec, PyTorch and ONNX Runtime 1.31+ do, while ONNX
// Runtime 1.24–1.30 gives the mean of V on the original, so on those rows
// the rewrite's outputs differ from what those versions compute on the
// original (docs/fully-masked-rows.md has the table). "" when no fused
// site is such.
func rowsNote(actions []passes.Action) string {
	n := 0
	for _, a := range actions {
		if a.Fused && a.Site != nil && liftedONNXAttention(a.Site) && a.Site.MaySeeNoKey() {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("note: %d fused site(s) lifted from ONNX Attention may have rows that see no key (padding, a fully masked row): "+
		"the rewrite gives zeros there, as the ONNX spec, PyTorch and ONNX Runtime 1.31+ do on the original, "+
		"while ONNX Runtime 1.24–1.30 gives the mean of V on the original, so those rows differ from what 1.24–1.30 computes "+
		"(docs/fully-masked-rows.md)", n)
}

// liftedONNXAttention: the site was lifted from the default domain's
// Attention (opset 23 and later), not from a contrib op.
func liftedONNXAttention(s *passes.Site) bool {
	l := s.Lifted
	return l != nil && l.OpType == "Attention" && graph.IsDefaultDomain(l.Domain)
}
