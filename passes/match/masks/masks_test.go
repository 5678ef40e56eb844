package masks

import (
	"testing"

	"github.com/attnopt/attnopt/internal/opdef"
)

// TestEmptyRowsAreTheTables: EmptyRows' values and JSON names
// are FlashAttention's empty_rows values in internal/opdef, which the C
// ABI, the ONNX Runtime library and the ctypes mirror are generated from.
func TestEmptyRowsAreTheTables(t *testing.T) {
	vals := opdef.FlashAttention.Attr(opdef.AttrEmptyRows).Values
	if len(vals) != len(emptyRowsNames) {
		t.Fatalf("table has %d empty_rows values, masks %d", len(vals), len(emptyRowsNames))
	}
	for _, v := range vals {
		if got := EmptyRows(v.V).String(); got != v.Name {
			t.Errorf("empty_rows %d: masks calls it %q, the table %q", v.V, got, v.Name)
		}
	}
}
