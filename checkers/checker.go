// Package checkers defines the checker protocol of Hydra (the paper's Tab. 2; checkers/clang/README.md) as the
// engine sees it: sessions that take generated text chunk by chunk and report, asynchronously,
// how far the text is accepted, where it is rejected, and which dormant checkpoints of their own
// state exist. Implementations live in sub-packages; checkers/clang is the Clang one. Chunking
// (where text may be cut) lives in checkers/chunk.
package checkers

import (
	"context"
	"errors"
	"fmt"
)

// Event kinds, as they appear on the wire and in Event.Kind.
const (
	// KindInit: an active session exists (ID = session, Parent = checkpoint it came from or 0).
	KindInit = "init"
	// KindProgress: everything up to byte Off is accepted; Cat says what kind of boundary it is.
	KindProgress = "progress"
	// KindError: rejected at byte Off (Line, Col, Cat, Diag set).
	KindError = "error"
	// KindChkpt: a dormant checkpoint (ID) exists for the prefix up to Off.
	KindChkpt = "chkpt"
	// KindDone: end of input reached and the whole translation unit checked; OK is the verdict.
	KindDone = "done"
	// KindCrash: not a protocol message: the checker process ended without "done"
	// (crash, kill, timeout). Diag says why. It is always the last event of a session.
	KindCrash = "crash"
)

// Error categories (Event.Cat of an error event). Coarse classes derived from the diagnostic.
const (
	CatUndeclared    = "undeclared_identifier"
	CatNoMember      = "no_member"
	CatTypeMismatch  = "type_mismatch"
	CatArgCount      = "wrong_argument_count"
	CatRedefinition  = "redefinition"
	CatSyntax        = "syntax"
	CatMissingReturn = "missing_return"
	CatFatal         = "fatal" // e.g. a missing #include file
	CatOther         = "other"
)

// Progress (boundary) categories, set by the chunker on each chunk and echoed in progress events.
const (
	BoundaryPreamble = "preamble" // preprocessor lines before the first declaration
	BoundaryDecl     = "decl"     // a line that ends at brace depth 0 (a top-level declaration ends)
	BoundaryStmt     = "stmt"     // a line that ends a statement or block inside a body
	BoundaryLine     = "line"     // any other complete line
)

// Event is one message from a checker session (or checkpoint) to the engine.
// Offsets are bytes in the whole checked text: the session's start prefix counts from 0.
type Event struct {
	Kind   string `json:"event"`
	ID     int64  `json:"id,omitempty"`     // init: session id; chkpt: checkpoint id
	Parent int64  `json:"parent,omitempty"` // init: checkpoint resumed from; chkpt: session that made it
	Off    int    `json:"off"`
	Line   int    `json:"line,omitempty"` // error: 1-based presumed line (honours #line)
	Col    int    `json:"col,omitempty"`  // error: 1-based column in bytes
	Cat    string `json:"cat,omitempty"`
	Diag   string `json:"diag,omitempty"` // error: the compiler's message; crash: why
	OK     bool   `json:"ok,omitempty"`   // done: the verdict
	PID    int    `json:"pid,omitempty"`  // init/chkpt: the process behind it
	// ShimUS (progress, optional): microseconds the checker process itself spent on the chunk,
	// from having read it to reporting it; what remains of a chunk's latency is transport and
	// driver (hydra bench checker's breakdown_ms).
	ShimUS int64 `json:"shim_us,omitempty"`
	// ShimFaults (progress, optional): page faults the checker process took on the chunk (the
	// span of ShimUS and the wait for the chunk before it: since its previous progress event,
	// unless a checkpoint or an error came between); after a checkpoint's fork these are mostly
	// copy-on-write copies (hydra bench checker's breakdown_ms.shim_faults_mean).
	ShimFaults int64 `json:"shim_faults,omitempty"`
	// Meta carries checker-specific extras (e.g. clang's diagnostic id name, the file of an
	// error inside a header).
	Meta map[string]any `json:"meta,omitempty"`
	// Notes (error, optional) are the compiler's notes on the error, in its order and within a
	// small budget: "candidate function not viable: …", "in instantiation of … requested here".
	Notes []Note `json:"notes,omitempty"`
}

