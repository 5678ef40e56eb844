package passes

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

// benchRatio times baseline and ours on the same bytes in every iteration,
// each from a collected heap so neither pays for the other's garbage, and
// reports ours/baseline.
func benchRatio(b *testing.B, data []byte, metric string, baseline, ours func() error) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ratio float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		t0 := time.Now()
		if err := baseline(); err != nil {
			b.Fatal(err)
		}
		base := time.Since(t0)
		runtime.GC()
		t1 := time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		ratio += float64(time.Since(t1)) / float64(base)
	}
	b.ReportMetric(ratio/float64(b.N), metric)
	b.ReportMetric(float64(len(data))/(1<<30), "GiB")
}

// BenchmarkLoadInspect1GiB loads and inspects a generated model with 1 GiB of
// weights (16 layers, hidden 2048) against a bare proto.Unmarshal.
func BenchmarkLoadInspect1GiB(b *testing.B) {
	data := testgraph.Transformer(16, 2048, 16, "seq").Bytes()
	benchRatio(b, data, "x-unmarshal",
		func() error { return proto.Unmarshal(data, &onnxpb.ModelProto{}) },
		func() error {
			m, err := graph.LoadBytes(data, "")
			if err != nil {
				return err
			}
			if n := len(FindSites(m.Graph).Sites); n != 16 {
				return fmt.Errorf("found %d sites, want 16", n)
			}
			return nil
		})
}

// BenchmarkRewrite48Layers rewrites a generated 48-layer model with 1 GiB of
// weights (hidden 1184) against parsing and re-serialising the same bytes.
func BenchmarkRewrite48Layers(b *testing.B) {
	data := testgraph.Transformer(48, 1184, 16, "seq").Bytes()
	benchRatio(b, data, "x-parse+serialise",
		func() error {
			var pb onnxpb.ModelProto
			if err := proto.Unmarshal(data, &pb); err != nil {
				return err
			}
			_, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb)
			return err
		},
		func() error {
			m, err := graph.LoadBytes(data, "")
			if err != nil {
				return err
			}
			c, err := Rewrite(m, Options{Target: "attnopt"})
			if err != nil {
				return err
			}
			if c.FusedCount() != 48 {
				return fmt.Errorf("fused %d sites, want 48", c.FusedCount())
			}
			_, err = m.Marshal()
			return err
		})
}
