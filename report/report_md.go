package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// mdCell escapes a Markdown table cell.
func mdCell(s string) string {
	if s == "" {
		return "–"
	}
	s = strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
	return s
}

func mdCode(s string) string {
	if s == "" {
		return "–"
	}
	return "`" + strings.NewReplacer("`", "'", "|", `\|`).Replace(s) + "`"
}

type mdTable struct{ e *errWriter }

func (m mdTable) header(cols ...string) {
	m.e.printf("| %s |\n", strings.Join(cols, " | "))
	seps := make([]string, len(cols))
	for i := range seps {
		seps[i] = "---"
	}
	m.e.printf("|%s|\n", strings.Join(seps, "|"))
}

func (m mdTable) row(cols ...string) { m.e.printf("| %s |\n", strings.Join(cols, " | ")) }

func (r *Report) writeMarkdown(w io.Writer) error {
	e := &errWriter{w: w}
	t := mdTable{e}
	e.printf("## %s\n\n", r.title())
	e.printf("`%s` → `%s`\n\n", r.A.Path, r.B.Path)
	if r.Changed {
		e.printf("**%s**\n\n", r.Headline())
	} else {
		e.printf("**No change.** %s.\n\n", strings.TrimPrefix(r.Headline(), "no change: "))
	}
	if r.Rewrite != nil {
		e.printf("Target `%s` (`%s`); %d node(s) removed, %d layout fold(s).\n\n", r.Rewrite.Target, r.Rewrite.Op, r.Rewrite.DeadRemoved, r.Rewrite.LayoutFolds)
	}
	if r.RunsWith != "" {
		e.printf("%s\n\n", r.RunsWith)
	}
	if v := r.Validation; v != nil {
		mark := "✅"
		if !v.Pass {
			mark = "❌"
		}
		e.printf("Validation: %s **%s** (runtime %s, scope %s, seed %d)\n\n", mark, v.Verdict, v.Runtime, v.Scope, v.Seed)
	}

	if len(r.Sites)+len(r.NewSites) > 0 {
		e.printf("### Attention sites\n\n")
		t.header("site", "softmax", "variant", "B·H·Nq·Nk", "Dqk/Dv", "dtype", "mask", "status", "op", "scores", "fused", "after", "max abs", "validation")
		for _, list := range [][]SiteReport{r.Sites, r.NewSites} {
			for _, s := range list {
				id := strconv.Itoa(s.ID)
				if s.Status == SiteNew {
					id = "b" + id
				}
				shape := fmt.Sprintf("%v·%v·%v·%v", s.Shape.Batch, s.Shape.Heads, s.Shape.QLen, s.Shape.KVLen)
				t.row(id, mdCode(s.where()), mdCell(s.Variant), shape, fmt.Sprintf("%v/%v", s.Shape.HeadDim, s.Shape.VHeadDim),
					s.DType, s.maskText(), s.Status, mdCode(s.opText()), HumanBytes(s.ScoreBytes), HumanBytes(s.FusedBytes),
					HumanBytes(s.BytesAfter), mdCell(s.worst()), mdCell(s.verdict()))
			}
		}
		e.printf("\n**Total:** %s; score memory %s → %s.\n\n", r.fusedText(), HumanBytes(r.Totals.BytesBefore), HumanBytes(r.Totals.BytesAfter))
		for _, list := range [][]SiteReport{r.Sites, r.NewSites} {
			for _, s := range list {
				if s.Reason != "" {
					e.printf("- site %d (`%s`): %s\n", s.ID, s.where(), mdCell(s.Reason))
				}
			}
		}
	}

	if v := r.Validation; v != nil && len(v.Checks) > 0 {
		e.printf("### Validation\n\n")
		t.header("check", "output", "max abs", "max rel", "mean abs", "cosine", "worst at", "NaN/Inf", "atol", "verdict")
		for _, c := range v.Checks {
			if c.Error != "" {
				t.row(mdCell(c.Name), "–", "–", "–", "–", "–", "–", "–", "–", "ERROR: "+mdCell(c.Error))
			}
			for _, m := range c.Outputs {
				verdict := outputVerdict(&c, &m)
				if !m.Pass {
					verdict = "**FAIL**"
				}
				t.row(mdCell(c.Name), mdCode(m.Output), num(m.MaxAbs, "%.3g"), num(m.MaxRel, "%.3g"), num(m.MeanAbs, "%.3g"),
					cosineText(m.Cosine), fmt.Sprint(m.WorstIndex), strconv.Itoa(m.NaNs), fmt.Sprintf("%.3g", m.Atol), verdict)
			}
		}
		e.printf("\n")
		for _, c := range v.Checks {
			if c.Reduced != "" {
				e.printf("- %s: %s\n", mdCell(c.Name), mdCell(c.Reduced))
			}
		}
	}

	if changedSigs(r.Inputs)+changedSigs(r.Outputs) > 0 {
		e.printf("### Inputs and outputs\n\n")
		t.header("kind", "name", "status", "A", "B")
		for _, k := range []struct {
			kind string
			list []SigChange
		}{{"input", r.Inputs}, {"output", r.Outputs}} {
			for _, c := range k.list {
				t.row(k.kind, mdCode(c.Name), c.Status, mdCode(sigText(c.A)), mdCode(sigText(c.B)))
			}
		}
		e.printf("\n")
	}

	e.printf("<details><summary>Graph diff: opsets, op counts, nodes, initializers</summary>\n\n")
	t.header("opset domain", "A", "B")
	for _, o := range r.Opsets {
		t.row(mdCode(o.Domain), opsetText(o.A), opsetText(o.B))
	}
	e.printf("\n")
	t.header("op", "domain", "A", "B", "Δ")
	for _, o := range r.Ops {
		t.row(mdCode(o.Op), mdCode(o.Domain), strconv.Itoa(o.A), strconv.Itoa(o.B), delta(o.A, o.B))
	}
	e.printf("\n")
	if n := r.Nodes; len(n.Removed)+len(n.Added)+len(n.Changed) > 0 {
		e.printf("Nodes: %d removed, %d added, %d changed, %d unchanged.\n\n", len(n.Removed), len(n.Added), len(n.Changed), n.Unchanged)
		t.header("", "node", "op")
		more := 0
		for _, k := range []struct {
			sign string
			list []NodeRef
		}{{"−", n.Removed}, {"+", n.Added}, {"~", n.Changed}} {
			for i, x := range k.list {
				if i >= listLimit {
					more += len(k.list) - listLimit
					break
				}
				t.row(k.sign, mdCode(x.Name), mdCode(x.OpName()))
			}
		}
		if more > 0 {
			e.printf("\n… %d more (the JSON report lists every node).\n", more)
		}
		e.printf("\n")
	} else {
		e.printf("Nodes: no change (%d).\n\n", r.Nodes.Unchanged)
	}
	if in := r.Inits; len(in.Removed)+len(in.Added)+len(in.Changed) > 0 {
		e.printf("Initializers: %d removed, %d added, %d changed, %d unchanged.\n\n", len(in.Removed), len(in.Added), len(in.Changed), in.Unchanged)
		t.header("", "name", "A", "B", "what")
		rows := 0
		for _, x := range in.Removed {
			if rows++; rows <= listLimit {
				t.row("−", mdCode(x.Name), mdCode(initText(x)), "–", "removed")
			}
		}
		for _, x := range in.Added {
			if rows++; rows <= listLimit {
				t.row("+", mdCode(x.Name), "–", mdCode(initText(x)), "added")
			}
		}
		for _, x := range in.Changed {
			if rows++; rows <= listLimit {
				t.row("~", mdCode(x.Name), mdCode(initText(x.A)), mdCode(initText(x.B)), x.Reason)
			}
		}
		if rows > listLimit {
			e.printf("\n… %d more (the JSON report lists every initializer).\n", rows-listLimit)
		}
		e.printf("\n")
	} else {
		e.printf("Initializers: no change (%d).\n\n", r.Inits.Unchanged)
	}
	e.printf("</details>\n")
	for _, n := range r.Notes {
		e.printf("\n> %s\n", mdCell(n))
	}
	if p := r.Provenance; p != nil {
		e.printf("\n<sub>%s</sub>\n", esc(p.Line()))
	}
	return e.err
}
