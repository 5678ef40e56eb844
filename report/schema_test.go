package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

func loadSchema(t testing.TB, file string) *schemaValidator {
	t.Helper()
	v, err := loadSchemaFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func decodeJSON(t testing.TB, data []byte) any {
	t.Helper()
	x, err := decodeNumbers(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return x
}

// validateAgainst fails t when data does not conform to the schema in report/schema/<file>.
func validateAgainst(t testing.TB, file string, data []byte) {
	t.Helper()
	if err := ValidateJSON(file, data); err != nil {
		t.Error(err)
	}
}

// The validator must be able to fail: documents that break each kind of
// rule are rejected.
func TestSchemaValidatorRejects(t *testing.T) {
	rewrite, _ := fixtureReports(t, "sagan")
	var buf bytes.Buffer
	if err := Render(&buf, JSON, rewrite, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	v := loadSchema(t, "report.v1.json")
	if errs := v.validate(v.root, decodeJSON(t, buf.Bytes()), "#"); len(errs) > 0 {
		t.Fatalf("the good document fails: %v", errs)
	}
	breaks := map[string]func(m map[string]any){
		"wrong schema name":   func(m map[string]any) { m["schema"] = "attnopt.report/v2" },
		"missing required":    func(m map[string]any) { delete(m, "totals") },
		"extra property":      func(m map[string]any) { m["surprise"] = true },
		"wrong type":          func(m map[string]any) { m["changed"] = "yes" },
		"bad enum in a site":  func(m map[string]any) { m["sites"].([]any)[0].(map[string]any)["status"] = "gone" },
		"float where integer": func(m map[string]any) { m["a"].(map[string]any)["nodes"] = json.Number("1.5") },
		"bad nested $ref":     func(m map[string]any) { m["nodes"].(map[string]any)["removed"] = []any{map[string]any{"name": "x"}} },
		"bad oneOf":           func(m map[string]any) { m["inputs"].([]any)[0].(map[string]any)["a"] = "x" },
	}
	for name, f := range breaks {
		doc := decodeJSON(t, buf.Bytes()).(map[string]any)
		f(doc)
		if errs := v.validate(v.root, doc, "#"); len(errs) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}
