// Hostile one-node models of attnopt.FlashAttention and WindowAttention in
// real ONNX Runtime (issue 24): attributes of the wrong type or range,
// geometries whose products wrap, windows near INT64_MAX, shapes that do not
// fit, empty tensors. Each model must be refused with a message naming the
// node (at session creation for attributes, at Run for shapes), or give the
// float64 reference's result. CI runs it on an ASan+UBSan build too
// (kernels/ci.sh), with ONNX Runtime 1.24.3 and the newest release.
// Usage: test_ort_hostile LIBATTNOPT_ORT [LIBONNXRUNTIME]   (exit 77 = skipped)
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>

#include "onnx_proto.h"
#include "ort_runner.h"
#include "reference.h"
#include "test_util.h"

namespace attnopt_test {
int g_failures = 0;
}

using namespace attnopt_test;
using onnx_proto::Msg;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int kInt64 = 7;  // TensorProto.DataType INT64

enum class Expect {
  Creation,   // session creation fails, naming the node
  Run,        // Run fails, naming the node
  Reference,  // the float64 reference's output
};

struct Tensor4 {
  std::vector<int64_t> shape;
  int type = onnx_proto::FLOAT;
};

// One hostile case. Q, K, V are random float32 of their shapes (declared
// as they are fed); the reference reads them as (B, H, N, D), rank 3 as
// one head.
struct Case {
  std::string name;
  bool window;  // WindowAttention, else FlashAttention
  std::vector<Msg> attrs;
  Tensor4 q, k, v;
  Tensor4 mask;  // empty shape: no mask input
  Expect expect;
  std::string want;  // part of the error message (refusals)
  // Reference semantics (Expect::Reference).
  double scale = 0.5;
  bool causal = false;
  int64_t sliding = 0;
  double softcap = 0;
  std::vector<int64_t> grid, win, shift;
};

