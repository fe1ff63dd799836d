package engine

import (
	"fmt"
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
)

// FeedbackMarker starts every line of the feedback comment that a spawn's prompt ends with
// (generator-side rollback). Model stand-ins find the comment by it; it never appears in a
// result.
const FeedbackMarker = "hydra-feedback:"

// FeedbackComment returns the C/C++ comment that carries feedback at the end of base, the
// prompt text it follows: one line comment per line of feedback, each starting with
// "// " + FeedbackMarker, and a final newline so the model continues on a fresh line. When
// base does not end a line the comment starts on base's last line (after a space). It is empty
// when feedback is.
func FeedbackComment(base, feedback string) string {
	return feedbackComment("//", base, feedback)
}

// feedbackComment is FeedbackComment with the language's line comment (lang.Language's
// LineComment) in place of "//".
func feedbackComment(comment, base, feedback string) string {
	feedback = strings.TrimSpace(feedback)
	if feedback == "" {
		return ""
	}
	var b strings.Builder
	if base != "" && !strings.HasSuffix(base, "\n") {
		b.WriteByte(' ')
	}
	for _, line := range strings.Split(feedback, "\n") {
		b.WriteString(comment + " ")
		b.WriteString(FeedbackMarker)
		b.WriteByte(' ')
		b.WriteString(strings.TrimRight(line, " \t\r"))
		b.WriteByte('\n')
	}
	return b.String()
}

// StripFeedback removes a trailing feedback comment (as FeedbackComment writes it) from a
// prompt, returning the prompt without it and the feedback text. Model stand-ins use it to
// find the code a spawn's prompt continues.
func StripFeedback(prompt string) (code, feedback string) {
	i := strings.Index(prompt, "// "+FeedbackMarker)
	if i < 0 {
		return prompt, ""
	}
	code = prompt[:i]
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(prompt[i:], "\n"), "\n") {
		lines = append(lines, strings.TrimSpace(strings.TrimPrefix(l, "// "+FeedbackMarker)))
	}
	// FeedbackComment put a space before the comment exactly when the code did not end a line.
	code = strings.TrimSuffix(code, " ")
	return code, strings.Join(lines, "\n")
}

// FeedbackFor is the feedback a default repair gives for node n: the checker's diagnostic
// with its line, e.g. "line 12: use of undeclared identifier 'x'". A fail node (stream cut,
// model error) gives no feedback. A checker crash is an error node: "checker crashed at line N".
func FeedbackFor(n *Node) string {
	switch n.Kind {
	case NodeError:
		return fmt.Sprintf("the previous attempt failed to compile at line %d: %s", n.Line, oneLine(n.Diag)) + noteLines(n.Notes)
	case NodeFail:
		return ""
	}
	return ""
}

// Budget of the notes in a feedback comment: the model needs the candidate that did not fit or
// the instantiation that failed, not a page of them.
const (
	maxFeedbackNotes    = 4
	maxFeedbackNoteLen  = 200
	maxFeedbackNotesLen = 600
)

// noteLines is the checker's notes on an error as feedback lines, "\nnote: line 7: …", the first
// maxFeedbackNotes of them, each cut to maxFeedbackNoteLen bytes, all to maxFeedbackNotesLen.
func noteLines(notes []checkers.Note) string {
	var b strings.Builder
	for i, n := range notes {
		if i == maxFeedbackNotes {
			break
		}
		line := "note: " + oneLine(n.String())
		if len(line) > maxFeedbackNoteLen {
			line = strings.ToValidUTF8(line[:maxFeedbackNoteLen-len("…")], "") + "…"
		}
		if b.Len()+1+len(line) > maxFeedbackNotesLen {
			break
		}
		b.WriteString("\n" + line)
	}
	return b.String()
}

// oneLine folds a diagnostic onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// spawnPrompt is the model's prompt for a rollout that continues base (the whole checked text
// up to the start node): the request's prompt (which ends with the prefix), the generated text
// of base after the prefix, and the feedback comment, written with the language's line comment.
func spawnPrompt(comment, prompt, prefix, base, feedback string) string {
	gen := base[min(len(prefix), len(base)):]
	return prompt + gen + feedbackComment(comment, prompt+gen, feedback)
}
