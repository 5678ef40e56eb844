package report

import (
	"encoding/json"
	"fmt"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/units"
	"github.com/attnopt/attnopt/passes"
	"io"
	"strconv"
	"strings"
)

// Format is an output format.
type Format string

const (
	Text     Format = "text" // a table on a terminal, tab-separated otherwise
	JSON     Format = "json"
	Markdown Format = "md"   // for a pull-request comment
	HTML     Format = "html" // one self-contained file
)

// HumanBytes prints a size in binary units, "?" when unknown.
func HumanBytes(p *int64) string {
	if p == nil {
		return "?"
	}
	return units.FormatBytes(*p)
}

// WriteJSON writes v as indented JSON with a trailing newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Write renders the inspect report in the given format (text aligned).
func (r *Inspect) Write(w io.Writer, f Format, explain bool) error {
	return r.WriteTo(w, f, explain, true)
}

// WriteTo renders the inspect report; aligned pads the text table into
// columns (a terminal), otherwise its rows are tab-separated.
func (r *Inspect) WriteTo(w io.Writer, f Format, explain, aligned bool) error {
	switch f {
	case JSON:
		if !explain {
			c := *r
			c.Rejected = nil
			return WriteJSON(w, &c)
		}
		return WriteJSON(w, r)
	case Text:
		return r.writeText(w, explain, aligned)
	}
	return fmt.Errorf("unknown format %q", f)
}

func (r *Inspect) writeText(w io.Writer, explain, aligned bool) error {
	fmt.Fprintf(w, "%s: %d attention site(s)", r.Model, len(r.Sites))
	if n := r.nestedSites(); n > 0 {
		fmt.Fprintf(w, " (%d in subgraphs)", n)
	}
	if len(r.Fused) > 0 {
		fmt.Fprintf(w, ", %d already fused", len(r.Fused))
	}
	fmt.Fprintln(w)
	if len(r.Sites) > 0 {
		tw := tableWriter(w, aligned)
		fmt.Fprintln(tw, "SITE\tSOFTMAX\tB\tH\tNq\tNk\tDqk\tDv\tDTYPE\tMASK\tSCALE\tGRID\tSCORES\tFUSED ADDS\tQ/K/V/O")
		for _, s := range r.Sites {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.4g\t%s\t%s\t%s\t%s\n", s.ID, s.Softmax,
				s.Dims.Batch, s.Dims.Heads, s.Dims.QLen, s.Dims.KVLen, s.Dims.HeadDim, s.Dims.VHeadDim,
				s.DType, maskText(s.Mask, s.Causal, s.SlidingWindow, s.Softcap), s.Scale, gridText(s), HumanBytes(s.ScoreBytes), HumanBytes(s.FusedBytes),
				HumanBytes(s.IOBytes))
		}
		tw.Flush()
		fmt.Fprintf(w, "total: scores %s, fused ops add %s (per CPU thread); Q/K/V/O %s, held by both graphs\n",
			HumanBytes(r.Totals.ScoreBytes), HumanBytes(r.Totals.FusedBytes), HumanBytes(r.Totals.IOBytes))
		writeLifted(w, r.Sites)
		writeCUDAAdvice(w, r.Sites)
	}
	for _, f := range r.Fused {
		dom := graph.DomainName(f.Domain)
		fmt.Fprintf(w, "already fused: %s.%s %s", dom, f.Op, f.Node)
		if f.FusedBytes != nil {
			fmt.Fprintf(w, " (Nq %s, Nk %s", ptrText(f.QLen), ptrText(f.KVLen))
			if f.Window != nil {
				fmt.Fprintf(w, ", window %v", f.Window)
			}
			fmt.Fprintf(w, "; adds %s, scores equivalent %s)", HumanBytes(f.FusedBytes), HumanBytes(f.ScoreBytes))
		}
		if note := passes.LiftedNote(dom + "." + f.Op); note != "" && f.Op == "Attention" {
			// Not lifted (--explain says why), yet still naive in that runtime.
			fmt.Fprintf(w, " — kept; %s", note)
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Nested {
		switch {
		case n.Site != nil:
			fmt.Fprintf(w, "in subgraph %s: %s %s is site %d\n", n.Path, n.Op, n.Node, *n.Site)
		default:
			fmt.Fprintf(w, "in subgraph %s: %s %s, not a site: %s\n", n.Path, n.Op, n.Node, strings.TrimSpace(n.Reason))
		}
	}
	if len(r.Sites) == 0 && len(r.Fused) == 0 && len(r.Nested) == 0 {
		fmt.Fprintln(w, "nothing to do: no MatMul→Softmax→MatMul attention found")
	}
	if explain {
		if len(r.Rejected) == 0 {
			fmt.Fprintln(w, "every Softmax is part of a site")
		}
		for _, x := range r.Rejected {
			fmt.Fprintln(w, x.text())
		}
	}
	return nil
}

func gridText(s SiteInfo) string {
	if s.Grid == nil {
		return "-"
	}
	parts := make([]string, len(s.Grid))
	for i, d := range s.Grid {
		parts[i] = strconv.FormatInt(d, 10)
	}
	t := strings.Join(parts, "x")
	if !s.GridProven {
		t += "?"
	}
	return t
}

func ptrText(p *int64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatInt(*p, 10)
}

// writeLifted says which sites were lifted from an exporter's fused op and
// in what form.
func writeLifted(w io.Writer, sites []SiteInfo) {
	for _, s := range sites {
		if s.LiftedFrom != "" {
			fmt.Fprintf(w, "site %d (%s): lifted from %s (%s); %s\n", s.ID, s.Softmax, s.LiftedFrom,
				s.liftedForm, passes.LiftedNote(s.LiftedFrom))
		}
	}
}
