package main

import (
	"fmt"
	"io"
	"os"

	"github.com/attnopt/attnopt/report"
)

// progress shows a status line on a terminal for long work; it is silent when
// stderr is not a terminal or --quiet is given, so pipes and JSON stay clean.
type progress struct {
	w      io.Writer
	active bool
}

func newProgress(stderr io.Writer, quiet bool) *progress {
	p := &progress{w: stderr}
	if f, ok := stderr.(*os.File); ok && !quiet {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.active = true
		}
	}
	return p
}

// start prints "what…" for files large enough to take a while.
func (p *progress) start(what string, size int64) {
	if !p.active || size < 64<<20 {
		return
	}
	fmt.Fprintf(p.w, "\r%s (%s)…", what, report.HumanBytes(&size))
}

// done clears the status line.
func (p *progress) done() {
	if p.active {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// step shows "what (done/total)".
func (p *progress) step(done, total int, what string) {
	if p.active {
		fmt.Fprintf(p.w, "\r\033[Kvalidating %s (%d/%d)…", what, done+1, total)
	}
}
