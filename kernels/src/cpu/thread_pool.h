// Fork-join parallel loop over independent work items on a persistent pool
// of std::threads (started on first use, reused by every later call).
#ifndef ATTNOPT_CPU_THREAD_POOL_H_
#define ATTNOPT_CPU_THREAD_POOL_H_

#include <cstdint>
#include <functional>

namespace attnopt {

// Worker count: attnopt_cpu_set_num_threads, else ATTNOPT_NUM_THREADS, else
// std::thread::hardware_concurrency() (those two read once, at first use).
int cpu_num_threads();

// Runs fn(item, worker) for every item in [0, items). Each worker pulls items
// from a shared counter, so uneven items (causal rows, border windows) balance.
// worker is in [0, workers) and lets callers keep per-thread scratch. The
// caller is worker 0; when the pool is busy with another call (concurrent or
// nested), all items run on the caller.
void parallel_for(int64_t items, const std::function<void(int64_t item, int worker)>& fn,
                  const std::function<void(int workers)>& before = nullptr);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_THREAD_POOL_H_
