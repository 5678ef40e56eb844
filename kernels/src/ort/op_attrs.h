// Attribute parsing and shape checks of the attnopt custom ops, apart from
// any compute: every execution provider's kernels (the CPU ones in
// op_kernels.cpp, a CUDA compute path) read attributes and inputs through
// these, so all refuse the same models with the same messages. Nothing here
// calls a kernel; only read_attr and node_name touch the ONNX Runtime API.
#ifndef ATTNOPT_ORT_OP_ATTRS_H_
#define ATTNOPT_ORT_OP_ATTRS_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnopt/attnopt.h"
#include "onnxruntime_c_api.h"

namespace attnopt_ort {

// What a node's attribute holds. Absent and wrong-typed are told apart, so
// `causal` stored as a FLOAT is refused instead of read as "not set".
enum class AttrType {
  Absent,
  Int,
  Float,
  String,
  Ints,
  Floats,
  EmptyOrOther,  // present, with no scalar and no list entries (an empty list, a tensor, a graph)
  Ambiguous,     // more than one of the fields above is filled
};
const char* attr_type_name(AttrType t);

struct AttrValue {
  AttrType type = AttrType::Absent;
  int64_t i = 0;
  float f = 0.0f;
  std::vector<int64_t> ints;
};

// Looks up one attribute of the node by name.
using AttrLookup = std::function<AttrValue(const char* name)>;

struct FlashAttrs {
  bool has_scale = false;  // absent: 1/sqrt(Dqk)
  float scale = 0.0f;
  bool causal = false;
  int64_t sliding_window = 0;  // 0 = none
  // Rows with no visible key (attnopt.h, attnopt_empty_rows;
  // docs/fully-masked-rows.md).
  int64_t empty_rows = 0;
  float mask_fill = -INFINITY, causal_fill = -INFINITY;
  bool fill_once = false, fill_round = false;
  float softcap = 0.0f;  // > 0: c * tanh(s / c) before the mask; 0 = none
  float mask_floor = -INFINITY;  // literal rows: a float mask value <= it drops the key
};

struct WindowAttrs {
  float scale = 0.0f;
  std::vector<int64_t> spatial, window, shift;
};

// Both return "" or why the attributes are refused. Types, defaults and
// ranges are the table's (op_table.h, generated from internal/opdef, and
// docs/ops.md), checked here once per session; WindowAttention's geometry
// must also be representable (common/window_geometry.h).
std::string parse_flash_attrs(const AttrLookup& attr, FlashAttrs* out);
std::string parse_window_attrs(const AttrLookup& attr, WindowAttrs* out);

// One input of a run as the kernel sees it.
struct InputInfo {
  bool present = false;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
};

// Checks the inputs' ranks, types, shapes and sizes against the op and
// fills every field of *p but the data pointers (contiguous strides,
// computed overflow-checked), and *out_shape. *empty is set when the output
// has no element (nothing to compute: an empty batch or no queries).
// Returns "" or why the inputs are refused.
std::string flash_params_from(const FlashAttrs& a, const InputInfo& q, const InputInfo& k, const InputInfo& v,
                              const InputInfo& mask, attnopt_flash_params_v2* p, std::vector<int64_t>* out_shape,
                              bool* empty);
std::string window_params_from(const WindowAttrs& a, const InputInfo& q, const InputInfo& k, const InputInfo& v,
                               attnopt_window_params_v2* p, std::vector<int64_t>* out_shape, bool* empty);

// ONNX Runtime side: the attribute `name` of the node being created, found
// by trying every typed getter (their failures do not say whether the
// attribute is absent or of another type), and the node's name.
AttrValue read_attr(const OrtApi* api, const OrtKernelInfo* info, const char* name);
std::string node_name(const OrtApi* api, const OrtKernelInfo* info);

}  // namespace attnopt_ort

#endif  // ATTNOPT_ORT_OP_ATTRS_H_
