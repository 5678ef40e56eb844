package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/attnopt/attnopt/eval/ort"
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
		if c := r.customOps; c != nil {
			lib = portableText(c.path) + " (" + c.content.Kernels() + ")"
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

// customOps is the custom-op library found where the report was made and
// what it can run (the CLI reads it: cmd/attnopt/library_content.go).
type customOps struct {
	path    string
	content ort.LibraryContent
}

// SetCustomOps records the custom-op library that would run B here and
// its kernels, which RunsWith then names.
func (r *Report) SetCustomOps(path string, c ort.LibraryContent) {
	r.customOps = &customOps{path, c}
	r.RunsWith = runsWith(r)
}

// SetProvenance records how the report was made (the CLI calls it); the
// custom-op library a validation loaded is then the one RunsWith names.
func (r *Report) SetProvenance(p *Provenance) {
	r.Provenance = p
	r.RunsWith = runsWith(r)
}
