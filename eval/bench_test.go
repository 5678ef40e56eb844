package eval

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

func BenchmarkMatMul512(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, y := randTensor(rng, 512, 512), randTensor(rng, 512, 512)
	b.SetBytes(0)
	for i := 0; i < b.N; i++ {
		if _, err := matmul(x, y, 0+2); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*512*512*512*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkFlashAttention is the SAGAN-like shape at reduced length: one
// head, N = 4096 tokens, head dim 8 for Q/K and 64 for V.
func BenchmarkFlashAttention(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	n := 4096
	q, k, v := randTensor(rng, 1, 1, n, 8), randTensor(rng, 1, 1, n, 8), randTensor(rng, 1, 1, n, 64)
	sp, err := qkvSpec(q, k, v)
	if err != nil {
		b.Fatal(err)
	}
	sp.scale = 1
	for i := 0; i < b.N; i++ {
		flashAttention(sp, 2)
	}
	b.ReportMetric(2*float64(n)*float64(n)*(8+64)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkRunFixtures runs every fixture end to end on its stored inputs.
func BenchmarkRunFixtures(b *testing.B) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "models", "*"))
	if len(dirs) == 0 {
		b.Skip("no fixtures")
	}
	for _, dir := range dirs {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
				b.Skip("no model")
			}
			m, err := graph.Load(filepath.Join(dir, "model.onnx"))
			if err != nil {
				b.Fatal(err)
			}
			ins, _, err := loadDataSet(m, filepath.Join(dir, "test_data_set_0"))
			if err != nil {
				b.Skip(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Run(m, ins, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
