// Package engine is Hydra's runtime (docs/ARCHITECTURE.md, docs/engine.md): one Search binds streamed generations
// (rollouts) to checker sessions, builds the search tree from checker events, asks a Policy what
// to do on every new node, and carries out spawn / kill / prune with rollback on both the model's
// side (prompt = prefix up to the rollback point) and the checker's side (resume the nearest
// checkpoint). It knows nothing of LSP; lsp/ and cmd/hydra call Search.
//
// This file is the contract the rest of the project programs against.
package engine

import (
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/engine/model"
)

// Request is one generation: continue Prefix (and, in whole-document mode, end where Suffix
// begins) until the checker accepts the result.
type Request struct {
	// Prompt is what the model sees before the generated text. Empty means Prefix.
	// When set, it must end with the same text the generation continues (typically it is an
	// instruction followed by Prefix, or a context-budgeted tail of Prefix).
	Prompt string
	// Prefix is the document text before the insertion point; it is checked once, as the root.
	Prefix string
	// Suffix is the document text after the insertion point (whole-document mode): when
	// generation ends it is fed to the checker too, so "accepted" means the whole file compiles.
	Suffix string
	// Filename and Flags are how the checker compiles the text.
	Filename string
	Flags    []string
	// Root is the project directory: the checker may read files under it (besides the include
	// paths). Empty means the directory of Filename.
	Root string

	Model  string
	Params model.Params

	// Policy decides rollbacks; nil means DefaultPolicy().
	Policy Policy
	Budget Budget

	// Baseline (whole-document mode) makes errors that were in the document before not the
	// model's: the document with the generated region empty (Prefix+Suffix) is checked once, the
	// first time an error comes, and an error counts only when it is new relative to it (same
	// message, same position once shifted by the generated text). Excused errors neither stop a
	// rollout nor spend an attempt; the checker goes on past them. Result.Baseline lists them.
	Baseline bool

	// StopAtClose ends generation structurally when the construct being written at the
	// insertion point is closed (brace depth back to where it started).
	StopAtClose bool

	// CheckpointLines asks the checker for a checkpoint every this many lines of generated
	// text (besides the ones after the preamble, at the start node and at the last clean cut
	// before lines held inside an open #if, which probes resume: engine/probe.go); 0 means
	// DefaultCheckpointLines, a negative value none but those.
	CheckpointLines int

	// OnUpdate, when set, is called (from the search's goroutines, serially) as the search goes.
	OnUpdate func(Update)
}

// Budget bounds a search. Zero values mean the defaults (see DefaultBudget).
type Budget struct {
	MaxTokens      int           // output tokens over all rollouts
	MaxAttempts    int           // rollouts started (the first counts)
	Deadline       time.Duration // wall time
	MaxCheckpoints int           // live checkpoints held by the search
	MaxProcesses   int           // checker processes alive at once (sessions + checkpoints)
}

// DefaultBudget is what a zero Budget means: at least 8 attempts.
func DefaultBudget() Budget {
	return Budget{MaxTokens: 16384, MaxAttempts: 8, Deadline: 5 * time.Minute, MaxCheckpoints: 64, MaxProcesses: 16}
}

// Update is a step of a running search, for progress displays and streaming edits.
type Update struct {
	// Kind: "attempt" (a rollout started), "accepted" (Accepted grew), "rollback" (Accepted
	// shrank to the rollback point), "error" (the checker rejected; Error set), "note" (Message
	// is something the summary should say, also in Result.Notes), "waiting" (Message says what
	// the model client waits for: a server that is starting or loading its model), "done".
	Kind    string
	Attempt int
	// Accepted is the generated text (without Prefix) accepted so far on the rollout shown.
	Accepted string
	// Message is a one-line human description, e.g.
	// "attempt 2: rolled back 6 lines — use of undeclared identifier 'apples'".
	Message string
	Error   *checkers.Event
}

// Result is how a search ended. A search always ends with a Result unless infrastructure fails.
type Result struct {
	// Text is the accepted generated text (the continuation only). The whole document is
	// Prefix + Text + Suffix. When OK is false it is the best attempt's text.
	Text   string
	OK     bool
	Reason string // "accepted", "max_attempts", "max_tokens", "deadline", "cancelled", "user_edit", …
	// Diagnostics are the best attempt's errors when OK is false.
	Diagnostics []checkers.Event
	Stats       Stats
	Trace       *Trace
	// Notes are what a summary should say besides Reason, each once: the prompt was cut to fit
	// the model's context, an attempt stopped at the model's length limit, the server sent no
	// log-probabilities for a policy that needs them, token counts are estimates.
	Notes []string
	// Baseline are the errors that were in the document before generation (Request.Baseline)
	// and that rollouts met and excused, in document order, with their offsets and lines in
	// Prefix+Suffix.
	Baseline []checkers.Event
}

