package lsp

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
)

// Warm start (clangd's cached preamble, as a dormant checker checkpoint). Parsing a preamble
// such as <bits/stdc++.h> takes over a second; resuming a checkpoint a few milliseconds. While
// a C/C++ document is open, the server keeps a checkpoint of its preamble (the leading
// #include/#define lines), built after the document stops changing for warmDebounce, one per
// distinct preamble + flags + directory, shared by the documents that have it. Together they
// stay under a budget of bytes: the private memory of their processes (/proc/PID/smaps_rollup,
// measured again each time the cache changes and every warmRecheck: a checkpoint's pages become
// its own once the session that made it, or a search that resumed it, has gone); over it, the least recently
// used ones without a document go first, then the least recently used. Searches reach them
// through the checker's Nearest, which the wrapper below extends to these shared checkpoints.

// warmDebounce is how long a document must rest before its preamble is (re)built.
const warmDebounce = 300 * time.Millisecond

// warmBuildTimeout bounds building one preamble checkpoint.
const warmBuildTimeout = 60 * time.Second

// warmConcurrency is how many preamble checkpoints are built at once. Each build is a checker
// process parsing a preamble (a heavy one holds tens of megabytes); opening many documents queues the
// rest, and a queued build is cancelled when no document wants it any more.
const warmConcurrency = 2

// warmRecheck is how often the budget is checked again while checkpoints are kept: sessions
// end asynchronously, and only then do the pages they shared become the checkpoints' own.
const warmRecheck = 2 * time.Second

// privateMemory is implemented by checkpoints that can measure their process's private memory
// (checkers/clang's, from /proc/PID/smaps_rollup).
type privateMemory interface {
	PrivateBytes() (int64, error)
}

// warmEntry is one preamble checkpoint, built or being built.
type warmEntry struct {
	key      string
	opts     checkers.SessionOptions
	preamble string
	cp       checkers.Checkpoint // nil until built
	failed   string              // why building failed ("" if it did not)
	building bool
	queued   bool               // building, waiting for one of the warmConcurrency slots
	cancel   context.CancelFunc // ends the build (set while building)
	users    map[string]bool    // URIs of the documents with this preamble
	lastUsed time.Time
	buildDur time.Duration
	bytes    int64 // private memory of cp's process when last measured
}

