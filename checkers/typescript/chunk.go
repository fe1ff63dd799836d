package typescript

import (
	"strings"

	"github.com/hydra-lsp/hydra/checkers/chunk"
)

// This file is how TypeScript text is cut for the checker and where generation stops (the
// language seam, checkers/lang): a line-grain cutter. The checker re-checks the whole text at
// every chunk and tells "unfinished" from "wrong" itself (judge in verdict.go), so any line end
// will do, except one inside a block comment, a template literal (its text or a `${…}` in it) or
// a string continued by a backslash, where a cut would end the text inside a token. The lexer
// follows TypeScript's scanner (src/compiler/scanner.ts in microsoft/TypeScript) as far as
// those need: strings, template literals with nested `${…}`, comments, and regular expression
// literals told from division by the token before the '/', and, in .tsx files, JSX: tags, their
// attribute strings and `{…}` expressions, and the text between them (jsx.go).

// lexMode is what the lexer is inside of.
type lexMode int

const (
	modeCode lexMode = iota
	modeLineComment
	modeBlockComment
	modeString   // a '…' or "…" literal (quote says which)
	modeTemplate // the text of a template literal
	modeRegex    // a regular expression literal
	modeJSXTag   // inside a JSX tag, `<name …` or `</name`, up to its '>'
	modeJSXText  // a JSX element's children: text up to a '{' or a '<'
	modeJSXAttr  // a JSX attribute string (quote says which): no escapes, line breaks allowed
)

// frame is an open bracket on the lexer's stack.
type frame uint8

const (
	frameBrace        frame = iota // a '{' of code: it counts in the brace depth
	frameTemplate                  // a template literal's `${`: its '}' goes back into the template's text
	frameJSXTagExpr                // a '{' in a JSX tag (an attribute's value, a spread): its '}' goes back into the tag
	frameJSXChildExpr              // a '{' among a JSX element's children: its '}' goes back to them
	frameJSXElement                // a JSX element or fragment whose children are being read
)

// closeAt is a '}' that closed a block, at byte pos of the line being lexed, and the brace
// depth after it.
type closeAt struct{ pos, depth int }

// lexer is TypeScript's lexical state across lines.
type lexer struct {
	mode  lexMode
	quote byte
	// stack holds the open brackets: code blocks, template literals' `${`, JSX elements and
	// their `{…}`. Only code blocks count in depth.
	stack []frame
	depth int
	// jsx: the text is TSX, where a '<' that starts an operand starts a JSX element.
	jsx bool
	// back is the mode a comment returns to (a JSX tag may hold comments); closing says the
	// JSX tag being read is a closing one (`</…>`); typeArgs counts the open '<' of type
	// arguments in a JSX tag (`<List<string> items={…}>`).
	back     lexMode
	closing  bool
	typeArgs int
	// paren counts the open '(' and '['; angles are the open '<' that may be type arguments,
	// each with the brace and bracket depth where it opened.
	paren  int
	angles []angleAt
	// prev is the class of the last code token, for telling a regular expression from a
	// division: 'a' an identifier, '0' a number, or the punctuator itself; 0 at the start.
	prev     byte
	prevWord string
	escaped  bool // a backslash was the last byte of a string, template or regex
	inClass  bool // inside [...] of a regular expression
	closes   []closeAt
	word     strings.Builder
}

// angleAt is a '<' after a name, which may open type arguments.
type angleAt struct{ brace, paren int }

// dropAngles lets go of the '<' opened inside a bracket that has closed.
func (lx *lexer) dropAngles() {
	for n := len(lx.angles); n > 0 && (lx.angles[n-1].brace > lx.depth || lx.angles[n-1].paren > lx.paren); n-- {
		lx.angles = lx.angles[:n-1]
	}
}

// clean reports whether a cut here ends the text between tokens, outside a template literal
// and outside what may be type arguments.
func (lx *lexer) clean() bool {
	switch lx.mode {
	case modeCode, modeLineComment, modeJSXTag, modeJSXText:
	default:
		return false
	}
	for _, f := range lx.stack {
		if f == frameTemplate {
			return false
		}
	}
	return len(lx.angles) == 0
}

