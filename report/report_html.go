package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// The HTML report is one self-contained file: inline CSS, an inline SVG
// chart and a few lines of inline JavaScript to sort the site table. It
// loads nothing (no network, fonts or scripts from elsewhere).

const htmlStyle = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1240px;padding:0 16px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.paths{color:#4a5568;margin-bottom:12px}.headline{font-weight:600;margin:8px 0 16px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}.card{border:1px solid #dde2ea;border-radius:8px;padding:10px 14px;min-width:150px}
.card .k{color:#5a6577;font-size:12px;text-transform:uppercase;letter-spacing:.04em}.card .v{font-size:20px;font-weight:600}
.pass{color:#17803d}.fail{color:#c0262d}
table{border-collapse:collapse;width:100%;margin:6px 0 12px}th,td{border-bottom:1px solid #e6e9ef;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f9;font-weight:600;white-space:nowrap}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;user-select:none}table.sortable th:after{content:" \2195";color:#a0a8b5;font-size:11px}
tr.st-fused td.status,tr.st-approximated td.status{color:#17803d;font-weight:600}tr.st-left td.status,tr.st-unchanged td.status,tr.st-new td.status{color:#b35c00;font-weight:600}
.chg-removed{color:#c0262d}.chg-added{color:#17803d}.chg-changed{color:#8a5a00}
svg text{font:11px system-ui,sans-serif;fill:#333}svg .grid{stroke:#e3e7ee}svg .bar.before{fill:#d9534f}svg .bar.after{fill:#2e9d5b}
.scroll{overflow-x:auto}#sites{font-size:12.5px}#sites th,#sites td{padding:4px 5px}#sites td{white-space:nowrap}#sites td.name{white-space:normal;min-width:12em}td{overflow-wrap:anywhere}#sites .variant{color:#5a6577;font-size:11.5px}
#runs-with{background:#f4f6f9;border-left:3px solid #5a6577;padding:6px 10px}#provenance{font-size:12px;overflow-wrap:anywhere}
#graph-diff table{width:auto;min-width:60%}
details{margin:8px 0}summary{cursor:pointer;font-weight:600}.note{color:#5a6577}`

const htmlScript = `document.querySelectorAll("table.sortable").forEach(function(t){
t.querySelectorAll("th").forEach(function(th,i){th.addEventListener("click",function(){
var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),num=th.dataset.type==="num",dir=th.dataset.dir==="asc"?-1:1;
rows.sort(function(x,y){var a=x.cells[i].dataset.v||x.cells[i].textContent,c=y.cells[i].dataset.v||y.cells[i].textContent;
if(num){a=parseFloat(a);c=parseFloat(c);a=isNaN(a)?-1:a;c=isNaN(c)?-1:c;return (a-c)*dir}return a.localeCompare(c)*dir});
th.dataset.dir=dir===1?"asc":"desc";rows.forEach(function(r){b.appendChild(r)})})})});`

func esc(s string) string { return html.EscapeString(s) }

func bytesData(p *int64) string {
	if p == nil {
		return "-1"
	}
	return strconv.FormatInt(*p, 10)
}

func (r *Report) writeHTML(w io.Writer) error {
	e := &errWriter{w: w}
	title := r.title()
	e.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	e.printf("<title>%s: %s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", esc(title), esc(baseOf(r.A.Path)), htmlStyle)
	e.printf("<h1>%s</h1>\n<div class=\"paths\"><code>%s</code> → <code>%s</code></div>\n", esc(title), esc(r.A.Path), esc(r.B.Path))
	e.printf("<div class=\"headline\" id=\"headline\">%s</div>\n", esc(r.Headline()))

	// Summary cards.
	e.printf("<div class=\"cards\" id=\"summary\">\n")
	card := func(k, v, class string) {
		e.printf("<div class=\"card\"><div class=\"k\">%s</div><div class=\"v %s\">%s</div></div>\n", esc(k), class, esc(v))
	}
	fusedCard := fmt.Sprintf("%d / %d", r.Totals.Fused, r.Totals.Sites)
	if r.Totals.Approximate > 0 {
		fusedCard += fmt.Sprintf(" (%d approx.)", r.Totals.Approximate)
	}
	card("sites fused", fusedCard, "")
	card("score memory before", HumanBytes(r.Totals.BytesBefore), "")
	card("after", HumanBytes(r.Totals.BytesAfter), "")
	card("nodes", fmt.Sprintf("%d → %d", r.A.Nodes, r.B.Nodes), "")
	card("initializers", fmt.Sprintf("%d → %d", r.A.Initializers, r.B.Initializers), "")
	if v := r.Validation; v != nil {
		cls := "pass"
		if !v.Pass {
			cls = "fail"
		}
		card("validation", v.Verdict, cls)
	}
	e.printf("</div>\n")
	if r.Rewrite != nil {
		e.printf("<p>Rewrite target <code>%s</code> (<code>%s</code>); %d node(s) removed, %d layout fold(s).</p>\n", esc(r.Rewrite.Target), esc(r.Rewrite.Op), r.Rewrite.DeadRemoved, r.Rewrite.LayoutFolds)
	}
	if r.RunsWith != "" {
		e.printf("<p id=\"runs-with\">%s</p>\n", esc(r.RunsWith))
	}

	sites := append(append([]SiteReport{}, r.Sites...), r.NewSites...)
	if len(sites) > 0 {
		e.printf("<h2>Score memory per site</h2>\n")
		writeChart(e, sites)
		e.printf("<h2>Attention sites</h2>\n<div class=\"scroll\">\n<table class=\"sortable\" id=\"sites\">\n<thead><tr>")
		// Shapes share two columns, as in the Markdown report, and names
		// wrap, so the table fits a 1280 px window.
		heads := []struct{ name, typ string }{{"site", "num"}, {"softmax / variant", ""}, {"B·H·Nq·Nk", ""}, {"Dqk/Dv", ""},
			{"dtype", ""}, {"mask", ""}, {"status", ""}, {"op", ""}, {"scores", "num"}, {"fused", "num"},
			{"after", "num"}, {"max abs", "num"}, {"verdict", ""}}
		for _, h := range heads {
			if h.typ == "num" {
				e.printf("<th class=\"n\" data-type=\"num\">%s</th>", esc(h.name))
			} else {
				e.printf("<th>%s</th>", esc(h.name))
			}
		}
		e.printf("</tr></thead>\n<tbody>\n")
		for _, s := range sites {
			id := strconv.Itoa(s.ID)
			if s.Status == SiteNew {
				id = "b" + id
			}
			e.printf("<tr class=\"site st-%s\" data-site=\"%s\">", s.Status, id)
			e.printf("<td class=\"n\" data-v=\"%d\">%s</td><td class=\"name\"><code>%s</code><div class=\"variant\">%s</div></td>", s.ID, esc(id), esc(s.where()), esc(s.Variant))
			e.printf("<td>%s</td><td>%s</td>", esc(fmt.Sprintf("%v·%v·%v·%v", s.Shape.Batch, s.Shape.Heads, s.Shape.QLen, s.Shape.KVLen)),
				esc(fmt.Sprintf("%v/%v", s.Shape.HeadDim, s.Shape.VHeadDim)))
			e.printf("<td>%s</td><td>%s</td><td class=\"status\">%s</td><td class=\"name\"><code>%s</code></td>", esc(s.DType), esc(s.maskText()), esc(s.Status), esc(s.opText()))
			for _, b := range []*int64{s.ScoreBytes, s.FusedBytes, s.BytesAfter} {
				e.printf("<td class=\"n\" data-v=\"%s\">%s</td>", bytesData(b), esc(HumanBytes(b)))
			}
			e.printf("<td class=\"n\">%s</td><td>%s</td></tr>\n", esc(s.worst()), esc(s.verdict()))
		}
		e.printf("</tbody>\n</table>\n</div>\n")
		for _, s := range sites {
			if s.Reason != "" {
				e.printf("<p class=\"note\">site %d (<code>%s</code>): %s</p>\n", s.ID, esc(s.where()), esc(s.Reason))
			}
		}
	}

	if v := r.Validation; v != nil {
		e.printf("<h2>Validation</h2>\n<p>Runtime %s, scope %s, seed %d: <b class=\"%s\">%s</b></p>\n", esc(v.Runtime), esc(v.Scope), v.Seed,
			map[bool]string{true: "pass", false: "fail"}[v.Pass], esc(v.Verdict))
		e.printf("<table id=\"validation\">\n<thead><tr><th>check</th><th>output</th><th class=\"n\">max abs</th><th class=\"n\">max rel</th><th class=\"n\">mean abs</th><th class=\"n\">cosine</th><th>worst at</th><th class=\"n\">NaN/Inf</th><th class=\"n\">atol</th><th>verdict</th></tr></thead>\n<tbody>\n")
		for _, c := range v.Checks {
			if c.Error != "" {
				e.printf("<tr><td>%s</td><td colspan=\"8\"></td><td class=\"fail\">ERROR: %s</td></tr>\n", esc(c.Name), esc(c.Error))
			}
			for _, m := range c.Outputs {
				verdict, cls := outputVerdict(&c, &m), "pass"
				if !m.Pass {
					cls = "fail"
				}
				e.printf("<tr><td>%s</td><td><code>%s</code></td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"mono\">%s</td><td class=\"n\">%d</td><td class=\"n\">%.3g</td><td class=\"%s\">%s</td></tr>\n",
					esc(c.Name), esc(m.Output), num(m.MaxAbs, "%.3g"), num(m.MaxRel, "%.3g"), num(m.MeanAbs, "%.3g"), cosineText(m.Cosine),
					esc(fmt.Sprint(m.WorstIndex)), m.NaNs, m.Atol, cls, verdict)
			}
		}
		e.printf("</tbody>\n</table>\n")
		for _, c := range v.Checks {
			if c.Reduced != "" {
				e.printf("<p class=\"note\">%s: %s</p>\n", esc(c.Name), esc(c.Reduced))
			}
		}
	}

	e.printf("<h2>Graph diff</h2>\n<div id=\"graph-diff\">\n")
	e.printf("<table id=\"io\">\n<thead><tr><th>kind</th><th>name</th><th>status</th><th>A</th><th>B</th></tr></thead>\n<tbody>\n")
	for _, k := range []struct {
		kind string
		list []SigChange
	}{{"input", r.Inputs}, {"output", r.Outputs}} {
		for _, c := range k.list {
			e.printf("<tr><td>%s</td><td><code>%s</code></td><td class=\"chg-%s\">%s</td><td><code>%s</code></td><td><code>%s</code></td></tr>\n",
				k.kind, esc(c.Name), esc(c.Status), esc(c.Status), esc(sigText(c.A)), esc(sigText(c.B)))
		}
	}
	e.printf("</tbody>\n</table>\n")
	e.printf("<table id=\"opsets\">\n<thead><tr><th>opset domain</th><th class=\"n\">A</th><th class=\"n\">B</th></tr></thead>\n<tbody>\n")
	for _, o := range r.Opsets {
		e.printf("<tr><td><code>%s</code></td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", esc(o.Domain), opsetText(o.A), opsetText(o.B))
	}
	e.printf("</tbody>\n</table>\n")
	e.printf("<table class=\"sortable\" id=\"ops\">\n<thead><tr><th>op</th><th>domain</th><th class=\"n\" data-type=\"num\">A</th><th class=\"n\" data-type=\"num\">B</th><th class=\"n\" data-type=\"num\">Δ</th></tr></thead>\n<tbody>\n")
	for _, o := range r.Ops {
		cls := ""
		if o.A != o.B {
			cls = " class=\"chg-changed\""
		}
		e.printf("<tr%s><td><code>%s</code></td><td><code>%s</code></td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\" data-v=\"%d\">%s</td></tr>\n",
			cls, esc(o.Op), esc(o.Domain), o.A, o.B, o.B-o.A, delta(o.A, o.B))
	}
	e.printf("</tbody>\n</table>\n")
	n := r.Nodes
	e.printf("<details id=\"nodes\"%s><summary>Nodes: %d removed, %d added, %d changed, %d unchanged</summary>\n", openIf(len(n.Removed)+len(n.Added)+len(n.Changed), 60),
		len(n.Removed), len(n.Added), len(n.Changed), n.Unchanged)
	e.printf("<table>\n<thead><tr><th>change</th><th>node</th><th>op</th></tr></thead>\n<tbody>\n")
	for _, k := range []struct {
		what string
		list []NodeRef
	}{{"removed", n.Removed}, {"added", n.Added}, {"changed", n.Changed}} {
		for _, x := range k.list {
			e.printf("<tr class=\"chg-%s\"><td>%s</td><td><code>%s</code></td><td><code>%s</code></td></tr>\n", k.what, k.what, esc(x.Name), esc(x.OpName()))
		}
	}
	e.printf("</tbody>\n</table>\n</details>\n")
	in := r.Inits
	e.printf("<details id=\"initializers\"%s><summary>Initializers: %d removed, %d added, %d changed, %d unchanged</summary>\n", openIf(len(in.Removed)+len(in.Added)+len(in.Changed), 60),
		len(in.Removed), len(in.Added), len(in.Changed), in.Unchanged)
	e.printf("<table>\n<thead><tr><th>change</th><th>name</th><th>A</th><th>B</th></tr></thead>\n<tbody>\n")
	for _, x := range in.Removed {
		e.printf("<tr class=\"chg-removed\"><td>removed</td><td><code>%s</code></td><td><code>%s</code></td><td></td></tr>\n", esc(x.Name), esc(initText(x)))
	}
	for _, x := range in.Added {
		e.printf("<tr class=\"chg-added\"><td>added</td><td><code>%s</code></td><td></td><td><code>%s</code></td></tr>\n", esc(x.Name), esc(initText(x)))
	}
	for _, x := range in.Changed {
		e.printf("<tr class=\"chg-changed\"><td>%s</td><td><code>%s</code></td><td><code>%s</code></td><td><code>%s</code></td></tr>\n", esc(x.Reason), esc(x.Name), esc(initText(x.A)), esc(initText(x.B)))
	}
	e.printf("</tbody>\n</table>\n</details>\n</div>\n")
	for _, note := range r.Notes {
		e.printf("<p class=\"note\">%s</p>\n", esc(note))
	}
	if p := r.Provenance; p != nil {
		e.printf("<p class=\"note\" id=\"provenance\">%s</p>\n", esc(p.Line()))
	}
	e.printf("<script>\n%s\n</script>\n</body>\n</html>\n", htmlScript)
	return e.err
}

func openIf(n, limit int) string {
	if n > 0 && n <= limit {
		return " open"
	}
	return ""
}

func baseOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// writeChart draws, per site, the score tensor (before) and what remains
// after (the fused op's footprint, or the score tensor when unfused) as
// horizontal bars on one linear axis, so bar lengths compare as the sizes
// do, and labels each "after" bar with its ratio to "before". A fused
// site whose footprint is a sliver of its scores then looks it.
func writeChart(e *errWriter, sites []SiteReport) {
	const (
		left, right, top = 230.0, 200.0, 34.0
		width            = 1100.0
		barH, gap        = 14.0, 14.0
	)
	hi := 0.0
	for _, s := range sites {
		for _, b := range []*int64{s.BytesBefore, s.BytesAfter} {
			if b != nil && *b > 0 {
				hi = math.Max(hi, float64(*b))
			}
		}
	}
	ticks := linearTicks(hi)
	top1 := ticks[len(ticks)-1]
	x := func(b float64) float64 { return left + b/top1*(width-left-right) }
	rowH := 2*barH + gap
	height := top + float64(len(sites))*rowH + 24
	e.printf("<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" style=\"max-width:%.0fpx\" data-height=\"%.0f\" data-scale=\"linear\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"score memory per site, before and after, linear scale\">\n",
		width, height, width, height)
	e.printf("<rect x=\"%.0f\" y=\"4\" width=\"12\" height=\"12\" class=\"bar before\"/><text x=\"%.0f\" y=\"14\">before (score tensor)</text>\n", left, left+16)
	e.printf("<rect x=\"%.0f\" y=\"4\" width=\"12\" height=\"12\" class=\"bar after\"/><text x=\"%.0f\" y=\"14\">after (fused op, or scores when unfused) and how many times smaller</text>\n", left+170, left+186)
	for _, t := range ticks {
		xx := x(t)
		b := int64(t)
		e.printf("<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>", xx, top-6, xx, height-20)
		e.printf("<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", xx, height-6, tickText(b))
	}
	for i, s := range sites {
		y := top + float64(i)*rowH
		label := fmt.Sprintf("%d %s", s.ID, s.where())
		if len([]rune(label)) > 34 {
			rs := []rune(label)
			label = "…" + string(rs[len(rs)-33:])
		}
		e.printf("<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left-8, y+barH+4, esc(label))
		for j, b := range []*int64{s.BytesBefore, s.BytesAfter} {
			cls := []string{"before", "after"}[j]
			yy := y + float64(j)*barH
			if b == nil || *b <= 0 {
				e.printf("<text class=\"bar-unknown %s\" x=\"%.0f\" y=\"%.1f\">unknown</text>\n", cls, left+4, yy+barH-3)
				continue
			}
			w := math.Max(1, x(float64(*b))-left)
			e.printf("<rect class=\"bar %s\" data-site=\"%d\" data-bytes=\"%d\" x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\"><title>site %d %s: %s</title></rect>",
				cls, s.ID, *b, left, yy, w, barH-2, s.ID, cls, HumanBytes(b))
			text := HumanBytes(b)
			if j == 1 {
				text += ratioText(s.BytesBefore, b)
			}
			e.printf("<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", left+w+4, yy+barH-3, esc(text))
		}
	}
	e.printf("</svg>\n")
}

// linearTicks are 0 and round multiples of a power of 1024 up to at least
// hi: four to ten steps of 1, 2, 2.5 or 5 units.
func linearTicks(hi float64) []float64 {
	if hi <= 0 {
		hi = 1024
	}
	unit := math.Pow(1024, math.Floor(math.Log(hi)/math.Log(1024)))
	step := unit
	for _, m := range []float64{0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 250, 500} {
		if hi/(m*unit) <= 5 {
			step = m * unit
			break
		}
	}
	var ticks []float64
	for t := 0.0; ; t += step {
		ticks = append(ticks, t)
		if t >= hi {
			return ticks
		}
	}
}

// tickText is an axis label: 0, or a size.
func tickText(b int64) string {
	if b == 0 {
		return "0"
	}
	return HumanBytes(&b)
}

// ratioText compares after with before in words a reader can check the
// bars by: ", 1.8× smaller", ", 1.2× larger", ", same".
func ratioText(before, after *int64) string {
	if before == nil || after == nil || *before <= 0 || *after <= 0 {
		return ""
	}
	switch r := float64(*before) / float64(*after); {
	case *before == *after:
		return ", same"
	case r > 1:
		return ", " + ratioNum(r) + "× smaller"
	default:
		return ", " + ratioNum(1/r) + "× larger"
	}
}

func ratioNum(r float64) string {
	if r >= 1000 {
		return strconv.FormatFloat(math.Round(r), 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}
