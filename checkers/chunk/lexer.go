package chunk

import "strings"

// lexMode is where the lexer stands between two characters.
type lexMode int

const (
	modeCode         lexMode = iota
	modeBlockComment         // inside /* … */
	modeLineComment          // inside // … (ends at the next line end)
	modeString               // inside "…" or '…' (ends at its quote or the next line end)
	modeRawString            // inside R"delim( … )delim", or an invalid raw string up to a '"'
	modeHeaderName           // inside <…> after #include and its kin (ends at '>' or the line end)
)

// dirState is where the lexer stands in a preprocessor directive.
type dirState int

const (
	dirNone    dirState = iota // not in a directive
	dirName                    // after the '#' (or %: or ??=): the next token names the directive
	dirBody                    // after the directive's name
	dirInclude                 // after #include, #include_next, #import or #embed: a '<' opens a header name
)

// lineInfo is what the lexer learned from one logical group of lines (a physical line and the
// lines spliced onto it by backslash-newlines).
type lineInfo struct {
	hasTokens   bool // at least one token outside comments
	hasCode     bool // a token on a line that is not a preprocessor directive
	isDirective bool // the group holds (part of) a preprocessor directive
	firstTok    byte // first character of the group's first token (0 if none)
	lastHold    bool // the group's last token may end a function-like macro's name (see Chunker)
	lastTok     byte // first character of the group's last token (0 if none)
	clean       bool // the lexer state at the end of the group allows a cut
}

// closeAt records a '}' and the brace depth after it.
type closeAt struct{ pos, depth int }

// lexer is an incremental C/C++ lexer that tracks only what decides where text may be cut:
// comments, string/char/raw-string literals, line splices, preprocessor directives and
// conditionals, the pragmas that must begin and end in one file, and brace depth. It follows
// clang's Lexer: phases 1 and 2 (trigraphs where enabled, backslash-newline splices with
// optional white space between them) apply everywhere except inside a raw string; CR, LF,
// CRLF and LFCR end lines; a directive is a '#' (or "%:", or "??=") that is the first token
// of a line, block comments before it included. It is fed one logical group of lines at a time
// (Chunker.Write groups physical lines that end in a splice).
type lexer struct {
	opts Options

	mode      lexMode
	quote     byte   // modeString: the closing quote
	rawEnd    string // modeRawString: the terminator )delim" (or " for an invalid delimiter)
	continued bool   // the last group ended in a splice with nothing after it (cursor queries)
	lineStart bool   // no token yet on the current line
	dir       dirState
	pragma    []string // a #pragma's first identifiers (up to three)
	ifDepth   int      // open #if/#ifdef/#ifndef
	depth     int      // brace depth outside directives, comments and literals
	nonnull   bool     // inside #pragma clang assume_nonnull begin … end
	audited   bool     // inside #pragma clang arc_cf_code_audited begin … end
	started   bool     // a group has been lexed (a UTF-8 byte order mark can only come first)

	info   lineInfo
	closes []closeAt // the '}' of the last group, by byte offset in it
}

func newLexer(opts Options) lexer { return lexer{opts: opts, lineStart: true} }

// isIdentStart reports whether c can start an identifier (bytes ≥ 0x80 are UTF-8 letters,
// which clang accepts in identifiers; '$' is on by default).
func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isHSpace is clang's horizontal white space (isHorizontalWhitespace).
func isHSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' || c == '\v' }

func isNewline(c byte) bool { return c == '\n' || c == '\r' }

// trigraph maps the third character of a trigraph ??x to its replacement (0: not a trigraph).
func trigraph(c byte) byte {
	switch c {
	case '=':
		return '#'
	case '/':
		return '\\'
	case '\'':
		return '^'
	case '(':
		return '['
	case ')':
		return ']'
	case '!':
		return '|'
	case '<':
		return '{'
	case '>':
		return '}'
	case '-':
		return '~'
	}
	return 0
}

