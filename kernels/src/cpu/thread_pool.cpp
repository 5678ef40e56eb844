#include "cpu/thread_pool.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "attnopt/attnopt.h"

namespace attnopt {

static std::atomic<int> g_num_threads{0};

// The default, read once: hardware_concurrency() reads a file under /sys
// (three system calls, about 2 us here), which every call paid before.
static int default_num_threads() {
  static const int n = [] {
    if (const char* env = std::getenv("ATTNOPT_NUM_THREADS")) {
      const int e = std::atoi(env);
      if (e > 0) return e;
    }
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    return hw > 0 ? hw : 1;
  }();
  return n;
}

int cpu_num_threads() {
  const int n = g_num_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : default_num_threads();
}

namespace {

// Worker threads started once and kept, woken per call (starting threads on
// every call cost more than a small attention call itself). One job at a
// time: a call that finds the pool busy (another thread's call, or a nested
// one) runs its items on its own thread instead of waiting.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // Runs fn on items with the caller as worker 0 and workers - 1 pool threads.
  // Returns false (nothing run) when the pool is busy.
  bool run(int64_t items, int workers, const std::function<void(int64_t, int)>& fn) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (static_cast<int>(threads_.size()) < workers - 1) {
        const int id = static_cast<int>(threads_.size()) + 1;
        threads_.emplace_back([this, id] { loop(id); });
      }
      fn_ = &fn;
      items_ = items;
      next_.store(0);
      helpers_ = workers - 1;
      finished_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    drain(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return finished_ == helpers_; });
    fn_ = nullptr;
    return true;
  }

 private:
  void drain(int worker) {
    for (int64_t i = next_.fetch_add(1); i < items_; i = next_.fetch_add(1)) (*fn_)(i, worker);
  }

  void loop(int id) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (id > helpers_) continue;  // not needed for this job
      lock.unlock();
      drain(id);
      lock.lock();
      if (++finished_ == helpers_) done_.notify_one();
    }
  }

  std::mutex busy_;  // held by the call that owns the current job
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  const std::function<void(int64_t, int)>* fn_ = nullptr;
  int64_t items_ = 0;
  std::atomic<int64_t> next_{0};
  int helpers_ = 0, finished_ = 0;
};

// The pool of this process. A child after fork() has none of the parent's
// threads: it gets a new pool and the old object is dropped without joining.
Pool* process_pool() {
  static std::mutex mu;
  static Pool* pool = nullptr;
  static pid_t owner = 0;
  static struct Reaper {  // joins the workers at exit / dlclose (same process only)
    ~Reaper() {
      std::lock_guard<std::mutex> lock(mu);
      if (pool && owner == getpid()) delete pool;
      pool = nullptr;
    }
  } reaper;
  std::lock_guard<std::mutex> lock(mu);
  const pid_t pid = getpid();
  if (!pool || owner != pid) {
    pool = new Pool();  // a forked child's stale pool is leaked on purpose
    owner = pid;
  }
  return pool;
}

}  // namespace

namespace {

// The host runner of the calling thread (attnopt_cpu_set_thread_runner), and
// whether this thread is inside one of its bodies: a nested loop there runs
// on its own thread, like a nested call on the pool.
struct HostRunner {
  attnopt_parallel_runner run = nullptr;
  void* ctx = nullptr;
  int width = 0;
};
thread_local HostRunner t_runner;
thread_local bool t_in_body = false;

struct HostJob {
  const std::function<void(int64_t, int)>* fn;
  int64_t items;
  std::atomic<int64_t> next{0};
};

// One invocation of the host's loop is one worker pulling items.
void host_body(void* arg, size_t worker) {
  auto* job = static_cast<HostJob*>(arg);
  const bool outer = t_in_body;
  t_in_body = true;
  for (int64_t i = job->next.fetch_add(1); i < job->items; i = job->next.fetch_add(1))
    (*job->fn)(i, static_cast<int>(worker));
  t_in_body = outer;
}

}  // namespace

void parallel_for(int64_t items, const std::function<void(int64_t, int)>& fn,
                  const std::function<void(int)>& before) {
  if (items <= 0) return;
  if (t_runner.run && !t_in_body) {
    const int workers = static_cast<int>(std::min<int64_t>({cpu_num_threads(), t_runner.width, items}));
    if (before) before(workers);
    HostJob job{&fn, items};
    if (t_runner.run(t_runner.ctx, host_body, &job, static_cast<size_t>(workers)) != 0) {
      host_body(&job, 0);  // the host refused: finish what it left on this thread
    }
    return;
  }
  const int workers = static_cast<int>(std::min<int64_t>(cpu_num_threads(), items));
  if (before) before(workers);
  if (workers > 1 && process_pool()->run(items, workers, fn)) return;
  for (int64_t i = 0; i < items; ++i) fn(i, 0);
}

}  // namespace attnopt

extern "C" void attnopt_cpu_set_num_threads(int n) { attnopt::g_num_threads.store(n > 0 ? n : 0); }

extern "C" void attnopt_cpu_set_thread_runner(attnopt_parallel_runner runner, void* runner_ctx, int width) {
  attnopt::t_runner = {runner, runner_ctx, width > 0 ? width : 1};
}
