// Thin C layer over the ONNX Runtime C API, loaded with dlopen at run time.
//
// The official header is not included: only the handful of entry points the
// Go side needs are declared here. `const OrtApi*` is treated as a table of
// function pointers; each entry is called through its slot index in
// `struct OrtApi` (ORT only ever appends to that struct, so the indices are
// stable). abi_test.go re-derives every index below from the header shipped
// with github.com/yalue/onnxruntime_go.
#ifndef ATTNOPT_ORT_CAPI_H
#define ATTNOPT_ORT_CAPI_H

#include <stddef.h>
#include <stdint.h>

// The C API version requested from the library (ORT 1.24).
#define AO_API_VERSION 24

// Slot indices in struct OrtApi (API version 24).
enum {
  AO_IDX_GetErrorMessage = 2,
  AO_IDX_CreateEnv = 3,
  AO_IDX_CreateSessionFromArray = 8,
  AO_IDX_Run = 9,
  AO_IDX_CreateSessionOptions = 10,
  AO_IDX_SetSessionGraphOptimizationLevel = 23,
  AO_IDX_SetIntraOpNumThreads = 24,
  AO_IDX_SetInterOpNumThreads = 25,
  AO_IDX_SessionGetInputCount = 30,
  AO_IDX_SessionGetOutputCount = 31,
  AO_IDX_SessionGetInputTypeInfo = 33,
  AO_IDX_SessionGetOutputTypeInfo = 34,
  AO_IDX_SessionGetInputName = 36,
  AO_IDX_SessionGetOutputName = 37,
  AO_IDX_CreateTensorWithDataAsOrtValue = 49,
  AO_IDX_IsTensor = 50,
  AO_IDX_GetTensorMutableData = 51,
  AO_IDX_CastTypeInfoToTensorInfo = 55,
  AO_IDX_GetOnnxTypeFromTypeInfo = 56,
  AO_IDX_GetTensorElementType = 60,
  AO_IDX_GetDimensionsCount = 61,
  AO_IDX_GetDimensions = 62,
  AO_IDX_GetSymbolicDimensions = 63,
  AO_IDX_GetTensorTypeAndShape = 65,
  AO_IDX_CreateCpuMemoryInfo = 69,
  AO_IDX_AllocatorFree = 76,
  AO_IDX_GetAllocatorWithDefaultOptions = 78,
  AO_IDX_ReleaseEnv = 92,
  AO_IDX_ReleaseStatus = 93,
  AO_IDX_ReleaseMemoryInfo = 94,
  AO_IDX_ReleaseSession = 95,
  AO_IDX_ReleaseValue = 96,
  AO_IDX_ReleaseTypeInfo = 98,
  AO_IDX_ReleaseTensorTypeAndShapeInfo = 99,
  AO_IDX_ReleaseSessionOptions = 100,
  AO_IDX_GetAvailableProviders = 125,
  AO_IDX_ReleaseAvailableProviders = 126,
  AO_IDX_AddSessionConfigEntry = 130,
  AO_IDX_RegisterCustomOpsLibrary_V2 = 228,
};

// Opaque ORT handles: only ever passed back to the library.
typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtSession OrtSession;
typedef struct OrtAllocator OrtAllocator;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtValue OrtValue;
typedef struct OrtRunOptions OrtRunOptions;

// ao_load dlopens path, resolves OrtGetApiBase and asks for API version
// AO_API_VERSION. On success it returns 0 and sets *version to the
// library's version string (owned by the library). On failure it returns
// nonzero and sets *err to a malloc'ed message.
int ao_load(const char* path, const char** version, char** err);

// Every wrapper below returns NULL on success or a malloc'ed error message
// (the OrtStatus is released here).
char* ao_create_env(int log_level, const char* logid, OrtEnv** out);
void ao_release_env(OrtEnv* env);

char* ao_create_session_options(OrtSessionOptions** out);
char* ao_set_intra_threads(OrtSessionOptions* o, int n);
char* ao_set_inter_threads(OrtSessionOptions* o, int n);
char* ao_set_opt_level(OrtSessionOptions* o, int level);
char* ao_register_custom_ops(OrtSessionOptions* o, const char* path);
// ao_add_config sets a session configuration entry (AddSessionConfigEntry).
char* ao_add_config(OrtSessionOptions* o, const char* key, const char* value);
void ao_release_session_options(OrtSessionOptions* o);

char* ao_create_session(OrtEnv* env, const void* model, size_t len, OrtSessionOptions* o, OrtSession** out);
void ao_release_session(OrtSession* s);

// ao_io_count gives the number of inputs (output == 0) or outputs.
char* ao_io_count(OrtSession* s, int output, size_t* out);
// ao_io_name copies the name of input/output i into a malloc'ed string.
char* ao_io_name(OrtSession* s, int output, size_t i, char** out);
// ao_io_type describes input/output i. *is_tensor is 0 for non-tensors (the
// other results are then unset). dims gets *rank entries when *rank <= cap;
// symbolic or unknown dims are -1.
char* ao_io_type(OrtSession* s, int output, size_t i, int* is_tensor, int* elem, size_t* rank, int64_t* dims, size_t cap);

char* ao_create_cpu_memory_info(OrtMemoryInfo** out);
void ao_release_memory_info(OrtMemoryInfo* m);

char* ao_create_tensor(OrtMemoryInfo* m, void* data, size_t len, const int64_t* shape, size_t rank, int elem, OrtValue** out);
void ao_release_value(OrtValue* v);

char* ao_run(OrtSession* s, const char* const* in_names, OrtValue* const* ins, size_t n_in, const char* const* out_names, size_t n_out,
             OrtValue** outs);

// ao_tensor_info describes a tensor value; dims gets *rank entries when
// *rank <= cap. *data points at its buffer (owned by the value).
char* ao_tensor_info(OrtValue* v, int* is_tensor, int* elem, size_t* rank, int64_t* dims, size_t cap, void** data);

// ao_providers copies the names of the execution providers this build of
// ONNX Runtime has (GetAvailableProviders) into one malloc'ed string,
// separated by commas.
char* ao_providers(char** out);

#endif
