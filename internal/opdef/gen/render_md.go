package main

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
)

func defaultText(a *opdef.Attr) string {
	switch {
	case a.Required:
		return "required"
	case a.Computed != "":
		return a.Computed
	case a.Kind == graph.AttrFloat && math.IsInf(float64(a.Float), -1):
		return "-inf"
	case a.Kind == graph.AttrFloat:
		return strconv.FormatFloat(float64(a.Float), 'g', -1, 32)
	}
	return strconv.FormatInt(a.Int, 10)
}

func rangeText(a *opdef.Attr) string {
	if a.Kind != graph.AttrInts {
		s := a.Must()
		if a.Needs != nil {
			s += fmt.Sprintf("; other than %d needs `%s` = %d", a.Int, a.Needs.Attr, a.Needs.Value)
		}
		return s
	}
	var parts []string
	if a.Len.Max > 0 {
		parts = append(parts, fmt.Sprintf("%d to %d entries", a.Len.Min, a.Len.Max))
	}
	if a.Len.Like != "" {
		parts = append(parts, "as many as `"+a.Len.Like+"`")
	}
	s := strings.Join(parts, ", ")
	if lo, hi := a.Bounds(); lo != opdef.NoLo || hi != opdef.NoHi {
		s += ", each " + a.Must()
	}
	return s
}

func meaning(a *opdef.Attr) string {
	var vals []string
	for _, v := range a.Values {
		if v.Name != "" {
			vals = append(vals, fmt.Sprintf("%d %s", v.V, v.Doc))
		}
	}
	if len(vals) == 0 {
		return a.Doc
	}
	return a.Doc + ": " + strings.Join(vals, "; ")
}

func renderOpsMd() []byte {
	var b strings.Builder
	b.WriteString("# The fused ops\n\n")
	fmt.Fprintf(&b, "%s\n`go test ./internal/opdef/...` fails when it is stale.\n\n", strings.Replace(doNotEdit, "do not edit", "do not edit by hand", 1))
	fmt.Fprintf(&b, "Domain `%s`, opset %d. Every reader takes this table: the Go schema and runtime read it,\n", opdef.Domain, opdef.Version)
	b.WriteString("the C ABI's limits (`kernels/include/attnopt/attnopt_limits.h`), the ONNX Runtime library's attribute\n")
	b.WriteString("parsing (`kernels/src/ort/op_table.h`) and the ctypes constants (`kernels/bench/attnopt_ops.py`) are\n")
	b.WriteString("generated from it, and its conformance cases run in each (internal/opdef/doc.go).\n\n")
	fmt.Fprintf(&b, "**Limits.** Head sizes Dqk and Dv %d..%d (the kernels'); `--target attnopt` keeps a site with a\n", opdef.HeadDimMin, opdef.HeadDimMax)
	fmt.Fprintf(&b, "head size outside them as it was, with that reason. WindowAttention takes 1 to %d spatial axes.\n\n", opdef.AxesMax)
	for _, op := range opdef.Ops() {
		fmt.Fprintf(&b, "## %s\n\n", op.FullName())
		for _, p := range op.Semantics {
			b.WriteString(p + "\n\n")
		}
		b.WriteString("| input | types | rank | shape |\n|---|---|---|---|\n")
		for _, in := range op.Inputs {
			name := in.Name
			if in.Optional {
				name += " (optional)"
			}
			fmt.Fprintf(&b, "| %s | %s | %d..%d | %s |\n", name, opdef.TypesText(in.Types), in.MinRank, in.MaxRank, in.Doc)
		}
		fmt.Fprintf(&b, "\nOutput: %s.\n\n", op.Output)
		b.WriteString("| attribute | type | default | range | meaning | a rewrite writes it |\n|---|---|---|---|---|---|\n")
		for i := range op.Attrs {
			a := &op.Attrs[i]
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", a.Name, a.Kind, defaultText(a), rangeText(a), meaning(a), a.WrittenText())
		}
		fmt.Fprintf(&b, "\nCode: %s.\n\n", "`"+strings.Join(op.Code, "`, `")+"`")
	}
	b.WriteString("## NaN\n\n")
	b.WriteString("Both ops carry NaN as the source graph's softmax does: a NaN in Q, K or an additive mask makes\n")
	b.WriteString("the scores it enters NaN, and a row with a NaN score is NaN whatever else it holds (every key NaN,\n")
	b.WriteString("some, or NaN beside -inf and fills; `empty_rows` = 2 zeroes only rows whose scores are all -inf).\n")
	b.WriteString("A NaN in V reaches its feature in every row that reads its key. Keys a row does not admit (causal,\n")
	b.WriteString("`sliding_window`, a false bool mask, another window) are not read for that row, so a NaN there does\n")
	b.WriteString("not reach it, as in ONNX Runtime's fused attention; a graph that adds -inf before its softmax and\n")
	b.WriteString("multiplies by 0 after it carries such a NaN further. Tests: `kernels/tests/test_empty_rows.cpp`\n")
	b.WriteString("(CPU and the CUDA kernels on the emulation), `eval/ort/ort_test.go` TestCustomOpsNaN.\n\n")
	b.WriteString("## Refusals\n\n")
	b.WriteString("Each reader refuses an op with one message per rule, in the same words in Go and C++ (Go quotes\n")
	b.WriteString("NAME with double quotes):\n")
	b.WriteString("`attribute 'NAME' is GOT, not TYPE`, `the TYPE attribute 'NAME' is required`,\n")
	b.WriteString("`NAME VALUE must be RANGE`, `NAME VALUE needs OTHER=V`, `NAME LIST must have MIN to MAX entries`,\n")
	b.WriteString("`NAME LIST and OTHER LIST differ in length`, `NAME LIST entries must be RANGE`, and\n")
	fmt.Fprintf(&b, "`head dims must be %d..%d, got Dqk D Dv D`. Attributes the table does not name are ignored.\n", opdef.HeadDimMin, opdef.HeadDimMax)
	return []byte(b.String())
}

