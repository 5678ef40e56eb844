// CPU kernels against the float64 reference: every mask kind, head dims 4..256,
// Dqk != Dv, GQA, rank 3, strided layouts, f32/f16/bf16, and WindowAttention in
// 1D/2D/3D with and without shift; flash and window run once per instruction
// set this processor supports (generic, AVX2, AVX-512); "exp" checks each
// set's vector exp against std::exp; "threads" the persistent thread pool. Usage: test_cpu [flash|window|exp|threads|args|hostile|all]
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include "cpu/attention_core.h"
#include "cpu/cpu_isa.h"
#include "hostile_abi.h"
#include "reference.h"
#include "test_util.h"

namespace attnopt_test {
int g_failures = 0;
}

using namespace attnopt_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class MaskKind { None, Bool, Additive };

struct FlashCase {
  std::string name;
  attnopt_dtype dtype = ATTNOPT_F32;
  int64_t B = 1, Hq = 2, Hkv = 2, Nq = 37, Nk = 37, Dqk = 16, Dv = 16;
  bool rank3 = false;        // (B, N, D) tensors, one head, head stride 0
  bool heads_inner = false;  // stored (B, N, H, D): non-contiguous heads
  MaskKind mask = MaskKind::None;
  attnopt_mask_type mask_float = ATTNOPT_MASK_F32;  // storage of an additive mask
  std::vector<int64_t> mask_shape;                  // rank 2..4, right-aligned
  bool causal = false;
  int64_t window = 0;      // with causal: a sliding window of that many keys
  bool dead_rows = false;  // bool mask: every 5th query row sees no key
  bool block_sparse = false;  // bool mask: keys 64..191 masked for every query
  double scale = 0;        // 0: 1/sqrt(Dqk)
  double softcap = 0;      // > 0: scores capped before the mask
};

void strides_for(const FlashCase& c, int64_t h, int64_t n, int64_t d, int64_t s[4]) {
  if (c.rank3) {
    s[3] = 1; s[2] = d; s[1] = 0; s[0] = n * d;
  } else if (c.heads_inner) {
    s[3] = 1; s[1] = d; s[2] = h * d; s[0] = n * h * d;
  } else {
    contiguous_strides(h, n, d, s);
  }
}

Get4 accessor(const Tensor& t, const int64_t s[4]) {
  const int64_t s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
  const double* v = t.value.data();
  return [=](int64_t b, int64_t h, int64_t n, int64_t d) { return v[b * s0 + h * s1 + n * s2 + d * s3]; };
}

// Fills a broadcastable mask and returns its strides over (B, Hq, Nq, Nk).
struct MaskData {
  std::vector<uint8_t> bools;
  Tensor floats;
  std::vector<double> additive;  // the additive value of every stored element
  int64_t stride[4] = {0, 0, 0, 0};
  const void* ptr = nullptr;
  attnopt_mask_type type = ATTNOPT_MASK_NONE;
};

