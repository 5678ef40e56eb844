package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/attnopt/attnopt/internal/version"
	"github.com/attnopt/attnopt/validate"
)

// Schema names of the JSON documents the CLI prints; each document also
// carries the tool's "version" (docs/reports.md lists their fields).
const (
	InspectSchemaV1  = "attnopt.inspect/v1"
	ValidateSchemaV1 = "attnopt.validate/v1"
	VersionSchemaV1  = "attnopt.version/v1"
)

// Provenance records how a document was made: attnopt's build, the command
// line, the runtime that ran the seeded inputs and their seed. The CLI
// fills it; reports built by library callers may leave it nil.
type Provenance struct {
	Tool string `json:"tool"` // "attnopt"
	version.Info
	// Command is the command line, the program named "attnopt".
	Command []string     `json:"command"`
	Runtime *RuntimeInfo `json:"runtime,omitempty"`
	Seed    *int64       `json:"seed,omitempty"`
}

// RuntimeInfo is the runtime a validation ran in.
type RuntimeInfo struct {
	Name string `json:"name"` // go or ort
	// ONNX Runtime's library, its version, and where the search found it.
	Library     string `json:"library,omitempty"`
	Version     string `json:"version,omitempty"`
	LibraryFrom string `json:"library_from,omitempty"`
	// attnopt's custom-op library, when the rewritten model needs it.
	CustomOps     string `json:"custom_ops,omitempty"`
	CustomOpsFrom string `json:"custom_ops_from,omitempty"`
	// Note says why the default runtime was not ONNX Runtime.
	Note string `json:"note,omitempty"`
}

// NewProvenance is the provenance of a command run with args (without
// the program name).
func NewProvenance(args []string) *Provenance {
	return &Provenance{Tool: "attnopt", Info: version.Get(), Command: append([]string{"attnopt"}, args...)}
}

// WithRun records the runtime and seed of a validation, with the
// libraries' paths made portable: a report is shared, and the machine's
// absolute paths say nothing to its reader (docs/reports.md).
func (p *Provenance) WithRun(rt *RuntimeInfo, seed int64) *Provenance {
	if p == nil {
		return nil
	}
	c := *p
	c.Runtime, c.Seed = rt.portable(), &seed
	return &c
}

// portable is r with every absolute path in it, the libraries and those
// the search names in From and Note, made relative to the working
// directory when inside it, else cut to the file name.
func (r *RuntimeInfo) portable() *RuntimeInfo {
	if r == nil {
		return nil
	}
	c := *r
	for _, s := range []*string{&c.Library, &c.LibraryFrom, &c.CustomOps, &c.CustomOpsFrom, &c.Note} {
		*s = portableText(*s)
	}
	return &c
}

// portableText is s with every absolute path in it made relative to the
// working directory when inside it, else cut to the file name.
func portableText(s string) string {
	wd, _ := os.Getwd()
	return absPath.ReplaceAllStringFunc(s, func(p string) string { return portablePath(p, wd) })
}

// absPath is an absolute path in a line of text: from a slash at the
// start or after a space, parenthesis or quote, up to the next of those.
var absPath = regexp.MustCompile(`(?:^|[\s("'])/[^\s()"',;]*`)

// portablePath is p relative to wd when inside it, else its file name;
// a leading delimiter matched with p is kept.
func portablePath(p, wd string) string {
	lead := ""
	if p[0] != '/' {
		lead, p = p[:1], p[1:]
	}
	if rel, err := filepath.Rel(wd, p); err == nil && wd != "" && filepath.IsLocal(rel) {
		return lead + rel
	}
	return lead + filepath.Base(p)
}

// Line is the provenance as one line for text and Markdown reports:
// "attnopt 0.1.0 (go1.26.8, linux/amd64): attnopt diff a.onnx b.onnx;
// runtime go, seed 1".
func (p *Provenance) Line() string {
	if p == nil {
		return ""
	}
	s := "attnopt " + p.Info.String() + ": " + shellJoin(p.Command)
	if p.Runtime != nil {
		s += "; runtime " + p.Runtime.Text()
	}
	if p.Seed != nil {
		s += fmt.Sprintf(", seed %d", *p.Seed)
	}
	return s
}

// Text names the runtime and, for ONNX Runtime, its version and libraries.
func (r *RuntimeInfo) Text() string {
	switch {
	case r == nil:
		return ""
	case r.Name != "ort":
		s := "go"
		if r.Note != "" {
			s += ": " + r.Note
		}
		return s
	}
	s := "ort: ONNX Runtime " + r.Version + " " + r.Library
	if r.LibraryFrom != "" {
		s += " (" + r.LibraryFrom + ")"
	}
	if r.CustomOps != "" {
		s += ", custom ops " + r.CustomOps
		if r.CustomOpsFrom != "" {
			s += " (" + r.CustomOpsFrom + ")"
		}
	}
	return s
}

// shellJoin quotes the words that a shell would split or expand.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

// ValidationDoc is `attnopt validate --json`: the validation report with
// the schema, version and provenance every JSON document carries.
type ValidationDoc struct {
	Schema     string      `json:"schema"`
	Version    string      `json:"version"`
	Provenance *Provenance `json:"provenance,omitempty"`
	*validate.Report
}

// NewValidationDoc wraps a validation for JSON.
func NewValidationDoc(r *validate.Report, p *Provenance) *ValidationDoc {
	return &ValidationDoc{Schema: ValidateSchemaV1, Version: version.Version, Provenance: p, Report: r}
}
