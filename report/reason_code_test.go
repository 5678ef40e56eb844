package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/passes/match"
)

// TestReasonCodesInSchema: the schema's reason_code enum is every Reject
// code's spelling (passes/match/reject.go), so a new code (limit, a head
// size past internal/opdef's limit) cannot reach the JSON unlisted.
func TestReasonCodesInSchema(t *testing.T) {
	data, err := SchemaFile("report.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var enums [][]any
	var walk func(x any)
	walk = func(x any) {
		switch v := x.(type) {
		case map[string]any:
			for k, y := range v {
				if p, ok := y.(map[string]any); ok && k == "reason_code" {
					enums = append(enums, p["enum"].([]any))
				}
				walk(y)
			}
		case []any:
			for _, y := range v {
				walk(y)
			}
		}
	}
	var root any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	walk(root)
	var want []string
	for c := match.CodeNone + 1; !strings.HasPrefix(c.String(), "code("); c++ {
		want = append(want, c.String())
	}
	if len(enums) == 0 {
		t.Fatal("no reason_code in the schema")
	}
	for _, e := range enums {
		got := make([]string, len(e))
		for i, s := range e {
			got[i] = s.(string)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("reason_code enum %v, codes %v", got, want)
		}
	}
}
