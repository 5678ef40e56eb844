// Loads ONNX Runtime's real CPU library with dlopen, registers libattnopt_ort
// through RegisterCustomOpsLibrary_V2, runs hand-encoded one-node models of
// attnopt.FlashAttention and attnopt.WindowAttention, and compares the outputs
// with the float64 reference and with the C ABI called directly.
// Usage: test_ort LIBATTNOPT_ORT [LIBONNXRUNTIME]   (exit 77 = skipped)
#include <dirent.h>

#include <cstring>
#include <functional>
#include <string>

#include "onnx_proto.h"
#include "ort_runner.h"
#include "reference.h"
#include "reference_rows.h"
#include "test_util.h"

namespace attnopt_test {
int g_failures = 0;
}

using namespace attnopt_test;
using onnx_proto::Input;

namespace {

int onnx_type(attnopt_dtype t) {
  return t == ATTNOPT_F32 ? onnx_proto::FLOAT : t == ATTNOPT_F16 ? onnx_proto::FLOAT16 : onnx_proto::BFLOAT16;
}
ONNXTensorElementDataType ort_type(int onnx) { return static_cast<ONNXTensorElementDataType>(onnx); }

// Wraps ORT output bytes as a Tensor of dtype t for the error metric.
Tensor as_tensor(const Result& r, attnopt_dtype t) {
  Tensor x;
  x.dtype = t;
  const size_t n = r.bytes.size() / (t == ATTNOPT_F32 ? 4 : 2);
  x.value.assign(n, 0.0);
  if (t == ATTNOPT_F32) {
    x.f32.resize(n);
    std::memcpy(x.f32.data(), r.bytes.data(), r.bytes.size());
  } else {
    x.h16.resize(n);
    std::memcpy(x.h16.data(), r.bytes.data(), r.bytes.size());
  }
  return x;
}

Get4 contiguous(const Tensor& t, int64_t h, int64_t n, int64_t d) {
  const double* v = t.value.data();
  return [=](int64_t b, int64_t hh, int64_t i, int64_t c) { return v[((b * h + hh) * n + i) * d + c]; };
}

void expect_output(const char* name, const Result& r, attnopt_dtype t, const std::vector<int64_t>& shape,
                   const std::vector<double>& ref, const void* direct) {
  EXPECT_TRUE(r.error.empty(), "%s: Run failed: %s", name, r.error.c_str());
  if (!r.error.empty()) return;
  EXPECT_TRUE(r.type == ort_type(onnx_type(t)), "%s: output element type %d", name, static_cast<int>(r.type));
  EXPECT_TRUE(r.shape == shape, "%s: output rank %zu / shape mismatch", name, r.shape.size());
  const Tensor out = as_tensor(r, t);
  const double err = rel_l2(out, ref);
  const bool same = r.bytes.size() == out.size() * (t == ATTNOPT_F32 ? 4 : 2) &&
                    std::memcmp(r.bytes.data(), direct, r.bytes.size()) == 0;
  std::printf("%-46s %-4s err %.2e  bitwise == C ABI: %s\n", name, dtype_name(t), err, same ? "yes" : "no");
  EXPECT_TRUE(err <= tolerance(t), "%s: rel L2 error %.3e", name, err);
  EXPECT_TRUE(same, "%s: ORT output differs from the direct C ABI call", name);
}

void flash_case(Runner& run, const char* name, attnopt_dtype t, bool rank3, int64_t B, int64_t Hq, int64_t Hkv,
                int64_t Nq, int64_t Nk, int64_t Dqk, int64_t Dv, int mask_kind /*0 none,1 bool,2 float*/,
                bool causal, float scale, bool dynamic_axes = false,
                const std::function<void()>& after_ort = nullptr, int64_t window = 0) {
  std::mt19937 rng(7 + static_cast<unsigned>(Nq * 31 + Nk));
  Tensor q = make_tensor(t, B * Hq * Nq * Dqk, rng, -2.f, 2.f);
  Tensor k = make_tensor(t, B * Hkv * Nk * Dqk, rng, -2.f, 2.f);
  Tensor v = make_tensor(t, B * Hkv * Nk * Dv, rng);
  auto shp = [&](int64_t h, int64_t n, int64_t d) {
    return rank3 ? std::vector<int64_t>{B, n, d} : std::vector<int64_t>{B, h, n, d};
  };
  const int ot = onnx_type(t);
  std::vector<Feed> feeds = {{{"q", ot, shp(Hq, Nq, Dqk)}, q.data()},
                             {{"k", ot, shp(Hkv, Nk, Dqk)}, k.data()},
                             {{"v", ot, shp(Hkv, Nk, Dv)}, v.data()}};
  attnopt_flash_params p{};
  std::vector<uint8_t> bools;
  Tensor fmask;
  Mask4 maskfn;
  if (mask_kind == 1) {  // (1,1,Nq,Nk), every 4th query row fully masked
    bools.resize(Nq * Nk);
    for (int64_t i = 0; i < Nq; ++i)
      for (int64_t j = 0; j < Nk; ++j) bools[i * Nk + j] = (i % 4 != 0) && ((i * 7 + j * 3) % 5 != 0);
    feeds.push_back({{"mask", onnx_proto::BOOL, {1, 1, Nq, Nk}}, bools.data()});
    p.mask_type = ATTNOPT_MASK_BOOL;
    p.mask = bools.data();
    p.mask_stride[2] = Nk;
    p.mask_stride[3] = 1;
    const uint8_t* m = bools.data();
    maskfn = [m, Nk](int64_t, int64_t, int64_t i, int64_t j) { return m[i * Nk + j] ? 0.0 : -INFINITY; };
  } else if (mask_kind == 2) {  // (B,1,1,Nk) float32 additive
    fmask = make_tensor(ATTNOPT_F32, B * Nk, rng, -4.f, 0.f);
    feeds.push_back({{"mask", onnx_proto::FLOAT, {B, 1, 1, Nk}}, fmask.data()});
    p.mask_type = ATTNOPT_MASK_F32;
    p.mask = fmask.data();
    p.mask_stride[0] = Nk;
    p.mask_stride[3] = 1;
    const double* m = fmask.value.data();
    maskfn = [m, Nk](int64_t b, int64_t, int64_t, int64_t j) { return m[b * Nk + j]; };
  }
  const std::vector<int64_t> oshape = shp(Hq, Nq, Dv);
  // With dynamic_axes the model declares batch and lengths symbolically, as
  // dynamic-axis exports do; ORT then relies on the op's shape inference.
  // Symbols: -1 batch, -2 query length, -3 key length.
  auto declared = [&](std::vector<int64_t> s, bool query_side) {
    if (dynamic_axes) {
      s[0] = -1;
      s[s.size() - 2] = query_side ? -2 : -3;
    }
    return s;
  };
  std::vector<onnx_proto::Input> inputs;
  for (const Feed& f : feeds)
    inputs.push_back({f.info.name, f.info.elem_type, f.info.name == "mask" ? f.info.shape
                                                                           : declared(f.info.shape, f.info.name == "q")});
  const std::string model = onnx_proto::one_node_model(
      "FlashAttention", inputs, {"out", ot, declared(oshape, true)},
      {onnx_proto::attr_float("scale", scale), onnx_proto::attr_int("causal", causal ? 1 : 0),
       onnx_proto::attr_int("sliding_window", window)});
  const Result r = run.run(model, feeds, "out");
  if (after_ort) after_ort();

  Admit admit;
  if (causal) admit = [Nq, Nk, window](int64_t i, int64_t j) {
    return j <= i + Nk - Nq && (window <= 0 || j > i + Nk - Nq - window);
  };
  const std::vector<double> ref =
      reference_attention({B, Hq, Hkv, Nq, Nk, Dqk, Dv}, contiguous(q, Hq, Nq, Dqk), contiguous(k, Hkv, Nk, Dqk),
                          contiguous(v, Hkv, Nk, Dv), scale, maskfn, admit);
  // The same call through the C ABI, for a bitwise comparison.
  Tensor o = make_poisoned(t, ref.size());
  p.dtype = t;
  p.batch = B; p.heads_q = Hq; p.heads_kv = Hkv; p.len_q = Nq; p.len_k = Nk; p.dim_qk = Dqk; p.dim_v = Dv;
  p.q.data = q.data(); contiguous_strides(Hq, Nq, Dqk, p.q.stride);
  p.k.data = k.data(); contiguous_strides(Hkv, Nk, Dqk, p.k.stride);
  p.v.data = v.data(); contiguous_strides(Hkv, Nk, Dv, p.v.stride);
  p.o = o.data(); contiguous_strides(Hq, Nq, Dv, p.o_stride);
  p.scale = scale;
  p.causal = causal;
  p.window = window;
  EXPECT_TRUE(attnopt_cpu_flash_attention_fwd(&p) == ATTNOPT_OK, "direct call");
  expect_output(name, r, t, oshape, ref, o.data());
}

// Rows with no visible key through the ONNX attributes (empty_rows,
// mask_fill, causal_fill, fill_once, fill_round): a left-padded causal
// decoder step whose padded rows must come back as the source computes them.
void empty_rows_case(Runner& run, const char* name, attnopt_dtype t, const RowSemantics& sem, int64_t fill_round) {
  const int64_t B = 2, H = 2, N = 30, D = 8, pad = 11;
  std::mt19937 rng(99);
  Tensor q = make_tensor(t, B * H * N * D, rng, -2.f, 2.f);
  Tensor k = make_tensor(t, B * H * N * D, rng, -2.f, 2.f);
  Tensor v = make_tensor(t, B * H * N * D, rng);
  std::vector<uint8_t> keep(B * N);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < N; ++j) keep[b * N + j] = !(b == 0 && j < pad);
  const int ot = onnx_type(t);
  std::vector<Feed> feeds = {{{"q", ot, {B, H, N, D}}, q.data()},
                             {{"k", ot, {B, H, N, D}}, k.data()},
                             {{"v", ot, {B, H, N, D}}, v.data()},
                             {{"mask", onnx_proto::BOOL, {B, 1, 1, N}}, keep.data()}};
  std::vector<Input> inputs;
  for (const Feed& f : feeds) inputs.push_back({f.info.name, f.info.elem_type, f.info.shape});
  const float scale = 0.35f;
  const std::string model = onnx_proto::one_node_model(
      "FlashAttention", inputs, {"out", ot, {B, H, N, D}},
      {onnx_proto::attr_float("scale", scale), onnx_proto::attr_int("causal", 1),
       onnx_proto::attr_int("empty_rows", sem.mode), onnx_proto::attr_float("mask_fill", static_cast<float>(sem.mask_fill)),
       onnx_proto::attr_float("causal_fill", static_cast<float>(sem.causal_fill)),
       onnx_proto::attr_int("fill_once", sem.once ? 1 : 0), onnx_proto::attr_int("fill_round", fill_round)});
  const Result r = run.run(model, feeds, "out");
  EXPECT_TRUE(r.error.empty(), "%s: Run failed: %s", name, r.error.c_str());
  if (!r.error.empty()) return;
  const uint8_t* m = keep.data();
  MaskAt mask = [m, N](int64_t b, int64_t, int64_t, int64_t j) { return KeyMask{1, m[b * N + j] != 0, 0.0}; };
  const std::vector<double> ref = reference_rows({B, H, H, N, N, D, D}, contiguous(q, H, N, D), contiguous(k, H, N, D),
                                                 contiguous(v, H, N, D), scale, mask, true, 0, sem);
  const Tensor out = as_tensor(r, t);
  size_t nan_bad = 0, nans = 0;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double x = out.get(i);
    if (std::isnan(ref[i])) {
      ++nans;
      nan_bad += !std::isnan(x);
    } else if (!std::isfinite(x)) {
      ++nan_bad;
    } else {
      num += (x - ref[i]) * (x - ref[i]);
      den += ref[i] * ref[i];
    }
  }
  const double err = std::sqrt(num / den);
  std::printf("%-46s %-4s err %.2e  NaN elements %zu\n", name, dtype_name(t), err, nans);
  EXPECT_TRUE(err <= tolerance(t), "%s: rel L2 error %.3e", name, err);
  EXPECT_TRUE(nan_bad == 0, "%s: %zu elements disagree on NaN", name, nan_bad);
}

