package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
)

// BenchmarkReports48Layers1GiB builds the reports of a generated 48-layer
// model with 1 GiB of weights: the rewrite report (snapshot before the
// rewrite; weights compared by identity, no data read) and the diff of the
// model with a second load of itself (weights compared in place), and
// reports each as a ratio to loading the model once.
func BenchmarkReports48Layers1GiB(b *testing.B) {
	data := testgraph.Transformer(48, 1184, 16, "seq").Bytes()
	b.SetBytes(int64(len(data)))
	var rewriteRatio, diffRatio float64
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		m, err := graph.LoadBytes(data, "")
		if err != nil {
			b.Fatal(err)
		}
		load := time.Since(t0)
		t1 := time.Now()
		snap := TakeSnapshot("model.onnx", m)
		snapTime := time.Since(t1)
		c, err := passes.Rewrite(m, passes.Options{Target: "attnopt"})
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		r := RewriteReport(snap, "model.attnopt.onnx", m, c, nil)
		var buf bytes.Buffer
		for _, f := range Formats {
			buf.Reset()
			if err := Render(&buf, f, r, RenderOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		rewriteRatio += float64(snapTime+time.Since(t2)) / float64(load)
		if r.Totals.Fused != 48 {
			b.Fatalf("fused %d", r.Totals.Fused)
		}
		a, _ := graph.LoadBytes(data, "")
		a2, _ := graph.LoadBytes(data, "")
		t3 := time.Now()
		d := DiffModels("a.onnx", a, "b.onnx", a2)
		diffRatio += float64(time.Since(t3)) / float64(load)
		if d.Changed {
			b.Fatal("a model differs from itself")
		}
	}
	b.ReportMetric(rewriteRatio/float64(b.N), "rewrite-report/load")
	b.ReportMetric(diffRatio/float64(b.N), "diff/load")
}
