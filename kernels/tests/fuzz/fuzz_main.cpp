// A libFuzzer-compatible driver for builds without libFuzzer (gcc): replays
// every file of the given corpus folders through LLVMFuzzerTestOneInput,
// then, with -max_total_time=S, mutates corpus entries at random (bit
// flips, byte sets from the harness's tables, inserts, erases, splices)
// for S seconds. An input that breaks a property or trips a sanitizer is
// written to ./fuzz-crash-input first. ctest runs the replay; the sanitizer
// stage of kernels/ci.sh uses libFuzzer when clang has it, else this.
// Usage: fuzz_replay [-max_total_time=S] [-seed=N] DIR_OR_FILE...
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

// The sanitizer runtime's death callback exists only in sanitized builds.
#if defined(__SANITIZE_ADDRESS__)
#define ATTNOPT_HAVE_SANITIZER_API 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNOPT_HAVE_SANITIZER_API 1
#endif
#endif
#ifdef ATTNOPT_HAVE_SANITIZER_API
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> g_current;

void dump_current() {
  if (FILE* f = std::fopen("fuzz-crash-input", "wb")) {
    if (!g_current.empty()) std::fwrite(g_current.data(), 1, g_current.size(), f);
    std::fclose(f);
    std::fprintf(stderr, "fuzz_replay: the failing input (%zu bytes) is in ./fuzz-crash-input\n", g_current.size());
  }
}

void on_abort(int) {
  dump_current();
  signal(SIGABRT, SIG_DFL);
  raise(SIGABRT);
}

void run(const std::vector<uint8_t>& in) {
  g_current = in;
  LLVMFuzzerTestOneInput(in.empty() ? nullptr : in.data(), in.size());
}

void collect(const std::string& path, std::vector<std::string>* files) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    files->push_back(path);
    return;
  }
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') collect(path + "/" + e->d_name, files);
    closedir(d);
  }
}

std::vector<uint8_t> read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> mutate(std::vector<uint8_t> x, const std::vector<std::vector<uint8_t>>& corpus, std::mt19937_64& rng) {
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int s = 0; s < steps; ++s) {
    const size_t n = x.size();
    switch (rng() % 6) {
      case 0:
        if (n) x[rng() % n] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // small values pick the harness's tables of interesting numbers
        if (n) x[rng() % n] = static_cast<uint8_t>(rng() % 40);
        break;
      case 2:
        if (n) x[rng() % n] = static_cast<uint8_t>(rng());
        break;
      case 3:
        x.insert(x.begin() + (n ? rng() % (n + 1) : 0), static_cast<uint8_t>(rng() % 40));
        break;
      case 4:
        if (n) x.erase(x.begin() + rng() % n);
        break;
      default: {  // splice a piece of another entry
        const std::vector<uint8_t>& o = corpus[rng() % corpus.size()];
        if (o.empty()) break;
        const size_t a = rng() % o.size(), len = 1 + rng() % std::min<size_t>(16, o.size() - a);
        const size_t at = n ? rng() % (n + 1) : 0;
        x.insert(x.begin() + at, o.begin() + a, o.begin() + a + len);
      }
    }
  }
  if (x.size() > 512) x.resize(512);
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  uint64_t seed = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("-max_total_time=", 0) == 0) seconds = std::atof(a.c_str() + 16);
    else if (a.rfind("-seed=", 0) == 0) seed = std::strtoull(a.c_str() + 6, nullptr, 10);
    else if (a[0] != '-') collect(a, &files);
  }
  std::sort(files.begin(), files.end());
  signal(SIGABRT, on_abort);
#ifdef ATTNOPT_HAVE_SANITIZER_API
  __sanitizer_set_death_callback(dump_current);
#endif
  std::vector<std::vector<uint8_t>> corpus;
  for (const std::string& f : files) {
    corpus.push_back(read_file(f));
    run(corpus.back());
  }
  std::printf("fuzz_replay: %zu corpus inputs replayed\n", corpus.size());
  if (seconds <= 0) return 0;
  if (corpus.empty()) corpus.push_back({});
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int k = 0; k < 64; ++k, ++runs) run(mutate(corpus[rng() % corpus.size()], corpus, rng));
  }
  std::printf("fuzz_replay: %llu mutated inputs in %.0f s, seed %llu: no property broken\n",
              static_cast<unsigned long long>(runs), seconds, static_cast<unsigned long long>(seed));
  return 0;
}
