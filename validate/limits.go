package validate

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/units"
)

// MaxTensorBytes is the largest tensor validation creates or lets a model
// compute end to end (--scope model; site scope reduces lengths instead):
// past it a run would exhaust memory rather than fail.
const MaxTensorBytes = 2 << 30

// concreteBytes is the byte size of t at the validation dims (symbolic dims
// pinned or DefaultDim), or -1 when unknown or past 2^63.
func concreteBytes(t graph.Type, dims map[string]int64) int64 {
	if !t.Ranked {
		return -1
	}
	n := int64(1)
	for _, d := range t.Shape {
		v := int64(DefaultDim)
		switch {
		case d.Unknown:
		case d.Static():
			v = d.C
		default:
			v = max(d.C, 1)
			for _, s := range d.Syms {
				if v = mulSat(v, symValue(s, dims)); v < 0 {
					return -1
				}
			}
		}
		if n = mulSat(n, v); n < 0 {
			return -1
		}
	}
	return t.DType.StorageBytes(n)
}

func mulSat(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	if b != 0 && a > (1<<62)/b {
		return -1
	}
	return a * b
}

// CheckModelScope refuses an end-to-end run of m in which some computed
// tensor would exceed MaxTensorBytes (a 131k-token site's scores are 64 GiB).
func CheckModelScope(m *graph.Model, dims map[string]int64) error {
	if v, b := largestComputed(m, dims); b < 0 || b > MaxTensorBytes {
		return fmt.Errorf("--scope model would compute %q (%s, %s), over the %s validation limit; use --scope sites, which runs large sites at reduced lengths",
			v.Name, v.Type, sizeText(b), units.FormatBytes(MaxTensorBytes))
	}
	return nil
}

// largestComputed is the largest tensor m's nodes compute at the
// validation dims, or the first of unknown size (-1).
func largestComputed(m *graph.Model, dims map[string]int64) (*graph.Value, int64) {
	var big *graph.Value
	most := int64(0)
	for _, n := range m.Graph.Nodes {
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			b := concreteBytes(o.Type, dims)
			if b < 0 && o.Type.Ranked {
				return o, -1
			}
			if b > most {
				big, most = o, b
			}
		}
	}
	return big, most
}

// sizeText is a byte size as reports print it, -1 meaning unknown.
func sizeText(b int64) string {
	if b < 0 {
		return "more than 8 EiB"
	}
	return units.FormatBytes(b)
}
