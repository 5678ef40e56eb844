package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/attnopt/attnopt/passes"
)

// These tests open the HTML report in headless Chromium (Debian's
// `chromium`; scripts/install-test-deps.sh installs it in CI). They skip,
// saying so, when no Chromium is installed.

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed: skipping the browser test of the HTML report (install it with scripts/install-test-deps.sh, as root)")
	return ""
}

// runChromium runs headless Chromium with a throwaway profile, no network
// services and no sandbox (CI runs as root), plus args, on url.
func runChromium(t *testing.T, bin, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,900"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

func renderHTML(t *testing.T, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, HTML, r, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// artifactDir is where screenshots are kept after the test: the directory
// $ATTNOPT_TEST_ARTIFACTS names, or a new temporary directory.
func artifactDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("ATTNOPT_TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d, err := os.MkdirTemp("", "attnopt-report-artifacts-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestHTMLReportInChromium(t *testing.T) {
	bin := chromiumPath(t)
	rewrite, _ := fixtureReports(t, "sagan")
	page := filepath.Join(t.TempDir(), "sagan_report.html")
	if err := os.WriteFile(page, renderHTML(t, rewrite), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	// The DOM Chromium renders (after the inline script ran) holds the
	// chart's bars, before and after, and a row per site.
	dom := string(runChromium(t, bin, url, "--dump-dom"))
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<svg id="chart"[^>]*>`),
		regexp.MustCompile(`<rect class="bar before" data-site="0" data-bytes="262144"[^>]*width="[1-9][0-9.]*"`),
		// After is what the fused op adds: nothing at 256 query rows (one
		// chunk per head packs its tiles as it reads them, docs/design.md §6).
		regexp.MustCompile(`<rect class="bar after" data-site="0" data-bytes="0"[^>]*width="1(\.0)?"`),
		regexp.MustCompile(`<tr class="site st-fused" data-site="0">`),
		regexp.MustCompile(`<td class="status">fused</td>`),
		regexp.MustCompile(`<div class="v pass">PASS</div>`),
	} {
		if !want.MatchString(dom) {
			t.Errorf("rendered DOM lacks %s", want)
		}
	}
	if n := strings.Count(dom, `<tr class="site `); n != 1 {
		t.Errorf("rendered DOM has %d site rows, want 1", n)
	}

	// Screenshot, kept as an artifact; it must decode and not be blank.
	dir := artifactDir(t)
	shot := filepath.Join(dir, "report-sagan.png")
	runChromium(t, bin, url, "--screenshot="+shot)
	t.Logf("screenshot of the SAGAN HTML report: %s", shot)
	checkScreenshot(t, shot)
	if *update {
		data, _ := os.ReadFile(shot)
		if err := os.WriteFile(filepath.Join("..", "docs", "report-sagan.png"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 900 {
		t.Errorf("screenshot is %dx%d, want 1280x900", b.Dx(), b.Dy())
	}
	// The chart's red bar (the scores) is on screen; the green one (what
	// the fused op adds) has no width for SAGAN at 256 tokens.
	var red, green int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case r > 200 && g < 110 && bl < 110:
				red++
			case g > 140 && r < 80 && bl < 120:
				green++
			}
		}
	}
	if red < 200 {
		t.Errorf("screenshot shows %d red and %d green bar pixels; the chart did not render", red, green)
	}
	var _ image.Image = img
}

// The site table sorts when a header is clicked: the inline script is run
// by Chromium with a test-only click appended to a copy of the page.
func TestHTMLSiteTableSortsInChromium(t *testing.T) {
	bin := chromiumPath(t)
	rewrite, _ := fixtureReports(t, "hf_bert")
	html := string(renderHTML(t, rewrite))
	// Click the "site" header twice: ascending, then descending.
	click := `<script>var th=document.querySelector("#sites th");th.click();th.click();</script>`
	html = strings.Replace(html, "</body>", click+"\n</body>", 1)
	page := filepath.Join(t.TempDir(), "sort.html")
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(runChromium(t, bin, "file://"+page, "--dump-dom"))
	rows := regexp.MustCompile(`<tr class="site [^"]*" data-site="([^"]+)">`).FindAllStringSubmatch(dom, -1)
	var order []string
	for _, r := range rows {
		order = append(order, r[1])
	}
	if strings.Join(order, ",") != "1,0" {
		t.Errorf("after sorting by site descending the rows are %v, want [1 0]", order)
	}
}

// At 1280 px nothing scrolls sideways: the site table (names wrap, shapes
// share columns) and the validation table fit the page, for every golden
// fixture (long BERT names, an approximate site's long op text).
func TestHTMLReportFits1280px(t *testing.T) {
	bin := chromiumPath(t)
	window, _ := fixtureReportsWith(t, "sagan", passes.Options{Target: "attnopt", Approx: passes.ApproxOptions{Window: []int64{4, 4}}})
	bert, bertDiff := fixtureReports(t, "hf_bert")
	measure := `<script>var s=document.querySelector(".scroll");document.body.setAttribute("data-widths",s.scrollWidth+" "+s.clientWidth+" "+document.documentElement.scrollWidth);</script>`
	for name, r := range map[string]*Report{"sagan window": window, "hf_bert rewrite": bert, "hf_bert diff": bertDiff} {
		html := strings.Replace(string(renderHTML(t, r)), "</body>", measure+"\n</body>", 1)
		page := filepath.Join(t.TempDir(), "fit.html")
		if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := string(runChromium(t, bin, "file://"+page, "--dump-dom"))
		m := regexp.MustCompile(`data-widths="(\d+) (\d+) (\d+)"`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("%s: the measuring script did not run", name)
		}
		if m[1] != m[2] || m[3] != "1280" {
			t.Errorf("%s: site table %s px wide in %s px, page %s px: want no sideways scroll at 1280 px", name, m[1], m[2], m[3])
		}
	}
}
