// Package typescript is Hydra's TypeScript checker: the checker protocol of package checkers
// on TypeScript 7's native compiler (`tsc --api`, its JSON-RPC API on stdio), pinned and
// installed by scripts/install-deps.sh into third_party/typescript. No Node runs: the compiler
// is a native binary. One compiler process per Checker serves every session: each submitted
// chunk makes the session's whole text the content of its file (a virtual file) in a new
// immutable snapshot, and the file's syntactic and semantic diagnostics there decide progress
// or error, telling text that is unfinished from text that is wrong (judge in verdict.go). A
// checkpoint is the checked text itself: resuming it costs one re-check of that text, which is
// what every chunk costs anyway. docs/ARCHITECTURE.md ("The TypeScript checker") says why.
package typescript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hydra-lsp/hydra/checkers"
)

// Version is the pinned version of the `typescript` npm package the checker runs.
const Version = "7.0.2"

// CompilerEnv names the environment variable that overrides where the compiler binary is.
const CompilerEnv = "HYDRA_TSC"

// Options configures a Checker. The zero value is ready to use.
type Options struct {
	// Compiler is TypeScript 7's native tsc binary. Empty: $HYDRA_TSC, else the one that
	// scripts/install-deps.sh installs under third_party/typescript, looked for beside
	// os.Executable()'s directory's parent and in the repository root (walking up from the
	// working directory to go.mod).
	Compiler string
}

// Checker runs one compiler process, started with the first session, for all its sessions.
// It is safe for concurrent use.
type Checker struct {
	exe string

	nextID atomic.Int64

	mu       sync.Mutex
	closed   bool
	srv      *server
	sessions map[int64]*Session
	cps      map[int64]*Checkpoint
}

var _ checkers.Checker = (*Checker)(nil)

// New returns a Checker after locating the compiler; the compiler starts with the first session.
func New(opts Options) (*Checker, error) {
	exe, err := FindCompiler(opts.Compiler)
	if err != nil {
		return nil, err
	}
	return &Checker{exe: exe, sessions: map[int64]*Session{}, cps: map[int64]*Checkpoint{}}, nil
}

// Compiler returns the compiler binary the Checker runs.
func (c *Checker) Compiler() string { return c.exe }

// compilerGlob is where scripts/install-deps.sh puts the native compiler (its npm package is
// per platform), relative to the repository root.
const compilerGlob = "third_party/typescript/node_modules/@typescript/typescript-*/lib/tsc"

// compilerProgram is where the compiler is looked for (Options.Compiler documents the order).
var compilerProgram = checkers.Program{
	Checker: "typescript checker", What: "TypeScript " + Version + "'s tsc", Env: CompilerEnv,
	BesideExe: filepath.Join("..", compilerGlob), InModule: compilerGlob, Fix: "run scripts/install-deps.sh",
}

// FindCompiler resolves the compiler binary as Options.Compiler documents.
func FindCompiler(explicit string) (string, error) { return compilerProgram.Find(explicit) }

// serverLocked returns the running compiler, starting it if needed.
func (c *Checker) serverLocked() (*server, error) {
	if c.srv != nil {
		c.srv.mu.Lock()
		err := c.srv.err
		c.srv.mu.Unlock()
		if err == nil {
			return c.srv, nil
		}
		c.srv = nil // it failed: the next session gets a fresh one
	}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "/"
	}
	srv, err := startServer(c.exe, cwd)
	if err != nil {
		return nil, fmt.Errorf("typescript checker: %w", err)
	}
	c.srv = srv
	return srv, nil
}

// Start begins a session on the empty prefix. opts.Filename is the path the text is checked
// as (it need not exist); its tsconfig.json is found from its directory up, as tsc finds it.
// opts.Flags and opts.Root are not used: the project's configuration is its tsconfig.json.
func (c *Checker) Start(ctx context.Context, opts checkers.SessionOptions) (checkers.Session, error) {
	return c.start(ctx, opts, nil)
}