void window_case(Runner& run, const char* name, attnopt_dtype t, int64_t B, int64_t H, int64_t D,
                 const std::vector<int64_t>& grid, const std::vector<int64_t>& win, const std::vector<int64_t>& shift,
                 float scale) {
  std::mt19937 rng(11 + static_cast<unsigned>(grid.size() * 5 + D));
  int64_t N = 1;
  for (int64_t g : grid) N *= g;
  Tensor q = make_tensor(t, B * H * N * D, rng, -2.f, 2.f);
  Tensor k = make_tensor(t, B * H * N * D, rng, -2.f, 2.f);
  Tensor v = make_tensor(t, B * H * N * D, rng);
  const int ot = onnx_type(t);
  const std::vector<int64_t> shape = {B, H, N, D};
  const std::vector<Feed> feeds = {{{"q", ot, shape}, q.data()}, {{"k", ot, shape}, k.data()}, {{"v", ot, shape}, v.data()}};
  const std::string model = onnx_proto::one_node_model(
      "WindowAttention", {feeds[0].info, feeds[1].info, feeds[2].info}, {"out", ot, shape},
      {onnx_proto::attr_ints("spatial_shape", grid), onnx_proto::attr_ints("window", win),
       onnx_proto::attr_ints("shift", shift), onnx_proto::attr_float("scale", scale)});
  const Result r = run.run(model, feeds, "out");
  const std::vector<double> ref =
      reference_attention({B, H, H, N, N, D, D}, contiguous(q, H, N, D), contiguous(k, H, N, D), contiguous(v, H, N, D),
                          scale, nullptr, window_admit(grid, win, shift));
  Tensor o = make_poisoned(t, ref.size());
  attnopt_window_params p{};
  p.dtype = t;
  p.batch = B; p.heads_q = p.heads_kv = H; p.len = N; p.dim_qk = p.dim_v = D;
  p.q.data = q.data(); contiguous_strides(H, N, D, p.q.stride);
  p.k.data = k.data(); contiguous_strides(H, N, D, p.k.stride);
  p.v.data = v.data(); contiguous_strides(H, N, D, p.v.stride);
  p.o = o.data(); contiguous_strides(H, N, D, p.o_stride);
  p.ndim = static_cast<int>(grid.size());
  for (int a = 0; a < p.ndim; ++a) {
    p.grid[a] = grid[a];
    p.window[a] = win[a];
    p.shift[a] = shift[a];
  }
  p.scale = scale;
  EXPECT_TRUE(attnopt_cpu_window_attention_fwd(&p) == ATTNOPT_OK, "direct call");
  expect_output(name, r, t, shape, ref, o.data());
}

