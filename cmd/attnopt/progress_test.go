package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The heartbeat off a terminal: one line per tick naming the work and the
// time it has taken, the latest step's name; nothing once done has
// returned; nothing with --quiet. The clock and the ticks are the test's.
func TestProgressHeartbeat(t *testing.T) {
	cases := []struct {
		name  string
		quiet bool
		want  []string
	}{
		{"off a terminal", false, []string{"attnopt: validating m.onnx… (10s)", "attnopt: validating site 3 (2/4)… (20s)"}},
		{"--quiet", true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w lockedBuffer
			p := newProgress(&w, tc.quiet, true)
			clock := time.Unix(0, 0)
			ticks := make(chan time.Time)
			stopped := false
			p.now = func() time.Time { return clock }
			p.ticks = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() { stopped = true } }
			p.begin("validating m.onnx")
			lines := 0
			tick := func() {
				clock = clock.Add(10 * time.Second)
				select {
				case ticks <- clock:
				case <-time.After(100 * time.Millisecond): // no heartbeat listening (quiet)
					return
				}
				// Wait for the tick's line before going on.
				lines++
				for deadline := time.Now().Add(5 * time.Second); strings.Count(w.String(), "\n") < lines && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
			}
			tick()
			p.step(1, 4, "site 3")
			tick()
			p.done()
			if !tc.quiet && !stopped {
				t.Error("done left the ticker running")
			}
			select {
			case ticks <- clock:
				t.Error("a heartbeat still listens after done")
			default:
			}
			var got []string
			if s := strings.TrimSpace(w.String()); s != "" {
				got = strings.Split(s, "\n")
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Long work off a terminal prints heartbeat lines on stderr (here every
// 100 µs, so the timm ViT's work is long): model-scope validation, and
// rewrite --validate with a report; --quiet silences them; the verdict is
// the last line of stdout, after the report file's line.
func TestProgressOffTerminalCLI(t *testing.T) {
	defer func(d time.Duration) { heartbeatEvery = d }(heartbeatEvery)
	heartbeatEvery = 100 * time.Microsecond
	vit := "../../testdata/models/timm_vit/model.onnx"
	outs := t.TempDir()
	fused := filepath.Join(outs, "fused.onnx")
	cases := []struct {
		name string
		args []string
		beat string // a heartbeat line's start
	}{
		{"validate --scope model", []string{"validate", vit, vit, "--scope", "model", "--runtime", "go"}, "attnopt: validating " + vit + " (--scope model)… ("},
		{"rewrite --validate", []string{"rewrite", vit, "-o", fused, "--min-scores", "0", "--validate", "--runtime", "go",
			"--report", filepath.Join(outs, "r.md")}, "attnopt: validating "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, quiet := range []bool{false, true} {
				args := tc.args
				if quiet {
					args = append(args[:len(args):len(args)], "--quiet")
				}
				code, stdout, stderr := runCLI(args...)
				if code != 0 {
					t.Fatalf("quiet %v: exit %d:\n%s%s", quiet, code, stdout, stderr)
				}
				lines := strings.Split(strings.TrimSpace(stdout), "\n")
				if last := lines[len(lines)-1]; last != "PASS" {
					t.Errorf("quiet %v: the last line of stdout is %q, want the verdict:\n%s", quiet, last, stdout)
				}
				beats := strings.Count(stderr, "attnopt: ")
				if quiet && beats != 0 || !quiet && (beats == 0 || !strings.Contains(stderr, tc.beat)) {
					t.Errorf("quiet %v: %d heartbeat lines in stderr:\n%s", quiet, beats, stderr)
				}
				for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
					if l != "" && !strings.HasPrefix(l, "attnopt: ") {
						t.Errorf("quiet %v: stderr line %q is not a heartbeat", quiet, l)
					}
				}
			}
		})
	}
}
