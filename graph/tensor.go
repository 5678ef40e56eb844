package graph

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/attnopt/attnopt/graph/onnxpb"
)

// Tensor is a constant: an initializer, a Constant node's value or a tensor a
// pass created. Data in external files is read only when asked for.
type Tensor struct {
	Name  string
	DType DType
	Dims  []int64

	pb  *onnxpb.TensorProto // as loaded; written back untouched
	raw []byte              // little-endian data of tensors made here
	ext *externalRef
}

type externalRef struct {
	src            *source
	location       string
	offset, length int64
}

// NewTensor makes a tensor from little-endian raw bytes.
func NewTensor(name string, dt DType, dims []int64, raw []byte) *Tensor {
	return &Tensor{Name: name, DType: dt, Dims: append([]int64(nil), dims...), raw: raw}
}

// NewFloatTensor makes a float32 tensor.
func NewFloatTensor(name string, dims []int64, vals []float32) *Tensor {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return NewTensor(name, Float32, dims, raw)
}

// NewInt64Tensor makes an int64 tensor.
func NewInt64Tensor(name string, dims []int64, vals []int64) *Tensor {
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return NewTensor(name, Int64, dims, raw)
}

// Numel is the element count; -1 on overflow.
func (t *Tensor) Numel() int64 { return numel(t.Dims) }

func numel(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return -1
		}
		var ok bool
		if n, ok = mulCheck(n, d); !ok {
			return -1
		}
	}
	return n
}

// IsExternal reports whether the data lives in an external file.
func (t *Tensor) IsExternal() bool { return t.ext != nil }

// ExternalLocation is the external file's relative path, or "".
func (t *Tensor) ExternalLocation() string {
	if t.ext == nil {
		return ""
	}
	return t.ext.location
}

// ByteSize is the size of the tensor's data in its raw little-endian form.
func (t *Tensor) ByteSize() int64 { return t.DType.StorageBytes(t.Numel()) }

// Raw returns the data as little-endian bytes in ONNX raw_data layout,
// converting typed fields and reading external data on first use.
func (t *Tensor) Raw() ([]byte, error) {
	if t.raw != nil {
		return t.raw, nil
	}
	size := t.ByteSize()
	if size < 0 {
		return nil, badInput("tensor %q: cannot size %s%v", t.Name, t.DType, t.Dims)
	}
	var raw []byte
	var err error
	switch {
	case t.ext != nil:
		raw, err = t.ext.read(size)
	case t.pb == nil:
		return nil, fmt.Errorf("tensor %q has no data", t.Name)
	case t.pb.RawData != nil:
		raw = t.pb.RawData
		if int64(len(raw)) != size {
			err = badInput("tensor %q: raw_data holds %d bytes, %s%v needs %d", t.Name, len(raw), t.DType, t.Dims, size)
		}
	default:
		raw, err = typedToRaw(t.pb, t.DType, t.Numel(), size)
		if err != nil {
			err = badInput("tensor %q: %v", t.Name, err)
		}
	}
	if err != nil {
		return nil, err
	}
	t.raw = raw
	return raw, nil
}

func (r *externalRef) read(size int64) ([]byte, error) {
	if r.length >= 0 && r.length != size {
		return nil, badInput("external data %q: length %d, tensor needs %d bytes", r.location, r.length, size)
	}
	f, err := r.src.openRange(r.location, r.offset, size)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, r.offset); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// typedToRaw converts the typed repeated fields of a TensorProto into the
