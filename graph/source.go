package graph

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// source is the folder a model was loaded from; external data is opened
// through an os.Root so that no location can leave it, not even through a
// symlink.
type source struct {
	dir  string
	once sync.Once
	root *os.Root
	err  error
}

func newSource(dir string) *source { return &source{dir: dir} }

// Dir is the folder m's external-data locations are relative to (the one it
// was loaded from), or "" for a model parsed from bytes without one.
func (m *Model) Dir() string {
	if m.src == nil {
		return ""
	}
	return m.src.dir
}

func (s *source) open(location string) (*os.File, error) {
	if err := checkLocation(location); err != nil {
		return nil, err
	}
	if s == nil || s.dir == "" {
		return nil, badInput("external data %q: model was loaded from bytes without a folder", location)
	}
	s.once.Do(func() { s.root, s.err = os.OpenRoot(s.dir) })
	if s.err != nil {
		return nil, s.err
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer; it is then
	// refused below like any file that is not regular.
	f, err := s.root.OpenFile(filepath.FromSlash(location), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if strings.Contains(err.Error(), "escapes") {
			return nil, badInput("external data %q resolves outside the model's folder", location)
		}
		return nil, badInputCause(err, "external data %q: %v", location, unwrapPathErr(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, badInputCause(err, "external data %q: %v", location, unwrapPathErr(err))
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, badInput("external data %q is not a regular file (%s)", location, st.Mode().Type())
	}
	// A file with several hard links may be another model's data seen
	// under a second name; onnx.checker refuses it too.
	if n := linkCount(st); n > 1 {
		f.Close()
		return nil, badInput("external data %q has %d hard links; only files with one link are read", location, n)
	}
	return f, nil
}

// openRange opens location and checks that size bytes from offset lie
// inside it, without an overflowing sum (both may be up to 2^63-1).
func (s *source) openRange(location string, offset, size int64) (*os.File, error) {
	f, err := s.open(location)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if offset < 0 || size < 0 || size > st.Size() || offset > st.Size()-size {
		f.Close()
		return nil, badInput("external data %q ends at %d bytes, tensor needs %d bytes from offset %d", location, st.Size(), size, offset)
	}
	return f, nil
}

// checkLocation refuses external-data paths that could leave the model's
// folder before any file is touched.
func checkLocation(loc string) error {
	if loc == "" {
		return badInput("external data with an empty location")
	}
	if filepath.IsAbs(loc) || strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, `\`) || (len(loc) > 1 && loc[1] == ':') {
		return badInput("external data location %q is absolute; only paths inside the model's folder are allowed", loc)
	}
	for _, part := range strings.FieldsFunc(loc, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return badInput("external data location %q contains '..'; only paths inside the model's folder are allowed", loc)
		}
	}
	return nil
}
