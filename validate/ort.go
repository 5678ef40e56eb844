package validate

import (
	"path/filepath"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/eval/ort"
	"github.com/attnopt/attnopt/graph"
)

// ORTRunner runs models in ONNX Runtime, registering attnopt's custom-op
// library for models that use the attnopt domain.
type ORTRunner struct {
	rt        *ort.Runtime
	customOps string // flag value; resolved when a model needs it
}

// NewORTRunner loads ONNX Runtime (flag, $ONNXRUNTIME_LIB, well-known places).
func NewORTRunner(libFlag, customOpsFlag string) (*ORTRunner, error) {
	lib, err := ort.FindLibrary(libFlag)
	if err != nil {
		return nil, err
	}
	rt, err := ort.Open(lib)
	if err != nil {
		return nil, err
	}
	return &ORTRunner{rt: rt, customOps: customOpsFlag}, nil
}

func (r *ORTRunner) Name() string { return "ort" }

// Version is the loaded ONNX Runtime's version, e.g. "1.24.3".
func (r *ORTRunner) Version() string { return r.rt.Version() }

func (r *ORTRunner) Run(m *graph.Model, in map[string]*eval.Tensor) (map[string]*eval.Tensor, error) {
	data, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	// Graph optimizations off: ORT fuses attention itself, which would make
	// both sides run the same kernel and the comparison vacuous.
	// External data is read from the model's own folder, whatever the
	// working directory (ORT resolves a model given as bytes against it).
	opts := ort.SessionOptions{DisableOptimizations: true, ExternalDataDir: absDir(m.Dir())}
	if m.Opset("attnopt") > 0 {
		lib, err := ort.CustomOpsLibrary(r.customOps)
		if err != nil {
			return nil, err
		}
		opts.CustomOpsLibrary = lib
	}
	s, err := r.rt.NewSession(data, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(in)
}

// absDir makes a model's folder absolute, so ORT's check that external data
// stays inside it does not depend on the working directory; "" stays "".
func absDir(dir string) string {
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