// Note is one of the compiler's notes on an error.
type Note struct {
	// File is the file the note points into when it is not the checked text (a header); empty
	// when it is the checked text, where Off is its byte offset.
	File string `json:"file,omitempty"`
	Off  int    `json:"off,omitempty"`
	Line int    `json:"line,omitempty"` // 1-based presumed line (in File, or in the checked text)
	Col  int    `json:"col,omitempty"`  // 1-based column in bytes
	Diag string `json:"diag"`           // the note's message
}

// String is the note as a compiler prints it, with its place: "line 7: candidate …" in the
// checked text, "FILE:LINE: …" elsewhere.
func (n Note) String() string {
	switch {
	case n.File != "" && n.Line > 0:
		return fmt.Sprintf("%s:%d: %s", n.File, n.Line, n.Diag)
	case n.File != "":
		return n.File + ": " + n.Diag
	case n.Line > 0:
		return fmt.Sprintf("line %d: %s", n.Line, n.Diag)
	}
	return n.Diag
}

// SessionOptions configures a new session.
type SessionOptions struct {
	// Flags are compiler flags as clang takes them (-x, -std, -I, -D, …).
	Flags []string
	// Filename is the path the text is checked as (for __FILE__, quoted includes, messages).
	// It need not exist on disk.
	Filename string
	// Root is the project root: besides the directory of Filename, the system include
	// directories and those the flags name, the checker may read files under it. Empty: no
	// more than the directory of Filename. Checkers that read no files ignore it.
	Root string
}

// SubmitOptions qualifies one submitted chunk.
type SubmitOptions struct {
	// Cat is the boundary category the chunk ends on, echoed in its progress event.
	Cat string
	// Checkpoint asks for a dormant checkpoint at the end of this chunk. A checkpoint for
	// an identical prefix (same flags, same text) that already exists is shared instead.
	Checkpoint bool
	// KeepGoing asks the session to go on reporting progress (and taking the checkpoint) for
	// this chunk even after an error: for errors that were in the document before generation,
	// which the engine excuses (Request.Baseline) while the checker recovers and checks on.
	KeepGoing bool
}

// Session is one active checker session. Methods other than Events may be called from any
// goroutine; Submit never waits for checking to finish (only for the channel to take the bytes).
type Session interface {
	// ID identifies the session in events and traces.
	ID() int64
	// Submit sends the next chunk. Chunks must end where the lexer state is clean
	// (checkers/chunk cuts text that way).
	Submit(text string, opts SubmitOptions) error
	// EOS marks the end of input; the session then finishes the translation unit and sends done.
	EOS() error
	// Events delivers the session's events in order; it is closed after done or crash.
	// Each chkpt event carries one reference to its checkpoint for the receiver, who takes it
	// with Checker.Adopt(ev.ID) and must Release it when done (or leave it to Checker.Close).
	Events() <-chan Event
	// Text returns everything the session has checked or been given so far, prefix included.
	Text() string
	// Close ends the session and its process at once. It is safe to call more than once.
	Close() error
}

// Checkpoint is a dormant checker state for the prefix Text()[:Off()]. It is reference-counted:
// Retain adds a reference, Release drops one, and the last Release ends its process.
type Checkpoint interface {
	ID() int64
	Off() int
	// Text is the checked prefix the checkpoint holds (length Off()).
	Text() string
	Retain()
	Release()
}

// Checker starts sessions and resumes checkpoints. One Checker owns every process it starts:
// Close (or the death of the Go process) ends all of them.
type Checker interface {
	// Start begins a session on the empty prefix.
	Start(ctx context.Context, opts SessionOptions) (Session, error)
	// Resume begins a new session from a checkpoint; the checkpoint stays and can be resumed again.
	// The session's offsets continue from cp.Off(). The caller keeps its reference on cp.
	Resume(ctx context.Context, cp Checkpoint) (Session, error)
	// Adopt returns the checkpoint named by a chkpt event, taking over the reference that the
	// event carried (call it once per chkpt event), or nil if it is gone.
	Adopt(id int64) Checkpoint
	// Nearest returns, retained, the live checkpoint made under the same options whose text is
	// the longest prefix of text, or nil if there is none. Resuming it and submitting the rest
	// of text skips re-checking what it holds (the warm start of a shared preamble).
	Nearest(opts SessionOptions, text string) Checkpoint
	// Close ends every session and checkpoint process of this checker.
	Close() error
}

// ErrClosed is returned by operations on a session or checker that has been closed.
var ErrClosed = errors.New("checker closed")
