package match

import (
	"testing"

	"github.com/attnopt/attnopt/internal/steporder"
)

// TestFixupOrder: the fix-up table holds its order, and moving a step
// before one it reads is refused (the check init runs).
func TestFixupOrder(t *testing.T) {
	name := func(f fixup) string { return f.name }
	after := func(f fixup) []string { return f.after }
	if err := steporder.Check("matcher fix-ups", fixups, name, after); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(fixups); i++ {
		if len(fixups[i].after) == 0 {
			continue
		}
		swapped := append([]fixup(nil), fixups...)
		j := i - 1
		for j > 0 && fixups[j].name != fixups[i].after[0] {
			j--
		}
		swapped[i], swapped[j] = swapped[j], swapped[i]
		if steporder.Check("matcher fix-ups", swapped, name, after) == nil {
			t.Errorf("moving %q before %q passed the check", fixups[i].name, fixups[j].name)
		}
	}
}
