// CPU WindowAttention: tokens are grouped by window once (an O(N) index, no
// N x N buffer), then work items are (batch, head, window, block of queries),
// each attending to all members of its window with the shared core.
#include <algorithm>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/window_geometry.h"
#include "cpu/attention_core.h"
#include "cpu/thread_pool.h"

extern "C" int attnopt_cpu_window_attention_fwd(const attnopt_window_params* p) {
  using namespace attnopt;
  const int status = attnopt_window_params_check(p);
  if (status != ATTNOPT_OK) return status;
  WindowGeometry g;
  make_window_geometry(p->ndim, p->grid, p->window, p->shift, &g);

  // members[start[w] .. start[w+1]) are the tokens of window w. The check
  // made the geometry overflow-free; every member is still checked to be a
  // token below len seen once, and the windows to cover all len tokens, so
  // no geometry can read or write past the operands or leave a row unwritten.
  const int64_t nwin = g.num_windows();
  std::vector<int64_t> start(nwin + 1, 0), members(p->len);
  std::vector<bool> seen(p->len, false);
  struct Block { int64_t window, first; };
  std::vector<Block> blocks;
  int64_t largest = 0;
  for (int64_t w = 0; w < nwin; ++w) {
    const int64_t size = g.window_size(w);
    if (size < 1 || size > p->len - start[w]) return ATTNOPT_ERR_INVALID_ARGUMENT;
    largest = std::max(largest, size);
    start[w + 1] = start[w] + size;
    for (int64_t i = 0; i < size; ++i) {
      const int64_t t = g.member_token(w, i);
      if (t < 0 || t >= p->len || seen[t]) return ATTNOPT_ERR_INVALID_ARGUMENT;
      seen[t] = true;
      members[start[w] + i] = t;
    }
    for (int64_t i = 0; i < size; i += kCpuBlockQ) blocks.push_back({w, i});
  }
  if (start[nwin] != p->len || blocks.empty()) return ATTNOPT_ERR_INVALID_ARGUMENT;

  CoreProblem c{};
  c.dtype = p->dtype;
  c.q = {p->q.data, {p->q.stride[0], p->q.stride[1], p->q.stride[2], p->q.stride[3]}};
  c.k = {p->k.data, {p->k.stride[0], p->k.stride[1], p->k.stride[2], p->k.stride[3]}};
  c.v = {p->v.data, {p->v.stride[0], p->v.stride[1], p->v.stride[2], p->v.stride[3]}};
  c.o = p->o;
  for (int i = 0; i < 4; ++i) c.os[i] = p->o_stride[i];
  c.dqk = p->dim_qk;
  c.dv = p->dim_v;
  c.scale = p->scale;
  c.mask_type = ATTNOPT_MASK_NONE;

  const int64_t nblocks = static_cast<int64_t>(blocks.size());
  // Only a window of several query blocks has chunks sharing its keys.
  const bool reuse_keys = largest > kCpuBlockQ;
  const int64_t group = p->heads_q / p->heads_kv;
  std::vector<CoreScratch> scratch;
  parallel_for(
      p->batch * p->heads_q * nblocks,
      [&](int64_t item, int worker) {
        const Block& blk = blocks[item % nblocks];
        const int64_t h = (item / nblocks) % p->heads_q;
        const int64_t b = item / (nblocks * p->heads_q);
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
