package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/version"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/report/")

const goldenDir = "../testdata/golden/report"

// goldenFixtures are compared original → `--target attnopt` rewrite.
var goldenFixtures = []string{"sagan", "hf_bert"}

// fixtureReports builds, for one fixture, the rewrite report (with the
// rewrite's actions and a Go-runtime validation) and the diff of the two
// files as `attnopt diff` sees them. Paths shown are repo-relative or base
// names, never temporary directories.
func fixtureReports(t testing.TB, name string) (rewrite, diff *Report) {
	t.Helper()
	return fixtureReportsWith(t, name, passes.Options{Target: "attnopt"})
}

func fixtureReportsWith(t testing.TB, name string, opts passes.Options) (rewrite, diff *Report) {
	t.Helper()
	src := filepath.Join("..", "testdata", "models", name, "model.onnx")
	shown := "testdata/models/" + name + "/model.onnx"
	outName := name + ".attnopt.onnx"
	m, err := graph.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	before := TakeSnapshot(shown, m)
	ctx, err := passes.Rewrite(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), outName)
	if _, err := m.Save(out); err != nil {
		t.Fatal(err)
	}
	orig, err := graph.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	rew, err := graph.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	v := validate.Validate(orig, rew, validate.GoRunner{}, validate.Options{Seed: 1})
	v.Original, v.Rewritten = shown, outName
	rewrite = RewriteReport(before, outName, m, ctx, v)
	rewrite.SetProvenance(goldenProvenance("rewrite", shown, "-o", outName, "--validate", "--report", "report.html").WithRun(&RuntimeInfo{Name: "go"}, 1))

	a, err := graph.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	diff = DiffModels(shown, a, outName, rew)
	diff.SetProvenance(goldenProvenance("diff", shown, outName))
	return rewrite, diff
}

// goldenProvenance is what the CLI records, with the build fixed so the
// golden files do not change with the Go release or the commit.
func goldenProvenance(args ...string) *Provenance {
	p := NewProvenance(args)
	p.Info = version.Info{Version: version.Version, Go: "go1.26", Platform: "linux/amd64"}
	return p
}

// renderings are the files each report is rendered to.
var renderings = []struct {
	suffix string
	format Format
	opts   RenderOptions
}{
	{".txt", Text, RenderOptions{}},
	{".aligned.txt", Text, RenderOptions{Aligned: true}},
	{".md", Markdown, RenderOptions{}},
	{".json", JSON, RenderOptions{}},
	{".html", HTML, RenderOptions{}},
}

func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, file)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./report -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (regenerate with: go test ./report -update); got:\n%s", path, got)
	}
}

func TestGoldenReports(t *testing.T) {
	for _, name := range goldenFixtures {
		t.Run(name, func(t *testing.T) {
			rewrite, diff := fixtureReports(t, name)
			for _, c := range []struct {
				kind string
				rep  *Report
			}{{"rewrite", rewrite}, {"diff", diff}} {
				for _, r := range renderings {
					var buf bytes.Buffer
					if err := Render(&buf, r.format, c.rep, r.opts); err != nil {
						t.Fatal(err)
					}
					out := buf.Bytes()
					if strings.Contains(string(out), os.TempDir()) {
						t.Errorf("%s %s: output names a temporary path", c.kind, r.suffix)
					}
					if r.format == JSON {
						validateAgainst(t, "report.v1.json", out)
					}
					if r.format == HTML {
						selfContained(t, out)
					}
					checkGolden(t, name+"_"+c.kind+r.suffix, out)
				}
			}
		})
	}
}

// An approximate rewrite (SAGAN, 4x4 windows over its 16x16 grid) is
// reported as approximated, with the plan, its memory and the measured error.
// Without --max-error the window site is APPROXIMATE, not a pass.
func TestGoldenApproximateRewrite(t *testing.T) {
	rewrite, diff := fixtureReportsWith(t, "sagan", passes.Options{Target: "attnopt", Approx: passes.ApproxOptions{Window: []int64{4, 4}}})
	s := rewrite.Sites[0]
	if s.Status != SiteApprox || s.Approximation == nil || !strings.HasPrefix(*s.Approximation, "window 4x4") || s.Validation == nil || s.Validation.Verdict != "APPROXIMATE" {
		t.Fatalf("site: %+v", s)
	}
	if d := diff.Sites[0]; d.Status != SiteApprox || *d.Approximation != "window" {
		t.Errorf("diff site: %s %v", d.Status, d.Approximation)
	}
	for _, r := range renderings {
		var buf bytes.Buffer
		if err := Render(&buf, r.format, rewrite, r.opts); err != nil {
			t.Fatal(err)
		}
		if r.format == JSON {
			validateAgainst(t, "report.v1.json", buf.Bytes())
		}
		checkGolden(t, "sagan_window_rewrite"+r.suffix, buf.Bytes())
	}
}