MaskData make_mask(const FlashCase& c, std::mt19937& rng) {
  MaskData m;
  if (c.mask == MaskKind::None) return m;
  int64_t shape[4] = {1, 1, 1, 1};
  const size_t r = c.mask_shape.size();
  for (size_t i = 0; i < r; ++i) shape[4 - r + i] = c.mask_shape[i];
  int64_t n = 1;
  for (int a = 3; a >= 0; --a) {
    m.stride[a] = shape[a] == 1 ? 0 : n;  // broadcast axes read with stride 0
    n *= shape[a];
  }
  std::uniform_real_distribution<float> u(0.f, 1.f);
  m.additive.resize(n);
  if (c.mask == MaskKind::Bool) {
    m.type = ATTNOPT_MASK_BOOL;
    m.bools.resize(n);
    for (int64_t i = 0; i < n; ++i) m.bools[i] = u(rng) < 0.7f;
    if (c.dead_rows) {  // whole query rows false (needs a per-query axis)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t q = (i / std::max<int64_t>(1, shape[3])) % shape[2];
        if (q % 5 == 0) m.bools[i] = 0;
      }
    }
    if (c.block_sparse)  // keys 64..191: two whole key tiles, for every query
      for (int64_t i = 0; i < n; ++i) {
        const int64_t key = i % shape[3];
        if (key >= 64 && key < 192) m.bools[i] = 0;
      }
    for (int64_t i = 0; i < n; ++i) m.additive[i] = m.bools[i] ? 0.0 : -kInf;
    m.ptr = m.bools.data();
  } else {
    m.type = c.mask_float;
    const attnopt_dtype st = c.mask_float == ATTNOPT_MASK_F32 ? ATTNOPT_F32
                             : c.mask_float == ATTNOPT_MASK_F16 ? ATTNOPT_F16 : ATTNOPT_BF16;
    m.floats = make_tensor(st, n, rng, -3.f, 1.f);
    for (int64_t i = 0; i < n; ++i) {
      if (u(rng) < 0.15f) {  // some keys excluded outright
        if (st == ATTNOPT_F32) m.floats.f32[i] = -INFINITY; else m.floats.h16[i] = st == ATTNOPT_F16 ? 0xfc00 : 0xff80;
        m.floats.value[i] = -kInf;
      }
      m.additive[i] = m.floats.value[i];
    }
    m.ptr = m.floats.data();
  }
  return m;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_flash(const FlashCase& c) {
  std::mt19937 rng(1234 + static_cast<unsigned>(c.name.size()) * 7 + static_cast<unsigned>(c.Dqk));
  const int64_t Hq = c.rank3 ? 1 : c.Hq, Hkv = c.rank3 ? 1 : c.Hkv;
  Tensor q = make_tensor(c.dtype, c.B * Hq * c.Nq * c.Dqk, rng, -2.f, 2.f);
  Tensor k = make_tensor(c.dtype, c.B * Hkv * c.Nk * c.Dqk, rng, -2.f, 2.f);
  Tensor v = make_tensor(c.dtype, c.B * Hkv * c.Nk * c.Dv, rng);
  Tensor o = make_poisoned(c.dtype, c.B * Hq * c.Nq * c.Dv);
  MaskData mask = make_mask(c, rng);

  attnopt_flash_params p{};
  p.dtype = c.dtype;
  p.batch = c.B; p.heads_q = Hq; p.heads_kv = Hkv;
  p.len_q = c.Nq; p.len_k = c.Nk; p.dim_qk = c.Dqk; p.dim_v = c.Dv;
  p.q.data = q.data(); strides_for(c, Hq, c.Nq, c.Dqk, p.q.stride);
  p.k.data = k.data(); strides_for(c, Hkv, c.Nk, c.Dqk, p.k.stride);
  p.v.data = v.data(); strides_for(c, Hkv, c.Nk, c.Dv, p.v.stride);
  p.o = o.data(); strides_for(c, Hq, c.Nq, c.Dv, p.o_stride);
  p.mask_type = mask.type; p.mask = mask.ptr;
  std::memcpy(p.mask_stride, mask.stride, sizeof(p.mask_stride));
  p.scale = static_cast<float>(c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.Dqk)));
  p.causal = c.causal;
  p.window = c.window;
  p.softcap = static_cast<float>(c.softcap);

  const auto t0 = std::chrono::steady_clock::now();
  const int st = attnopt_cpu_flash_attention_fwd(&p);
  const double dt = seconds_since(t0);
  EXPECT_TRUE(st == ATTNOPT_OK, "%s: status %d", c.name.c_str(), st);

  Mask4 maskfn;
  if (mask.type != ATTNOPT_MASK_NONE) {
    const MaskData* m = &mask;
    maskfn = [m](int64_t b, int64_t h, int64_t i, int64_t j) {
      return m->additive[b * m->stride[0] + h * m->stride[1] + i * m->stride[2] + j * m->stride[3]];
    };
  }
  Admit admit;
  if (c.causal) {
    const int64_t off = c.Nk - c.Nq, w = c.window;
    admit = [off, w](int64_t i, int64_t j) { return j <= i + off && (w <= 0 || j > i + off - w); };
  }
  const RefDims d{c.B, Hq, Hkv, c.Nq, c.Nk, c.Dqk, c.Dv};
  const std::vector<double> ref = reference_attention(d, accessor(q, p.q.stride), accessor(k, p.k.stride),
                                                      accessor(v, p.v.stride), p.scale, maskfn, admit,
                                                      p.softcap);
  // Read the output back in the reference's contiguous order.
  Tensor out = make_poisoned(c.dtype, ref.size());
  size_t zero_rows = 0, bad_zero_rows = 0;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < c.Nq; ++i) {
        bool ref_zero = true, out_zero = true;
        for (int64_t e = 0; e < c.Dv; ++e) {
          const size_t dst = ((b * Hq + h) * c.Nq + i) * c.Dv + e;
          const size_t src = b * p.o_stride[0] + h * p.o_stride[1] + i * p.o_stride[2] + e * p.o_stride[3];
          if (c.dtype == ATTNOPT_F32) out.f32[dst] = o.f32[src]; else out.h16[dst] = o.h16[src];
          ref_zero &= ref[dst] == 0.0;
          out_zero &= out.get(dst) == 0.0;
        }
        if (ref_zero) {
          ++zero_rows;
          bad_zero_rows += !out_zero;
        }
      }
  const double err = rel_l2(out, ref);
  std::printf("%-44s %-4s err %.2e  zero rows %zu  %.3fs\n", c.name.c_str(), dtype_name(c.dtype), err,
              zero_rows, dt);
  EXPECT_TRUE(err <= tolerance(c.dtype), "%s %s: rel L2 error %.3e > %.1e", c.name.c_str(),
              dtype_name(c.dtype), err, tolerance(c.dtype));
  EXPECT_TRUE(bad_zero_rows == 0, "%s: %zu rows without keys are not exactly zero", c.name.c_str(),
              bad_zero_rows);
  if (c.dead_rows || (c.causal && c.Nq > c.Nk))
    EXPECT_TRUE(zero_rows > 0, "%s: case meant to have key-less rows has none", c.name.c_str());
}

