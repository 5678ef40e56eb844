package ort

import (
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
	if p := os.Getenv("ORT_C_API_HEADER"); p != "" {
		return p
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	cache := strings.TrimSpace(string(out))
	if cache == "" {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "github.com", "yalue", "onnxruntime_go@v1.27.0", "onnxruntime_c_api.h"))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
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

func TestDumpAPI(t *testing.T) {
	p := headerPath()
	if p == "" {
		t.Skip("no header")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	names, err := apiMembers(string(b))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		t.Logf("%d %s", i, n)
	}
}
