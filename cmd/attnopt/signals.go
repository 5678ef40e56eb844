package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/attnopt/attnopt/graph"
)

// watchSignals removes this run's temporary files on SIGINT or SIGTERM
// before exiting 128+signal, so an interrupted rewrite of a large model
// leaves no half-written gigabytes behind. stop ends the watch.
func watchSignals(stderr io.Writer, exit func(int)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			graph.RemoveTempFiles()
			fmt.Fprintf(stderr, "attnopt: interrupted (%v); temporary files removed\n", sig)
			code := exitInterrupted
			if sig == syscall.SIGTERM {
				code = exitTerminated
			}
			exit(code)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
