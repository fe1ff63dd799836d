package lang

import (
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
)

// MaxChunks bounds how many chunks a whole text already at hand (a file that hydra check
// streams, a document's prefix) is submitted in. Clang keeps about 400 bytes for every chunk it
// has entered (a source-location entry, a content cache, a memory buffer, a line-table entry
// and a diagnostic-state entry: checkers/clang/README.md), so a million-line file cut line by
// line would need about twice clang's own memory; at most this many chunks cost Clang under
// 30 MB. Text a model streams is never merged: it is checked as it comes.
const MaxChunks = 1 << 16

// MergeMin returns the piece size that keeps a text of n bytes within MaxChunks pieces:
// 0 (nothing merged) for texts of less than MaxChunks bytes.
func MergeMin(n int) int { return n / MaxChunks }

// Merger joins consecutive chunks into pieces of at least Min bytes. A piece ends where its
// last chunk ended, so it ends on a clean cut and carries that chunk's category, depth and
// flags. The chunk that ends the preamble, a preamble chunk and an unclean chunk always end
// their piece: the preamble's checkpoint stays where it was, and an unclean tail stays last.
// The zero Merger (Min 0) passes every chunk through as it is.
type Merger struct {
	// Min is the least size of a piece, in bytes.
	Min int

	text strings.Builder
	cur  Chunk
}

// Add takes the next chunk and returns the piece it completed, if any.
func (m *Merger) Add(c Chunk) (Chunk, bool) {
	if m.text.Len() == 0 {
		if m.keep(c, len(c.Text)) {
			return c, true
		}
		m.cur = c
		m.text.WriteString(c.Text)
		return Chunk{}, false
	}
	m.text.WriteString(c.Text)
	off := m.cur.Off
	m.cur = c
	m.cur.Off = off
	if !m.keep(c, m.text.Len()) {
		return Chunk{}, false
	}
	return m.Flush()
}

// keep reports whether a piece of size n that ends with c is complete.
func (m *Merger) keep(c Chunk, n int) bool {
	return n >= m.Min || c.PreambleEnd || c.Unclean || c.Cat == checkers.BoundaryPreamble
}

// Flush returns the piece still held, if any.
func (m *Merger) Flush() (Chunk, bool) {
	if m.text.Len() == 0 {
		return Chunk{}, false
	}
	c := m.cur
	c.Text = m.text.String()
	m.text.Reset()
	m.cur = Chunk{}
	return c, true
}

// Merge joins chs, consecutive chunks of one text, into pieces of at least min bytes, as a
// Merger does, and returns them all (the last piece may be shorter).
func Merge(chs []Chunk, min int) []Chunk {
	if min <= 1 {
		return chs
	}
	m := Merger{Min: min}
	var out []Chunk
	for _, c := range chs {
		if p, ok := m.Add(c); ok {
			out = append(out, p)
		}
	}
	if p, ok := m.Flush(); ok {
		out = append(out, p)
	}
	return out
}
