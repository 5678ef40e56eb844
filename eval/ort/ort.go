package ort

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// apiVersion is the ORT C API version requested (ORT 1.24).
const apiVersion = C.AO_API_VERSION

// maxRank bounds the tensor ranks read back from ORT.
const maxRank = 64

// Runtime is a loaded ONNX Runtime library with its environment. There is
// at most one per process; it lives until the process exits.
type Runtime struct {
	path    string
	version string
	env     *C.OrtEnv
	mem     *C.OrtMemoryInfo
}

var (
	loadMu  sync.Mutex
	loaded  *Runtime
	loadErr error
	errPath string
	dlPath  string // the library whose API table is in use, once dlopened
)

// Open loads the library once per process (later calls with the same path
// reuse it; a different path is an error) and creates the env.
func Open(libPath string) (*Runtime, error) {
	if libPath == "" {
		return nil, errors.New("ort: no ONNX Runtime library path given")
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded != nil {
		if loaded.path != libPath {
			return nil, fmt.Errorf("ort: ONNX Runtime already loaded from %s; cannot also load %s in the same process", loaded.path, libPath)
		}
		return loaded, nil
	}
	if loadErr != nil && errPath == libPath {
		return nil, loadErr
	}
	if dlPath != "" && dlPath != libPath {
		return nil, fmt.Errorf("ort: ONNX Runtime already loaded from %s; cannot also load %s in the same process", dlPath, libPath)
	}
	r, err := load(libPath)
	if err != nil {
		loadErr, errPath = err, libPath
		return nil, err
	}
	loaded = r
	return r, nil
}

func load(libPath string) (*Runtime, error) {
	cpath := C.CString(libPath)
	defer C.free(unsafe.Pointer(cpath))
	var version *C.char
	var cerr *C.char
	if C.ao_load(cpath, &version, &cerr) != 0 {
		return nil, fmt.Errorf("ort: load %s: %s", libPath, takeError(cerr))
	}
	dlPath = libPath
	r := &Runtime{path: libPath, version: C.GoString(version)}
	logid := C.CString("attnopt")
	defer C.free(unsafe.Pointer(logid))
	// Log level 4 (fatal): errors come back as messages from each call, and
	// warnings about unused initializers and the like would only clutter
	// the output.
	if err := check(C.ao_create_env(4, logid, &r.env)); err != nil {
		return nil, fmt.Errorf("ort: create environment: %w", err)
	}
	if err := check(C.ao_create_cpu_memory_info(&r.mem)); err != nil {
		return nil, fmt.Errorf("ort: create CPU memory info: %w", err)
	}
	return r, nil
}

// Version is the loaded library's version string, e.g. "1.24.3".
func (r *Runtime) Version() string { return r.version }

// Providers lists the execution providers this build of ONNX Runtime has
// ("CUDAExecutionProvider", "CPUExecutionProvider"): a CPU-only package
// lacks CUDA's whatever the machine has.
func (r *Runtime) Providers() ([]string, error) {
	var out *C.char
	if err := check(C.ao_providers(&out)); err != nil {
		return nil, fmt.Errorf("ort: available providers: %w", err)
	}
	defer C.free(unsafe.Pointer(out))
	return strings.Split(C.GoString(out), ","), nil
}

// Path is the library path the runtime was loaded from.
func (r *Runtime) Path() string { return r.path }

// takeError converts and frees a C error message.
func takeError(msg *C.char) string {
	if msg == nil {
		return "unknown error"
	}
	defer C.free(unsafe.Pointer(msg))
	return C.GoString(msg)
}

// check turns a wrapper's result into an error (nil on success).
func check(msg *C.char) error {
	if msg == nil {
		return nil
	}
	return errors.New(takeError(msg))
}

// Session is a loaded model. Run may be called from several goroutines.
type Session struct {
	rt      *Runtime
	mu      sync.RWMutex
	s       *C.OrtSession
	inputs  []IOInfo
	outputs []IOInfo
}

// NewSession loads a serialized ModelProto.
func (r *Runtime) NewSession(model []byte, opts SessionOptions) (*Session, error) {
	if len(model) == 0 {
		return nil, errors.New("ort: empty model")
	}
	var so *C.OrtSessionOptions
	if err := check(C.ao_create_session_options(&so)); err != nil {
		return nil, fmt.Errorf("ort: session options: %w", err)
	}
	defer C.ao_release_session_options(so)
	if opts.Threads > 0 {
		if err := check(C.ao_set_intra_threads(so, C.int(opts.Threads))); err != nil {
			return nil, fmt.Errorf("ort: intra-op threads: %w", err)
		}
		if err := check(C.ao_set_inter_threads(so, 1)); err != nil {
			return nil, fmt.Errorf("ort: inter-op threads: %w", err)
		}
	}
	if opts.DisableOptimizations {
		if err := check(C.ao_set_opt_level(so, 0)); err != nil {
			return nil, fmt.Errorf("ort: optimization level: %w", err)
		}
	}
	if opts.CustomOpsLibrary != "" {
		cp := C.CString(opts.CustomOpsLibrary)
		err := check(C.ao_register_custom_ops(so, cp))
		C.free(unsafe.Pointer(cp))
		if err != nil {
			return nil, fmt.Errorf("ort: register custom-op library %s: %w", opts.CustomOpsLibrary, err)
		}
	}
	if opts.ExternalDataDir != "" {
		if err := addConfig(so, externalDataDirKey, opts.ExternalDataDir); err != nil {
			return nil, fmt.Errorf("ort: external-data folder %s: %w", opts.ExternalDataDir, err)
		}
	}
	// ORT reads the model during the call only; copy it to C memory anyway
	// so no Go pointer is handed over.
	buf := C.CBytes(model)
	defer C.free(buf)
	s := &Session{rt: r}
	if err := check(C.ao_create_session(r.env, buf, C.size_t(len(model)), so, &s.s)); err != nil {
		return nil, fmt.Errorf("ort: load model: %w", err)
	}
	var err error
	if s.inputs, err = s.describe(0); err == nil {
		s.outputs, err = s.describe(1)
	}
	if err != nil {
		C.ao_release_session(s.s)
		return nil, err
	}
	return s, nil
}

// externalDataDirKey is ORT's session option for the folder external data
// of a model loaded from bytes is read from (onnxruntime's
// onnxruntime_session_options_config_keys.h, ORT 1.17 and later).
const externalDataDirKey = "session.model_external_initializers_file_folder_path"

func addConfig(so *C.OrtSessionOptions, key, value string) error {
	ck, cv := C.CString(key), C.CString(value)
	defer C.free(unsafe.Pointer(ck))
	defer C.free(unsafe.Pointer(cv))
	return check(C.ao_add_config(so, ck, cv))
}

// describe lists the inputs (output == 0) or outputs of the session.
func (s *Session) describe(output C.int) ([]IOInfo, error) {
	kind := "input"
	if output != 0 {
		kind = "output"
	}
	var n C.size_t
	if err := check(C.ao_io_count(s.s, output, &n)); err != nil {
		return nil, fmt.Errorf("ort: %s count: %w", kind, err)
	}
	infos := make([]IOInfo, int(n))
	dims := (*[maxRank]C.int64_t)(C.malloc(C.size_t(maxRank * 8)))
	defer C.free(unsafe.Pointer(dims))
	for i := range infos {
		var name *C.char
		if err := check(C.ao_io_name(s.s, output, C.size_t(i), &name)); err != nil {
			return nil, fmt.Errorf("ort: %s %d name: %w", kind, i, err)
		}
		infos[i].Name = takeError(name)
		var isTensor, elem C.int
		var rank C.size_t
		if err := check(C.ao_io_type(s.s, output, C.size_t(i), &isTensor, &elem, &rank, &dims[0], maxRank)); err != nil {
			return nil, fmt.Errorf("ort: %s %q type: %w", kind, infos[i].Name, err)
		}
		if isTensor == 0 {
			infos[i].DType = graph.Undefined
			continue
		}
		infos[i].DType = graph.DType(elem)
		infos[i].Shape = make([]int64, int(rank))
		for d := range infos[i].Shape {
			v := int64(dims[d])
			if v < 0 {
				v = -1
			}
			infos[i].Shape[d] = v
		}
	}
	return infos, nil
}

func cloneInfos(in []IOInfo) []IOInfo {
	out := make([]IOInfo, len(in))
	for i, x := range in {
		out[i] = IOInfo{Name: x.Name, DType: x.DType, Shape: append([]int64(nil), x.Shape...)}
	}
	return out
}

// Inputs lists the graph inputs ORT expects (initializers excluded), in
// order. Non-tensor inputs have DType graph.Undefined.
func (s *Session) Inputs() []IOInfo { return cloneInfos(s.inputs) }

// Outputs lists the graph outputs in order.
func (s *Session) Outputs() []IOInfo { return cloneInfos(s.outputs) }

// elemSize is the byte width of the types moved in and out of ORT, or 0 for
// unsupported ones.
func elemSize(dt graph.DType) int {
	switch dt {
	case graph.Float32, graph.Float16, graph.BFloat16, graph.Float64,
		graph.Int64, graph.Int32, graph.Int16, graph.Int8,
		graph.Uint64, graph.Uint32, graph.Uint16, graph.Uint8, graph.Bool:
		return dt.Bits() / 8
	}
	return 0
}

// checkData makes sure t's storage holds exactly its shape's elements.
func checkData(t *eval.Tensor) error {
	n := 1
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in %v", t.Shape)
		}
		n *= d
	}
	have := len(t.F)
	switch {
	case t.DType == graph.Bool:
		have = len(t.B)
	case t.DType.IsInt():
		have = len(t.I)
	}
	if have != n {
		return fmt.Errorf("%s%v holds %d elements, want %d", t.DType, t.Shape, have, n)
	}
	return nil
}

