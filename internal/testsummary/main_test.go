package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func run(t *testing.T, events ...event) (printed, sumText string, s *summary) {
	t.Helper()
	var out, sum bytes.Buffer
	s = &summary{out: &out, buffered: map[string][]string{}}
	for _, e := range events {
		// Through JSON, as go test writes them.
		b, _ := json.Marshal(e)
		var back event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		s.add(back)
	}
	s.report(&sum)
	return out.String(), sum.String(), s
}

const pkg = "github.com/attnopt/attnopt/passes"

func TestSummary(t *testing.T) {
	printed, sum, s := run(t,
		event{Action: "run", Package: pkg, Test: "TestA"},
		event{Action: "output", Package: pkg, Test: "TestA", Output: "=== RUN   TestA\n"},
		event{Action: "output", Package: pkg, Test: "TestA", Output: "    a_test.go:9: corpus not present: ../shared/corpus does not exist\n"},
		event{Action: "output", Package: pkg, Test: "TestA", Output: "--- SKIP: TestA (0.00s)\n"},
		event{Action: "skip", Package: pkg, Test: "TestA"},
		event{Action: "output", Package: pkg, Test: "TestB", Output: "    b_test.go:3: got 1, want 2\n"},
		event{Action: "fail", Package: pkg, Test: "TestB"},
		event{Action: "output", Package: pkg, Test: "TestC", Output: "    c_test.go:3: noise of a passing test\n"},
		event{Action: "pass", Package: pkg, Test: "TestC"},
		event{Action: "output", Package: pkg, Output: "FAIL\tgithub.com/attnopt/attnopt/passes\t0.1s\n"},
		event{Action: "fail", Package: pkg},
	)
	for _, want := range []string{"got 1, want 2", "FAIL\tgithub.com/attnopt/attnopt/passes"} {
		if !strings.Contains(printed, want) {
			t.Errorf("printed lacks %q:\n%s", want, printed)
		}
	}
	if strings.Contains(printed, "noise of a passing test") || strings.Contains(printed, "=== RUN") {
		t.Errorf("printed a passing test's output:\n%s", printed)
	}
	want := "go test: 1 package(s), 1 failed test(s), 1 skipped test(s)\n  FAIL passes TestB\n  skipped passes TestA: corpus not present: ../shared/corpus does not exist\n"
	if sum != want {
		t.Errorf("summary:\n%s\nwant:\n%s", sum, want)
	}
	if !s.pkgFail {
		t.Error("the package's failure was not recorded")
	}
}

// Many tests skipped for one reason are one line.
func TestSkipsFoldByReason(t *testing.T) {
	var evs []event
	for _, name := range []string{"T1", "T2", "T3", "T4", "T5"} {
		evs = append(evs,
			event{Action: "output", Package: pkg, Test: name, Output: "    x_test.go:1: chromium not installed\n"},
			event{Action: "skip", Package: pkg, Test: name})
	}
	_, sum, _ := run(t, evs...)
	if !strings.Contains(sum, "  skipped passes T1, passes T2, passes T3, and 2 more: chromium not installed\n") {
		t.Errorf("summary:\n%s", sum)
	}
}
