// Package opdef is the one definition of attnopt's fused ops,
// attnopt.FlashAttention and attnopt.WindowAttention: their inputs,
// attributes (name, type, default, range, meaning), limits and semantics
// (ops.go). It imports only graph, so every floor above reads it.
//
// Every language takes the contract from here:
//
//   - Go reads it: the fused schema and load checks (passes/schema/fused.go),
//     a target's Accept (passes/lower/attnopt.go), the canonical op
//     (passes/canonical/op.go), validate's plan reading
//     (validate/approx_plan.go) and the Go runtime (eval/ops_attention.go,
//     eval/attention_rows.go) call Op.Read or its typed Read* and Op.Write,
//     HeadDims and the inputs' types.
//   - go generate ./internal/opdef writes the rest (gen/): the C ABI's
//     limits (kernels/include/attnopt/attnopt_limits.h, read by
//     params_check.cpp), the attribute table the ONNX Runtime library
//     parses with (kernels/src/ort/op_table.h, op_attrs.cpp), the
//     conformance cases its ctest runs (kernels/tests/op_cases.inc), the
//     ctypes constants (kernels/bench/attnopt_ops.py), docs/ops.md and the
//     attribute lists in kernels/README.md and docs/cli.md.
//     gen's test fails when a generated file is stale.
//   - The conformance cases (cases.go) hold the readers of every language
//     to the table's boundaries: this package's tests run them through the
//     schema and the Go runtime, kernels' ctest op_table through
//     op_attrs.cpp, and kernels/tests/abi_check.py runs the limits through
//     the C ABI check.
//
// Adding an attribute is one row of an Op's Attrs (and its Attr* name);
// go generate then gives every parser and doc the new name, type, default
// and range, Go a typed field (attrs_gen.go: FlashAttentionAttrs,
// WindowAttentionAttrs, with Op.Write and Op.Read behind them), and its
// conformance cases run in Go and C++. A FLOAT range is a FloatRule
// (table.go; FiniteNonNegative is there for a bound that 0 turns off).
// What the attribute computes still needs its code: the matcher rule that
// finds it and passes/canonical's Flash that sets the field; the kernels
// (a C ABI field, and op_attrs.cpp copying the value into it) and the Go
// runtime reading the field. The canonical op, the attnopt lowering and
// the readers carry it without a change; TestRewritesWriteTheTable asks
// that some rewrite writes every row.
package opdef

//go:generate go run ./gen
