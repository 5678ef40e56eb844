package validate

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// Limits of ReadNPZ: what a file may claim is checked against these before
// anything of that size is read or allocated.
const (
	maxNPZEntries   = 4096
	maxNPYHeader    = 64 << 10
	maxNPZDataBytes = MaxTensorBytes // all arrays together
)

// npyTypes are the NumPy dtypes (little-endian or byte-sized) ReadNPZ takes.
var npyTypes = map[string]graph.DType{
	"<f4": graph.Float32, "<f2": graph.Float16, "<f8": graph.Float64,
	"<i8": graph.Int64, "<i4": graph.Int32, "<i2": graph.Int16, "|i1": graph.Int8,
	"|u1": graph.Uint8, "<u2": graph.Uint16, "<u4": graph.Uint32, "<u8": graph.Uint64,
	"|b1": graph.Bool,
}

// ReadNPZ reads the arrays of a NumPy .npz file (numpy.savez or
// savez_compressed), keyed by array name. Any problem is an InputError
// naming the file; nothing larger than the file's actual content is
// allocated.
func ReadNPZ(path string) (map[string]*eval.Tensor, error) {
	bad := func(format string, args ...any) error {
		return &graph.InputError{File: path, Msg: fmt.Sprintf(format, args...)}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, bad("%v", errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return nil, bad("not a regular file (%s)", st.Mode())
	}
	zr, err := zip.OpenReader(path)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, bad("not a .npz file (%v)", err)
	}
	if zr == nil {
		return nil, bad("not a .npz file")
	}
	defer zr.Close()
	if len(zr.File) > maxNPZEntries {
		return nil, bad("%d entries; at most %d are read", len(zr.File), maxNPZEntries)
	}
	out := map[string]*eval.Tensor{}
	budget := int64(maxNPZDataBytes)
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok || name == "" {
			return nil, bad("entry %q is not a .npy array", f.Name)
		}
		if out[name] != nil {
			return nil, bad("array %q appears twice", name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, bad("entry %q: %v", f.Name, err)
		}
		t, used, err := readNPY(rc, budget)
		rc.Close()
		if err != nil {
			return nil, bad("entry %q: %v", f.Name, err)
		}
		budget -= used
		out[name] = t
	}
	if len(out) == 0 {
		return nil, bad("no arrays")
	}
	return out, nil
}

// readNPY reads one .npy stream holding at most limit bytes of data, and
// says how many it held.
func readNPY(r io.Reader, limit int64) (*eval.Tensor, int64, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return nil, 0, fmt.Errorf("not a .npy array (bad magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, 0, fmt.Errorf("truncated header")
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, 0, fmt.Errorf("truncated header")
		}
		n := binary.LittleEndian.Uint32(l[:])
		if n > maxNPYHeader {
			return nil, 0, fmt.Errorf("header of %d bytes; at most %d are read", n, maxNPYHeader)
		}
		hlen = int(n)
	default:
		return nil, 0, fmt.Errorf(".npy format version %d.%d is not supported", pre[6], pre[7])
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, 0, fmt.Errorf("truncated header")
	}
	descr, fortran, shape, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, 0, err
	}
	dt, ok := npyTypes[descr]
	if !ok {
		return nil, 0, fmt.Errorf("dtype %q is not supported (want little-endian float16/32/64, integers or bool)", descr)
	}
	if fortran {
		return nil, 0, fmt.Errorf("fortran_order arrays are not supported; save with numpy.ascontiguousarray")
	}
	n := int64(1)
	for _, d := range shape {
		if n = mulSat(n, d); n < 0 {
			return nil, 0, fmt.Errorf("shape %v is too large", shape)
		}
	}
	size := int64(-1)
	if n <= limit { // every type here takes at least a byte an element
		size = dt.StorageBytes(n)
	}
	if size < 0 || size > limit {
		return nil, 0, fmt.Errorf("shape %v needs %d bytes, over the %d bytes validation reads", shape, size, limit)
	}
	var buf bytes.Buffer
	got, err := io.Copy(&buf, io.LimitReader(r, size+1))
	if err != nil {
		return nil, 0, fmt.Errorf("reading data: %v", err)
	}
	if got < size {
		return nil, 0, fmt.Errorf("shape %v needs %d bytes of data; the array holds %d", shape, size, got)
	}
	if got > size {
		return nil, 0, fmt.Errorf("shape %v needs %d bytes of data; the array holds more", shape, size)
	}
	dims := make([]int, len(shape))
	for i, d := range shape {
		dims[i] = int(d)
	}
	t, err := eval.FromRaw(dt, dims, buf.Bytes())
	if err != nil {
		return nil, 0, err
	}
	return t, size, nil
}

// parseNPYHeader reads the Python dict literal of a .npy header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
func parseNPYHeader(h string) (descr string, fortran bool, shape []int64, err error) {
	s := strings.TrimSpace(h)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return "", false, nil, fmt.Errorf("header is not a dict")
	}
	s = s[1 : len(s)-1]
	seen := map[string]bool{}
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			break
		}
		var key string
		if key, s, err = pyString(s); err != nil {
			return "", false, nil, fmt.Errorf("header: %v", err)
		}
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, ":") {
			return "", false, nil, fmt.Errorf("header: no ':' after %q", key)
		}
		s = strings.TrimSpace(s[1:])
		if seen[key] {
			return "", false, nil, fmt.Errorf("header: key %q twice", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			if descr, s, err = pyString(s); err != nil {
				return "", false, nil, fmt.Errorf("header descr: %v", err)
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(s, "False"):
				s = s[5:]
			case strings.HasPrefix(s, "True"):
				fortran, s = true, s[4:]
			default:
				return "", false, nil, fmt.Errorf("header: fortran_order is not True or False")
			}
		case "shape":
			end := strings.IndexByte(s, ')')
			if !strings.HasPrefix(s, "(") || end < 0 {
				return "", false, nil, fmt.Errorf("header: shape is not a tuple")
			}
			shape = []int64{}
			for _, f := range strings.Split(s[1:end], ",") {
				f = strings.TrimSpace(f)
				if f == "" {
					continue
				}
				d, err := strconv.ParseInt(f, 10, 64)
				if err != nil || d < 0 {
					return "", false, nil, fmt.Errorf("header: shape entry %q is not a size", f)
				}
				shape = append(shape, d)
			}
			s = s[end+1:]
		default:
			return "", false, nil, fmt.Errorf("header: unknown key %q", key)
		}
	}
	var missing []string
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", false, nil, fmt.Errorf("header lacks %s", strings.Join(missing, ", "))
	}
	return descr, fortran, shape, nil
}

// pyString reads a quoted Python string without escapes at the start of s.
func pyString(s string) (string, string, error) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", s, fmt.Errorf("expected a quoted string")
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, fmt.Errorf("unterminated string")
	}
	return s[1 : 1+end], s[2+end:], nil
}
