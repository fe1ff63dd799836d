// Package chunk cuts streamed C/C++ text into chunks that a checker session can take: one or
// more complete lines, ending only where the lexer state is clean (checkers/clang/README.md). A chunk never
// ends inside a block comment, a raw string, a string or character literal continued by a
// backslash, a backslash continuation, an open #if/#ifdef/#ifndef … #endif, nor right after an
// identifier that the next line might call as a function-like macro (clang does not look past
// the end of a file for a macro's '(').
//
// Call New, feed text in arbitrary pieces (model tokens) with Write, and submit the chunks it
// returns in order; Flush at the end of input returns what is left, clean or not. Each chunk
// carries a boundary category (checkers.Boundary*) and says whether the preamble (the leading
// block of preprocessor lines) ended with it, so that the caller can checkpoint there.
package chunk

import (
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
)

// Chunk is one piece of text ready to submit.
type Chunk struct {
	// Text is one or more complete lines (the last one may lack its newline after Flush).
	Text string
	// Off is the byte offset of Text in the whole stream fed to the Chunker.
	Off int
	// Cat is the boundary category the chunk ends on (checkers.BoundaryPreamble, …Decl,
	// …Stmt or …Line).
	Cat string
	// PreambleEnd is set on the chunk that ends the preamble: the last chunk of the leading
	// preprocessor block when the first code line follows it (or input ends).
	PreambleEnd bool
	// Unclean is set only on a chunk emitted by Flush whose end is not a clean cut (an
	// unterminated comment, an open #if, …); the checker will diagnose it.
	Unclean bool
	// Depth is the brace depth at the chunk's end, as Chunker.Depth counts it (from the start
	// of the prefix a Chunker made by NewAfter continues).
	Depth int
}

// End returns the offset just past the chunk.
func (c Chunk) End() int { return c.Off + len(c.Text) }

// rawChunk is a clean cut found by the line stage, before the preamble stage.
type rawChunk struct {
	text      string
	off       int
	hasCode   bool // a non-directive token
	directive bool // a directive line
	lastTok   byte // the chunk's last token
	depth     int  // brace depth at its end
	unclean   bool
}

// Chunker cuts a stream of text into chunks. It is not safe for concurrent use.
type Chunker struct {
	lx lexer

	partial string          // text after the last newline
	group   strings.Builder // complete physical lines that end in a splice, not yet lexed
	off     int             // stream offset of the first pending byte
	lastOff int             // stream offset of the last group lexed

	// The line stage: lines not yet cut.
	pending strings.Builder
	pend    rawChunk
	// holdIdent: the pending text is clean but its last token is an identifier or ')'; it
	// waits for the next line with tokens to show whether that starts with '('.
	holdIdent bool
	// holdClean: how much of the pending text was clean at its end last, while holdIdent: where
	// to cut when the wait ends (a comment that opened after the identifier may close on the
	// line that ends it).
	holdClean int

	// The preamble stage.
	inPreamble bool
	held       []rawChunk // preamble chunks not yet emitted (see push)
	out        []Chunk
}

// New returns a Chunker for text lexed with opts.
func New(opts Options) *Chunker {
	return &Chunker{lx: newLexer(opts), inPreamble: true}
}

// NewAfter returns a Chunker for text that continues prefix, which must end where the lexer
// state is clean (as every chunk boundary does). Its brace depth starts at prefix's, so the
// boundary categories of text that starts inside a block (a rollout resumed in a function body)
// say stmt, not decl.
func NewAfter(opts Options, prefix string) *Chunker {
	c := New(opts)
	c.lx.depth = BraceDepth(prefix, opts)
	return c
}

// Depth returns the brace depth ('{' minus '}') outside comments, literals and preprocessor
// directives over the complete lines written so far. It may be negative when the stream
// starts inside a block.
func (c *Chunker) Depth() int { return c.lx.depth }

// Offset returns the number of bytes written so far.
func (c *Chunker) Offset() int { return c.off + c.pending.Len() + c.group.Len() + len(c.partial) }

