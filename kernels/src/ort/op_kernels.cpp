#include "ort/op_kernels.h"

#include <cmath>
#include <cstring>
#include <string>
#include <thread>

#include "attnopt/attnopt.h"

namespace attnopt_ort {
namespace {

const OrtApi* g_api = nullptr;

OrtStatusPtr error(const std::string& msg) {
  return g_api->CreateStatus(ORT_INVALID_ARGUMENT, ("attnopt: " + msg).c_str());
}

#define RETURN_IF_ORT_ERROR(expr)        \
  do {                                   \
    OrtStatusPtr _st = (expr);           \
    if (_st) return _st;                 \
  } while (0)

struct TensorView {
  const OrtValue* value = nullptr;  // null for an omitted optional input
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
  void* data = nullptr;
};

OrtStatusPtr view_input(OrtKernelContext* ctx, size_t index, TensorView* t) {
  size_t count = 0;
  RETURN_IF_ORT_ERROR(g_api->KernelContext_GetInputCount(ctx, &count));
  if (index >= count) return nullptr;
  RETURN_IF_ORT_ERROR(g_api->KernelContext_GetInput(ctx, index, &t->value));
  if (!t->value) return nullptr;
  OrtTensorTypeAndShapeInfo* info = nullptr;
  RETURN_IF_ORT_ERROR(g_api->GetTensorTypeAndShape(t->value, &info));
  size_t rank = 0;
  OrtStatusPtr st = g_api->GetTensorElementType(info, &t->type);
  if (!st) st = g_api->GetDimensionsCount(info, &rank);
  if (!st) {
    t->shape.resize(rank);
    st = g_api->GetDimensions(info, t->shape.data(), rank);
  }
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  if (st) return st;
  // Inputs are only read; the C API offers mutable access alone in older versions.
  return g_api->GetTensorMutableData(const_cast<OrtValue*>(t->value), &t->data);
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

bool io_dtype(ONNXTensorElementDataType t, attnopt_dtype* out) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: *out = ATTNOPT_F32; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: *out = ATTNOPT_F16; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: *out = ATTNOPT_BF16; return true;
    default: return false;
  }
}

// (B, H, N, D) and contiguous strides of a rank-3 (H = 1) or rank-4 tensor.
struct Dims4 {
  int64_t b, h, n, d;
  int64_t stride[4];
};

bool dims4(const std::vector<int64_t>& s, Dims4* out) {
  if (s.size() == 4) {
    *out = {s[0], s[1], s[2], s[3], {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1}};
    return true;
  }
  if (s.size() == 3) {
    *out = {s[0], 1, s[1], s[2], {s[1] * s[2], 0, s[2], 1}};
    return true;
  }
  return false;
}

// Reads Q, K, V and allocates O; fills the shared part of the parameters.
struct Operands {
  attnopt_dtype dtype;
  Dims4 q, k, v;
  const void *qd, *kd, *vd;
  void* od;
  int64_t ostride[4];
};

OrtStatusPtr read_qkv(OrtKernelContext* ctx, const char* op, Operands* ops) {
  TensorView q, k, v;
  RETURN_IF_ORT_ERROR(view_input(ctx, 0, &q));
  RETURN_IF_ORT_ERROR(view_input(ctx, 1, &k));
  RETURN_IF_ORT_ERROR(view_input(ctx, 2, &v));
  const std::string name = op;
  if (!q.value || !k.value || !v.value) return error(name + ": Q, K and V are required");
  if (!io_dtype(q.type, &ops->dtype) || k.type != q.type || v.type != q.type)
    return error(name + ": Q, K, V must all be float, float16 or bfloat16");
  if (!dims4(q.shape, &ops->q) || !dims4(k.shape, &ops->k) || !dims4(v.shape, &ops->v))
    return error(name + ": Q, K, V must be rank 3 (B,N,D) or rank 4 (B,H,N,D); got Q" + shape_str(q.shape) +
                 " K" + shape_str(k.shape) + " V" + shape_str(v.shape));
  const Dims4 &Q = ops->q, &K = ops->k, &V = ops->v;
  if (K.b != Q.b || V.b != Q.b || K.h != V.h || K.n != V.n || K.d != Q.d || K.h < 1 || Q.h % K.h != 0)
    return error(name + ": inconsistent shapes Q" + shape_str(q.shape) + " K" + shape_str(k.shape) + " V" +
                 shape_str(v.shape) + " (need K,V batch = Q batch, K.D = Q.D, Hq a multiple of Hkv)");
  if (Q.d < 1 || Q.d > 256 || V.d < 1 || V.d > 256)
    return error(name + ": head dims must be 1..256, got Dqk " + std::to_string(Q.d) + " Dv " + std::to_string(V.d));
  std::vector<int64_t> oshape = q.shape;
  oshape.back() = V.d;
  OrtValue* out = nullptr;
  RETURN_IF_ORT_ERROR(g_api->KernelContext_GetOutput(ctx, 0, oshape.data(), oshape.size(), &out));
  RETURN_IF_ORT_ERROR(g_api->GetTensorMutableData(out, &ops->od));
  Dims4 o;
  dims4(oshape, &o);
  std::memcpy(ops->ostride, o.stride, sizeof(o.stride));
  ops->qd = q.data;
  ops->kd = k.data;
  ops->vd = v.data;
  return nullptr;
}

void copy_strides(const Dims4& d, int64_t out[4]) { std::memcpy(out, d.stride, sizeof(d.stride)); }

OrtStatusPtr status_of(int rc, const char* op) {
  if (rc == ATTNOPT_OK) return nullptr;
  return g_api->CreateStatus(rc == ATTNOPT_ERR_INVALID_ARGUMENT ? ORT_INVALID_ARGUMENT : ORT_FAIL,
                             (std::string("attnopt: ") + op + ": " + attnopt_status_string(rc)).c_str());
}

// The CPU kernels run their parallel loops on the session's intra-op
// threads (KernelContext_ParallelFor), so intra_op_num_threads bounds them
// as it bounds ONNX Runtime's own kernels; attnopt's pool stays idle.
int ort_parallel_for(void* ctx, attnopt_parallel_body body, void* arg, size_t n) {
  OrtStatusPtr st = g_api->KernelContext_ParallelFor(static_cast<const OrtKernelContext*>(ctx), body, n, n, arg);
  if (!st) return 0;
  g_api->ReleaseStatus(st);
  return 1;
}

// Installs the session's threads for one CPU call on this thread.
class OnSessionThreads {
 public:
  explicit OnSessionThreads(OrtKernelContext* ctx) {
    attnopt_cpu_set_thread_runner(ort_parallel_for, ctx, static_cast<int>(std::thread::hardware_concurrency()));
  }
  ~OnSessionThreads() { attnopt_cpu_set_thread_runner(nullptr, nullptr, 0); }
};

OrtStatusPtr compute_flash(const Kernel& kern, OrtKernelContext* ctx) {
  Operands ops;
  RETURN_IF_ORT_ERROR(read_qkv(ctx, "FlashAttention", &ops));
  attnopt_flash_params p{};
  p.dtype = ops.dtype;
  p.batch = ops.q.b;
  p.heads_q = ops.q.h;
  p.heads_kv = ops.k.h;
  p.len_q = ops.q.n;
  p.len_k = ops.k.n;
  p.dim_qk = ops.q.d;
  p.dim_v = ops.v.d;
  p.q = {ops.qd, {}};
  p.k = {ops.kd, {}};
  p.v = {ops.vd, {}};
  copy_strides(ops.q, p.q.stride);
  copy_strides(ops.k, p.k.stride);
  copy_strides(ops.v, p.v.stride);
  p.o = ops.od;
  std::memcpy(p.o_stride, ops.ostride, sizeof(p.o_stride));
  p.scale = kern.has_scale ? kern.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.dim_qk)));
  p.causal = kern.causal != 0;
  p.window = kern.sliding_window;
  p.empty_rows = static_cast<int>(kern.empty_rows);
  p.mask_fill = kern.mask_fill;
  p.causal_fill = kern.causal_fill;
  p.fill_once = static_cast<int>(kern.fill_once);
  p.fill_dtype = kern.fill_round ? p.dtype : ATTNOPT_F32;

  TensorView m;
  RETURN_IF_ORT_ERROR(view_input(ctx, 3, &m));
  if (m.value) {
    switch (m.type) {
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: p.mask_type = ATTNOPT_MASK_BOOL; break;
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: p.mask_type = ATTNOPT_MASK_F32; break;
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: p.mask_type = ATTNOPT_MASK_F16; break;
      case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: p.mask_type = ATTNOPT_MASK_BF16; break;
      default: return error("FlashAttention: mask must be bool, float, float16 or bfloat16");
    }
    // numpy broadcasting, right-aligned, against (B, Hq, Nq, Nk); never expanded.
    const int64_t target[4] = {p.batch, p.heads_q, p.len_q, p.len_k};
    const size_t r = m.shape.size();
    if (r < 2 || r > 4) return error("FlashAttention: mask must have rank 2..4, got " + shape_str(m.shape));
    int64_t n = 1;
    for (int a = 3; a >= 0; --a) {
      const int64_t dim = a >= static_cast<int>(4 - r) ? m.shape[a - (4 - r)] : 1;
      if (dim != 1 && dim != target[a])
        return error("FlashAttention: mask " + shape_str(m.shape) + " does not broadcast to (B,Hq,Nq,Nk) = " +
                     shape_str({target[0], target[1], target[2], target[3]}));
      p.mask_stride[a] = dim == 1 ? 0 : n;
      n *= dim;
    }
    p.mask = m.data;
  }
  if (kern.cuda) return cuda_flash(kern, ctx, p);
  OnSessionThreads threads(ctx);
  return status_of(attnopt_cpu_flash_attention_fwd(&p), "FlashAttention");
}

