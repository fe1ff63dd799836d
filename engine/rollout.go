package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine/model"
)

// DefaultCheckpointLines is how many lines of generated text a rollout checks between two
// checkpoints when Request.CheckpointLines is zero.
const DefaultCheckpointLines = 8

// errTokenBudget ends a stream when the search's output-token budget is spent.
var errTokenBudget = errors.New("output token budget spent")

// errLengthCut ends a stream the model server stopped at its length limit (finish_reason
// "length": max_tokens, or a full context): the text is cut, not complete, so it is not
// checked as a whole program.
var errLengthCut = errors.New("the model stopped at its length limit")

// rollout binds one streamed generation to one checker session (docs/ARCHITECTURE.md). Three
// goroutines serve it: produce reads the model's stream, cuts it into chunks and queues them;
// submit starts (or resumes) the checker session and feeds it the queue; read forwards the
// session's events to the search's manager. Only the manager changes the tree.
type rollout struct {
	id       int
	start    *Node
	feedback string
	prompt   string
	params   model.Params
	// resume is the checkpoint the session resumes (retained for the submit goroutine, which
	// releases it), or nil to start a fresh session; resumeOff is its offset (0 when nil).
	resume    checkers.Checkpoint
	resumeOff int
	// wantStartCkpt asks for a checkpoint where the re-submitted text reaches the start
	// node (it has none yet).
	wantStartCkpt bool
	ctx           context.Context
	cancel        context.CancelFunc

	// Manager-only state.
	head    *Node
	live    bool
	outcome string
	pending map[int]checkers.Checkpoint // chkpt events that came before their progress event
	errs    []checkers.Event
	sessID  int64
	// probeWant is the newest probe request not yet started, probing says one runs, chkptAt
	// is the offset of the newest chkpt event of the rollout's session (probe.go).
	probeWant *probeReq
	probing   bool
	chkptAt   int

	// mu guards the fields below, shared by the goroutines and the manager.
	mu     sync.Mutex
	text   strings.Builder // the checked text: start node's text + generated text (+ suffix)
	genEnd int             // end of the generated text; -1 while streaming
	tokens []TokenInfo
	// spawned is when the rollout was spawned and stream when its pieces arrived, for the trace.
	spawned time.Duration
	stream  []TracePoint
	pieces  int // streamed pieces (tokens as the server sent them)
	usage   model.Usage
	finish  string // the server's finish_reason
	// logprobs counts streamed pieces that carried a log-probability.
	logprobs int
	checked  int // the furthest offset the checker has reported on (for Lockstep)
	// depths is the brace depth, from the start of the checked text, at the end of each chunk
	// queued, by its end offset (Node.Depth).
	depths  map[int]int
	stopped bool // the checker reported an error, done or crash
	notify  chan struct{}
}

// textUpTo returns the checked text up to off (clamped to what exists).
func (r *rollout) textUpTo(off int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.text.String()
	return s[:min(max(off, 0), len(s))]
}

// snapshot returns the whole text and the end of its generated part (len(text) while the
// stream runs).
func (r *rollout) snapshot() (string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.text.String()
	end := r.genEnd
	if end < 0 {
		end = len(s)
	}
	return s, end
}

// view returns the rollout as a policy sees it.
func (r *rollout) view() *RolloutView {
	r.mu.Lock()
	toks := append([]TokenInfo(nil), r.tokens...)
	r.mu.Unlock()
	return &RolloutView{ID: r.id, Start: r.start, Head: r.head, Live: r.live, Feedback: r.feedback, Tokens: toks}
}

// markChecked records a checker event for Lockstep waiting.
func (r *rollout) markChecked(ev checkers.Event) {
	r.mu.Lock()
	switch ev.Kind {
	case checkers.KindProgress:
		r.checked = max(r.checked, ev.Off)
	case checkers.KindError, checkers.KindDone, checkers.KindCrash:
		r.stopped = true
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// waitChecked blocks until the checker has reported on everything up to off (Lockstep).
func (r *rollout) waitChecked(off int) {
	for {
		r.mu.Lock()
		ok := r.checked >= off || r.stopped
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.notify:
		case <-r.ctx.Done():
			return
		}
	}
}

// item is one entry of a rollout's submit queue.
type item struct {
	text string
	opts checkers.SubmitOptions
	eos  bool
}

// queue is an unbounded FIFO between a rollout's producer and its submitter, so that the
// producer never waits for the checker (not even for its socket to take the bytes).
type queue struct {
	mu     sync.Mutex
	items  []item
	closed bool
	signal chan struct{}
}

func newQueue() *queue { return &queue{signal: make(chan struct{}, 1)} }

func (q *queue) push(it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// close marks the end of the queue; pop returns false once it is drained.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *queue) pop(ctx context.Context) (item, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			it := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return it, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return item{}, false
		}
		select {
		case <-q.signal:
		case <-ctx.Done():
			return item{}, false
		}
	}
}

