// Minimal fork-join parallel loop over independent work items on std::thread.
#ifndef ATTNOPT_CPU_THREAD_POOL_H_
#define ATTNOPT_CPU_THREAD_POOL_H_

#include <cstdint>
#include <functional>

namespace attnopt {

// Worker count: attnopt_cpu_set_num_threads, else ATTNOPT_NUM_THREADS, else
// std::thread::hardware_concurrency().
int cpu_num_threads();

// Runs fn(item, worker) for every item in [0, items). Each worker pulls items
// from a shared counter, so uneven items (causal rows, border windows) balance.
// worker is in [0, workers) and lets callers keep per-thread scratch.
void parallel_for(int64_t items, const std::function<void(int64_t item, int worker)>& fn,
                  const std::function<void(int workers)>& before = nullptr);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_THREAD_POOL_H_
