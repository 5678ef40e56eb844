package version

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The wheel and the binary it carries say the same version.
func TestPythonPackageHasTheSameVersion(t *testing.T) {
	data, err := os.ReadFile("../../python/pyproject.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version = "([^"]+)"`).FindSubmatch(data)
	if m == nil || string(m[1]) != Version {
		t.Fatalf("python/pyproject.toml version %q, want %q (internal/version)", m, Version)
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