// splice returns the length of the escaped newline at s[i:] (white space, then CR, LF, CRLF or
// LFCR), 0 if there is none (clang's getEscapedNewLineSize).
func splice(s string, i int) int {
	j := i
	for j < len(s) && isHSpace(s[j]) {
		j++
	}
	if j >= len(s) || !isNewline(s[j]) {
		return 0
	}
	if j+1 < len(s) && isNewline(s[j+1]) && s[j+1] != s[j] {
		return j + 2 - i
	}
	return j + 1 - i
}

// char returns the character at s[i] after phases 1 and 2 (a trigraph replaced where enabled,
// splices skipped) and the index after it; at the end of s it returns 0 and len(s).
func (lx *lexer) char(s string, i int) (byte, int) {
	for i < len(s) {
		c, n := s[i], 1
		if c == '?' && lx.opts.Trigraphs && i+2 < len(s) && s[i+1] == '?' && trigraph(s[i+2]) != 0 {
			c, n = trigraph(s[i+2]), 3
		}
		if c == '\\' {
			if k := splice(s, i+n); k > 0 {
				i += n + k
				if i == len(s) {
					lx.continued = true
				}
				continue
			}
		}
		return c, i + n
	}
	return 0, len(s)
}

// endsWithSplice reports whether the physical line (its newline included) ends in a
// backslash-newline (or ??/-newline where trigraphs are on): such a line never ends where a
// cut is allowed, and the next line belongs to the same group.
func (lx *lexer) endsWithSplice(line string) bool {
	b := strings.TrimSuffix(line, "\n")
	if len(b) == len(line) {
		return false
	}
	b = strings.TrimSuffix(b, "\r")
	b = strings.TrimRight(b, " \t\f\v")
	return strings.HasSuffix(b, "\\") || (lx.opts.Trigraphs && strings.HasSuffix(b, "??/"))
}

// token records a token starting with c (ident: an identifier; hold: it may end a function-like
// macro's name) for the group's info and the directive state.
func (lx *lexer) token(c byte, hold bool) {
	in := &lx.info
	if !in.hasTokens {
		in.firstTok = c
	}
	in.hasTokens = true
	in.lastTok = c
	in.lastHold = hold && lx.dir == dirNone
	if lx.dir == dirNone {
		in.hasCode = true
	}
	lx.lineStart = false
	if lx.dir == dirName {
		lx.dir = dirBody // a directive whose name is not an identifier (# 1 "file", #)
	}
}

// ident records an identifier token.
func (lx *lexer) ident(name string) {
	d := lx.dir
	lx.token(name[0], true)
	switch {
	case d == dirName:
		switch name {
		case "if", "ifdef", "ifndef":
			lx.ifDepth++
		case "endif":
			if lx.ifDepth > 0 {
				lx.ifDepth--
			}
		case "include", "include_next", "import", "embed":
			lx.dir = dirInclude
		case "pragma":
			lx.pragma = lx.pragma[:0]
			lx.pragma = append(lx.pragma, name)
		}
	case d != dirNone && len(lx.pragma) > 0 && len(lx.pragma) < 4:
		lx.pragma = append(lx.pragma, name)
	}
}

// endDirective ends a directive at a line end, applying a #pragma that must begin and end in
// one file.
func (lx *lexer) endDirective() {
	if len(lx.pragma) == 4 && lx.pragma[1] == "clang" {
		on := lx.pragma[3] == "begin"
		if on || lx.pragma[3] == "end" {
			switch lx.pragma[2] {
			case "assume_nonnull":
				lx.nonnull = on
			case "arc_cf_code_audited":
				lx.audited = on
			}
		}
	}
	lx.pragma = lx.pragma[:0]
	lx.dir = dirNone
}

// newline handles a line end outside comments and raw strings.
func (lx *lexer) newline() {
	if lx.mode == modeLineComment || lx.mode == modeString || lx.mode == modeHeaderName {
		lx.mode = modeCode
	}
	lx.endDirective()
	lx.lineStart = true
}

