package chunk

import "strings"

// InCommentOrLiteral reports whether the end of text (a document up to a cursor) lies inside a
// comment or a string, character or raw-string literal: where code completion has nothing to
// offer.
func InCommentOrLiteral(text string, opts Options) bool {
	lx := &lexer{opts: opts}
	for {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			break
		}
		lx.line(text[:j+1])
		text = text[j+1:]
	}
	// The cursor's line, up to the cursor, as if it went on on the next line: a literal or a
	// line comment open at the cursor then stays open.
	lx.line(text + "\\\n")
	return lx.mode != modeCode
}
