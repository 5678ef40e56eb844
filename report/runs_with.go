package report

import (
	"fmt"
	"sort"
	"strings"
)

// ORTTested is the ONNX Runtime range CI runs rewritten models and the
// custom-op library in (scripts/test-python.sh, scripts/test-ort-compat.sh).
const ORTTested = "1.24.3 to 1.32.0"

// runsWith says what runs model B of a report: the custom-op library its
// attnopt ops need, or stock ONNX Runtime's contrib ops, or standard ops
// only. Empty for a diff whose B holds nothing attnopt wrote.
func runsWith(r *Report) string {
	if r.B.Opsets["attnopt"] > 0 {
		lib := "libattnopt_ort.so from the attnopt wheel (attnopt.get_library_path())"
		if p := r.Provenance; p != nil && p.Runtime != nil && p.Runtime.CustomOps != "" {
			lib = p.Runtime.CustomOps
		}
		return fmt.Sprintf("Runs in ONNX Runtime (%s tested, CPU) with attnopt's custom-op library registered: %s; in Python attnopt.register(session_options). Without it ONNX Runtime refuses the attnopt ops.", ORTTested, lib)
	}
	ops := map[string]bool{}
	for _, f := range r.B.Fused {
		if f.Domain == "com.microsoft" {
			ops[f.Domain+"."+f.Op] = true
		}
	}
	if len(ops) > 0 {
		names := make([]string, 0, len(ops))
		for n := range ops {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Sprintf("Runs in stock ONNX Runtime (%s; %s tested); no extra library.", strings.Join(names, ", "), ORTTested)
	}
	if r.Kind == KindRewrite {
		return fmt.Sprintf("Standard ONNX ops only (opset %d): runs in any ONNX runtime; no extra library.", r.B.Opsets["ai.onnx"])
	}
	return ""
}

// SetProvenance records how the report was made (the CLI calls it); the
// custom-op library a validation loaded is then the one RunsWith names.
func (r *Report) SetProvenance(p *Provenance) {
	r.Provenance = p
	r.RunsWith = runsWith(r)
}