void test_flash() {
  const attnopt_dtype dtypes[] = {ATTNOPT_F32, ATTNOPT_F16, ATTNOPT_BF16};
  for (attnopt_dtype t : dtypes) {
    for (int64_t d : {4, 8, 16, 32, 64, 128, 256}) {
      FlashCase c;
      c.name = "head dim " + std::to_string(d);
      c.dtype = t; c.Dqk = c.Dv = d; c.Nq = c.Nk = d >= 128 ? 45 : 77;
      run_flash(c);
    }
    FlashCase c;
    c.dtype = t;
    c.name = "bool mask (1,1,N,N) with dead rows";
    c.mask = MaskKind::Bool; c.mask_shape = {1, 1, 70, 70}; c.Nq = c.Nk = 70; c.dead_rows = true;
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "additive mask (B,1,1,N)";
    c.B = 2; c.mask = MaskKind::Additive; c.mask_shape = {2, 1, 1, 90}; c.Nq = 33; c.Nk = 90;
    run_flash(c);
    c.name = "additive mask (B,1,1,N) f16 storage";
    c.mask_float = ATTNOPT_MASK_F16;
    run_flash(c);
    c.name = "additive mask (B,1,1,N) bf16 storage";
    c.mask_float = ATTNOPT_MASK_BF16;
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "causal Nq == Nk";
    c.causal = true; c.Nq = c.Nk = 100;
    run_flash(c);
    c.name = "causal Nq < Nk (bottom-right)";
    c.Nq = 40; c.Nk = 100;
    run_flash(c);
    c.name = "causal Nq > Nk (first rows empty)";
    c.Nq = 100; c.Nk = 40;
    run_flash(c);
    // Sliding windows: narrower than a key tile, across tile edges, longer
    // than the keys, with a cache (Nq < Nk) and with a padding mask.
    for (int64_t w : {1, 5, 70, 300}) {
      c = FlashCase{};
      c.dtype = t;
      c.name = "causal sliding window " + std::to_string(w) + ", N 200";
      c.causal = true; c.window = w; c.Nq = c.Nk = 200;
      run_flash(c);
    }
    c.name = "causal sliding window 33, Nq 50 < Nk 230";
    c.window = 33; c.Nq = 50; c.Nk = 230;
    run_flash(c);
    c.name = "causal sliding window 16, padding (B,1,1,N)";
    c.B = 2; c.Nq = c.Nk = 150; c.window = 16; c.mask = MaskKind::Additive; c.mask_shape = {2, 1, 1, 150};
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "SAGAN Dqk 8, Dv 64, scale 1";
    c.Hq = c.Hkv = 1; c.Dqk = 8; c.Dv = 64; c.Nq = c.Nk = 150; c.scale = 1.0;
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "GQA Hq 8 / Hkv 2, Dqk 24, Dv 40";
    c.Hq = 8; c.Hkv = 2; c.Dqk = 24; c.Dv = 40; c.Nq = 50; c.Nk = 65;
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "rank 3 (B,N,D), d 12";
    c.rank3 = true; c.B = 3; c.Dqk = c.Dv = 12; c.Nq = 29; c.Nk = 130;
    run_flash(c);
    // Softcap (Gemma 2), before the mask: with each mask kind and band, GQA,
    // small Dv (P.V across keys), and split-K (few queries, long keys).
    c = FlashCase{};
    c.dtype = t;
    c.name = "softcap 0.7, bool mask (1,1,N,N) dead rows, d 4";
    c.softcap = 0.7; c.Dqk = c.Dv = 4; c.mask = MaskKind::Bool; c.mask_shape = {1, 1, 70, 70};
    c.Nq = c.Nk = 70; c.dead_rows = true;
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "softcap 2, additive (B,1,1,N), GQA 8/2, Dv 40";
    c.softcap = 2; c.B = 2; c.Hq = 8; c.Hkv = 2; c.Dqk = 24; c.Dv = 40; c.Nq = 50; c.Nk = 90;
    c.mask = MaskKind::Additive; c.mask_shape = {2, 1, 1, 90};
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "softcap 50, causal sliding window 33, N 200";
    c.softcap = 50; c.causal = true; c.window = 33; c.Nq = c.Nk = 200; c.scale = 1.0;
    run_flash(c);
    c = FlashCase{};
    c.dtype = t;
    c.name = "softcap 1, causal Nq 3 < Nk 5000 (split-K), Dv 2";
    c.softcap = 1; c.causal = true; c.Nq = 3; c.Nk = 5000; c.Dqk = 8; c.Dv = 2;
    run_flash(c);
    // Every finite cap against the float64 reference (issue 34): tanh as
    // (1 - u) / (1 + u) cancelled for large caps (7e-4 off at 1e5, uniform
    // attention from 1e10, NaN at FLT_MAX). Scale 1 keeps |s / c| tiny for
    // large caps; scale 5 puts scores of cap 70 past c / 4 (the wide form's
    // other branch). (Scores near a large cap are ill-conditioned in
    // float32 with or without one: their own rounding is |s| * 6e-8.)
    for (auto [cap, scale] : std::initializer_list<std::pair<double, double>>{
             {1e-3, 1}, {0.1, 1}, {30, 1}, {50, 4}, {64, 1}, {65, 1}, {70, 5}, {100, 1}, {1e3, 1}, {1e5, 1},
             {1e8, 1}, {1e10, 1}, {1e20, 1}, {1e30, 1}, {FLT_MAX, 1}}) {
      c = FlashCase{};
      c.dtype = t;
      c.name = "softcap " + std::to_string(cap).substr(0, 12) + ", scale " + std::to_string(scale).substr(0, 8) +
               ", additive (1,1,Nq,Nk)";
      c.softcap = cap; c.scale = scale; c.Nq = 37; c.Nk = 70;
      c.mask = MaskKind::Additive; c.mask_shape = {1, 1, 37, 70};
      run_flash(c);
    }
  }
  // Layout and mask-shape variety, f32 only (the dtype does not change indexing).
  FlashCase c;
  c.name = "heads stored inner (B,N,H,D) + causal";
  c.heads_inner = true; c.Hq = 4; c.Hkv = 2; c.causal = true; c.Nq = c.Nk = 66;
  run_flash(c);
  c = FlashCase{};
  c.name = "bool mask (B,H,Nq,Nk) full";
  c.B = 2; c.Hq = c.Hkv = 3; c.mask = MaskKind::Bool; c.mask_shape = {2, 3, 20, 35}; c.Nq = 20; c.Nk = 35;
  run_flash(c);
  c = FlashCase{};
  c.name = "bool mask rank 2 (Nq,Nk) + dead rows";
  c.mask = MaskKind::Bool; c.mask_shape = {31, 47}; c.Nq = 31; c.Nk = 47; c.dead_rows = true;
  run_flash(c);
  c = FlashCase{};
  c.name = "additive mask (1,H,Nq,1) + causal";
  c.Hq = c.Hkv = 3; c.mask = MaskKind::Additive; c.mask_shape = {1, 3, 40, 1}; c.Nq = c.Nk = 40;
  c.causal = true;
  run_flash(c);
  c = FlashCase{};
  c.name = "long keys (Nk 1000, Nq 3)";
  c.Nq = 3; c.Nk = 1000; c.Dqk = c.Dv = 32;
  run_flash(c);
  c = FlashCase{};
  c.name = "single query and key";
  c.Nq = c.Nk = 1;
  run_flash(c);
  // Several query chunks (128 rows) and key tiles (64 keys), partial last ones.
  c = FlashCase{};
  c.name = "long: Nq 300, Nk 333, d 20 / Dv 12";
  c.Nq = 300; c.Nk = 333; c.Dqk = 20; c.Dv = 12;
  run_flash(c);
  c.name = "long causal Nq 300, Nk 333, bool mask (1,1,Nq,Nk)";
  c.causal = true; c.mask = MaskKind::Bool; c.mask_shape = {1, 1, 300, 333};
  run_flash(c);
  c = FlashCase{};
  c.name = "long, key padding mask (B,1,1,N), f16 storage";
  c.B = 2; c.Nq = 200; c.Nk = 260; c.Dqk = 8; c.Dv = 2;
  c.mask = MaskKind::Additive; c.mask_float = ATTNOPT_MASK_F16; c.mask_shape = {2, 1, 1, 260};
  run_flash(c);
  for (attnopt_dtype t : dtypes) {
    c = FlashCase{};
    c.dtype = t;
    c.name = "long, Dqk 4 / Dv 4, bool (1,1,N,N), tiles packed per chunk";
    c.Hq = 4; c.Hkv = 2; c.Nq = c.Nk = 260; c.Dqk = c.Dv = 4;
    c.mask = MaskKind::Bool; c.mask_shape = {1, 1, 260, 260};
    attnopt::cpu_set_packed_budget(1);  // the path for keys too long to cache
    run_flash(c);
    c.name = "long, Dqk 4 / Dv 4, bool (1,1,N,N), tiles cached per thread";
    attnopt::cpu_set_packed_budget(3000);  // one kv head's 5 tiles (2560 floats) fit, both do not
    run_flash(c);
    attnopt::cpu_set_packed_budget(0);
    c.name = "long, Dqk 4 / Dv 4, bool (1,1,N,N), tiles packed before the chunks";
    run_flash(c);
  }
  // Few queries (decoding): the query heads of a GQA group share a chunk,
  // and long keys are split (split-K) and merged; rows that see no key of
  // some splits (windows, masks) or of any split (dead rows).
  for (attnopt_dtype t : dtypes) {
    c = FlashCase{};
    c.dtype = t;
    c.name = "decode Nq 1, GQA 8/2, d 64, Nk 2100 (split keys)";
    c.Hq = 8; c.Hkv = 2; c.Nq = 1; c.Nk = 2100; c.Dqk = c.Dv = 64;
    run_flash(c);
    c.name = "decode Nq 1, GQA 8/2, key padding (B,1,1,Nk)";
    c.B = 2; c.mask = MaskKind::Additive; c.mask_shape = {2, 1, 1, 2100};
    run_flash(c);
  }
  c = FlashCase{};
  c.name = "decode Nq 3, GQA 12/3, causal, bool mask (B,H,Nq,Nk)";
  c.B = 2; c.Hq = 12; c.Hkv = 3; c.Nq = 3; c.Nk = 2500; c.Dqk = 24; c.Dv = 40; c.causal = true;
  c.mask = MaskKind::Bool; c.mask_shape = {2, 12, 3, 2500};
  run_flash(c);
  c.name = "decode Nq 3, GQA 12/3, bool mask (1,H,Nq,Nk) with dead rows";
  c.causal = false; c.mask_shape = {1, 12, 3, 2500}; c.dead_rows = true;
  run_flash(c);
  c = FlashCase{};
  c.name = "Nq 16, GQA 16/2, causal sliding window 100, Nk 4000";
  c.Hq = 16; c.Hkv = 2; c.Nq = 16; c.Nk = 4000; c.Dqk = c.Dv = 32; c.causal = true; c.window = 100;
  run_flash(c);
  c.name = "Nq 20 > window, GQA 16/2, causal sliding window 8, d 4";
  c.Nq = 20; c.window = 8; c.Dqk = c.Dv = 4;
  run_flash(c);
  c = FlashCase{};
  c.name = "Nq 40, GQA 12/2 (3 heads per chunk), bool mask (1,1,Nq,Nk) as shared bits";
  c.Hq = 12; c.Hkv = 2; c.Nq = 40; c.Nk = 500; c.Dqk = c.Dv = 8;
  c.mask = MaskKind::Bool; c.mask_shape = {1, 1, 40, 500}; c.dead_rows = true;
  run_flash(c);
  c = FlashCase{};
  c.name = "Nq 40, GQA 6/2, one head of keys split, Dv 4";
  c.Hq = 6; c.Hkv = 2; c.Nq = 40; c.Nk = 3000; c.Dqk = 16; c.Dv = 4;
  run_flash(c);
  // Whole key tiles masked for every query (skipped) and rows without keys.
  c = FlashCase{};
  c.name = "bool mask with fully masked key tiles";
  c.Nq = 150; c.Nk = 300; c.mask = MaskKind::Bool; c.mask_shape = {150, 300}; c.block_sparse = true;
  run_flash(c);
  c.name = "key padding with fully masked key tiles";
  c.mask_shape = {1, 1, 1, 300};
  run_flash(c);
}

