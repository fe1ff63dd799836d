package chunk

import "testing"

func TestInCommentOrLiteral(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"int x = 1;", false},
		{"int x = 1; // sum of", true},
		{"/* a\nblock ", true},
		{"/* a */ int y", false},
		{"puts(\"hello, ", true},
		{"puts(\"hello\"); ", false},
		{"char c = '", true},
		{"auto s = R\"(raw\nstill ", true},
		{"int f() {\n  return 1;\n", false},
		{"// done\n", false},
		{"#define X 1 // note", true},
	}
	for _, tt := range tests {
		if got := InCommentOrLiteral(tt.text, Options{}); got != tt.want {
			t.Errorf("InCommentOrLiteral(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
