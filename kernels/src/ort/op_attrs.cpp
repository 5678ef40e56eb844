#include "ort/op_attrs.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/checked.h"
#include "common/window_geometry.h"
#include "ort/op_table.h"

namespace attnopt_ort {
namespace {

std::string list_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

std::string wrong_type(const char* name, AttrType got, const char* wanted) {
  return std::string("attribute '") + name + "' is " + attr_type_name(got) + ", not " + wanted;
}

using op_table::FloatRule;
using op_table::Kind;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Int: return "INT";
    case Kind::Float: return "FLOAT";
    case Kind::Ints: return "INTS";
  }
  return "?";
}

AttrType attr_type(Kind k) {
  switch (k) {
    case Kind::Int: return AttrType::Int;
    case Kind::Float: return AttrType::Float;
    case Kind::Ints: return AttrType::Ints;
  }
  return AttrType::Absent;
}

// A float as the Go messages write it: -1, 0.5, inf, nan.
std::string float_str(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  // The shortest of %.6g..%.9g that reads back as f, as Go's 'g' -1.
  for (int p = 6; p <= 9; ++p) {
    char t[32];
    std::snprintf(t, sizeof t, "%.*g", p, static_cast<double>(f));
    if (std::strtof(t, nullptr) == f) return t;
  }
  return buf;
}

bool float_ok(FloatRule r, float f) {
  switch (r) {
    case FloatRule::FinitePositive: return std::isfinite(f) && f > 0.0f;
    case FloatRule::FiniteOrNegInf: return !std::isnan(f) && f != INFINITY;
    case FloatRule::FiniteNonNegative: return std::isfinite(f) && f >= 0.0f;
    case FloatRule::NonPositiveOrNegInf: return f <= 0.0f;  // NaN fails
    case FloatRule::Any: return true;
  }
  return false;
}

// Reads every attribute of an op's table (op_table.h, generated from
// internal/opdef) into out, the default where one is absent; "" or why
// the node is refused, with the Go runtime's rules and words.
template <size_t N>
std::string parse_table(const AttrLookup& attr, const op_table::Attr (&table)[N], AttrValue (&out)[N]) {
  for (size_t i = 0; i < N; ++i) {
    const op_table::Attr& a = table[i];
    const std::string name = a.name;
    AttrValue v = attr(a.name);
    if (v.type == AttrType::Absent) {
      if (a.required) return std::string("the ") + kind_name(a.kind) + " attribute '" + name + "' is required";
      v.i = a.int_default;
      v.f = a.float_default;
      if (a.kind == Kind::Ints && a.like >= 0) v.ints.assign(out[a.like].ints.size(), 0);
      out[i] = v;
      continue;
    }
    if (v.type != attr_type(a.kind)) return wrong_type(a.name, v.type, kind_name(a.kind));
    switch (a.kind) {
      case Kind::Int:
        if (v.i < a.lo || v.i > a.hi) return name + " " + std::to_string(v.i) + " must be " + a.must;
        break;
      case Kind::Float:
        if (!float_ok(a.rule, v.f)) return name + " " + float_str(v.f) + " must be " + a.must;
        break;
      case Kind::Ints: {
        const int n = static_cast<int>(v.ints.size());
        if (a.len_max > 0 && (n < a.len_min || n > a.len_max))
          return name + " " + list_str(v.ints) + " must have " + std::to_string(a.len_min) + " to " +
                 std::to_string(a.len_max) + " entries";
        if (a.like >= 0 && v.ints.size() != out[a.like].ints.size())
          return name + " " + list_str(v.ints) + " and " + table[a.like].name + " " + list_str(out[a.like].ints) +
                 " differ in length";
        for (int64_t x : v.ints)
          if (x < a.lo || x > a.hi) return name + " " + list_str(v.ints) + " entries must be " + a.must;
        break;
      }
    }
    out[i] = v;
  }
  for (size_t i = 0; i < N; ++i) {
    const op_table::Attr& a = table[i];
    if (a.needs >= 0 && out[i].i != a.int_default && out[a.needs].i != a.needs_value)
      return std::string(a.name) + " " + std::to_string(out[i].i) + " needs " + table[a.needs].name + "=" +
             std::to_string(a.needs_value);
  }
  return "";
}

