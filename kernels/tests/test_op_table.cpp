// The ONNX Runtime library's attribute parsing and the C ABI check against
// internal/opdef's table: every conformance case (op_cases.inc, generated)
// is accepted or refused by parse_*_attrs as the Go schema and runtime
// accept or refuse it, and the head sizes at the table's limits pass the
// params check and the shape check while one past them does not.
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attnopt/attnopt.h"
#include "ort/op_attrs.h"
#include "ort/op_table.h"

namespace {

using attnopt_ort::AttrType;
using attnopt_ort::AttrValue;
using attnopt_ort::InputInfo;

int failures = 0;

struct OpCase {
  bool window;
  const char* name;
  bool ok;
  std::vector<std::pair<std::string, AttrValue>> attrs;
};

const std::vector<OpCase> kCases = {
#include "op_cases.inc"
};

void check_cases() {
  for (const OpCase& c : kCases) {
    attnopt_ort::AttrLookup lookup = [&c](const char* name) {
      for (const auto& a : c.attrs)
        if (a.first == name) return a.second;
      return AttrValue{};
    };
    std::string err;
    if (c.window) {
      attnopt_ort::WindowAttrs w;
      err = attnopt_ort::parse_window_attrs(lookup, &w);
    } else {
      attnopt_ort::FlashAttrs f;
      err = attnopt_ort::parse_flash_attrs(lookup, &f);
    }
    if (err.empty() != c.ok) {
      ++failures;
      std::fprintf(stderr, "FAIL %s \"%s\": %s, want %s\n", c.window ? "WindowAttention" : "FlashAttention", c.name,
                   err.empty() ? "accepted" : err.c_str(), c.ok ? "accepted" : "refused");
    }
  }
  std::printf("op table: %zu conformance cases\n", kCases.size());
}

// flash_params_from on Q, K (1, 1, 4, dqk) and V (1, 1, 4, dv), then the
// C ABI check of the params it filled (data pointers set to a dummy).
void check_dims(int64_t dqk, int64_t dv, bool ok) {
  const auto info = [](int64_t d) { return InputInfo{true, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {1, 1, 4, d}}; };
  attnopt_flash_params_v2 p{};
  std::vector<int64_t> out;
  bool empty = false;
  attnopt_ort::FlashAttrs a;
  const std::string err = attnopt_ort::flash_params_from(a, info(dqk), info(dqk), info(dv), InputInfo{}, &p, &out, &empty);
  bool checked = false;
  if (err.empty()) {
    static float dummy;
    p.qkv.q.data = p.qkv.k.data = p.qkv.v.data = &dummy;
    p.qkv.o = &dummy;
    checked = attnopt_flash_params_check_v2(&p) == ATTNOPT_OK;
  }
  // Past the ORT shape check, the C ABI check must agree with it.
  if (err.empty() != ok || (err.empty() && !checked)) {
    ++failures;
    std::fprintf(stderr, "FAIL head dims Dqk %lld Dv %lld: %s, params check %d, want %s\n", static_cast<long long>(dqk),
                 static_cast<long long>(dv), err.empty() ? "accepted" : err.c_str(), checked, ok ? "accepted" : "refused");
  }
  attnopt_flash_params raw{};  // the C ABI check alone, as a C caller fills it
  raw.dtype = ATTNOPT_F32;
  raw.batch = raw.heads_q = raw.heads_kv = 1;
  raw.dim_qk = dqk;
  raw.dim_v = dv;
  raw.scale = 1.0f;
  if ((attnopt_flash_params_check(&raw) == ATTNOPT_OK) != ok) {
    ++failures;
    std::fprintf(stderr, "FAIL params check of Dqk %lld Dv %lld: want %s\n", static_cast<long long>(dqk),
                 static_cast<long long>(dv), ok ? "accepted" : "refused");
  }
}

}  // namespace

int main() {
  check_cases();
  const int64_t lo = ATTNOPT_HEAD_DIM_MIN, hi = ATTNOPT_HEAD_DIM_MAX;
  check_dims(lo, lo, true);
  check_dims(hi, hi, true);
  check_dims(hi + 1, 4, false);
  check_dims(4, hi + 1, false);
  check_dims(lo - 1, 4, false);
  if (failures) std::fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
