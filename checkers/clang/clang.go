// Package clang is Hydra's Clang checker: a Go driver for hydra-clang-shim (shim/main.cpp), a
// stock Clang 19 front end that checks C/C++ text chunk by chunk and forks dormant checkpoints of
// itself (checkers/clang/README.md). Call New to get a *Checker, which implements checkers.Checker.
//
// Every shim process a Checker starts (active sessions, dormant checkpoints and the sessions
// resumed from them) holds the read end of the Checker's lifeline pipe and exits when the
// Checker closes it or the Go process dies, even by kill -9 (an active session's watchdog thread
// notices it in the middle of a parse too); root processes get a parent-death signal from this
// process, resumed sessions from their checkpoint. Processes are signalled only through pidfds,
// never by a raw pid that may have been reused. Checkpoints are reached only through a private
// socket pair the shim passes to the driver (SCM_RIGHTS): no other process can resume or free
// one.
//
// The shim reads no file outside the checked file's directory, SessionOptions.Root, the
// directories and files the flags name and the system include paths: an include of anything
// else is reported as Clang's fatal "file not found" (README.md, "File access").
package clang

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/internal/childproc"
)

// DefaultTimeout is how long a session may stay silent while the driver waits for an answer
// from it (its init, the verdict on a submitted chunk, or done after EOS) when Options.Timeout
// is zero. It is the one per-chunk time limit: hydra check --timeout, hydra generate --timeout
// and the language server's checkTimeout setting replace it (0 there: no limit).
const DefaultTimeout = 2 * time.Minute

// DefaultSpin is how long a session's readers spin before they block when Options.Spin is
// zero: long enough for most answers on a line (tens of microseconds), short enough that a
// spin that fails costs little; its back-off does the rest.
const DefaultSpin = 50 * time.Microsecond

// ShimEnv names the environment variable that overrides where the shim binary is found.
const ShimEnv = "HYDRA_CLANG_SHIM"

// Options configures a Checker. The zero value is ready to use.
type Options struct {
	// ShimPath is the hydra-clang-shim binary. Empty: $HYDRA_CLANG_SHIM, else the file next to
	// os.Executable(), else <repo root>/bin/hydra-clang-shim (walking up from the working
	// directory to go.mod).
	ShimPath string
	// SocketPrefix is ignored. Checkpoints used to listen on abstract UNIX sockets named after it;
	// they now have no name at all (Checker's documentation). Kept so that callers compile.
	SocketPrefix string
	// Timeout bounds how long a session may stay silent while an answer is due; the session then
	// ends with a crash event. Zero means DefaultTimeout, negative means no limit. A session's
	// init (the process starting) may take at least 30 s (minInitTimeout) whatever the limit.
	Timeout time.Duration
	// Stderr receives the shim processes' own standard error (Clang crash dumps, internal
	// warnings). Nil discards it.
	Stderr *os.File
	// OnDroppedFlag, when set, is told each flag the checker left out of a session because
	// Clang does not take it as GCC does (an unknown argument, a GCC-only warning option such as
	// -Wlogical-op), with Clang's own reason; once per flag and Checker.
	OnDroppedFlag func(flag, why string)
	// Env is added to the shim processes' environment (KEY=VALUE), e.g. HYDRA_SHIM_NO_TRIM=1,
	// which hydra bench checker uses to measure a lever side by side.
	Env []string
	// PlainJSON makes the driver encode and decode every protocol line with encoding/json,
	// without the hand-written fast path for submit headers and progress events (wire.go); for
	// measuring that lever side by side (hydra bench checker --levers).
	PlainJSON bool
	// Spin is how long a session's readers keep trying before they block: the driver's, for
	// the shim's next event, and the shim's, for the next chunk (HYDRA_SHIM_SPIN_US). The other
	// side usually answers within tens of microseconds and a blocked reader pays a wake-up. Each
	// reader backs off while its spins come to nothing (SpinGate), so that on a busy machine it
	// does not hold a processor the other side needs. Zero means DefaultSpin; negative, never
	// spin (docs/checker-benchmark.md, "Spinning that backs off, again"; hydra bench checker
	// --levers measures it).
	Spin time.Duration
	// SocketOnly sends a session's chunks and events on its socket alone, without the
	// shared-memory ring that otherwise carries them (ring.go); for measuring that lever side
	// by side (hydra bench checker --levers).
	SocketOnly bool
}