struct WindowCase {
  std::string name;
  attnopt_dtype dtype = ATTNOPT_F32;
  int64_t B = 1, Hq = 2, Hkv = 2, Dqk = 16, Dv = 16;
  std::vector<int64_t> grid, window, shift;
};

// Runs WindowAttention, checks it against the reference and returns the output.
Tensor run_window(const WindowCase& c, Tensor* q_out = nullptr, Tensor* k_out = nullptr, Tensor* v_out = nullptr) {
  std::mt19937 rng(99 + static_cast<unsigned>(c.name.size()));
  int64_t N = 1;
  for (int64_t g : c.grid) N *= g;
  Tensor q = make_tensor(c.dtype, c.B * c.Hq * N * c.Dqk, rng, -2.f, 2.f);
  Tensor k = make_tensor(c.dtype, c.B * c.Hkv * N * c.Dqk, rng, -2.f, 2.f);
  Tensor v = make_tensor(c.dtype, c.B * c.Hkv * N * c.Dv, rng);
  Tensor o = make_poisoned(c.dtype, c.B * c.Hq * N * c.Dv);
  attnopt_window_params p{};
  p.dtype = c.dtype;
  p.batch = c.B; p.heads_q = c.Hq; p.heads_kv = c.Hkv; p.len = N; p.dim_qk = c.Dqk; p.dim_v = c.Dv;
  p.q.data = q.data(); contiguous_strides(c.Hq, N, c.Dqk, p.q.stride);
  p.k.data = k.data(); contiguous_strides(c.Hkv, N, c.Dqk, p.k.stride);
  p.v.data = v.data(); contiguous_strides(c.Hkv, N, c.Dv, p.v.stride);
  p.o = o.data(); contiguous_strides(c.Hq, N, c.Dv, p.o_stride);
  p.ndim = static_cast<int>(c.grid.size());
  std::vector<int64_t> shift = c.shift.empty() ? std::vector<int64_t>(c.grid.size(), 0) : c.shift;
  for (int a = 0; a < p.ndim; ++a) {
    p.grid[a] = c.grid[a];
    p.window[a] = c.window[a];
    p.shift[a] = shift[a];
  }
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.Dqk)));
  const auto t0 = std::chrono::steady_clock::now();
  const int st = attnopt_cpu_window_attention_fwd(&p);
  const double dt = seconds_since(t0);
  EXPECT_TRUE(st == ATTNOPT_OK, "%s: status %d", c.name.c_str(), st);
  const RefDims d{c.B, c.Hq, c.Hkv, N, N, c.Dqk, c.Dv};
  const std::vector<double> ref =
      reference_attention(d, accessor(q, p.q.stride), accessor(k, p.k.stride), accessor(v, p.v.stride), p.scale,
                          nullptr, window_admit(c.grid, c.window, shift));
  const double err = rel_l2(o, ref);
  std::printf("%-44s %-4s err %.2e  %.3fs\n", c.name.c_str(), dtype_name(c.dtype), err, dt);
  EXPECT_TRUE(err <= tolerance(c.dtype), "%s %s: rel L2 error %.3e", c.name.c_str(), dtype_name(c.dtype), err);
  if (q_out) *q_out = q;
  if (k_out) *k_out = k;
  if (v_out) *v_out = v;
  return o;
}

