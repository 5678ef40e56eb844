package units

import (
	"fmt"
	"strconv"
	"strings"
)

// FormatBytes prints a size in binary units: 64.0 TiB, 16.0 GiB, 512 B.
func FormatBytes(b int64) string {
	names := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(names)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatInt(b, 10) + " B"
	}
	return fmt.Sprintf("%.1f %s", v, names[i])
}

// FormatDims prints sizes as ParseDims reads them: 8x8x8.
func FormatDims(ds []int64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, "x")
}