// Checker starts shim sessions and owns every process behind them. It is safe for concurrent
// use.
type Checker struct {
	shim    string
	env     []string
	plain   bool
	spin    time.Duration
	ring    bool         // give each session a shared-memory ring (!Options.SocketOnly)
	timeout atomic.Int64 // per-answer limit in nanoseconds; <= 0: none (SetTimeout)
	stderr  *os.File

	// lifeline is the write end of the pipe every shim process polls; closing it (or dying)
	// ends them all. lifelineR is the read end handed to root shims.
	lifeline, lifelineR *os.File

	nextID atomic.Int64

	onDropped func(flag, why string)

	// mu guards the fields below.
	mu       sync.Mutex
	closed   bool
	told     map[string]bool // flags given to onDropped
	sessions map[int64]*Session
	cps      map[int64]*Checkpoint
	byHash   map[[32]byte]*Checkpoint
}

var _ checkers.Checker = (*Checker)(nil)

// New returns a Checker after locating the shim binary.
func New(opts Options) (*Checker, error) {
	shim, err := findShim(opts.ShimPath)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("clang checker: lifeline pipe: %w", err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	env, spin := opts.Env, cmp.Or(opts.Spin, DefaultSpin)
	spin = max(spin, 0)
	if spin > 0 {
		env = append(slices.Clip(env), "HYDRA_SHIM_SPIN_US="+strconv.FormatInt(spin.Microseconds(), 10))
	}
	c := &Checker{
		shim:      shim,
		env:       env,
		onDropped: opts.OnDroppedFlag,
		told:      map[string]bool{},
		plain:     opts.PlainJSON,
		spin:      spin,
		ring:      !opts.SocketOnly,
		stderr:    opts.Stderr,
		lifeline:  w,
		lifelineR: r,
		sessions:  map[int64]*Session{},
		cps:       map[int64]*Checkpoint{},
		byHash:    map[[32]byte]*Checkpoint{},
	}
	c.timeout.Store(int64(timeout))
	return c, nil
}

// SetTimeout replaces the per-answer time limit (Options.Timeout) for sessions started from now
// on: zero or negative means no limit. The language server calls it when its checkTimeout
// setting changes.
func (c *Checker) SetTimeout(d time.Duration) { c.timeout.Store(int64(d)) }

// sessionTimeout is the per-answer limit a session starting now runs under (0: none).
func (c *Checker) sessionTimeout() time.Duration { return max(time.Duration(c.timeout.Load()), 0) }

// TimeoutFlag converts a command line's --timeout (0: never) to Options.Timeout.
func TimeoutFlag(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// ShimPath returns the shim binary the Checker runs.
func (c *Checker) ShimPath() string { return c.shim }

// FindShim returns the shim binary a Checker with an empty Options.ShimPath runs, or an error
// that names every place it looked.
func FindShim() (string, error) { return findShim("") }

// shimProgram is where the shim is looked for (Options.ShimPath documents the order).
var shimProgram = checkers.Program{
	Checker: "clang checker", What: "hydra-clang-shim", Env: ShimEnv,
	BesideExe: "hydra-clang-shim", InModule: "bin/hydra-clang-shim", Fix: "run `make build`",
}

// findShim resolves the shim binary as Options.ShimPath documents.
func findShim(explicit string) (string, error) { return shimProgram.Find(explicit) }

// resolved is a session's configuration after the driver's defaults are applied.
type resolved struct {
	flags    []string
	filename string
	root     string
	key      string // identity of (flags, filename, root) for checkpoint sharing
}

// DefaultFilename is the name text is checked as when SessionOptions.Filename is empty.
const DefaultFilename = "main.cpp"

// resolve applies the language default: without an explicit -x, a .c file is C and anything
// else C++.
func resolve(opts checkers.SessionOptions) resolved {
	name := opts.Filename
	if name == "" {
		name = DefaultFilename
	}
	hasX := false
	for _, f := range opts.Flags {
		if f == "-x" || (strings.HasPrefix(f, "-x") && len(f) > 2) || strings.HasPrefix(f, "--language") {
			hasX = true
		}
	}
	var flags []string
	if !hasX {
		lang := "c++"
		if strings.HasSuffix(name, ".c") {
			lang = "c"
		}
		flags = append(flags, "-x", lang)
	}
	flags = append(flags, opts.Flags...)
	return resolved{
		flags:    flags,
		filename: name,
		root:     opts.Root,
		key:      strings.Join(flags, "\x00") + "\x00\x00" + name + "\x00\x00" + opts.Root,
	}
}

// prefixHash identifies a checkpointable state: same flags, same file name, same text.
func prefixHash(key string, text []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(key))))
	h.Write([]byte{0})
	h.Write([]byte(key))
	h.Write(text)
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// shimEnv is the shim's environment: ours, with glibc's malloc asked to back its arenas with
// transparent huge pages (glibc.malloc.hugetlb=1). Fewer page-table entries make each
// checkpoint's fork() about a third faster (measured 1.1 ms against 1.6 ms after
// <bits/stdc++.h>) at no cost in a dormant checkpoint's private memory, since the kernel splits
// a shared huge page on the first write instead of copying it. The shim's own malloc
// (shim/alloc.cpp) asks the same for its memory (MADV_HUGEPAGE) until the session's first fork;
// the tunable still serves glibc's malloc where that one is used (HYDRA_SHIM_GLIBC_MALLOC=1, the
// first calls at start-up).
func shimEnv(env []string) []string {
	const tunable = "glibc.malloc.hugetlb=1"
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GLIBC_TUNABLES="); ok {
			if !strings.Contains(v, "glibc.malloc.hugetlb") {
				env[i] = kv + ":" + tunable
			}
			return env
		}
	}
	return append(env, "GLIBC_TUNABLES="+tunable)
}