// line lexes one group of physical lines (see Chunker.Write); text may or may not end in a
// newline (it does not at the end of input).
func (lx *lexer) line(text string) lineInfo {
	lx.info = lineInfo{}
	lx.closes = lx.closes[:0]
	lx.continued = false
	base := 0
	if !lx.started {
		lx.started = true
		if strings.HasPrefix(text, "\xEF\xBB\xBF") { // clang skips a byte order mark
			text, base = text[3:], 3
		}
	}
	s := text
	i := 0
	for i < len(s) {
		switch lx.mode {
		case modeBlockComment:
			c, j := lx.char(s, i)
			if c == '*' {
				if c2, k := lx.char(s, j); c2 == '/' {
					lx.mode = modeCode
					j = k
				}
			}
			i = j
		case modeRawString:
			// A raw string undoes phases 1 and 2: its text is the physical bytes.
			if k := strings.Index(s[i:], lx.rawEnd); k >= 0 {
				lx.mode = modeCode
				i += k + len(lx.rawEnd)
			} else {
				i = len(s)
			}
		case modeLineComment:
			c, j := lx.char(s, i)
			if isNewline(c) {
				lx.newline()
			}
			i = j
		case modeHeaderName:
			c, j := lx.char(s, i)
			if isNewline(c) {
				lx.newline()
			} else if c == '>' {
				lx.mode = modeCode
			}
			i = j
		case modeString:
			c, j := lx.char(s, i)
			switch {
			case isNewline(c):
				lx.newline() // an unterminated literal ends at the line end (clang diagnoses it)
			case c == lx.quote:
				lx.mode = modeCode
			case c == '\\':
				if c2, k := lx.char(s, j); k > j && !isNewline(c2) {
					j = k
				}
			}
			i = j
		default:
			i = lx.code(s, i, base)
		}
	}
	if !lx.continued {
		// The end of input ends a line comment, a literal and a directive as a newline does.
		if len(s) == 0 || !isNewline(s[len(s)-1]) {
			if lx.mode != modeBlockComment && lx.mode != modeRawString {
				lx.newline()
			}
		}
	}
	if lx.dir != dirNone || lx.info.isDirective {
		lx.info.isDirective = true
	}
	lx.info.clean = lx.clean()
	return lx.info
}

// clean reports whether the state between two groups allows a cut.
func (lx *lexer) clean() bool {
	return lx.mode == modeCode && !lx.continued && lx.dir == dirNone && lx.ifDepth == 0 && !lx.nonnull && !lx.audited
}

// code lexes one token (or white space, or a line end) in modeCode at s[i] and returns the
// index after it.
func (lx *lexer) code(s string, i, base int) int {
	c, j := lx.char(s, i)
	switch {
	case isNewline(c):
		lx.newline()
	case isHSpace(c) || c == 0 && j == len(s):
	case c == '/':
		c2, k := lx.char(s, j)
		switch {
		case c2 == '*':
			lx.mode = modeBlockComment
			return k
		case c2 == '/':
			// Without // comments (C89) clang still lexes one, unless a '*' follows: then
			// "a //* b */ c" is a / c.
			if c3, _ := lx.char(s, k); !lx.opts.NoLineComments || c3 != '*' {
				lx.mode = modeLineComment
				return k
			}
		}
		lx.token('/', false)
	case c == '"' || c == '\'':
		lx.token(c, false)
		lx.mode, lx.quote = modeString, c
	case isDigit(c) || c == '.':
		if c2, _ := lx.char(s, j); c == '.' && !isDigit(c2) {
			lx.token('.', false)
			return j
		}
		lx.token(c, false)
		return lx.number(s, j, c)
	case isIdentStart(c) || c == '\\' && lx.ucn(s, j):
		return lx.identifier(s, i)
	case c == '#' && lx.lineStart && lx.dir == dirNone:
		lx.directiveStart(c)
	case c == '%' && !lx.opts.NoDigraphs:
		c2, k := lx.char(s, j)
		switch {
		case c2 == ':' && lx.lineStart && lx.dir == dirNone:
			lx.directiveStart(c)
			return k
		case c2 == '>':
			lx.brace('}', i+base)
			return k
		}
		lx.token(c, false)
	case c == '<' && lx.dir == dirInclude:
		lx.token(c, false)
		lx.mode = modeHeaderName
	case c == '<' && !lx.opts.NoDigraphs:
		if c2, k := lx.char(s, j); c2 == '%' {
			lx.brace('{', i+base)
			return k
		}
		lx.token(c, false)
	case c == '{' || c == '}':
		lx.brace(c, i+base)
	default:
		lx.token(c, c == ')')
	}
	return j
}

