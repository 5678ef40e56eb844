package report

import (
	"fmt"
	"math"
	"strconv"
)

// chartView is the HTML report's SVG chart: per site, the score tensor
// (before) and what remains after (the fused op's footprint, or the score
// tensor when unfused) as horizontal bars on one linear axis, so bar
// lengths compare as the sizes do, each "after" bar labelled with its ratio
// to "before". A fused site whose footprint is a sliver of its scores then
// looks it. templates/report.html.tmpl draws it.
type chartView struct {
	Width, Height, Left, Top float64
	Ticks                    []chartTick
	Rows                     []chartRow
}

type chartTick struct {
	X     float64
	Label string
}

type chartRow struct {
	LabelY float64
	Label  string
	Bars   []chartBar
}

// chartBar is one bar; Known is false when its size is unknown (a text
// says so instead).
type chartBar struct {
	Class       string // before or after
	Site        int
	Known       bool
	Bytes       int64
	Y, W, H     float64
	TextY       float64
	Size, Label string
}

func newChart(sites []SiteReport) *chartView {
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
	c := &chartView{Width: width, Height: top + float64(len(sites))*rowH + 24, Left: left, Top: top}
	for _, t := range ticks {
		c.Ticks = append(c.Ticks, chartTick{X: x(t), Label: tickText(int64(t))})
	}
	for i, s := range sites {
		y := top + float64(i)*rowH
		label := fmt.Sprintf("%d %s", s.ID, s.where())
		if rs := []rune(label); len(rs) > 34 {
			label = "…" + string(rs[len(rs)-33:])
		}
		row := chartRow{LabelY: y + barH + 4, Label: label}
		for j, b := range []*int64{s.BytesBefore, s.BytesAfter} {
			bar := chartBar{Class: []string{"before", "after"}[j], Site: s.ID, Y: y + float64(j)*barH, H: barH - 2}
			bar.TextY = bar.Y + barH - 3
			// 0 is known: a fused op that adds nothing beyond its inputs
			// and output (docs/design.md §6) gets a hairline and its label.
			if b != nil && *b >= 0 {
				bar.Known, bar.Bytes = true, *b
				bar.W = math.Max(1, x(float64(*b))-left)
				bar.Size, bar.Label = HumanBytes(b), HumanBytes(b)
				if j == 1 && *b == 0 {
					bar.Label += ", nothing beyond its inputs and output"
				} else if j == 1 {
					bar.Label += ratioText(s.BytesBefore, b)
				}
			}
			row.Bars = append(row.Bars, bar)
		}
		c.Rows = append(c.Rows, row)
	}
	return c
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