// warmCache holds the preamble checkpoints.
type warmCache struct {
	checker checkers.Checker
	budget  int64 // bytes of private memory the checkpoints may hold together
	logf    func(string, ...any)

	mu      sync.Mutex
	entries map[string]*warmEntry
	byDoc   map[string]string // URI → entry key
	// starved holds the keys dropped for the budget while documents still had them (see useLocked).
	starved map[string]bool
	timers  map[string]*time.Timer
	// slots holds a token per build running (at most warmConcurrency).
	slots  chan struct{}
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newWarmCache(c checkers.Checker, budget int64, logf func(string, ...any)) *warmCache {
	ctx, cancel := context.WithCancel(context.Background())
	w := &warmCache{checker: c, budget: budget, logf: logf, entries: map[string]*warmEntry{},
		byDoc: map[string]string{}, starved: map[string]bool{}, timers: map[string]*time.Timer{},
		slots: make(chan struct{}, warmConcurrency), ctx: ctx, cancel: cancel}
	w.wg.Add(1)
	go w.recheck()
	return w
}

// preambleOf returns the preamble of text (the language's Syntax.PreambleEnd, for C/C++ the
// leading block of preprocessor lines, with the comments among them) when it includes a header,
// "" otherwise (a few #defines are not worth a checkpoint). An unfinished last line is never
// part of it: it is still being typed.
func preambleOf(text string, syn lang.Syntax) string {
	text = text[:strings.LastIndexByte(text, '\n')+1]
	pre := text[:syn.PreambleEnd(text)]
	if !includeRE.MatchString(pre) {
		return ""
	}
	return pre
}

// includeRE finds an #include or #import directive line (the first may follow a byte-order mark).
var includeRE = regexp.MustCompile(`(?m)^\x{FEFF}?[ \t]*#[ \t]*(?:include|import)\b`)

// warmKey identifies a shareable preamble checkpoint: flags, directory (quoted includes), the
// project root (what the checker may read) and preamble text.
func warmKey(opts checkers.SessionOptions, preamble string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q\x00%s\x00%s\x00", opts.Flags, filepath.Dir(opts.Filename), opts.Root)
	h.Write([]byte(preamble))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// schedule (re)builds the document's preamble checkpoint after warmDebounce; describe is
// called then and returns the document's options and text (ok false: nothing to warm).
func (w *warmCache) schedule(uri string, describe func() (checkers.SessionOptions, string, bool)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if t := w.timers[uri]; t != nil {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(warmDebounce, func() {
		opts, text, ok := describe()
		pre := ""
		if ok {
			pre = preambleOf(text, lang.C.Syntax(opts.Flags, opts.Filename)) // C/C++ documents only (scheduleWarm)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		// A timer that fired as its document closed (forget) or changed again (a newer timer)
		// must not act: Stop cannot recall a function that has already started.
		if w.timers[uri] != t {
			return
		}
		delete(w.timers, uri)
		w.useLocked(uri, opts, pre)
	})
	w.timers[uri] = t
}

// useLocked records that the document uri has this preamble and builds its checkpoint if
// needed. w.mu is held.
func (w *warmCache) useLocked(uri string, opts checkers.SessionOptions, preamble string) {
	if w.closed {
		return
	}
	key := ""
	if preamble != "" {
		key = warmKey(opts, preamble)
	}
	old, had := w.byDoc[uri]
	if old != key {
		w.leaveLocked(old, uri)
	}
	if key == "" {
		delete(w.byDoc, uri)
		w.unstarveLocked(old)
		return
	}
	w.byDoc[uri] = key
	w.unstarveLocked(old)
	e := w.entries[key]
	if e == nil && had && old == key && w.starved[key] {
		// Dropped for the budget while this document had it: rebuilding it on every edit would
		// only push another checkpoint out. It comes back when the preamble changes or another
		// document opens with it.
		return
	}
	if e == nil {
		delete(w.starved, key)
		e = &warmEntry{key: key, opts: opts, preamble: preamble, users: map[string]bool{}, building: true, queued: true}
		var ctx context.Context
		ctx, e.cancel = context.WithCancel(w.ctx)
		w.entries[key] = e
		w.wg.Add(1)
		go w.build(ctx, e)
	}
	e.users[uri] = true
	e.lastUsed = time.Now()
	w.evictLocked()
}

// build waits for a slot (or for ctx to end: the build was cancelled while queued), then runs a
// session over the preamble with a checkpoint at its end and keeps the checkpoint.
func (w *warmCache) build(ctx context.Context, e *warmEntry) {
	defer w.wg.Done()
	defer e.cancel()
	acquired := false
	select {
	case w.slots <- struct{}{}:
		acquired = true
	case <-ctx.Done():
	}
	w.mu.Lock()
	e.queued = false
	if ctx.Err() != nil { // cancelled while queued (select may have taken a free slot all the same)
		e.building = false
		w.mu.Unlock()
		if acquired {
			<-w.slots
		}
		return
	}
	w.mu.Unlock()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, warmBuildTimeout)
	defer cancel()
	cp, err := w.buildCheckpoint(ctx, e.opts, e.preamble)
	<-w.slots
	w.mu.Lock()
	defer w.mu.Unlock()
	e.building = false
	e.buildDur = time.Since(start)
	if err != nil && w.entries[e.key] != e {
		return // cancelled: no document wants it any more
	}
	if err != nil {
		e.failed = err.Error()
		w.logf("warm start: preamble of %s (%d bytes): %v", e.opts.Filename, len(e.preamble), err)
		return
	}
	if w.closed || w.entries[e.key] != e {
		cp.Release()
		return
	}
	e.cp = cp
	w.logf("warm start: preamble of %s (%d bytes) checkpointed in %s", e.opts.Filename, len(e.preamble), e.buildDur.Round(time.Millisecond))
	w.evictLocked()
}

// recheck measures the checkpoints every warmRecheck until the cache closes.
func (w *warmCache) recheck() {
	defer w.wg.Done()
	tick := time.NewTicker(warmRecheck)
	defer tick.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
			w.mu.Lock()
			if !w.closed {
				w.evictLocked()
			}
			w.mu.Unlock()
		}
	}
}

func (w *warmCache) buildCheckpoint(ctx context.Context, opts checkers.SessionOptions, preamble string) (checkers.Checkpoint, error) {
	sess, err := w.checker.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start checker: %w", err)
	}
	defer sess.Close()
	if err := sess.Submit(preamble, checkers.SubmitOptions{Cat: checkers.BoundaryPreamble, Checkpoint: true}); err != nil {
		return nil, fmt.Errorf("submit preamble: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-sess.Events():
			if !ok {
				return nil, fmt.Errorf("session ended without a checkpoint")
			}
			switch ev.Kind {
			case checkers.KindChkpt:
				cp := w.checker.Adopt(ev.ID)
				if cp == nil {
					return nil, fmt.Errorf("checkpoint %d is gone", ev.ID)
				}
				return cp, nil
			case checkers.KindError:
				return nil, fmt.Errorf("preamble does not compile: line %d: %s", ev.Line, ev.Diag)
			case checkers.KindCrash:
				return nil, fmt.Errorf("checker crashed: %s", ev.Diag)
			case checkers.KindDone:
				return nil, fmt.Errorf("session done without a checkpoint")
			}
		}
	}
}