bool io_dtype(ONNXTensorElementDataType t, attnopt_dtype* out) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: *out = ATTNOPT_F32; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: *out = ATTNOPT_F16; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: *out = ATTNOPT_BF16; return true;
    default: return false;
  }
}

bool mask_kind(ONNXTensorElementDataType t, attnopt_mask_type* out) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: *out = ATTNOPT_MASK_BOOL; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: *out = ATTNOPT_MASK_F32; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: *out = ATTNOPT_MASK_F16; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: *out = ATTNOPT_MASK_BF16; return true;
    default: return false;
  }
}

// Element count of a shape (dims >= 0), or -1 when it is not representable.
// An empty tensor counts 0 whatever its other dims, which may then multiply
// past INT64_MAX (nothing of it is ever addressed).
int64_t numel(const std::vector<int64_t>& s) {
  for (int64_t d : s)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : s)
    if (!attnopt::mul_within(n, d, attnopt::kInt64Max, &n)) return -1;
  return n;
}

// Contiguous strides of a rank-4 shape; all 0 for an empty tensor, which is
// never addressed (and whose other dims may multiply past INT64_MAX).
void contiguous4(const std::vector<int64_t>& s, int64_t out[4]) {
  for (int a = 0; a < 4; ++a) out[a] = 0;
  if (numel(s) <= 0) return;
  int64_t n = 1;
  for (int a = 3; a >= 0; --a) {
    out[a] = n;
    n *= s[a];  // numel(s) fits, so every partial product does
  }
}

// (B, H, N, D) of a rank-3 (one head) or rank-4 tensor, and its strides.
struct Dims4 {
  int64_t b, h, n, d;
  int64_t stride[4];
};

bool dims4(const std::vector<int64_t>& s, Dims4* out) {
  if (numel(s) < 0) return false;
  int64_t st[4] = {0, 0, 0, 0};
  for (int64_t d : s)
    if (d < 0) return false;
  if (s.size() == 4) {
    contiguous4(s, st);
    *out = {s[0], s[1], s[2], s[3], {st[0], st[1], st[2], st[3]}};
    return true;
  }
  if (s.size() == 3) {
    contiguous4({s[0], 1, s[1], s[2]}, st);
    *out = {s[0], 1, s[1], s[2], {st[0], 0, st[2], st[3]}};  // one head: head stride 0
    return true;
  }
  return false;
}

struct Operands {
  attnopt_dtype dtype;
  Dims4 q, k, v;
};