void test_window() {
  for (attnopt_dtype t : {ATTNOPT_F32, ATTNOPT_F16, ATTNOPT_BF16}) {
    run_window({"1D N 20 w 6 (border window of 2)", t, 1, 2, 2, 16, 16, {20}, {6}, {}});
    run_window({"1D N 20 w 6 shift 3", t, 1, 2, 2, 16, 16, {20}, {6}, {3}});
    run_window({"2D 7x9 w 3x4 shift 1,2", t, 2, 2, 1, 8, 24, {7, 9}, {3, 4}, {1, 2}});
    run_window({"3D 4x5x6 w 2x3x4 shift 1,1,2", t, 1, 4, 2, 32, 32, {4, 5, 6}, {2, 3, 4}, {1, 1, 2}});
  }
  run_window({"2D 8x8 w 4x4 (dividing)", ATTNOPT_F32, 1, 2, 2, 4, 4, {8, 8}, {4, 4}, {}});
  run_window({"2D 8x8 w 4x4 shift 2,2 (Swin)", ATTNOPT_F32, 1, 2, 2, 64, 64, {8, 8}, {4, 4}, {2, 2}});
  run_window({"2D negative shift -1,-3", ATTNOPT_F32, 1, 1, 1, 8, 8, {6, 10}, {4, 4}, {-1, -3}});
  run_window({"3D window 1x1x1 (each token alone)", ATTNOPT_F32, 1, 1, 1, 8, 8, {3, 3, 3}, {1, 1, 1}, {}});
  run_window({"3D 8x8x8 w 4x4x4 shift 2,2,2", ATTNOPT_F32, 1, 2, 2, 32, 32, {8, 8, 8}, {4, 4, 4}, {2, 2, 2}});

  // window == grid is exact attention: compare with FlashAttention directly.
  for (const WindowCase& c : {WindowCase{"window == grid 2D 6x7 shift 2,3", ATTNOPT_F32, 2, 4, 2, 16, 20, {6, 7}, {6, 7}, {2, 3}},
                              WindowCase{"window == grid 3D 3x4x5", ATTNOPT_F32, 1, 2, 2, 8, 8, {3, 4, 5}, {3, 4, 5}, {}}}) {
    Tensor q, k, v;
    Tensor wo = run_window(c, &q, &k, &v);
    int64_t N = 1;
    for (int64_t g : c.grid) N *= g;
    Tensor fo = make_poisoned(ATTNOPT_F32, wo.size());
    attnopt_flash_params p{};
    p.dtype = ATTNOPT_F32;
    p.batch = c.B; p.heads_q = c.Hq; p.heads_kv = c.Hkv; p.len_q = p.len_k = N; p.dim_qk = c.Dqk; p.dim_v = c.Dv;
    p.q.data = q.data(); contiguous_strides(c.Hq, N, c.Dqk, p.q.stride);
    p.k.data = k.data(); contiguous_strides(c.Hkv, N, c.Dqk, p.k.stride);
    p.v.data = v.data(); contiguous_strides(c.Hkv, N, c.Dv, p.v.stride);
    p.o = fo.data(); contiguous_strides(c.Hq, N, c.Dv, p.o_stride);
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.Dqk)));
    EXPECT_TRUE(attnopt_cpu_flash_attention_fwd(&p) == ATTNOPT_OK, "flash status");
    double max_diff = 0;
    for (size_t i = 0; i < wo.size(); ++i) max_diff = std::max(max_diff, std::fabs(wo.get(i) - fo.get(i)));
    std::printf("%-44s max |window - flash| %.2e\n", c.name.c_str(), max_diff);
    EXPECT_TRUE(max_diff <= 1e-5, "%s: window == grid differs from exact attention by %.3e", c.name.c_str(), max_diff);
  }
}

