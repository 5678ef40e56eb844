/* Prints the C layout of the ABI structs, for tests/abi_check.py to compare
 * with the ctypes binding in bench/attnopt_ctypes.py. */
#include <stddef.h>
#include <stdio.h>

#include "attnopt/attnopt.h"

#define FIELD(T, f) printf("  \"%s.%s\": %zu,\n", #T, #f, offsetof(T, f))

int main(void) {
  printf("{\n");
  FIELD(attnopt_flash_params, batch);
  FIELD(attnopt_flash_params, q);
  FIELD(attnopt_flash_params, v);
  FIELD(attnopt_flash_params, o);
  FIELD(attnopt_flash_params, o_stride);
  FIELD(attnopt_flash_params, mask_type);
  FIELD(attnopt_flash_params, mask);
  FIELD(attnopt_flash_params, mask_stride);
  FIELD(attnopt_flash_params, scale);
  FIELD(attnopt_flash_params, causal);
  FIELD(attnopt_flash_params, window);
  FIELD(attnopt_flash_params, empty_rows);
  FIELD(attnopt_flash_params, mask_fill);
  FIELD(attnopt_flash_params, causal_fill);
  FIELD(attnopt_flash_params, fill_once);
  FIELD(attnopt_flash_params, fill_dtype);
  FIELD(attnopt_flash_params, softcap);
  FIELD(attnopt_window_params, len);
  FIELD(attnopt_window_params, o_stride);
  FIELD(attnopt_window_params, ndim);
  FIELD(attnopt_window_params, grid);
  FIELD(attnopt_window_params, shift);
  FIELD(attnopt_window_params, scale);
  FIELD(attnopt_qkv, batch);
  FIELD(attnopt_qkv, len_k);
  FIELD(attnopt_qkv, q);
  FIELD(attnopt_qkv, o);
  FIELD(attnopt_qkv, o_stride);
  FIELD(attnopt_flash_params_v2, mask_type);
  FIELD(attnopt_flash_params_v2, mask_stride);
  FIELD(attnopt_flash_params_v2, scale);
  FIELD(attnopt_flash_params_v2, window);
  FIELD(attnopt_flash_params_v2, fill_dtype);
  FIELD(attnopt_flash_params_v2, softcap);
  FIELD(attnopt_flash_params_v2, mask_drop);
  FIELD(attnopt_window_params_v2, ndim);
  FIELD(attnopt_window_params_v2, grid);
  FIELD(attnopt_window_params_v2, shift);
  FIELD(attnopt_window_params_v2, scale);
  printf("  \"sizeof.attnopt_qkv\": %zu,\n", sizeof(attnopt_qkv));
  printf("  \"sizeof.attnopt_flash_params_v2\": %zu,\n", sizeof(attnopt_flash_params_v2));
  printf("  \"sizeof.attnopt_window_params_v2\": %zu,\n", sizeof(attnopt_window_params_v2));
  printf("  \"sizeof.attnopt_tensor\": %zu,\n", sizeof(attnopt_tensor));
  printf("  \"sizeof.attnopt_flash_params\": %zu,\n", sizeof(attnopt_flash_params));
  printf("  \"sizeof.attnopt_window_params\": %zu\n", sizeof(attnopt_window_params));
  printf("}\n");
  return 0;
}