// Stats are what a search cost.
type Stats struct {
	OutputTokens       int `json:"output_tokens"`
	PromptTokens       int `json:"prompt_tokens"`
	CachedPromptTokens int `json:"cached_prompt_tokens"`
	// PromptTokensEstimated is the part of PromptTokens counted by Hydra, not reported by the
	// server (rollouts killed before the server's usage report).
	PromptTokensEstimated int           `json:"prompt_tokens_estimated"`
	Attempts              int           `json:"attempts"`
	Rollbacks             int           `json:"rollbacks"`
	RollbackLines         []int         `json:"rollback_lines"` // distance of each rollback, in lines back from the error
	Wall                  time.Duration `json:"wall_ns"`
	// ModelWaitOnChecker is the time token streaming waited for the checker (~0 when async).
	ModelWaitOnChecker time.Duration `json:"model_wait_on_checker_ns"`
	// TimeToFirstCheck is from the start of the search to the checker's first verdict (progress
	// or error) on a generated line: checking the prompt's own lines (the prefix, its
	// #includes) is part of it, a progress event inside the prefix does not end it.
	TimeToFirstCheck  time.Duration `json:"time_to_first_check_ns"`
	CheckpointResumes int           `json:"checkpoint_resumes"`
	ResubmittedBytes  int           `json:"resubmitted_bytes"` // text re-checked after a resume
	// Probes counts the throw-away checks of lines held inside an open conditional (an `#if`
	// whose `#endif` has not come), which confirm them before the real cut (engine/probe.go).
	Probes int `json:"probes,omitempty"`
	// ProbeBytes is the text the probes submitted: from the checkpoint each resumed to the end
	// of the held lines, with the closing lines.
	ProbeBytes int `json:"probe_bytes,omitempty"`
}

// Trace is the whole search tree, for --json output and debugging.
type Trace struct {
	Nodes    []TraceNode    `json:"nodes"`
	Rollouts []TraceRollout `json:"rollouts"`
	// Notes are Result.Notes, for a trace read on its own.
	Notes []string `json:"notes,omitempty"`
}

// TraceNode is one node of the search tree as recorded.
type TraceNode struct {
	ID         int    `json:"id"`
	Parent     int    `json:"parent"` // -1 for the root
	Kind       string `json:"kind"`
	Off        int    `json:"off"`
	Line       int    `json:"line,omitempty"`
	Cat        string `json:"cat,omitempty"`
	Diag       string `json:"diag,omitempty"`
	Rollout    int    `json:"rollout"`
	Checkpoint int64  `json:"checkpoint,omitempty"`
	Pruned     bool   `json:"pruned,omitempty"`
	// AtMS is when the node was made (the checker's event reached the search), in
	// milliseconds since the search started.
	AtMS float64 `json:"at_ms"`
}

// TracePoint is a moment of a rollout's stream: the checked text reached Off at AtMS
// milliseconds since the search started.
type TracePoint struct {
	AtMS float64 `json:"at_ms"`
	Off  int     `json:"off"`
}

// TraceRollout is one rollout as recorded.
type TraceRollout struct {
	ID       int    `json:"id"`
	Start    int    `json:"start"` // node id
	Feedback string `json:"feedback,omitempty"`
	Tokens   int    `json:"tokens"`
	Outcome  string `json:"outcome"` // "accepted", "error", "killed", "stream_cut", "budget", "length", …
	// FinishReason is the model server's finish_reason ("stop", "length"), when it sent one.
	FinishReason string `json:"finish_reason,omitempty"`
	// StartMS is when the rollout was spawned, Stream when its tokens arrived (at most
	// maxStreamPoints, evenly thinned), in milliseconds since the search started.
	StartMS float64      `json:"start_ms"`
	Stream  []TracePoint `json:"stream,omitempty"`
}

// NodeKind says what a node stands for.
type NodeKind int

