package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
)

func pyFloat(f float32) string {
	x := float64(f)
	switch {
	case math.IsInf(x, -1):
		return `float("-inf")`
	case math.IsInf(x, 1):
		return `float("inf")`
	case math.IsNaN(x):
		return `float("nan")`
	}
	s := strconv.FormatFloat(x, 'g', -1, 32)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// pyDefault is an attribute's default as Python writes it: None when the
// kernels compute it or it is required.
func pyDefault(a *opdef.Attr) string {
	switch {
	case a.Required || a.Computed != "":
		return "None"
	case a.Kind == graph.AttrFloat:
		return pyFloat(a.Float)
	}
	return strconv.FormatInt(a.Int, 10)
}

func renderPy() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"The fused ops' limits and attributes, for the ctypes binding (attnopt_ctypes.py).\n\n%s\n\"\"\"\n\n", doNotEdit)
	fmt.Fprintf(&b, "HEAD_DIM_MIN = %d\nHEAD_DIM_MAX = %d\nWINDOW_AXES_MAX = %d\n\n", opdef.HeadDimMin, opdef.HeadDimMax, opdef.AxesMax)
	b.WriteString("# attnopt_flash_params.empty_rows (the C ABI's attnopt_empty_rows)\n")
	for _, v := range opdef.FlashAttention.Attr(opdef.AttrEmptyRows).Values {
		fmt.Fprintf(&b, "EMPTY_%s = %d\n", strings.ToUpper(v.Name), v.V)
	}
	b.WriteString("\n# name: (ONNX type, required, default (None: required or computed), what a value must be)\n")
	for _, op := range opdef.Ops() {
		fmt.Fprintf(&b, "%s_ATTRS = {\n", strings.ToUpper(strings.TrimSuffix(op.Name, "Attention")))
		for i := range op.Attrs {
			a := &op.Attrs[i]
			fmt.Fprintf(&b, "    %q: (%q, %s, %s, %q),\n", a.Name, a.Kind.String(), pyBool(a.Required), pyDefault(a), a.Must())
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}
