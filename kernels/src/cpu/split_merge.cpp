#include "cpu/split_merge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnopt {

void merge_splits(const CoreProblem& p, const ChunkRows& rows, const PartialRows* parts, int64_t splits) {
  const int64_t nq = rows.queries.count, dv = p.dv;
  std::vector<float> out(dv);
  for (int64_t i = 0; i < rows.count(); ++i) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t s = 0; s < splits; ++s)
      if (parts[s].l[i] > 0.0f && parts[s].m[i] > m) m = parts[s].m[i];
    float l = 0.0f;
    std::fill(out.begin(), out.end(), 0.0f);
    for (int64_t s = 0; s < splits; ++s) {
      if (std::isnan(parts[s].l[i])) l = parts[s].l[i];  // a NaN score: the row is NaN (docs/ops.md "NaN")
      if (!(parts[s].l[i] > 0.0f)) continue;  // no key of this split admitted
      const float f = std::exp2(parts[s].m[i] - m);
      l += parts[s].l[i] * f;
      const float* o = parts[s].o + i * dv;
      for (int64_t d = 0; d < dv; ++d) out[d] += o[d] * f;
    }
    const float inv = l > 0.0f ? 1.0f / l : l == 0.0f ? 0.0f : l;  // NaN l: NaN
    for (int64_t d = 0; d < dv; ++d) out[d] *= inv;
    const int64_t h = rows.hq + i / nq;
    store_row(p.dtype, p.o, rows.b * p.os[0] + h * p.os[1] + rows.queries.at(i % nq) * p.os[2], dv, p.os[3],
              out.data());
  }
}

}  // namespace attnopt
