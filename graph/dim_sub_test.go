package graph

import "testing"

// Sub takes a known part off a sum, as a Range from the cache length to
// the total length needs; anything else it cannot state is not representable.
func TestDimSub(t *testing.T) {
	past, seq := Sym("past"), Sym("seq")
	cases := []struct {
		a, b Dim
		want string
		ok   bool
	}{
		{D(7), D(3), "4", true},
		{seq, D(0), "seq", true},
		{seq, seq, "0", true},
		{past.Add(seq), past, "seq", true},
		{past.Add(seq), seq, "past", true},
		{seq.Add(D(2)), D(2), "seq", true},
		{past.Add(seq).Add(D(1)), past, "seq+1", true},
		{seq, past, "", false},
		{past, past.Add(seq), "", false},
		{UnknownDim, D(1), "", false},
	}
	for _, c := range cases {
		got, ok := c.a.Sub(c.b)
		if ok != c.ok || (ok && got.String() != c.want) {
			t.Errorf("%s − %s = %s, %v; want %q, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}
