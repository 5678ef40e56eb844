// Split-K: the key splits of a chunk's rows, each a partial result (sum of
// p * v, running max m in log2 units, sum of p), combined into the output
// rows by log-sum-exp, as FlashDecoding does.
#ifndef ATTNOPT_CPU_SPLIT_MERGE_H_
#define ATTNOPT_CPU_SPLIT_MERGE_H_

#include <cstdint>

#include "cpu/attention_core.h"

namespace attnopt {

// Writes the output rows of `rows` from parts[0 .. splits). A row no split
// admitted a key for (l == 0 everywhere) gets zeros, as in one pass.
void merge_splits(const CoreProblem& p, const ChunkRows& rows, const PartialRows* parts, int64_t splits);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_SPLIT_MERGE_H_