// evictLocked measures the built checkpoints and drops them while together they hold more
// private memory than the budget: least recently used ones without documents first, then least
// recently used ones.
func (w *warmCache) evictLocked() {
	var total int64
	for _, e := range w.entries {
		if e.cp == nil {
			continue
		}
		if pm, ok := e.cp.(privateMemory); ok {
			if b, err := pm.PrivateBytes(); err == nil {
				e.bytes = b
			}
		}
		total += e.bytes
	}
	for total > w.budget {
		var victim *warmEntry
		for _, e := range w.entries {
			if e.cp == nil {
				continue
			}
			if victim == nil || (len(e.users) == 0) != (len(victim.users) == 0) && len(e.users) == 0 ||
				(len(e.users) == 0) == (len(victim.users) == 0) && e.lastUsed.Before(victim.lastUsed) {
				victim = e
			}
		}
		if victim == nil {
			return
		}
		w.logf("warm start: dropped the preamble checkpoint of %s (%.1f MB private) to keep the cache under %.0f MB",
			victim.opts.Filename, float64(victim.bytes)/(1<<20), float64(w.budget)/(1<<20))
		total -= victim.bytes
		if len(victim.users) > 0 {
			w.starved[victim.key] = true
		}
		delete(w.entries, victim.key)
		victim.cp.Release()
		victim.cp = nil
	}
}

// leaveLocked records that document uri no longer has the entry key. An entry whose build failed
// or is still queued goes with its last document, the queued build cancelled (a built one
// stays, for others, until the budget drops it; one being built finishes).
func (w *warmCache) leaveLocked(key, uri string) {
	e := w.entries[key]
	if e == nil {
		return
	}
	delete(e.users, uri)
	if len(e.users) > 0 || e.cp != nil {
		return
	}
	switch {
	case !e.building:
		delete(w.entries, key)
	case e.queued:
		e.cancel()
		delete(w.entries, key)
	}
}

// unstarveLocked forgets that key was dropped for the budget once no document has it.
func (w *warmCache) unstarveLocked(key string) {
	if !w.starved[key] {
		return
	}
	for _, k := range w.byDoc {
		if k == key {
			return
		}
	}
	delete(w.starved, key)
}