// ClosingBrace returns the stream offset (as Offset counts) of the first '}' in the last
// group of lines lexed (the last complete line written, with the lines spliced before it) that
// took the brace depth below d, or -1 when none did.
func (c *Chunker) ClosingBrace(d int) int {
	for _, cl := range c.lx.closes {
		if cl.depth < d {
			return c.lastOff + cl.pos
		}
	}
	return -1
}

// Closable returns the text written since the last chunk Write returned (its complete, lexed
// lines; the held preamble chunks included) as one chunk, and the text that closes what keeps
// it from being cut: an "#endif" line for each conditional open in it. The chunk's text with
// the closer appended ends at a clean cut, so a checker can take it now, in a throw-away
// continuation, and say whether the lines so far compile (engine/probe.go) while the real cut
// waits for the `#endif`. Closing a conditional early tells the truth about the lines in it: a
// skipped branch (#if 0) stays skipped and is accepted, as Clang accepts it; #else and #elif
// change no depth. ok is false when nothing is held, or when something other than open
// conditionals keeps the text from being cut (a comment, a literal, a splice, a directive not
// ended, a pragma region): no closer is known for those.
func (c *Chunker) Closable() (held Chunk, closer string, ok bool) {
	lx := &c.lx
	if c.pending.Len() == 0 || lx.ifDepth == 0 || lx.mode != modeCode || lx.continued || lx.dir != dirNone || lx.nonnull || lx.audited {
		return Chunk{}, "", false
	}
	var b strings.Builder
	off := c.pend.off
	for i, h := range c.held {
		if i == 0 {
			off = h.off
		}
		b.WriteString(h.text)
	}
	b.WriteString(c.pending.String())
	held = Chunk{Text: b.String(), Off: off, Cat: category(c.pend), Depth: c.pend.depth}
	return held, strings.Repeat("#endif\n", lx.ifDepth), true
}

// Write feeds more text and returns the chunks that became complete, in order.
func (c *Chunker) Write(text string) []Chunk {
	c.partial += text
	for {
		k := strings.IndexByte(c.partial, '\n')
		if k < 0 {
			break
		}
		line := c.partial[:k+1]
		c.partial = c.partial[k+1:]
		if c.lx.endsWithSplice(line) {
			c.group.WriteString(line) // the next line continues this one: lex them together
			continue
		}
		c.addGroup(line)
	}
	out := c.out
	c.out = nil
	return out
}

// Flush ends the input: it returns every chunk still held, including an unclean tail
// (Unclean set) and a last line without a newline. The Chunker can be used again afterwards
// as if a fresh stream continued at the same offset.
func (c *Chunker) Flush() []Chunk {
	if c.partial != "" || c.group.Len() > 0 {
		line := c.partial
		c.partial = ""
		c.addGroup(line)
	}
	if c.pending.Len() > 0 {
		c.pend.unclean = !c.lx.clean()
		c.cut()
	}
	c.holdIdent = false
	c.flushHeld(true)
	out := c.out
	c.out = nil
	return out
}

// addGroup is the line stage: it decides, group by group (a physical line and the lines
// spliced before it), where clean cuts are.
func (c *Chunker) addGroup(last string) {
	line := last
	if c.group.Len() > 0 {
		c.group.WriteString(last)
		line = c.group.String()
		c.group.Reset()
	}
	c.lastOff = c.off + c.pending.Len()
	info := c.lx.line(line)
	if c.holdIdent && info.hasTokens {
		c.holdIdent = false
		if info.firstTok != '(' {
			c.cutAt(c.holdClean) // the held identifier is not a macro call across the cut
		}
	}
	if c.pending.Len() == 0 {
		c.pend = rawChunk{off: c.off}
	}
	c.pending.WriteString(line)
	if info.hasCode {
		c.pend.hasCode = true
	}
	if info.isDirective {
		c.pend.directive = true
	}
	if info.hasTokens {
		c.pend.lastTok = info.lastTok
	}
	c.pend.depth = c.lx.depth
	switch {
	case !info.clean:
	case info.hasTokens && info.lastHold:
		c.holdIdent = true
		c.holdClean = c.pending.Len()
	case c.holdIdent:
		// A blank or comment-only line after a held identifier: keep waiting.
		c.holdClean = c.pending.Len()
	default:
		c.cut()
	}
}

