package lsp

import (
	"testing"

	"github.com/hydra-lsp/hydra/checkers/lang"
)

func TestPreambleOf(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"includes then code", "#include <vector>\n// c\n#include <map>\nint x;\n", "#include <vector>\n// c\n#include <map>\n"},
		{"block comment and defines", "/* a\n b */\n#include <cstdio>\n#define N 10\nint main(){}\n", "/* a\n b */\n#include <cstdio>\n#define N 10\n"},
		{"stops before an open #if", "#include <cstdio>\n#ifdef X\n#include <y>\nint a;\n#endif\n", "#include <cstdio>\n"},
		{"closed #if is kept", "#include <cstdio>\n#if 1\n#include <map>\n#endif\nint a;\n", "#include <cstdio>\n#if 1\n#include <map>\n#endif\n"},
		{"continuation line", "#include <cstdio>\n#define F(x) \\\n  (x)\nint a;\n", "#include <cstdio>\n#define F(x) \\\n  (x)\n"},
		{"no include: nothing to warm", "#define N 1\nint a;\n", ""},
		{"unfinished last line excluded", "#include <cstdio>\n#include <map>", "#include <cstdio>\n"},
		{"pragma once is a directive like the others (the checker blanks it)", "#include <cstdio>\n#pragma once\n#include <map>\nint a;\n", "#include <cstdio>\n#pragma once\n#include <map>\n"},
		{"after a byte order mark", "\xEF\xBB\xBF#include <cstdio>\nint a;\n", "\xEF\xBB\xBF#include <cstdio>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := preambleOf(tt.text, lang.C.Syntax(nil, "")); got != tt.want {
				t.Fatalf("preambleOf = %q, want %q", got, tt.want)
			}
		})
	}
}
