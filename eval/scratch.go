package eval

import "sync"

// scratchPool recycles large float32 work buffers (im2col matrices) across
// nodes: allocating one zeroes it, which costs as much as filling it.
type scratchPool struct{ p sync.Pool }

var scratch scratchPool

// get returns a buffer of length n with unspecified contents.
func (s *scratchPool) get(n int) *[]float32 {
	if b, ok := s.p.Get().(*[]float32); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]float32, n)
	return &b
}

func (s *scratchPool) put(b *[]float32) { s.p.Put(b) }
