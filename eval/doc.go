// Package eval executes ONNX graphs numerically: a pure-Go reference runtime
// that also implements the fused attention ops attnopt writes, so original
// and rewritten models can be compared anywhere, without a GPU or ONNX
// Runtime (docs/design.md §8, runtime "go").
//
// Run executes a whole model, RunNodes a subset of its nodes (an attention
// site); both drop intermediates after their last use. Tensors keep every
// float type in float32 and round fp16/bf16 results at the output of each op
// that computes new values (rounding.go states the rule), so a
// half-precision model carries the rounding a real fp16 runtime would.
// Float64 is held in float32 too (no model in scope computes in double).
//
// Kernels compute in float32 like ONNX Runtime's CPU provider: MatMul, Gemm,
// Conv (1×1 directly, others through a parallel im2col), Einsum and both
// attention products run on one packed GEMM (gemm.go) whose 6×16
// micro-kernel is AVX2/FMA assembly where the CPU has it and Go elsewhere;
// softmax and attention use expf (exp32.go, relative error < 1.2e-7).
//
// Attention ops:
//
//   - attnopt.FlashAttention: tiled, online-softmax (running max and sum,
//     rescaled per key block) over (batch, head, query block) in parallel,
//     with no Nq×Nk buffer — the algorithm of the CUDA kernels. Masks are
//     read through broadcast strides, never expanded; a query with no
//     admissible key gives zeros.
//   - attnopt.WindowAttention: attention within the (Swin-shifted) windows
//     of a 1-3 D token grid.
//   - ONNX Attention (opset 23/24) with GQA, masks, causal, softcap, KV
//     cache, nonpad_kv_seqlen and every qk_matmul_output_mode; it passes
//     all 152 of ONNX's own backend tests, plain and function-expanded.
//   - com.microsoft MultiHeadAttention, Attention and GroupQueryAttention
//     (unpacked inputs, no rotary), plus SkipLayerNormalization, FastGelu,
//     BiasGelu, Gelu and QuickGelu, so fused ORT exports run too.
//
// Opset-23 decoder ops: RMSNormalization and RotaryEmbedding (halves or
// interleaved, partial rotary dim, position_ids into a cache); testdata/ops
// holds cases checked against ONNX's reference implementation.
//
// Unknown ops fail with "unsupported op X (domain D, opset N)";
// UnsupportedOps lists them for a model up front.
package eval
