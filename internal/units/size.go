// Package units parses and prints byte sizes and grid shapes given on the
// command line.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var suffixes = []struct {
	s string
	m float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// ParseSize reads 16GiB, 512MiB, 1.5GB, 4G or a plain whole byte count.
// A number without a unit is bytes, so a fraction without one (1.5) is
// refused rather than read as 1 byte: the user almost surely meant a unit.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, x := range suffixes {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(x.s)) && len(t) > len(x.s) {
			mult, t = x.m, strings.TrimSpace(t[:len(t)-len(x.s)])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q: want a byte count such as 16GiB, 512MiB or 1000000", s)
	}
	if v*mult != math.Trunc(v*mult) && mult == 1 {
		return 0, fmt.Errorf("size %q: a number without a unit is a whole count of bytes; give a unit, e.g. %sGiB or %sMB", s, t, t)
	}
	return int64(v * mult), nil
}

// ParseDims reads 8x8x8 (a single 8 is one axis).
func ParseDims(s string) ([]int64, error) {
	var out []int64
	for _, p := range strings.Split(strings.ToLower(s), "x") {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q: want sizes like 8x8x8", s)
		}
		out = append(out, v)
	}
	return out, nil
}