// message is what the rollout goroutines tell the manager.
type message struct {
	r    *rollout
	kind msgKind
	ev   checkers.Event
	err  error
	note string // msgNote
	// probe is the probe a msgProbe asks for, or the one a msgProbeEvent or msgProbeDone
	// reports on.
	probe *probeReq
}

type msgKind int

const (
	msgEvent      msgKind = iota // a checker event
	msgStreamEnd                 // the model stream ended (err nil: normally)
	msgCheckerErr                // the checker session could not be started
	msgSession                   // the session exists (ev.ID = its id); resumed tells whether from a checkpoint
	msgNote                      // something the summary should say (note)
	msgWaiting                   // what the model client waits for (note)
	msgProbe                     // the producer asks for a probe of held lines (probe)
	msgProbeEvent                // a probe's error inside the held lines (ev)
	msgProbeDone                 // a probe ended (ev.OK: the held lines were accepted)
)

// send delivers m to the manager unless the search is over. It reports whether it did.
func (s *search) send(m message) bool {
	select {
	case s.msgs <- m:
		return true
	case <-s.done:
		return false
	}
}

// produce streams the model's completion into the rollout's chunk queue.
func (s *search) produce(r *rollout, q *queue) {
	defer s.wg.Done()
	err := s.stream(r, q)
	q.close()
	s.send(message{r: r, kind: msgStreamEnd, err: err})
}

