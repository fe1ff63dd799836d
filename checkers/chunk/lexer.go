package chunk

import "strings"

// lexMode is where the lexer stands between two characters.
type lexMode int

const (
	modeCode         lexMode = iota
	modeBlockComment         // inside /* … */
	modeLineComment          // inside // …, continued onto the next line by a backslash
	modeString               // inside "…" or '…', continued onto the next line by a backslash
	modeRawString            // inside R"delim( … )delim"
)

// Options says which lexical features the language being chunked has. The zero value is C++
// (raw strings and digit separators on), the conservative choice: treating a C file as C++
// at worst holds back a cut, it never makes one inside a token.
type Options struct {
	// NoRawStrings turns off R"delim(…)delim" literals (ISO C modes; GNU C has them in clang).
	NoRawStrings bool
	// NoDigitSeparators turns off 1'000 (C before C23).
	NoDigitSeparators bool
}

// OptionsForFlags derives Options from clang flags and a file name the way clang picks the
// language: -x first, else the extension (.c is C, anything else C++), then -std.
func OptionsForFlags(flags []string, filename string) Options {
	isC := strings.HasSuffix(filename, ".c")
	std := ""
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case f == "-x" && i+1 < len(flags):
			i++
			isC = flags[i] == "c" || flags[i] == "c-header"
		case strings.HasPrefix(f, "-x") && len(f) > 2:
			isC = f[2:] == "c" || f[2:] == "c-header"
		case strings.HasPrefix(f, "-std="):
			std = f[len("-std="):]
		}
	}
	if !isC {
		return Options{}
	}
	o := Options{NoDigitSeparators: !strings.Contains(std, "23") && !strings.Contains(std, "2x")}
	// Clang enables raw strings in the GNU C dialects (gnu99, gnu11, … and the default) only.
	o.NoRawStrings = std != "" && !strings.HasPrefix(std, "gnu")
	return o
}

// lineInfo is what the lexer learned from one physical line.
type lineInfo struct {
	hasTokens   bool // at least one token outside comments
	hasCode     bool // a token on a line that is not a preprocessor directive
	isDirective bool // the line is (part of) a preprocessor directive
	firstTok    byte // first character of the line's first token (0 if none)
	lastIdent   bool // the line's last token is an identifier (non-directive lines only)
	lastTok     byte // first character of the line's last token (0 if none)
	clean       bool // the lexer state at the end of the line allows a cut
}

// lexer is an incremental C/C++ lexer that tracks only what decides where text may be cut:
// comments, string/char/raw-string literals, backslash continuations, preprocessor
// conditionals and brace depth. It is fed one physical line at a time.
type lexer struct {
	opts Options

	mode      lexMode
	quote     byte   // modeString: the closing quote
	rawEnd    string // modeRawString: the terminator )delim"
	continued bool   // the previous physical line ended with a backslash continuation
	directive bool   // the current logical line is a preprocessor directive
	ifDepth   int    // open #if/#ifdef/#ifndef
	depth     int    // brace depth outside directives, comments and literals
	started   bool   // a line has been lexed (a UTF-8 byte order mark can only come first)
}

// isIdentStart reports whether c can start an identifier (bytes ≥ 0x80 are UTF-8 letters,
// which clang accepts in identifiers).
func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// endsWithContinuation reports whether line (without its newline) ends with a backslash,
// possibly followed by white space (clang accepts that, with a warning).
func endsWithContinuation(line string) bool {
	i := len(line)
	for i > 0 && isSpace(line[i-1]) {
		i--
	}
	return i > 0 && line[i-1] == '\\'
}

// rawPrefix reports whether ident is a raw string literal's encoding prefix.
func rawPrefix(ident string) bool {
	switch ident {
	case "R", "LR", "uR", "UR", "u8R":
		return true
	}
	return false
}

