package lsp

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/engine"
)

// mapDiagnostics turns the failed search's errors into diagnostics on the document as it is
// now. Checker offsets are in the checked text, prefix + best attempt + suffix; the document
// holds prefix, then the region (start, shown: what was accepted and written), then suffix.
// An error in the part of the best attempt that was never written is put at the region's end.
//
// The compiler's notes go into relatedInformation when the client shows it (related is true),
// else after the message, one paragraph each, as clangd does (clangd/Diagnostics.cpp,
// mainMessage with EmitRelatedLocations off).
func mapDiagnostics(text string, enc posEncoding, res *engine.Result, g *generation, start int, shown string, related bool) []Diagnostic {
	var out []Diagnostic
	bestEnd := len(g.prefix) + len(res.Text)
	regionBase := g.place.off // checked offset of the region's first byte
	docOff := func(o int) int {
		var off int
		switch {
		case o < regionBase:
			off = min(o, start)
		case o < bestEnd:
			off = start + min(o-regionBase, len(shown))
		default:
			off = start + len(shown) + (o - bestEnd)
		}
		return max(0, min(off, len(text)))
	}
	for _, ev := range res.Diagnostics {
		if ev.Kind != "" && ev.Kind != checkers.KindError {
			continue
		}
		off := docOff(ev.Off)
		d := Diagnostic{
			Range:    rangeAt(text, off, tokenEnd(text, off), enc),
			Severity: SeverityError,
			Code:     ev.Cat,
			Source:   "hydra",
			Message:  ev.Diag,
		}
		for _, n := range ev.Notes {
			if !related {
				d.Message += "\n\nnote: " + n.String()
				continue
			}
			loc := Location{URI: g.uri}
			if n.File != "" {
				// A header: its text is not at hand, so the column counts bytes.
				loc = Location{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(n.File)}).String()}
				p := Position{Line: max(n.Line-1, 0), Character: max(n.Col-1, 0)}
				loc.Range = Range{Start: p, End: p}
			} else {
				o := docOff(n.Off)
				loc.Range = rangeAt(text, o, tokenEnd(text, o), enc)
			}
			d.RelatedInformation = append(d.RelatedInformation, DiagnosticRelatedInformation{Location: loc, Message: n.Diag})
		}
		out = append(out, d)
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