// The report is deterministic: building and rendering twice gives the same
// bytes in every format.
func TestReportsAreDeterministic(t *testing.T) {
	r1, d1 := fixtureReports(t, "hf_bert")
	r2, d2 := fixtureReports(t, "hf_bert")
	for _, r := range renderings {
		for i, pair := range [][2]*Report{{r1, r2}, {d1, d2}} {
			var a, b bytes.Buffer
			Render(&a, r.format, pair[0], r.opts)
			Render(&b, r.format, pair[1], r.opts)
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("report %d format %s%s differs between two runs", i, r.format, r.suffix)
			}
		}
	}
}

func TestDiffOfModelWithItselfReportsNoChange(t *testing.T) {
	for _, name := range goldenFixtures {
		src := filepath.Join("..", "testdata", "models", name, "model.onnx")
		a, err := graph.Load(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := graph.Load(src)
		if err != nil {
			t.Fatal(err)
		}
		r := DiffModels("a.onnx", a, "b.onnx", b)
		if r.Changed {
			t.Errorf("%s: a model compared with itself is reported as changed: %s", name, r.Headline())
		}
		if !strings.HasPrefix(r.Headline(), "no change") || r.Inits.Unchanged != len(a.Graph.Inits) || r.Nodes.Unchanged != len(a.Graph.Nodes) {
			t.Errorf("%s: %s (inits unchanged %d, nodes unchanged %d)", name, r.Headline(), r.Inits.Unchanged, r.Nodes.Unchanged)
		}
		for _, s := range r.Sites {
			if s.Status != SiteUnchanged {
				t.Errorf("%s: site %d status %s", name, s.ID, s.Status)
			}
		}
		var buf bytes.Buffer
		Render(&buf, JSON, r, RenderOptions{})
		validateAgainst(t, "report.v1.json", buf.Bytes())
	}
}

// Over every fixture and exact target: the rewrite report and the diff of
// the two files conform to the schema, and the diff, which knows nothing of
// the rewrite, finds the same fused node for each site as the rewrite's own
// actions.
func TestEveryFixtureReportConformsAndDiffAgreesWithRewrite(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "models", "*", "model.onnx"))
	if len(dirs) == 0 {
		t.Fatal("no fixtures")
	}
	v := loadSchema(t, "report.v1.json")
	for _, src := range dirs {
		name := filepath.Base(filepath.Dir(src))
		for _, target := range []string{"attnopt", "ort"} {
			m, err := graph.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			before := TakeSnapshot(name, m)
			ctx, err := passes.Rewrite(m, passes.Options{Target: target})
			if err != nil {
				t.Fatalf("%s %s: %v", name, target, err)
			}
			out := filepath.Join(t.TempDir(), "out.onnx")
			if _, err := m.Save(out); err != nil {
				t.Fatal(err)
			}
			rep := RewriteReport(before, "out.onnx", m, ctx, nil)
			a, _ := graph.Load(src)
			b, err := graph.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			diff := DiffModels(name, a, "out.onnx", b)
			for _, r := range []*Report{rep, diff} {
				var buf bytes.Buffer
				if err := Render(&buf, JSON, r, RenderOptions{}); err != nil {
					t.Fatal(err)
				}
				if errs := v.validate(v.root, decodeJSON(t, buf.Bytes()), "#"); len(errs) > 0 {
					t.Errorf("%s %s %s: %v", name, target, r.Kind, errs)
				}
				for _, f := range []Format{Text, Markdown, HTML} {
					if err := Render(&bytes.Buffer{}, f, r, RenderOptions{}); err != nil {
						t.Errorf("%s %s %s %s: %v", name, target, r.Kind, f, err)
					}
				}
			}
			if len(rep.Sites) != len(diff.Sites) {
				t.Errorf("%s %s: rewrite has %d sites, diff %d", name, target, len(rep.Sites), len(diff.Sites))
				continue
			}
			for i := range rep.Sites {
				x, y := rep.Sites[i], diff.Sites[i]
				// A diff has no reasons: a site the target declined (ort
				// after a KV cache, or with softcap) is unchanged there.
				same := x.Status == y.Status || x.Status == SiteLeft && y.Status == SiteUnchanged
				if !same || x.FusedNode != y.FusedNode || x.Op != y.Op {
					t.Errorf("%s %s site %d: rewrite says %s %s %s, diff says %s %s %s", name, target, x.ID, x.Status, x.Op, x.FusedNode, y.Status, y.Op, y.FusedNode)
				}
			}
			if rep.Changed != (ctx.FusedCount() > 0) || diff.Changed != rep.Changed {
				t.Errorf("%s %s: changed: rewrite %v, diff %v, fused %d", name, target, rep.Changed, diff.Changed, ctx.FusedCount())
			}
		}
	}
}