// stream is produce's body. It returns nil when the stream ended normally (end of text, a
// stop sequence, the construct closed, or the length limit).
func (s *search) stream(r *rollout, q *queue) error {
	base := r.start.Text
	// The chunker continues the checkpoint's text and is fed the rest of base first (the text
	// between the checkpoint and the start node), so its depths and categories count from the
	// start of the text.
	ch := s.syntax.NewChunker(base[:r.resumeOff])
	every := s.req.CheckpointLines
	if every == 0 {
		every = DefaultCheckpointLines
	}
	linesSince := 0
	needStartCkpt := r.wantStartCkpt
	// ckptAt is the end of the last chunk queued with a checkpoint request, lastProbe the end
	// of the last held lines a probe was asked for (probe.go).
	ckptAt, lastProbe := -1, 0
	probes := s.mode != PostHoc && s.mode != Unchecked
	// emit queues chunks whose offsets are relative to resumeOff. With held set the chunker
	// holds lines after them that a probe can check (an open #if): the last chunk gets a
	// checkpoint, which the probes resume.
	emit := func(chs []lang.Chunk, held bool) int {
		end := 0
		for i, c := range chs {
			end = r.resumeOff + c.End()
			opts := checkers.SubmitOptions{Cat: c.Cat}
			linesSince += strings.Count(c.Text, "\n")
			switch {
			case held && i == len(chs)-1:
				opts.Checkpoint = true
			case c.PreambleEnd && end > len(base):
				// A preamble the model wrote (one inside the start text is covered by
				// the start node's checkpoint).
				opts.Checkpoint = true
			case needStartCkpt && end >= len(base):
				opts.Checkpoint = true
			case every > 0 && linesSince >= every && end > len(base):
				opts.Checkpoint = true
			}
			if end >= len(base) {
				needStartCkpt = false
			}
			if opts.Checkpoint {
				linesSince = 0
				ckptAt = end
			}
			if s.mode != PostHoc && s.mode != Unchecked {
				r.mu.Lock()
				r.depths[end] = c.Depth
				r.mu.Unlock()
				q.push(item{text: c.Text, opts: opts})
			}
		}
		return end
	}
	// write feeds the chunker, queues the chunks it returns and asks for a probe of the lines it
	// holds, if any.
	write := func(text string, merge bool) int {
		chs := ch.Write(text)
		if merge {
			chs = lang.Merge(chs, lang.MergeMin(len(text)))
		}
		_, _, held := ch.Closable()
		end := emit(chs, held && probes)
		if probes {
			s.probeHeld(r, ch, base, ckptAt, &lastProbe)
		}
		return end
	}
	if s.mode != PostHoc {
		// Text already at hand (the document's prefix, what a rollback kept) is not streamed:
		// a long prefix goes in merged pieces (lang.MaxChunks), its end still a cut of its own.
		write(base[r.resumeOff:], true)
	}
	cut := newCutter(s, base)

	// The client says what it waits for (a server still loading); progress shows it.
	cctx := model.ContextWithProgress(r.ctx, func(msg string) { s.send(message{r: r, kind: msgWaiting, note: msg}) })
	stream, err := s.gen.Complete(cctx, model.Request{Model: s.req.Model, Prompt: r.prompt, Suffix: s.req.Suffix, Params: r.params})
	if err != nil {
		return err
	}
	defer stream.Close()
	var streamErr error
	stopped := false // ended structurally (stop sequence, construct closed)
	for {
		tok, err := stream.Next(r.ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			streamErr = err
			break
		}
		off := len(base) + cut.g.Len()
		piece, stop := cut.feed(tok.Text)
		r.mu.Lock()
		r.text.WriteString(piece)
		r.tokens = append(r.tokens, TokenInfo{Off: off, Text: tok.Text, Logprob: tok.Logprob,
			Entropy: entropy(tok.TopLogprobs), HasLogprob: tok.HasLogprob})
		r.pieces++
		r.stream = append(r.stream, TracePoint{AtMS: ms(time.Since(s.t.start)), Off: off + len(piece)})
		if tok.HasLogprob {
			r.logprobs++
		}
		r.mu.Unlock()
		spent := s.tokens.Add(1)
		if end := write(piece, false); end > 0 && s.mode == Lockstep {
			t0 := time.Now()
			r.waitChecked(end)
			s.modelWait.Add(int64(time.Since(t0)))
		}
		if stop {
			stopped = true
			break
		}
		if s.budget.MaxTokens > 0 && spent >= int64(s.budget.MaxTokens) {
			streamErr = errTokenBudget
			break
		}
	}
	// Stop billing at once: a structural stop or a kill closes the stream before the rest.
	stream.Close()
	usage := stream.Usage()
	finish := stream.FinishReason()
	if n, ok := stream.(model.Noter); ok {
		for _, note := range n.Notes() {
			s.send(message{r: r, kind: msgNote, note: note})
		}
	}
	if streamErr == nil && !stopped && finish == "length" {
		streamErr = errLengthCut
	}
	rest := ""
	if streamErr == nil {
		rest = cut.flush()
	}
	r.mu.Lock()
	r.text.WriteString(rest)
	r.usage = usage
	r.finish = finish
	text := r.text.String()
	r.genEnd = len(text)
	r.mu.Unlock()
	if streamErr != nil {
		return streamErr
	}
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	switch s.mode {
	case Unchecked:
		return nil
	case PostHoc:
		rest := text[r.resumeOff:] + s.req.Suffix
		if rest != "" {
			q.push(item{text: rest, opts: checkers.SubmitOptions{Cat: checkers.BoundaryDecl}})
		}
	default:
		emit(ch.Write(rest), false)
		tail := ch.Flush()
		if s.req.Suffix == "" {
			emit(tail, false)
			break
		}
		r.mu.Lock()
		r.text.WriteString(s.req.Suffix)
		r.mu.Unlock()
		// The final check: the session that checked the accepted text (resumed from the
		// checkpoint nearest to it) goes on with the suffix, submitted in one piece. No
		// verdict inside the suffix is needed line by line (progress there makes no node),
		// so one chunk spares a round trip and an event per line of a long file. Text the
		// chunker could not cut cleanly (an #if, a comment or a pragma region that only the
		// suffix closes) goes in that same piece: ended on its own, Clang would report it
		// unterminated, as no whole file does.
		last := s.req.Suffix
		if n := len(tail); n > 0 && tail[n-1].Unclean {
			last = tail[n-1].Text + last
			tail = tail[:n-1]
		}
		emit(tail, false)
		q.push(item{text: last, opts: checkers.SubmitOptions{Cat: lastCat(s.req.Suffix, s.syntax)}})
	}
	if s.mode == PostHoc && s.req.Suffix != "" {
		r.mu.Lock()
		r.text.WriteString(s.req.Suffix)
		r.mu.Unlock()
	}
	q.push(item{eos: true})
	return nil
}

