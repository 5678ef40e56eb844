/*
 * attnopt kernels: C ABI for the fused attention ops written by the attnopt
 * rewriter (domain "attnopt": FlashAttention, WindowAttention).
 *
 * Every tensor is addressed through a base pointer and four strides counted in
 * elements, in the logical order (batch, head, token, feature). A rank-3 tensor
 * (B, N, D) is passed with a head stride of 0 and one head. The mask is read
 * through its own strides over (batch, query head, query, key); a broadcast
 * axis has stride 0, so a (1,1,N,N) mask is never expanded.
 *
 * CPU entry points are always built (libattnopt_cpu). CUDA entry points exist
 * in every build: without CUDA they return ATTNOPT_ERR_NO_CUDA.
 */
#ifndef ATTNOPT_ATTNOPT_H_
#define ATTNOPT_ATTNOPT_H_

#include <stddef.h>
#include <stdint.h>

#include "attnopt_limits.h" /* generated from internal/opdef: head sizes, axes */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define ATTNOPT_API __declspec(dllexport)
#else
#define ATTNOPT_API __attribute__((visibility("default")))
#endif

/* Element type of Q, K, V and O (all four share it). */
typedef enum attnopt_dtype {
  ATTNOPT_F32 = 0,
  ATTNOPT_F16 = 1,
  ATTNOPT_BF16 = 2
} attnopt_dtype;

/* Element type of the optional mask. BOOL is one byte, nonzero = attend;
 * the float kinds are added to the scaled scores (-inf excludes a key). */
typedef enum attnopt_mask_type {
  ATTNOPT_MASK_NONE = 0,
  ATTNOPT_MASK_BOOL = 1,
  ATTNOPT_MASK_F32 = 2,
  ATTNOPT_MASK_F16 = 3,
  ATTNOPT_MASK_BF16 = 4
} attnopt_mask_type;

typedef enum attnopt_status {
  ATTNOPT_OK = 0,
  ATTNOPT_ERR_INVALID_ARGUMENT = 1,
  ATTNOPT_ERR_NO_CUDA = 2,   /* library built without CUDA */
  ATTNOPT_ERR_CUDA = 3,      /* a CUDA runtime call or launch failed */
  ATTNOPT_ERR_UNSUPPORTED = 4
} attnopt_status;

/* One strided 4-D operand: element offset of (b, h, n, d) is
 * b*stride[0] + h*stride[1] + n*stride[2] + d*stride[3]. */
typedef struct attnopt_tensor {
  const void* data;
  int64_t stride[4];
} attnopt_tensor;

