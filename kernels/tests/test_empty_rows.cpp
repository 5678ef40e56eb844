// FlashAttention's rows with no visible key (attnopt_flash_params.empty_rows)
// against the float64 reference of tests/reference_rows.h, through the CPU
// entry point and the CUDA entry points on the emulation (tests/emu): left
// padding under causal, dead rows of a bool mask, float masks with finite
// fills, causal rows above the first key, windows, the literal rounding of an
// fp16 graph, and the -inf forms (NaN, or zeros when the source guarded).
#include <cmath>
#include <cstring>
#include <string>

#include "common/band.h"
#include "cuda_runtime.h"
#include "reference_rows.h"
#include "test_util.h"

namespace attnopt_test {
int g_failures = 0;
}

using namespace attnopt_test;

namespace {

constexpr float kF32Min = -3.4028234663852886e38f;

enum class Form { BoolPadding, BoolDeadRows, FloatPadding, FloatDeadRows, None };
// Where a case puts NaN (docs/ops.md "NaN"): none; in the float mask (one row
// all NaN, one row partly, one dead row's fill next to a NaN); one Q element;
// one K element; one V element.
enum class Poison { None, Mask, Q, K, V };

struct Case {
  std::string name;
  attnopt_dtype dtype = ATTNOPT_F32;
  int64_t B = 2, Hq = 2, Hkv = 1, Nq = 45, Nk = 45, Dqk = 16, Dv = 8;
  Form form = Form::BoolPadding;
  bool causal = true;
  int64_t window = 0;
  int64_t pad = 17;  // batch 0's left padding (padding forms)
  double float_fill = kF32Min;  // FloatPadding: the value padded keys hold
  RowSemantics sem;
  double tol = 0;  // > 0: this case's bound (literal scores near a moderate fill round coarsely)
  Poison poison = Poison::None;
};

// Element i of t becomes NaN, in the kernel's copy and the reference's.
void set_nan(Tensor& t, size_t i) {
  t.value[i] = NAN;
  if (t.dtype == ATTNOPT_F32) t.f32[i] = NAN;
  else t.h16[i] = t.dtype == ATTNOPT_F16 ? 0x7e00 : 0x7fc0;  // quiet NaNs
}

struct Backend {
  const char* name;
  int (*fwd)(const attnopt_flash_params*);
  int cc;  // emulated compute capability (0: CPU)
};

int cuda_fwd(const attnopt_flash_params* p) { return attnopt_cuda_flash_attention_fwd(p, nullptr); }

Get4 contiguous(const Tensor& t, int64_t h, int64_t n, int64_t d) {
  const double* v = t.value.data();
  return [=](int64_t b, int64_t hh, int64_t i, int64_t c) { return v[((b * h + hh) * n + i) * d + c]; };
}

void run(const Case& c, const Backend& be) {
  std::mt19937 rng(77 + static_cast<unsigned>(c.name.size()));
  Tensor q = make_tensor(c.dtype, c.B * c.Hq * c.Nq * c.Dqk, rng, -2.f, 2.f);
  Tensor k = make_tensor(c.dtype, c.B * c.Hkv * c.Nk * c.Dqk, rng, -2.f, 2.f);
  Tensor v = make_tensor(c.dtype, c.B * c.Hkv * c.Nk * c.Dv, rng);
  Tensor o = make_poisoned(c.dtype, c.B * c.Hq * c.Nq * c.Dv);
  // Masks: padding (B,1,1,Nk), dead rows (1,1,Nq,Nk).
  std::vector<uint8_t> bools;
  std::vector<float> floats;
  attnopt_flash_params p{};
  switch (c.form) {
    case Form::BoolPadding:
    case Form::FloatPadding:
      for (int64_t b = 0; b < c.B; ++b)
        for (int64_t j = 0; j < c.Nk; ++j) {
          const bool keep = !(b == 0 && j < c.pad);
          bools.push_back(keep);
          floats.push_back(keep ? 0.0f : static_cast<float>(c.float_fill));
        }
      p.mask_stride[0] = c.Nk;
      p.mask_stride[3] = 1;
      break;
    case Form::BoolDeadRows:
    case Form::FloatDeadRows:
      for (int64_t i = 0; i < c.Nq; ++i)
        for (int64_t j = 0; j < c.Nk; ++j) {
          const bool keep = i % 5 != 0 && (i + j) % 3 != 0;
          bools.push_back(keep);
          floats.push_back(keep ? 0.0f : static_cast<float>(c.float_fill));
        }
      p.mask_stride[2] = c.Nk;
      p.mask_stride[3] = 1;
      break;
    case Form::None: break;
  }
  const bool is_float = c.form == Form::FloatPadding || c.form == Form::FloatDeadRows;
  switch (c.poison) {
    case Poison::Mask:  // FloatDeadRows: (1,1,Nq,Nk); rows 7 and 11 see keys, row 5 is dead
      for (int64_t j = 0; j < c.Nk; ++j) {
        floats[7 * c.Nk + j] = NAN;
        if (j % 4 == 0) floats[11 * c.Nk + j] = NAN;
      }
      floats[5 * c.Nk + 2] = NAN;
      break;
    case Poison::Q: set_nan(q, ((1 * c.Hq + 0) * c.Nq + 3) * c.Dqk + 2); break;
    case Poison::K: set_nan(k, (0 * c.Nk + 20) * c.Dqk + 1); break;
    case Poison::V: set_nan(v, (0 * c.Nk + 9) * c.Dv + 3); break;
    case Poison::None: break;
  }
  p.mask_type = c.form == Form::None ? ATTNOPT_MASK_NONE : is_float ? ATTNOPT_MASK_F32 : ATTNOPT_MASK_BOOL;
  p.mask = c.form == Form::None ? nullptr : is_float ? static_cast<const void*>(floats.data()) : bools.data();
  p.dtype = c.dtype;
  p.batch = c.B; p.heads_q = c.Hq; p.heads_kv = c.Hkv;
  p.len_q = c.Nq; p.len_k = c.Nk; p.dim_qk = c.Dqk; p.dim_v = c.Dv;
  p.q.data = q.data(); contiguous_strides(c.Hq, c.Nq, c.Dqk, p.q.stride);
  p.k.data = k.data(); contiguous_strides(c.Hkv, c.Nk, c.Dqk, p.k.stride);
  p.v.data = v.data(); contiguous_strides(c.Hkv, c.Nk, c.Dv, p.v.stride);
  p.o = o.data(); contiguous_strides(c.Hq, c.Nq, c.Dv, p.o_stride);
  p.scale = 0.3f;
  p.causal = c.causal;
  p.window = c.window;
  p.empty_rows = c.sem.mode;
  p.mask_fill = static_cast<float>(c.sem.mask_fill);
  p.causal_fill = static_cast<float>(c.sem.causal_fill);
  p.fill_once = c.sem.once;
  p.fill_dtype = c.sem.round;
  p.mask_drop = std::isfinite(c.sem.mask_floor) ? static_cast<float>(-c.sem.mask_floor) : 0.0f;
  const int st = be.fwd(&p);
  EXPECT_TRUE(st == ATTNOPT_OK, "%s [%s]: status %d", c.name.c_str(), be.name, st);

  const int64_t* ms = p.mask_stride;
  MaskAt maskfn;
  if (c.form != Form::None)
    maskfn = [&, ms](int64_t b, int64_t, int64_t i, int64_t j) {
      const int64_t at = b * ms[0] + i * ms[2] + j * ms[3];
      if (is_float) return KeyMask{2, true, floats[at]};
      return KeyMask{1, bools[at] != 0, 0.0};
    };
  const RefDims d{c.B, c.Hq, c.Hkv, c.Nq, c.Nk, c.Dqk, c.Dv};
  const std::vector<double> ref = reference_rows(d, contiguous(q, c.Hq, c.Nq, c.Dqk), contiguous(k, c.Hkv, c.Nk, c.Dqk),
                                                 contiguous(v, c.Hkv, c.Nk, c.Dv), p.scale, maskfn, c.causal, c.window, c.sem);
  // NaN exactly where the reference has NaN; relative L2 over the rest.
  size_t nan_bad = 0, nans = 0;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double x = o.get(i);
    if (std::isnan(ref[i])) {
      ++nans;
      nan_bad += !std::isnan(x);
      continue;
    }
    if (!std::isfinite(x)) {
      ++nan_bad;
      continue;
    }
    num += (x - ref[i]) * (x - ref[i]);
    den += ref[i] * ref[i];
  }
  const double err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  const double tol = c.tol > 0 ? c.tol : be.cc ? (c.dtype == ATTNOPT_F32 ? 1e-5 : c.dtype == ATTNOPT_F16 ? 2e-3 : 1e-2) : tolerance(c.dtype);
  std::printf("%-58s %-22s %-4s err %.2e  NaN rows %zu\n", c.name.c_str(), be.name, dtype_name(c.dtype), err,
              nans / static_cast<size_t>(c.Dv));
  EXPECT_TRUE(err <= tol, "%s [%s %s]: rel L2 error %.3e > %.1e", c.name.c_str(), be.name, dtype_name(c.dtype), err, tol);
  EXPECT_TRUE(nan_bad == 0, "%s [%s]: %zu elements disagree on NaN", c.name.c_str(), be.name, nan_bad);
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  const RowSemantics zero{};
  RowSemantics nan_rows;  // -inf fills, no guard: NaN as softmax gives
  nan_rows.mode = ATTNOPT_EMPTY_LITERAL;
  RowSemantics guarded = nan_rows;
  guarded.mode = ATTNOPT_EMPTY_LITERAL_ZERO;
  RowSemantics once;  // one Where over And(causal, padding) with finfo.min
  once.mode = ATTNOPT_EMPTY_LITERAL;
  once.mask_fill = once.causal_fill = kF32Min;
  once.once = true;
  RowSemantics sum = once;  // a causal Where, then a padding bias added
  sum.once = false;