func (w *warmCache) dropLocked(e *warmEntry) {
	delete(w.entries, e.key)
	for uri, k := range w.byDoc {
		if k == e.key {
			delete(w.byDoc, uri)
		}
	}
	if e.cp != nil {
		e.cp.Release()
		e.cp = nil
	}
}

// forget drops a closed document; its checkpoint stays for others until evicted.
func (w *warmCache) forget(uri string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.timers[uri]; t != nil {
		t.Stop()
		delete(w.timers, uri)
	}
	key := w.byDoc[uri]
	w.leaveLocked(key, uri)
	delete(w.byDoc, uri)
	w.unstarveLocked(key)
}

// lookup returns the built entry whose preamble is the longest prefix of text under options
// compatible with opts (same flags and directory), or nil.
func (w *warmCache) lookupLocked(opts checkers.SessionOptions, text string) *warmEntry {
	var best *warmEntry
	for _, e := range w.entries {
		if e.cp == nil || !slices.Equal(e.opts.Flags, opts.Flags) ||
			filepath.Dir(e.opts.Filename) != filepath.Dir(opts.Filename) || !strings.HasPrefix(text, e.preamble) {
			continue
		}
		if best == nil || len(e.preamble) > len(best.preamble) {
			best = e
		}
	}
	return best
}

// ready says whether a built checkpoint serves a search of text under opts.
func (w *warmCache) ready(opts checkers.SessionOptions, text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lookupLocked(opts, text) != nil
}

// close releases every checkpoint and stops building.
func (w *warmCache) close() {
	w.mu.Lock()
	w.closed = true
	for _, t := range w.timers {
		t.Stop()
	}
	w.cancel()
	w.mu.Unlock()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.entries {
		w.dropLocked(e)
	}
}

// wrap returns the checker searches use: the server's, with Nearest extended to the shared
// preamble checkpoints, and Close a no-op (the server owns the checker).
func (w *warmCache) wrap() checkers.Checker { return warmChecker{w} }

type warmChecker struct{ w *warmCache }

func (c warmChecker) Start(ctx context.Context, opts checkers.SessionOptions) (checkers.Session, error) {
	return c.w.checker.Start(ctx, opts)
}

func (c warmChecker) Resume(ctx context.Context, cp checkers.Checkpoint) (checkers.Session, error) {
	return c.w.checker.Resume(ctx, cp)
}

func (c warmChecker) Adopt(id int64) checkers.Checkpoint { return c.w.checker.Adopt(id) }

// Nearest returns the checker's own nearest checkpoint, or a shared preamble checkpoint made
// for another document with the same flags and directory when that one is longer.
func (c warmChecker) Nearest(opts checkers.SessionOptions, text string) checkers.Checkpoint {
	cp := c.w.checker.Nearest(opts, text)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	e := c.w.lookupLocked(opts, text)
	if e == nil || (cp != nil && cp.Off() >= e.cp.Off()) {
		return cp
	}
	if cp != nil {
		cp.Release()
	}
	e.lastUsed = time.Now()
	e.cp.Retain()
	return e.cp
}

func (c warmChecker) Close() error { return nil }

// scheduleWarm (re)builds the preamble checkpoint of a C/C++ document once it rests.
func (s *Server) scheduleWarm(uri string) {
	if s.warm == nil {
		return
	}
	s.warm.schedule(uri, func() (checkers.SessionOptions, string, bool) {
		s.mu.Lock()
		d := s.docs[uri]
		if d == nil || !d.isCFamily() {
			s.mu.Unlock()
			return checkers.SessionOptions{}, "", false
		}
		path, lang, text := d.path, d.lang, d.text
		s.mu.Unlock()
		return s.sessionOptions(path, lang), text, true
	})
}

// flagsChanged re-warms every open document (compile flags or configuration changed).
func (s *Server) flagsChanged() {
	s.mu.Lock()
	uris := make([]string, 0, len(s.docs))
	for u := range s.docs {
		uris = append(uris, u)
	}
	s.mu.Unlock()
	for _, u := range uris {
		s.scheduleWarm(u)
	}
}
