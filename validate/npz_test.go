package validate

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// testdata/validate/numpy_inputs.npz was written by NumPy 2.4 with
// np.savez_compressed(q=arange(64, float32).reshape(1,2,8,4)/64,
// ids=[[3,1,4,1,5,9,2,6]] int64, mask=ones((1,1,8,8), bool),
// h=[1.5, -2] float16): a deflated archive as users make them.
func TestReadNPZFromNumPy(t *testing.T) {
	got, err := ReadNPZ(filepath.Join("..", "testdata", "validate", "numpy_inputs.npz"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, shape string
		dt          graph.DType
		at          int
		want        float64
	}{
		{"q", "[1 2 8 4]", graph.Float32, 63, 63.0 / 64},
		{"ids", "[1 8]", graph.Int64, 5, 9},
		{"mask", "[1 1 8 8]", graph.Bool, 10, 1},
		{"h", "[2]", graph.Float16, 1, -2},
	}
	if len(got) != len(cases) {
		t.Errorf("%d arrays, want %d", len(got), len(cases))
	}
	for _, c := range cases {
		a := got[c.name]
		if a == nil {
			t.Errorf("no array %q", c.name)
			continue
		}
		if a.DType != c.dt || fmt.Sprint(a.Shape) != c.shape || a.Float64At(c.at) != c.want {
			t.Errorf("%s: %s %v, [%d] = %g; want %s %s, %g", c.name, a.DType, a.Shape, c.at, a.Float64At(c.at), c.dt, c.shape, c.want)
		}
	}
}

// Hostile files: each is refused with an InputError naming the file,
// without a panic or an allocation of what the file claims.
func TestReadNPZRefusesHostileFiles(t *testing.T) {
	ok := testgraph.Array{Name: "x", Descr: "<f4", Shape: []int64{2}, Data: testgraph.F32(1, 2)}
	with := func(edit func(a *testgraph.Array)) []byte {
		a := ok
		edit(&a)
		return testgraph.NPZ(a)
	}
	bomb := func() []byte {
		// 64 MiB of zeros deflate to a few KiB; the header claims 3 GiB.
		var b bytes.Buffer
		w := zip.NewWriter(&b)
		f, _ := w.Create("x.npy")
		f.Write(testgraph.NPY(testgraph.Array{Descr: "|u1", Shape: []int64{3 << 30}}))
		f.Write(make([]byte, 64<<20))
		w.Close()
		return b.Bytes()
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty file", nil, "not a .npz file"},
		{"not a zip", []byte("hello, world"), "not a .npz file"},
		{"truncated zip", testgraph.NPZ(ok)[:40], "not a .npz file"},
		{"no arrays", testgraph.NPZ(), "no arrays"},
		{"entry not .npy", func() []byte {
			var b bytes.Buffer
			w := zip.NewWriter(&b)
			f, _ := w.Create("notes.txt")
			f.Write([]byte("hi"))
			w.Close()
			return b.Bytes()
		}(), `entry "notes.txt" is not a .npy array`},
		{"duplicate name", testgraph.NPZ(ok, ok), `array "x" appears twice`},
		{"bad magic", func() []byte {
			var b bytes.Buffer
			w := zip.NewWriter(&b)
			f, _ := w.Create("x.npy")
			f.Write([]byte("PK not numpy at all"))
			w.Close()
			return b.Bytes()
		}(), "bad magic"},
		{"big-endian", with(func(a *testgraph.Array) { a.Descr = ">f4" }), `dtype ">f4" is not supported`},
		{"object dtype", with(func(a *testgraph.Array) { a.Descr = "|O" }), `dtype "|O" is not supported`},
		{"fortran order", with(func(a *testgraph.Array) {
			a.Header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }"
		}), "fortran_order"},
		{"shape past 2^63", with(func(a *testgraph.Array) { a.Shape = []int64{1 << 40, 1 << 40} }), "too large"},
		{"shape over the limit", with(func(a *testgraph.Array) { a.Shape = []int64{1 << 31} }), "over the"},
		{"negative dim", with(func(a *testgraph.Array) {
			a.Header = "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }"
		}), "is not a size"},
		{"data short", with(func(a *testgraph.Array) { a.Shape = []int64{3} }), "needs 12 bytes of data; the array holds 8"},
		{"data long", with(func(a *testgraph.Array) { a.Shape = []int64{1} }), "needs 4 bytes of data"},
		{"header not a dict", with(func(a *testgraph.Array) { a.Header = "descr=<f4" }), "not a dict"},
		{"header lacks shape", with(func(a *testgraph.Array) { a.Header = "{'descr': '<f4', 'fortran_order': False}" }), "lacks shape"},
		{"unknown key", with(func(a *testgraph.Array) {
			a.Header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'evil': 1}"
		}), `unknown key "evil"`},
		{"deflate bomb", bomb(), "over the"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npz")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadNPZ(path)
			var ie *graph.InputError
			if !errors.As(err, &ie) || ie.File != path || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want an InputError on %s containing %q", err, path, c.want)
			}
		})
	}
	// Not regular files: a FIFO would block a reader forever.
	fifo := filepath.Join(dir, "fifo.npz")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if _, err := ReadNPZ(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	}
	if _, err := ReadNPZ(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	if _, err := ReadNPZ(filepath.Join(dir, "missing.npz")); err == nil || !strings.Contains(err.Error(), "missing.npz") {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzReadNPY: no input makes the .npy reader panic or read past its limit.
func FuzzReadNPY(f *testing.F) {
	f.Add(testgraph.NPY(testgraph.Array{Descr: "<f4", Shape: []int64{2}, Data: testgraph.F32(1, 2)}))
	f.Add(testgraph.NPY(testgraph.Array{Descr: "|b1", Shape: []int64{1, 3}, Data: testgraph.Bools(true, false, true)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, n, err := readNPY(bytes.NewReader(data), 1<<20)
		if err == nil && (a == nil || n > 1<<20) {
			t.Fatalf("accepted %d bytes", n)
		}
	})
}
