package chunk

// InCommentOrLiteral reports whether the end of text (a document up to a cursor) lies inside a
// comment or a string, character or raw-string literal: where code completion has nothing to
// offer.
func InCommentOrLiteral(text string, opts Options) bool {
	c := New(opts)
	// The cursor's line, up to the cursor, as if it went on on the next line: a literal or a
	// line comment open at the cursor then stays open. The spliced line stays in c.group.
	c.Write(text + "\\\n")
	c.lx.line(c.group.String())
	return c.lx.mode != modeCode
}
