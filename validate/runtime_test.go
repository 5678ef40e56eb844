package validate_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/validate"
)

// The Go runtime agrees with ONNX Runtime on every fixture's original model.
func TestGoRuntimeAgreesWithORTOnFixtures(t *testing.T) {
	ortR, _ := ortRunner(t)
	if ortR == nil {
		t.Skip("ONNX Runtime library not available")
	}
	for _, fx := range fixtures(t) {
		m, err := graph.Load(filepath.Join("..", "testdata", fx.File))
		if err != nil {
			t.Fatal(err)
		}
		in, err := validate.RandomInputs(m, 11, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ortR.Run(m, in)
		if err != nil {
			t.Errorf("%s: ort: %v", fx.Name, err)
			continue
		}
		got, err := validate.GoRunner{}.Run(m, in)
		if err != nil {
			t.Errorf("%s: go: %v", fx.Name, err)
			continue
		}
		for _, o := range m.Graph.Outputs {
			tol := validate.Tolerance(o.Type.DType)
			for _, v := range m.Graph.Inputs {
				if v.Type.DType == graph.Float16 {
					tol = validate.Tolerance(graph.Float16)
				}
			}
			met, err := validate.Compare(o.Name, want[o.Name], got[o.Name], tol, 0)
			if err != nil || !met.Pass {
				t.Errorf("%s: output %s: %v max abs %.3g at %v", fx.Name, o.Name, err, met.MaxAbs, met.WorstIndex)
			}
		}
	}
}

// BenchmarkGoRuntimeVsORT reports, per fixture, the Go runtime's time over
// ONNX Runtime's on the same inputs. ONNX Runtime's time includes creating
// its session, as validation does for every model it runs.
func BenchmarkGoRuntimeVsORT(b *testing.B) {
	ortR, _ := ortRunner(b)
	if ortR == nil {
		b.Skip("ONNX Runtime library not available")
	}
	for _, fx := range fixtures(b) {
		b.Run(fx.Name, func(b *testing.B) {
			m, err := graph.Load(filepath.Join("..", "testdata", fx.File))
			if err != nil {
				b.Fatal(err)
			}
			in, _ := validate.RandomInputs(m, 11, nil)
			var goT, ortT time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := (validate.GoRunner{}).Run(m, in); err != nil {
					b.Fatal(err)
				}
				goT += time.Since(t0)
				t1 := time.Now()
				if _, err := ortR.Run(m, in); err != nil {
					b.Fatal(err)
				}
				ortT += time.Since(t1)
			}
			b.ReportMetric(float64(goT)/float64(ortT), "x-ort")
		})
	}
}
