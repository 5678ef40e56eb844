package eval

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Tensor is a runtime value. Every float type (fp32, fp16, bf16, fp64) is held
// in F as float32; fp16/bf16 results are rounded to their type at each op
// output so numbers track a real half-precision runtime. Integer types are
// held in I, bool in B.
type Tensor struct {
	DType graph.DType
	Shape []int
	F     []float32
	I     []int64
	B     []bool
}

// Numel is the element count.
func (t *Tensor) Numel() int { return numel(t.Shape) }

func numel(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

type storage int

const (
	stFloat storage = iota
	stInt
	stBool
)

func storageOf(dt graph.DType) storage {
	switch {
	case dt == graph.Bool:
		return stBool
	case dt.IsInt():
		return stInt
	}
	return stFloat
}

func isFloat(dt graph.DType) bool { return storageOf(dt) == stFloat }

// NewTensor allocates a zero tensor.
func NewTensor(dt graph.DType, shape []int) *Tensor {
	t := &Tensor{DType: dt, Shape: append([]int{}, shape...)}
	n := numel(shape)
	switch storageOf(dt) {
	case stFloat:
		t.F = make([]float32, n)
	case stInt:
		t.I = make([]int64, n)
	default:
		t.B = make([]bool, n)
	}
	return t
}

// FromFloats makes a float32 tensor (the slice is kept).
func FromFloats(shape []int, v []float32) *Tensor {
	return &Tensor{DType: graph.Float32, Shape: append([]int{}, shape...), F: v}
}

// FromInts makes an int64 tensor (the slice is kept).
func FromInts(shape []int, v []int64) *Tensor {
	return &Tensor{DType: graph.Int64, Shape: append([]int{}, shape...), I: v}
}

// FromBools makes a bool tensor (the slice is kept).
func FromBools(shape []int, v []bool) *Tensor {
	return &Tensor{DType: graph.Bool, Shape: append([]int{}, shape...), B: v}
}

// Float64At reads element i as float64 whatever the storage.
func (t *Tensor) Float64At(i int) float64 {
	switch {
	case t.F != nil:
		return float64(t.F[i])
	case t.I != nil:
		return float64(t.I[i])
	case t.B != nil && t.B[i]:
		return 1
	}
	return 0
}

// Float64s returns every element as float64.
func (t *Tensor) Float64s() []float64 {
	out := make([]float64, t.Numel())
	for i := range out {
		out[i] = t.Float64At(i)
	}
	return out
}

// ints returns the elements as int64 (ints, bools, or truncated floats).
func (t *Tensor) ints() []int64 {
	if t.I != nil {
		return t.I
	}
	out := make([]int64, t.Numel())
	for i := range out {
		out[i] = int64(t.Float64At(i))
	}
	return out
}

// roundTo rounds float storage to the precision of dt, in place, in bulk:
// fp16 values in the normal range and every bf16 value round with integer
// bit arithmetic; the rest (fp16 subnormals, overflow, Inf, NaN) go through
// graph's converters, so results are bit-identical to a round trip.
func roundTo(dt graph.DType, v []float32) {
	switch dt {
	case graph.Float16:
		roundHalf(v)
	case graph.BFloat16:
		for i, x := range v {
			b := math.Float32bits(x)
			if b&0x7fffffff > 0x7f800000 {
				v[i] = math.Float32frombits((b | 0x400000) &^ 0xffff) // quiet NaN
				continue
			}
			b += 0x7fff + (b>>16)&1
			v[i] = math.Float32frombits(b &^ 0xffff)
		}
	}
}

// roundHalf rounds to the nearest binary16 value, ties to even.
func roundHalf(v []float32) {
	for i, x := range v {
		b := math.Float32bits(x)
		// float32 exponents 113..142 are fp16's normal exponents 1..30
		if e := (b >> 23) & 0xff; e-113 < 30 {
			b += 0xfff + (b>>13)&1
			b &^= 0x1fff
			if (b>>23)&0xff > 142 { // rounded past 65504
				b = b&0x80000000 | 0x7f800000
			}
			v[i] = math.Float32frombits(b)
		} else if x != 0 {
			v[i] = graph.HalfToFloat(graph.FloatToHalf(x))
		}
	}
}

// wrapInt makes an int result wrap like its storage width.
func wrapInt(dt graph.DType, x int64) int64 {
	switch dt {
	case graph.Int32:
		return int64(int32(x))
	case graph.Int16:
		return int64(int16(x))
	case graph.Int8:
		return int64(int8(x))
	case graph.Uint8:
		return int64(uint8(x))
	case graph.Uint16:
		return int64(uint16(x))
	case graph.Uint32:
		return int64(uint32(x))
	}
	return x
}

// normalize brings a freshly computed tensor to its dtype's precision.
func (t *Tensor) normalize() *Tensor {
	if t.F != nil {
		roundTo(t.DType, t.F)
	}
	if t.I != nil && t.DType != graph.Int64 && t.DType != graph.Uint64 {
		for i, x := range t.I {
			t.I[i] = wrapInt(t.DType, x)
		}
	}
	return t
}

// Clone copies a tensor.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{DType: t.DType, Shape: append([]int{}, t.Shape...)}
	if t.F != nil {
		c.F = append([]float32{}, t.F...)
	}
	if t.I != nil {
		c.I = append([]int64{}, t.I...)
	}
	if t.B != nil {
		c.B = append([]bool{}, t.B...)
	}
	return c
}