void test_args() {
  float buf[64] = {};
  attnopt_flash_params p{};
  p.dtype = ATTNOPT_F32;
  p.batch = 1; p.heads_q = 3; p.heads_kv = 2; p.len_q = p.len_k = 2; p.dim_qk = p.dim_v = 4;
  p.q.data = p.k.data = p.v.data = buf; p.o = buf;
  EXPECT_TRUE(attnopt_cpu_flash_attention_fwd(&p) == ATTNOPT_ERR_INVALID_ARGUMENT, "Hq not a multiple of Hkv");
  p.heads_q = 2; p.dim_qk = 257;
  EXPECT_TRUE(attnopt_cpu_flash_attention_fwd(&p) == ATTNOPT_ERR_INVALID_ARGUMENT, "head dim 257");
  p.dim_qk = 4; p.mask_type = ATTNOPT_MASK_BOOL;
  EXPECT_TRUE(attnopt_cpu_flash_attention_fwd(&p) == ATTNOPT_ERR_INVALID_ARGUMENT, "bool mask without pointer");
  attnopt_window_params w{};
  w.dtype = ATTNOPT_F32;
  w.batch = w.heads_q = w.heads_kv = 1; w.dim_qk = w.dim_v = 4; w.len = 12; w.ndim = 2;
  w.grid[0] = 3; w.grid[1] = 5; w.window[0] = w.window[1] = 2;
  w.q.data = w.k.data = w.v.data = buf; w.o = buf;
  EXPECT_TRUE(attnopt_cpu_window_attention_fwd(&w) == ATTNOPT_ERR_INVALID_ARGUMENT, "len != prod(grid)");
  w.ndim = 4;
  EXPECT_TRUE(attnopt_cpu_window_attention_fwd(&w) == ATTNOPT_ERR_INVALID_ARGUMENT, "4 spatial axes");
  EXPECT_TRUE(attnopt_has_cuda() || attnopt_cuda_flash_attention_fwd(&p, nullptr) == ATTNOPT_ERR_NO_CUDA,
              "CUDA entry point of a CPU-only build must refuse");
  std::printf("argument checks done\n");
}

