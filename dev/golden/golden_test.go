package golden

import "testing"

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"x\ny\nz", "x\ny\nz", 3},
		{"x\ny\nz", "x\nY\nz", 1},
		{"x\ny", "x\ny\nz", 2},
		{"x\ny\nz", "x", 1},
	} {
		if got := firstDiff([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("firstDiff(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