// raw_data byte layout, so every consumer reads one format.
func typedToRaw(pb *onnxpb.TensorProto, dt DType, n, size int64) ([]byte, error) {
	out := make([]byte, size)
	need := func(have int) error {
		if int64(have) != n {
			return fmt.Errorf("%d values stored, shape needs %d", have, n)
		}
		return nil
	}
	switch dt {
	case Float32:
		if err := need(len(pb.FloatData)); err != nil {
			return nil, err
		}
		for i, v := range pb.FloatData {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
	case Complex64:
		if int64(len(pb.FloatData)) != 2*n {
			return nil, fmt.Errorf("%d values stored, shape needs %d", len(pb.FloatData), 2*n)
		}
		for i, v := range pb.FloatData {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
	case Int64:
		if err := need(len(pb.Int64Data)); err != nil {
			return nil, err
		}
		for i, v := range pb.Int64Data {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
		}
	case Float64:
		if err := need(len(pb.DoubleData)); err != nil {
			return nil, err
		}
		for i, v := range pb.DoubleData {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(v))
		}
	case Uint32, Uint64:
		if err := need(len(pb.Uint64Data)); err != nil {
			return nil, err
		}
		w := dt.Bits() / 8
		for i, v := range pb.Uint64Data {
			if w == 4 {
				binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(out[8*i:], v)
			}
		}
	case Int32, Int16, Uint16, Int8, Uint8, Bool, Float16, BFloat16,
		Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0:
		if err := need(len(pb.Int32Data)); err != nil {
			return nil, err
		}
		w := dt.Bits() / 8
		for i, v := range pb.Int32Data {
			switch w {
			case 1:
				out[i] = byte(v)
			case 2:
				binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
			case 4:
				binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
			}
		}
	case Int4, Uint4, Float4E2M1, Int2, Uint2:
		// Sub-byte types are stored packed in int32_data, one byte per entry.
		if int64(len(pb.Int32Data)) != size {
			return nil, fmt.Errorf("%d packed bytes stored, shape needs %d", len(pb.Int32Data), size)
		}
		for i, v := range pb.Int32Data {
			out[i] = byte(v)
		}
	default:
		return nil, fmt.Errorf("cannot read %s data", dt)
	}
	return out, nil
}

// maxDecode bounds the element count of tensors decoded into float64/int64
// slices by analysis code, which only needs small constants.
const maxDecode = 1 << 22

// Float64s decodes a numeric tensor (any float, int or bool type).
func (t *Tensor) Float64s() ([]float64, error) {
	n := t.Numel()
	if n < 0 || n > maxDecode {
		return nil, fmt.Errorf("tensor %q too large to decode (%d elements)", t.Name, n)
	}
	raw, err := t.Raw()
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		v, ok := DecodeElem(raw, t.DType, int(i))
		if !ok {
			return nil, fmt.Errorf("tensor %q: cannot decode %s", t.Name, t.DType)
		}
		out[i] = v
	}
	return out, nil
}

// Int64s decodes an integer or bool tensor.
func (t *Tensor) Int64s() ([]int64, error) {
	if !t.DType.IsInt() && t.DType != Bool {
		return nil, fmt.Errorf("tensor %q is %s, not an integer", t.Name, t.DType)
	}
	f, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(f))
	raw, _ := t.Raw()
	for i := range f {
		if t.DType == Int64 {
			out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		} else {
			out[i] = int64(f[i])
		}
	}
	return out, nil
}

// DecodeElem reads element i of little-endian data of type dt as float64.
func DecodeElem(raw []byte, dt DType, i int) (float64, bool) {
	switch dt {
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))), true
	case Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])), true
	case Float16:
		return float64(HalfToFloat(binary.LittleEndian.Uint16(raw[2*i:]))), true
	case BFloat16:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)), true
	case Int64:
		return float64(int64(binary.LittleEndian.Uint64(raw[8*i:]))), true
	case Uint64:
		return float64(binary.LittleEndian.Uint64(raw[8*i:])), true
	case Int32:
		return float64(int32(binary.LittleEndian.Uint32(raw[4*i:]))), true
	case Uint32:
		return float64(binary.LittleEndian.Uint32(raw[4*i:])), true
	case Int16:
		return float64(int16(binary.LittleEndian.Uint16(raw[2*i:]))), true
	case Uint16:
		return float64(binary.LittleEndian.Uint16(raw[2*i:])), true
	case Int8:
		return float64(int8(raw[i])), true
	case Uint8, Bool:
		return float64(raw[i]), true
	}
	return 0, false
}

// HalfToFloat converts IEEE binary16 bits to float32.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// subnormal: normalise
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		man &= 0x3ff
		return math.Float32frombits(sign | e<<23 | man<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// FloatToHalf converts float32 to binary16 bits, rounding to nearest even.
func FloatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e)
		half := man >> shift
		rem := man & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++
	}
	return sign | uint16(half)
}

// FloatToBF16 converts float32 to bfloat16 bits, rounding to nearest even.
func FloatToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// TensorFromProto wraps a standalone TensorProto (a test data file, say):
// its dims are checked against the data it holds; external data is refused.
func TensorFromProto(tp *onnxpb.TensorProto) (*Tensor, error) {
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, badInput("tensor %q: external data is not supported here", tp.GetName())
	}
	return tensorFromProto(tp, nil)
}