// Elements of a shape; 0 as soon as one dim is (the others may be huge).
int64_t count(const std::vector<int64_t>& s) {
  for (int64_t d : s)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Dims {
  int64_t b, h, n, d;
};
Dims dims_of(const std::vector<int64_t>& s) {
  return s.size() == 4 ? Dims{s[0], s[1], s[2], s[3]} : Dims{s[0], 1, s[1], s[2]};
}

std::vector<double> reference(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v) {
  const Dims Q = dims_of(c.q.shape), K = dims_of(c.k.shape), V = dims_of(c.v.shape);
  auto get = [](const std::vector<float>& t, Dims d) {
    return [&t, d](int64_t b, int64_t h, int64_t i, int64_t e) {
      return static_cast<double>(t[((b * d.h + h) * d.n + i) * d.d + e]);
    };
  };
  Admit admit;
  if (c.window) {
    admit = window_admit(c.grid, c.win, c.shift);
  } else if (c.causal) {
    const int64_t off = K.n - Q.n, w = c.sliding;
    // The op's definition, in wide arithmetic: keys j > i + off - w when w > 0.
    admit = [off, w](int64_t i, int64_t j) {
      return j <= i + off && (w <= 0 || static_cast<long double>(j) > static_cast<long double>(i + off) - w);
    };
  }
  return reference_attention({Q.b, Q.h, K.h, Q.n, K.n, Q.d, V.d}, get(q, Q), get(k, K), get(v, V), c.scale, nullptr,
                             admit, c.softcap);
}

void run_case(Runner& run, const Case& c, int index) {
  const std::string node = "hostile_" + std::to_string(index);
  std::mt19937 rng(31 + index);
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  auto fill = [&](const Tensor4& t) {
    std::vector<float> x(static_cast<size_t>(count(t.shape)));
    for (float& e : x) e = dist(rng);
    return x;
  };
  std::vector<float> q = fill(c.q), k = fill(c.k), v = fill(c.v);
  std::vector<int64_t> mask_i64;
  std::vector<uint8_t> mask_b;
  std::vector<Feed> feeds = {{{"q", c.q.type, c.q.shape}, q.data()},
                             {{"k", c.k.type, c.k.shape}, k.data()},
                             {{"v", c.v.type, c.v.shape}, v.data()}};
  if (!c.mask.shape.empty()) {
    const size_t n = static_cast<size_t>(count(c.mask.shape));
    if (c.mask.type == kInt64) {
      mask_i64.assign(n, 1);
      feeds.push_back({{"mask", kInt64, c.mask.shape}, mask_i64.data()});
    } else {
      mask_b.assign(n, 1);
      feeds.push_back({{"mask", onnx_proto::BOOL, c.mask.shape}, mask_b.data()});
    }
  }
  std::vector<onnx_proto::Input> inputs;
  for (const Feed& f : feeds) inputs.push_back(f.info);
  std::vector<int64_t> oshape = c.q.shape;
  oshape.back() = c.v.shape.back();
  const std::string model = onnx_proto::one_node_model(c.window ? "WindowAttention" : "FlashAttention", inputs,
                                                       {"out", onnx_proto::FLOAT, oshape}, c.attrs, node);
  const Result r = run.run(model, feeds, "out");
  switch (c.expect) {
    case Expect::Creation:
    case Expect::Run: {
      const bool at_creation = !r.session_error.empty();
      const char* stage = c.expect == Expect::Creation ? "session creation" : "Run";
      std::printf("%-58s refused at %-16s %s\n", c.name.c_str(), at_creation ? "session creation" : "Run",
                  r.error.c_str());
      EXPECT_TRUE(!r.error.empty(), "%s: not refused", c.name.c_str());
      EXPECT_TRUE(at_creation == (c.expect == Expect::Creation), "%s: refused at the wrong stage (want %s)",
                  c.name.c_str(), stage);
      // Ours quote the node as 'name'; ONNX Runtime's own model checks as "name".
      EXPECT_TRUE(r.error.find("'" + node + "'") != std::string::npos ||
                      r.error.find("\"" + node + "\"") != std::string::npos,
                  "%s: the message does not name node %s", c.name.c_str(), node.c_str());
      EXPECT_TRUE(r.error.find(c.want) != std::string::npos, "%s: the message lacks \"%s\"", c.name.c_str(),
                  c.want.c_str());
      break;
    }
    case Expect::Reference: {
      EXPECT_TRUE(r.error.empty(), "%s: refused: %s", c.name.c_str(), r.error.c_str());
      if (!r.error.empty()) return;
      EXPECT_TRUE(r.shape == oshape, "%s: output shape", c.name.c_str());
      // An empty output has nothing to compare (and its other dims may be huge).
      const std::vector<double> ref = count(oshape) == 0 ? std::vector<double>() : reference(c, q, k, v);
      Tensor out;
      out.dtype = ATTNOPT_F32;
      out.value.assign(ref.size(), 0.0);
      out.f32.resize(r.bytes.size() / 4);
      if (!r.bytes.empty()) std::memcpy(out.f32.data(), r.bytes.data(), r.bytes.size());
      EXPECT_TRUE(out.f32.size() == ref.size(), "%s: %zu output elements, want %zu", c.name.c_str(), out.f32.size(),
                  ref.size());
      if (out.f32.size() != ref.size()) return;
      double max_err = 0;
      for (size_t i = 0; i < ref.size(); ++i) max_err = std::max(max_err, std::fabs(out.f32[i] - ref[i]));
      const double err = rel_l2(out, ref);
      std::printf("%-58s reference: rel L2 %.2e, max |err| %.2e (%zu elements)\n", c.name.c_str(), err, max_err,
                  ref.size());
      EXPECT_TRUE(err <= tolerance(ATTNOPT_F32) && max_err <= 1e-5, "%s: rel L2 %.3e, max %.3e", c.name.c_str(), err,
                  max_err);
      break;
    }
  }
}

Msg f(const char* n, float x) { return onnx_proto::attr_float(n, x); }
Msg i(const char* n, int64_t x) { return onnx_proto::attr_int(n, x); }
Msg ints(const char* n, std::vector<int64_t> x) { return onnx_proto::attr_ints(n, x); }

// An attribute that fills both i and f (type INT): one AttributeProto
// holding two values.
Msg two_values(const char* n) {
  Msg a;
  a.bytes_field(1, n).float_field(2, 1.0f).varint_field(3, 1).varint_field(20, 2);
  return a;
}

std::vector<Case> flash_cases() {
  const Tensor4 q{{1, 2, 8, 4}}, kv{{1, 2, 8, 4}};
  std::vector<Case> c;
  auto refused = [&](std::string name, std::vector<Msg> attrs, Expect e, std::string want) {
    c.push_back({name, false, attrs, q, kv, kv, {}, e, want});
  };
  // Wrong types: refused when the session is created, not read as absent.
  refused("causal stored as FLOAT", {f("scale", 0.5f), f("causal", 1.0f)}, Expect::Creation,
          "attribute 'causal' is FLOAT, not INT");
  refused("sliding_window stored as FLOAT", {i("causal", 1), f("sliding_window", 3.0f)}, Expect::Creation,
          "attribute 'sliding_window' is FLOAT, not INT");
  refused("scale stored as INT", {i("scale", 2)}, Expect::Creation, "attribute 'scale' is INT, not FLOAT");
  refused("causal stored as STRING", {onnx_proto::attr_string("causal", "1")}, Expect::Creation,
          "attribute 'causal' is STRING, not INT");
  refused("causal stored as INTS", {ints("causal", {1})}, Expect::Creation, "attribute 'causal' is INTS, not INT");
  refused("causal stored as empty INTS", {ints("causal", {})}, Expect::Creation,
          "attribute 'causal' is an empty list");
  refused("scale stored as FLOATS", {onnx_proto::attr_floats("scale", {0.5f})}, Expect::Creation,
          "attribute 'scale' is FLOATS, not FLOAT");
  // ONNX Runtime refuses this proto itself, before the kernel reads it.
  refused("causal holding an int and a float", {two_values("causal")}, Expect::Creation,
          "data field mismatch in attribute causal");
  // Values out of range.
  for (float s : {0.0f, -0.5f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()})
    refused("scale " + std::to_string(s), {f("scale", s)}, Expect::Creation, "must be finite and > 0");
  refused("causal 2", {i("causal", 2)}, Expect::Creation, "causal 2 must be 0 or 1");
  refused("causal -1", {i("causal", -1)}, Expect::Creation, "causal -1 must be 0 or 1");
  refused("sliding_window -3", {i("causal", 1), i("sliding_window", -3)}, Expect::Creation, "sliding_window -3");
  refused("sliding_window 4 without causal", {i("sliding_window", 4)}, Expect::Creation, "needs causal=1");
  refused("softcap stored as INT", {i("softcap", 30)}, Expect::Creation, "attribute 'softcap' is INT, not FLOAT");
  for (float s : {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()})
    refused("softcap " + std::to_string(s), {f("softcap", s)}, Expect::Creation, "must be finite and >= 0");
  // Windows near INT64_MAX (the tile bound overflowed with Nq > Nk).
  auto window_ref = [&](std::string name, int64_t nq, int64_t nk, int64_t w) {
    Case x{name, false, {f("scale", 0.35f), i("causal", 1), i("sliding_window", w)}, {{1, 2, nq, 8}},
           {{1, 2, nk, 8}}, {{1, 2, nk, 8}}, {}, Expect::Reference, ""};
    x.scale = 0.35f;
    x.causal = true;
    x.sliding = w;
    c.push_back(x);
  };
  // Nk - Nq = 1 (mod 4) puts a block of 4 rows across the first row with a
  // key with lo + Nk - Nq = -3, where lo + Nk - Nq - INT64_MAX + 1 wrapped.
  window_ref("sliding_window INT64_MAX, Nq 101 > Nk 70", 101, 70, kMax);
  window_ref("sliding_window INT64_MAX, Nq 133 > Nk 70", 133, 70, kMax);
  window_ref("sliding_window INT64_MAX - 1, Nq 102 > Nk 70", 102, 70, kMax - 1);
  window_ref("sliding_window INT64_MAX, Nq 100 > Nk 70", 100, 70, kMax);
  window_ref("sliding_window INT64_MAX - 1, Nq 20 < Nk 45", 20, 45, kMax - 1);
  window_ref("sliding_window Nk + 1, Nq 130 > Nk 67", 130, 67, 68);
  window_ref("sliding_window 5, Nq 90 > Nk 70", 90, 70, 5);
  // The same with empty_rows literal_zero (rows above the first key: zeros,
  // as the reference), with and without an all-true bool mask: the empty-row
  // pass used the unclamped window (signed overflow, a wild mask read, or a
  // key loop from near -2^63; issue 34).
  for (bool masked : {false, true})
    for (auto [nq, nk, w] : {std::tuple<int64_t, int64_t, int64_t>{101, 70, kMax}, {102, 70, kMax - 1}, {20, 45, kMax}}) {
      window_ref("sliding_window " + std::to_string(w) + ", Nq " + std::to_string(nq) + ", Nk " + std::to_string(nk) +
                     ", empty_rows 2" + (masked ? ", bool mask" : ""),
                 nq, nk, w);
      c.back().attrs.push_back(i("empty_rows", 2));
      if (masked) c.back().mask = {{1, 1, nq, nk}, onnx_proto::BOOL};
    }
  // Caps far above the scores (issue 34): 0.99 off from 1e10, NaN at FLT_MAX.
  for (float cap : {1e10f, std::numeric_limits<float>::max()}) {
    c.push_back({"softcap " + std::to_string(cap).substr(0, 12), false, {f("scale", 0.5f), f("softcap", cap)}, q, kv, kv,
                 {}, Expect::Reference, ""});
    c.back().softcap = cap;
  }
  // Shapes: refused at Run, naming the node.
  auto shapes = [&](std::string name, Tensor4 qq, Tensor4 kk, Tensor4 vv, Tensor4 m, std::string want) {
    c.push_back({name, false, {f("scale", 0.5f)}, qq, kk, vv, m, Expect::Run, want});
  };
  shapes("Q of rank 5", {{1, 1, 2, 8, 4}}, kv, kv, {}, "must be rank 3 (B,N,D) or rank 4");
  shapes("Q of rank 2", {{8, 4}}, kv, kv, {}, "must be rank 3 (B,N,D) or rank 4");
  shapes("3 query heads over 2 kv heads", {{1, 3, 8, 4}}, kv, kv, {}, "inconsistent shapes");
  shapes("K head dim 6, Q 4", q, {{1, 2, 8, 6}}, {{1, 2, 8, 6}}, {}, "inconsistent shapes");
  shapes("head dim 300", {{1, 2, 8, 300}}, {{1, 2, 8, 300}}, {{1, 2, 8, 4}}, {}, "head dims must be 1..256");
  shapes("mask of rank 5", q, kv, kv, {{1, 1, 1, 8, 8}, onnx_proto::BOOL}, "mask must have rank 2..4");
  shapes("mask (5,7) against Nq 8, Nk 8", q, kv, kv, {{5, 7}, onnx_proto::BOOL}, "does not broadcast");
  shapes("int64 mask", q, kv, kv, {{1, 1, 8, 8}, kInt64}, "mask must be bool, float, float16 or bfloat16");
  // Empty tensors: an empty output, nothing computed (no stride arithmetic
  // on dims that multiply past INT64_MAX).
  auto empty = [&](std::string name, Tensor4 qq, Tensor4 kk) {
    c.push_back({name, false, {f("scale", 0.5f)}, qq, kk, kk, {}, Expect::Reference, ""});
  };
  empty("empty batch", {{0, 2, 8, 4}}, {{0, 2, 8, 4}});
  empty("empty batch, other dims 2^40", {{0, int64_t{1} << 40, int64_t{1} << 40, 4}},
        {{0, int64_t{1} << 40, int64_t{1} << 40, 4}});
  empty("no queries", {{1, 2, 0, 4}}, kv);
  empty("no keys (rows of zeros)", q, {{1, 2, 0, 4}});
  return c;
}

std::vector<Case> window_cases() {
  std::vector<Case> c;
  const Tensor4 t4{{1, 1, 4, 4}}, t60{{1, 2, 60, 8}};
  auto geo = [](std::vector<int64_t> grid, std::vector<int64_t> win, std::vector<int64_t> shift) {
    return std::vector<Msg>{f("scale", 0.5f), ints("spatial_shape", grid), ints("window", win), ints("shift", shift)};
  };
  auto refused = [&](std::string name, std::vector<Msg> attrs, Tensor4 t, Expect e, std::string want) {
    c.push_back({name, true, attrs, t, t, t, {}, e, want});
  };
  // The geometries: a product that wraps to the token count.
  refused("spatial_shape [3689348814741910324, 5] (wraps to 4), shift", geo({3689348814741910324, 5}, {1, 1}, {1000, 0}),
          t4, Expect::Creation, "has more than 9223372036854775807 tokens");
  refused("spatial_shape [2^63-1, 2^63-1, 4] (wraps to 4, no window)",
          geo({kMax, kMax, 4}, {2, 1, 1}, {0, 0, 0}), t4, Expect::Creation, "tokens");
  refused("spatial_shape [2^32, 2^32] (wraps to 0)", geo({int64_t{1} << 32, int64_t{1} << 32}, {1, 1}, {0, 0}), t4,
          Expect::Creation, "tokens");
  // Wrong types and missing attributes.
  refused("spatial_shape stored as FLOATS",
          {f("scale", 0.5f), onnx_proto::attr_floats("spatial_shape", {2, 2}), ints("window", {2, 2})}, t4,
          Expect::Creation, "attribute 'spatial_shape' is FLOATS");
  refused("window stored as INT", {f("scale", 0.5f), ints("spatial_shape", {2, 2}), i("window", 2)}, t4,
          Expect::Creation, "attribute 'window' is INT");
  refused("shift stored as FLOATS",
          {f("scale", 0.5f), ints("spatial_shape", {2, 2}), ints("window", {2, 2}), onnx_proto::attr_floats("shift", {1, 1})},
          t4, Expect::Creation, "attribute 'shift' is FLOATS");
  refused("scale stored as INT", {i("scale", 1), ints("spatial_shape", {2, 2}), ints("window", {2, 2})}, t4,
          Expect::Creation, "attribute 'scale' is INT");
  refused("scale missing", {ints("spatial_shape", {2, 2}), ints("window", {2, 2})}, t4, Expect::Creation,
          "'scale' is required");
  refused("scale -1", {f("scale", -1.0f), ints("spatial_shape", {2, 2}), ints("window", {2, 2})}, t4,
          Expect::Creation, "must be finite and > 0");
  refused("spatial_shape missing", {f("scale", 0.5f), ints("window", {2, 2})}, t4, Expect::Creation,
          "'spatial_shape' is required");
  refused("spatial_shape []", geo({}, {}, {}), t4, Expect::Creation, "attribute 'spatial_shape' is an empty list");
  refused("spatial_shape of 4 axes", geo({1, 1, 2, 2}, {1, 1, 2, 2}, {0, 0, 0, 0}), t4, Expect::Creation,
          "must have 1 to 3 entries");
  refused("window shorter than spatial_shape", geo({2, 2}, {2}, {0, 0}), t4, Expect::Creation, "differ in length");
  refused("shift shorter than spatial_shape", geo({2, 2}, {2, 2}, {1}), t4, Expect::Creation, "differ in length");
  refused("window 0", geo({2, 2}, {0, 2}, {0, 0}), t4, Expect::Creation, "must be >= 1");
  refused("spatial_shape [-2, -2]", geo({-2, -2}, {1, 1}, {0, 0}), t4, Expect::Creation, "must be >= 1");
  // Shapes against the geometry: refused at Run.
  refused("spatial_shape [3, 5] for 12 tokens", geo({3, 5}, {2, 2}, {0, 0}), {{1, 1, 12, 4}}, Expect::Run,
          "has 15 tokens but Q has 12");
  c.push_back({"K with fewer tokens than Q", true, geo({2, 2}, {2, 2}, {0, 0}), t4, {{1, 1, 3, 4}}, {{1, 1, 3, 4}},
               {}, Expect::Run, "same number of tokens"});
  // Extreme values that are valid: the reference's result.
  auto ref = [&](std::string name, std::vector<int64_t> grid, std::vector<int64_t> win, std::vector<int64_t> shift) {
    Case x{name, true, geo(grid, win, shift), t60, t60, t60, {}, Expect::Reference, ""};
    x.grid = grid;
    x.win = win;
    x.shift = shift;
    c.push_back(x);
  };
  ref("shift [INT64_MIN, INT64_MAX] on a 6x10 grid", {6, 10}, {4, 4}, {kMin, kMax});
  ref("window [INT64_MAX, 3] on a 6x10 grid", {6, 10}, {kMax, 3}, {1, 2});
  ref("window [INT64_MAX, INT64_MAX] (exact attention)", {6, 10}, {kMax, kMax}, {0, 0});
  Case e{"empty batch", true, geo({6, 10}, {4, 4}, {1, 1}), {{0, 2, 60, 8}}, {{0, 2, 60, 8}}, {{0, 2, 60, 8}}, {},
         Expect::Reference, ""};
  e.grid = {6, 10};
  e.win = {4, 4};
  e.shift = {1, 1};
  c.push_back(e);
  return c;
}

// The leak: a geometry that left the window list empty returned OK
// without writing its output, so ONNX Runtime handed back what its arena
// held, here the squares of a "secret" tensor freed earlier in the same run.
void secret_case(Runner& run) {
  // secret (1,1,4,8) -> sq = secret^2 -> least = min(sq): sq's buffer is
  // free from then on. q2 = q + 0 * least orders WindowAttention after it;
  // its output (V's head dim 8) has sq's size, Q (head dim 4) does not.
  const std::vector<int64_t> t4 = {1, 1, 4, 4}, t8 = {1, 1, 4, 8}, one = {1, 1, 1, 1};
  std::vector<float> secret(32), q(16, 0.25f), k(16, 0.5f), v(32, 0.75f), zero = {0.0f}, unit = {1.0f};
  for (int e = 0; e < 32; ++e) secret[e] = 3.0f + e;
  using onnx_proto::Node;
  const std::vector<Node> nodes = {
      {"Mul", "", "square", {"secret", "secret"}, {"sq"}, {}},
      {"ReduceMin", "", "least", {"sq"}, {"least"}, {i("keepdims", 1)}},
      {"Mul", "", "nothing", {"least", "zero"}, {"nothing"}, {}},
      {"Add", "", "after_secret", {"q", "nothing"}, {"q2"}, {}},
      {"WindowAttention", "attnopt", "hostile_secret", {"q2", "k", "v"}, {"attn"},
       {f("scale", 0.5f), ints("spatial_shape", {kMax, kMax, 4}), ints("window", {2, 1, 1})}},
      {"Mul", "", "times_one", {"attn", "unit"}, {"out"}, {}},
  };
  const std::vector<onnx_proto::Input> inputs = {
      {"secret", onnx_proto::FLOAT, t8}, {"q", onnx_proto::FLOAT, t4},    {"k", onnx_proto::FLOAT, t4},
      {"v", onnx_proto::FLOAT, t8},      {"zero", onnx_proto::FLOAT, one}, {"unit", onnx_proto::FLOAT, one}};
  const std::string model = onnx_proto::model(nodes, inputs, {{"out", onnx_proto::FLOAT, t8}});
  const Result r = run.run(model,
                           {{inputs[0], secret.data()}, {inputs[1], q.data()}, {inputs[2], k.data()},
                            {inputs[3], v.data()}, {inputs[4], zero.data()}, {inputs[5], unit.data()}},
                           "out");
  int leaked = 0;
  for (size_t e = 0; e + 4 <= r.bytes.size(); e += 4) {
    float x;
    std::memcpy(&x, r.bytes.data() + e, 4);
    leaked += x == secret[e / 4] * secret[e / 4];
  }
  std::printf("%-58s %s\n", "window list left empty, after a secret tensor",
              r.error.empty() ? ("ran: " + std::to_string(leaked) + " of 32 outputs are the secret's squares").c_str()
                              : ("refused: " + r.error).c_str());
  EXPECT_TRUE(!r.error.empty(), "empty window list: not refused (%d outputs equal the secret's squares)", leaked);
  EXPECT_TRUE(r.error.find("'hostile_secret'") != std::string::npos,
              "empty window list: the message does not name the node");
}

}  // namespace

int main(int argc, char** argv) {
  if (!load_ort(argc, argv)) {
    std::printf("SKIP: no ONNX Runtime library given (configure with -DATTNOPT_ORT_LIBRARY=... or set ATTNOPT_ORT_LIB)\n");
    return 77;
  }
  int n = 0;
  {
    Runner run(argv[1], 1, ORT_LOGGING_LEVEL_FATAL);
    for (const Case& c : flash_cases()) run_case(run, c, n++);
    for (const Case& c : window_cases()) run_case(run, c, n++);
    secret_case(run);
  }
  {
    // Two intra-op threads: the same answers through ORT's parallel loop.
    Runner run(argv[1], 2, ORT_LOGGING_LEVEL_FATAL);
    for (const Case& c : window_cases())
      if (c.expect == Expect::Reference) run_case(run, c, n++);
  }
  if (g_failures) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all %d hostile ORT cases held\n", n + 1);
  return 0;
}