// The tile kernels' vector 2^x (the softmax works in log2 units) against
// std::exp2 (double): maximum relative error over [-125, 127] and the
// documented edge values.
void test_exp(const attnopt::TileKernels& k) {
  const int64_t n = 1 << 21;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -125.0f + (127.0f + 125.0f) * static_cast<float>(i) / (n - 1);
  k.exp2_n(x.data(), y.data(), n);
  double worst = 0;
  float at = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = std::exp2(static_cast<double>(x[i]));
    const double rel = std::fabs(y[i] - e) / e;
    if (rel > worst) {
      worst = rel;
      at = x[i];
    }
  }
  std::printf("exp2 %-8s max relative error %.2e (%.1f ulp of 2^-24) at x = %.6g\n",
              attnopt::cpu_isa_name(k.isa), worst, worst / 5.9604644775390625e-8, at);
  EXPECT_TRUE(worst <= 2.5e-7, "%s exp2: max relative error %.3e", attnopt::cpu_isa_name(k.isa), worst);
  const float edge[] = {-std::numeric_limits<float>::infinity(), -1000.f, -125.5f, -125.f, 0.f, std::nanf("")};
  float out[6];
  k.exp2_n(edge, out, 6);
  EXPECT_TRUE(out[0] == 0.f && out[1] == 0.f && out[2] == 0.f, "%s exp2: below -125 must be exactly 0",
              attnopt::cpu_isa_name(k.isa));
  EXPECT_TRUE(std::fabs(out[3] - 0x1p-125f) <= 0x1p-148f, "%s exp2(-125) = %g", attnopt::cpu_isa_name(k.isa),
              out[3]);
  EXPECT_TRUE(out[4] == 1.f, "%s exp2(0) = %g", attnopt::cpu_isa_name(k.isa), out[4]);
  EXPECT_TRUE(std::isnan(out[5]), "%s exp2(NaN) must be NaN", attnopt::cpu_isa_name(k.isa));
}