// lastCat is the boundary category text ends on, as the chunker classifies its last line.
func lastCat(text string, syn lang.Syntax) string {
	cs := syn.Split(text)
	if len(cs) == 0 {
		return checkers.BoundaryLine
	}
	return cs[len(cs)-1].Cat
}

// entropy is the entropy, in nats, of the distribution over the reported top alternatives
// (normalised over them); 0 when none were reported.
func entropy(top map[string]float64) float64 {
	if len(top) == 0 {
		return 0
	}
	var z float64
	for _, lp := range top {
		z += math.Exp(lp)
	}
	if z <= 0 {
		return 0
	}
	var h float64
	for _, lp := range top {
		p := math.Exp(lp) / z
		if p > 0 {
			h -= p * math.Log(p)
		}
	}
	return h
}

// submit starts or resumes the rollout's checker session and feeds it the queue. It closes the
// session when the rollout's context ends (kill, or the end of the search).
func (s *search) submit(r *rollout, q *queue) {
	defer s.wg.Done()
	var sess checkers.Session
	var err error
	resumed := false
	if r.resume != nil {
		sess, err = s.ck.Resume(r.ctx, r.resume)
		r.resume.Release()
		if err == nil {
			resumed = true
		} else if r.ctx.Err() == nil {
			// The checkpoint is gone: check the whole text from scratch instead.
			sess, err = s.ck.Start(r.ctx, s.sessOpts)
			if err == nil {
				text := r.start.Text[:r.resumeOff]
				for _, c := range lang.Merge(s.syntax.Split(text), lang.MergeMin(len(text))) {
					if serr := sess.Submit(c.Text, checkers.SubmitOptions{Cat: c.Cat, KeepGoing: s.req.Baseline}); serr != nil {
						break
					}
				}
			}
		}
	} else {
		sess, err = s.ck.Start(r.ctx, s.sessOpts)
	}
	if err != nil {
		if r.ctx.Err() == nil {
			s.send(message{r: r, kind: msgCheckerErr, err: err})
		}
		return
	}
	s.send(message{r: r, kind: msgSession, ev: checkers.Event{ID: sess.ID(), OK: resumed}})
	s.wg.Add(2)
	go s.read(r, sess)
	go func() {
		// Close the session the moment the rollout ends, even while a Submit is blocked.
		defer s.wg.Done()
		<-r.ctx.Done()
		sess.Close()
	}()
	for {
		it, ok := q.pop(r.ctx)
		if !ok {
			break
		}
		var err error
		if it.eos {
			err = sess.EOS()
		} else {
			it.opts.KeepGoing = s.req.Baseline // go on past errors the baseline excuses
			err = sess.Submit(it.text, it.opts)
		}
		if err != nil {
			break // the session died (or was closed): its events end with a crash event
		}
	}
}

// drainTimeout bounds how long a reader waits for a closed session's event channel to close.
const drainTimeout = 10 * time.Second

// read forwards the session's events to the manager. Once the rollout is over it only drains
// the channel, releasing the checkpoint references that chkpt events carry.
func (s *search) read(r *rollout, sess checkers.Session) {
	defer s.wg.Done()
	events := sess.Events()
	var timeout <-chan time.Time
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			r.markChecked(ev)
			if r.ctx.Err() == nil && s.send(message{r: r, kind: msgEvent, ev: ev}) {
				continue
			}
			if ev.Kind == checkers.KindChkpt {
				if cp := s.ck.Adopt(ev.ID); cp != nil {
					cp.Release()
				}
			}
		case <-r.ctx.Done():
			if timeout == nil {
				timeout = time.After(drainTimeout)
			}
		case <-timeout:
			return
		}
	}
}

