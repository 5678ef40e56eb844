package graph

import (
	"strings"
	"testing"
)

// TestRegisterInferRefusesDuplicates: a second rule for an op panics
// naming it (issue 39: passes/schema registered SkipLayerNormalization's
// rule again, silently replacing graph's), for a contrib op, the default
// domain spelled either way, and a built-in op.
func TestRegisterInferRefusesDuplicates(t *testing.T) {
	noop := func(*Graph, *Node) {}
	for _, c := range []struct{ domain, op string }{
		{"com.microsoft", "SkipLayerNormalization"},
		{"", "SimplifiedLayerNormalization"},
		{"ai.onnx", "SimplifiedLayerNormalization"},
		{"", "Reshape"},
	} {
		func() {
			defer func() {
				r, _ := recover().(string)
				if !strings.Contains(r, c.op+" already has a shape rule") {
					t.Errorf("RegisterInfer(%q, %q): recovered %q, want a duplicate panic", c.domain, c.op, r)
				}
			}()
			RegisterInfer(c.domain, c.op, noop)
		}()
	}
	const fresh = "com.example.TestOnly"
	RegisterInfer("com.example", "TestOnly", noop)
	if customRules[fresh] == nil {
		t.Error("a new rule was not registered")
	}
	delete(customRules, fresh)
}
