// Package textops holds the small text functions several packages need: the common prefix of two
// texts, the line of a byte offset, and a message's first line.
package textops

import (
	"strings"
	"unicode/utf8"
)

// CommonPrefix is the length in bytes of the longest common prefix of a and b, backed off to a
// rune boundary of both (so a[:n] and b[:n] are whole UTF-8 text when a and b are).
func CommonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	for i > 0 && ((i < len(a) && !utf8.RuneStart(a[i])) || (i < len(b) && !utf8.RuneStart(b[i]))) {
		i--
	}
	return i
}

// LineOf is the 1-based line of byte offset off in text; off is clamped to [0, len(text)].
func LineOf(text string, off int) int {
	off = min(max(off, 0), len(text))
	return strings.Count(text[:off], "\n") + 1
}

// FirstLine is the first line of s once leading and trailing space is trimmed (a short form of
// a multi-line message).
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