// Start begins a session on the empty prefix in a new shim process. The session lives until it
// reports done, is closed, or ctx is done (then it ends with a crash event saying so).
func (c *Checker) Start(ctx context.Context, opts checkers.SessionOptions) (checkers.Session, error) {
	s, err := c.StartSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// StartSession is Start with the concrete result type.
func (c *Checker) StartSession(ctx context.Context, opts checkers.SessionOptions) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start clang session: %w", err)
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, checkers.ErrClosed
	}
	res := resolve(opts)
	id := c.nextID.Add(1)

	mine, theirs, ring, err := c.channel()
	if err != nil {
		return nil, fmt.Errorf("start clang session: %w", err)
	}
	defer theirs.Close()
	if ring != nil {
		defer ring.Close()
	}

	cmd := ShimProcess{
		Channel: theirs, Lifeline: c.lifelineR, Ring: ring,
		Session: id, File: res.filename, Root: res.root, Flags: res.flags,
	}.Command(context.Background(), c.shim)
	cmd.Env = append(shimEnv(os.Environ()), c.env...)
	if c.stderr != nil {
		cmd.Stderr = c.stderr
	}
	childproc.Bind(cmd)
	if err := cmd.Start(); err != nil {
		mine.Close()
		return nil, fmt.Errorf("start clang session: %w", err)
	}
	s := newSession(c, id, 0, res, mine, nil)
	s.cmd = cmd
	s.pid = cmd.Process.Pid
	s.exited = make(chan struct{})
	go func() {
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	if !c.register(s) {
		s.Close()
		return nil, checkers.ErrClosed
	}
	s.run(ctx)
	return s, nil
}

// channel makes a new session's channel (newChannel with the checker's settings).
func (c *Checker) channel() (*fdConn, *os.File, *os.File, error) { return newChannel(c.spin, c.ring) }

// newChannel makes a session's channel: our end, reading with spin, and the shim's socket and,
// when ring is set, its ring (else nil) to hand over.
func newChannel(spin time.Duration, ring bool) (*fdConn, *os.File, *os.File, error) {
	mine, theirs, err := socketPair("hydra-channel", spin)
	if err != nil || !ring {
		return mine, theirs, nil, err
	}
	shm, ringFile, err := newShmRing()
	if err != nil {
		mine.Close()
		theirs.Close()
		return nil, nil, nil, err
	}
	mine.ring = shm
	return mine, theirs, ringFile, nil
}

// register records a live session; false if closed.
func (c *Checker) register(s *Session) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.sessions[s.id] = s
	return true
}

func (c *Checker) unregister(s *Session) {
	c.mu.Lock()
	delete(c.sessions, s.id)
	c.mu.Unlock()
}

