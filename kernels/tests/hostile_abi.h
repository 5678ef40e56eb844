// Hostile parameters for the C ABI (issue 24), one table for every entry
// point: test_cpu runs it against the CPU calls, test_cuda_emu against the
// CUDA ones on the emulation, so both refuse the same inputs. Tensors are
// heap buffers of their true size, so ASan sees any access past them; a
// case is refused with ATTNOPT_ERR_INVALID_ARGUMENT or matches the float64
// reference, with every output element written (outputs start as NaN).
#ifndef ATTNOPT_TESTS_HOSTILE_ABI_H_
#define ATTNOPT_TESTS_HOSTILE_ABI_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reference.h"
#include "test_util.h"

namespace attnopt_test {

using FlashCall = std::function<int(const attnopt_flash_params*)>;
using WindowCall = std::function<int(const attnopt_window_params*)>;

namespace hostile_abi {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Contiguous f32 (B, H, N, D) tensors of one FlashAttention call.
struct FlashData {
  int64_t B, Hq, Hkv, Nq, Nk, D, Dv;
  Tensor q, k, v, o;
  attnopt_flash_params p{};

  FlashData(int64_t b, int64_t hq, int64_t hkv, int64_t nq, int64_t nk, int64_t d, int64_t dv)
      : B(b), Hq(hq), Hkv(hkv), Nq(nq), Nk(nk), D(d), Dv(dv) {
    std::mt19937 rng(static_cast<unsigned>(nq * 7 + nk));
    q = make_tensor(ATTNOPT_F32, B * Hq * Nq * D, rng, -2.f, 2.f);
    k = make_tensor(ATTNOPT_F32, B * Hkv * Nk * D, rng, -2.f, 2.f);
    v = make_tensor(ATTNOPT_F32, B * Hkv * Nk * Dv, rng);
    o = make_poisoned(ATTNOPT_F32, B * Hq * Nq * Dv);
    p.dtype = ATTNOPT_F32;
    p.batch = B; p.heads_q = Hq; p.heads_kv = Hkv; p.len_q = Nq; p.len_k = Nk; p.dim_qk = D; p.dim_v = Dv;
    p.q.data = q.f32.data(); contiguous_strides(Hq, Nq, D, p.q.stride);
    p.k.data = k.f32.data(); contiguous_strides(Hkv, Nk, D, p.k.stride);
    p.v.data = v.f32.data(); contiguous_strides(Hkv, Nk, Dv, p.v.stride);
    p.o = o.f32.data(); contiguous_strides(Hq, Nq, Dv, p.o_stride);
    p.scale = 0.4f;
  }

  std::vector<double> reference(const Admit& admit) const {
    auto get = [](const Tensor& t, int64_t h, int64_t n, int64_t d) {
      const double* x = t.value.data();
      return [=](int64_t b, int64_t hh, int64_t i, int64_t e) { return x[((b * h + hh) * n + i) * d + e]; };
    };
    return reference_attention({B, Hq, Hkv, Nq, Nk, D, Dv}, get(q, Hq, Nq, D), get(k, Hkv, Nk, D), get(v, Hkv, Nk, Dv),
                               p.scale, nullptr, admit, p.softcap);
  }
};

// FlashData as WindowAttention's operands: N tokens over grid.
struct WindowData {
  FlashData t;
  attnopt_window_params p{};

