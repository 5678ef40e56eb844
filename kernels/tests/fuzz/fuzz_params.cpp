// Fuzz target over the kernels' argument checks and the ONNX Runtime glue's
// attribute and shape parsing (issue 24). Four modes, picked by the first
// byte:
//   0, 1: raw attnopt_flash_params / attnopt_window_params for
//         attnopt_*_params_check; when accepted and small, the CPU call runs
//         on buffers exactly as long as the strides address, so ASan flags
//         any access past what the check allowed;
//   2, 3: attributes (any type, as ort/op_attrs.h's AttrValue) and input shapes
//         through op_attrs (parse_*_attrs, *_params_from); when accepted
//         and small, the same params must pass the check and the call must
//         write every output element (outputs start as NaN).
// Any broken property aborts. Built with libFuzzer (clang -fsanitize=fuzzer)
// or with fuzz_main.cpp, which replays a corpus and mutates it for a while.
//
// Input format (so seeds can be written by hand): after the mode byte, an
// int64 is one byte b: b < kTable picks kInt64s[b], else the next 8 bytes
// (little-endian); a float likewise from kFloats; small counts and enums
// are one byte each. Missing bytes read as 0.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/checked.h"
#include "common/window_geometry.h"
#include "ort/op_attrs.h"

namespace {

using attnopt_ort::AttrType;
using attnopt_ort::AttrValue;
using attnopt_ort::InputInfo;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
const int64_t kInt64s[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257, -1, -2, -1000,
                           int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 40, int64_t{1} << 62,
                           3689348814741910324, kMax, kMax - 1, kMin, kMax / 2 + 1};
constexpr uint8_t kTable = sizeof(kInt64s) / sizeof(kInt64s[0]);
const float kFloats[] = {0.5f, 0.125f, 1.0f, 0.0f, -0.0f, -1.0f, 1e-30f, 1e30f, std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::denorm_min()};
constexpr uint8_t kFloatTable = sizeof(kFloats) / sizeof(kFloats[0]);

// Work and buffer caps for running a call: keep every input fast.
constexpr int64_t kMaxElems = int64_t{1} << 16;
constexpr int64_t kMaxWork = int64_t{1} << 19;  // B*Hq*Nq*Nk*(Dqk+Dv)

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
  int64_t i64() {
    const uint8_t b = u8();
    if (b < kTable) return kInt64s[b];
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>(u8()) << (8 * k);
    int64_t s;
    std::memcpy(&s, &v, 8);
    return s;
  }
  float f32() {
    const uint8_t b = u8();
    if (b < kFloatTable) return kFloats[b];
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(u8()) << (8 * k);
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

// B * Hq * Nq * Nk * (Dqk + Dv) within kMaxWork.
bool small_work(const int64_t bhqk[4], int64_t dims) {
  int64_t w = 0;
  return attnopt::product_within(bhqk, 4, kMaxWork, &w) && attnopt::mul_within(w, dims, kMaxWork, &w);
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_params: property broken: %s\n", what);
  std::abort();
}

// Elements a non-negative strided operand addresses: 1 + sum (e-1)*s, or
// -1 when it is empty, has a negative stride, or exceeds the cap.
int64_t addressed(const int64_t e[4], const int64_t s[4]) {
  int64_t top = 0;
  for (int a = 0; a < 4; ++a) {
    if (e[a] == 0) return 0;
    if (e[a] < 0 || s[a] < 0) return -1;
    int64_t span = 0;
    if (!attnopt::mul_within(e[a] - 1, s[a], kMaxElems, &span) || !attnopt::add_within(top, span, kMaxElems, &top))
      return -1;
  }
  return top + 1;
}

// Stores an int in a C ABI enum field as a C caller may (any value).
template <typename E>
void store_int(E* field, int v) {
  std::memcpy(field, &v, sizeof v);
}

size_t elem_bytes(attnopt_dtype t) { return t == ATTNOPT_F32 ? 4 : 2; }

// Random but finite input values in the operand's element type.
std::vector<uint8_t> operand(attnopt_dtype t, int64_t elems) {
  std::vector<uint8_t> b(static_cast<size_t>(elems) * elem_bytes(t) + 1);
  for (int64_t i = 0; i < elems; ++i) {
    const float v = static_cast<float>((i * 37) % 11) / 8.0f - 0.6f;
    if (t == ATTNOPT_F32) {
      std::memcpy(&b[i * 4], &v, 4);
    } else {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      const uint16_t h = t == ATTNOPT_BF16 ? static_cast<uint16_t>(u >> 16) : static_cast<uint16_t>(0x3800);  // 0.5
      std::memcpy(&b[i * 2], &h, 2);
    }
  }
  return b;
}

std::vector<uint8_t> poisoned(attnopt_dtype t, int64_t elems) {
  std::vector<uint8_t> b(static_cast<size_t>(elems) * elem_bytes(t) + 1, 0xff);  // NaN in every type
  return b;
}

bool all_written(attnopt_dtype t, const std::vector<uint8_t>& o, int64_t elems) {
  for (int64_t i = 0; i < elems; ++i) {
    if (t == ATTNOPT_F32) {
      float f;
      std::memcpy(&f, &o[i * 4], 4);
      if (std::isnan(f)) return false;
    } else {
      uint16_t h;
      std::memcpy(&h, &o[i * 2], 2);
      if ((h & 0x7fff) > (t == ATTNOPT_BF16 ? 0x7f80 : 0x7c00)) return false;
    }
  }
  return true;
}

// Contiguous strides of (., h, n, d) when h * n * d is small and nonzero;
// zeros for an empty operand (never addressed; its dims may be huge).
void contiguous(int64_t h, int64_t n, int64_t d, int64_t s[4]) {
  const int64_t e[3] = {h, n, d};
  int64_t total = 0;
  s[0] = s[1] = s[2] = s[3] = 0;
  if (!attnopt::product_within(e, 3, kMaxElems, &total) || total == 0) return;
  s[3] = 1;
  s[2] = d;
  s[1] = n * d;
  s[0] = total;
}

// Strides: contiguous over the extents when that is small, else fuzzed.
void strides(Reader& r, const int64_t e[4], int64_t s[4]) {
  int64_t n = 0;
  if (r.u8() % 2 == 0 && attnopt::product_within(e, 4, kMaxElems, &n)) {
    contiguous(e[1], e[2], e[3], s);
  } else {
    for (int a = 0; a < 4; ++a) s[a] = r.i64();
  }
}

void fuzz_flash_abi(Reader& r) {
  attnopt_flash_params p{};
  store_int(&p.dtype, r.u8() % 5 - 1);  // -1 and 3: not a dtype, as a C caller may store
  p.batch = r.i64(); p.heads_q = r.i64(); p.heads_kv = r.i64();
  p.len_q = r.i64(); p.len_k = r.i64(); p.dim_qk = r.i64(); p.dim_v = r.i64();
  const int64_t qe[4] = {p.batch, p.heads_q, p.len_q, p.dim_qk}, ke[4] = {p.batch, p.heads_kv, p.len_k, p.dim_qk},
                ve[4] = {p.batch, p.heads_kv, p.len_k, p.dim_v}, oe[4] = {p.batch, p.heads_q, p.len_q, p.dim_v},
                me[4] = {p.batch, p.heads_q, p.len_q, p.len_k};
  strides(r, qe, p.q.stride);
  strides(r, ke, p.k.stride);
  strides(r, ve, p.v.stride);
  strides(r, oe, p.o_stride);
  p.scale = r.f32();
  p.causal = r.u8() % 3;
  p.window = r.i64();
  store_int(&p.mask_type, r.u8() % 7 - 1);
  for (int a = 0; a < 4; ++a) p.mask_stride[a] = r.u8() % 2 ? 0 : r.i64();
  static uint8_t dummy[16];
  p.q.data = p.k.data = p.v.data = p.mask = dummy;
  p.o = dummy;
  if (attnopt_flash_params_check(&p) != ATTNOPT_OK) return;
  // Accepted: run it when small, on buffers the strides exactly cover.
  const int64_t nq = addressed(qe, p.q.stride), nk = addressed(ke, p.k.stride), nv = addressed(ve, p.v.stride),
                no = addressed(oe, p.o_stride);
  int64_t nm = 0;
  if (p.mask_type != ATTNOPT_MASK_NONE) nm = addressed(me, p.mask_stride);
  if (nq < 0 || nk < 0 || nv < 0 || no < 0 || nm < 0 || !small_work(me, p.dim_qk + p.dim_v)) return;
  std::vector<uint8_t> q = operand(p.dtype, nq), k = operand(p.dtype, nk), v = operand(p.dtype, nv),
                       o = poisoned(p.dtype, no);
  // bool: all true; f32/f16/bf16: all +0.0.
  std::vector<uint8_t> m(static_cast<size_t>(nm) * 4 + 1, p.mask_type == ATTNOPT_MASK_BOOL ? 1 : 0);
  p.q.data = q.data(); p.k.data = k.data(); p.v.data = v.data(); p.o = o.data();
  p.mask = m.data();
  if (attnopt_cpu_flash_attention_fwd(&p) != ATTNOPT_OK) fail("flash: the check accepted, the CPU call refused");
}

void fuzz_window_abi(Reader& r) {
  attnopt_window_params p{};
  store_int(&p.dtype, r.u8() % 5 - 1);
  p.batch = r.i64(); p.heads_q = r.i64(); p.heads_kv = r.i64();
  p.dim_qk = r.i64(); p.dim_v = r.i64();
  p.ndim = static_cast<int>(r.u8() % 5);
  for (int a = 0; a < 3; ++a) {
    p.grid[a] = r.i64();
    p.window[a] = r.i64();
    p.shift[a] = r.i64();
  }
  p.len = r.u8() % 2 ? r.i64() : 1;
  if (p.len == 1 && p.ndim >= 1 && p.ndim <= 3) {  // the grid's (wrapping) product, as a glue might compute it
    uint64_t prod = 1;
    for (int a = 0; a < p.ndim; ++a) prod *= static_cast<uint64_t>(p.grid[a]);
    std::memcpy(&p.len, &prod, 8);
  }
  p.scale = r.f32();
  static uint8_t dummy[16];
  p.q.data = p.k.data = p.v.data = dummy;
  p.o = dummy;
  const int64_t qe[4] = {p.batch, p.heads_q, p.len, p.dim_qk}, ke[4] = {p.batch, p.heads_kv, p.len, p.dim_qk},
                ve[4] = {p.batch, p.heads_kv, p.len, p.dim_v}, oe[4] = {p.batch, p.heads_q, p.len, p.dim_v};
  int64_t n = 0;
  const bool small = attnopt::product_within(qe, 4, kMaxElems, &n) && attnopt::product_within(ke, 4, kMaxElems, &n) &&
                     attnopt::product_within(ve, 4, kMaxElems, &n) && attnopt::product_within(oe, 4, kMaxElems, &n);
  if (small) {
    contiguous(p.heads_q, p.len, p.dim_qk, p.q.stride);
    contiguous(p.heads_kv, p.len, p.dim_qk, p.k.stride);
    contiguous(p.heads_kv, p.len, p.dim_v, p.v.stride);
    contiguous(p.heads_q, p.len, p.dim_v, p.o_stride);
  }
  if (attnopt_window_params_check(&p) != ATTNOPT_OK || !small) return;
  int64_t nq = 0, nk = 0, nv = 0, no = 0;
  attnopt::product_within(qe, 4, kMaxElems, &nq);
  attnopt::product_within(ke, 4, kMaxElems, &nk);
  attnopt::product_within(ve, 4, kMaxElems, &nv);
  attnopt::product_within(oe, 4, kMaxElems, &no);
  attnopt::WindowGeometry g;
  attnopt::make_window_geometry(p.ndim, p.grid, p.window, p.shift, &g);
  const int64_t work[4] = {p.batch, p.heads_q, p.len, g.max_window_size()};
  if (!small_work(work, p.dim_qk + p.dim_v)) return;
  std::vector<uint8_t> q = operand(p.dtype, nq), k = operand(p.dtype, nk), v = operand(p.dtype, nv),
                       o = poisoned(p.dtype, no);
  p.q.data = q.data(); p.k.data = k.data(); p.v.data = v.data(); p.o = o.data();
  if (attnopt_cpu_window_attention_fwd(&p) != ATTNOPT_OK) fail("window: the check accepted, the CPU call refused");
  if (!all_written(p.dtype, o, no)) fail("window: an accepted call left output elements unwritten");
}

// An attribute of any type, as read_attr would report it.
AttrValue attr_value(Reader& r) {
  AttrValue v;
  v.type = static_cast<AttrType>(r.u8() % 8);
  switch (v.type) {
    case AttrType::Int: v.i = r.i64(); break;
    case AttrType::Float: v.f = r.f32(); break;
    case AttrType::Ints:
      v.ints.resize(r.u8() % 5);
      for (int64_t& x : v.ints) x = r.i64();
      break;
    default: break;
  }
  return v;
}

// Attribute values per name, fixed for the input (looked up any number of times).
struct Attrs {
  std::vector<std::pair<std::string, AttrValue>> values;
  attnopt_ort::AttrLookup lookup() const {
    return [this](const char* name) {
      for (const auto& kv : values)
        if (kv.first == name) return kv.second;
      return AttrValue{};
    };
  }
};

InputInfo input(Reader& r, bool mask) {
  InputInfo in;
  in.present = !mask || r.u8() % 2;
  const ONNXTensorElementDataType types[] = {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
                                             ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
                                             ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64};
  in.type = types[r.u8() % 5];
  in.shape.resize(r.u8() % 6);
  for (int64_t& d : in.shape) d = r.u8() % 3 ? static_cast<int64_t>(r.u8() % 70) : r.i64();
  return in;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d == 0) return 0;
  for (int64_t d : s)
    if (!attnopt::mul_within(n, d, kMaxElems, &n)) return -1;
  return n;
}

void fuzz_ort(Reader& r, bool window) {
  Attrs at;
  const char* names[] = {"scale", "causal", "sliding_window", "spatial_shape", "window", "shift"};
  for (const char* name : names)
    if (r.u8() % 4) at.values.push_back({name, attr_value(r)});
  // A valid geometry for some inputs, so the shape checks behind it run too.
  if (window && r.u8() % 2) {
    const int nd = 1 + r.u8() % 3;
    AttrValue g{AttrType::Ints, 0, 0.0f, {}}, w = g, s = g;
    for (int a = 0; a < nd; ++a) {
      g.ints.push_back(1 + r.u8() % 12);
      w.ints.push_back(r.u8() % 2 ? 1 + r.u8() % 12 : r.i64());
      s.ints.push_back(r.i64());
    }
    AttrValue scale;
    scale.type = AttrType::Float;
    scale.f = 0.5f;
    at.values.insert(at.values.begin(), {{"spatial_shape", g}, {"window", w}, {"shift", s}, {"scale", scale}});
  }
  const attnopt_ort::AttrLookup lookup = at.lookup();
  const InputInfo q = input(r, false), k = input(r, false), v = input(r, false), m = input(r, true);
  std::vector<int64_t> oshape;
  bool empty = false;
  const int64_t nq = numel(q.shape), nk = numel(k.shape), nv = numel(v.shape);
  if (!window) {
    attnopt_ort::FlashAttrs a;
    if (!attnopt_ort::parse_flash_attrs(lookup, &a).empty()) return;
    attnopt_flash_params_v2 p{};
    if (!attnopt_ort::flash_params_from(a, q, k, v, m, &p, &oshape, &empty).empty() || empty) return;
    const int64_t no = numel(oshape), nm = m.present ? numel(m.shape) : 0;
    const int64_t work[4] = {p.qkv.batch, p.qkv.heads_q, p.qkv.len_q, p.qkv.len_k};
    if (nq < 0 || nk < 0 || nv < 0 || no < 0 || nm < 0 || !small_work(work, p.qkv.dim_qk + p.qkv.dim_v)) return;
    std::vector<uint8_t> qb = operand(p.qkv.dtype, nq), kb = operand(p.qkv.dtype, nk), vb = operand(p.qkv.dtype, nv),
                         ob = poisoned(p.qkv.dtype, no), mb(static_cast<size_t>(nm) * 4 + 1, 0);
    if (m.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL) std::memset(mb.data(), 1, mb.size());
    p.qkv.q.data = qb.data(); p.qkv.k.data = kb.data(); p.qkv.v.data = vb.data(); p.qkv.o = ob.data();
    p.mask = m.present ? mb.data() : nullptr;
    if (attnopt_cpu_flash_attention_fwd_v2(&p) != ATTNOPT_OK) fail("flash: the glue accepted inputs the kernel refuses");
    if (!all_written(p.qkv.dtype, ob, no)) fail("flash: accepted inputs left output elements unwritten");
  } else {
    attnopt_ort::WindowAttrs a;
    if (!attnopt_ort::parse_window_attrs(lookup, &a).empty()) return;
    attnopt_window_params_v2 p{};
    if (!attnopt_ort::window_params_from(a, q, k, v, &p, &oshape, &empty).empty() || empty) return;
    const int64_t no = numel(oshape);
    attnopt::WindowGeometry g;
    attnopt::make_window_geometry(p.ndim, p.grid, p.window, p.shift, &g);
    const int64_t work[4] = {p.qkv.batch, p.qkv.heads_q, p.qkv.len_q, g.max_window_size()};
    if (nq < 0 || nk < 0 || nv < 0 || no < 0 || !small_work(work, p.qkv.dim_qk + p.qkv.dim_v)) return;
    std::vector<uint8_t> qb = operand(p.qkv.dtype, nq), kb = operand(p.qkv.dtype, nk), vb = operand(p.qkv.dtype, nv),
                         ob = poisoned(p.qkv.dtype, no);
    p.qkv.q.data = qb.data(); p.qkv.k.data = kb.data(); p.qkv.v.data = vb.data(); p.qkv.o = ob.data();
    if (attnopt_cpu_window_attention_fwd_v2(&p) != ATTNOPT_OK) fail("window: the glue accepted inputs the kernel refuses");
    if (!all_written(p.qkv.dtype, ob, no)) fail("window: accepted inputs left output elements unwritten");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r(data, size);
  switch (r.u8() % 4) {
    case 0: fuzz_flash_abi(r); break;
    case 1: fuzz_window_abi(r); break;
    case 2: fuzz_ort(r, false); break;
    default: fuzz_ort(r, true); break;
  }
  return 0;
}
