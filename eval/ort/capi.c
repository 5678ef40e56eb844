// See capi.h. Every call into ONNX Runtime goes through a typed
// function-pointer cast of one slot of the OrtApi table.
#include "capi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The two members of struct OrtApiBase, in order.
typedef struct {
  const void* (*get_api)(uint32_t version);
  const char* (*get_version_string)(void);
} ao_api_base;

typedef const ao_api_base* (*ao_get_api_base_fn)(void);

static void* g_lib;
static void* const* g_api;

// Function-pointer types of the slots used, named after the OrtApi member.
typedef const char* (*GetErrorMessage_t)(const OrtStatus*);
typedef void (*ReleaseStatus_t)(OrtStatus*);
typedef OrtStatus* (*CreateEnv_t)(int, const char*, OrtEnv**);
typedef void (*ReleaseEnv_t)(OrtEnv*);
typedef OrtStatus* (*CreateSessionOptions_t)(OrtSessionOptions**);
typedef OrtStatus* (*SetIntraOpNumThreads_t)(OrtSessionOptions*, int);
typedef OrtStatus* (*SetInterOpNumThreads_t)(OrtSessionOptions*, int);
typedef OrtStatus* (*SetSessionGraphOptimizationLevel_t)(OrtSessionOptions*, int);
typedef OrtStatus* (*RegisterCustomOpsLibrary_V2_t)(OrtSessionOptions*, const char*);
typedef void (*ReleaseSessionOptions_t)(OrtSessionOptions*);
typedef OrtStatus* (*AddSessionConfigEntry_t)(OrtSessionOptions*, const char*, const char*);
typedef OrtStatus* (*CreateSessionFromArray_t)(const OrtEnv*, const void*, size_t, const OrtSessionOptions*, OrtSession**);
typedef void (*ReleaseSession_t)(OrtSession*);
typedef OrtStatus* (*SessionGetInputCount_t)(const OrtSession*, size_t*);
typedef OrtStatus* (*SessionGetOutputCount_t)(const OrtSession*, size_t*);
typedef OrtStatus* (*SessionGetInputTypeInfo_t)(const OrtSession*, size_t, OrtTypeInfo**);
typedef OrtStatus* (*SessionGetOutputTypeInfo_t)(const OrtSession*, size_t, OrtTypeInfo**);
typedef OrtStatus* (*SessionGetInputName_t)(const OrtSession*, size_t, OrtAllocator*, char**);
typedef OrtStatus* (*SessionGetOutputName_t)(const OrtSession*, size_t, OrtAllocator*, char**);
typedef OrtStatus* (*GetAllocatorWithDefaultOptions_t)(OrtAllocator**);
typedef OrtStatus* (*AllocatorFree_t)(OrtAllocator*, void*);
typedef OrtStatus* (*GetOnnxTypeFromTypeInfo_t)(const OrtTypeInfo*, int*);
typedef OrtStatus* (*CastTypeInfoToTensorInfo_t)(const OrtTypeInfo*, const OrtTensorTypeAndShapeInfo**);
typedef OrtStatus* (*GetTensorElementType_t)(const OrtTensorTypeAndShapeInfo*, int*);
typedef OrtStatus* (*GetDimensionsCount_t)(const OrtTensorTypeAndShapeInfo*, size_t*);
typedef OrtStatus* (*GetDimensions_t)(const OrtTensorTypeAndShapeInfo*, int64_t*, size_t);
typedef void (*ReleaseTypeInfo_t)(OrtTypeInfo*);
typedef OrtStatus* (*CreateCpuMemoryInfo_t)(int, int, OrtMemoryInfo**);
typedef void (*ReleaseMemoryInfo_t)(OrtMemoryInfo*);
typedef OrtStatus* (*CreateTensorWithDataAsOrtValue_t)(const OrtMemoryInfo*, void*, size_t, const int64_t*, size_t, int,
                                                       OrtValue**);
typedef OrtStatus* (*IsTensor_t)(const OrtValue*, int*);
typedef OrtStatus* (*GetTensorMutableData_t)(OrtValue*, void**);
typedef OrtStatus* (*GetTensorTypeAndShape_t)(const OrtValue*, OrtTensorTypeAndShapeInfo**);
typedef void (*ReleaseTensorTypeAndShapeInfo_t)(OrtTensorTypeAndShapeInfo*);
typedef OrtStatus* (*Run_t)(OrtSession*, const OrtRunOptions*, const char* const*, const OrtValue* const*, size_t,
                            const char* const*, size_t, OrtValue**);