  WindowData(int64_t n, std::vector<int64_t> grid, std::vector<int64_t> win, std::vector<int64_t> shift)
      : t(1, 2, 2, n, n, 8, 8) {
    p.dtype = ATTNOPT_F32;
    p.batch = 1; p.heads_q = p.heads_kv = 2; p.len = n; p.dim_qk = p.dim_v = 8;
    p.q = t.p.q; p.k = t.p.k; p.v = t.p.v; p.o = t.p.o;
    for (int a = 0; a < 4; ++a) p.o_stride[a] = t.p.o_stride[a];
    p.ndim = static_cast<int>(grid.size());
    for (int a = 0; a < p.ndim && a < 3; ++a) {
      p.grid[a] = grid[a];
      p.window[a] = win[a];
      p.shift[a] = shift[a];
    }
    p.scale = t.p.scale;
  }
};

inline void expect_refused(const char* where, const std::string& name, int rc, const Tensor& o) {
  size_t touched = 0;
  for (float x : o.f32) touched += !std::isnan(x);
  std::printf("%-12s %-60s status %d (%s)\n", where, name.c_str(), rc, attnopt_status_string(rc));
  EXPECT_TRUE(rc == ATTNOPT_ERR_INVALID_ARGUMENT, "%s %s: status %d, want invalid argument", where, name.c_str(), rc);
  EXPECT_TRUE(touched == 0, "%s %s: refused but wrote %zu output elements", where, name.c_str(), touched);
}

inline void expect_reference(const char* where, const std::string& name, int rc, const Tensor& o,
                             const std::vector<double>& ref, double tol) {
  const double err = rel_l2(o, ref);  // +inf when an element was left NaN
  double worst = 0;
  for (size_t e = 0; e < ref.size(); ++e) worst = std::max(worst, std::fabs(o.get(e) - ref[e]));
  std::printf("%-12s %-60s status %d, rel L2 %.2e, max |err| %.2e\n", where, name.c_str(), rc, err, worst);
  EXPECT_TRUE(rc == ATTNOPT_OK, "%s %s: status %d", where, name.c_str(), rc);
  EXPECT_TRUE(err <= tol, "%s %s: rel L2 error %.3e (max %.3e)", where, name.c_str(), err, worst);
}

// An int a C caller may store in an enum field (no C++ enum value of it).
template <typename E>
void store_int(E* field, int v) {
  static_assert(sizeof(E) == sizeof(int), "int-sized enum");
  std::memcpy(field, &v, sizeof v);
}

inline Admit causal_window(int64_t nq, int64_t nk, int64_t w) {
  const int64_t off = nk - nq;
  return [off, w](int64_t i, int64_t j) {
    return j <= i + off && (w <= 0 || static_cast<long double>(j) > static_cast<long double>(i + off) - w);
  };
}

}  // namespace hostile_abi

// Runs every case through flash and window (the entry points under test);
// tol is the entry points' f32 tolerance.
inline void run_hostile_abi(const char* where, const FlashCall& flash, const WindowCall& window, double tol) {
  using namespace hostile_abi;
  // Windows near INT64_MAX with Nq > Nk: the CPU tile bound overflowed and
  // zeroed rows that have keys.
  for (auto [nq, nk, w] : {std::tuple<int64_t, int64_t, int64_t>{101, 70, kMax}, {133, 70, kMax},
                           {102, 70, kMax - 1}, {20, 45, kMax}, {130, 67, 68}, {90, 70, 5}}) {
    FlashData d(1, 2, 1, nq, nk, 8, 8);
    d.p.causal = 1;
    d.p.window = w;
    const int rc = flash(&d.p);
    expect_reference(where, "flash causal window " + std::to_string(w) + ", Nq " + std::to_string(nq) + ", Nk " +
                                std::to_string(nk),
                     rc, d.o, d.reference(causal_window(nq, nk, w)), tol);
  }
  // The same windows with rows that see no key handled literally (issue 34):
  // the empty-row pass read the caller's window, overflowed on INT64_MAX and
  // read the mask at a wild address (ASan) or looped from near -2^63. Rows
  // above the first key get zeros (literal, zero when all -inf), as in the
  // reference; an all-true bool mask (broadcast over heads) changes nothing.
  for (auto [nq, nk, w] : {std::tuple<int64_t, int64_t, int64_t>{101, 70, kMax}, {133, 70, kMax},
                           {102, 70, kMax - 1}, {20, 45, kMax}})
    for (bool masked : {false, true}) {
      FlashData d(1, 2, 1, nq, nk, 8, 8);
      d.p.causal = 1;
      d.p.window = w;
      d.p.empty_rows = ATTNOPT_EMPTY_LITERAL_ZERO;
      d.p.causal_fill = -INFINITY;
      d.p.mask_fill = -INFINITY;
      std::vector<uint8_t> mask(static_cast<size_t>(nq * nk), 1);
      if (masked) {
        d.p.mask_type = ATTNOPT_MASK_BOOL;
        d.p.mask = mask.data();
        const int64_t ms[4] = {0, 0, nk, 1};
        std::memcpy(d.p.mask_stride, ms, sizeof ms);
      }
      const int rc = flash(&d.p);
      expect_reference(where,
                       "flash causal window " + std::to_string(w) + ", Nq " + std::to_string(nq) + ", Nk " +
                           std::to_string(nk) + ", empty rows literal" + (masked ? ", bool mask" : ""),
                       rc, d.o, d.reference(causal_window(nq, nk, w)), tol);
    }
  // Caps far above the scores (issue 34): the CPU tiles' tanh cancelled (0.99
  // rel L2 from 1e10, NaN at FLT_MAX, where log2(e) c overflowed).
  for (float cap : {1e10f, std::numeric_limits<float>::max()}) {
    FlashData d(1, 2, 1, 20, 33, 8, 8);
    d.p.softcap = cap;
    d.p.causal = 1;
    expect_reference(where, "flash softcap " + std::to_string(cap).substr(0, 12) + ", causal", flash(&d.p), d.o,
                     d.reference(causal_window(20, 33, 0)), tol);
  }
  {
    FlashData d(1, 2, 2, 0, 9, 8, 8);  // no queries: an empty output, nothing to do
    EXPECT_TRUE(flash(&d.p) == ATTNOPT_OK, "%s flash Nq 0: status", where);
  }
  // Flash parameters whose sizes or strides cannot be addressed, or whose
  // values mean nothing: refused before any access.
  const std::vector<std::pair<std::string, std::function<void(attnopt_flash_params&)>>> bad_flash = {
      {"flash scale 0", [](attnopt_flash_params& p) { p.scale = 0.0f; }},
      {"flash scale -1", [](attnopt_flash_params& p) { p.scale = -1.0f; }},
      {"flash scale NaN", [](attnopt_flash_params& p) { p.scale = std::nanf(""); }},
      {"flash scale inf", [](attnopt_flash_params& p) { p.scale = INFINITY; }},
      {"flash softcap -1", [](attnopt_flash_params& p) { p.softcap = -1.0f; }},
      {"flash softcap NaN", [](attnopt_flash_params& p) { p.softcap = std::nanf(""); }},
      {"flash softcap inf", [](attnopt_flash_params& p) { p.softcap = INFINITY; }},
      {"flash window -1 (causal)", [](attnopt_flash_params& p) { p.causal = 1; p.window = -1; }},
      {"flash window 3 without causal", [](attnopt_flash_params& p) { p.window = 3; }},
      {"flash Q batch stride 2^62, batch 3 (offset 2^63)",
       [](attnopt_flash_params& p) { p.batch = 3; p.q.stride[0] = kMax / 2 + 1; }},
      {"flash K stride INT64_MIN", [](attnopt_flash_params& p) { p.k.stride[2] = kMin; }},
      {"flash output strides past INT64_MAX", [](attnopt_flash_params& p) { p.o_stride[2] = kMax / 4; }},
      {"flash Nq + Nk past INT64_MAX", [](attnopt_flash_params& p) { p.len_q = kMax - 3; p.len_k = 9; }},
      {"flash Nq INT64_MAX / 8 (Q and output bytes)", [](attnopt_flash_params& p) { p.len_q = kMax / 8; }},
      {"flash batch x heads past INT64_MAX",
       [](attnopt_flash_params& p) { p.batch = int64_t{1} << 40; p.heads_q = p.heads_kv = int64_t{1} << 40; }},
      {"flash mask strides past INT64_MAX", [](attnopt_flash_params& p) {
         static const uint8_t m[64] = {};
         p.mask_type = ATTNOPT_MASK_BOOL;
         p.mask = m;
         p.mask_stride[2] = kMax / 2;
         p.mask_stride[3] = 1;
       }},
      {"flash mask type 9", [](attnopt_flash_params& p) { store_int(&p.mask_type, 9); }},
      {"flash dtype 7", [](attnopt_flash_params& p) { store_int(&p.dtype, 7); }},
  };
  for (const auto& [name, edit] : bad_flash) {
    FlashData d(1, 2, 2, 8, 9, 8, 8);
    edit(d.p);
    const int rc = flash(&d.p);
    expect_refused(where, name, rc, d.o);
  }
  // The geometries: products that wrap to the token count.
  const std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>> bad_win = {
      {"window grid [3689348814741910324, 5] (wraps to 4), shift 1000", {3689348814741910324, 5}, {1, 1}, {1000, 0}},
      {"window grid [2^63-1, 2^63-1, 4] (wraps to 4, no window)", {kMax, kMax, 4}, {2, 1, 1}, {0, 0, 0}},
      {"window grid [2^32, 2^32, 4] (wraps to 0)", {int64_t{1} << 32, int64_t{1} << 32, 4}, {1, 1, 1}, {0, 0, 0}},
      {"window grid [2, 2] for 5 tokens", {2, 2}, {1, 1}, {0, 0}},
      {"window 0", {2, 2}, {0, 2}, {0, 0}},
      {"window grid [-2, -2] (product 4)", {-2, -2}, {1, 1}, {0, 0}},
      {"window 0 axes", {}, {}, {}},
  };
  for (const auto& [name, grid, win, shift] : bad_win) {
    WindowData d(4, grid, win, shift);
    if (name.find("5 tokens") != std::string::npos) d.p.len = 5;
    const int rc = window(&d.p);
    expect_refused(where, name, rc, d.t.o);
  }
  {
    WindowData d(4, {2, 2}, {2, 2}, {0, 0});
    d.p.ndim = 4;
    expect_refused(where, "window 4 axes", window(&d.p), d.t.o);
  }
  {
    WindowData d(4, {2, 2}, {2, 2}, {0, 0});
    d.p.scale = -0.5f;
    expect_refused(where, "window scale -0.5", window(&d.p), d.t.o);
  }
  // Extreme but valid geometries: the reference's result.
  const std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>> ok_win = {
      {"window shift [INT64_MIN, INT64_MAX] on 6x10", {6, 10}, {4, 4}, {kMin, kMax}},
      {"window [INT64_MAX, 3] on 6x10", {6, 10}, {kMax, 3}, {1, 2}},
      {"window [INT64_MAX, INT64_MAX] on 6x10 (exact)", {6, 10}, {kMax, kMax}, {0, 0}},
      {"window shift [-7, 13] on 5x6x7 (negative, past the grid)", {5, 6, 7}, {2, 4, 3}, {-7, 13, 0}},
  };
  for (const auto& [name, grid, win, shift] : ok_win) {
    int64_t n = 1;
    for (int64_t g : grid) n *= g;
    WindowData d(n, grid, win, shift);
    const int rc = window(&d.p);
    expect_reference(where, name, rc, d.t.o, d.t.reference(window_admit(grid, win, shift)), tol);
  }
}

}  // namespace attnopt_test

#endif  // ATTNOPT_TESTS_HOSTILE_ABI_H_
