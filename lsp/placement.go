package lsp

import (
	"strings"

	"github.com/hydra-lsp/hydra/checkers/lang"
)

// This file is the one rule for where hydra.generate puts generated code, the same for every
// client (docs/lsp.md, "Where the code goes"). Generation never splits a line: from any cursor
// position on a line that opens a body (a signature or `for (…) {`, a lone `{`), on a comment,
// on a closing `}`, at the end of or inside a statement, the code goes after that line; on a blank
// line it goes on that line; before the first character of any other line, it goes before that
// line. Only
// inline completion continues mid-line (placeAtCursor).

// placement is where a generation writes and how the region looks around it.
type placement struct {
	// off is the byte offset of the insertion point in the document.
	off int
	// lead goes before the generated text and is part of the checked prefix: a line break
	// when the document's last line has none, a blank line before a new top-level definition
	// that follows a closing brace.
	lead string
	// orig is the document text the region covers before anything is generated: blank lines
	// between the insertion point and a closing `}`, so that the code replaces them instead of
	// leaving a blank line before the brace. It comes back if nothing is accepted.
	orig string
	// pad asks for a blank line after the accepted text when it ends a top-level definition
	// and code follows directly (a blank line between a new function and the next one).
	pad bool
	// closeFollows: a closing `}` follows the region; blank lines the model left at the end
	// of its text are dropped.
	closeFollows bool
}

// lineBounds returns the start of off's line and the end of its text (before the '\n').
func lineBounds(text string, off int) (int, int) {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	end := len(text)
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		end = off + i
	}
	return start, end
}

// placeGenerate applies the rule for hydra.generate at byte offset off. rangeEnd says off is
// the end of a selection: a selection that ends at the start of a line ends on the line before.
// syn is the document's language's lexical structure (checkers/lang).
func placeGenerate(text string, off int, rangeEnd bool, syn lang.Syntax) placement {
	if rangeEnd && off > 0 && text[off-1] == '\n' {
		off--
	}
	lineStart, lineEnd := lineBounds(text, off)
	var p placement
	line := text[lineStart:lineEnd]
	blank := strings.TrimSpace(line) == ""
	switch {
	case blank:
		p.off = lineStart // a blank line: write on it
	case strings.TrimSpace(text[lineStart:off]) == "" && !opensBody(line) && !isComment(line) &&
		!strings.HasPrefix(strings.TrimSpace(line), "}"):
		p.off = lineStart // the start of a statement or declaration: write before it
	case lineEnd < len(text):
		p.off = lineEnd + 1 // after the cursor's line, however far into it the cursor is
	default:
		p.off, p.lead = lineEnd, "\n" // the last line has no line break
	}
	// Inside a block comment (a line of a /* … */ instruction), the code goes after the comment.
	for p.lead == "" && p.off < len(text) && syn.InCommentOrLiteral(text[:p.off]) {
		_, le := lineBounds(text, p.off)
		if le == len(text) {
			p.off, p.lead = le, "\n"
			break
		}
		p.off = le + 1
	}
	// Blank lines from the insertion point up to a closing brace are taken over by the
	// generated code (no blank line is left before an existing `}`).
	end := p.off
	for end < len(text) {
		ls, le := lineBounds(text, end)
		if ls != end || strings.TrimSpace(text[ls:le]) != "" {
			break
		}
		if le == len(text) {
			end = le
			break
		}
		end = le + 1
	}
	p.closeFollows = strings.HasPrefix(strings.TrimSpace(text[end:]), "}")
	if end > p.off && end < len(text) && p.closeFollows {
		p.orig = text[p.off:end]
	}
	depth := syn.BraceDepth(text[:p.off])
	if depth == 0 {
		prevEnd := p.off // the line just before the insertion point ends here
		if p.lead == "" && prevEnd > 0 {
			prevEnd-- // its '\n'
		}
		prev := strings.TrimSpace(text[strings.LastIndexByte(text[:prevEnd], '\n')+1 : prevEnd])
		if strings.HasSuffix(prev, "}") || strings.HasSuffix(prev, "};") {
			p.lead += "\n" // a new definition right after a closing brace: a blank line between
		}
		rest := text[p.off+len(p.orig):]
		first := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			first = rest[:i]
		}
		p.pad = strings.TrimSpace(first) != ""
	}
	return p
}

// opensBody says whether a line's code ends with `{` (a signature, `for (…) {`, a lone `{`).
func opensBody(line string) bool {
	if i := strings.Index(line, "//"); i >= 0 {
		line = line[:i]
	}
	return strings.HasSuffix(strings.TrimSpace(line), "{")
}

// isComment says whether a line is only a comment (an instruction the code follows).
func isComment(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
}

// placeAtCursor is inline completion's placement: exactly at the cursor, on a new line when
// the cursor ends a line of code.
func placeAtCursor(text string, off int) placement {
	if endOfCodeLine(text, off) {
		return placement{off: off, lead: "\n"}
	}
	return placement{off: off}
}

// endOfCodeLine says whether off ends a line that has code before it and none after it.
func endOfCodeLine(text string, off int) bool {
	lineStart, lineEnd := lineBounds(text, off)
	return strings.TrimSpace(text[off:lineEnd]) == "" && strings.TrimSpace(text[lineStart:off]) != ""
}

// padded is the final text of a generation: the accepted text without blank lines at its end
// when a `}` follows, with a blank line after it when the placement asks for one and the text
// ends a top-level definition.
func (p placement) padded(accepted string) string {
	if p.closeFollows {
		// No blank line before the existing `}`.
		for strings.HasSuffix(accepted, "\n") {
			body := accepted[:len(accepted)-1]
			last := body[strings.LastIndexByte(body, '\n')+1:]
			if strings.TrimSpace(last) != "" || len(body) == 0 {
				break
			}
			accepted = body[:len(body)-len(last)]
		}
	}
	if !p.pad || !strings.HasSuffix(accepted, "\n") {
		return accepted
	}
	last := strings.TrimSpace(accepted[strings.LastIndexByte(accepted[:len(accepted)-1], '\n')+1:])
	if last == "}" || last == "};" {
		return accepted + "\n"
	}
	return accepted
}