// regexKeywords are the keywords after which a '/' starts a regular expression.
var regexKeywords = map[string]bool{"return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true, "extends": true}

// regexAllowed reports whether a '/' in code starts a regular expression literal.
func (lx *lexer) regexAllowed() bool {
	switch lx.prev {
	case 'a':
		return regexKeywords[lx.prevWord]
	case '0', ')', ']':
		return false
	}
	return true
}

func identByte(b byte) bool {
	return b == '_' || b == '$' || b >= 0x80 || (b|0x20 >= 'a' && b|0x20 <= 'z') || (b >= '0' && b <= '9')
}

// endWord ends the identifier or number being read, if any.
func (lx *lexer) endWord() {
	if lx.word.Len() == 0 {
		return
	}
	w := lx.word.String()
	lx.word.Reset()
	if w[0] >= '0' && w[0] <= '9' {
		lx.prev, lx.prevWord = '0', ""
	} else {
		lx.prev, lx.prevWord = 'a', w
	}
}

// scan lexes s, which continues everything lexed before. closes is reset to the '}' of s.
func (lx *lexer) scan(s string) {
	lx.closes = lx.closes[:0]
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch lx.mode {
		case modeLineComment:
			if b == '\n' || b == '\r' {
				lx.mode = lx.back
			}
		case modeBlockComment:
			if b == '*' && i+1 < len(s) && s[i+1] == '/' {
				lx.mode = lx.back
				i++
			}
		case modeJSXTag:
			i = lx.jsxTag(s, i)
		case modeJSXText:
			i = lx.jsxText(s, i)
		case modeJSXAttr:
			if b == lx.quote {
				lx.mode = modeJSXTag
			}
		case modeString, modeRegex:
			switch {
			case lx.escaped:
				lx.escaped = false
				if b == '\r' && i+1 < len(s) && s[i+1] == '\n' {
					i++
				}
			case b == '\\':
				lx.escaped = true
			case b == '\n' || b == '\r':
				lx.mode = modeCode // unterminated: the scanner ends the literal at the line's end
			case lx.mode == modeString && b == lx.quote:
				lx.mode, lx.prev = modeCode, '0'
			case lx.mode == modeRegex && b == '[':
				lx.inClass = true
			case lx.mode == modeRegex && b == ']':
				lx.inClass = false
			case lx.mode == modeRegex && b == '/' && !lx.inClass:
				lx.mode, lx.prev = modeCode, '0' // its flags lex as an identifier after it
			}
		case modeTemplate:
			switch {
			case lx.escaped:
				lx.escaped = false
			case b == '\\':
				lx.escaped = true
			case b == '`':
				lx.mode, lx.prev = modeCode, '0'
			case b == '$' && i+1 < len(s) && s[i+1] == '{':
				lx.mode = modeCode
				lx.stack = append(lx.stack, frameTemplate)
				lx.prev = '{'
				i++
			}
		default:
			if identByte(b) {
				lx.word.WriteByte(b)
				continue
			}
			lx.endWord()
			switch b {
			case ' ', '\t', '\n', '\r', '\f', '\v':
				continue
			case '/':
				switch {
				case i+1 < len(s) && s[i+1] == '/':
					lx.mode, lx.back = modeLineComment, modeCode
					i++
				case i+1 < len(s) && s[i+1] == '*':
					lx.mode, lx.back = modeBlockComment, modeCode
					i++
				case lx.regexAllowed():
					lx.mode, lx.inClass = modeRegex, false
				default:
					lx.prev = '/'
				}
				continue
			case '\'', '"':
				lx.mode, lx.quote = modeString, b
				continue
			case '`':
				lx.mode = modeTemplate
				continue
			case '<':
				if lx.jsx && lx.regexAllowed() && startsJSX(s[i+1:]) {
					lx.mode, lx.closing, lx.typeArgs = modeJSXTag, false, 0
					continue
				}
				if lx.prev == 'a' && !regexKeywords[lx.prevWord] {
					// After a name, '<' may open type arguments (`new Map<`, `f<T>(`), which the
					// parser reads as a comparison until their '>' comes: a cut inside them
					// ends the text in what parses as wrong (an object type's `a: T;` read as an
					// object literal). A comparison's '<' is let go at its statement's ';', or
					// when the bracket around it closes.
					lx.angles = append(lx.angles, angleAt{brace: lx.depth, paren: lx.paren})
				}
			case '>':
				if n := len(lx.angles); n > 0 && lx.angles[n-1].brace == lx.depth && lx.angles[n-1].paren == lx.paren {
					lx.angles = lx.angles[:n-1]
				}
			case '(', '[':
				lx.paren++
			case ')', ']':
				lx.paren--
				lx.dropAngles()
			case ';':
				for n := len(lx.angles); n > 0 && lx.angles[n-1].brace == lx.depth && lx.angles[n-1].paren == lx.paren; n-- {
					lx.angles = lx.angles[:n-1]
				}
			case '{':
				lx.stack = append(lx.stack, frameBrace)
				lx.depth++
			case '}':
				if n := len(lx.stack); n > 0 && lx.stack[n-1] != frameBrace {
					f := lx.stack[n-1]
					lx.stack = lx.stack[:n-1]
					switch f {
					case frameTemplate:
						lx.mode = modeTemplate
					case frameJSXTagExpr:
						lx.mode = modeJSXTag
					default:
						lx.mode = modeJSXText
					}
					continue
				}
				if n := len(lx.stack); n > 0 {
					lx.stack = lx.stack[:n-1]
				}
				lx.depth--
				lx.dropAngles()
				lx.closes = append(lx.closes, closeAt{pos: i, depth: lx.depth})
			}
			lx.prev = b
		}
	}
	if lx.mode == modeCode {
		lx.endWord() // a line ends a word; a later line cannot continue it
	}
}

