// CPU WindowAttention: tokens are grouped by window once (an O(N) index, no
// N x N buffer), then work items are (batch, head, window, block of queries),
// each attending to all members of its window with the shared core.
#include <algorithm>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/params.h"
#include "common/window_geometry.h"
#include "cpu/attention_core.h"
#include "cpu/thread_pool.h"

extern "C" int attnopt_cpu_window_attention_fwd_v2(const attnopt_window_params_v2* p) {
  using namespace attnopt;
  const int status = attnopt_window_params_check_v2(p);
  if (status != ATTNOPT_OK) return status;
  WindowGeometry g;
  make_window_geometry(p->ndim, p->grid, p->window, p->shift, &g);

  // members[start[w] .. start[w+1]) are the tokens of window w. The check
  // made the geometry overflow-free; every member is still checked to be a
  // token below len seen once, and the windows to cover all len tokens, so
  // no geometry can read or write past the operands or leave a row unwritten.
  const int64_t nwin = g.num_windows();
  std::vector<int64_t> start(nwin + 1, 0), members(p->qkv.len_q);
  std::vector<bool> seen(p->qkv.len_q, false);
  struct Block { int64_t window, first; };
  std::vector<Block> blocks;
  int64_t largest = 0;
  for (int64_t w = 0; w < nwin; ++w) {
    const int64_t size = g.window_size(w);
    if (size < 1 || size > p->qkv.len_q - start[w]) return ATTNOPT_ERR_INVALID_ARGUMENT;
    largest = std::max(largest, size);
    start[w + 1] = start[w] + size;
    for (int64_t i = 0; i < size; ++i) {
      const int64_t t = g.member_token(w, i);
      if (t < 0 || t >= p->qkv.len_q || seen[t]) return ATTNOPT_ERR_INVALID_ARGUMENT;
      seen[t] = true;
      members[start[w] + i] = t;
    }
    for (int64_t i = 0; i < size; i += kCpuBlockQ) blocks.push_back({w, i});
  }
  if (start[nwin] != p->qkv.len_q || blocks.empty()) return ATTNOPT_ERR_INVALID_ARGUMENT;

  const CoreProblem c = core_of(p->qkv, p->scale);

  const int64_t nblocks = static_cast<int64_t>(blocks.size());
  // Only a window of several query blocks has chunks sharing its keys.
  const bool reuse_keys = largest > kCpuBlockQ;
  const int64_t group = p->qkv.heads_q / p->qkv.heads_kv;
  std::vector<CoreScratch> scratch;
  parallel_for(
      p->qkv.batch * p->qkv.heads_q * nblocks,
      [&](int64_t item, int worker) {
        const Block& blk = blocks[item % nblocks];
        const int64_t h = (item / nblocks) % p->qkv.heads_q;
        const int64_t b = item / (nblocks * p->qkv.heads_q);
        const int64_t* win = members.data() + start[blk.window];
        const int64_t size = start[blk.window + 1] - start[blk.window];
        const TokenSpan queries{win + blk.first, 0, std::min(kCpuBlockQ, size - blk.first)};
        const TokenSpan keys{win, 0, size};
        ChunkOptions o;
        o.reuse_keys = reuse_keys;
        attend_block(c, ChunkRows{b, h, 1, h / group, queries}, keys, o, scratch[worker]);
      },
      [&](int workers) { scratch.resize(workers); });
  return ATTNOPT_OK;
}

// Version 1: converted once (common/params.h), then the same call.
extern "C" int attnopt_cpu_window_attention_fwd(const attnopt_window_params* caller) {
  if (!caller) return ATTNOPT_ERR_INVALID_ARGUMENT;
  const attnopt_window_params_v2 p = attnopt::v2_of(*caller);
  return attnopt_cpu_window_attention_fwd_v2(&p);
}
