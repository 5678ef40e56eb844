package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/attnopt/attnopt/report"
)

// heartbeatEvery is how often long work off a terminal prints a line, so a
// CI log never goes silent for longer (tests shorten it).
var heartbeatEvery = 10 * time.Second

// progress shows long work. On a terminal it is a status line redrawn in
// place (not with JSON output, which it would garble). Off a terminal
// (CI logs, pipes) it is a heartbeat: while work is under way, one line
// every heartbeatEvery naming it and the time it has taken, on stderr, so
// stdout and JSON stay clean. --quiet silences both. done stops the
// heartbeat before it returns, so nothing is printed after it: callers
// print their verdict after done.
type progress struct {
	w      io.Writer
	active bool // terminal status line
	beat   bool // heartbeat lines

	// now and ticks are the clock; tests replace them.
	now   func() time.Time
	ticks func(time.Duration) (<-chan time.Time, func())

	mu    sync.Mutex
	what  string
	since time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

// newProgress: statusLine false (JSON output) keeps the terminal quiet; the
// heartbeat off a terminal goes to stderr either way.
func newProgress(stderr io.Writer, quiet, statusLine bool) *progress {
	p := &progress{w: stderr, now: time.Now, ticks: realTicks}
	if quiet {
		return p
	}
	terminal := false
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			terminal = true
		}
	}
	p.active = terminal && statusLine
	p.beat = !terminal
	return p
}

func realTicks(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// start prints "what…" on a terminal for files large enough to take a
// while, and keeps the heartbeat going while it lasts.
func (p *progress) start(what string, size int64) {
	p.begin(what)
	if !p.active || size < 64<<20 {
		return
	}
	fmt.Fprintf(p.w, "\r%s (%s)…", what, report.HumanBytes(&size))
}

// begin names the work under way, for the heartbeat.
func (p *progress) begin(what string) {
	if !p.beat {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.what = what
	if p.stop != nil {
		return
	}
	p.since = p.now()
	p.stop = make(chan struct{})
	ticks, stopTicks := p.ticks(heartbeatEvery)
	p.wg.Add(1)
	go func(stop chan struct{}) {
		defer p.wg.Done()
		defer stopTicks()
		for {
			select {
			case <-stop:
				return
			case <-ticks:
				p.mu.Lock()
				// A tick racing done is dropped: nothing after done.
				if p.stop == stop {
					fmt.Fprintf(p.w, "attnopt: %s… (%s)\n", p.what, p.now().Sub(p.since).Round(time.Second))
				}
				p.mu.Unlock()
			}
		}
	}(p.stop)
}

// done clears the status line and stops the heartbeat; when it returns,
// no progress line is printed any more.
func (p *progress) done() {
	if p.active {
		fmt.Fprint(p.w, "\r\033[K")
	}
	if !p.beat {
		return
	}
	p.mu.Lock()
	stop := p.stop
	p.stop, p.what = nil, ""
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		p.wg.Wait()
	}
}

// step shows "what (done/total)".
func (p *progress) step(done, total int, what string) {
	line := fmt.Sprintf("validating %s (%d/%d)", what, done+1, total)
	if p.active {
		fmt.Fprintf(p.w, "\r\033[K%s…", line)
	}
	p.begin(line)
}
