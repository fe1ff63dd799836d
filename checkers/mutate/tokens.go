package mutate

import "strings"

// tokKind is the coarse kind of a token.
type tokKind int

const (
	tkIdent tokKind = iota
	tkNumber
	tkString // string or character literal (raw strings included)
	tkPunct
)

// token is one C/C++ token of a source text, found by a small lexer that skips comments and
// knows literals; good enough for the text-level mutation heuristics.
type token struct {
	kind      tokKind
	text      string
	off       int
	line      int  // 1-based
	directive bool // inside a preprocessor directive line
	depth     int  // brace depth before the token
	paren     int  // parenthesis depth before the token
}

var puncts3 = []string{"<<=", ">>=", "...", "->*"}
var puncts2 = []string{"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// tokenize lexes src into tokens (comments dropped).
func tokenize(src string) []token {
	var toks []token
	line, depth, paren := 1, 0, 0
	directive, lineStart := false, true
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '\n':
			line++
			if i == 0 || src[i-1] != '\\' {
				directive = false
			}
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\\':
			i++
			continue
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			e := strings.Index(src[i+2:], "*/")
			end := n
			if e >= 0 {
				end = i + 2 + e + 2
			}
			line += strings.Count(src[i:end], "\n")
			i = end
			continue
		}
		if lineStart && c == '#' {
			directive = true
		}
		lineStart = false
		t := token{off: i, line: line, directive: directive, depth: depth, paren: paren}
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j < n && src[j] == c {
				j++
			}
			t.kind, t.text = tkString, src[i:j]
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < n && (isIdentChar(src[j]) || src[j] == '.' || (src[j] == '\'' && j+1 < n && isIdentChar(src[j+1]))) {
				j++
			}
			t.kind, t.text = tkNumber, src[i:j]
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentChar(src[j]) {
				j++
			}
			id := src[i:j]
			if j < n && src[j] == '"' && (id == "R" || id == "LR" || id == "uR" || id == "UR" || id == "u8R") {
				k := strings.IndexByte(src[j:], '(')
				if k > 0 {
					term := ")" + src[j+1:j+k] + "\""
					if e := strings.Index(src[j+k:], term); e >= 0 {
						end := j + k + e + len(term)
						line += strings.Count(src[i:end], "\n")
						t.kind, t.text = tkString, src[i:end]
						i = end
						break
					}
				}
			}
			t.kind, t.text = tkIdent, id
			i = j
		default:
			t.kind = tkPunct
			t.text = src[i : i+1]
			for _, p := range puncts3 {
				if strings.HasPrefix(src[i:], p) {
					t.text = p
				}
			}
			if len(t.text) == 1 {
				for _, p := range puncts2 {
					if strings.HasPrefix(src[i:], p) {
						t.text = p
					}
				}
			}
			i += len(t.text)
			if !directive {
				switch t.text {
				case "{":
					depth++
				case "}":
					depth--
				case "(":
					paren++
				case ")":
					paren--
				}
			}
		}
		toks = append(toks, t)
	}
	return toks
}
