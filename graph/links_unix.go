//go:build unix

package graph

import (
	"os"
	"syscall"
)

// linkCount is the number of hard links of a file (1 when unknown).
func linkCount(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}
