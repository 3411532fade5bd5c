package facts

import "testing"

func TestFormatShape(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		want  string
	}{
		{nil, "()"},
		{[]int{}, "()"},
		{[]int{5}, "(5,)"},
		{[]int{712, 8}, "(712, 8)"},
		{[]int{2, 3, 224, 224}, "(2, 3, 224, 224)"},
		{[]int{-1, 10}, "(?, 10)"},
		{[]int{-1}, "(?,)"},
		{[]int{0, 3}, "(0, 3)"},
	} {
		if got := FormatShape(tc.shape); got != tc.want {
			t.Errorf("FormatShape(%v) = %q, want %q", tc.shape, got, tc.want)
		}
	}
}