// Node kinds.
const (
	NodeRoot     NodeKind = iota // the starting prefix (checked once)
	NodeProgress                 // accepted up to Off
	NodeError                    // rejected at Off
	NodeDone                     // end of input, whole text accepted
	NodeFail                     // rollout failed without a checker error (stream cut; a checker crash is a NodeError)
)

// Node is a vertex of the search tree. Policies read nodes and never change them.
type Node struct {
	ID   int
	Kind NodeKind
	Off  int // byte offset in the checked text (Prefix counts from 0)
	Line int // 1-based line of Off (error: the checker's line)
	Col  int
	Cat  string
	// Depth (progress nodes) is the brace depth at Off, counted from the start of the checked
	// text by the language's lexer (checkers/lang): 0 where a top-level unit can end.
	Depth int
	Diag  string
	// Notes are the checker's notes on an error (candidates, instantiation stack), as it sent them.
	Notes   []checkers.Note
	Rollout int // rollout that produced it
	// Text is the whole checked text up to Off (Prefix included).
	Text     string
	Parent   *Node
	Children []*Node
	// Checkpoint, when not nil, is a dormant checker state for the text up to Off.
	Checkpoint checkers.Checkpoint
	Pruned     bool
}

// EndsDecl says whether the text up to n ends a top-level declaration or the preamble (where
// rolling back starts a declaration afresh): the root, or a progress node whose chunk ended a
// unit of category decl or preamble (the chunker's or the checker's word) at brace depth 0 from
// the start of the checked text (Depth, the engine's measure through the language seam). Both
// are needed: the category alone is the chunker's view from where its rollout started, and the
// depth alone would count a line that ends in the middle of an expression.
func (n *Node) EndsDecl() bool {
	if n.Kind == NodeRoot {
		return true
	}
	return n.Kind == NodeProgress && n.Depth <= 0 && (n.Cat == checkers.BoundaryDecl || n.Cat == checkers.BoundaryPreamble)
}

// Policy decides what the search does when a node appears (the paper's on_node).
type Policy interface {
	OnNode(n *Node, s *State) []Action
}

// Mode is how a policy wants generation and checking interleaved. A Policy that also
// implements Moder chooses; others get Async.
type Mode int

// Modes.
const (
	Async     Mode = iota // check beside generation; never wait (Hydra)
	Lockstep              // wait for the checker after every chunk (per-token constrained decoding's stand-in)
	PostHoc               // generate the whole program, then check it (post-hoc repair)
	Unchecked             // never check (unconstrained baseline); the result is accepted as generated
)

// Moder is implemented by policies that need a Mode other than Async.
type Moder interface{ Mode() Mode }

// LogprobsWanter is implemented by policies that read token log-probabilities. The search asks
// the model for the top Top alternatives per token (unless Request.Params sets Logprobs), and
// when the server sends none it says once, in Result.Notes and a "note" Update, that the policy
// works without them: Fallback describes how (e.g. "local-first rollback").
type LogprobsWanter interface {
	WantsLogprobs() (top int, fallback string)
}

// Action is what a policy asks for: Spawn, Kill or Prune.
type Action interface{ isAction() }

// Spawn starts a rollout from node From: the model is prompted with Request.Prompt + the
// accepted text up to From + Feedback as a code comment; the checker resumes the nearest
// checkpointed ancestor of From.
type Spawn struct {
	From     *Node
	Feedback string
	Params   *model.Params // nil = the request's
}

// Kill stops a rollout's model stream and checker session at once.
type Kill struct{ Rollout int }

// Prune removes a node's subtree and releases its checkpoints.
type Prune struct{ Node *Node }

func (Spawn) isAction() {}
func (Kill) isAction()  {}
func (Prune) isAction() {}

// RolloutView is a rollout as a policy sees it.
type RolloutView struct {
	ID       int
	Start    *Node // node it was spawned from (root for the first)
	Head     *Node // newest node on it
	Live     bool
	Feedback string
	// Tokens streamed so far, with their offsets in the checked text (for uncertainty-guided
	// rollback); Logprob/Entropy are zero unless the request asked for logprobs.
	Tokens []TokenInfo
}

// TokenInfo is one streamed token of a rollout.
type TokenInfo struct {
	Off     int // offset of its first byte in the checked text
	Text    string
	Logprob float64
	Entropy float64 // over the reported top alternatives, in nats
	// HasLogprob tells whether the server reported Logprob; without it Logprob and Entropy are
	// 0 and mean nothing (not certainty).
	HasLogprob bool
}
