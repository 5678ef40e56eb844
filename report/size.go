package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var sizeUnits = map[string]float64{
	"":    1,
	"b":   1,
	"kb":  1e3,
	"mb":  1e6,
	"gb":  1e9,
	"tb":  1e12,
	"pb":  1e15,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
	"pib": 1 << 50,
}

// ParseSize reads a byte size: a bare number of bytes (1000000), or a number
// with a decimal (kB, MB, GB, TB, PB: powers of 1000) or binary (KiB, MiB,
// GiB, TiB, PiB: powers of 1024) unit, case-insensitive, fractions allowed
// (1.5GB). The result is rounded down to whole bytes and must be positive.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	numPart, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if numPart == "" || !ok {
		return 0, fmt.Errorf("size %q: want a number of bytes or a number with a unit (16GiB, 512MiB, 1.5GB)", s)
	}
	v, err := strconv.ParseFloat(numPart, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	b := math.Floor(v * mult)
	if b < 1 || b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: must be at least 1 byte and below 8 EiB", s)
	}
	if unit == "" || unit == "b" {
		// Whole bytes only: "1.5" bytes is a mistake, not a size.
		if strings.Contains(numPart, ".") {
			return 0, fmt.Errorf("size %q: a byte count must be a whole number", s)
		}
		n, err := strconv.ParseInt(numPart, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q: %v", s, err)
		}
		return n, nil
	}
	return int64(b), nil
}