func loadFixture(t *testing.T, name string) *graph.Model {
	t.Helper()
	m, err := graph.Load(filepath.Join("..", "testdata", "models", name, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Two exports of one model name their nodes differently: the sites pair up
// by structure, still unfused, and none is reported as new.
func TestDiffOfTwoExportsPairsRenamedSites(t *testing.T) {
	r := DiffModels("a", loadFixture(t, "hf_bert"), "b", loadFixture(t, "hf_bert_dynamo"))
	if len(r.Sites) != 2 || len(r.NewSites) != 0 {
		t.Fatalf("%d sites, %d new", len(r.Sites), len(r.NewSites))
	}
	for i, s := range r.Sites {
		want := []string{"node_softmax", "node_softmax_1"}[i]
		if s.Status != SiteUnchanged || s.BSoftmax != want || s.BytesAfter == nil || *s.BytesAfter != *s.ScoreBytes {
			t.Errorf("site %d: %s in B as %q (want unchanged, %q)", i, s.Status, s.BSoftmax, want)
		}
	}
	if !r.Changed {
		t.Error("two different exports reported as unchanged")
	}
}

// A model whose exporter already fused attention (ONNX Attention, opset
// 23): A's sites are attributed to B's fused ops in graph order.
func TestDiffAttributesAnotherToolsFusedOps(t *testing.T) {
	r := DiffModels("a", loadFixture(t, "hf_bert_sdpa"), "b", loadFixture(t, "hf_bert_sdpa_dynamo_op23"))
	if r.Totals.Fused != 2 || len(r.B.Fused) != 2 {
		t.Fatalf("fused %d of %d; B has %d fused ops", r.Totals.Fused, r.Totals.Sites, len(r.B.Fused))
	}
	for i, s := range r.Sites {
		if s.Status != SiteFused || s.Op != "ai.onnx.Attention" || s.FusedNode != r.B.Fused[i].Node || !strings.Contains(s.Reason, "graph order") {
			t.Errorf("site %d: %s %s %s (%s)", i, s.Status, s.Op, s.FusedNode, s.Reason)
		}
	}
}

// The diff report reads a rewritten model's fused nodes by the site id and
// plan the rewrite recorded on them, never by their names.
func TestApproximationBySite(t *testing.T) {
	for _, c := range []struct {
		name   string
		approx passes.ApproxOptions
		forge  string // a plan written on the fused node afterwards
		want   passes.PlanKind
	}{
		{"exact", passes.ApproxOptions{}, "", passes.PlanExact},
		{"window", passes.ApproxOptions{Window: []int64{4, 4}}, "", passes.PlanWindow},
		{"pool_kv", passes.ApproxOptions{Pool: "kv", Stride: 2}, "", passes.PlanPoolKV},
		{"pool_qkv", passes.ApproxOptions{Pool: "qkv", Stride: 2, Upsample: "nearest"}, "", passes.PlanPoolQKV},
		// A record the ops do not bear out is not believed.
		{"exact, window forged", passes.ApproxOptions{}, "window", passes.PlanExact},
		{"exact, pool forged", passes.ApproxOptions{}, "pool_kv", passes.PlanExact},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := loadFixture(t, "sagan")
			if _, err := passes.Rewrite(m, passes.Options{Target: "attnopt", Approx: c.approx}); err != nil {
				t.Fatal(err)
			}
			for _, n := range m.Graph.Nodes {
				n.Name = "renamed/" + n.Name // names say nothing
				if _, ok := passes.SiteOf(n); ok && c.forge != "" {
					n.SetMeta(passes.MetaPlan, c.forge)
				}
			}
			b := TakeSnapshot("b", m)
			if got := approximationBySite(b, 0); got != c.want {
				t.Errorf("approximation %q, want %q", got, c.want)
			}
			node, op := fusedBySite(b, 0)
			if !strings.HasPrefix(node, "renamed/") || !strings.HasPrefix(op, "attnopt.") {
				t.Errorf("fused node %q op %q", node, op)
			}
			if node, _ := fusedBySite(b, 1); node != "" {
				t.Errorf("site 1 has fused node %q", node)
			}
		})
	}
}

// selfContained fails when an HTML report could load anything: no src or
// href attributes, no CSS url() or @import, and no address but the SVG
// namespace.
func selfContained(t *testing.T, html []byte) {
	t.Helper()
	s := strings.ReplaceAll(string(html), `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"src=", "href=", "url(", "@import", "http:", "https:", "//cdn", "<link", "<iframe", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(s, bad) {
			t.Errorf("HTML report is not self-contained: it contains %q", bad)
		}
	}
	if strings.Count(s, "<script>") != 1 || strings.Count(s, "<style>") != 1 {
		t.Errorf("want exactly one inline <script> and one inline <style>")
	}
}
