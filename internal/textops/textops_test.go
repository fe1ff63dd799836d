package textops

import "testing"

func TestCommonPrefix(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "x", 0}, {"abc", "abd", 2}, {"abc", "abc", 3}, {"ab", "abc", 2}, {"é", "è", 0}, {"xé", "xè", 1}} {
		if got := CommonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("CommonPrefix(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestLineOfClamps(t *testing.T) {
	text := "a\nb\nc"
	for _, tc := range []struct{ off, want int }{{-3, 1}, {0, 1}, {1, 1}, {2, 2}, {4, 3}, {99, 3}} {
		if got := LineOf(text, tc.off); got != tc.want {
			t.Errorf("LineOf(%d) = %d, want %d", tc.off, got, tc.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	if got := FirstLine("\n  error: x\nnote: y\n"); got != "error: x" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := FirstLine("one"); got != "one" {
		t.Errorf("FirstLine = %q", got)
	}
}
