package eval

import "sync"

// Packed, blocked float32 GEMM (the Goto/BLIS layout): a kc×nc block of B
// is packed into gemmNR-wide column panels and an mc×kc block of A into
// gemmMR-tall row slivers, so the micro-kernel (kern6x16: assembly with
// AVX2/FMA where the CPU has it, plain Go elsewhere) streams both from
// contiguous memory and keeps a 6×16 tile of C in registers. Accumulation
// is float32, as in ONNX Runtime's MLAS.
const (
	gemmMR = 6
	gemmNR = 16
	gemmKC = 256 // a kc×16 panel of B (16 KiB) stays in L1
	gemmMC = 72  // a packed mc×kc block of A (72 KiB) stays in L2
	gemmNC = 512 // a packed kc×nc block of B (512 KiB) stays in L2/L3
)

// gemmBufs are one worker's packing buffers and C tile.
type gemmBufs struct {
	ap   []float32
	bp   []float32
	tile [gemmMR * gemmNR]float32
}

// gemmPool recycles workers' buffers: small products are common (per-head
// attention, tiny convolutions) and zeroing fresh buffers would cost more
// than the product.
var gemmPool sync.Pool

// getGemmBufs returns buffers for m×k·k×n products in column blocks of nc,
// sized to the problem rather than to the block limits.
func getGemmBufs(m, k, nc int) *gemmBufs {
	w, _ := gemmPool.Get().(*gemmBufs)
	if w == nil {
		w = &gemmBufs{}
	}
	kc := min(k, gemmKC)
	mc := (min(m, gemmMC) + gemmMR - 1) / gemmMR * gemmMR
	ncp := (nc + gemmNR - 1) / gemmNR * gemmNR
	w.ap = grow(w.ap, mc*kc)
	w.bp = grow(w.bp, kc*ncp)
	return w
}

// grow returns buf with length n, reallocating only when it is too short.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// gemmJob is C (m×n, row stride ldc) = A (m×k, row stride lda) · B (k×n,
// row stride ldb), all row-major.
type gemmJob struct {
	a, b, c       []float32
	lda, ldb, ldc int
}

// gemmBlock computes rows [i0,i1) × columns [j0,j1) of C, overwriting them.
func gemmBlock(j *gemmJob, k, i0, i1, j0, j1 int, w *gemmBufs) {
	if k == 0 {
		for i := i0; i < i1; i++ {
			clear(j.c[i*j.ldc+j0 : i*j.ldc+j1])
		}
		return
	}
	// Few rows reuse each B panel little, so copying B into panels would
	// cost about as much as the product: the kernel then reads whole
	// 16-column panels of B in place, and only a ragged last panel is packed.
	direct := 0
	if i1-i0 <= gemmDirectRows {
		direct = (j1 - j0) / gemmNR * gemmNR
	}
	for p0 := 0; p0 < k; p0 += gemmKC {
		kc := min(gemmKC, k-p0)
		packA(j.a, j.lda, p0, kc, i0, i1, w.ap)
		c := j.c[i0*j.ldc+j0:]
		if direct > 0 {
			macroKernel(kc, i1-i0, direct, w.ap, j.b[p0*j.ldb+j0:], 1, j.ldb, c, j.ldc, p0 > 0, &w.tile)
		}
		if direct < j1-j0 {
			packB(j.b, j.ldb, p0, kc, j0+direct, j1, w.bp)
			macroKernel(kc, i1-i0, j1-j0-direct, w.ap, w.bp, kc, gemmNR, c[direct:], j.ldc, p0 > 0, &w.tile)
		}
	}
}

// gemmDirectRows is the most rows of a block for which B is read in place.
var gemmDirectRows = 24

// macroKernel sets (or, with accumulate, adds to) C[0:m, 0:n], row stride
// ldc, the product of packed A slivers (m rows, kc deep; packA) and B's
// 16-column panels: panel jr/16 starts at bp[jr·bCol] and its rows are
// bRow apart (packed by packB: bCol = kc, bRow = 16; B in place: bCol = 1,
// bRow = B's row stride). One micro-kernel tile at a time.
func macroKernel(kc, m, n int, ap, bp []float32, bCol, bRow int, c []float32, ldc int, accumulate bool, tile *[gemmMR * gemmNR]float32) {
	for ir := 0; ir < m; ir += gemmMR {
		mr := min(gemmMR, m-ir)
		for jr := 0; jr < n; jr += gemmNR {
			nr := min(gemmNR, n-jr)
			kern6x16(kc, ap[ir*kc:], bp[jr*bCol:], bRow, tile)
			for r := 0; r < mr; r++ {
				crow := c[(ir+r)*ldc+jr : (ir+r)*ldc+jr+nr]
				trow := tile[r*gemmNR : r*gemmNR+nr]
				if !accumulate {
					copy(crow, trow)
					continue
				}
				for x := range crow {
					crow[x] += trow[x]
				}
			}
		}
	}
}

