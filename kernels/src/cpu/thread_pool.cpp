#include "cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "attnopt/attnopt.h"

namespace attnopt {

static std::atomic<int> g_num_threads{0};

int cpu_num_threads() {
  int n = g_num_threads.load();
  if (n > 0) return n;
  if (const char* env = std::getenv("ATTNOPT_NUM_THREADS")) {
    n = std::atoi(env);
    if (n > 0) return n;
  }
  n = static_cast<int>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

void parallel_for(int64_t items, const std::function<void(int64_t, int)>& fn,
                  const std::function<void(int)>& before) {
  if (items <= 0) return;
  const int workers = static_cast<int>(std::min<int64_t>(cpu_num_threads(), items));
  if (before) before(workers);
  std::atomic<int64_t> next{0};
  auto run = [&](int w) {
    for (int64_t i = next.fetch_add(1); i < items; i = next.fetch_add(1)) fn(i, w);
  };
  if (workers == 1) {
    run(0);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (int w = 1; w < workers; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& t : pool) t.join();
}

}  // namespace attnopt

extern "C" void attnopt_cpu_set_num_threads(int n) { attnopt::g_num_threads.store(n > 0 ? n : 0); }
