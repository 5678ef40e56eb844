// Window partition of a token grid with a cyclic shift, shared by the CPU and
// CUDA implementations so both enumerate windows and members identically.
//
// Axis a has extent G, window w, shift s (normalised to 0 <= s < G). The token
// at coordinate c belongs to window floor(((c - s) mod G) / w), i.e. the grid
// is rolled by -s (torch.roll) and cut into w-sized blocks from the origin; the
// last block is smaller when w does not divide G. Window k's members on the
// axis are c = (k*w + i + s) mod G for 0 <= i < min(w, G - k*w).
#ifndef ATTNOPT_COMMON_WINDOW_GEOMETRY_H_
#define ATTNOPT_COMMON_WINDOW_GEOMETRY_H_

#include <cstdint>

#include "common/checked.h"

#if defined(__CUDACC__)
#define ATTNOPT_HD __host__ __device__ __forceinline__
#else
#define ATTNOPT_HD inline
#endif

namespace attnopt {

struct WindowGeometry {
  int ndim;             // 1..3; unused axes have grid = window = 1, shift = 0
  int64_t grid[3];
  int64_t window[3];
  int64_t shift[3];     // in [0, grid)
  int64_t count[3];     // windows per axis: ceil(grid / window)

  ATTNOPT_HD int64_t num_windows() const { return count[0] * count[1] * count[2]; }
  ATTNOPT_HD int64_t max_window_size() const { return window[0] * window[1] * window[2]; }

  // Extent of window k along axis a (smaller at the far border).
  ATTNOPT_HD int64_t extent(int a, int64_t k) const {
    const int64_t rest = grid[a] - k * window[a];
    return rest < window[a] ? rest : window[a];
  }

  // Per-axis window indices of flat window id (row-major over count[]).
  ATTNOPT_HD void window_coords(int64_t id, int64_t k[3]) const {
    k[2] = id % count[2];
    id /= count[2];
    k[1] = id % count[1];
    k[0] = id / count[1];
  }

  ATTNOPT_HD int64_t window_size(int64_t id) const {
    int64_t k[3];
    window_coords(id, k);
    return extent(0, k[0]) * extent(1, k[1]) * extent(2, k[2]);
  }

  // Flat token index of the i-th member (row-major over the window's extents).
  ATTNOPT_HD int64_t member_token(int64_t id, int64_t i) const {
    int64_t k[3];
    window_coords(id, k);
    const int64_t e1 = extent(1, k[1]), e2 = extent(2, k[2]);
    const int64_t i2 = i % e2;
    const int64_t i1 = (i / e2) % e1;
    const int64_t i0 = i / (e2 * e1);
    const int64_t c0 = roll(0, k[0] * window[0] + i0);
    const int64_t c1 = roll(1, k[1] * window[1] + i1);
    const int64_t c2 = roll(2, k[2] * window[2] + i2);
    return (c0 * grid[1] + c1) * grid[2] + c2;
  }

  // (c + shift) mod grid on axis a for 0 <= c < grid, without forming
  // c + shift (which can pass INT64_MAX on an axis longer than 2^62).
  ATTNOPT_HD int64_t roll(int a, int64_t c) const {
    const int64_t room = grid[a] - shift[a];  // > 0: shift < grid
    return c < room ? c + shift[a] : c - room;
  }
};

// Builds the geometry from user attributes, padding to 3 axes at the front.
// Returns false on invalid input: ndim outside 1..3, a grid extent or window
// below 1, or a token count, window count or window size (or any partial
// product of one) above INT64_MAX. Once it succeeds, num_windows(),
// max_window_size(), window_size() and member_token() cannot overflow, and
// every member token is below window_tokens(g).
inline bool make_window_geometry(int ndim, const int64_t* grid, const int64_t* window,
                                 const int64_t* shift, WindowGeometry* g) {
  if (ndim < 1 || ndim > 3) return false;
  g->ndim = ndim;
  const int pad = 3 - ndim;
  for (int a = 0; a < 3; ++a) {
    if (a < pad) {
      g->grid[a] = g->window[a] = 1;
      g->shift[a] = 0;
    } else {
      const int64_t G = grid[a - pad], w = window[a - pad];
      if (G < 1 || w < 1) return false;
      g->grid[a] = G;
      g->window[a] = w < G ? w : G;  // a window wider than the grid is the grid
      const int64_t s = shift ? shift[a - pad] % G : 0;  // in (-G, G): no overflow below
      g->shift[a] = s < 0 ? s + G : s;
    }
    g->count[a] = ceil_div(g->grid[a], g->window[a]);
  }
  int64_t n = 0;
  return product_within(g->grid, 3, kInt64Max, &n) && product_within(g->count, 3, kInt64Max, &n) &&
         product_within(g->window, 3, kInt64Max, &n);
}

// prod(grid) of a geometry make_window_geometry accepted.
inline int64_t window_tokens(const WindowGeometry& g) { return g.grid[0] * g.grid[1] * g.grid[2]; }

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_WINDOW_GEOMETRY_H_