// reshaped shares the data under a new shape.
func (t *Tensor) reshaped(shape []int) *Tensor {
	return &Tensor{DType: t.DType, Shape: append([]int{}, shape...), F: t.F, I: t.I, B: t.B}
}

// FromRaw decodes little-endian ONNX raw data.
func FromRaw(dt graph.DType, shape []int, raw []byte) (*Tensor, error) {
	t := NewTensor(dt, shape)
	n := t.Numel()
	if dt == graph.String || dt.Bits() == 0 || dt.Bits()%8 != 0 {
		return nil, fmt.Errorf("unsupported tensor type %s", dt)
	}
	if len(raw) < n*dt.Bits()/8 {
		return nil, fmt.Errorf("%s%v needs %d bytes, have %d", dt, shape, n*dt.Bits()/8, len(raw))
	}
	switch dt {
	case graph.Float32:
		for i := range t.F {
			t.F[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return t, nil
	case graph.Int64:
		for i := range t.I {
			t.I[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return t, nil
	case graph.Bool:
		for i := range t.B {
			t.B[i] = raw[i] != 0
		}
		return t, nil
	}
	for i := 0; i < n; i++ {
		v, ok := graph.DecodeElem(raw, dt, i)
		if !ok {
			return nil, fmt.Errorf("unsupported tensor type %s", dt)
		}
		if t.F != nil {
			t.F[i] = float32(v)
		} else {
			t.I[i] = int64(v)
		}
	}
	return t, nil
}

// FromGraph converts a constant of the IR.
func FromGraph(gt *graph.Tensor) (*Tensor, error) {
	raw, err := gt.Raw()
	if err != nil {
		return nil, err
	}
	shape := make([]int, len(gt.Dims))
	for i, d := range gt.Dims {
		shape[i] = int(d)
	}
	return FromRaw(gt.DType, shape, raw)
}

// Raw encodes the tensor as little-endian ONNX raw data.
func (t *Tensor) Raw() ([]byte, error) {
	n := t.Numel()
	w := t.DType.Bits() / 8
	if w == 0 || t.DType == graph.String {
		return nil, fmt.Errorf("cannot encode %s", t.DType)
	}
	out := make([]byte, n*w)
	for i := 0; i < n; i++ {
		switch t.DType {
		case graph.Float32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(t.F[i]))
		case graph.Float64:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(t.F[i])))
		case graph.Float16:
			binary.LittleEndian.PutUint16(out[2*i:], graph.FloatToHalf(t.F[i]))
		case graph.BFloat16:
			binary.LittleEndian.PutUint16(out[2*i:], graph.FloatToBF16(t.F[i]))
		case graph.Bool:
			if t.B[i] {
				out[i] = 1
			}
		default:
			if t.I == nil {
				return nil, fmt.Errorf("cannot encode %s", t.DType)
			}
			x := uint64(t.I[i])
			switch w {
			case 1:
				out[i] = byte(x)
			case 2:
				binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
			case 4:
				binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
			case 8:
				binary.LittleEndian.PutUint64(out[8*i:], x)
			}
		}
	}
	return out, nil
}

// ToGraph converts to an IR constant.
func (t *Tensor) ToGraph(name string) (*graph.Tensor, error) {
	raw, err := t.Raw()
	if err != nil {
		return nil, err
	}
	dims := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = int64(d)
	}
	return graph.NewTensor(name, t.DType, dims, raw), nil
}

func (t *Tensor) String() string {
	return fmt.Sprintf("%s%v", t.DType, t.Shape)
}
