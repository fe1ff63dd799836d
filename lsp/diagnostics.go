package lsp

import (
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/engine"
)

// mapDiagnostics turns the failed search's errors into diagnostics on the document as it is
// now. Checker offsets are in the checked text, prefix + best attempt + suffix; the document
// holds prefix, then the region (start, shown: what was accepted and written), then suffix.
// An error in the part of the best attempt that was never written is put at the region's end.
func mapDiagnostics(text string, enc posEncoding, res *engine.Result, g *generation, start int, shown string) []Diagnostic {
	var out []Diagnostic
	bestEnd := len(g.prefix) + len(res.Text)
	regionBase := g.place.off // checked offset of the region's first byte
	for _, ev := range res.Diagnostics {
		if ev.Kind != "" && ev.Kind != checkers.KindError {
			continue
		}
		var off int
		switch o := ev.Off; {
		case o < regionBase:
			off = min(o, start)
		case o < bestEnd:
			off = start + min(o-regionBase, len(shown))
		default:
			off = start + len(shown) + (o - bestEnd)
		}
		off = max(0, min(off, len(text)))
		end := tokenEnd(text, off)
		out = append(out, Diagnostic{
			Range:    rangeAt(text, off, end, enc),
			Severity: SeverityError,
			Code:     ev.Cat,
			Source:   "hydra",
			Message:  ev.Diag,
		})
	}
	return out
}

// tokenEnd extends a diagnostic at off over the identifier there (or one byte), within the line.
func tokenEnd(text string, off int) int {
	end := off
	for end < len(text) && isIdentByte(text[end]) {
		end++
	}
	if end == off && off < len(text) && text[off] != '\n' {
		end++
	}
	return end
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// hydraDiag is a published Hydra diagnostic, kept as byte offsets so that it can follow the
// document's changes.
type hydraDiag struct {
	start, end int
	d          Diagnostic
}

// setDiagsLocked (s.mu held) records the diagnostics just published for d, in d.text.
func (s *Server) setDiagsLocked(d *document, diags []Diagnostic) {
	d.diags = d.diags[:0]
	for _, x := range diags {
		st, err1 := offsetAt(d.text, x.Range.Start, s.enc)
		en, err2 := offsetAt(d.text, x.Range.End, s.enc)
		if err1 != nil || err2 != nil {
			continue
		}
		d.diags = append(d.diags, hydraDiag{start: st, end: en, d: x})
	}
}

// followDiagsLocked (s.mu held) moves d's Hydra diagnostics over a change old → c: a change
// that touches a diagnostic's lines clears it (the user is fixing it; the next generation
// reports again), one before it moves it. It reports whether any was cleared or moved.
func followDiagsLocked(d *document, old string, c change) bool {
	if len(d.diags) == 0 {
		return false
	}
	c = c.trim(old)
	if c.Start == c.End && c.Text == "" {
		return false
	}
	moved := false
	keep := d.diags[:0]
	for _, x := range d.diags {
		lineStart, _ := lineBounds(old, min(x.start, len(old)))
		_, lineEnd := lineBounds(old, min(x.end, len(old)))
		switch {
		case c.End < lineStart || (c.End == lineStart && (strings.HasSuffix(c.Text, "\n") ||
			(c.Text == "" && (c.Start == 0 || old[c.Start-1] == '\n')))):
			// Before its line, or whole lines inserted or deleted just above it.
			x.start += c.shift()
			x.end += c.shift()
			moved = moved || c.shift() != 0
			keep = append(keep, x)
		case c.Start > lineEnd:
			keep = append(keep, x)
		default:
			moved = true // on its lines: cleared
		}
	}
	d.diags = keep
	return moved
}

// diagsNowLocked (s.mu held) is d's Hydra diagnostics with ranges in d.text as it is now.
func (s *Server) diagsNowLocked(d *document) []Diagnostic {
	out := []Diagnostic{}
	for _, x := range d.diags {
		x.d.Range = rangeAt(d.text, x.start, x.end, s.enc)
		out = append(out, x.d)
	}
	return out
}