// Chunker cuts streamed TypeScript text into chunks at line ends where the lexer is clean. It
// has the methods of checkers/chunk's Chunker that the language seam asks for. Its chunks have
// no boundary category (the checker names each boundary: decl where every bracket is closed)
// and there is no preamble.
type Chunker struct {
	lx      lexer
	partial string          // text after the last newline
	pending strings.Builder // complete lines not yet cut
	off     int             // stream offset of the first pending byte
	lastOff int             // stream offset of the last line lexed
	out     []chunk.Chunk
}

// NewChunker returns a Chunker for text that continues prefix (its lexer state and brace depth
// start where prefix ends); jsx says the text is TSX.
func NewChunker(prefix string, jsx bool) *Chunker {
	c := &Chunker{}
	c.lx.jsx = jsx
	c.lx.scan(prefix)
	c.lx.closes = nil
	return c
}

// Depth returns the brace depth ('{' minus '}' in code, a template's `${…}` not counted) over
// the complete lines written so far, the prefix's included.
func (c *Chunker) Depth() int { return c.lx.depth }

// Offset returns the number of bytes written so far (the prefix not counted).
func (c *Chunker) Offset() int { return c.off + c.pending.Len() + len(c.partial) }

// ClosingBrace returns the stream offset of the first '}' in the last line lexed that took the
// brace depth below d, or -1 when none did.
func (c *Chunker) ClosingBrace(d int) int {
	for _, cl := range c.lx.closes {
		if cl.depth < d {
			return c.lastOff + cl.pos
		}
	}
	return -1
}

// Write feeds more text and returns the chunks that became complete, in order.
func (c *Chunker) Write(text string) []chunk.Chunk {
	c.partial += text
	for {
		k := strings.IndexByte(c.partial, '\n')
		if k < 0 {
			break
		}
		c.line(c.partial[:k+1])
		c.partial = c.partial[k+1:]
		if c.lx.clean() {
			c.cut(false)
		}
	}
	out := c.out
	c.out = nil
	return out
}

func (c *Chunker) line(l string) {
	c.lastOff = c.off + c.pending.Len()
	c.lx.scan(l)
	c.pending.WriteString(l)
}

func (c *Chunker) cut(unclean bool) {
	if c.pending.Len() == 0 {
		return
	}
	t := c.pending.String()
	c.pending.Reset()
	c.out = append(c.out, chunk.Chunk{Text: t, Off: c.off, Unclean: unclean, Depth: c.lx.depth})
	c.off += len(t)
}

// Flush ends the input and returns what is left, the last line without its newline included;
// the last chunk is Unclean when it ends inside a comment, string or template literal.
func (c *Chunker) Flush() []chunk.Chunk {
	if c.partial != "" {
		c.line(c.partial)
		c.partial = ""
	}
	c.cut(!c.lx.clean())
	out := c.out
	c.out = nil
	return out
}

// Closable reports nothing to close: what keeps TypeScript text from being cut (a comment, a
// string, a template literal) has no closer that leaves the lines before it as they are, and
// TypeScript has no conditional compilation (checkers/lang's Chunker).
func (c *Chunker) Closable() (chunk.Chunk, string, bool) { return chunk.Chunk{}, "", false }

// Syntax is TypeScript's side of the language seam (checkers/lang): chunking, brace depth and
// where the cursor is, with TypeScript's lexical rules.
type Syntax struct {
	// JSX says the text is TSX (a .tsx file): JSX elements are lexed as such.
	JSX bool
}

// NewChunker returns a Chunker for text continuing prefix.
func (s Syntax) NewChunker(prefix string) *Chunker { return NewChunker(prefix, s.JSX) }

// Split cuts a whole text as a Chunker fed with it would (Write then Flush).
func (s Syntax) Split(text string) []chunk.Chunk {
	c := NewChunker("", s.JSX)
	return append(c.Write(text), c.Flush()...)
}

// BraceDepth returns the brace depth at the end of text, as Chunker.Depth counts it (a last line
// without a newline included).
func (s Syntax) BraceDepth(text string) int {
	lx := lexer{jsx: s.JSX}
	lx.scan(text)
	return lx.depth
}

// PreambleEnd is 0: TypeScript has no preprocessor preamble.
func (Syntax) PreambleEnd(string) int { return 0 }

// InCommentOrLiteral reports whether the end of text lies inside a comment, a string, a regular
// expression, the text of a template literal (not inside its `${…}`) or a JSX attribute's
// string. JSX children and tags are not literals: code (markup) is written there.
func (s Syntax) InCommentOrLiteral(text string) bool {
	lx := lexer{jsx: s.JSX}
	lx.scan(text)
	switch lx.mode {
	case modeCode, modeJSXTag, modeJSXText:
		return false
	}
	return true
}
