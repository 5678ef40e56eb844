package report

import (
	"fmt"
	"io"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// Rewrite is what `attnopt rewrite` did.
type Rewrite struct {
	Input    string         `json:"input"`
	Output   string         `json:"output"` // "" when nothing was fused and no file written
	Target   string         `json:"target"`
	Op       string         `json:"op"`
	Sites    []RewriteSite  `json:"sites"`
	Fused    int            `json:"fused"`
	Folds    int            `json:"layout_folds"`
	Removed  int            `json:"nodes_removed"`
	External ExternalResult `json:"external_data"`
	Rejected []Rejection    `json:"rejected,omitempty"`
	Note     string         `json:"note,omitempty"`
	// RowsNote says, once per model, that rows seeing no key differ
	// between the rewrite and older ONNX Runtimes on the original
	// (rowsNote).
	RowsNote string `json:"rows_note,omitempty"`
}

// RewriteSite is one site and what happened to it.
type RewriteSite struct {
	SiteInfo
	Fused  bool   `json:"fused"`
	Op     string `json:"fused_op,omitempty"`
	Node   string `json:"fused_node,omitempty"`
	Plan   string `json:"plan,omitempty"` // exact, or the approximation
	Reason string `json:"reason,omitempty"`
	// ReasonCode is the reason's kind (passes/match/reject.go).
	ReasonCode string `json:"reason_code,omitempty"`
	// Warning says why the fused op still materialises the scores in its
	// runtime; FusedBytes then is the score memory.
	Warning string `json:"warning,omitempty"`
	// pooled: a pooled plan, whose FusedBytes is its footprint (Q, K, V,
	// O at the pooled lengths), which the budget judged.
	pooled bool
}

// ExternalResult says how external data reached the output.
type ExternalResult struct {
	Files  []string `json:"files"`
	Copied bool     `json:"copied"`
}

// NewRewrite builds the report of one rewrite.
func NewRewrite(in, out string, c *passes.Context, saved graph.SaveResult) *Rewrite {
	r := &Rewrite{Input: in, Output: out, Target: c.Target.Name(), Op: c.Target.Op(), Folds: c.LayoutFolds, Removed: c.DeadRemoved,
		External: ExternalResult{Files: saved.ExternalFiles, Copied: saved.Copied}}
	for _, a := range c.Actions {
		rs := RewriteSite{SiteInfo: NewSiteInfo(a.Site), Fused: a.Fused, Op: a.Op, Node: a.Node, Reason: a.Reason}
		if a.Reject != nil {
			rs.ReasonCode = a.Reject.Code.String()
		}
		if a.Plan != nil {
			rs.Plan = a.Plan.String()
			rs.pooled = a.Plan.Pooled()
			if a.Plan.BytesAfter >= 0 && (rs.pooled || a.Warning != "") {
				after := a.Plan.BytesAfter
				rs.FusedBytes = &after
			}
		}
		if a.Fused {
			r.Fused++
			rs.Warning = a.Warning
			if a.CUDA != nil {
				rs.CUDA = newCUDAInfo(*a.CUDA)
			}
		}
		r.Sites = append(r.Sites, rs)
	}
	for _, rej := range c.Match.Rejected {
		r.Rejected = append(r.Rejected, newRejection(rej))
	}
	r.RowsNote = rowsNote(c.Actions)
	if n := r.materialising(); n > 0 {
		r.Note = fmt.Sprintf("note: %d of %d fused site(s) still materialise their scores in ONNX Runtime's CPU kernel for %s; --target attnopt (attnopt.FlashAttention) avoids them", n, r.Fused, r.Op)
	}
	return r
}

// ioText names Q/K/V/O beside a fused op's figure: both graphs hold them,
// so they are no cost of the rewrite (docs/design.md §6).
func ioText(b *int64) string {
	if b == nil {
		return ""
	}
	return " (Q/K/V/O " + HumanBytes(b) + " in both graphs)"
}

// nothingWritten ends rewrite's summary when it fused nothing and was not
// given -o (cmd/attnopt/rewrite.go): Output is then "".
const nothingWritten = "nothing to rewrite, no file written (-o FILE writes the model unchanged)"

// WriteRewrite prints the per-site summary of a rewrite.
func WriteRewrite(w io.Writer, r *Rewrite, explain bool) {
	if len(r.Sites) == 0 && r.Output == "" {
		fmt.Fprintf(w, "%s: no attention site found; %s\n", r.Input, nothingWritten)
	} else if len(r.Sites) == 0 {
		fmt.Fprintf(w, "%s: no attention site found; wrote the model unchanged to %s\n", r.Input, r.Output)
	}
	for _, s := range r.Sites {
		switch {
		case s.Fused && s.Warning != "":
			fmt.Fprintf(w, "%s: fused into %s %s — scores %s → still %s\n", s.label(), s.Op, s.Node, HumanBytes(s.ScoreBytes), HumanBytes(s.FusedBytes))
			fmt.Fprintf(w, "warning: %s: %s\n", s.label(), s.Warning)
		case s.Fused && s.pooled:
			fmt.Fprintf(w, "%s: fused into %s %s — scores %s → pooled plan holds %s (Q/K/V/O at the pooled lengths)\n", s.label(), s.Op, s.Node, HumanBytes(s.ScoreBytes), HumanBytes(s.FusedBytes))
		case s.Fused:
			fmt.Fprintf(w, "%s: fused into %s %s — scores %s → fused op adds %s%s\n", s.label(), s.Op, s.Node, HumanBytes(s.ScoreBytes), HumanBytes(s.FusedBytes), ioText(s.IOBytes))
		default:
			fmt.Fprintf(w, "%s: left as is: %s\n", s.label(), s.Reason)
		}
		if line := cudaWarning(s); line != "" {
			fmt.Fprintln(w, line)
		}
	}
	if explain {
		for _, x := range r.Rejected {
			fmt.Fprintln(w, x.text())
		}
	}
	switch {
	case len(r.Sites) > 0 && r.Output == "":
		fmt.Fprintf(w, "0 of %d site(s) fused (target %s): %s\n", len(r.Sites), r.Target, nothingWritten)
	case len(r.Sites) > 0:
		fmt.Fprintf(w, "%d of %d site(s) fused (target %s); %d node(s) removed, %d layout fold(s); wrote %s\n", r.Fused, len(r.Sites), r.Target, r.Removed, r.Folds, r.Output)
	}
	if len(r.External.Files) > 0 {
		how := "referenced in place (output is beside the input)"
		if r.External.Copied {
			how = "written beside the output into its own data file"
		}
		fmt.Fprintf(w, "external data %v: %s\n", r.External.Files, how)
	}
	if r.Note != "" {
		fmt.Fprintln(w, r.Note)
	}
	if r.RowsNote != "" {
		fmt.Fprintln(w, r.RowsNote)
	}
}

// materialising counts the fused sites whose op still materialises the
// scores in its runtime.
func (r *Rewrite) materialising() int {
	n := 0
	for _, s := range r.Sites {
		if s.Fused && s.Warning != "" {
			n++
		}
	}
	return n
}
