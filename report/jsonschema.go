package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

//go:embed schema/*.json
var schemaFiles embed.FS

// SchemaFile returns a JSON Schema of the reports: "report.v1.json"
// (attnopt.report/v1) or "check.v1.json" (attnopt.check/v1).
func SchemaFile(name string) ([]byte, error) { return schemaFiles.ReadFile("schema/" + name) }

// ValidateJSON checks a JSON document against the named schema and returns
// every violation, or nil.
func ValidateJSON(schema string, data []byte) error {
	v, err := loadSchemaFile(schema)
	if err != nil {
		return err
	}
	x, err := decodeNumbers(data)
	if err != nil {
		return err
	}
	if errs := v.validate(v.root, x, "#"); len(errs) > 0 {
		return fmt.Errorf("does not conform to %s:\n  %s", schema, strings.Join(errs, "\n  "))
	}
	return nil
}

func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	return x, nil
}

func loadSchemaFile(file string) (*schemaValidator, error) {
	data, err := SchemaFile(file)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	v := &schemaValidator{root: root}
	if err := v.checkKeywords(root, "#"); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return v, nil
}

// A validator for the subset of JSON Schema (draft 2020-12) the schemas in
// report/schema use: type, properties, required, additionalProperties,
// items, enum, const, oneOf and local $ref into $defs. Annotations ($schema,
// $id, title, description) are ignored; any other keyword is an error, so a
// schema can never use something this validator silently skips.

var schemaKeywords = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "oneOf": true, "$ref": true,
}

type schemaValidator struct {
	root map[string]any
}

// checkKeywords walks every subschema and rejects unsupported keywords.
func (v *schemaValidator) checkKeywords(s map[string]any, at string) error {
	for k, x := range s {
		if !schemaKeywords[k] {
			return fmt.Errorf("%s: keyword %q is not supported by the validator", at, k)
		}
		switch k {
		case "properties", "$defs":
			for name, sub := range x.(map[string]any) {
				if err := v.checkKeywords(sub.(map[string]any), at+"/"+k+"/"+name); err != nil {
					return err
				}
			}
		case "items", "additionalProperties":
			if sub, ok := x.(map[string]any); ok {
				if err := v.checkKeywords(sub, at+"/"+k); err != nil {
					return err
				}
			}
		case "oneOf":
			for i, sub := range x.([]any) {
				if err := v.checkKeywords(sub.(map[string]any), fmt.Sprintf("%s/oneOf/%d", at, i)); err != nil {
					return err
				}
			}
		case "$ref":
			if _, err := v.resolve(x.(string)); err != nil {
				return fmt.Errorf("%s: %v", at, err)
			}
		}
	}
	return nil
}

func (v *schemaValidator) resolve(ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#/$defs/") {
		return nil, fmt.Errorf("$ref %q: only #/$defs/NAME is supported", ref)
	}
	defs, _ := v.root["$defs"].(map[string]any)
	s, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q: no such definition", ref)
	}
	return s, nil
}

func jsonType(x any) string {
	switch y := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if f, err := y.Float64(); err == nil && f == math.Trunc(f) && !strings.ContainsAny(string(y), ".eE") {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", x)
}

func typeMatches(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

// validate returns every violation of s by x, with JSON-pointer-like paths.
func (v *schemaValidator) validate(s map[string]any, x any, at string) []string {
	var errs []string
	if ref, ok := s["$ref"].(string); ok {
		sub, err := v.resolve(ref)
		if err != nil {
			return []string{at + ": " + err.Error()}
		}
		errs = append(errs, v.validate(sub, x, at)...)
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch tt := t.(type) {
		case string:
			types = []string{tt}
		case []any:
			for _, e := range tt {
				types = append(types, e.(string))
			}
		}
		got, match := jsonType(x), false
		for _, want := range types {
			match = match || typeMatches(want, got)
		}
		if !match {
			return append(errs, fmt.Sprintf("%s: type %s, want %v", at, got, types))
		}
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, x) {
		errs = append(errs, fmt.Sprintf("%s: %v is not the constant %v", at, x, c))
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, c := range e {
			found = found || jsonEqual(c, x)
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", at, x, e))
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, sub := range one {
			if len(v.validate(sub.(map[string]any), x, at)) == 0 {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Sprintf("%s: matches %d of the oneOf alternatives, want exactly 1", at, n))
		}
	}
	switch y := x.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := y[r.(string)]; !ok {
					errs = append(errs, fmt.Sprintf("%s: missing required %q", at, r))
				}
			}
		}
		keys := make([]string, 0, len(y))
		for k := range y {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if sub, ok := props[k].(map[string]any); ok {
				errs = append(errs, v.validate(sub, y[k], at+"/"+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					errs = append(errs, fmt.Sprintf("%s: unexpected property %q", at, k))
				}
			case map[string]any:
				errs = append(errs, v.validate(ap, y[k], at+"/"+k)...)
			}
		}
	case []any:
		if sub, ok := s["items"].(map[string]any); ok {
			for i, e := range y {
				errs = append(errs, v.validate(sub, e, fmt.Sprintf("%s/%d", at, i))...)
			}
		}
	}
	return errs
}

func jsonEqual(a, b any) bool {
	if na, ok := a.(json.Number); ok {
		if nb, ok := b.(json.Number); ok {
			fa, _ := na.Float64()
			fb, _ := nb.Float64()
			return fa == fb
		}
	}
	return reflect.DeepEqual(a, b)
}