// attrsText lists both ops' attributes in one paragraph, for
// kernels/README.md; link is the path of docs/ops.md from there.
func attrsText(link string) string {
	var ops []string
	for _, op := range opdef.Ops() {
		var as []string
		for i := range op.Attrs {
			a := &op.Attrs[i]
			def := "default " + defaultText(a)
			if a.Required {
				def = "required"
			}
			as = append(as, fmt.Sprintf("`%s` (%s, %s; %s)", a.Name, a.Kind, def, rangeText(a)))
		}
		ops = append(ops, op.Name+" "+strings.Join(as, ", "))
	}
	return fmt.Sprintf("ONNX Runtime attributes ([ops.md](%s), generated from internal/opdef): %s. Head sizes %d..%d.",
		link, strings.Join(ops, "; "), opdef.HeadDimMin, opdef.HeadDimMax)
}

// writtenText says what `rewrite --target attnopt` writes, for docs/cli.md.
func writtenText() string {
	var as []string
	for i := range opdef.FlashAttention.Attrs {
		a := &opdef.FlashAttention.Attrs[i]
		as = append(as, fmt.Sprintf("`%s` (%s)", a.Name, a.WrittenText()))
	}
	return fmt.Sprintf("It writes %s ([ops.md](ops.md) has their ranges and meaning). A site whose head size is outside "+
		"%d..%d, the kernels' limit, is left as it was, with that reason.", strings.Join(as, ", "), opdef.HeadDimMin, opdef.HeadDimMax)
}

// replaceRegion puts body, wrapped and indented as the opening marker, in
// the region <!-- opdef:NAME --> … <!-- /opdef:NAME --> of text.
func replaceRegion(text []byte, name, body string) ([]byte, error) {
	open, end := []byte("<!-- opdef:"+name+" -->"), []byte("<!-- /opdef:"+name+" -->")
	i, j := bytes.Index(text, open), bytes.Index(text, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no region %s ... %s", open, end)
	}
	lineStart := bytes.LastIndexByte(text[:i], '\n') + 1
	indent := string(text[lineStart:i])
	var out bytes.Buffer
	out.Write(text[:i+len(open)])
	out.WriteString("\n")
	for _, l := range wrap(body, 100-len(indent)) {
		out.WriteString(indent + l + "\n")
	}
	out.WriteString(indent)
	out.Write(text[j:])
	return out.Bytes(), nil
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
