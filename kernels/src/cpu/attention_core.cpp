#include "cpu/attention_core.h"

#include <atomic>
#include <cstring>
#include <limits>

#include "common/numeric.h"
#include "cpu/cpu_isa.h"

namespace attnopt {

// Packed key tiles are kept per thread up to this size; above it (very long
// keys with wide heads) each chunk packs its tiles again.
constexpr int64_t kDefaultPackedBudget = int64_t{16} << 20;  // floats: 64 MiB
static std::atomic<int64_t> g_packed_budget{kDefaultPackedBudget};

void cpu_set_packed_budget(int64_t floats) { g_packed_budget.store(floats > 0 ? floats : kDefaultPackedBudget); }

void load_row(attnopt_dtype t, const void* base, int64_t off, int64_t n, int64_t sd, float* dst) {
  switch (t) {
    case ATTNOPT_F32: {
      const float* src = static_cast<const float*>(base) + off;
      if (sd == 1) {
        std::memcpy(dst, src, sizeof(float) * n);
      } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i * sd];
      }
      break;
    }
    case ATTNOPT_F16: {
      const uint16_t* src = static_cast<const uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i] = half_to_float(src[i * sd]);
      break;
    }
    case ATTNOPT_BF16: {
      const uint16_t* src = static_cast<const uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i * sd]);
      break;
    }
  }
}

void store_row(attnopt_dtype t, void* base, int64_t off, int64_t n, int64_t sd, const float* src) {
  switch (t) {
    case ATTNOPT_F32: {
      float* dst = static_cast<float*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i * sd] = src[i];
      break;
    }
    case ATTNOPT_F16: {
      uint16_t* dst = static_cast<uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i * sd] = float_to_half(src[i]);
      break;
    }
    case ATTNOPT_BF16: {
      uint16_t* dst = static_cast<uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i * sd] = float_to_bf16(src[i]);
      break;
    }
  }
}

void load_mask_row(attnopt_mask_type t, const void* mask, int64_t off, int64_t n, int64_t sd, float* dst) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = off + i * sd;
    switch (t) {
      case ATTNOPT_MASK_BOOL: dst[i] = static_cast<const uint8_t*>(mask)[at] ? 0.0f : kNegInf; break;
      case ATTNOPT_MASK_F32: dst[i] = static_cast<const float*>(mask)[at]; break;
      case ATTNOPT_MASK_F16: dst[i] = half_to_float(static_cast<const uint16_t*>(mask)[at]); break;
      case ATTNOPT_MASK_BF16: dst[i] = bf16_to_float(static_cast<const uint16_t*>(mask)[at]); break;
      default: dst[i] = 0.0f;
    }
  }
}

void attend_block(const CoreProblem& p, int64_t b, int64_t hq, int64_t hkv, TokenSpan queries,
                  TokenSpan keys, CoreScratch& sc) {
  const TileKernels& k = cpu_tile_kernels();
  const size_t need = static_cast<size_t>(k.scratch_floats(p.dqk, p.dv));
  if (sc.buf.size() < need) sc.buf.resize(need);
  const int64_t tiles = (keys.count + kCpuBlockK - 1) / kCpuBlockK;
  const int64_t packed = tiles * k.tile_floats(p.dqk, p.dv) + 16;
  if (packed > g_packed_budget.load(std::memory_order_relaxed)) {
    k.attend_chunk(p, b, hq, hkv, queries, keys, sc.buf.data(), nullptr, nullptr);
    return;
  }
  if (sc.key_b != b || sc.key_h != hkv || sc.key_idx != keys.idx || sc.key_first != keys.first ||
      sc.key_count != keys.count || sc.packed.size() < static_cast<size_t>(packed)) {
    if (sc.packed.size() < static_cast<size_t>(packed)) sc.packed.resize(packed);
    sc.packed_tiles = 0;
    sc.key_b = b;
    sc.key_h = hkv;
    sc.key_idx = keys.idx;
    sc.key_first = keys.first;
    sc.key_count = keys.count;
  }
  k.attend_chunk(p, b, hq, hkv, queries, keys, sc.buf.data(), sc.packed.data(), &sc.packed_tiles);
}

}  // namespace attnopt
