// Command testsummary reads `go test -json` on stdin and prints what a
// plain `go test` prints (each package's ok/FAIL line, and the output of
// failed tests), then a summary: failed tests, and every skipped test with
// its reason, so a run says what it did not check. It exits 1 when a test
// or package failed, or the stream held a build error. scripts/test.sh
// runs it:  go test -json ./... | go run ./internal/testsummary [-o SUMMARY]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// summary accumulates a run.
type summary struct {
	out      io.Writer
	buffered map[string][]string // output per package/test, until it ends
	failed   []string
	skipped  []string // "pkg Test: reason"
	packages int
	pkgFail  bool
}

func key(e event) string { return e.Package + " " + e.Test }

// short drops the module path from a package name.
func short(pkg string) string { return strings.TrimPrefix(pkg, "github.com/attnopt/attnopt/") }

func (s *summary) add(e event) {
	switch e.Action {
	case "output":
		s.buffered[key(e)] = append(s.buffered[key(e)], e.Output)
		// A package's own lines (ok, FAIL, build errors) print as they come.
		if e.Test == "" && !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS\n") {
			fmt.Fprint(s.out, e.Output)
		}
	case "fail":
		if e.Test == "" {
			s.pkgFail = true
			break
		}
		s.failed = append(s.failed, short(e.Package)+" "+e.Test)
		for _, l := range s.buffered[key(e)] {
			fmt.Fprint(s.out, l)
		}
	case "skip":
		if e.Test != "" {
			s.skipped = append(s.skipped, short(e.Package)+" "+e.Test+": "+skipReason(s.buffered[key(e)]))
		}
	}
	if e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
		s.packages++
	}
	if e.Action == "pass" || e.Action == "skip" || e.Action == "fail" {
		delete(s.buffered, key(e))
	}
}

// skipReason is the message t.Skip printed: the output lines between the
// test's RUN line and its SKIP line, the file:line prefix dropped.
func skipReason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if i := strings.Index(t, ".go:"); i >= 0 {
			if j := strings.Index(t[i:], ": "); j >= 0 {
				t = t[i+j+2:]
			}
		}
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " / ")
}

// report writes the summary; subtests skipped for the reason their parent
// gives are folded into a count.
func (s *summary) report(w io.Writer) {
	fmt.Fprintf(w, "go test: %d package(s), %d failed test(s), %d skipped test(s)\n", s.packages, len(s.failed), len(s.skipped))
	for _, f := range s.failed {
		fmt.Fprintf(w, "  FAIL %s\n", f)
	}
	byReason := map[string][]string{}
	var reasons []string
	for _, sk := range s.skipped {
		i := strings.Index(sk, ": ")
		name, why := sk[:i], sk[i+2:]
		if _, ok := byReason[why]; !ok {
			reasons = append(reasons, why)
		}
		byReason[why] = append(byReason[why], name)
	}
	sort.Strings(reasons)
	for _, why := range reasons {
		names := byReason[why]
		if len(names) > 3 {
			names = append(names[:3:3], fmt.Sprintf("and %d more", len(byReason[why])-3))
		}
		fmt.Fprintf(w, "  skipped %s: %s\n", strings.Join(names, ", "), why)
	}
}

func main() {
	outPath := flag.String("o", "", "also write the summary to this file")
	flag.Parse()
	s := &summary{out: os.Stdout, buffered: map[string][]string{}}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	bad := false
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event: a build error go test printed as is.
			fmt.Println(sc.Text())
			bad = true
			continue
		}
		s.add(e)
	}
	s.report(os.Stdout)
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err == nil {
			s.report(f)
			f.Close()
		}
	}
	if bad || s.pkgFail || len(s.failed) > 0 {
		os.Exit(1)
	}
}