// Q, K and V: one float type, rank 3 or 4, consistent batch, heads, lengths
// and head dims 1..256; *out_shape is Q's shape with V's head dim.
std::string read_qkv(const InputInfo& q, const InputInfo& k, const InputInfo& v, Operands* ops,
                     std::vector<int64_t>* out_shape) {
  if (!q.present || !k.present || !v.present) return "Q, K and V are required";
  if (!io_dtype(q.type, &ops->dtype) || k.type != q.type || v.type != q.type)
    return "Q, K, V must all be float, float16 or bfloat16";
  if (!dims4(q.shape, &ops->q) || !dims4(k.shape, &ops->k) || !dims4(v.shape, &ops->v))
    return "Q, K, V must be rank 3 (B,N,D) or rank 4 (B,H,N,D) of representable size; got Q" +
           shape_str(q.shape) + " K" + shape_str(k.shape) + " V" + shape_str(v.shape);
  const Dims4 &Q = ops->q, &K = ops->k, &V = ops->v;
  if (K.b != Q.b || V.b != Q.b || K.h != V.h || K.n != V.n || K.d != Q.d || K.h < 1 || Q.h % K.h != 0)
    return "inconsistent shapes Q" + shape_str(q.shape) + " K" + shape_str(k.shape) + " V" +
           shape_str(v.shape) + " (need K,V batch = Q batch, K.D = Q.D, Hq a multiple of Hkv)";
  if (Q.d < ATTNOPT_HEAD_DIM_MIN || Q.d > ATTNOPT_HEAD_DIM_MAX || V.d < ATTNOPT_HEAD_DIM_MIN ||
      V.d > ATTNOPT_HEAD_DIM_MAX)
    return "head dims must be " + std::to_string(ATTNOPT_HEAD_DIM_MIN) + ".." + std::to_string(ATTNOPT_HEAD_DIM_MAX) +
           ", got Dqk " + std::to_string(Q.d) + " Dv " + std::to_string(V.d);
  *out_shape = q.shape;
  out_shape->back() = V.d;
  if (numel(*out_shape) < 0) return "output " + shape_str(*out_shape) + " is not representable";
  return "";
}

void copy4(const int64_t src[4], int64_t dst[4]) { std::memcpy(dst, src, 4 * sizeof(int64_t)); }

}  // namespace

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Absent: return "absent";
    case AttrType::Int: return "INT";
    case AttrType::Float: return "FLOAT";
    case AttrType::String: return "STRING";
    case AttrType::Ints: return "INTS";
    case AttrType::Floats: return "FLOATS";
    case AttrType::EmptyOrOther: return "an empty list, a tensor or a graph";
    case AttrType::Ambiguous: return "of more than one type at once";
  }
  return "of an unknown type";
}

std::string parse_flash_attrs(const AttrLookup& attr, FlashAttrs* out) {
  namespace f = op_table::flash;
  AttrValue v[f::kCount];
  const std::string err = parse_table(attr, f::kAttrs, v);
  if (!err.empty()) return err;
  out->has_scale = v[f::kScale].type != AttrType::Absent;  // absent: 1/sqrt(Dqk)
  out->scale = v[f::kScale].f;
  out->causal = v[f::kCausal].i == 1;
  out->sliding_window = v[f::kSlidingWindow].i;
  out->empty_rows = v[f::kEmptyRows].i;
  out->mask_fill = v[f::kMaskFill].f;
  out->causal_fill = v[f::kCausalFill].f;
  out->fill_once = v[f::kFillOnce].i == 1;
  out->fill_round = v[f::kFillRound].i == 1;
  out->softcap = v[f::kSoftcap].f;
  out->mask_floor = v[f::kMaskFloor].f;  // -inf or <= 0 (op table)
  return "";
}

std::string parse_window_attrs(const AttrLookup& attr, WindowAttrs* out) {
  namespace w = op_table::window;
  AttrValue v[w::kCount];
  const std::string err = parse_table(attr, w::kAttrs, v);
  if (!err.empty()) return err;
  out->scale = v[w::kScale].f;
  out->spatial = v[w::kSpatialShape].ints;
  out->window = v[w::kWindow].ints;
  out->shift = v[w::kShift].ints;
  attnopt::WindowGeometry g;
  if (!attnopt::make_window_geometry(static_cast<int>(out->spatial.size()), out->spatial.data(), out->window.data(),
                                     out->shift.data(), &g))
    return "spatial_shape " + list_str(out->spatial) + " has more than " +
           std::to_string(attnopt::kInt64Max) + " tokens";
  return "";
}

