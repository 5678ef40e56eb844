package report

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
)

// The chart is linear: each bar's width is its bytes over the axis's, so
// after/before of the bars is after/before of the sizes, and the "after"
// label says the ratio in words.
func TestChartIsLinearWithRatioLabels(t *testing.T) {
	cases := []struct {
		name          string
		before, after int64
		label         string
	}{
		{"SAGAN fused", 262144, 148480, "145.0 KiB, 1.77× smaller"},
		{"7x saving", 7 << 30, 1 << 30, "1.0 GiB, 7× smaller"},
		{"huge saving", 64 << 40, 2469606195, "2.3 GiB, 28494× smaller"},
		{"growth", 8192, 16896, "16.5 KiB, 2.06× larger"},
		{"unfused", 4096, 4096, "4.0 KiB, same"},
	}
	bar := regexp.MustCompile(`<rect class="bar (before|after)" data-site="0" data-bytes="(\d+)" x="230" y="[0-9.]+" width="([0-9.]+)"`)
	for _, tc := range cases {
		b, a := tc.before, tc.after
		var buf bytes.Buffer
		if err := executeHTML(&buf, "report.html/chart", newChart([]SiteReport{{ID: 0, Softmax: "sm", BytesBefore: &b, BytesAfter: &a}})); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		ms := bar.FindAllStringSubmatch(out, -1)
		if len(ms) != 2 {
			t.Fatalf("%s: %d bars\n%s", tc.name, len(ms), out)
		}
		wb, _ := strconv.ParseFloat(ms[0][3], 64)
		wa, _ := strconv.ParseFloat(ms[1][3], 64)
		want := float64(a) / float64(b)
		if got := wa / wb; wa > 1 && (got < want*0.99 || got > want*1.01) {
			t.Errorf("%s: bar ratio %.4f, sizes ratio %.4f", tc.name, got, want)
		}
		if !regexp.MustCompile(regexp.QuoteMeta(">" + tc.label + "<")).MatchString(out) {
			t.Errorf("%s: no label %q in\n%s", tc.name, tc.label, out)
		}
	}
}

// Axis ticks start at 0 and end at or past the largest size, in 4 to 10
// round steps.
func TestLinearTicks(t *testing.T) {
	for _, hi := range []float64{1, 1000, 262144, 7 << 30, 64 << 40, 2.5e18} {
		ticks := linearTicks(hi)
		if ticks[0] != 0 || ticks[len(ticks)-1] < hi || len(ticks) < 3 || len(ticks) > 11 {
			t.Errorf("linearTicks(%g) = %v", hi, ticks)
		}
	}
}
