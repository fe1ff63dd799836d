package lsp

import (
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
