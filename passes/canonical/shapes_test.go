package canonical

import (
	"reflect"
	"testing"
)

// TestShapeSlice: Shape's start/end attributes as the op reads them.
func TestShapeSlice(t *testing.T) {
	dims := []int64{2, 3, 5, 7}
	cases := []struct {
		start, end int64
		want       []int64
	}{
		{0, 4, []int64{2, 3, 5, 7}},
		{1, 3, []int64{3, 5}},
		{-2, 4, []int64{5, 7}},
		{0, -1, []int64{2, 3, 5}},
		{-9, 99, []int64{2, 3, 5, 7}}, // clamped
		{3, 1, []int64{}},             // empty, not reversed
	}
	for _, tc := range cases {
		got := shapeSlice(dims, tc.start, tc.end)
		if len(got) != len(tc.want) || len(got) > 0 && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("shapeSlice(%d, %d) = %v, want %v", tc.start, tc.end, got, tc.want)
		}
	}
}