namespace {

// The shared part of both ops' parameters from the checked operands (data
// pointers are set by the caller at run time).
attnopt_qkv qkv_from(const Operands& ops, const std::vector<int64_t>& out_shape) {
  attnopt_qkv s{};
  s.dtype = ops.dtype;
  s.batch = ops.q.b;
  s.heads_q = ops.q.h;
  s.heads_kv = ops.k.h;
  s.len_q = ops.q.n;
  s.len_k = ops.k.n;
  s.dim_qk = ops.q.d;
  s.dim_v = ops.v.d;
  copy4(ops.q.stride, s.q.stride);
  copy4(ops.k.stride, s.k.stride);
  copy4(ops.v.stride, s.v.stride);
  Dims4 o;
  dims4(out_shape, &o);
  copy4(o.stride, s.o_stride);
  return s;
}

}  // namespace

std::string flash_params_from(const FlashAttrs& a, const InputInfo& q, const InputInfo& k, const InputInfo& v,
                              const InputInfo& mask, attnopt_flash_params_v2* p, std::vector<int64_t>* out_shape,
                              bool* empty) {
  Operands ops;
  std::string err = read_qkv(q, k, v, &ops, out_shape);
  if (!err.empty()) return err;
  *p = attnopt_flash_params_v2{};
  p->qkv = qkv_from(ops, *out_shape);
  p->scale = a.has_scale ? a.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p->qkv.dim_qk)));
  p->causal = a.causal ? 1 : 0;
  p->window = a.sliding_window;
  p->empty_rows = static_cast<int>(a.empty_rows);
  p->mask_fill = a.mask_fill;
  p->causal_fill = a.causal_fill;
  p->fill_once = a.fill_once ? 1 : 0;
  p->fill_dtype = a.fill_round ? p->qkv.dtype : ATTNOPT_F32;
  p->softcap = a.softcap;
  p->mask_drop = std::isfinite(a.mask_floor) ? -a.mask_floor : 0.0f;
  if (mask.present) {
    if (!mask_kind(mask.type, &p->mask_type))
      return "mask must be bool, float, float16 or bfloat16";
    // numpy broadcasting, right-aligned, against (B, Hq, Nq, Nk); never expanded.
    const int64_t target[4] = {p->qkv.batch, p->qkv.heads_q, p->qkv.len_q, p->qkv.len_k};
    const size_t r = mask.shape.size();
    if (r < op_table::kMaskRankMin || r > op_table::kMaskRankMax)
      return "mask must have rank " + std::to_string(op_table::kMaskRankMin) + ".." +
             std::to_string(op_table::kMaskRankMax) + ", got " + shape_str(mask.shape);
    const std::vector<int64_t> full = {target[0], target[1], target[2], target[3]};
    for (int ax = 0; ax < 4; ++ax) {
      const int64_t dim = ax >= static_cast<int>(4 - r) ? mask.shape[ax - (4 - r)] : 1;
      if (dim != 1 && dim != target[ax])
        return "mask " + shape_str(mask.shape) + " does not broadcast to (B,Hq,Nq,Nk) = " +
               shape_str(full);
    }
    int64_t n = 1;  // the mask's own contiguous strides; broadcast axes read at stride 0
    if (numel(mask.shape) > 0)
      for (int ax = 3; ax >= 0; --ax) {
        const int64_t dim = ax >= static_cast<int>(4 - r) ? mask.shape[ax - (4 - r)] : 1;
        p->mask_stride[ax] = dim == 1 ? 0 : n;
        n *= dim;  // the mask's size fits, so every partial product does
      }
  }
  *empty = numel(*out_shape) == 0;
  return "";
}

