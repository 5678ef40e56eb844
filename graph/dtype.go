package graph

import "fmt"

// DType is an ONNX tensor element type; the values are TensorProto.DataType's.
type DType int32

const (
	Undefined      DType = 0
	Float32        DType = 1
	Uint8          DType = 2
	Int8           DType = 3
	Uint16         DType = 4
	Int16          DType = 5
	Int32          DType = 6
	Int64          DType = 7
	String         DType = 8
	Bool           DType = 9
	Float16        DType = 10
	Float64        DType = 11
	Uint32         DType = 12
	Uint64         DType = 13
	Complex64      DType = 14
	Complex128     DType = 15
	BFloat16       DType = 16
	Float8E4M3FN   DType = 17
	Float8E4M3FNUZ DType = 18
	Float8E5M2     DType = 19
	Float8E5M2FNUZ DType = 20
	Uint4          DType = 21
	Int4           DType = 22
	Float4E2M1     DType = 23
	Float8E8M0     DType = 24
	Uint2          DType = 25
	Int2           DType = 26
)

var dtypeNames = map[DType]string{
	Undefined: "undefined", Float32: "float32", Uint8: "uint8", Int8: "int8",
	Uint16: "uint16", Int16: "int16", Int32: "int32", Int64: "int64",
	String: "string", Bool: "bool", Float16: "float16", Float64: "float64",
	Uint32: "uint32", Uint64: "uint64", Complex64: "complex64",
	Complex128: "complex128", BFloat16: "bfloat16",
	Float8E4M3FN: "float8e4m3fn", Float8E4M3FNUZ: "float8e4m3fnuz",
	Float8E5M2: "float8e5m2", Float8E5M2FNUZ: "float8e5m2fnuz",
	Uint4: "uint4", Int4: "int4", Float4E2M1: "float4e2m1",
	Float8E8M0: "float8e8m0", Uint2: "uint2", Int2: "int2",
}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Bits is the storage size of one element; 0 for strings and unknown types.
func (d DType) Bits() int {
	switch d {
	case Bool, Uint8, Int8, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0:
		return 8
	case Uint16, Int16, Float16, BFloat16:
		return 16
	case Int32, Uint32, Float32:
		return 32
	case Int64, Uint64, Float64, Complex64:
		return 64
	case Complex128:
		return 128
	case Uint4, Int4, Float4E2M1:
		return 4
	case Uint2, Int2:
		return 2
	}
	return 0
}

// IsFloat reports whether d is a real floating-point type.
func (d DType) IsFloat() bool {
	switch d {
	case Float32, Float16, BFloat16, Float64, Float8E4M3FN, Float8E4M3FNUZ,
		Float8E5M2, Float8E5M2FNUZ, Float4E2M1, Float8E8M0:
		return true
	}
	return false
}

// IsInt reports whether d is an integer type (bool excluded).
func (d DType) IsInt() bool {
	switch d {
	case Uint8, Int8, Uint16, Int16, Int32, Int64, Uint32, Uint64, Uint4, Int4, Uint2, Int2:
		return true
	}
	return false
}

// StorageBytes is the byte size of n packed elements of d, or -1 when unknown
// or when it would overflow.
func (d DType) StorageBytes(n int64) int64 {
	b := int64(d.Bits())
	if b == 0 || n < 0 {
		return -1
	}
	if n > (1<<62)/b {
		return -1
	}
	return (n*b + 7) / 8
}