typedef void (*ReleaseValue_t)(OrtValue*);
typedef OrtStatus* (*GetAvailableProviders_t)(char***, int*);
typedef OrtStatus* (*ReleaseAvailableProviders_t)(char**, int);

// API(Name) is the OrtApi slot of member Name as a callable pointer.
#define API(name) ((name##_t)g_api[AO_IDX_##name])

// Enum values from the C API.
#define AO_ONNX_TYPE_TENSOR 1
#define AO_ARENA_ALLOCATOR 1
#define AO_MEM_TYPE_DEFAULT 0

static char* dup_message(const char* prefix, const char* msg) {
  if (!msg) msg = "(no message)";
  size_t n = strlen(prefix) + strlen(msg) + 1;
  char* out = (char*)malloc(n);
  if (out) snprintf(out, n, "%s%s", prefix, msg);
  return out;
}

// take turns a status into a malloc'ed message (NULL for success) and
// releases it.
static char* take(OrtStatus* st) {
  if (!st) return NULL;
  char* msg = dup_message("", API(GetErrorMessage)(st));
  API(ReleaseStatus)(st);
  return msg;
}

int ao_load(const char* path, const char** version, char** err) {
  if (g_api) {
    *version = NULL;
    return 0;
  }
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *err = dup_message("", dlerror());
    return 1;
  }
  ao_get_api_base_fn get_base = (ao_get_api_base_fn)dlsym(lib, "OrtGetApiBase");
  if (!get_base) {
    *err = dup_message("OrtGetApiBase not found: ", dlerror());
    dlclose(lib);
    return 1;
  }
  const ao_api_base* base = get_base();
  if (!base || !base->get_api) {
    *err = dup_message("", "OrtGetApiBase returned nothing");
    dlclose(lib);
    return 1;
  }
  const char* v = base->get_version_string ? base->get_version_string() : "unknown";
  const void* api = base->get_api(AO_API_VERSION);
  if (!api) {
    char buf[160];
    snprintf(buf, sizeof buf, "ONNX Runtime %s does not provide C API version %d (need 1.%d or newer)", v ? v : "?",
             AO_API_VERSION, AO_API_VERSION);
    *err = dup_message("", buf);
    dlclose(lib);
    return 1;
  }
  g_lib = lib;
  g_api = (void* const*)api;
  *version = v;
  return 0;
}

char* ao_create_env(int log_level, const char* logid, OrtEnv** out) {
  return take(API(CreateEnv)(log_level, logid, out));
}

void ao_release_env(OrtEnv* env) {
  if (env) API(ReleaseEnv)(env);
}

char* ao_create_session_options(OrtSessionOptions** out) { return take(API(CreateSessionOptions)(out)); }

char* ao_set_intra_threads(OrtSessionOptions* o, int n) { return take(API(SetIntraOpNumThreads)(o, n)); }

char* ao_set_inter_threads(OrtSessionOptions* o, int n) { return take(API(SetInterOpNumThreads)(o, n)); }

char* ao_set_opt_level(OrtSessionOptions* o, int level) {
  return take(API(SetSessionGraphOptimizationLevel)(o, level));
}

char* ao_register_custom_ops(OrtSessionOptions* o, const char* path) {
  return take(API(RegisterCustomOpsLibrary_V2)(o, path));
}

char* ao_add_config(OrtSessionOptions* o, const char* key, const char* value) {
  return take(API(AddSessionConfigEntry)(o, key, value));
}

void ao_release_session_options(OrtSessionOptions* o) {
  if (o) API(ReleaseSessionOptions)(o);
}

char* ao_create_session(OrtEnv* env, const void* model, size_t len, OrtSessionOptions* o, OrtSession** out) {
  return take(API(CreateSessionFromArray)(env, model, len, o, out));
}

void ao_release_session(OrtSession* s) {
  if (s) API(ReleaseSession)(s);
}

char* ao_io_count(OrtSession* s, int output, size_t* out) {
  if (output) return take(API(SessionGetOutputCount)(s, out));
  return take(API(SessionGetInputCount)(s, out));
}

