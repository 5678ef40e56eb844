// Package resolve settles what the rule set bound about a site's mask once
// the site's lengths are known: which triangular candidates are the op's
// `causal` (and which stay mask terms), whether a band is its
// sliding_window, whether an ALiBi ramp holds in its per-key form, the fills
// the op states for what causal drops (Causal), and what a row that sees no
// key yields (Rows). Each reads a Site and returns one value; the matcher
// (passes/match/fixups.go) applies it to its draft. It reads the records of
// passes/match/masks and the position readers of passes/match/posmask, and
// nothing of the graph beyond the values they name.
package resolve

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// Candidate is a mask term proved triangular, or an ALiBi ramp, kept aside
// by the peels until the site's lengths are known.
type Candidate struct {
	Tri   posmask.Tri
	Value *graph.Value
	// Term is what the site keeps when the candidate does not become the
	// op's causal flag (its offset is not the op's alignment Nk − Nq).
	Term masks.Term
	// Keep: the term carries more than the triangle (a constant bias with
	// relative-position values where it keeps keys) and stays a mask too.
	Keep bool
	// Band: the term is also the site's band (a constant sliding-window
	// causal mask): it stays a mask unless the window states it.
	Band bool
	// Rest, when set, is the mask the term leaves beside causal when it
	// fits (an ALiBi bias's per-key row); Term stays otherwise.
	Rest *masks.Term
	// Ramp: not a causal term but an ALiBi ramp whose per-key form holds
	// once the site is causal; Term is the ramp as the graph has it.
	Ramp *Ramp
	// Fill is what the term adds to the keys it drops (nil: −inf); Once
	// says it shares that fill with other mask terms of its group.
	Fill *float64
	Once bool
}

// Candidates are the peels' record of causal candidates: every triangular
// term, and the band (a term keeping keys above a diagonal) if one was seen.
type Candidates struct {
	Terms []Candidate
	Band  *Candidate
}

// Site is what resolution reads of a site: its plane, and its mask as far
// as the peels bound it.
type Site struct {
	Rank          int
	QLen, KVLen   graph.Dim
	DType         graph.DType
	Masks         []masks.Term
	Form          masks.Form // the form the variant names: the first mask statement's
	Causal        bool
	SlidingWindow int64
	Fills         masks.Fills
	ZeroRowGuard  bool
}

// Resolved is a site's mask once its candidates are settled.
type Resolved struct {
	Masks         []masks.Term
	Form          masks.Form
	Causal        bool
	SlidingWindow int64
	Fills         masks.Fills
	// Added are the values of the terms resolution added to Masks, as the
	// graph has them (before posmask.Unexpand): scores + these is what the
	// source computed, which a guard after the softmax may read.
	Added []*graph.Value
	// Kept: some candidate stayed a mask term, so the site's shapes must be
	// read again.
	Kept bool
}