  Case c;
  c.name = "left padding + causal, zero rows (default)";
  c.sem = zero;
  cs.push_back(c);
  c.name = "left padding + causal, finfo.min once (mean over all keys)";
  c.sem = once;
  cs.push_back(c);
  c.name = "left padding + causal, finfo.min summed";
  c.sem = sum;
  cs.push_back(c);
  c.name = "left padding + causal, -inf: NaN rows";
  c.sem = nan_rows;
  cs.push_back(c);
  c.name = "left padding + causal, -inf guarded: zero rows";
  c.sem = guarded;
  cs.push_back(c);
  c.name = "left padding + causal window 9, finfo.min once";
  c.sem = once;
  c.window = 9;
  cs.push_back(c);
  c = Case{};
  c.name = "bool dead rows, finfo.min (mean of V)";
  c.form = Form::BoolDeadRows;
  c.causal = false;
  c.sem = once;
  cs.push_back(c);
  c.name = "bool dead rows, fill -1e4 (softmax of the raw scores)";
  c.sem.mask_fill = -1e4;
  c.tol = 1e-4;  // s + fill rounds to ulp(1e4) / 2 = 5e-4 in float, in the source graph too
  cs.push_back(c);
  c.tol = 0;
  c.name = "bool dead rows + causal Nq 40 < Nk 90, -inf";
  c.causal = true;
  c.Nq = 40;
  c.Nk = 90;
  c.sem = nan_rows;
  cs.push_back(c);
  c = Case{};
  c.name = "float padding finfo.min + causal fill finfo.min summed";
  c.form = Form::FloatPadding;
  c.sem = sum;
  cs.push_back(c);
  c.name = "float padding finfo.min + causal fill finfo.min once";
  c.sem = once;
  cs.push_back(c);
  c.name = "float padding -inf + causal -inf: NaN rows";
  c.float_fill = -INFINITY;
  c.sem = nan_rows;
  cs.push_back(c);
  // A float mask holding finfo.min (dynamo's Where(mask, 0, finfo.min)
  // kept additive): the tiles compute such rows literally themselves.
  c = Case{};
  c.name = "float dead rows finfo.min, no causal (mean of V)";
  c.form = Form::FloatDeadRows;
  c.causal = false;
  c.sem = nan_rows;
  cs.push_back(c);
  // Funnel's s - 1e6 * (1 - m): a finite fill whose rows the tiles, in
  // log2 units, would round on another grid than the source's s - 1e6
  // (off by 0.02); mask_drop sends them to the literal pass.
  c = Case{};
  c.name = "float dead rows fill -1e6, mask_floor -5e5 (Funnel)";
  c.form = Form::FloatDeadRows;
  c.causal = false;
  c.float_fill = -1e6;
  c.sem.mode = ATTNOPT_EMPTY_LITERAL;
  c.sem.mask_floor = -5e5;
  cs.push_back(c);
  c.name = "float padding fill -1e6 + causal, mask_floor -5e5";
  c.form = Form::FloatPadding;
  c.causal = true;
  cs.push_back(c);
  c = Case{};
  c.name = "causal Nq 90 > Nk 40, no mask, causal fill finfo.min";
  c.form = Form::None;
  c.Nq = 90;
  c.Nk = 40;
  c.sem = once;
  c.sem.once = false;
  cs.push_back(c);
  // An fp16 graph adds fills of -65504 in fp16: the literal scores round.
  for (attnopt_dtype t : {ATTNOPT_F16, ATTNOPT_BF16}) {
    c = Case{};
    c.dtype = t;
    c.name = std::string("left padding + causal, ") + dtype_name(t) + " min once, rounded";
    c.sem = once;
    c.sem.mask_fill = c.sem.causal_fill = t == ATTNOPT_F16 ? -65504.0 : -3.3895313892515355e38;
    c.sem.round = t;
    cs.push_back(c);
    c.name = std::string("bool dead rows, ") + dtype_name(t) + " min, rounded";
    c.form = Form::BoolDeadRows;
    c.causal = false;
    cs.push_back(c);
  }
  // NaN reaches the rows that read it, as in the source graph: a NaN mask
  // element or Q/K element makes the scores it enters NaN, so their rows are
  // NaN whatever else the row holds (every key NaN, some, or NaN beside -inf
  // and fills); a NaN in V reaches its column of every row that reads its key.
  for (const RowSemantics& sem : {zero, once, nan_rows, guarded}) {
    c = Case{};
    c.name = "NaN in a float mask (all, some, beside fills)";
    c.form = Form::FloatDeadRows;
    c.causal = false;
    c.sem = sem;
    c.poison = Poison::Mask;
    cs.push_back(c);
  }
  // f16 and bf16 run the tensor-core kernel on the emulation.
  for (attnopt_dtype t : {ATTNOPT_F32, ATTNOPT_F16, ATTNOPT_BF16}) {
    auto add = [&](const std::string& name, Form form, bool causal, const RowSemantics& sem, Poison poison) {
      Case x;
      x.dtype = t;
      x.name = name + " " + dtype_name(t);
      x.form = form;
      x.causal = causal;
      x.sem = sem;
      x.poison = poison;
      cs.push_back(x);
    };
    add("float dead rows, causal (no NaN)", Form::FloatDeadRows, true, nan_rows, Poison::None);
    add("NaN in a float mask, causal", Form::FloatDeadRows, true, nan_rows, Poison::Mask);
    add("NaN in Q, causal padding", Form::BoolPadding, true, zero, Poison::Q);
    add("NaN in K, causal padding (rows before key 20 do not read it)", Form::BoolPadding, true, zero, Poison::K);
    add("NaN in V, no mask", Form::None, false, zero, Poison::V);
  }
  return cs;
}