OrtStatusPtr compute_window(const Kernel& kern, OrtKernelContext* ctx) {
  Operands ops;
  RETURN_IF_ORT_ERROR(read_qkv(ctx, "WindowAttention", &ops));
  if (ops.k.n != ops.q.n) return error("WindowAttention: Q and K must have the same number of tokens");
  attnopt_window_params p{};
  p.dtype = ops.dtype;
  p.batch = ops.q.b;
  p.heads_q = ops.q.h;
  p.heads_kv = ops.k.h;
  p.len = ops.q.n;
  p.dim_qk = ops.q.d;
  p.dim_v = ops.v.d;
  p.q = {ops.qd, {}};
  p.k = {ops.kd, {}};
  p.v = {ops.vd, {}};
  copy_strides(ops.q, p.q.stride);
  copy_strides(ops.k, p.k.stride);
  copy_strides(ops.v, p.v.stride);
  p.o = ops.od;
  std::memcpy(p.o_stride, ops.ostride, sizeof(p.o_stride));
  p.ndim = static_cast<int>(kern.spatial.size());
  int64_t prod = 1;
  for (int a = 0; a < p.ndim; ++a) {
    p.grid[a] = kern.spatial[a];
    p.window[a] = kern.window[a];
    p.shift[a] = kern.shift[a];
    prod *= kern.spatial[a];
  }
  if (prod != p.len)
    return error("WindowAttention: spatial_shape " + shape_str(kern.spatial) + " has " + std::to_string(prod) +
                 " tokens but Q has " + std::to_string(p.len));
  p.scale = kern.scale;
  if (kern.cuda) return cuda_window(kern, ctx, p);
  OnSessionThreads threads(ctx);
  return status_of(attnopt_cpu_window_attention_fwd(&p), "WindowAttention");
}