// Causal turns the candidates into the op's `causal` when their pattern
// covers the whole (Nq, Nk) score plane and its offset is the bottom-right
// alignment Nk − Nq; any other candidate stays a mask term. A band with the
// causal fill becomes the sliding window.
func Causal(s Site, c Candidates) Resolved {
	r := Resolved{
		Masks:  append([]masks.Term(nil), s.Masks...),
		Form:   s.Form,
		Causal: s.Causal, SlidingWindow: s.SlidingWindow, Fills: s.Fills,
	}
	for _, t := range c.Terms {
		if t.Ramp != nil {
			continue
		}
		if fits(s, t) {
			if !t.Keep {
				r.addCausalFill(t.Fill)
				r.Fills.Once = r.Fills.Once || t.Once
			}
			r.Causal = true
			if r.Form == "" {
				r.Form = t.Term.Form.Causal()
			}
			if t.Rest != nil {
				r.add(viewed(*t.Rest, t.Term))
				continue
			}
			if !t.Keep && !t.Band {
				continue
			}
		}
		r.add(t.Term)
		r.Kept = true
	}
	for _, t := range c.Terms {
		if t.Ramp == nil {
			continue
		}
		if t.Ramp.holds(r.Causal, s.QLen, s.KVLen) {
			r.add(viewed(t.Ramp.Term, t.Term))
			continue
		}
		r.add(t.Term)
		r.Kept = true
	}
	// The window drops keys with the causal fill, so a band with another
	// fill stays a mask.
	if b := c.Band; b != nil && r.Causal && onPlane(s, b.Value, b.Term.BatchView) && masks.FillValue(b.Fill) == masks.FillValue(r.Fills.Causal) {
		// The band keeps j ≥ i + off + 1 and causal j ≤ i + Nk − Nq: each
		// query sees the w = Nk − Nq − off keys before it (itself included).
		if lag, ok := posmask.DimMinus(s.KVLen, s.QLen); ok {
			if w, ok := posmask.DimMinus(lag, b.Tri.Off); ok && w.Static() && w.C > 0 {
				r.SlidingWindow = w.C
				r.drop(posmask.Unexpand(b.Value))
			}
		}
	}
	return r
}

// add appends a term, keeping the value the graph has in Added.
func (r *Resolved) add(t masks.Term) {
	r.Added = append(r.Added, t.Value)
	r.Masks, r.Form = Append(r.Masks, r.Form, t)
}

// Append adds t to a site's terms as the site reads it (unexpanded); the
// first term names the site's form. The peels (passes/match/mask.go addMask)
// and resolution add terms through it alike.
func Append(terms []masks.Term, form masks.Form, t masks.Term) ([]masks.Term, masks.Form) {
	t.Value = posmask.Unexpand(t.Value)
	terms = append(terms, t)
	if len(terms) == 1 {
		form = t.Form
	}
	return terms, form
}

// drop removes the term reading v (a band the window states instead).
func (r *Resolved) drop(v *graph.Value) {
	kept := r.Masks[:0]
	for _, t := range r.Masks {
		if t.Value != v {
			kept = append(kept, t)
		}
	}
	r.Masks = kept
	if len(kept) > 0 {
		r.Form = kept[0].Form
	}
}

// addCausalFill records the fill of a causal term the op's `causal` now
// states; a second causal term on the site adds its fill, as the source
// adds both (in float32, where two finfo.min fills overflow to −inf).
func (r *Resolved) addCausalFill(f *float64) {
	switch {
	case !r.Causal:
		r.Fills.Causal = f
	case r.Fills.Causal == nil || f == nil:
		r.Fills.Causal = nil
	default:
		r.Fills.Causal = masks.FiniteFill(float64(float32(*r.Fills.Causal) + float32(*f)))
	}
}

// viewed gives t the batch view of the term it stands for.
func viewed(t, of masks.Term) masks.Term {
	t.BatchView, t.BatchFold = of.BatchView, of.BatchFold
	return t
}

// onPlane reports whether a mask term spans the (Nq, Nk) score plane; a term
// added in a batch view of the scores has one axis more than the site.
func onPlane(s Site, v *graph.Value, view []graph.Dim) bool {
	t := v.Type
	maxRank := s.Rank
	if view != nil {
		maxRank++
	}
	if !t.Ranked || len(t.Shape) < 2 || len(t.Shape) > maxRank {
		return false
	}
	r := len(t.Shape)
	return t.Shape[r-2].Equal(s.QLen) && t.Shape[r-1].Equal(s.KVLen)
}

func fits(s Site, c Candidate) bool {
	return onPlane(s, c.Value, c.Term.BatchView) && c.Tri.Off.Add(s.QLen).Equal(s.KVLen)
}

// AtMost reports a ≤ b for static dims or equal ones.
func AtMost(a, b graph.Dim) bool {
	if a.Equal(b) {
		return true
	}
	x, ok1 := a.Value()
	y, ok2 := b.Value()
	return ok1 && ok2 && x <= y
}
