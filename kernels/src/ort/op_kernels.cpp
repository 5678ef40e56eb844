#include "ort/op_kernels.h"

#include <string>
#include <thread>
#include <vector>

#include "attnopt/attnopt.h"

namespace attnopt_ort {
namespace {

const OrtApi* g_api = nullptr;

const char* op_name(OpKind k) { return k == OpKind::Flash ? "FlashAttention" : "WindowAttention"; }

// Every refusal names the op and the node: "attnopt: FlashAttention node
// 'attn3': attribute 'causal' is FLOAT, not INT".
OrtStatusPtr error(OpKind kind, const std::string& node, const std::string& msg,
                   OrtErrorCode code = ORT_INVALID_ARGUMENT) {
  const std::string m = std::string("attnopt: ") + op_name(kind) + (node.empty() ? "" : " node '" + node + "'") +
                        ": " + msg;
  return g_api->CreateStatus(code, m.c_str());
}

#define RETURN_IF_ORT_ERROR(expr)        \
  do {                                   \
    OrtStatusPtr _st = (expr);           \
    if (_st) return _st;                 \
  } while (0)

struct TensorView {
  const OrtValue* value = nullptr;  // null for an omitted optional input
  InputInfo info;
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
  t->info.present = true;
  OrtStatusPtr st = g_api->GetTensorElementType(info, &t->info.type);
  if (!st) st = g_api->GetDimensionsCount(info, &rank);
  if (!st) {
    t->info.shape.resize(rank);
    st = g_api->GetDimensions(info, t->info.shape.data(), rank);
  }
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  if (st) return st;
  // Inputs are only read; the C API offers mutable access alone in older versions.
  return g_api->GetTensorMutableData(const_cast<OrtValue*>(t->value), &t->data);
}

OrtStatusPtr status_of(int rc, const Kernel& k) {
  if (rc == ATTNOPT_OK) return nullptr;
  return error(k.kind, k.node, attnopt_status_string(rc), rc == ATTNOPT_ERR_INVALID_ARGUMENT ? ORT_INVALID_ARGUMENT : ORT_FAIL);
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
    // hardware_concurrency() costs system calls: read once, not per run.
    static const int width = static_cast<int>(std::thread::hardware_concurrency());
    attnopt_cpu_set_thread_runner(ort_parallel_for, ctx, width);
  }
  ~OnSessionThreads() { attnopt_cpu_set_thread_runner(nullptr, nullptr, 0); }
};

// Q, K, V (and the optional mask) of a run.
OrtStatusPtr view_inputs(OrtKernelContext* ctx, size_t n, TensorView* t) {
  for (size_t i = 0; i < n; ++i) RETURN_IF_ORT_ERROR(view_input(ctx, i, &t[i]));
  return nullptr;
}

OrtStatusPtr allocate_output(OrtKernelContext* ctx, const std::vector<int64_t>& shape, void** data) {
  OrtValue* out = nullptr;
  RETURN_IF_ORT_ERROR(g_api->KernelContext_GetOutput(ctx, 0, shape.data(), shape.size(), &out));
  return g_api->GetTensorMutableData(out, data);
}

OrtStatusPtr compute_flash(const Kernel& kern, OrtKernelContext* ctx) {
  TensorView in[4];
  RETURN_IF_ORT_ERROR(view_inputs(ctx, 4, in));
  attnopt_flash_params_v2 p{};
  std::vector<int64_t> oshape;
  bool empty = false;
  const std::string err = flash_params_from(kern.flash, in[0].info, in[1].info, in[2].info, in[3].info, &p, &oshape, &empty);
  if (!err.empty()) return error(kern.kind, kern.node, err);
  RETURN_IF_ORT_ERROR(allocate_output(ctx, oshape, &p.qkv.o));
  if (empty) return nullptr;  // no element to write
  p.qkv.q.data = in[0].data;
  p.qkv.k.data = in[1].data;
  p.qkv.v.data = in[2].data;
  p.mask = in[3].data;
  if (kern.cuda) return cuda_flash(kern, ctx, p);
  OnSessionThreads threads(ctx);
  return status_of(attnopt_cpu_flash_attention_fwd_v2(&p), kern);
}

OrtStatusPtr compute_window(const Kernel& kern, OrtKernelContext* ctx) {
  TensorView in[3];
  RETURN_IF_ORT_ERROR(view_inputs(ctx, 3, in));
  attnopt_window_params_v2 p{};
  std::vector<int64_t> oshape;
  bool empty = false;
  const std::string err = window_params_from(kern.window, in[0].info, in[1].info, in[2].info, &p, &oshape, &empty);
  if (!err.empty()) return error(kern.kind, kern.node, err);
  RETURN_IF_ORT_ERROR(allocate_output(ctx, oshape, &p.qkv.o));
  if (empty) return nullptr;  // no element to write
  p.qkv.q.data = in[0].data;
  p.qkv.k.data = in[1].data;
  p.qkv.v.data = in[2].data;
  if (kern.cuda) return cuda_window(kern, ctx, p);
  OnSessionThreads threads(ctx);
  return status_of(attnopt_cpu_window_attention_fwd_v2(&p), kern);
}

}  // namespace

const OrtApi* api() { return g_api; }
void set_api(const OrtApi* a) { g_api = a; }

// Attributes are parsed and range-checked here, when the session is
// created: a wrong type or value fails session creation, naming the node.
OrtStatusPtr create_kernel(const OpDef& def, const OrtKernelInfo* info, void** out) {
  auto* k = new Kernel{};
  k->kind = def.kind;
  k->cuda = def.cuda;
  k->node = node_name(g_api, info);
  const AttrLookup attr = [info](const char* name) { return read_attr(g_api, info, name); };
  const std::string err = def.kind == OpKind::Flash ? parse_flash_attrs(attr, &k->flash) : parse_window_attrs(attr, &k->window);
  if (!err.empty()) {
    const std::string node = k->node;
    delete k;
    return error(def.kind, node, err);
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
