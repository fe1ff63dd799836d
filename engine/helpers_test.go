package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// The tests in this package that run searches use the real Clang checker (checkers/clang and
// its shim, built by `make build`) and, in place of a language model, the scripted stand-in
// server of engine/model/modeltest. The wrappers below only observe (or, for the model-wait
// test, hold back) what passes between the engine and the real checker.

// newChecker starts the real Clang checker; it fails the test clearly when the shim is missing.
func newChecker(t testing.TB) *clang.Checker {
	t.Helper()
	ck, err := clang.New(clang.Options{})
	if err != nil {
		t.Fatalf("the real Clang checker is needed (run `make build` at the repository root first): %v", err)
	}
	t.Cleanup(func() { ck.Close() })
	return ck
}

// newClient is a model client for the stand-in server with quick retries.
func newClient(t testing.TB, url string) model.Generator {
	t.Helper()
	c, err := model.NewClient(url, model.WithRetry(2, 10*time.Millisecond), model.WithAPIKeyEnv(""), model.WithLoadingWait(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// seq orders events across goroutines in the mechanism tests.
var seq atomic.Int64

// recorder wraps the real checker and records, per session, what the engine submitted and which
// processes the events named, so tests can count re-submitted bytes and check for leftovers.
type recorder struct {
	checkers.Checker

	mu       sync.Mutex
	sessions []*recSession
	pids     map[int]bool
	// gate, when not nil, holds back every event until it is closed.
	gate chan struct{}
}

func newRecorder(ck checkers.Checker) *recorder { return &recorder{Checker: ck, pids: map[int]bool{}} }

type recSession struct {
	checkers.Session
	r       *recorder
	resumed bool
	fromOff int
	events  chan checkers.Event

	mu       sync.Mutex
	submits  []string
	progress []seqOff // progress events as delivered, with their sequence numbers
}

type seqOff struct {
	seq int64
	off int
}

func (r *recorder) wrap(s checkers.Session, resumed bool, fromOff int) checkers.Session {
	rs := &recSession{Session: s, r: r, resumed: resumed, fromOff: fromOff, events: make(chan checkers.Event, 1024)}
	r.mu.Lock()
	r.sessions = append(r.sessions, rs)
	r.mu.Unlock()
	go func() {
		defer close(rs.events)
		for ev := range s.Events() {
			if ev.PID != 0 {
				r.mu.Lock()
				r.pids[ev.PID] = true
				r.mu.Unlock()
			}
			if r.gate != nil {
				<-r.gate
			}
			if ev.Kind == checkers.KindProgress {
				rs.mu.Lock()
				rs.progress = append(rs.progress, seqOff{seq.Add(1), ev.Off})
				rs.mu.Unlock()
			}
			rs.events <- ev
		}
	}()
	return rs
}

func (r *recorder) Start(ctx context.Context, opts checkers.SessionOptions) (checkers.Session, error) {
	s, err := r.Checker.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return r.wrap(s, false, 0), nil
}

func (r *recorder) Resume(ctx context.Context, cp checkers.Checkpoint) (checkers.Session, error) {
	s, err := r.Checker.Resume(ctx, cp)
	if err != nil {
		return nil, err
	}
	return r.wrap(s, true, cp.Off()), nil
}

func (s *recSession) Events() <-chan checkers.Event { return s.events }

func (s *recSession) Submit(text string, opts checkers.SubmitOptions) error {
	s.mu.Lock()
	s.submits = append(s.submits, text)
	s.mu.Unlock()
	return s.Session.Submit(text, opts)
}

func (s *recSession) submitted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.submits...)
}

func (r *recorder) all() []*recSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*recSession(nil), r.sessions...)
}

// alive returns the recorded checker processes that still exist (zombies do not count).
func (r *recorder) alive() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for pid := range r.pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		// The state follows the command name in parentheses.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// waitGone waits until none of the recorded processes is alive, and returns those still
// alive after a generous grace period (process exit is asynchronous; this is not a timing
// assertion).
func (r *recorder) waitGone() []int {
	var left []int
	for i := 0; i < 100; i++ {
		if left = r.alive(); len(left) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return left
}

// streamWatch wraps a generator and records, per stream, when each token was handed to the
// engine and when the stream reached its end.
type streamWatch struct {
	model.Generator
	mu      sync.Mutex
	streams []*watched
	eof     chan struct{} // closed when the first stream reaches io.EOF
	once    sync.Once
}

type watched struct {
	model.Stream
	w    *streamWatch
	mu   sync.Mutex
	toks []seqOff // sequence number and byte offset (within the completion) of each token
	n    int
}

func newStreamWatch(g model.Generator) *streamWatch {
	return &streamWatch{Generator: g, eof: make(chan struct{})}
}

func (w *streamWatch) Complete(ctx context.Context, req model.Request) (model.Stream, error) {
	s, err := w.Generator.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	ws := &watched{Stream: s, w: w}
	w.mu.Lock()
	w.streams = append(w.streams, ws)
	w.mu.Unlock()
	return ws, nil
}

func (s *watched) Next(ctx context.Context) (model.Token, error) {
	tok, err := s.Stream.Next(ctx)
	s.mu.Lock()
	if err == nil {
		s.toks = append(s.toks, seqOff{seq.Add(1), s.n})
		s.n += len(tok.Text)
	} else {
		s.w.once.Do(func() { close(s.w.eof) })
	}
	s.mu.Unlock()
	return tok, err
}

// nodeText finds a trace node's rollout text is consistent: used by tests to look nodes up.
func traceNodes(res *Result, kind string) []TraceNode {
	var out []TraceNode
	for _, n := range res.Trace.Nodes {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// rule is a short way to write a stand-in rule that streams text in small pieces.
func rule(when, text string) modeltest.Rule {
	return modeltest.Rule{PromptContains: when, Text: text, Chunk: 3}
}

// continuations are stand-in rules that continue body from any line boundary the prompt
// (prefix + the first lines of body) ends at, as a model asked to go on would.
func continuations(prefix, body string) []modeltest.Rule {
	var out []modeltest.Rule
	for k := 0; k <= len(body); k++ {
		if k == 0 || body[k-1] == '\n' {
			out = append(out, modeltest.Rule{PromptSuffix: prefix + body[:k], Text: body[k:], Chunk: 3})
		}
	}
	// Longest prompt first, so that a rule for a shorter prompt does not match a longer one.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
