// The CPU literal pass for rows with no visible key (empty_rows.cpp).
#ifndef ATTNOPT_CPU_EMPTY_ROWS_H_
#define ATTNOPT_CPU_EMPTY_ROWS_H_

#include "attnopt/attnopt.h"

namespace attnopt {

// Recomputes, in place, the output rows of p that see no key, as
// p.empty_rows asks; does nothing for ATTNOPT_EMPTY_ZERO.
void fix_empty_rows(const attnopt_flash_params_v2& p);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_EMPTY_ROWS_H_
