package lsp

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hydra-lsp/hydra/internal/textops"
)

// This file is the edit arithmetic of the server, as pure functions over strings and byte
// offsets: position conversion, applying the client's changes, trimming a change to what it
// really changed, rebasing a generated region over a change, and the edit that turns the text
// shown so far into the text accepted now.

// posEncoding is how Position.Character counts.
type posEncoding int

const (
	encUTF16 posEncoding = iota // the LSP default
	encUTF8
)

func (e posEncoding) String() string {
	if e == encUTF8 {
		return "utf-8"
	}
	return "utf-16"
}

// negotiateEncoding picks utf-8 when the client offers it, else utf-16.
func negotiateEncoding(offered []string) posEncoding {
	for _, e := range offered {
		if e == "utf-8" {
			return encUTF8
		}
	}
	return encUTF16
}

// offsetAt converts p to a byte offset in text. A character past the end of its line means the
// end of the line, a line past the end means the end of the text (as the LSP asks); a position
// inside a UTF-16 surrogate pair or a UTF-8 sequence is an error.
func offsetAt(text string, p Position, enc posEncoding) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("negative position %d:%d", p.Line, p.Character)
	}
	off := 0
	for l := 0; l < p.Line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text), nil
		}
		off += i + 1
	}
	lineEnd := len(text)
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		lineEnd = off + i
	}
	line := text[off:lineEnd]
	if enc == encUTF8 {
		if p.Character >= len(line) {
			return lineEnd, nil
		}
		if !utf8.RuneStart(line[p.Character]) {
			return 0, fmt.Errorf("position %d:%d splits a UTF-8 sequence", p.Line, p.Character)
		}
		return off + p.Character, nil
	}
	units := 0
	for i, r := range line {
		if units >= p.Character {
			if units > p.Character {
				return 0, fmt.Errorf("position %d:%d splits a UTF-16 surrogate pair", p.Line, p.Character)
			}
			return off + i, nil
		}
		units += utf16.RuneLen(r)
	}
	if units > p.Character {
		return 0, fmt.Errorf("position %d:%d splits a UTF-16 surrogate pair", p.Line, p.Character)
	}
	return lineEnd, nil
}

// positionAt converts a byte offset in text to a Position. An offset inside a UTF-8 sequence
// is moved back to the sequence's start.
func positionAt(text string, off int, enc posEncoding) Position {
	if off > len(text) {
		off = len(text)
	}
	if off < 0 {
		off = 0
	}
	for off > 0 && off < len(text) && !utf8.RuneStart(text[off]) {
		off--
	}
	lineStart := strings.LastIndexByte(text[:off], '\n') + 1
	line := strings.Count(text[:lineStart], "\n")
	seg := text[lineStart:off]
	if enc == encUTF8 {
		return Position{Line: line, Character: len(seg)}
	}
	units := 0
	for _, r := range seg {
		units += utf16.RuneLen(r)
	}
	return Position{Line: line, Character: units}
}

// rangeAt converts a byte span to a Range.
func rangeAt(text string, start, end int, enc posEncoding) Range {
	return Range{Start: positionAt(text, start, enc), End: positionAt(text, end, enc)}
}

// change is a resolved content change: the bytes old[Start:End] were replaced by Text.
type change struct {
	Start, End int
	Text       string
}

// applyChange applies one LSP content change to text and returns the new text and the change
// in byte offsets of the old text. A change without a range replaces the whole text.
func applyChange(text string, c TextDocumentContentChangeEvent, enc posEncoding) (string, change, error) {
	if c.Range == nil {
		return c.Text, change{Start: 0, End: len(text), Text: c.Text}, nil
	}
	start, err := offsetAt(text, c.Range.Start, enc)
	if err != nil {
		return text, change{}, fmt.Errorf("change start: %w", err)
	}
	end, err := offsetAt(text, c.Range.End, enc)
	if err != nil {
		return text, change{}, fmt.Errorf("change end: %w", err)
	}
	if end < start {
		return text, change{}, fmt.Errorf("change range %d:%d-%d:%d ends before it starts",
			c.Range.Start.Line, c.Range.Start.Character, c.Range.End.Line, c.Range.End.Character)
	}
	return text[:start] + c.Text + text[end:], change{Start: start, End: end, Text: c.Text}, nil
}

