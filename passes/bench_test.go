package passes

import (
	"runtime"
	"testing"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

// BenchmarkLoadInspect1GiB loads and inspects a generated model with 1 GiB of
// weights (16 layers, hidden 2048) and reports the time as a ratio to a bare
// proto.Unmarshal of the same bytes, measured in the same iteration.
func BenchmarkLoadInspect1GiB(b *testing.B) {
	data := testgraph.Transformer(16, 2048, 16, "seq").Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ratio float64
	for i := 0; i < b.N; i++ {
		// Each side starts from a collected heap so neither pays for the
		// other's garbage.
		runtime.GC()
		t0 := time.Now()
		var pb onnxpb.ModelProto
		if err := proto.Unmarshal(data, &pb); err != nil {
			b.Fatal(err)
		}
		bare := time.Since(t0)
		pb = onnxpb.ModelProto{}
		runtime.GC()
		t1 := time.Now()
		m, err := graph.LoadBytes(data, "")
		if err != nil {
			b.Fatal(err)
		}
		res := FindSites(m.Graph)
		ours := time.Since(t1)
		if len(res.Sites) != 16 {
			b.Fatalf("found %d sites, want 16", len(res.Sites))
		}
		ratio += float64(ours) / float64(bare)
	}
	b.ReportMetric(ratio/float64(b.N), "x-unmarshal")
	b.ReportMetric(float64(len(data))/(1<<30), "GiB")
}

// BenchmarkRewrite48Layers rewrites a generated 48-layer model with 1 GiB of
// weights (hidden 1184) and reports the time as a ratio to parsing and
// re-serialising the same bytes, measured in the same iteration.
func BenchmarkRewrite48Layers(b *testing.B) {
	data := testgraph.Transformer(48, 1184, 16, "seq").Bytes()
	b.SetBytes(int64(len(data)))
	var ratio float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		t0 := time.Now()
		var pb onnxpb.ModelProto
		if err := proto.Unmarshal(data, &pb); err != nil {
			b.Fatal(err)
		}
		if _, err := (proto.MarshalOptions{Deterministic: true}).Marshal(&pb); err != nil {
			b.Fatal(err)
		}
		bare := time.Since(t0)
		pb = onnxpb.ModelProto{}
		runtime.GC()
		t1 := time.Now()
		m, err := graph.LoadBytes(data, "")
		if err != nil {
			b.Fatal(err)
		}
		c, err := Rewrite(m, Options{Target: "attnopt"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Marshal(); err != nil {
			b.Fatal(err)
		}
		ours := time.Since(t1)
		if c.FusedCount() != 48 {
			b.Fatalf("fused %d sites, want 48", c.FusedCount())
		}
		ratio += float64(ours) / float64(bare)
	}
	b.ReportMetric(ratio/float64(b.N), "x-parse+serialise")
	b.ReportMetric(float64(len(data))/(1<<30), "GiB")
}