void bad_mask_case(Runner& run) {
  std::vector<float> q(1 * 2 * 5 * 4, 0.5f), kv(1 * 2 * 6 * 4, 0.25f);
  std::vector<uint8_t> mask(5 * 7, 1);
  const std::vector<Feed> feeds = {{{"q", onnx_proto::FLOAT, {1, 2, 5, 4}}, q.data()},
                                   {{"k", onnx_proto::FLOAT, {1, 2, 6, 4}}, kv.data()},
                                   {{"v", onnx_proto::FLOAT, {1, 2, 6, 4}}, kv.data()},
                                   {{"mask", onnx_proto::BOOL, {5, 7}}, mask.data()}};
  const std::string model = onnx_proto::one_node_model(
      "FlashAttention", {feeds[0].info, feeds[1].info, feeds[2].info, feeds[3].info},
      {"out", onnx_proto::FLOAT, {1, 2, 5, 4}}, {onnx_proto::attr_float("scale", 0.5f)});
  const Result r = run.run(model, feeds, "out");
  std::printf("%-46s error: %s\n", "mask (5,7) vs Nk 6 is refused", r.error.c_str());
  EXPECT_TRUE(r.error.find("does not broadcast") != std::string::npos, "bad mask must fail with a clear message");
}

}  // namespace

