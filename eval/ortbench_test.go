package eval_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// BenchmarkValidateVsORT times, per fixture of testdata/MANIFEST.json, what
// `attnopt validate --scope model` runs: the original model and its
// `--target ort` rewrite on the same seeded inputs, once in the Go runtime
// and once in ONNX Runtime (session creation included, as validation does
// it; graph optimisations off, as validation sets them). Each benchmark
// iteration is one round with both sides, the side that goes first
// alternating; it reports the minimum and median of the per-round ratios
// Go ÷ ORT, so load from other processes hits both sides alike. Run with
// -benchtime 5x or more (bench/README.md).
//
// A rewrite ONNX Runtime's CPU provider cannot run (fp16 com.microsoft
// attention) is timed as the original model alone, on both sides
// ("orig-only" = 1).
func BenchmarkValidateVsORT(b *testing.B) {
	ortR, err := validate.NewORTRunner("", "")
	if err != nil {
		b.Skipf("ONNX Runtime not available: %v", err)
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "MANIFEST.json"))
	if err != nil {
		b.Skip("testdata/MANIFEST.json not present")
	}
	var man struct {
		Models []struct{ Name, File string }
	}
	if err := json.Unmarshal(data, &man); err != nil {
		b.Fatal(err)
	}
	for _, fx := range man.Models {
		b.Run(fx.Name, func(b *testing.B) {
			path := filepath.Join("..", "testdata", fx.File)
			orig, err := graph.Load(path)
			if err != nil {
				b.Fatal(err)
			}
			in, err := validate.RandomInputs(orig, 1, nil)
			if err != nil {
				b.Fatal(err)
			}
			models := []*graph.Model{orig}
			rew, _ := graph.Load(path)
			if _, err := passes.Rewrite(rew, passes.Options{Target: "ort"}); err == nil {
				if _, err := ortR.Run(rew, in); err == nil {
					models = append(models, rew)
				}
			}
			goSide := func() {
				for _, m := range models {
					if _, err := eval.Run(m, in, eval.Options{}); err != nil {
						b.Fatal(err)
					}
				}
			}
			ortSide := func() {
				for _, m := range models {
					if _, err := ortR.Run(m, in); err != nil {
						b.Fatal(err)
					}
				}
			}
			var ratios, goMs, ortMs []float64
			for i := 0; i < b.N; i++ {
				var goT, ortT time.Duration
				if i%2 == 0 {
					goT = timed(goSide)
					ortT = timed(ortSide)
				} else {
					ortT = timed(ortSide)
					goT = timed(goSide)
				}
				ratios = append(ratios, goT.Seconds()/ortT.Seconds())
				goMs = append(goMs, goT.Seconds()*1e3)
				ortMs = append(ortMs, ortT.Seconds()*1e3)
			}
			b.ReportMetric(slices.Min(ratios), "x-ort-min")
			b.ReportMetric(median(ratios), "x-ort-med")
			b.ReportMetric(median(goMs), "go-ms-med")
			b.ReportMetric(median(ortMs), "ort-ms-med")
			if len(models) == 1 {
				b.ReportMetric(1, "orig-only")
			}
		})
	}
}

// median of xs (the upper one of an even count); xs is reordered.
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}