// directiveStart starts a directive at its '#' (c is '#' or '%').
func (lx *lexer) directiveStart(c byte) {
	lx.dir = dirBody // the '#' is no code
	lx.token(c, false)
	lx.dir = dirName
	lx.info.isDirective = true
}

// brace records a '{' or '}' token at byte offset pos of the group.
func (lx *lexer) brace(c byte, pos int) {
	inDirective := lx.dir != dirNone
	lx.token(c, false)
	if inDirective {
		return
	}
	if c == '{' {
		lx.depth++
		return
	}
	lx.depth--
	lx.closes = append(lx.closes, closeAt{pos: pos, depth: lx.depth})
}

// ucn reports whether a universal character name (\u or \U) starts at s[j] after a backslash.
func (lx *lexer) ucn(s string, j int) bool {
	c, _ := lx.char(s, j)
	return c == 'u' || c == 'U'
}

// identifier lexes an identifier, or a literal with an encoding prefix, starting at s[i].
func (lx *lexer) identifier(s string, i int) int {
	var name strings.Builder
	for i < len(s) {
		c, j := lx.char(s, i)
		if c == '\\' && lx.ucn(s, j) {
			name.WriteByte(c)
			i = j
			continue
		}
		if !isIdentChar(c) || (c == 0 && j == len(s)) {
			break
		}
		name.WriteByte(c)
		i = j
	}
	id := name.String()
	c, j := lx.char(s, i)
	switch {
	case c == '"' && lx.rawPrefix(id):
		lx.token('"', false)
		lx.mode = modeRawString
		// The delimiter is read from the physical bytes (clang reverts phases 1 and 2 there).
		k := j
		for k < len(s) && k-j < 16 && !strings.ContainsRune(" ()\\\t\v\f\r\n", rune(s[k])) {
			k++
		}
		if k < len(s) && s[k] == '(' {
			lx.rawEnd = ")" + s[j:k] + "\""
			return k + 1
		}
		// An invalid delimiter: clang skips to the next '"' to recover.
		lx.rawEnd = "\""
		return j
	case (c == '"' || c == '\'') && lx.encodingPrefix(id):
		lx.token(c, false)
		lx.mode, lx.quote = modeString, c
		return j
	}
	lx.ident(id)
	return i
}

// rawPrefix reports whether id followed by '"' opens a raw string literal.
func (lx *lexer) rawPrefix(id string) bool {
	if lx.opts.NoRawStrings {
		return false
	}
	switch id {
	case "R", "LR":
		return true
	case "uR", "UR", "u8R":
		return !lx.opts.NoUTFLiterals
	}
	return false
}

// encodingPrefix reports whether id followed by a quote is a literal's encoding prefix.
func (lx *lexer) encodingPrefix(id string) bool {
	switch id {
	case "L":
		return true
	case "u", "U", "u8":
		return !lx.opts.NoUTFLiterals
	}
	return false
}

// number lexes the rest of a preprocessing number whose first character, c, ended at s[i]:
// digits, letters, '.', an exponent's sign and, where the language has them, digit separators.
func (lx *lexer) number(s string, i int, prev byte) int {
	for i < len(s) {
		c, j := lx.char(s, i)
		switch {
		case c == 0 && j == len(s):
			return i
		case isIdentChar(c) || c == '.':
		case (c == '+' || c == '-') && strings.IndexByte("eEpP", prev) >= 0:
		case c == '\'' && !lx.opts.NoDigitSeparators:
			c2, k := lx.char(s, j)
			if !isIdentChar(c2) || (c2 == 0 && k == len(s)) {
				return i
			}
			c, j = c2, k
		default:
			return i
		}
		prev, i = c, j
	}
	return i
}
