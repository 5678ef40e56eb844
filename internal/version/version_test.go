package version

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The wheel reads its version from this package's source (pyproject.toml's
// regex provider) and declares the same licence, which LICENSE holds.
func TestPythonPackageReadsThisVersionAndLicense(t *testing.T) {
	data, err := os.ReadFile("../../python/pyproject.toml")
	if err != nil {
		t.Fatal(err)
	}
	py := string(data)
	m := regexp.MustCompile(`(?m)^regex = '(.+)'$`).FindStringSubmatch(py)
	if m == nil || !strings.Contains(py, `input = "../internal/version/version.go"`) || !strings.Contains(py, `dynamic = ["version"]`) {
		t.Fatalf("python/pyproject.toml does not read its version from internal/version/version.go")
	}
	src, err := os.ReadFile("version.go")
	if err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(m[1]).FindStringSubmatch(string(src))
	if got == nil || got[1] != Version {
		t.Errorf("pyproject.toml's regex %q reads %q from version.go, want %q", m[1], got, Version)
	}
	if !strings.Contains(py, `license = {text = "`+License+`"}`) {
		t.Errorf("python/pyproject.toml does not declare %s", License)
	}
	lic, err := os.ReadFile("../../LICENSE")
	if err != nil || !strings.Contains(string(lic), "Apache License") || !strings.Contains(string(lic), "Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the %s text (%v)", License, err)
	}
}

// CHANGELOG.md's newest section is this version (docs/release.md).
func TestChangelogHasThisVersion(t *testing.T) {
	data, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## (\S+) \((unreleased|\d{4}-\d{2}-\d{2})\)$`).FindStringSubmatch(string(data))
	if m == nil || m[1] != Version {
		t.Errorf("CHANGELOG.md's newest section is %q, want \"## %s (unreleased)\" or with its date", m, Version)
	}
}

func TestString(t *testing.T) {
	cases := []struct {
		info Info
		want string
	}{
		{Info{Version: "0.1.0", Go: "go1.26.8", Platform: "linux/amd64"}, "0.1.0 (go1.26.8, linux/amd64)"},
		{Info{Version: "0.1.0", Commit: "4e903bc0123456789", Go: "go1.26.8", Platform: "linux/amd64"}, "0.1.0 (commit 4e903bc01234, go1.26.8, linux/amd64)"},
		{Info{Version: "0.1.0", Commit: "4e903bc", Modified: true, Go: "go1.26.8", Platform: "linux/arm64"}, "0.1.0 (commit 4e903bc+modified, go1.26.8, linux/arm64)"},
	}
	for _, tc := range cases {
		if got := tc.info.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.info, got, tc.want)
		}
	}
	if g := Get(); g.Version != Version || !strings.HasPrefix(g.Go, "go") || !strings.Contains(g.Platform, "/") {
		t.Errorf("Get() = %+v", g)
	}
}