// cArena tracks C allocations made for one Run.
type cArena []unsafe.Pointer

func (a *cArena) alloc(n int) unsafe.Pointer {
	p := C.malloc(C.size_t(max(n, 1)))
	if p == nil {
		panic("ort: out of C memory")
	}
	*a = append(*a, p)
	return p
}

func (a *cArena) str(s string) *C.char {
	p := C.CString(s)
	*a = append(*a, unsafe.Pointer(p))
	return p
}

func (a *cArena) free() {
	for _, p := range *a {
		C.free(p)
	}
	*a = nil
}

// Run feeds named inputs and returns every graph output by name.
func (s *Session) Run(inputs map[string]*eval.Tensor) (map[string]*eval.Tensor, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return nil, errors.New("ort: session is closed")
	}
	// Required inputs in the session's order, then any others the caller
	// gives (overridable initializers; ORT rejects names it does not know).
	var names []string
	required := map[string]bool{}
	var missing []string
	for _, in := range s.inputs {
		required[in.Name] = true
		names = append(names, in.Name)
		if inputs[in.Name] == nil {
			missing = append(missing, in.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("ort: missing input %s", strings.Join(missing, ", "))
	}
	var extra []string
	for name, t := range inputs {
		if !required[name] && t != nil {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	names = append(names, extra...)

	var arena cArena
	defer arena.free()
	nIn, nOut := len(names), len(s.outputs)
	ptrSize := int(unsafe.Sizeof(uintptr(0)))
	inNames := unsafe.Slice((**C.char)(arena.alloc(nIn*ptrSize)), max(nIn, 1))
	inVals := unsafe.Slice((**C.OrtValue)(arena.alloc(nIn*ptrSize)), max(nIn, 1))
	outNames := unsafe.Slice((**C.char)(arena.alloc(nOut*ptrSize)), max(nOut, 1))
	outVals := unsafe.Slice((**C.OrtValue)(arena.alloc(nOut*ptrSize)), max(nOut, 1))
	for i := range inVals {
		inVals[i] = nil
	}
	for i := range outVals {
		outVals[i] = nil
	}
	defer func() {
		for i := 0; i < nIn; i++ {
			C.ao_release_value(inVals[i])
		}
		for i := 0; i < nOut; i++ {
			C.ao_release_value(outVals[i])
		}
	}()

	for i, name := range names {
		t := inputs[name]
		if elemSize(t.DType) == 0 {
			return nil, fmt.Errorf("ort: input %q: unsupported type %s", name, t.DType)
		}
		if err := checkData(t); err != nil {
			return nil, fmt.Errorf("ort: input %q: %w", name, err)
		}
		raw, err := t.Raw()
		if err != nil {
			return nil, fmt.Errorf("ort: input %q: %w", name, err)
		}
		data := arena.alloc(len(raw))
		if len(raw) > 0 {
			copy(unsafe.Slice((*byte)(data), len(raw)), raw)
		}
		shape := (*C.int64_t)(arena.alloc(len(t.Shape) * 8))
		shapeS := unsafe.Slice(shape, max(len(t.Shape), 1))
		for d, v := range t.Shape {
			shapeS[d] = C.int64_t(v)
		}
		inNames[i] = arena.str(name)
		if err := check(C.ao_create_tensor(s.rt.mem, data, C.size_t(len(raw)), shape, C.size_t(len(t.Shape)),
			C.int(t.DType), &inVals[i])); err != nil {
			return nil, fmt.Errorf("ort: input %q %s: %w", name, t, err)
		}
	}
	for i, out := range s.outputs {
		outNames[i] = arena.str(out.Name)
	}
	if err := check(C.ao_run(s.s, &inNames[0], &inVals[0], C.size_t(nIn), &outNames[0], C.size_t(nOut), &outVals[0])); err != nil {
		return nil, fmt.Errorf("ort: run: %w", err)
	}

	dims := unsafe.Slice((*C.int64_t)(arena.alloc(maxRank*8)), maxRank)
	res := make(map[string]*eval.Tensor, nOut)
	for i, out := range s.outputs {
		var isTensor, elem C.int
		var rank C.size_t
		var data unsafe.Pointer
		if err := check(C.ao_tensor_info(outVals[i], &isTensor, &elem, &rank, &dims[0], maxRank, &data)); err != nil {
			return nil, fmt.Errorf("ort: output %q: %w", out.Name, err)
		}
		if isTensor == 0 {
			return nil, fmt.Errorf("ort: output %q is not a tensor", out.Name)
		}
		dt := graph.DType(elem)
		w := elemSize(dt)
		if w == 0 {
			return nil, fmt.Errorf("ort: output %q: unsupported type %s", out.Name, dt)
		}
		shape := make([]int, int(rank))
		n := 1
		for d := range shape {
			shape[d] = int(dims[d])
			n *= shape[d]
		}
		var raw []byte
		if n > 0 {
			if data == nil {
				return nil, fmt.Errorf("ort: output %q has no data", out.Name)
			}
			raw = append([]byte(nil), unsafe.Slice((*byte)(data), n*w)...)
		}
		t, err := eval.FromRaw(dt, shape, raw)
		if err != nil {
			return nil, fmt.Errorf("ort: output %q: %w", out.Name, err)
		}
		res[out.Name] = t
	}
	return res, nil
}

// Close releases the session; later Runs fail. It is safe to call twice.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s != nil {
		C.ao_release_session(s.s)
		s.s = nil
	}
}
