// ONNX Runtime for the ORT tests, without linking it: dlopen'd, the custom-op
// library registered through RegisterCustomOpsLibrary_V2, models run from
// bytes. Session creation and Run errors both come back in Result, so tests
// can expect a refusal at either stage.
#ifndef ATTNOPT_TESTS_ORT_RUNNER_H_
#define ATTNOPT_TESTS_ORT_RUNNER_H_

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "onnx_proto.h"
#include "onnxruntime_c_api.h"

namespace attnopt_test {

inline const OrtApi*& ort_api() {
  static const OrtApi* api = nullptr;
  return api;
}

inline void check_ort(OrtStatus* st, const char* what) {
  if (!st) return;
  std::fprintf(stderr, "ONNX Runtime error in %s: %s\n", what, ort_api()->GetErrorMessage(st));
  ort_api()->ReleaseStatus(st);
  std::exit(1);
}

// The ORT library from argv[2], ATTNOPT_ORT_LIB or ONNXRUNTIME_LIB; returns
// false (the caller skips) when none is given, exits when it cannot load.
inline bool load_ort(int argc, char** argv) {
  std::string ort = argc > 2 ? argv[2] : "";
  if (ort.empty() && std::getenv("ATTNOPT_ORT_LIB")) ort = std::getenv("ATTNOPT_ORT_LIB");
  if (ort.empty() && std::getenv("ONNXRUNTIME_LIB")) ort = std::getenv("ONNXRUNTIME_LIB");
  if (argc < 2 || ort.empty()) return false;
  void* lib = dlopen(ort.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "cannot load %s: %s\n", ort.c_str(), dlerror());
    std::exit(1);
  }
  using GetApiBase = const OrtApiBase* (*)();
  auto get_base = reinterpret_cast<GetApiBase>(dlsym(lib, "OrtGetApiBase"));
  if (!get_base) {
    std::fprintf(stderr, "%s has no OrtGetApiBase\n", ort.c_str());
    std::exit(1);
  }
  const OrtApiBase* base = get_base();
  std::printf("ONNX Runtime %s from %s\n", base->GetVersionString(), ort.c_str());
  ort_api() = base->GetApi(ORT_API_VERSION);
  if (!ort_api()) {
    std::fprintf(stderr, "ONNX Runtime does not offer C API version %d\n", ORT_API_VERSION);
    std::exit(1);
  }
  return true;
}

inline size_t elem_size(int onnx) {
  return onnx == onnx_proto::FLOAT ? 4 : onnx == onnx_proto::BOOL ? 1 : onnx == 7 /* INT64 */ ? 8 : 2;
}

struct Feed {
  onnx_proto::Input info;
  void* data;
};

struct Result {
  std::string session_error;  // non-empty when the session could not be created
  std::string error;          // non-empty when Run failed (or the session)
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

class Runner {
 public:
  // Refusals the hostile tests expect are logged at ERROR: they pass FATAL.
  explicit Runner(const char* custom_lib, int intra_op_threads = 1,
                  OrtLoggingLevel log_level = ORT_LOGGING_LEVEL_WARNING) {
    const OrtApi* o = ort_api();
    check_ort(o->CreateEnv(log_level, "attnopt-test", &env_), "CreateEnv");
    check_ort(o->CreateSessionOptions(&opts_), "CreateSessionOptions");
    check_ort(o->SetIntraOpNumThreads(opts_, intra_op_threads), "SetIntraOpNumThreads");
    check_ort(o->RegisterCustomOpsLibrary_V2(opts_, custom_lib), "RegisterCustomOpsLibrary_V2");
    check_ort(o->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem_), "CreateCpuMemoryInfo");
  }
  ~Runner() {
    ort_api()->ReleaseMemoryInfo(mem_);
    ort_api()->ReleaseSessionOptions(opts_);
    ort_api()->ReleaseEnv(env_);
  }

  // Creates a session for model, feeds it and fetches output; also_fetch
  // names other outputs computed in the same run (and dropped).
  Result run(const std::string& model, const std::vector<Feed>& feeds, const std::string& output,
             const std::vector<std::string>& also_fetch = {}) {
    const OrtApi* o = ort_api();
    Result r;
    OrtSession* session = nullptr;
    if (OrtStatus* st = o->CreateSessionFromArray(env_, model.data(), model.size(), opts_, &session)) {
      r.session_error = r.error = o->GetErrorMessage(st);
      o->ReleaseStatus(st);
      return r;
    }
    std::vector<OrtValue*> values;
    std::vector<const char*> names;
    for (const Feed& f : feeds) {
      size_t n = 1;
      for (int64_t d : f.info.shape) n *= static_cast<size_t>(d);
      OrtValue* v = nullptr;
      check_ort(o->CreateTensorWithDataAsOrtValue(mem_, f.data, n * elem_size(f.info.elem_type), f.info.shape.data(),
                                                  f.info.shape.size(),
                                                  static_cast<ONNXTensorElementDataType>(f.info.elem_type), &v),
                "CreateTensorWithDataAsOrtValue");
      values.push_back(v);
      names.push_back(f.info.name.c_str());
    }
    std::vector<const char*> out_names;
    for (const std::string& n : also_fetch) out_names.push_back(n.c_str());
    out_names.push_back(output.c_str());
    std::vector<OrtValue*> outs(out_names.size(), nullptr);
    if (OrtStatus* st = o->Run(session, nullptr, names.data(), values.data(), values.size(), out_names.data(),
                               out_names.size(), outs.data())) {
      r.error = o->GetErrorMessage(st);
      o->ReleaseStatus(st);
    } else {
      for (size_t i = 0; i + 1 < outs.size(); ++i) o->ReleaseValue(outs[i]);
      OrtValue* out = outs.back();
      OrtTensorTypeAndShapeInfo* info = nullptr;
      check_ort(o->GetTensorTypeAndShape(out, &info), "GetTensorTypeAndShape");
      size_t rank = 0, count = 0;
      check_ort(o->GetTensorElementType(info, &r.type), "GetTensorElementType");
      check_ort(o->GetDimensionsCount(info, &rank), "GetDimensionsCount");
      r.shape.resize(rank);
      check_ort(o->GetDimensions(info, r.shape.data(), rank), "GetDimensions");
      check_ort(o->GetTensorShapeElementCount(info, &count), "GetTensorShapeElementCount");
      o->ReleaseTensorTypeAndShapeInfo(info);
      void* data = nullptr;
      check_ort(o->GetTensorMutableData(out, &data), "GetTensorMutableData");
      const size_t bytes = count * elem_size(static_cast<int>(r.type));
      if (bytes) r.bytes.assign(static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + bytes);
      o->ReleaseValue(out);
    }
    for (OrtValue* v : values) o->ReleaseValue(v);
    o->ReleaseSession(session);
    return r;
  }

 private:
  OrtEnv* env_ = nullptr;
  OrtSessionOptions* opts_ = nullptr;
  OrtMemoryInfo* mem_ = nullptr;
};

}  // namespace attnopt_test

#endif  // ATTNOPT_TESTS_ORT_RUNNER_H_