// Reads an int64 array attribute; *found is false when the node lacks it.
OrtStatusPtr ints_attr(const OrtKernelInfo* info, const char* name, std::vector<int64_t>* out, bool* found) {
  size_t n = 0;
  OrtStatusPtr st = g_api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &n);
  if (st) {
    g_api->ReleaseStatus(st);
    *found = false;
    return nullptr;
  }
  *found = true;
  out->resize(n);
  if (n == 0) return nullptr;
  return g_api->KernelInfoGetAttributeArray_int64(info, name, out->data(), &n);
}

// An optional scalar attribute, or fallback when the node lacks it.
int64_t int_attr(const OrtKernelInfo* info, const char* name, int64_t fallback) {
  int64_t v = fallback;
  OrtStatusPtr st = g_api->KernelInfoGetAttribute_int64(info, name, &v);
  if (st) {
    g_api->ReleaseStatus(st);
    v = fallback;
  }
  return v;
}

float float_attr(const OrtKernelInfo* info, const char* name, float fallback) {
  float v = fallback;
  OrtStatusPtr st = g_api->KernelInfoGetAttribute_float(info, name, &v);
  if (st) {
    g_api->ReleaseStatus(st);
    v = fallback;
  }
  return v;
}

}  // namespace

const OrtApi* api() { return g_api; }
void set_api(const OrtApi* a) { g_api = a; }