// The persistent pool: calls from several threads at once (one gets the pool,
// the others run on their own thread), and thread counts changing between
// calls. Every output must equal the single-threaded one bit for bit (a work
// item's arithmetic does not depend on the thread that runs it).
void test_threads() {
  std::mt19937 rng(5);
  const int64_t H = 4, N = 300, D = 16;
  Tensor q = make_tensor(ATTNOPT_F32, H * N * D, rng), k = make_tensor(ATTNOPT_F32, H * N * D, rng),
         v = make_tensor(ATTNOPT_F32, H * N * D, rng);
  auto params = [&](float* out) {
    attnopt_flash_params p{};
    p.dtype = ATTNOPT_F32;
    p.batch = 1; p.heads_q = p.heads_kv = H; p.len_q = p.len_k = N; p.dim_qk = p.dim_v = D;
    p.q.data = q.data(); contiguous_strides(H, N, D, p.q.stride);
    p.k.data = k.data(); contiguous_strides(H, N, D, p.k.stride);
    p.v.data = v.data(); contiguous_strides(H, N, D, p.v.stride);
    p.o = out; contiguous_strides(H, N, D, p.o_stride);
    p.scale = 0.25f;
    p.causal = 1;
    return p;
  };
  std::vector<float> want(H * N * D);
  attnopt_cpu_set_num_threads(1);
  attnopt_flash_params p = params(want.data());
  EXPECT_TRUE(attnopt_cpu_flash_attention_fwd(&p) == ATTNOPT_OK, "single-thread run");
  int mismatches = 0;
  for (int threads : {2, 4, 3, 8}) {
    attnopt_cpu_set_num_threads(threads);
    std::vector<std::vector<float>> outs(3, std::vector<float>(H * N * D));
    std::vector<std::thread> callers;
    std::atomic<int> bad{0};
    for (int c = 0; c < 3; ++c)
      callers.emplace_back([&, c] {
        for (int rep = 0; rep < 5; ++rep) {
          std::fill(outs[c].begin(), outs[c].end(), std::nanf(""));
          attnopt_flash_params pc = params(outs[c].data());
          if (attnopt_cpu_flash_attention_fwd(&pc) != ATTNOPT_OK ||
              std::memcmp(outs[c].data(), want.data(), want.size() * sizeof(float)) != 0)
            ++bad;
        }
      });
    for (auto& t : callers) t.join();
    mismatches += bad.load();
  }
  attnopt_cpu_set_num_threads(0);
  std::printf("thread pool: 4 thread counts x 3 concurrent callers x 5 calls, %d mismatches\n", mismatches);
  EXPECT_TRUE(mismatches == 0, "%d multithreaded outputs differ from the single-threaded one", mismatches);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  // Every instruction set this processor runs, so each variant is tested.
  for (attnopt::CpuIsa isa : {attnopt::CpuIsa::kGeneric, attnopt::CpuIsa::kAvx2, attnopt::CpuIsa::kAvx512}) {
    if (!attnopt::cpu_isa_force(isa)) {
      std::printf("== %s kernels: not supported here, skipped\n", attnopt::cpu_isa_name(isa));
      continue;
    }
    std::printf("== %s kernels\n", attnopt::cpu_isa_name(isa));
    if (which == "exp" || which == "all") test_exp(attnopt::cpu_tile_kernels());
    if (which == "flash" || which == "all") test_flash();
    if (which == "window" || which == "all") test_window();
    if (which == "hostile" || which == "all")  // issue 24: the C ABI table shared with CUDA (tests/hostile_abi.h)
      run_hostile_abi(attnopt::cpu_isa_name(isa), attnopt_cpu_flash_attention_fwd, attnopt_cpu_window_attention_fwd,
                      tolerance(ATTNOPT_F32));
  }
  if (which == "threads" || which == "all") test_threads();
  if (which == "args" || which == "all") test_args();
  if (g_failures) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
