// Kernel state and compute callbacks of the attnopt custom ops, written
// against the ONNX Runtime C API only (no C++ wrapper headers).
#ifndef ATTNOPT_ORT_OP_KERNELS_H_
#define ATTNOPT_ORT_OP_KERNELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "attnopt/attnopt.h"
#include "onnxruntime_c_api.h"

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

struct Kernel {
  OpKind kind;
  bool cuda;
  bool has_scale;  // FlashAttention: scale absent means 1/sqrt(Dqk)
  float scale;
  int64_t causal;
  int64_t sliding_window;  // FlashAttention: 0 = none
  // FlashAttention's rows with no visible key (attnopt.h, attnopt_empty_rows).
  int64_t empty_rows;
  float mask_fill, causal_fill;
  int64_t fill_once, fill_round;
  std::vector<int64_t> spatial, window, shift;  // WindowAttention
  std::string node;  // the graph node's name, for error messages
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
OrtStatusPtr cuda_flash(const Kernel& k, OrtKernelContext* ctx, const attnopt_flash_params& p);
OrtStatusPtr cuda_window(const Kernel& k, OrtKernelContext* ctx, const attnopt_window_params& p);
// The node's name from ORT ("" when the runtime cannot say).
std::string node_name(const OrtKernelInfo* info);

}  // namespace attnopt_ort

#endif  // ATTNOPT_ORT_OP_KERNELS_H_
