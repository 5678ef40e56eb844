package graph

import (
	"encoding/binary"
	"math"
)

// Known contents of small tensors, used by shape inference and by the matcher
// (a scale, a mask fill, a Reshape target). Integer tensors carry []Dim so
// that shape arithmetic keeps its symbols; float tensors carry a Const.

// maxFold bounds the element count of tensors computed at analysis time.
const maxFold = 1 << 16

// IntContent returns the content of an integer tensor when known.
func (v *Value) IntContent() ([]Dim, bool) {
	if v == nil {
		return nil, false
	}
	if v.Sym != nil {
		return v.Sym, true
	}
	if v.Const != nil && (v.Const.DType.IsInt() || v.Const.DType == Bool) && v.Const.Numel() <= maxFold {
		xs, err := v.Const.Int64s()
		if err != nil {
			return nil, false
		}
		out := make([]Dim, len(xs))
		for i, x := range xs {
			out[i] = D(x)
		}
		return out, true
	}
	return nil, false
}

// Ints returns the content of an integer tensor when every entry is known.
func (v *Value) Ints() ([]int64, bool) {
	ds, ok := v.IntContent()
	if !ok {
		return nil, false
	}
	out := make([]int64, len(ds))
	for i, d := range ds {
		x, ok := d.Value()
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

// Floats returns the numeric content of a small constant tensor of any
// numeric type, or of an integer tensor whose content is static.
func (v *Value) Floats() ([]float64, bool) {
	if v == nil {
		return nil, false
	}
	if v.Const != nil && v.Const.Numel() <= maxFold {
		f, err := v.Const.Float64s()
		return f, err == nil
	}
	if xs, ok := v.Ints(); ok {
		f := make([]float64, len(xs))
		for i, x := range xs {
			f[i] = float64(x)
		}
		return f, true
	}
	return nil, false
}

// Scalar returns the single value of a one-element constant.
func (v *Value) Scalar() (float64, bool) {
	f, ok := v.Floats()
	if !ok || len(f) != 1 {
		return 0, false
	}
	return f[0], true
}

// EncodeFloats makes raw little-endian data of type dt from float64 values.
func EncodeFloats(dt DType, vals []float64) ([]byte, bool) {
	w := dt.Bits() / 8
	if w == 0 || dt.Bits()%8 != 0 {
		return nil, false
	}
	raw := make([]byte, w*len(vals))
	for i, x := range vals {
		switch dt {
		case Float32:
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(x)))
		case Float64:
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
		case Float16:
			binary.LittleEndian.PutUint16(raw[2*i:], FloatToHalf(float32(x)))
		case BFloat16:
			binary.LittleEndian.PutUint16(raw[2*i:], FloatToBF16(float32(x)))
		case Int64, Uint64:
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(int64(x)))
		case Int32, Uint32:
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(x)))
		case Int16, Uint16:
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(int16(x)))
		case Int8, Uint8, Bool:
			raw[i] = byte(int8(x))
			if dt == Bool && x != 0 {
				raw[i] = 1
			}
		default:
			return nil, false
		}
	}
	return raw, true
}