// packB copies B[p0:p0+kc, j0:j1] into 16-wide column panels, each kc×16
// row-major, zero-padding the last panel. It walks B row by row (each row
// read once, contiguously) and writes one stream per panel.
func packB(b []float32, ldb, p0, kc, j0, j1 int, dst []float32) {
	full := (j1 - j0) / gemmNR * gemmNR
	for p := 0; p < kc; p++ {
		row := b[(p0+p)*ldb+j0 : (p0+p)*ldb+j1]
		for jr := 0; jr < full; jr += gemmNR {
			// a fixed-size copy, no memmove call
			*(*[gemmNR]float32)(dst[jr*kc+p*gemmNR:]) = *(*[gemmNR]float32)(row[jr:])
		}
		if full < len(row) {
			d := dst[full*kc+p*gemmNR : full*kc+p*gemmNR+gemmNR]
			copy(d, row[full:])
			clear(d[len(row)-full:])
		}
	}
}

// packA copies A[i0:i1, p0:p0+kc] into 6-tall row slivers, each kc×6
// (column-major within the sliver), zero-padding the last sliver.
func packA(a []float32, lda, p0, kc, i0, i1 int, dst []float32) {
	for ir := i0; ir < i1; ir += gemmMR {
		mr := min(gemmMR, i1-ir)
		sl := dst[(ir-i0)*kc : (ir-i0)*kc+kc*gemmMR]
		for r := 0; r < gemmMR; r++ {
			if r >= mr {
				for p := 0; p < kc; p++ {
					sl[p*gemmMR+r] = 0
				}
				continue
			}
			row := a[(ir+r)*lda+p0 : (ir+r)*lda+p0+kc]
			for p, v := range row {
				sl[p*gemmMR+r] = v
			}
		}
	}
}

// kern6x16Go is the portable micro-kernel: tile = A sliver · B panel (rows
// ldb apart), one row and 8 columns at a time so the accumulators fit in
// registers.
func kern6x16Go(kc int, a, b []float32, ldb int, tile *[gemmMR * gemmNR]float32) {
	a = a[:kc*gemmMR]
	for r := 0; r < gemmMR; r++ {
		for h := 0; h < gemmNR; h += 8 {
			var c0, c1, c2, c3, c4, c5, c6, c7 float32
			for p := 0; p < kc; p++ {
				av := a[p*gemmMR+r]
				bp := (*[8]float32)(b[p*ldb+h : p*ldb+h+8])
				c0 += av * bp[0]
				c1 += av * bp[1]
				c2 += av * bp[2]
				c3 += av * bp[3]
				c4 += av * bp[4]
				c5 += av * bp[5]
				c6 += av * bp[6]
				c7 += av * bp[7]
			}
			t := (*[8]float32)(tile[r*gemmNR+h:])
			t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7] = c0, c1, c2, c3, c4, c5, c6, c7
		}
	}
}

// gemmBatch computes count products C_b = A_b·B_b with A_b at aOff[b] (m×k),
// B_b at bOff[b] (k×n) and C_b at b·m·n of c, spread over threads
// goroutines by (batch, row block, column block) so both tall (MatMul) and
// wide (Conv: few output channels, many positions) products split.
func gemmBatch(a, b, c []float32, aOff, bOff []int, m, k, n, threads int) {
	count := len(aOff)
	if count == 0 || m == 0 || n == 0 {
		return
	}
	rowBlocks := (m + gemmMC - 1) / gemmMC
	colBlocks := (n + gemmNC - 1) / gemmNC
	// With few tasks, split columns finer so every thread has work.
	nc := gemmNC
	for count*rowBlocks*colBlocks < 2*threads && nc > 4*gemmNR {
		nc /= 2
		colBlocks = (n + nc - 1) / nc
	}
	tasks := count * rowBlocks * colBlocks
	if m*n*k*count < 1<<16 {
		threads = 1
	}
	parallelFor(tasks, threads, func(lo, hi int) {
		w := getGemmBufs(m, k, min(nc, n))
		defer gemmPool.Put(w)
		for t := lo; t < hi; t++ {
			bi := t / (rowBlocks * colBlocks)
			rb := (t / colBlocks) % rowBlocks
			cb := t % colBlocks
			j := gemmJob{a: a[aOff[bi]:], b: b[bOff[bi]:], c: c[bi*m*n:], lda: k, ldb: n, ldc: n}
			gemmBlock(&j, k, rb*gemmMC, min(rb*gemmMC+gemmMC, m), cb*nc, min(cb*nc+nc, n), w)
		}
	})
}