// cutAt cuts the pending text after its first n bytes (all of it when n reaches its end). The
// rest stays pending as a raw chunk of its own: lines that only continue a comment, so without
// code, directive or token.
func (c *Chunker) cutAt(n int) {
	text := c.pending.String()
	if n <= 0 || n >= len(text) {
		c.cut()
		return
	}
	depth := c.pend.depth
	c.pending.Reset()
	c.pending.WriteString(text[:n])
	c.cut()
	c.pending.WriteString(text[n:])
	c.pend = rawChunk{off: c.off, depth: depth}
}

// cut ends the pending raw chunk and hands it to the preamble stage.
func (c *Chunker) cut() {
	if c.pending.Len() == 0 {
		return
	}
	rc := c.pend
	rc.text = c.pending.String()
	c.pending.Reset()
	c.off = rc.off + len(rc.text)
	c.push(rc)
}

// push is the preamble stage. While no code has been seen, chunks are held back: a chunk with
// a directive is emitted only when the next directive shows that the preamble goes on, so that
// the last directive chunk can carry PreambleEnd when code follows. Comment-only chunks after
// the last directive join the code that follows them, not the preamble.
func (c *Chunker) push(rc rawChunk) {
	if !c.inPreamble {
		c.emit(rc, false)
		return
	}
	switch {
	case !rc.hasCode && rc.directive:
		c.flushHeld(false)
		c.held = append(c.held, rc)
	case !rc.hasCode:
		c.held = append(c.held, rc)
	default:
		c.inPreamble = false
		c.flushHeld(true)
		c.emit(rc, false)
	}
}

// flushHeld emits the held preamble chunks. With end set the preamble is over: the last held
// directive chunk gets PreambleEnd and the comment chunks after it are ordinary lines.
func (c *Chunker) flushHeld(end bool) {
	last := -1
	for i, h := range c.held {
		if h.directive {
			last = i
		}
	}
	for i, h := range c.held {
		switch {
		case last < 0 && end:
			c.emit(h, false) // no preamble at all: comments before the first code
		case i <= last || !end:
			c.emitCat(h, checkers.BoundaryPreamble, end && i == last)
		default:
			c.emit(h, false)
		}
	}
	c.held = c.held[:0]
	if end {
		c.inPreamble = false
	}
}

func (c *Chunker) emit(rc rawChunk, preambleEnd bool) {
	c.emitCat(rc, category(rc), preambleEnd)
}

func (c *Chunker) emitCat(rc rawChunk, cat string, preambleEnd bool) {
	c.out = append(c.out, Chunk{Text: rc.text, Off: rc.off, Cat: cat, PreambleEnd: preambleEnd, Unclean: rc.unclean, Depth: rc.depth})
}

// category classifies the boundary a chunk ends on.
func category(rc rawChunk) string {
	if rc.lastTok == ';' || rc.lastTok == '}' {
		if rc.depth <= 0 {
			return checkers.BoundaryDecl
		}
		return checkers.BoundaryStmt
	}
	return checkers.BoundaryLine
}

// Split cuts a whole text the way a Chunker fed with it would (Write then Flush).
func Split(text string, opts Options) []Chunk {
	c := New(opts)
	out := c.Write(text)
	return append(out, c.Flush()...)
}

// PreambleEnd returns the offset just past the preamble of text: the leading block of
// preprocessor directives (with the comments and blank lines among them), ending at the end
// of its last directive line. It returns 0 when text does not start with such a block.
func PreambleEnd(text string, opts Options) int {
	for _, ch := range Split(text, opts) {
		if ch.PreambleEnd {
			return ch.End()
		}
		if ch.Cat != checkers.BoundaryPreamble {
			break
		}
	}
	return 0
}

// BraceDepth returns the brace depth at the end of text, counted as Chunker.Depth counts it.
func BraceDepth(text string, opts Options) int {
	c := New(opts)
	c.Write(text)
	c.Flush()
	return c.Depth()
}
