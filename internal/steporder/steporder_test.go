package steporder

import "testing"

type step struct {
	name  string
	after []string
}

func TestCheck(t *testing.T) {
	cases := []struct {
		table []step
		want  string
	}{
		{[]step{{"a", nil}, {"b", []string{"a"}}}, ""},
		{[]step{{"b", []string{"a"}}, {"a", nil}}, `t: "b" must run after "a"`},
		{[]step{{"a", nil}, {"a", nil}}, `t: "a" listed twice`},
		{[]step{{"a", []string{"missing"}}}, `t: "a" must run after "missing"`},
	}
	for _, tc := range cases {
		err := Check("t", tc.table, func(s step) string { return s.name }, func(s step) []string { return s.after })
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.table, got, tc.want)
		}
	}
}
