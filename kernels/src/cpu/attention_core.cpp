#include "cpu/attention_core.h"

#include <atomic>
#include <cstring>
#include <limits>
#include <memory>

#include "common/numeric.h"
#include "cpu/cpu_isa.h"

namespace attnopt {

// Packed key tiles are kept per thread up to this size; above it (very long
// keys with wide heads) each chunk packs its tiles again.
constexpr int64_t kDefaultPackedBudget = int64_t{16} << 20;  // floats: 64 MiB
static std::atomic<int64_t> g_packed_budget{kDefaultPackedBudget};

void cpu_set_packed_budget(int64_t floats) { g_packed_budget.store(floats > 0 ? floats : kDefaultPackedBudget); }
int64_t cpu_packed_budget() { return g_packed_budget.load(std::memory_order_relaxed); }

int64_t packed_key_floats(const CoreProblem& p, int64_t nkeys) {
  return (nkeys + kCpuBlockK - 1) / kCpuBlockK * cpu_tile_kernels().tile_floats(p.dqk, p.dv);
}

void pack_key_tiles(const CoreProblem& p, int64_t b, int64_t hkv, TokenSpan keys, int64_t t0, int64_t t1,
                    float* dst) {
  cpu_tile_kernels().pack_tiles(p, b, hkv, keys, t0, t1, dst);
}

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

// The tile scratch of the calling thread: kept across calls (it is small,
// at most about 0.5 MiB for head dims of 256), so a call allocates nothing
// for it; grown, never zeroed (every chunk initialises what it reads).
static float* thread_scratch(int64_t floats) {
  thread_local std::unique_ptr<float[]> buf;
  thread_local int64_t size = 0;
  if (size < floats) {
    buf.reset(new float[floats]);
    size = floats;
  }
  return buf.get();
}

// The mask bits of rows' queries (bool mask, no head axis), computed when
// scratch holds another chunk's.
static const uint64_t* chunk_mask_bits(const CoreProblem& p, const ChunkRows& rows, TokenSpan keys, CoreScratch& sc) {
  const int64_t need = rows.queries.count * ((keys.count + kCpuBlockK - 1) / kCpuBlockK);
  if (sc.bits_b == rows.b && sc.bits_q0 == rows.queries.first && sc.bits_count == rows.queries.count &&
      sc.bits_size >= need)
    return sc.bits.get();
  if (sc.bits_size < need) {
    sc.bits.reset(new uint64_t[need]);
    sc.bits_size = need;
  }
  cpu_tile_kernels().mask_bits(p, rows, keys, sc.bits.get());
  sc.bits_b = rows.b;
  sc.bits_q0 = rows.queries.first;
  sc.bits_count = rows.queries.count;
  return sc.bits.get();
}

void attend_block(const CoreProblem& p, const ChunkRows& rows, TokenSpan keys, const ChunkOptions& o, CoreScratch& sc) {
  const TileKernels& k = cpu_tile_kernels();
  float* buf = thread_scratch(k.scratch_floats(p.dqk, p.dv));
  const uint64_t* bits = o.reuse_mask_bits ? chunk_mask_bits(p, rows, keys, sc) : nullptr;
  if (o.prepacked) {  // read only: every tile is there, so the chunk packs none
    int64_t all = (keys.count + kCpuBlockK - 1) / kCpuBlockK;
    k.attend_chunk(p, rows, keys, buf, const_cast<float*>(o.prepacked), &all, bits, o.partial);
    return;
  }
  const int64_t tiles = (keys.count + kCpuBlockK - 1) / kCpuBlockK;
  const int64_t packed = tiles * k.tile_floats(p.dqk, p.dv) + 16;
  if (!o.reuse_keys || packed > g_packed_budget.load(std::memory_order_relaxed)) {
    k.attend_chunk(p, rows, keys, buf, nullptr, nullptr, bits, o.partial);
    return;
  }
  if (sc.key_b != rows.b || sc.key_h != rows.hkv || sc.key_idx != keys.idx || sc.key_first != keys.first ||
      sc.key_count != keys.count || sc.packed_size < packed) {
    if (sc.packed_size < packed) {
      sc.packed.reset(new float[packed]);  // not zeroed: tiles are packed before they are read
      sc.packed_size = packed;
    }
    sc.packed_tiles = 0;
    sc.key_b = rows.b;
    sc.key_h = rows.hkv;
    sc.key_idx = keys.idx;
    sc.key_first = keys.first;
    sc.key_count = keys.count;
  }
  k.attend_chunk(p, rows, keys, buf, sc.packed.get(), &sc.packed_tiles, bits, o.partial);
}

}  // namespace attnopt
