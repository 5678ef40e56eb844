// ONNX Runtime custom-op library for domain "attnopt": FlashAttention and
// WindowAttention on the CPU execution provider, and on the CUDA one when
// built with CUDA. Entry point: RegisterCustomOps (RegisterCustomOpsLibrary_V2).
//
// Each op is registered once per I/O element type (float, float16, bfloat16)
// with Q, K, V and the output typed, and the mask left UNDEFINED (any type,
// checked at run time). ORT merges the flavours into one schema. Declaring Q,
// K, V UNDEFINED too would not load: ORT requires exactly one UNDEFINED input
// when the output is UNDEFINED, and its fallback type inference would give the
// output the mask's type (bool).
#include <climits>
#include <cstring>
#include <vector>

#include "ort/op_kernels.h"

using attnopt_ort::OpDef;
using attnopt_ort::OpKind;

namespace {

const OpDef& def_of(const OrtCustomOp* op) { return *reinterpret_cast<const OpDef*>(op); }

void* ORT_API_CALL create_kernel_v1(const OrtCustomOp* op, const OrtApi*, const OrtKernelInfo* info) {
  void* kernel = nullptr;
  if (OrtStatusPtr st = attnopt_ort::create_kernel(def_of(op), info, &kernel)) attnopt_ort::api()->ReleaseStatus(st);
  return kernel;
}

OrtStatusPtr ORT_API_CALL create_kernel_v2(const OrtCustomOp* op, const OrtApi*, const OrtKernelInfo* info,
                                           void** kernel) {
  return attnopt_ort::create_kernel(def_of(op), info, kernel);
}

void ORT_API_CALL compute_v1(void* kernel, OrtKernelContext* ctx) {
  if (OrtStatusPtr st = attnopt_ort::compute(kernel, ctx)) attnopt_ort::api()->ReleaseStatus(st);
}

OrtStatusPtr ORT_API_CALL compute_v2(void* kernel, OrtKernelContext* ctx) { return attnopt_ort::compute(kernel, ctx); }

void ORT_API_CALL destroy(void* kernel) { attnopt_ort::destroy_kernel(kernel); }

const char* ORT_API_CALL get_name(const OrtCustomOp* op) { return def_of(op).name; }
const char* ORT_API_CALL get_provider(const OrtCustomOp* op) { return def_of(op).provider; }

size_t ORT_API_CALL input_count(const OrtCustomOp* op) { return def_of(op).kind == OpKind::Flash ? 4 : 3; }
ONNXTensorElementDataType ORT_API_CALL input_type(const OrtCustomOp* op, size_t i) {
  return i < 3 ? def_of(op).io_type : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;  // the mask: any type
}
OrtCustomOpInputOutputCharacteristic ORT_API_CALL input_characteristic(const OrtCustomOp*, size_t i) {
  return i == 3 ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
}
OrtMemType ORT_API_CALL input_memory(const OrtCustomOp*, size_t) { return OrtMemTypeDefault; }

size_t ORT_API_CALL output_count(const OrtCustomOp*) { return 1; }
ONNXTensorElementDataType ORT_API_CALL output_type(const OrtCustomOp* op, size_t) { return def_of(op).io_type; }
OrtCustomOpInputOutputCharacteristic ORT_API_CALL output_characteristic(const OrtCustomOp*, size_t) {
  return INPUT_OUTPUT_REQUIRED;
}

int ORT_API_CALL variadic_min_arity(const OrtCustomOp*) { return 1; }
int ORT_API_CALL variadic_homogeneity(const OrtCustomOp*) { return 1; }

OrtStatusPtr ORT_API_CALL infer(const OrtCustomOp*, OrtShapeInferContext* ctx) { return attnopt_ort::infer_shape(ctx); }

int ORT_API_CALL start_version(const OrtCustomOp*) { return 1; }
int ORT_API_CALL end_version(const OrtCustomOp*) { return INT_MAX; }

size_t ORT_API_CALL no_map(int** in, int** out) {
  *in = nullptr;
  *out = nullptr;
  return 0;
}
void ORT_API_CALL release_map(int*, int*) {}

OpDef make_def(OpKind kind, bool cuda, ONNXTensorElementDataType type) {
  OpDef d;
  std::memset(&d, 0, sizeof(d));
  OrtCustomOp& op = d.base;
  op.version = ORT_API_VERSION;
  op.CreateKernel = create_kernel_v1;
  op.GetName = get_name;
  op.GetExecutionProviderType = get_provider;
  op.GetInputType = input_type;
  op.GetInputTypeCount = input_count;
  op.GetOutputType = output_type;
  op.GetOutputTypeCount = output_count;
  op.KernelCompute = compute_v1;
  op.KernelDestroy = destroy;
  op.GetInputCharacteristic = input_characteristic;
  op.GetOutputCharacteristic = output_characteristic;
  op.GetInputMemoryType = input_memory;
  op.GetVariadicInputMinArity = variadic_min_arity;
  op.GetVariadicInputHomogeneity = variadic_homogeneity;
  op.GetVariadicOutputMinArity = variadic_min_arity;
  op.GetVariadicOutputHomogeneity = variadic_homogeneity;
  op.CreateKernelV2 = create_kernel_v2;
  op.KernelComputeV2 = compute_v2;
  op.InferOutputShapeFn = infer;
  op.GetStartVersion = start_version;
  op.GetEndVersion = end_version;
  op.GetMayInplace = no_map;
  op.ReleaseMayInplace = release_map;
  op.GetAliasMap = no_map;
  op.ReleaseAliasMap = release_map;
  d.kind = kind;
  d.cuda = cuda;
  d.io_type = type;
  d.name = kind == OpKind::Flash ? "FlashAttention" : "WindowAttention";
  d.provider = cuda ? "CUDAExecutionProvider" : "CPUExecutionProvider";
  return d;
}

// Built once; ORT keeps pointers to these for the life of the process.
const std::vector<OpDef>& all_defs() {
  static const std::vector<OpDef> defs = [] {
    std::vector<OpDef> v;
    const ONNXTensorElementDataType types[] = {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
                                               ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16};
#ifdef ATTNOPT_WITH_CUDA
    const bool eps[] = {false, true};
#else
    const bool eps[] = {false};
#endif
    for (bool cuda : eps)
      for (OpKind kind : {OpKind::Flash, OpKind::Window})
        for (auto t : types) v.push_back(make_def(kind, cuda, t));
    return v;
  }();
  return defs;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) OrtStatus* ORT_API_CALL
RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* base) {
  // Use the newest API the runtime offers, down to 17 (shape inference).
  const OrtApi* api = nullptr;
  for (uint32_t v = ORT_API_VERSION; v >= 17 && !api; --v) api = base->GetApi(v);
  if (!api) return nullptr;  // no way to build a status without an OrtApi
  attnopt_ort::set_api(api);
  OrtCustomOpDomain* domain = nullptr;
  if (OrtStatus* st = api->CreateCustomOpDomain("attnopt", &domain)) return st;
  for (const OpDef& d : all_defs())
    if (OrtStatus* st = api->CustomOpDomain_Add(domain, &d.base)) return st;
  // The domain must outlive every session using these options: it is kept.
  return api->AddCustomOpDomain(options, domain);
}