std::string window_params_from(const WindowAttrs& a, const InputInfo& q, const InputInfo& k, const InputInfo& v,
                               attnopt_window_params_v2* p, std::vector<int64_t>* out_shape, bool* empty) {
  Operands ops;
  std::string err = read_qkv(q, k, v, &ops, out_shape);
  if (!err.empty()) return err;
  if (ops.k.n != ops.q.n) return "Q and K must have the same number of tokens";
  *p = attnopt_window_params_v2{};
  p->qkv = qkv_from(ops, *out_shape);
  p->ndim = static_cast<int>(a.spatial.size());
  int64_t tokens = 0;
  if (p->ndim < 1 || p->ndim > ATTNOPT_WINDOW_AXES_MAX || a.window.size() != a.spatial.size() || a.shift.size() != a.spatial.size() ||
      !attnopt::product_within(a.spatial.data(), p->ndim, attnopt::kInt64Max, &tokens))
    return "spatial_shape " + list_str(a.spatial) + " is not a representable grid";
  for (int ax = 0; ax < p->ndim; ++ax) {
    p->grid[ax] = a.spatial[ax];
    p->window[ax] = a.window[ax];
    p->shift[ax] = a.shift[ax];
  }
  if (tokens != p->qkv.len_q)
    return "spatial_shape " + list_str(a.spatial) + " has " + std::to_string(tokens) +
           " tokens but Q has " + std::to_string(p->qkv.len_q);
  p->scale = a.scale;
  *empty = numel(*out_shape) == 0;
  return "";
}

AttrValue read_attr(const OrtApi* api, const OrtKernelInfo* info, const char* name) {
  // ONNX Runtime's scalar getters check the field type; its list getters
  // succeed for any attribute present (with that list's entries, often
  // none), so together they tell absent, each type, and a proto that fills
  // several fields. A failure message naming a type mismatch also counts as
  // present, in case a runtime checks list types too.
  bool present = false;
  auto ok = [&](OrtStatus* st) {
    if (!st) return true;
    const char* msg = api->GetErrorMessage(st);
    if (msg && (std::strstr(msg, "don't match") || std::strstr(msg, "is of type"))) present = true;
    api->ReleaseStatus(st);
    return false;
  };
  AttrValue v;
  int scalars = 0;
  int64_t i = 0;
  float f = 0.0f;
  size_t len = 0, ni = 0, nf = 0;
  if (ok(api->KernelInfoGetAttribute_int64(info, name, &i))) {
    v.type = AttrType::Int;
    v.i = i;
    ++scalars;
  }
  if (ok(api->KernelInfoGetAttribute_float(info, name, &f))) {
    v.type = AttrType::Float;
    v.f = f;
    ++scalars;
  }
  if (ok(api->KernelInfoGetAttribute_string(info, name, nullptr, &len))) {
    v.type = AttrType::String;
    ++scalars;
  }
  const bool ints = ok(api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &ni));
  const bool floats = ok(api->KernelInfoGetAttributeArray_float(info, name, nullptr, &nf));
  present = present || scalars > 0 || ints || floats;
  const int lists = (ni > 0) + (nf > 0);
  if (scalars + lists > 1) return AttrValue{AttrType::Ambiguous, 0, 0.0f, {}};
  if (scalars == 1) return v;
  if (ni > 0) {
    v.type = AttrType::Ints;
    v.ints.resize(ni);
    size_t n = ni;
    if (!ok(api->KernelInfoGetAttributeArray_int64(info, name, v.ints.data(), &n)) || n != ni)
      return AttrValue{AttrType::Ambiguous, 0, 0.0f, {}};
    return v;
  }
  if (nf > 0) return AttrValue{AttrType::Floats, 0, 0.0f, {}};
  return AttrValue{present ? AttrType::EmptyOrOther : AttrType::Absent, 0, 0.0f, {}};
}

std::string node_name(const OrtApi* api, const OrtKernelInfo* info) {
  size_t size = 0;
  OrtStatus* st = api->KernelInfo_GetNodeName(info, nullptr, &size);
  if (st || size == 0) {
    if (st) api->ReleaseStatus(st);
    return "";
  }
  std::string name(size, '\0');
  st = api->KernelInfo_GetNodeName(info, &name[0], &size);
  if (st) {
    api->ReleaseStatus(st);
    return "";
  }
  name.resize(std::strlen(name.c_str()));
  return name;
}

}  // namespace attnopt_ort