OrtStatusPtr create_kernel(const OpDef& def, const OrtKernelInfo* info, void** out) {
  auto* k = new Kernel{};
  k->kind = def.kind;
  k->cuda = def.cuda;
  k->node = node_name(info);
  OrtStatusPtr st = g_api->KernelInfoGetAttribute_float(info, "scale", &k->scale);
  k->has_scale = st == nullptr;
  if (st) g_api->ReleaseStatus(st);
  std::string err;
  if (def.kind == OpKind::Flash) {
    st = g_api->KernelInfoGetAttribute_int64(info, "causal", &k->causal);
    if (st) {  // optional, default 0
      g_api->ReleaseStatus(st);
      k->causal = 0;
    }
    st = g_api->KernelInfoGetAttribute_int64(info, "sliding_window", &k->sliding_window);
    if (st) {  // optional, default 0
      g_api->ReleaseStatus(st);
      k->sliding_window = 0;
    }
    if (k->sliding_window < 0 || (k->sliding_window > 0 && k->causal == 0))
      err = "FlashAttention: sliding_window must be >= 0 and needs causal=1";
    // Rows with no visible key: all optional; -inf fills and zero rows by default.
    k->empty_rows = int_attr(info, "empty_rows", 0);
    k->fill_once = int_attr(info, "fill_once", 0);
    k->fill_round = int_attr(info, "fill_round", 0);
    k->mask_fill = float_attr(info, "mask_fill", -INFINITY);
    k->causal_fill = float_attr(info, "causal_fill", -INFINITY);
    if (err.empty() && (k->empty_rows < 0 || k->empty_rows > 2))
      err = "FlashAttention: empty_rows must be 0 (zeros), 1 (literal) or 2 (literal, zeros where all -inf)";
    else if (err.empty() && ((k->fill_once != 0 && k->fill_once != 1) || (k->fill_round != 0 && k->fill_round != 1)))
      err = "FlashAttention: fill_once and fill_round must be 0 or 1";
    else if (err.empty() && (std::isnan(k->mask_fill) || std::isnan(k->causal_fill) || k->mask_fill == INFINITY ||
                             k->causal_fill == INFINITY))
      err = "FlashAttention: mask_fill and causal_fill must be -inf or finite";
  } else {
    bool has_spatial = false, has_window = false, has_shift = false;
    st = ints_attr(info, "spatial_shape", &k->spatial, &has_spatial);
    if (!st) st = ints_attr(info, "window", &k->window, &has_window);
    if (!st) st = ints_attr(info, "shift", &k->shift, &has_shift);
    if (st) {
      delete k;
      return st;
    }
    if (!has_shift) k->shift.assign(k->spatial.size(), 0);
    if (!k->has_scale) err = "WindowAttention needs the float attribute 'scale'";
    else if (!has_spatial || !has_window) err = "WindowAttention needs the int attributes 'spatial_shape' and 'window'";
    else if (k->spatial.empty() || k->spatial.size() > 3) err = "WindowAttention: spatial_shape must have 1 to 3 axes";
    else if (k->window.size() != k->spatial.size() || k->shift.size() != k->spatial.size())
      err = "WindowAttention: spatial_shape, window and shift must have the same length";
    for (size_t a = 0; err.empty() && a < k->spatial.size(); ++a)
      if (k->spatial[a] < 1 || k->window[a] < 1) err = "WindowAttention: spatial_shape and window must be >= 1";
  }
  if (!err.empty()) {
    delete k;
    return error(err);
  }
  *out = k;
  return nullptr;
}

