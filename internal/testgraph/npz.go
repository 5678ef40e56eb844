package testgraph

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Array is one .npy array: its NumPy dtype descr ("<f4", "|b1", …), shape
// and raw little-endian data. Header, when set, replaces the header dict
// (hostile cases).
type Array struct {
	Name   string
	Descr  string
	Shape  []int64
	Data   []byte
	Header string
}

// NPY encodes a as a version 1.0 .npy file, header padded to 64 bytes as
// NumPy writes it.
func NPY(a Array) []byte {
	h := a.Header
	if h == "" {
		dims := make([]string, len(a.Shape))
		for i, d := range a.Shape {
			dims[i] = fmt.Sprint(d)
		}
		shape := strings.Join(dims, ", ")
		if len(dims) == 1 {
			shape += ","
		}
		h = fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", a.Descr, shape)
	}
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	b.Write(a.Data)
	return b.Bytes()
}

// NPZ writes arrays as numpy.savez does: a zip of NAME.npy entries, in the
// order given.
func NPZ(arrays ...Array) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, a := range arrays {
		f, err := w.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Store})
		if err != nil {
			panic(err)
		}
		f.Write(NPY(a))
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// F32 is the raw data of float32 values.
func F32(vals ...float32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, vals)
	return b.Bytes()
}

// Bools is the raw data of bool values.
func Bools(vals ...bool) []byte {
	out := make([]byte, len(vals))
	for i, v := range vals {
		if v {
			out[i] = 1
		}
	}
	return out
}