char* ao_io_name(OrtSession* s, int output, size_t i, char** out) {
  OrtAllocator* alloc = NULL;
  char* err = take(API(GetAllocatorWithDefaultOptions)(&alloc));
  if (err) return err;
  char* name = NULL;
  if (output) {
    err = take(API(SessionGetOutputName)(s, i, alloc, &name));
  } else {
    err = take(API(SessionGetInputName)(s, i, alloc, &name));
  }
  if (err) return err;
  char* copy = dup_message("", name);
  err = take(API(AllocatorFree)(alloc, name));
  if (err) {
    free(copy);
    return err;
  }
  *out = copy;
  return NULL;
}

// shape_of reads element type and dims of a tensor description.
static char* shape_of(const OrtTensorTypeAndShapeInfo* info, int* elem, size_t* rank, int64_t* dims, size_t cap) {
  char* err = take(API(GetTensorElementType)(info, elem));
  if (err) return err;
  err = take(API(GetDimensionsCount)(info, rank));
  if (err) return err;
  if (*rank > cap) {
    char buf[96];
    snprintf(buf, sizeof buf, "tensor rank %zu exceeds the supported %zu", *rank, cap);
    return dup_message("", buf);
  }
  return take(API(GetDimensions)(info, dims, *rank));
}

char* ao_io_type(OrtSession* s, int output, size_t i, int* is_tensor, int* elem, size_t* rank, int64_t* dims,
                 size_t cap) {
  OrtTypeInfo* ti = NULL;
  char* err;
  if (output) {
    err = take(API(SessionGetOutputTypeInfo)(s, i, &ti));
  } else {
    err = take(API(SessionGetInputTypeInfo)(s, i, &ti));
  }
  if (err) return err;
  int onnx_type = 0;
  err = take(API(GetOnnxTypeFromTypeInfo)(ti, &onnx_type));
  *is_tensor = !err && onnx_type == AO_ONNX_TYPE_TENSOR;
  if (!err && *is_tensor) {
    const OrtTensorTypeAndShapeInfo* info = NULL;  // owned by ti
    err = take(API(CastTypeInfoToTensorInfo)(ti, &info));
    if (!err && info) {
      err = shape_of(info, elem, rank, dims, cap);
    } else if (!err) {
      *is_tensor = 0;
    }
  }
  API(ReleaseTypeInfo)(ti);
  return err;
}

char* ao_create_cpu_memory_info(OrtMemoryInfo** out) {
  return take(API(CreateCpuMemoryInfo)(AO_ARENA_ALLOCATOR, AO_MEM_TYPE_DEFAULT, out));
}

void ao_release_memory_info(OrtMemoryInfo* m) {
  if (m) API(ReleaseMemoryInfo)(m);
}

char* ao_create_tensor(OrtMemoryInfo* m, void* data, size_t len, const int64_t* shape, size_t rank, int elem,
                       OrtValue** out) {
  return take(API(CreateTensorWithDataAsOrtValue)(m, data, len, shape, rank, elem, out));
}

void ao_release_value(OrtValue* v) {
  if (v) API(ReleaseValue)(v);
}

char* ao_run(OrtSession* s, const char* const* in_names, OrtValue* const* ins, size_t n_in, const char* const* out_names,
             size_t n_out, OrtValue** outs) {
  return take(API(Run)(s, NULL, in_names, (const OrtValue* const*)ins, n_in, out_names, n_out, outs));
}

char* ao_tensor_info(OrtValue* v, int* is_tensor, int* elem, size_t* rank, int64_t* dims, size_t cap, void** data) {
  char* err = take(API(IsTensor)(v, is_tensor));
  if (err || !*is_tensor) return err;
  OrtTensorTypeAndShapeInfo* info = NULL;
  err = take(API(GetTensorTypeAndShape)(v, &info));
  if (err) return err;
  err = shape_of(info, elem, rank, dims, cap);
  API(ReleaseTensorTypeAndShapeInfo)(info);
  if (err) return err;
  return take(API(GetTensorMutableData)(v, data));
}

char* ao_providers(char** out) {
  char** names = NULL;
  int n = 0;
  char* err = take(API(GetAvailableProviders)(&names, &n));
  if (err) return err;
  size_t len = 1;
  for (int i = 0; i < n; i++) len += strlen(names[i]) + 1;
  char* s = (char*)malloc(len);
  s[0] = 0;
  for (int i = 0; i < n; i++) {
    if (i) strcat(s, ",");
    strcat(s, names[i]);
  }
  *out = s;
  return take(API(ReleaseAvailableProviders)(names, n));
}
