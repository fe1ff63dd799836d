package typescript

// This file is the lexer's JSX, in .tsx files: where a '<' starts an element, and the tags and
// text of one. It follows TypeScript's parser and scanner (src/compiler/parser.ts and scanner.ts
// in microsoft/TypeScript) as far as a lexer without a parser can:
//   - parseUpdateExpression: in a JSX file a '<' where an operand may start, followed by an
//     identifier, a keyword or '>', is an element or a fragment;
//   - isParenthesizedArrowFunctionExpressionWorker: `<T,`, `<T =`, `<const T` and `<T extends U`
//     (not `extends=`, `extends>` or `extends/`) are a generic arrow function's type parameters;
//   - scanJsxToken: children are text up to a '{' or a '<', and `</` (without a space between)
//     starts the closing tag;
//   - scanJsxAttributeValue: an attribute's string has no escapes and may span lines.
// One case the parser decides by context the lexer cannot see: a generic function type in an
// annotation (`let f: <T>(x: T) => T`) starts like an element. `<T>(` is read as type
// parameters, since in an expression of a .tsx file it is an error anyway.

// startsJSX reports whether a '<' in operand position, followed by rest (up to the line's end),
// starts a JSX element or fragment.
func startsJSX(rest string) bool {
	i := skipSpace(rest, 0)
	if i == len(rest) {
		return false // the line ends: the parser would look further; a '<' alone stays code
	}
	if rest[i] == '>' {
		return true // a fragment, <>
	}
	if !identStart(rest[i]) {
		return false
	}
	name, i := word(rest, i)
	if name == "const" {
		if j := skipSpace(rest, i); j < len(rest) && identStart(rest[j]) {
			return false // <const T …>: type parameters
		}
	}
	i = skipSpace(rest, i)
	if i == len(rest) {
		return true
	}
	switch rest[i] {
	case ',':
		return false
	case '=':
		return false // <T = Default>: a type parameter's default (an element has no `=` there)
	case '>':
		j := skipSpace(rest, i+1)
		return j == len(rest) || rest[j] != '(' // <T>(…): type parameters
	}
	if identStart(rest[i]) {
		if w, j := word(rest, i); w == "extends" {
			j = skipSpace(rest, j)
			return j < len(rest) && (rest[j] == '=' || rest[j] == '>' || rest[j] == '/')
		}
	}
	return true
}

// jsxTag lexes s[i] inside a JSX tag and returns the index of the last byte it consumed.
func (lx *lexer) jsxTag(s string, i int) int {
	switch b := s[i]; b {
	case '"', '\'':
		lx.mode, lx.quote = modeJSXAttr, b
	case '{':
		lx.stack = append(lx.stack, frameJSXTagExpr)
		lx.mode, lx.prev = modeCode, '{'
	case '<':
		lx.typeArgs++ // type arguments: <List<string> …>
	case '/':
		switch {
		case i+1 < len(s) && s[i+1] == '/':
			lx.mode, lx.back = modeLineComment, modeJSXTag
			return i + 1
		case i+1 < len(s) && s[i+1] == '*':
			lx.mode, lx.back = modeBlockComment, modeJSXTag
			return i + 1
		case i+1 < len(s) && s[i+1] == '>' && lx.typeArgs == 0:
			lx.endElement() // self-closing: <br/>
			return i + 1
		}
	case '>':
		switch {
		case lx.typeArgs > 0:
			lx.typeArgs--
		case lx.closing:
			if n := len(lx.stack); n > 0 && lx.stack[n-1] == frameJSXElement {
				lx.stack = lx.stack[:n-1]
			}
			lx.endElement()
		default:
			lx.stack = append(lx.stack, frameJSXElement)
			lx.mode = modeJSXText
		}
	}
	return i
}

// jsxText lexes s[i] among a JSX element's children and returns the index of the last byte it
// consumed.
func (lx *lexer) jsxText(s string, i int) int {
	switch s[i] {
	case '{':
		lx.stack = append(lx.stack, frameJSXChildExpr)
		lx.mode, lx.prev = modeCode, '{'
	case '<':
		lx.mode, lx.closing, lx.typeArgs = modeJSXTag, false, 0
		if i+1 < len(s) && s[i+1] == '/' {
			lx.closing = true
			return i + 1
		}
	}
	return i
}

// endElement leaves an element that ended (`/>` or its closing tag's '>'): back to its parent's
// children, or to code, where the element was an operand.
func (lx *lexer) endElement() {
	if n := len(lx.stack); n > 0 && lx.stack[n-1] == frameJSXElement {
		lx.mode = modeJSXText
		return
	}
	lx.mode, lx.prev = modeCode, '0'
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

func identStart(b byte) bool { return identByte(b) && (b < '0' || b > '9') }

// word returns the identifier (or keyword) that starts at s[i], with the index after it.
func word(s string, i int) (string, int) {
	j := i
	for j < len(s) && identByte(s[j]) {
		j++
	}
	return s[i:j], j
}
