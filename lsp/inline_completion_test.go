package lsp

import (
	"strings"
	"testing"
)

// An item that ends with a line break, accepted where nothing but blanks follows the cursor on
// a line with its own break, must not leave a blank line after the code: it drops the break and
// replaces the blank rest. Anywhere else it stays as it was.
func TestEndOnTheLine(t *testing.T) {
	const body = "  int total = 0;\n  return total;\n}\n"
	tests := []struct {
		name, text string // text: the document, with | at the cursor
		insert     string
		want       string
		wantRest   string // what the range replaces after the cursor
	}{
		{"an empty line with its own break", "int f() {\n|\n", body, strings.TrimSuffix(body, "\n"), ""},
		{"blanks after the cursor", "int f() {\n|  \t\nint g();\n", body, strings.TrimSuffix(body, "\n"), "  \t"},
		{"a CRLF line", "int f() {\r\n|  \r\n", "a;\r\nb;\r\n", "a;\r\nb;", "  "},
		{"a blank line between two definitions", "// acc\n|\nint main();\n", "struct A {};\n", "struct A {};", ""},
		{"text after the cursor", "int f() {\n|}\n", body, body, ""},
		{"the last line, without a break", "int f() {\n|", body, body, ""},
		{"the last line, blanks and no break", "int f() {\n|  ", body, body, ""},
		{"no final break in the item", "x;\n|\n", "y;", "y;", ""},
		{"nothing but a break", "x;\n|\n", "\n", "\n", ""},
		{"a continuation that starts a new line", "// two|\n", "\nint two();\n", "\nint two();", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off := strings.IndexByte(tt.text, '|')
			text := tt.text[:off] + tt.text[off+1:]
			got, end := endOnTheLine(text, off, tt.insert)
			if got != tt.want || text[off:end] != tt.wantRest {
				t.Fatalf("endOnTheLine = %q replacing %q, want %q replacing %q", got, text[off:end], tt.want, tt.wantRest)
			}
		})
	}
}