// trim shrinks c to what it really changes in old: clients such as Neovim report whole lines,
// full-sync clients the whole text. Common leading and trailing bytes of the replaced span
// and the new text are dropped (on rune boundaries).
func (c change) trim(old string) change {
	del := old[c.Start:c.End]
	p := textops.CommonPrefix(del, c.Text)
	del, ins := del[p:], c.Text[p:]
	q := commonSuffix(del, ins)
	return change{Start: c.Start + p, End: c.End - q, Text: ins[:len(ins)-q]}
}

// commonSuffix is the length of the longest common suffix of a and b, on a rune boundary.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	for i > 0 && (!utf8.RuneStart(a[len(a)-i]) || !utf8.RuneStart(b[len(b)-i])) {
		i--
	}
	return i
}

// relation is where a change lies relative to a generated region.
type relation int

const (
	changeBefore relation = iota // entirely before the region: the region moves
	changeAfter                  // entirely after the region: nothing moves
	changeInside                 // touches the region's text: the user edited generated code
)

// relate says where the (trimmed) change c lies relative to the region [start, end).
// A change that ends at start (typing just before the region) is before it, one that starts
// at end (typing just after it) is after it.
func relate(c change, start, end int) relation {
	switch {
	case c.End <= start:
		return changeBefore
	case c.Start >= end:
		return changeAfter
	default:
		return changeInside
	}
}

// relateUser is relate for a change the user made while a generation writes the region
// [start, end): typing at the region's start that does not end a line would join the region's
// first generated line, so it counts as inside; at the start of a region that holds nothing
// yet, it stays after the region (the generated lines go before it and the user's text keeps
// its own line).
func relateUser(c change, start, end int) relation {
	if c.Start == start && c.End == start && c.Text != "" {
		switch {
		case start == end:
			return changeAfter
		case !strings.HasSuffix(c.Text, "\n"):
			return changeInside
		}
	}
	return relate(c, start, end)
}

// shift is how far c moves text that lies after it.
func (c change) shift() int { return len(c.Text) - (c.End - c.Start) }

// transition is the edit that turns the region's text from shown into target, relative to the
// region's start: shown[Keep:] is replaced by target[Keep:]. Only the differing tail is
// rewritten, so a rollback deletes exactly the text past the rollback point and growth only
// appends.
type transition struct {
	Keep int    // bytes of shown that stay
	Del  string // shown[Keep:], removed
	Ins  string // target[Keep:], inserted
}

// diffTail computes the transition from shown to target.
func diffTail(shown, target string) transition {
	k := textops.CommonPrefix(shown, target)
	return transition{Keep: k, Del: shown[k:], Ins: target[k:]}
}

// empty says whether the transition changes nothing.
func (t transition) empty() bool { return t.Del == "" && t.Ins == "" }

// offLastLine re-expresses an edit of text[from:to] → ins that reaches the end of a text ending
// in '\n' so that it touches no position past the last line: the same result, made one byte
// earlier (before the final line break). LSP allows the position after the last '\n', but
// Neovim's apply_text_edits (0.7 to 0.10) moves such a position to the end of the last line and
// adds a line break of its own, which doubles line breaks, so the server never recognised its
// own edit and sent it again (a body pasted six times at the end of a buffer).
func offLastLine(text string, from, to int, ins string) (int, int, string) {
	n := len(text)
	if to != n || from == 0 || n == 0 || text[n-1] != '\n' || text[from-1] != '\n' {
		return from, to, ins
	}
	if ins == "" {
		return from - 1, to - 1, ""
	}
	if !strings.HasSuffix(ins, "\n") {
		return from, to, ins
	}
	return from - 1, to - 1, "\n" + ins[:len(ins)-1]
}
