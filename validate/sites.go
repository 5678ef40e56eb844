package validate

import (
	"fmt"
	"github.com/attnopt/attnopt/internal/units"
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// validateSites checks each site of the original against what replaced it in
// the rewrite, alone, on seeded inputs at the site's own shapes; a site
// whose scores would not fit runs at reduced lengths, and the check says so.
func validateSites(orig, rew *graph.Model, r Runner, opts Options) []Check {
	var sites []*passes.Site
	rewNodes := nodesByLabel(rew.Graph)
	for _, s := range passes.FindSites(orig.Graph).Sites {
		if !unrewritten(s, rewNodes) {
			sites = append(sites, s)
		}
	}
	var checks []Check
	for i, s := range sites {
		if opts.Progress != nil {
			opts.Progress(i, len(sites), s.Softmax.Label())
		}
		id := s.ID
		name := fmt.Sprintf("site %d (%s)", s.ID, s.Softmax.Label())
		c := Check{Name: name, SiteID: &id}
		at, repl := comparisonPoint(orig, rew, s.Output)
		if repl == nil {
			at, repl = fusedComparisonPoint(rew, s)
		}
		if repl == nil {
			c.Error = fmt.Sprintf("cannot find what replaced %q in the rewrite", s.Output.Name)
			checks = append(checks, settle(c))
			continue
		}
		// The plan comes from the rewrite's ops; what the file records
		// must agree with them.
		plan, err := planOf(s, repl, orig, rew)
		if err != nil {
			c.Error = err.Error()
			checks = append(checks, settle(c))
			continue
		}
		approx, grid := plan.approx, plan.grid
		// Symbolic sites run at the pinned or default dims, which are small.
		sb, big := s.ScoreBytes()
		big = big && sb > opts.MaxScoreBytes
		switch {
		case big && approx == nil:
			c = reducedRewrittenCheck(name, id, s, at, repl, orig, rew, r, opts)
		case big:
			// An approximation's constants are sized for the full grid,
			// so the rewritten site cannot run reduced: it must be what a
			// fresh rewrite of the site gives at full size, and that
			// rewrite is run at a reduced grid.
			if err := sameAsFreshRewrite(s, repl, orig, rew, approx, grid); err != nil {
				c.Error = err.Error()
				break
			}
			c = reducedSiteCheck(name, id, s, orig, rew, approx, grid, r, opts)
		default:
			c = fullSiteCheck(name, id, at, repl, orig, rew, r, opts)
		}
		if approx != nil {
			approxVerdict(&c, opts, plan.bound)
		}
		checks = append(checks, settle(c))
	}
	return checks
}

// comparisonPoint walks forward from the site's output through layout ops
// that cleanup may have folded into the replacement, to the first value the
// rewrite also computes; it returns that value in both models.
func comparisonPoint(orig, rew *graph.Model, out *graph.Value) (*graph.Value, *graph.Value) {
	v := out
	for i := 0; i < 8 && v != nil; i++ {
		// A replacement whose shape differs had a layout op folded into it
		// by cleanup; compare after the model's own op instead.
		if r := replacementOf(orig, rew, v); r != nil && sameShape(r.Type, v.Type) {
			return v, r
		}
		uses := contentUses(v)
		if len(uses) != 1 || len(uses[0].Node.Outputs) != 1 {
			return v, nil
		}
		v = uses[0].Node.Output(0)
	}
	return v, nil
}

// fusedComparisonPoint finds the site in the rewrite by the attnopt.site
// its fused node records, for when the names comparisonPoint follows are
// gone (a shape-dependent cleanup folded or renamed the node after the
// site). The pair is the first value along the original's data path from
// the site's output and the first along the rewrite's from the fused op's
// output, through the layout ops cleanup leaves there, whose types agree.
// A wrong pair could only fail the numeric check, never pass it.
func fusedComparisonPoint(rew *graph.Model, s *passes.Site) (*graph.Value, *graph.Value) {
	var fused *graph.Node
	for _, n := range rew.Graph.Nodes {
		if id, ok := passes.SiteOf(n); ok && id == s.ID {
			fused = n
			break
		}
	}
	if fused == nil || fused.Output(0) == nil {
		return nil, nil
	}
	var after []*graph.Value
	for w := fused.Output(0); w != nil && len(after) < 8; {
		after = append(after, w)
		uses := contentUses(w)
		if len(uses) != 1 || !isLayout(uses[0].Node) || len(uses[0].Node.Outputs) != 1 {
			break
		}
		w = uses[0].Node.Output(0)
	}
	v := s.Output
	for i := 0; i < 8 && v != nil; i++ {
		for _, w := range after {
			if w.Type.Ranked && sameShape(w.Type, v.Type) {
				return v, w
			}
		}
		uses := contentUses(v)
		if len(uses) != 1 || len(uses[0].Node.Outputs) != 1 {
			break
		}
		v = uses[0].Node.Output(0)
	}
	return nil, nil
}

// sameShape says two values can be one tensor: the same type and rank, and
// every dim equal where both models know it (one may have inferred a length
// the other left unknown: gpt2_past's "?" is the rewrite's seq_len).
func sameShape(a, b graph.Type) bool {
	if !a.Ranked || !b.Ranked || a.DType != b.DType || len(a.Shape) != len(b.Shape) {
		return false
	}
	for i := range a.Shape {
		if !a.Shape[i].Unknown && !b.Shape[i].Unknown && !a.Shape[i].Equal(b.Shape[i]) {
			return false
		}
	}
	return true
}

// contentUses are the uses of v that read its values: a Shape or Size
// reader (a dynamic export's reshape arithmetic) may be folded away by the
// rewrite and is not a step of the data path.
func contentUses(v *graph.Value) []graph.Use {
	var out []graph.Use
	for _, u := range v.Uses() {
		if !u.Node.Is("Shape") && !u.Node.Is("Size") {
			out = append(out, u)
		}
	}
	return out
}

// replacementOf finds the value the rewrite computes in place of out: the
// graph output of the same name, or what out's first reader now reads.
func replacementOf(orig, rew *graph.Model, out *graph.Value) *graph.Value {
	for _, o := range orig.Graph.Outputs {
		if o == out {
			return rew.Graph.Value(out.Name)
		}
	}
	for _, u := range contentUses(out) {
		for _, n := range rew.Graph.Nodes {
			if n.Name != "" && n.Name == u.Node.Name && n.OpType == u.Node.OpType {
				return n.Input(u.Index)
			}
		}
	}
	return nil
}

// frontier stops extraction at data values both models compute the same
// way: graph inputs, or outputs of a node with the same name, op and inputs
// in both. Integer values (shape arithmetic) and bool scalars and vectors
// (its tests, Where(Equal(shape, -1), 1, shape)) are followed further back
// so they are computed, not drawn at random.
func frontier(self, other *graph.Model) func(v *graph.Value) bool {
	return func(v *graph.Value) bool {
		if v.Type.DType.IsInt() || v.Type.DType == graph.Bool && v.Type.Ranked && v.Type.Rank() <= 1 {
			return false
		}
		w := other.Graph.Value(v.Name)
		if w == nil {
			return false
		}
		p, q := v.Producer(), w.Producer()
		if p == nil || q == nil {
			return v.Kind == graph.KindInput && w.Kind == graph.KindInput
		}
		if p.Name != q.Name || p.OpType != q.OpType || len(p.Inputs) != len(q.Inputs) {
			return false
		}
		for i := range p.Inputs {
			if (p.Inputs[i] == nil) != (q.Inputs[i] == nil) || (p.Inputs[i] != nil && p.Inputs[i].Name != q.Inputs[i].Name) {
				return false
			}
		}
		return true
	}
}

// fullSiteCheck extracts the site from both files at its own size and
// compares them.
func fullSiteCheck(name string, id int, at, repl *graph.Value, orig, rew *graph.Model, r Runner, opts Options) Check {
	a, b, err := extractPair(at, repl, orig, rew)
	if err != nil {
		return Check{Name: name, SiteID: &id, Error: err.Error()}
	}
	c := compareModels(pair{name: name, a: a, b: b, bNames: []string{repl.Name}, src: orig, user: true}, r, opts)
	c.SiteID = &id
	return c
}

// extractPair is the site cut from each file at values both compute alike.
func extractPair(at, repl *graph.Value, orig, rew *graph.Model) (a, b *graph.Model, err error) {
	if a, err = graph.Extract(orig, []string{at.Name}, frontier(orig, rew)); err != nil {
		return nil, nil, err
	}
	if b, err = graph.Extract(rew, []string{repl.Name}, frontier(rew, orig)); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// reducedRewrittenCheck extracts the site from both files, cuts the query
// and key lengths of both to the same reduced size and compares them on the
// same seeded inputs: what is judged is the rewritten file itself. A site
// that cannot run cut (a length folded into a shape the cut cannot reach)
// runs at full size when its tensors fit MaxTensorBytes, and is otherwise
// CANNOT CHECK, with the reason: the checker's limit, not the rewrite's
// fault.
func reducedRewrittenCheck(name string, id int, s *passes.Site, at, repl *graph.Value, orig, rew *graph.Model, r Runner, opts Options) Check {
	sb, _ := s.ScoreBytes()
	c, err := reducedRun(name, id, s, at, repl, orig, rew, r, opts)
	if err == nil {
		c.Reduced += fmt.Sprintf(" (the full site needs %s of scores); both files' sites run reduced", units.FormatBytes(sb))
		return c
	}
	a, b, xerr := extractPair(at, repl, orig, rew)
	if xerr != nil {
		return Check{Name: name, SiteID: &id, Error: xerr.Error()}
	}
	for _, m := range []*graph.Model{a, b} {
		if v, size := largestComputed(m, opts.Dims); size < 0 || size > MaxTensorBytes {
			return Check{Name: name, SiteID: &id, Verdict: CannotCheck, Error: fmt.Sprintf(
				"%v; at full size it would compute %q (%s, %s), over the %s validation limit",
				err, v.Name, v.Type, sizeText(size), units.FormatBytes(MaxTensorBytes))}
		}
	}
	c = fullSiteCheck(name, id, at, repl, orig, rew, r, opts)
	c.Reduced = fmt.Sprintf("run at full size (%s of scores): %v", units.FormatBytes(sb), err)
	return c
}

// reducedRun is reducedRewrittenCheck's run at reduced length; an error
// says the site could not run cut (a numeric difference is the check's).
func reducedRun(name string, id int, s *passes.Site, at, repl *graph.Value, orig, rew *graph.Model, r Runner, opts Options) (Check, error) {
	e := int64(s.DType.Bits() / 8)
	bh, _ := s.Batch.Mul(s.Heads).Value()
	n := int64(math.Sqrt(float64(opts.MaxScoreBytes) / float64(max(bh*e, 1))))
	n = max(min(n, 4096), 16)
	a, b, err := extractPair(at, repl, orig, rew)
	if err != nil {
		return Check{}, err
	}
	small := make([]*graph.Model, 2)
	var note string
	for i, site := range []*graph.Model{a, b} {
		small[i], note, err = shrink(site, s.QLen, s.KVLen, n)
		if err == nil {
			err = CheckModelScope(small[i], opts.Dims)
		}
		if err != nil {
			return Check{}, fmt.Errorf("%s: cannot run the site at reduced length: %v", [2]string{"original", "rewrite"}[i], err)
		}
	}
	c := compareModels(pair{name: name, a: small[0], b: small[1], bNames: []string{repl.Name}, src: orig}, r, opts)
	c.SiteID = &id
	if c.Error != "" {
		return Check{}, fmt.Errorf("cannot run the site at reduced length: %s", c.Error)
	}
	c.Reduced = note
	return c, nil
}

// siteAlone extracts the site's own nodes from orig: its inputs are the
// values its nodes read from outside.
func siteAlone(orig *graph.Model, s *passes.Site) (*graph.Model, error) {
	inSite := map[*graph.Node]bool{}
	for _, n := range s.Nodes {
		inSite[n] = true
	}
	return graph.Extract(orig, []string{s.Output.Name}, func(v *graph.Value) bool {
		return v.Producer() == nil || !inSite[v.Producer()]
	})
}

// siteWithLayout is siteAlone grown upstream through the layout ops
// (Transpose, Reshape, Squeeze, Unsqueeze) that only the site reads: the
// rewrite's cleanup folds its adapters into those, so a fresh rewrite of the
// site must see them too to come out the same.
func siteWithLayout(orig *graph.Model, s *passes.Site) (*graph.Model, error) {
	in := map[*graph.Node]bool{}
	for _, n := range s.Nodes {
		in[n] = true
	}
	outputs := map[*graph.Value]bool{}
	for _, o := range orig.Graph.Outputs {
		outputs[o] = true
	}
	onlyReadInside := func(p *graph.Node) bool {
		for _, o := range p.Outputs {
			if o == nil {
				continue
			}
			if outputs[o] {
				return false
			}
			for _, u := range o.Uses() {
				if u.Index < 0 || !in[u.Node] {
					return false
				}
			}
		}
		return true
	}
	for grew := true; grew; {
		grew = false
		for n := range in {
			for _, v := range n.Inputs {
				p := v.Producer()
				if v == nil || p == nil || in[p] || !isLayout(p) || !onlyReadInside(p) {
					continue
				}
				in[p], grew = true, true
			}
		}
	}
	return graph.Extract(orig, []string{s.Output.Name}, func(v *graph.Value) bool {
		return v.Producer() == nil || !in[v.Producer()]
	})
}

func isLayout(n *graph.Node) bool {
	return n.Is("Transpose") || n.Is("Reshape") || n.Is("Squeeze") || n.Is("Unsqueeze")
}

// sameAsFreshRewrite compares the rewritten file's site, from repl back to
// the site's inputs, with a full-size rewrite of the site alone with the
// same target and approximation; any difference (a swapped operand, a
// changed attribute or constant, an extra node) is reported.
func sameAsFreshRewrite(s *passes.Site, repl *graph.Value, orig, rew *graph.Model, approx *passes.ApproxOptions, grid []int64) error {
	full, err := siteWithLayout(orig, s)
	if err != nil {
		return err
	}
	fresh, err := graph.LoadBytes(mustMarshal(full), "")
	if err != nil {
		return err
	}
	a := *approx
	a.Grid = grid
	if _, err := passes.Rewrite(fresh, passes.Options{Target: fusedTarget(rew), Approx: a}); err != nil {
		return fmt.Errorf("cannot rewrite the site alone for comparison: %v", err)
	}
	inputs := map[string]bool{}
	for _, v := range full.Graph.Inputs {
		inputs[v.Name] = true
	}
	atInput := func(v *graph.Value) bool { return inputs[v.Name] }
	want := signature(fresh.Graph.Value(s.Output.Name), atInput)
	if got := signature(repl, atInput); got != want {
		return fmt.Errorf("the rewritten site differs from a fresh rewrite of the site with the same plan (operands, attributes, constants or nodes changed)")
	}
	return nil
}

// reducedSiteCheck rebuilds the site alone with its sequence lengths cut so
// the original fits, rewrites that with the same target, and compares.
func reducedSiteCheck(name string, id int, s *passes.Site, orig, rew *graph.Model, approx *passes.ApproxOptions, grid []int64, r Runner, opts Options) Check {
	c := Check{Name: name, SiteID: &id}
	target := fusedTarget(rew)
	if target == "" {
		c.Error = "the rewrite has no fused attention op"
		return c
	}
	full, err := siteAlone(orig, s)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	e := int64(s.DType.Bits() / 8)
	bh, _ := s.Batch.Mul(s.Heads).Value()
	n := int64(math.Sqrt(float64(opts.MaxScoreBytes) / float64(max(bh*e, 1))))
	n = max(min(n, 4096), 16)
	nq, nk := s.QLen, s.KVLen
	ropts := passes.Options{Target: target}
	if approx != nil && grid != nil {
		// Keep the grid's structure: whole windows or pool blocks.
		// An approximation's error depends on how many windows or blocks
		// the grid holds, so allow up to 8192 cells (1 GiB of fp32 scores
		// for four heads) before cutting further.
		g := reduceGrid(grid, max(n, 8192))
		a := *approx
		a.Grid = g
		if a.Window != nil {
			a.Window = append([]int64(nil), a.Window...)
			a.Shift = append([]int64(nil), a.Shift...)
			for i := range g {
				a.Window[i] = min(a.Window[i], g[i])
				if i < len(a.Shift) {
					a.Shift[i] %= g[i]
				}
			}
		}
		ropts.Approx = a
		n = prodOf(g)
	}
	small, note, err := shrink(full, nq, nk, n)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	fused, err := graph.LoadBytes(mustMarshal(small), "")
	if err != nil {
		c.Error = err.Error()
		return c
	}
	if _, err := passes.Rewrite(fused, ropts); err != nil {
		c.Error = err.Error()
		return c
	}
	c = compareModels(pair{name: name, a: small, b: fused, src: orig}, r, opts)
	c.SiteID = &id
	sb, _ := s.ScoreBytes()
	c.Reduced = fmt.Sprintf("%s (the full site needs %s of scores)", note, units.FormatBytes(sb))
	if ropts.Approx.Grid != nil {
		c.Reduced += fmt.Sprintf("; grid reduced to %s with the same windows/strides", units.FormatDims(ropts.Approx.Grid))
	}
	return c
}

func mustMarshal(m *graph.Model) []byte {
	b, err := m.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}
