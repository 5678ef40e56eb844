// Package version is attnopt's release and build identity, which every
// JSON document and report carries.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is attnopt's release, the one place it is written: the wheel
// reads it from here (python/pyproject.toml's regex metadata provider;
// version_test.go checks the pattern), and docs/release.md tags it.
const Version = "0.1.0"

// License is attnopt's licence (SPDX), the repository's LICENSE file;
// python/pyproject.toml declares the same (version_test.go checks).
const License = "Apache-2.0"

// Info identifies the running build.
type Info struct {
	Version string `json:"version"`
	// Commit is the VCS revision go build stamped (empty for go test and
	// builds outside a git checkout); Modified marks a dirty tree.
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Get reads the build's identity.
func Get() Info {
	i := Info{Version: Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	return i
}

// String is "0.1.0 (commit 4e903bc, go1.26.8, linux/amd64)".
func (i Info) String() string {
	s := i.Version + " ("
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += "commit " + c
		if i.Modified {
			s += "+modified"
		}
		s += ", "
	}
	return s + i.Go + ", " + i.Platform + ")"
}
