// CPU FlashAttention: work items are (batch, query head, block of queries).
#include <algorithm>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/checked.h"
#include "common/params.h"
#include "cpu/attention_core.h"
#include "cpu/empty_rows.h"
#include "cpu/thread_pool.h"

namespace attnopt {

static CoreProblem make_core(const attnopt_flash_params& p) {
  CoreProblem c{};
  c.dtype = p.dtype;
  c.q = {p.q.data, {p.q.stride[0], p.q.stride[1], p.q.stride[2], p.q.stride[3]}};
  c.k = {p.k.data, {p.k.stride[0], p.k.stride[1], p.k.stride[2], p.k.stride[3]}};
  c.v = {p.v.data, {p.v.stride[0], p.v.stride[1], p.v.stride[2], p.v.stride[3]}};
  c.o = p.o;
  // Without a mask its strides are unchecked (callers may leave anything
  // there) and must not enter the kernels' offset arithmetic.
  const bool masked = p.mask_type != ATTNOPT_MASK_NONE;
  for (int i = 0; i < 4; ++i) {
    c.os[i] = p.o_stride[i];
    c.ms[i] = masked ? p.mask_stride[i] : 0;
  }
  c.dqk = p.dim_qk;
  c.dv = p.dim_v;
  c.scale = p.scale;
  c.mask_type = p.mask_type;
  c.mask = p.mask;
  c.causal = p.causal != 0;
  c.causal_offset = p.len_k - p.len_q;
  c.window = effective_window(p);  // clamped to Nk: the tile bounds cannot overflow
  return c;
}

}  // namespace attnopt

extern "C" int attnopt_cpu_flash_attention_fwd(const attnopt_flash_params* p) {
  using namespace attnopt;
  const int status = attnopt_flash_params_check(p);
  if (status != ATTNOPT_OK) return status;
  const CoreProblem core = make_core(*p);
  const int64_t qblocks = ceil_div(p->len_q, kCpuBlockQ);
  const int64_t group = p->heads_q / p->heads_kv;
  std::vector<CoreScratch> scratch;
  parallel_for(
      p->batch * p->heads_q * qblocks,
      [&](int64_t item, int worker) {
        const int64_t qb = item % qblocks;
        const int64_t h = (item / qblocks) % p->heads_q;
        const int64_t b = item / (qblocks * p->heads_q);
        const int64_t q0 = qb * kCpuBlockQ;
        const TokenSpan queries{nullptr, q0, std::min(kCpuBlockQ, p->len_q - q0)};
        const TokenSpan keys{nullptr, 0, p->len_k};
        attend_block(core, b, h, h / group, queries, keys, scratch[worker]);
      },
      [&](int workers) { scratch.resize(workers); });
  fix_empty_rows(*p);
  return ATTNOPT_OK;
}