OrtStatusPtr compute(void* kernel, OrtKernelContext* ctx) {
  const Kernel& k = *static_cast<Kernel*>(kernel);
  return k.kind == OpKind::Flash ? compute_flash(k, ctx) : compute_window(k, ctx);
}

void destroy_kernel(void* kernel) { delete static_cast<Kernel*>(kernel); }

OrtStatusPtr infer_shape(OrtShapeInferContext* ctx) {
  size_t inputs = 0;
  RETURN_IF_ORT_ERROR(g_api->ShapeInferContext_GetInputCount(ctx, &inputs));
  if (inputs < 3) return nullptr;
  // The context owns these infos: they are not released here.
  OrtTensorTypeAndShapeInfo *q = nullptr, *v = nullptr;
  RETURN_IF_ORT_ERROR(g_api->ShapeInferContext_GetInputTypeShape(ctx, 0, &q));
  RETURN_IF_ORT_ERROR(g_api->ShapeInferContext_GetInputTypeShape(ctx, 2, &v));
  size_t qr = 0, vr = 0;
  RETURN_IF_ORT_ERROR(g_api->GetDimensionsCount(q, &qr));
  RETURN_IF_ORT_ERROR(g_api->GetDimensionsCount(v, &vr));
  if (qr < 3 || qr > 4 || vr < 3 || vr > 4) return nullptr;  // compute() reports the error
  std::vector<int64_t> qd(qr), vd(vr);
  std::vector<const char*> qs(qr), vs(vr);
  RETURN_IF_ORT_ERROR(g_api->GetDimensions(q, qd.data(), qr));
  RETURN_IF_ORT_ERROR(g_api->GetDimensions(v, vd.data(), vr));
  RETURN_IF_ORT_ERROR(g_api->GetSymbolicDimensions(q, qs.data(), qr));
  RETURN_IF_ORT_ERROR(g_api->GetSymbolicDimensions(v, vs.data(), vr));
  ONNXTensorElementDataType type;
  RETURN_IF_ORT_ERROR(g_api->GetTensorElementType(q, &type));
  qd.back() = vd.back();
  qs.back() = vs.back();
  for (size_t i = 0; i < qr; ++i)
    if (qd[i] < 0 && (!qs[i] || !qs[i][0])) return nullptr;  // an unnamed unknown dim: leave the shape open
  OrtTensorTypeAndShapeInfo* out = nullptr;
  RETURN_IF_ORT_ERROR(g_api->CreateTensorTypeAndShapeInfo(&out));
  OrtStatusPtr st = g_api->SetTensorElementType(out, type);
  if (!st) st = g_api->SetDimensions(out, qd.data(), qr);
  if (!st) st = g_api->SetSymbolicDimensions(out, qs.data(), qr);
  if (!st) st = g_api->ShapeInferContext_SetOutputTypeShape(ctx, 0, out);
  g_api->ReleaseTensorTypeAndShapeInfo(out);
  return st;
}

}  // namespace attnopt_ort
