// Kernel state and compute callbacks of the attnopt custom ops, written
// against the ONNX Runtime C API only (no C++ wrapper headers).
#ifndef ATTNOPT_ORT_OP_KERNELS_H_
#define ATTNOPT_ORT_OP_KERNELS_H_

#include <string>

#include "onnxruntime_c_api.h"
#include "ort/op_attrs.h"

namespace attnopt_ort {

enum class OpKind { Flash, Window };

// One registered kernel flavour: op, execution provider and I/O element type.
// OrtCustomOp comes first so ORT's op pointer converts back to this struct.
struct OpDef {
  OrtCustomOp base;
  OpKind kind;
  bool cuda;
  ONNXTensorElementDataType io_type;
  const char* name;
  const char* provider;
};

// A node's kernel: its attributes, parsed and range-checked once when the
// session is created (op_attrs.h), and its name for every error message.
struct Kernel {
  OpKind kind;
  bool cuda;
  std::string node;
  FlashAttrs flash;
  WindowAttrs window;
};

// The OrtApi chosen at registration (the newest one the runtime offers).
const OrtApi* api();
void set_api(const OrtApi* a);

OrtStatusPtr create_kernel(const OpDef& def, const OrtKernelInfo* info, void** out);
OrtStatusPtr compute(void* kernel, OrtKernelContext* ctx);
void destroy_kernel(void* kernel);
// Output shape = Q's shape with the last dim taken from V (type comes from ORT).
OrtStatusPtr infer_shape(OrtShapeInferContext* ctx);

// CUDA execution provider (cuda_ops.cpp): run the C ABI on parameters that
// compute() parsed and checked, on ORT's compute stream.
OrtStatusPtr cuda_flash(const Kernel& k, OrtKernelContext* ctx, const attnopt_flash_params_v2& p);
OrtStatusPtr cuda_window(const Kernel& k, OrtKernelContext* ctx, const attnopt_window_params_v2& p);

}  // namespace attnopt_ort

#endif  // ATTNOPT_ORT_OP_KERNELS_H_