// line lexes one physical line; text may or may not end in '\n'.
func (lx *lexer) line(text string) lineInfo {
	var info lineInfo
	if !lx.started {
		lx.started = true
		text = strings.TrimPrefix(text, "\xEF\xBB\xBF") // clang skips a byte order mark
	}
	body := strings.TrimSuffix(text, "\n")
	cont := endsWithContinuation(body)
	if cont {
		// Cut the continuation off so that it is not lexed as a stray backslash.
		body = strings.TrimRight(body, " \t\r\f\v")
		body = body[:len(body)-1]
	}
	startOfLogical := !lx.continued
	if startOfLogical {
		lx.directive = false
	}
	token := func(c byte, ident bool) {
		if !info.hasTokens {
			info.firstTok = c
		}
		info.hasTokens = true
		info.lastTok = c
		info.lastIdent = ident
	}
	i := 0
	n := len(body)
	// Resume a construct left open by the previous line.
	switch lx.mode {
	case modeLineComment:
		if !cont {
			lx.mode = modeCode
		}
		i = n
	case modeBlockComment:
		if k := strings.Index(body, "*/"); k >= 0 {
			lx.mode = modeCode
			i = k + 2
		} else {
			i = n
		}
	case modeRawString:
		// A raw string undoes line splicing: the whole physical line, backslash included,
		// belongs to it.
		if k := strings.Index(strings.TrimSuffix(text, "\n"), lx.rawEnd); k >= 0 {
			lx.mode = modeCode
			i = k + len(lx.rawEnd)
			cont = endsWithContinuation(strings.TrimSuffix(text, "\n"))
			if cont {
				body = strings.TrimRight(strings.TrimSuffix(text, "\n"), " \t\r\f\v")
				body = body[:len(body)-1]
				n = len(body)
			}
		} else {
			// Still inside: the line's backslash, if any, is raw text, not a continuation.
			lx.continued = false
			info.clean = false
			info.isDirective = lx.directive
			return info
		}
	case modeString:
		i = lx.scanQuoted(body, 0, lx.quote)
	}
	if startOfLogical && lx.mode == modeCode && i == 0 {
		// A directive starts with '#' as the first token of a logical line.
		j := 0
		for j < n && isSpace(body[j]) {
			j++
		}
		if j < n && body[j] == '#' {
			lx.directive = true
			k := j + 1
			for k < n && isSpace(body[k]) {
				k++
			}
			e := k
			for e < n && isIdentChar(body[e]) {
				e++
			}
			switch body[k:e] {
			case "if", "ifdef", "ifndef":
				lx.ifDepth++
			case "endif":
				if lx.ifDepth > 0 {
					lx.ifDepth--
				}
			}
		}
	}
	info.isDirective = lx.directive
	for i < n && lx.mode == modeCode {
		c := body[i]
		switch {
		case isSpace(c):
			i++
		case c == '/' && i+1 < n && body[i+1] == '/':
			lx.mode = modeLineComment
			i = n
		case c == '/' && i+1 < n && body[i+1] == '*':
			if k := strings.Index(body[i+2:], "*/"); k >= 0 {
				i += 2 + k + 2
			} else {
				lx.mode = modeBlockComment
				i = n
			}
		case c == '"' || c == '\'':
			token(c, false)
			i = lx.scanQuoted(body, i+1, c)
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(body[i+1])):
			token(c, false)
			i = lx.scanNumber(body, i)
		case isIdentStart(c):
			s := i
			for i < n && isIdentChar(body[i]) {
				i++
			}
			ident := body[s:i]
			if i < n && body[i] == '"' && !lx.opts.NoRawStrings && rawPrefix(ident) && !lx.directive {
				token('"', false)
				i = lx.scanRaw(body, i+1)
				if lx.mode == modeRawString {
					// The rest of the physical line, a trailing backslash included, is raw text.
					cont = false
				}
				continue
			}
			if i < n && (body[i] == '"' || body[i] == '\'') {
				continue // an encoding prefix (L, u, U, u8); the literal follows
			}
			token(c, true)
		default:
			token(c, false)
			if !lx.directive {
				switch c {
				case '{':
					lx.depth++
				case '}':
					lx.depth--
				}
			}
			i++
		}
	}
	if lx.mode == modeString && !cont {
		// An unterminated literal ends at the end of the line (clang diagnoses it there).
		lx.mode = modeCode
	}
	if lx.mode == modeLineComment && !cont {
		lx.mode = modeCode
	}
	lx.continued = cont
	if info.hasTokens && !lx.directive {
		info.hasCode = true
	}
	if lx.directive {
		info.lastIdent = false
	}
	info.clean = lx.mode == modeCode && !cont && lx.ifDepth == 0
	return info
}

// scanQuoted scans a string or character literal body from i up to its closing quote and
// returns the index after it; at the end of the line it leaves the lexer in modeString.
func (lx *lexer) scanQuoted(body string, i int, q byte) int {
	for i < len(body) {
		switch body[i] {
		case '\\':
			i += 2
			continue
		case q:
			lx.mode = modeCode
			return i + 1
		}
		i++
	}
	lx.mode = modeString
	lx.quote = q
	return len(body)
}

// scanRaw scans a raw string from just after its opening quote.
func (lx *lexer) scanRaw(body string, i int) int {
	k := strings.IndexByte(body[i:], '(')
	if k < 0 || k > 16 || strings.ContainsAny(body[i:i+k], " \\)\t") {
		// Not a valid raw string delimiter: clang lexes an error; treat the rest as a string.
		return lx.scanQuoted(body, i, '"')
	}
	lx.rawEnd = ")" + body[i:i+k] + "\""
	i += k + 1
	if e := strings.Index(body[i:], lx.rawEnd); e >= 0 {
		lx.mode = modeCode
		return i + e + len(lx.rawEnd)
	}
	lx.mode = modeRawString
	return len(body)
}

// scanNumber scans a preprocessing number (digits, letters, '.', exponent signs and, where
// the language has them, digit separators).
func (lx *lexer) scanNumber(body string, i int) int {
	n := len(body)
	i++
	for i < n {
		c := body[i]
		switch {
		case isIdentChar(c) || c == '.':
			i++
		case (c == '+' || c == '-') && strings.ContainsRune("eEpP", rune(body[i-1])):
			i++
		case c == '\'' && !lx.opts.NoDigitSeparators && i+1 < n && isIdentChar(body[i+1]):
			i++
		default:
			return i
		}
	}
	return i
}
