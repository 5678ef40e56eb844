package passes

import (
	"testing"

	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/schema"
)

func TestScaleFormNames(t *testing.T) {
	for f, want := range map[ScaleForm]string{
		0:                                   "none",
		ScaleOnScores:                       "scores",
		ScaleOnQ | ScaleOnK:                 "q_and_k",
		ScaleOnK | ScaleOnScores:            "scores_and_k",
		ScaleOnScores | ScaleOnQ | ScaleOnK: "scores_and_q_and_k",
		ScaleAttr:                           "attr",
		ScaleDefault:                        "default",
		ScalePerHead:                        "per_head",
		ScaleOnQ | ScalePerHead:             "q_and_per_head",
	} {
		if got := f.String(); got != want {
			t.Errorf("%d: %q, want %q", f, got, want)
		}
	}
}

func TestPassOrderChecked(t *testing.T) {
	if err := checkOrder(Pipeline); err != nil {
		t.Fatal(err)
	}
	for name, table := range map[string][]Pass{
		"dependency later": {{Name: "cleanup-layout", After: []string{"fuse"}}, {Name: "fuse"}},
		"listed twice":     {{Name: "match"}, {Name: "match"}},
		"unknown":          {{Name: "sort", After: []string{"nope"}}},
	} {
		if checkOrder(table) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Every target's file registers the checked schema of the op it writes.
func TestEveryTargetRegistersItsSchema(t *testing.T) {
	for _, name := range TargetNames() {
		tg, _ := TargetByName(name)
		if !schema.Registered(tg.Op()) {
			t.Errorf("target %s: no schema for %s", name, tg.Op())
		}
	}
	if !schema.Registered(canonical.Domain + "." + canonical.Op) {
		t.Error("no schema for the canonical op")
	}
}