typedef struct attnopt_flash_params {
  attnopt_dtype dtype;
  int64_t batch;      /* B */
  int64_t heads_q;    /* Hq, a multiple of heads_kv */
  int64_t heads_kv;   /* Hkv; query head h reads kv head h / (Hq / Hkv) */
  int64_t len_q;      /* Nq */
  int64_t len_k;      /* Nk */
  int64_t dim_qk;     /* Dqk, ATTNOPT_HEAD_DIM_MIN..ATTNOPT_HEAD_DIM_MAX */
  int64_t dim_v;      /* Dv, the same range */
  attnopt_tensor q, k, v;
  void* o;            /* written, (B, Hq, Nq, Dv) through o_stride */
  int64_t o_stride[4];
  attnopt_mask_type mask_type;
  const void* mask;   /* NULL when mask_type == ATTNOPT_MASK_NONE */
  int64_t mask_stride[4]; /* over (B, Hq, Nq, Nk); 0 on broadcast axes */
  float scale;        /* multiplies Q.K before the mask is added */
  int causal;         /* query i sees keys j <= i + Nk - Nq */
  int64_t window;     /* > 0 (with causal): and only keys j > i + Nk - Nq - window,
                         a sliding window of that many keys; 0 = none */
  /* Rows with no visible key. A key is visible to a query when the bool mask
   * keeps it, causal and window admit it, and a float mask is not -inf there
   * (nor, when causal_fill is finite, at most causal_fill / 2, nor at most
   * -mask_drop: see docs/fully-masked-rows.md). A zeroed tail keeps the old
   * behaviour. */
  int empty_rows;     /* attnopt_empty_rows: what such a row yields */
  float mask_fill;    /* LITERAL: added to the score of a key a bool mask drops */
  float causal_fill;  /* LITERAL: added to the score of a key causal/window drops */
  int fill_once;      /* LITERAL: 1 = a key both drop gets min(mask term, causal_fill)
                         once (the source combined its conditions before one fill);
                         0 = the two add (separate fills) */
  attnopt_dtype fill_dtype; /* LITERAL: literal scores are rounded to this type, as
                         the source graph's Add in that type did; F32 = none */
  /* Appended after the row fields (the layout before it is unchanged): */
  float softcap;      /* > 0: the scaled score s becomes softcap * tanh(s / softcap)
                         before the mask, causal and window apply (Gemma 2's
                         attention logit softcapping); 0 = none. Finite, >= 0 */
  float mask_drop;    /* LITERAL: > 0: a float mask value <= -mask_drop hides the
                         key too, so a row whose keys all sit at a finite fill
                         (Funnel's -1e6 * (1 - m)) is recomputed literally, as
                         the source rounds it (the op's mask_floor, negated);
                         0 = only -inf. Finite, >= 0 */
} attnopt_flash_params;

/* What a row with no visible key yields (attnopt_flash_params.empty_rows). */
typedef enum attnopt_empty_rows {
  ATTNOPT_EMPTY_ZERO = 0,         /* zeros (the default) */
  ATTNOPT_EMPTY_LITERAL = 1,      /* softmax over every key's literal score (the
                                     scaled score plus the mask value, mask_fill
                                     and causal_fill as above); NaN when every
                                     literal score is -inf, as softmax gives */
  ATTNOPT_EMPTY_LITERAL_ZERO = 2  /* the same, but zeros where every literal
                                     score is -inf (the source guarded them) */
} attnopt_empty_rows;

typedef struct attnopt_window_params {
  attnopt_dtype dtype;
  int64_t batch, heads_q, heads_kv;
  int64_t len;        /* N = product of grid */
  int64_t dim_qk, dim_v;
  attnopt_tensor q, k, v;
  void* o;
  int64_t o_stride[4];
  int ndim;           /* 1 to ATTNOPT_WINDOW_AXES_MAX (3) spatial axes */
  int64_t grid[ATTNOPT_WINDOW_AXES_MAX];    /* spatial_shape, tokens row-major over it */
  int64_t window[ATTNOPT_WINDOW_AXES_MAX];  /* window extent per axis, >= 1 */
  int64_t shift[ATTNOPT_WINDOW_AXES_MAX];   /* cyclic shift per axis (Swin's torch.roll by -shift) */
  float scale;
} attnopt_window_params;

/* Version 2 of the parameters: the operands and sizes both ops read are one
 * shared part, attnopt_qkv, stated and checked once. The version-1 structs
 * above stay accepted by their entry points, which convert them to these
 * (field for field, same rules, same bits); new callers use the _v2 calls. */
typedef struct attnopt_qkv {
  attnopt_dtype dtype;
  int64_t batch;      /* B */
  int64_t heads_q;    /* Hq, a multiple of heads_kv */
  int64_t heads_kv;   /* Hkv; query head h reads kv head h / (Hq / Hkv) */
  int64_t len_q;      /* Nq (WindowAttention: N, the grid's product) */
  int64_t len_k;      /* Nk (WindowAttention: N as well) */
  int64_t dim_qk;     /* Dqk, ATTNOPT_HEAD_DIM_MIN..ATTNOPT_HEAD_DIM_MAX */
  int64_t dim_v;      /* Dv, the same range */
  attnopt_tensor q, k, v;
  void* o;            /* written, (B, Hq, Nq, Dv) through o_stride */
  int64_t o_stride[4];
} attnopt_qkv;

