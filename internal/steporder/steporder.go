// Package steporder checks an ordered table of named steps, each naming the
// steps it must run after: the pass table (passes/pipeline.go) and the
// matcher's fix-ups (passes/match/fixups.go) state their order as data, and
// this proves the data at init.
package steporder

import "fmt"

// Check reports the first step that is listed twice or runs before a step
// it names; what names the table in the error.
func Check[T any](what string, table []T, name func(T) string, after func(T) []string) error {
	seen := map[string]bool{}
	for _, s := range table {
		n := name(s)
		if seen[n] {
			return fmt.Errorf("%s: %q listed twice", what, n)
		}
		for _, a := range after(s) {
			if !seen[a] {
				return fmt.Errorf("%s: %q must run after %q", what, n, a)
			}
		}
		seen[n] = true
	}
	return nil
}