// common/band.h's range and tile tests against its own admits(i, j), by
// brute force: every query range, key range and key count of a small band,
// causal or not, with and without a window, Nq above, at and below Nk.
void band_table() {
  int checked = 0;
  for (int causal = 0; causal < 2; ++causal)
    for (int64_t offset = -6; offset <= 6; ++offset)
      for (int64_t window = 0; window <= (causal ? 7 : 0); ++window) {
        const attnopt::Band band{causal != 0, offset, window};
        for (int64_t nk = 0; nk <= 9; ++nk)
          for (int64_t q_lo = 0; q_lo < 8; ++q_lo)
            for (int64_t q_hi = q_lo; q_hi < 8; ++q_hi) {
              int64_t lo = 0, hi = 0, first = -1, last = -1;
              band.key_range(q_lo, q_hi, nk, &lo, &hi);
              for (int64_t i = q_lo; i <= q_hi; ++i)
                for (int64_t j = 0; j < nk; ++j)
                  if (band.admits(i, j)) {
                    first = first < 0 || j < first ? j : first;
                    last = j > last ? j : last;
                  }
              // The range holds every admitted key and starts and ends on one.
              const bool tight = first < 0 ? lo == hi : lo == first && hi == last + 1;
              EXPECT_TRUE(tight, "band causal %d offset %lld window %lld nk %lld rows [%lld, %lld]: key_range [%lld, %lld), admitted [%lld, %lld]",
                          causal, (long long)offset, (long long)window, (long long)nk, (long long)q_lo, (long long)q_hi,
                          (long long)lo, (long long)hi, (long long)first, (long long)last);
              for (int64_t k_lo = 0; k_lo < 9; ++k_lo)
                for (int64_t k_hi = k_lo; k_hi < 9; ++k_hi) {
                  bool all = true, none = true;
                  for (int64_t i = q_lo; i <= q_hi; ++i)
                    for (int64_t j = k_lo; j <= k_hi; ++j) {
                      all &= band.admits(i, j);
                      none &= !band.admits(i, j);
                    }
                  EXPECT_TRUE(band.covers(q_lo, q_hi, k_lo, k_hi) == all && band.misses(q_lo, q_hi, k_lo, k_hi) == none,
                              "band causal %d offset %lld window %lld rows [%lld, %lld] keys [%lld, %lld]: covers %d misses %d, want %d %d",
                              causal, (long long)offset, (long long)window, (long long)q_lo, (long long)q_hi, (long long)k_lo,
                              (long long)k_hi, band.covers(q_lo, q_hi, k_lo, k_hi), band.misses(q_lo, q_hi, k_lo, k_hi), all, none);
                  ++checked;
                }
            }
      }
  std::printf("band: %d range and tile checks against admits\n", checked);
}

}  // namespace

int main() {
  band_table();
  // The row pass is one kernel whatever the attention kernel before it: sm_80
  // runs it after the tensor-core kernel (f16/bf16) and the SIMT one (f32).
  const Backend backends[] = {{"cpu", attnopt_cpu_flash_attention_fwd, 0}, {"cuda-emu (sm_80)", cuda_fwd, 8}};
  for (const Backend& be : backends) {
    if (be.cc) attnopt_emu::set_device(be.cc, be.cc >= 8 ? 99 * 1024 : 96 * 1024);
    for (const Case& c : cases()) run(c, be);
  }
  if (g_failures) std::fprintf(stderr, "%d failure(s)\n", g_failures);
  return g_failures ? 1 : 0;
}