/* attnopt_flash_params without its shared part; each field as there. */
typedef struct attnopt_flash_params_v2 {
  attnopt_qkv qkv;
  attnopt_mask_type mask_type;
  const void* mask;
  int64_t mask_stride[4];
  float scale;
  int causal;
  int64_t window;
  int empty_rows;
  float mask_fill;
  float causal_fill;
  int fill_once;
  attnopt_dtype fill_dtype;
  float softcap;
  float mask_drop;
} attnopt_flash_params_v2;

/* attnopt_window_params without its shared part; qkv.len_q = qkv.len_k = N. */
typedef struct attnopt_window_params_v2 {
  attnopt_qkv qkv;
  int ndim;
  int64_t grid[ATTNOPT_WINDOW_AXES_MAX];
  int64_t window[ATTNOPT_WINDOW_AXES_MAX];
  int64_t shift[ATTNOPT_WINDOW_AXES_MAX];
  float scale;
} attnopt_window_params_v2;

/* Human-readable text for a status code (static storage). */
ATTNOPT_API const char* attnopt_status_string(int status);

/* Checks the parameters without running anything (same rules as the calls). */
ATTNOPT_API int attnopt_flash_params_check(const attnopt_flash_params* p);
ATTNOPT_API int attnopt_window_params_check(const attnopt_window_params* p);
ATTNOPT_API int attnopt_flash_params_check_v2(const attnopt_flash_params_v2* p);
ATTNOPT_API int attnopt_window_params_check_v2(const attnopt_window_params_v2* p);

/* CPU: multithreaded, float32 accumulation, O(threads * tile) scratch. */
ATTNOPT_API int attnopt_cpu_flash_attention_fwd(const attnopt_flash_params* p);
ATTNOPT_API int attnopt_cpu_window_attention_fwd(const attnopt_window_params* p);
ATTNOPT_API int attnopt_cpu_flash_attention_fwd_v2(const attnopt_flash_params_v2* p);
ATTNOPT_API int attnopt_cpu_window_attention_fwd_v2(const attnopt_window_params_v2* p);
/* Worker threads for the CPU calls; 0 (default) = hardware concurrency,
 * overridden at first use by the ATTNOPT_NUM_THREADS environment variable. */
ATTNOPT_API void attnopt_cpu_set_num_threads(int n);

/* A host's parallel loop: calls body(arg, i) for every i in [0, n), possibly
 * concurrently, and returns 0 when it ran them all. */
typedef void (*attnopt_parallel_body)(void* arg, size_t i);
typedef int (*attnopt_parallel_runner)(void* runner_ctx, attnopt_parallel_body body, void* arg, size_t n);
/* For the calling thread only: the CPU calls run their parallel loops through
 * runner (at most width concurrent workers, capped by the thread setting
 * above) instead of attnopt's own pool; runner NULL restores the pool. The
 * ONNX Runtime custom ops use it to run on the session's intra-op threads. */
ATTNOPT_API void attnopt_cpu_set_thread_runner(attnopt_parallel_runner runner, void* runner_ctx, int width);

/* CUDA: pointers are device pointers; stream is a cudaStream_t (NULL = the
 * legacy default stream). Asynchronous: returns after the launch. */
ATTNOPT_API int attnopt_cuda_flash_attention_fwd(const attnopt_flash_params* p, void* stream);
ATTNOPT_API int attnopt_cuda_window_attention_fwd(const attnopt_window_params* p, void* stream);
ATTNOPT_API int attnopt_cuda_flash_attention_fwd_v2(const attnopt_flash_params_v2* p, void* stream);
ATTNOPT_API int attnopt_cuda_window_attention_fwd_v2(const attnopt_window_params_v2* p, void* stream);
/* 1 when the library was built with CUDA kernels. */
ATTNOPT_API int attnopt_has_cuda(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTNOPT_ATTNOPT_H_ */