// Threads of this process (Linux), -1 when unknown.
int thread_count() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

int main(int argc, char** argv) {
  if (!load_ort(argc, argv)) {
    std::printf("SKIP: no ONNX Runtime library given (configure with -DATTNOPT_ORT_LIBRARY=... or set ATTNOPT_ORT_LIB)\n");
    return 77;
  }
  const char* custom = argv[1];
  {
    Runner run(custom);
    // Run first, before any direct call starts attnopt's own pool: with
    // intra_op_num_threads = 1 the op runs on the session's one thread and
    // starts none (the pool would start hardware_concurrency - 1 workers).
    const int before = thread_count();
    flash_case(run, "Flash GQA, Dqk!=Dv, bool (1,1,Nq,Nk), dead rows", ATTNOPT_F32, false, 2, 4, 2, 33, 50, 16, 24, 1,
               false, 0.3f, false, [before] {
                 const int after = thread_count();
                 EXPECT_TRUE(after == before, "intra_op_num_threads 1: %d threads before the run, %d after", before,
                             after);
               });
    flash_case(run, "Flash rank 3, causal Nq<Nk", ATTNOPT_F16, true, 3, 1, 1, 20, 45, 8, 8, 0, true, 0.35355339f);
    flash_case(run, "Flash additive float mask (B,1,1,Nk)", ATTNOPT_BF16, false, 2, 2, 2, 40, 40, 32, 32, 2, false,
               0.17677669f);
    flash_case(run, "Flash head dim 4, bool mask, causal", ATTNOPT_F16, false, 1, 16, 16, 30, 30, 4, 4, 1, true, 0.5f);
    flash_case(run, "Flash dynamic axes (symbolic B, N in model)", ATTNOPT_F32, false, 2, 2, 1, 25, 31, 20, 12, 2,
               false, 0.2f, true);
    window_case(run, "Window 2D 6x10 w 4x4 shift 2,1", ATTNOPT_F32, 1, 2, 8, {6, 10}, {4, 4}, {2, 1}, 0.35f);
    window_case(run, "Window 3D 4x4x4 w 2x2x2 shift 1,1,1", ATTNOPT_F16, 2, 1, 16, {4, 4, 4}, {2, 2, 2}, {1, 1, 1},
                0.25f);
    window_case(run, "Window 1D 50 w 8 shift 5", ATTNOPT_BF16, 1, 3, 32, {50}, {8}, {5}, 0.17677669f);
    bad_mask_case(run);
    RowSemantics once;  // one Where(And(causal, padding), 0, finfo.min)
    once.mode = ATTNOPT_EMPTY_LITERAL;
    once.mask_fill = once.causal_fill = -3.4028234663852886e38;
    once.once = true;
    empty_rows_case(run, "Flash left padding, finfo.min once: mean of V", ATTNOPT_F32, once, 0);
    RowSemantics nan_rows;
    nan_rows.mode = ATTNOPT_EMPTY_LITERAL;
    empty_rows_case(run, "Flash left padding, -inf: NaN rows", ATTNOPT_F32, nan_rows, 0);
    RowSemantics half = once;
    half.mask_fill = half.causal_fill = -65504.0;
    half.round = ATTNOPT_F16;
    empty_rows_case(run, "Flash left padding, fp16 min once, rounded", ATTNOPT_F16, half, 1);
  }
  {
    // Two intra-op threads: the same bits as the direct call (checked inside).
    Runner run(custom, 2);
    flash_case(run, "Flash on 2 intra-op threads, causal", ATTNOPT_F32, false, 2, 4, 4, 70, 70, 32, 32, 0, true, 0.2f);
    window_case(run, "Window on 2 intra-op threads", ATTNOPT_F16, 2, 2, 16, {8, 8}, {4, 4}, {2, 2}, 0.25f);
    flash_case(run, "Flash sliding_window 9, causal, additive (B,1,1,Nk)", ATTNOPT_F16, false, 2, 4, 2, 60, 60, 16,
               16, 2, true, 0.25f, false, nullptr, 9);
  }
  if (g_failures) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all ORT checks passed\n");
  return 0;
}