// Resume begins a new session from a checkpoint (its text is the new session's prefix).
func (c *Checker) Resume(ctx context.Context, cp checkers.Checkpoint) (checkers.Session, error) {
	tcp, ok := cp.(*Checkpoint)
	if !ok || tcp.c != c {
		return nil, errors.New("typescript checker: resume: not a checkpoint of this checker")
	}
	if tcp.refs.Load() <= 0 {
		return nil, errors.New("typescript checker: resume: checkpoint released")
	}
	return c.start(ctx, tcp.opts, tcp)
}

func (c *Checker) start(ctx context.Context, opts checkers.SessionOptions, from *Checkpoint) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.Filename == "" {
		return nil, errors.New("typescript checker: SessionOptions.Filename is required")
	}
	file, err := filepath.Abs(opts.Filename)
	if err != nil {
		return nil, fmt.Errorf("typescript checker: %s: %w", opts.Filename, err)
	}
	opts.Filename = file
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, checkers.ErrClosed
	}
	srv, err := c.serverLocked()
	if err != nil {
		return nil, err
	}
	s := newSession(c, srv, c.nextID.Add(1), opts, from)
	c.sessions[s.id] = s
	go s.run()
	return s, nil
}

// Adopt returns the checkpoint named by a chkpt event, with the reference the event carried.
func (c *Checker) Adopt(id int64) checkers.Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.cps[id]
	if cp == nil {
		return nil
	}
	return cp
}

// Nearest returns, retained, the live checkpoint under the same options whose text is the
// longest prefix of text, or nil.
func (c *Checker) Nearest(opts checkers.SessionOptions, text string) checkers.Checkpoint {
	file, err := filepath.Abs(opts.Filename)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *Checkpoint
	for _, cp := range c.cps {
		if cp.opts.Filename == file && strings.HasPrefix(text, cp.text) && (best == nil || len(cp.text) > len(best.text)) {
			best = cp
		}
	}
	if best == nil {
		return nil
	}
	best.Retain()
	return best
}

// Close ends every session and the compiler process.
func (c *Checker) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sessions := make([]*Session, 0, len(c.sessions))
	for _, s := range c.sessions {
		sessions = append(sessions, s)
	}
	srv := c.srv
	c.srv = nil
	c.cps = map[int64]*Checkpoint{}
	c.mu.Unlock()
	for _, s := range sessions {
		s.Close()
	}
	if srv != nil {
		return srv.close()
	}
	return nil
}

// PID returns the compiler process's id (0 when none runs).
func (c *Checker) PID() int {
	c.mu.Lock()
	srv := c.srv
	c.mu.Unlock()
	if srv == nil {
		return 0
	}
	return srv.pid()
}

// Checkpoint is a checked prefix: resuming it re-checks its text in a new snapshot. It holds no
// process; the last Release forgets it.
type Checkpoint struct {
	c    *Checker
	id   int64
	opts checkers.SessionOptions
	text string
	refs atomic.Int64
	// unitStart is where the top-level unit being written at the checkpoint begins.
	unitStart int
}

var _ checkers.Checkpoint = (*Checkpoint)(nil)

// ID identifies the checkpoint in events.
func (cp *Checkpoint) ID() int64 { return cp.id }

// Off is the length of the checked prefix.
func (cp *Checkpoint) Off() int { return len(cp.text) }

// Text is the checked prefix.
func (cp *Checkpoint) Text() string { return cp.text }

// Retain adds a reference.
func (cp *Checkpoint) Retain() { cp.refs.Add(1) }

// Release drops a reference; the last one forgets the checkpoint.
func (cp *Checkpoint) Release() {
	if cp.refs.Add(-1) == 0 {
		cp.c.mu.Lock()
		delete(cp.c.cps, cp.id)
		cp.c.mu.Unlock()
	}
}

// newCheckpoint registers a checkpoint for text with the reference its chkpt event carries.
func (c *Checker) newCheckpoint(opts checkers.SessionOptions, text string) *Checkpoint {
	cp := &Checkpoint{c: c, id: c.nextID.Add(1), opts: opts, text: text}
	cp.refs.Store(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.cps[cp.id] = cp
	}
	return cp
}

func (c *Checker) forget(s *Session) {
	c.mu.Lock()
	delete(c.sessions, s.id)
	c.mu.Unlock()
}