// Resume begins a new session from cp; cp stays and may be resumed again. The session lives
// until it reports done, is closed, or ctx is done.
func (c *Checker) Resume(ctx context.Context, cp checkers.Checkpoint) (checkers.Session, error) {
	ccp, ok := cp.(*Checkpoint)
	if !ok || ccp == nil || ccp.c != c {
		return nil, fmt.Errorf("resume checkpoint: not a checkpoint of this clang checker")
	}
	s, err := c.ResumeSession(ctx, ccp)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ResumeSession is Resume with the concrete types.
func (c *Checker) ResumeSession(ctx context.Context, cp *Checkpoint) (*Session, error) {
	c.mu.Lock()
	live := !c.closed && c.cps[cp.id] == cp && cp.refs > 0
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, checkers.ErrClosed
	}
	if !live {
		return nil, fmt.Errorf("resume checkpoint %d: already freed", cp.id)
	}
	mine, theirs, ring, err := c.channel()
	if err != nil {
		return nil, fmt.Errorf("resume checkpoint %d: %w", cp.id, err)
	}
	id := c.nextID.Add(1)
	err = cp.resume(id, theirs, ring)
	theirs.Close()
	if ring != nil {
		ring.Close()
	}
	if err != nil {
		mine.Close()
		return nil, fmt.Errorf("resume checkpoint %d: %w", cp.id, err)
	}
	s := newSession(c, id, cp.id, cp.res, mine, []byte(cp.text))
	if !c.register(s) {
		s.Close()
		return nil, checkers.ErrClosed
	}
	s.run(ctx)
	return s, nil
}

// Adopt returns the checkpoint a chkpt event named, taking over the reference the event carried.
func (c *Checker) Adopt(id int64) checkers.Checkpoint {
	if cp := c.AdoptCheckpoint(id); cp != nil {
		return cp
	}
	return nil
}

// AdoptCheckpoint is Adopt with the concrete result type.
func (c *Checker) AdoptCheckpoint(id int64) *Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cp := c.cps[id]; cp != nil && cp.refs > 0 {
		return cp
	}
	return nil
}

// Nearest returns, retained, the live checkpoint made under the same options whose text is the
// longest prefix of text, or nil.
func (c *Checker) Nearest(opts checkers.SessionOptions, text string) checkers.Checkpoint {
	if cp := c.NearestCheckpoint(opts, text); cp != nil {
		return cp
	}
	return nil
}

// NearestCheckpoint is Nearest with the concrete result type.
func (c *Checker) NearestCheckpoint(opts checkers.SessionOptions, text string) *Checkpoint {
	key := resolve(opts).key
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *Checkpoint
	for _, cp := range c.cps {
		if cp.refs <= 0 || cp.res.key != key || len(cp.text) > len(text) || !strings.HasPrefix(text, cp.text) {
			continue
		}
		if best == nil || cp.off > best.off {
			best = cp
		}
	}
	if best != nil {
		best.refs++
	}
	return best
}

// Live reports how many sessions and checkpoints the Checker currently holds.
func (c *Checker) Live() (sessions, checkpoints int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions), len(c.cps)
}

// Close ends every session and checkpoint process of the checker. It is safe to call more
// than once.
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
	cps := make([]*Checkpoint, 0, len(c.cps))
	for _, cp := range c.cps {
		cps = append(cps, cp)
	}
	c.sessions = map[int64]*Session{}
	c.cps = map[int64]*Checkpoint{}
	c.byHash = map[[32]byte]*Checkpoint{}
	c.mu.Unlock()

	for _, s := range sessions {
		s.Close()
	}
	for _, cp := range cps {
		cp.kill()
	}
	// Whatever is left (a checkpoint whose chkpt event was never read, a resumed session not yet
	// initialised) sees the lifeline hang up.
	err := c.lifeline.Close()
	c.lifelineR.Close()
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("close clang checker: %w", err)
	}
	return nil
}

// droppedFlags passes the flags a shim's init event says it left out to OnDroppedFlag, each
// once.
func (c *Checker) droppedFlags(meta map[string]any) {
	list, _ := meta["dropped_flags"].([]any)
	if c.onDropped == nil || len(list) == 0 {
		return
	}
	for _, x := range list {
		m, _ := x.(map[string]any)
		flag, _ := m["flag"].(string)
		why, _ := m["why"].(string)
		c.mu.Lock()
		told := c.told[flag]
		c.told[flag] = true
		c.mu.Unlock()
		if flag != "" && !told {
			c.onDropped(flag, why)
		}
	}
}
