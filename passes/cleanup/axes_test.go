package cleanup

import (
	"slices"
	"testing"
)

// mergeAxes states two Unsqueeze (or Squeeze) steps as one: the second
// step's axes count only the positions the first did not name.
func TestMergeAxes(t *testing.T) {
	for _, c := range []struct {
		outer, inner []int64
		rank         int
		want         []int64
	}{
		{[]int64{1}, []int64{0}, 4, []int64{0, 1}}, // rank 2 → batch axis → head axis
		{[]int64{0}, []int64{0}, 4, []int64{0, 1}}, // both leading
		{[]int64{2}, []int64{0, 1}, 5, []int64{0, 1, 2}},
		{[]int64{0}, []int64{2}, 4, []int64{0, 3}}, // inner axis after the outer one
		{[]int64{3}, []int64{3}, 4, nil},           // inner axis beyond the rank left
	} {
		if got := mergeAxes(c.outer, c.inner, c.rank); !slices.Equal(got, c.want) {
			t.Errorf("mergeAxes(%v, %v, %d) = %v, want %v", c.outer, c.inner, c.rank, got, c.want)
		}
	}
}