// cutter ends generation early: at a stop sequence (also enforced here, in case the server
// ignores it) and, with StopAtClose, once the construct at the insertion point is closed. It
// holds back what might still be cut: the current incomplete line when StopAtClose is set, and
// the last bytes that might begin a stop sequence. Nothing is lost for checking, since the
// chunker only submits complete lines anyway.
type cutter struct {
	stops   []string
	maxStop int

	closeOn   bool
	depth     lang.Chunker // brace depth over complete lines, fed from the document's start
	d0        int          // depth at the insertion point
	deeper    bool         // depth went above d0 after the insertion point
	exclusive bool         // the suffix closes the block itself: cut before the closing brace
	// suffixPads: the suffix starts with blanks (its own indentation of the brace that closes
	// the block, when the insertion point is at a line's start), so blanks before the generated
	// closing brace are not kept: they would indent the suffix's brace twice.
	suffixPads bool

	g      strings.Builder // generated text fed so far
	passed int             // bytes of g passed on
	lined  int             // bytes of g fed to the depth tracker (complete lines only)
	done   bool
}

func newCutter(s *search, base string) *cutter {
	c := &cutter{stops: s.req.Params.Stop, closeOn: s.req.StopAtClose}
	for _, st := range c.stops {
		c.maxStop = max(c.maxStop, len(st))
	}
	if !c.closeOn {
		return c
	}
	c.depth = s.syntax.NewChunker("")
	c.depth.Write(s.req.Prefix)
	c.d0 = s.prefixDepth
	c.exclusive = s.suffixCloses
	c.suffixPads = strings.HasPrefix(s.req.Suffix, " ") || strings.HasPrefix(s.req.Suffix, "\t")
	// Lines generated before the start node count too (a rollback keeps them).
	gen := base[min(len(s.req.Prefix), len(base)):]
	for len(gen) > 0 {
		j := strings.IndexByte(gen, '\n')
		if j < 0 {
			c.depth.Write(gen)
			break
		}
		c.depth.Write(gen[:j+1])
		gen = gen[j+1:]
		if c.depth.Depth() > c.d0 {
			c.deeper = true
		}
	}
	return c
}

// feed takes the next piece of the stream and returns the text to pass on now, and whether
// generation ends with it.
func (c *cutter) feed(piece string) (string, bool) {
	if c.done {
		return "", true
	}
	before := c.g.Len()
	c.g.WriteString(piece)
	g := c.g.String()
	end := len(g)
	stop := false
	for _, st := range c.stops {
		if st == "" {
			continue
		}
		from := max(before-len(st)+1, 0)
		if k := strings.Index(g[from:], st); k >= 0 && from+k < end {
			end, stop = from+k, true
		}
	}
	if c.closeOn {
		for c.lined < end {
			j := strings.IndexByte(g[c.lined:end], '\n')
			if j < 0 {
				break
			}
			lineStart := c.lined
			c.lined += j + 1
			c.depth.Write(g[lineStart:c.lined])
			d := c.depth.Depth()
			if d > c.d0 {
				c.deeper = true
			}
			if d < c.d0 || (c.d0 == 0 && c.deeper && d <= 0) {
				stop = true
				end = c.lined
				if c.exclusive && d < c.d0 {
					// Keep the line up to the brace that closes the block: the suffix
					// brings its own.
					end = lineStart
					if o := c.depth.ClosingBrace(c.d0); o >= 0 {
						end = max(c.lined-(c.depth.Offset()-o), 0) // 0: the brace was before g
					}
					if c.suffixPads && end >= lineStart {
						// "    }" generated at a line's start, before the suffix's own "    }":
						// keep the line's code, not its blanks.
						end = lineStart + len(strings.TrimRight(g[lineStart:end], " \t"))
					}
				}
				break
			}
		}
	}
	hold := end
	if !stop {
		if c.closeOn {
			hold = min(hold, c.lined)
		}
		if c.maxStop > 1 {
			hold = min(hold, len(g)-(c.maxStop-1))
		}
	}
	hold = max(hold, c.passed)
	out := g[c.passed:hold]
	c.passed = hold
	c.done = stop
	return out, stop
}

// flush returns what is still held when the stream ended by itself.
func (c *cutter) flush() string {
	if c.done {
		return ""
	}
	g := c.g.String()
	out := g[c.passed:]
	c.passed = len(g)
	c.done = true
	return out
}

// String describes a rollout for messages.
func (r *rollout) String() string { return fmt.Sprintf("rollout %d", r.id) }
