// CPU stand-in for the parts of cuda.h the Hopper path uses (emulation test
// only): the tensor-map types of cuTensorMapEncodeTiled, with the driver's
// enum values. The emulated encoder (emu_sm90.cpp) stores its arguments in
// the map's opaque bytes.
#ifndef ATTNOPT_EMU_CUDA_H_
#define ATTNOPT_EMU_CUDA_H_

#include <cstdint>

typedef int CUresult;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;

typedef struct alignas(64) CUtensorMap_st {
  cuuint64_t opaque[16];
} CUtensorMap;

typedef enum CUtensorMapDataType_enum {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16,
  CU_TENSOR_MAP_DATA_TYPE_UINT32,
  CU_TENSOR_MAP_DATA_TYPE_INT32,
  CU_TENSOR_MAP_DATA_TYPE_UINT64,
  CU_TENSOR_MAP_DATA_TYPE_INT64,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
} CUtensorMapDataType;
typedef enum CUtensorMapInterleave_enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 } CUtensorMapInterleave;
typedef enum CUtensorMapSwizzle_enum {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B,
  CU_TENSOR_MAP_SWIZZLE_64B,
  CU_TENSOR_MAP_SWIZZLE_128B
} CUtensorMapSwizzle;
typedef enum CUtensorMapL2promotion_enum {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B
} CUtensorMapL2promotion;
typedef enum CUtensorMapFloatOOBfill_enum {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
} CUtensorMapFloatOOBfill;

typedef CUresult (*PFN_cuTensorMapEncodeTiled_v12000)(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                                      cuuint32_t tensorRank, void* globalAddress,
                                                      const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                                      const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                                      CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                      CUtensorMapL2promotion l2Promotion,
                                                      CUtensorMapFloatOOBfill oobFill);

#endif  // ATTNOPT_EMU_CUDA_H_
