package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Temporary files are named .attnopt-tmp-PID-… beside what they become, and
// registered until renamed or removed, so that an interrupted run (SIGINT,
// SIGTERM) removes them and a killed one's are removed by the next save
// into the same folder.

const tempPrefix = ".attnopt-tmp-"

var temps struct {
	sync.Mutex
	files   map[string]bool
	stopped bool // RemoveTempFiles ran: the process is exiting
}

// createTemp makes a registered temporary file in dir with mode 0644. The
// lock is held from creation to registration so that RemoveTempFiles,
// which the signal handler calls right before exiting, sees every file.
func createTemp(dir string) (*os.File, error) {
	temps.Lock()
	defer temps.Unlock()
	if temps.stopped {
		return nil, fmt.Errorf("interrupted")
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-*", tempPrefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	// CreateTemp makes 0600; outputs must be readable by whoever loads them.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if temps.files == nil {
		temps.files = map[string]bool{}
	}
	temps.files[f.Name()] = true
	return f, nil
}

// discardTemp closes and removes a temporary file.
func discardTemp(f *os.File) {
	f.Close()
	os.Remove(f.Name())
	forgetTemp(f.Name())
}

func forgetTemp(name string) {
	temps.Lock()
	delete(temps.files, name)
	temps.Unlock()
}

// renameTemp moves a closed temporary file to its final name.
func renameTemp(name, final string) error {
	if err := os.Rename(name, final); err != nil {
		os.Remove(name)
		forgetTemp(name)
		return err
	}
	forgetTemp(name)
	return nil
}

// RemoveTempFiles deletes every temporary file this process still has (for
// the CLI's signal handler).
func RemoveTempFiles() {
	temps.Lock()
	defer temps.Unlock()
	for name := range temps.files {
		os.Remove(name)
	}
	temps.files, temps.stopped = nil, true
}

// removeStaleTemps deletes temporary files in dir left by attnopt processes
// that no longer exist (killed with SIGKILL mid-write).
func removeStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// WriteFileAtomic writes data to a temporary file beside path and renames it.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := createTemp(filepath.Dir(path))
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		discardTemp(tmp)
		return err
	}
	if err := tmp.Close(); err != nil {
		discardTemp(tmp)
		return err
	}
	return renameTemp(tmp.Name(), path)
}
