// CPU FlashAttention: the work split. A work item is a chunk of query rows of
// one (batch, kv head) against one split of the keys:
// - rows: up to 128 queries of one head, or, with few queries (decoding),
//   the same queries of several heads of a GQA group, so those heads read
//   their K/V once;
// - key splits (split-K, as FlashDecoding): when a call has too few chunks
//   to keep threads busy and long keys, each chunk's keys are split and the
//   partial results merged by log-sum-exp (split_merge.h).
// The split depends on the shape only, never on the thread count, so results
// are the same bits whatever the number of threads.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/checked.h"
#include "common/params.h"
#include "cpu/attention_core.h"
#include "cpu/empty_rows.h"
#include "cpu/split_merge.h"
#include "cpu/thread_pool.h"

namespace attnopt {
namespace {

// Fewer chunks than this (and long keys): split the keys.
constexpr int64_t kTargetItems = 32;
// Keys per split at least (whole tiles), so a split's fixed cost stays small.
constexpr int64_t kMinSplitKeys = 16 * kCpuBlockK;
// Calls below this many multiply-adds (Q.K and P.V) run on the calling
// thread: waking the pool costs more than the call.
constexpr int64_t kSerialWork = int64_t{1} << 18;

CoreProblem make_core(const attnopt_flash_params_v2& p) {
  CoreProblem c = core_of(p.qkv, p.scale);
  // Without a mask its strides are unchecked (callers may leave anything
  // there) and must not enter the kernels' offset arithmetic.
  const bool masked = p.mask_type != ATTNOPT_MASK_NONE;
  for (int i = 0; i < 4; ++i) c.ms[i] = masked ? p.mask_stride[i] : 0;
  c.mask_type = p.mask_type;
  c.mask = p.mask;
  c.band = attnopt::band_of(p);
  // p.window is clamped to Nk (clamped_params, common/params.h), so the tile
  // bounds cannot overflow; a window of Nk keys excludes nothing the causal
  // limit admits (query i's first key would be i + Nk - Nq - W + 1 <= 0):
  // plain causal.
  if (c.band.window >= p.qkv.len_k) c.band.window = 0;
  c.softcap = p.softcap;
  return c;
}

struct WorkSplit {
  int64_t heads;    // query heads per chunk
  int64_t hchunks;  // chunks per kv head along its group's heads
  int64_t qchunks;  // chunks along the queries
  int64_t splits;   // key splits
  int64_t split_len;
  int64_t items() const { return hchunks * qchunks * splits; }  // per (batch, kv head)
};

WorkSplit plan(const attnopt_flash_params_v2& p) {
  WorkSplit w{};
  const int64_t group = p.qkv.heads_q / p.qkv.heads_kv;
  w.heads = p.qkv.len_q * 2 <= kCpuBlockQ ? std::min(group, kCpuBlockQ / std::max<int64_t>(p.qkv.len_q, 1)) : 1;
  w.hchunks = (group + w.heads - 1) / w.heads;
  w.qchunks = w.heads > 1 ? 1 : (p.qkv.len_q + kCpuBlockQ - 1) / kCpuBlockQ;
  const int64_t chunks = p.qkv.batch * p.qkv.heads_kv * w.hchunks * w.qchunks;
  w.splits = 1;
  w.split_len = p.qkv.len_k;
  if (chunks < kTargetItems && p.qkv.len_k >= 2 * kMinSplitKeys) {
    const int64_t want = std::min((kTargetItems + chunks - 1) / chunks, p.qkv.len_k / kMinSplitKeys);
    const int64_t tiles = (p.qkv.len_k + kCpuBlockK - 1) / kCpuBlockK;
    w.split_len = (tiles + want - 1) / want * kCpuBlockK;  // whole tiles
    w.splits = (p.qkv.len_k + w.split_len - 1) / w.split_len;
  }
  return w;
}

// A work item's place: (batch, kv head) = bk, key split, head chunk, query chunk.
struct Item {
  int64_t bk, split, hc, qc;
};

// Runs fn(item, worker) on the pool, or on the calling thread for small work.
template <typename F>
void run_items(int64_t items, double work, std::vector<CoreScratch>& scratch, const F& fn) {
  if (work < kSerialWork) {
    scratch.resize(1);
    for (int64_t i = 0; i < items; ++i) fn(i, 0);
  } else {
    parallel_for(items, fn, [&](int workers) { scratch.resize(workers); });
  }
}

}  // namespace
}  // namespace attnopt

