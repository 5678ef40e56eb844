package ort

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// headerPath locates onnxruntime_c_api.h in the Go module cache (it ships
// with github.com/yalue/onnxruntime_go), or "" when it is not there.
func headerPath() string {
	const rel = "github.com/yalue/onnxruntime_go@v1.27.0/onnxruntime_c_api.h"
	var caches []string
	if p := os.Getenv("ORT_C_API_HEADER"); p != "" {
		return p
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		caches = append(caches, strings.TrimSpace(string(out)))
	}
	caches = append(caches, os.Getenv("GOMODCACHE"))
	if home, err := os.UserHomeDir(); err == nil {
		caches = append(caches, filepath.Join(home, "go", "pkg", "mod"))
	}
	for _, c := range caches {
		if c == "" {
			continue
		}
		if p := filepath.Join(c, rel); isFile(p) {
			return p
		}
	}
	return ""
}

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	api2Status   = regexp.MustCompile(`^ORT_API2_STATUS\s*\(\s*(\w+)`)
	classRelease = regexp.MustCompile(`^ORT_CLASS_RELEASE\s*\(\s*(\w+)\s*\)`)
	apiT         = regexp.MustCompile(`^ORT_API_T\s*\([^,]+,\s*(\w+)`)
	plainFnPtr   = regexp.MustCompile(`\(\s*ORT_API_CALL\s*\*\s*(\w+)\s*\)`)
)

// apiMembers lists the members of struct OrtApi in declaration order, so a
// member's position is its slot index in the function-pointer table.
func apiMembers(header string) ([]string, error) {
	src := blockComment.ReplaceAllString(header, " ")
	src = lineComment.ReplaceAllString(src, "")
	start := strings.Index(src, "struct OrtApi {")
	if start < 0 {
		return nil, errNoStruct
	}
	body := src[start+len("struct OrtApi {"):]
	end := strings.Index(body, "\n};")
	if end < 0 {
		return nil, errNoStruct
	}
	body = body[:end]
	var names []string
	depth := 0
	stmt := strings.Builder{}
	for _, r := range body {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		}
		if r == ';' && depth == 0 {
			s := strings.Join(strings.Fields(stmt.String()), " ")
			stmt.Reset()
			if s == "" {
				continue
			}
			var name string
			if m := api2Status.FindStringSubmatch(s); m != nil {
				name = m[1]
			} else if m := classRelease.FindStringSubmatch(s); m != nil {
				name = "Release" + m[1]
			} else if m := apiT.FindStringSubmatch(s); m != nil {
				name = m[1]
			} else if m := plainFnPtr.FindStringSubmatch(s); m != nil {
				name = m[1]
			} else {
				return nil, &parseError{s}
			}
			names = append(names, name)
			continue
		}
		stmt.WriteRune(r)
	}
	if strings.TrimSpace(stmt.String()) != "" {
		return nil, &parseError{stmt.String()}
	}
	return names, nil
}

type parseError struct{ stmt string }

func (e *parseError) Error() string { return "unrecognised OrtApi member: " + e.stmt }

type constError string

func (e constError) Error() string { return string(e) }

const errNoStruct = constError("struct OrtApi not found in header")

var capiIndex = regexp.MustCompile(`AO_IDX_(\w+)\s*=\s*(\d+)`)

// TestAPIIndices checks every OrtApi slot index in capi.h against the
// position of that member in struct OrtApi of the real header.
func TestAPIIndices(t *testing.T) {
	p := headerPath()
	if p == "" {
		t.Skip("onnxruntime_c_api.h not in the Go module cache (go mod download github.com/yalue/onnxruntime_go@v1.27.0)")
	}
	hdr, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hdr), "#define ORT_API_VERSION 24") {
		t.Fatalf("%s is not the API version 24 header", p)
	}
	names, err := apiMembers(string(hdr))
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, n := range names {
		if _, dup := pos[n]; dup {
			t.Errorf("member %s appears twice", n)
		}
		pos[n] = i
	}
	// Anchors that pin the parse: the first members and a few well-known
	// slots of the ORT C API.
	for name, want := range map[string]int{"CreateStatus": 0, "GetErrorCode": 1, "CreateEnv": 3, "Run": 9, "ReleaseEnv": 92} {
		if pos[name] != want {
			t.Errorf("parser sanity: %s at %d, want %d", name, pos[name], want)
		}
	}
	t.Logf("struct OrtApi has %d members", len(names))

	own, err := os.ReadFile("capi.h")
	if err != nil {
		t.Fatal(err)
	}
	found := capiIndex.FindAllStringSubmatch(string(own), -1)
	if len(found) < 30 {
		t.Fatalf("only %d AO_IDX_ entries found in capi.h", len(found))
	}
	for _, m := range found {
		name, idx := m[1], 0
		for _, c := range m[2] {
			idx = idx*10 + int(c-'0')
		}
		got, ok := pos[name]
		switch {
		case !ok:
			t.Errorf("capi.h: AO_IDX_%s: no member %s in struct OrtApi", name, name)
		case got != idx:
			t.Errorf("capi.h: AO_IDX_%s = %d, but %s is member %d of struct OrtApi", name, idx, name, got)
		}
	}
	// Every slot capi.c calls must have its index checked above.
	src, err := os.ReadFile("capi.c")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, m := range found {
		checked[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`API\((\w+)\)\(`).FindAllStringSubmatch(string(src), -1) {
		if !checked[m[1]] {
			t.Errorf("capi.c calls %s without an AO_IDX_ entry", m[1])
		}
	}
}