extern "C" int attnopt_cpu_flash_attention_fwd_v2(const attnopt_flash_params_v2* caller) {
  using namespace attnopt;
  const int status = attnopt_flash_params_check_v2(caller);
  if (status != ATTNOPT_OK) return status;
  const attnopt_flash_params_v2 clamped = clamped_params(*caller);  // every use below reads these
  const attnopt_flash_params_v2* p = &clamped;
  if (p->qkv.len_q == 0) return ATTNOPT_OK;
  const CoreProblem core = make_core(*p);
  const WorkSplit w = plan(*p);
  const int64_t group = p->qkv.heads_q / p->qkv.heads_kv, kv = p->qkv.batch * p->qkv.heads_kv;
  const int64_t chunks = w.hchunks * w.qchunks;  // per (batch, kv head) and key split
  const int64_t items = kv * w.splits * chunks;
  const double work = static_cast<double>(p->qkv.batch * p->qkv.heads_q) * static_cast<double>(p->qkv.len_q) *
                      static_cast<double>(p->qkv.len_k) * static_cast<double>(p->qkv.dim_qk + p->qkv.dim_v);
  // Chunks share keys (and packed tiles) when a kv head has several of them
  // per key split; each thread keeps the last kv head's tiles.
  const bool reuse_keys = chunks > 1;
  // A mask with a query axis but no head axis is the same for every head:
  // the heads of one query chunk then run one after another, so the chunk's
  // mask rows are read once, not once per head (a bool mask is turned into
  // bits, 8 times smaller, which the next heads' chunks read). That order
  // needs every kv head's tiles at once: they are packed before the chunks,
  // when they fit the budget. (Elsewhere the per-thread tiles are cheaper: a
  // fresh store of all heads costs its page faults on every call.)
  const int64_t head_floats = packed_key_floats(core, w.split_len);
  const bool can_prepack = reuse_keys && w.splits == 1 && kv * head_floats <= cpu_packed_budget();
  const bool heads_inner = can_prepack && p->mask_type != ATTNOPT_MASK_NONE && p->mask_stride[2] != 0 &&
                           p->mask_stride[1] == 0 && p->qkv.heads_q > 1;
  // Several threads on long keys would each pack (and stream from L3) their
  // own copy of the same tiles: one shared store instead, whose page faults
  // are small against such a call.
  const bool shared_long = can_prepack && cpu_num_threads() > 1 && head_floats >= (int64_t{1} << 20);
  const bool prepack = heads_inner || shared_long;
  auto item_of = [&](int64_t i) {
    Item it;
    if (heads_inner) {  // batch, query chunk, kv head, head chunk
      it.hc = i % w.hchunks;
      const int64_t hkv = i / w.hchunks % p->qkv.heads_kv;
      it.qc = i / (w.hchunks * p->qkv.heads_kv) % w.qchunks;
      it.bk = i / (chunks * p->qkv.heads_kv) * p->qkv.heads_kv + hkv;
      it.split = 0;
    } else {  // batch, kv head, key split, head chunk, query chunk
      it.qc = i % w.qchunks;
      it.hc = i / w.qchunks % w.hchunks;
      it.split = i / chunks % w.splits;
      it.bk = i / (chunks * w.splits);
    }
    return it;
  };
  auto rows_of = [&](const Item& it) {
    const int64_t hkv = it.bk % p->qkv.heads_kv, h0 = hkv * group + it.hc * w.heads, q0 = it.qc * kCpuBlockQ;
    return ChunkRows{it.bk / p->qkv.heads_kv, h0, std::min(w.heads, hkv * group + group - h0), hkv,
                     TokenSpan{nullptr, q0, std::min(kCpuBlockQ, p->qkv.len_q - q0)}};
  };
  auto keys_of = [&](const Item& it) {
    const int64_t k0 = it.split * w.split_len;
    return TokenSpan{nullptr, k0, std::min(w.split_len, p->qkv.len_k - k0)};
  };

  std::vector<CoreScratch> scratch;
  std::unique_ptr<float[]> store_mem;
  float* store = nullptr;  // kv head bk's tiles at store + bk * head_floats
  if (prepack) {
    store_mem.reset(new float[kv * head_floats + 16]);  // not zeroed: every tile is packed
    store = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(store_mem.get()) + 63) & ~uintptr_t{63});
    constexpr int64_t kTilesPerItem = 16;
    const int64_t tiles = (p->qkv.len_k + kCpuBlockK - 1) / kCpuBlockK;
    const int64_t blocks = (tiles + kTilesPerItem - 1) / kTilesPerItem;
    run_items(kv * blocks, work, scratch, [&](int64_t i, int) {
      const int64_t bk = i / blocks, t0 = i % blocks * kTilesPerItem;
      pack_key_tiles(core, bk / p->qkv.heads_kv, bk % p->qkv.heads_kv, TokenSpan{nullptr, 0, p->qkv.len_k}, t0,
                     std::min(tiles, t0 + kTilesPerItem), store + bk * head_floats);
    });
  }

  // Split-K partials: per chunk and split, rows_max rows of (Dv sums, max, sum).
  const int64_t rows_max = w.heads * std::min(p->qkv.len_q, kCpuBlockQ);
  const int64_t part_floats = rows_max * (p->qkv.dim_v + 2);
  std::unique_ptr<float[]> partials;
  if (w.splits > 1) partials.reset(new float[items * part_floats]);
  auto part_of = [&](const Item& it, int64_t split) {
    float* o = partials.get() + (((it.bk * w.hchunks + it.hc) * w.qchunks + it.qc) * w.splits + split) * part_floats;
    return PartialRows{o, o + rows_max * p->qkv.dim_v, o + rows_max * (p->qkv.dim_v + 1)};
  };

  run_items(items, work, scratch, [&](int64_t i, int worker) {
    const Item it = item_of(i);
    const PartialRows part = w.splits > 1 ? part_of(it, it.split) : PartialRows{};
    ChunkOptions o;
    o.reuse_keys = reuse_keys;
    o.prepacked = prepack ? store + it.bk * head_floats : nullptr;
    o.reuse_mask_bits = heads_inner && p->mask_type == ATTNOPT_MASK_BOOL;
    o.partial = w.splits > 1 ? &part : nullptr;
    attend_block(core, rows_of(it), keys_of(it), o, scratch[worker]);
  });

  if (w.splits > 1) {  // one merge per chunk, over its key splits
    std::vector<PartialRows> parts(w.splits);
    for (int64_t i = 0; i < items; ++i) {
      const Item it = item_of(i);
      if (it.split != 0) continue;
      for (int64_t s = 0; s < w.splits; ++s) parts[s] = part_of(it, s);
      merge_splits(core, rows_of(it), parts.data(), w.splits);
    }
  }
  fix_empty_rows(*p);  // rows that see no key, as p->empty_rows states (empty_rows.cpp)
  return ATTNOPT_OK;
}

// Version 1: converted once (common/params.h), then the same call.
extern "C" int attnopt_cpu_flash_attention_fwd(const attnopt_flash_params* caller) {
  if (!caller) return ATTNOPT_ERR_INVALID_ARGUMENT;
  const attnopt_flash_params_v2 p = attnopt::v2_of(*caller);
  return attnopt_cpu_flash_attention_fwd_v2(&p);
}
