package engine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
)

// Lines inside an open `#if` (issue 34): the chunker holds them until the `#endif`, and probes
// (probe.go) confirm them line by line meanwhile, with the real Clang checker.

// condPrefix ends inside two open conditionals, whose #endif lines the suffix holds.
const (
	condPrefix = "#define HAVE_SUM 1\nint g(int x) { return x; }\n#if 1\n#ifdef HAVE_SUM\nint sum(int n) {\n"
	condSuffix = "}\n#endif\n#endif\nint main(void) { return sum(3) - 6; }\n"
	// condBody is six lines, each a statement that compiles on its own line.
	condBody = "  int s = 0;\n  int i;\n  for (i = 1; i <= n; i++)\n    s += g(i);\n  s = s + 0;\n  return s;\n"
)

// accepted follows a search's "accepted" updates: the generated text the checker confirmed.
type accepted struct {
	mu   sync.Mutex
	text string
	errs []Update
	seen chan struct{} // signalled on every update
}

func newAccepted() *accepted { return &accepted{seen: make(chan struct{}, 1)} }

func (a *accepted) onUpdate(u Update) {
	a.mu.Lock()
	switch u.Kind {
	case "accepted", "rollback":
		a.text = u.Accepted
	case "error":
		a.errs = append(a.errs, u)
	}
	a.mu.Unlock()
	select {
	case a.seen <- struct{}{}:
	default:
	}
}

// waitFor waits until ok holds of the state, ctx ends, or a generous valve passes (then the
// test's assertions say what went wrong; no assertion is on the time).
func (a *accepted) waitFor(ctx context.Context, ok func(text string, errs int) bool) bool {
	valve := time.After(30 * time.Second)
	for {
		a.mu.Lock()
		done := ok(a.text, len(a.errs))
		a.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-a.seen:
		case <-ctx.Done():
			return false
		case <-valve:
			return false
		}
	}
}

// linePaced holds each piece of text that comes after a complete line until the checker has
// confirmed that line: the search sees one more line only once the last one is confirmed,
// so a search that confirms lines inside the #if only at the end cannot pass for one that
// confirms them line by line.
func linePaced(a *accepted, text string) func(ctx context.Context, i int, sent, piece string) {
	return func(ctx context.Context, _ int, sent, _ string) {
		k := strings.LastIndexByte(sent, '\n')
		if k < 0 {
			return
		}
		want := text[:min(k+1, len(text))]
		a.waitFor(ctx, func(t string, _ int) bool { return strings.HasPrefix(t, want) })
	}
}

// TestLinesInsideOpenConditionalAreConfirmedOneByOne: the prompt ends inside `#if 1` and a
// nested `#ifdef`; the suffix closes both. Every line of the six-line body is confirmed on its
// own (a progress node at its end, made by a probe), before the next line comes, and the body
// is accepted.
func TestLinesInsideOpenConditionalAreConfirmedOneByOne(t *testing.T) {
	a := newAccepted()
	text := condBody + "}\nint junk;\n"
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{
		{Text: text, Chunk: 5, Hold: linePaced(a, condBody)},
	}})
	ck := newRecorder(newChecker(t))
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{Prefix: condPrefix, Suffix: condSuffix,
		Filename: "sum.c", Model: "m", StopAtClose: true, Budget: Budget{MaxAttempts: 2}, OnUpdate: a.onUpdate})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != condBody || res.Stats.Attempts != 1 {
		t.Fatalf("ok=%v reason=%s text=%q attempts=%d diagnostics=%v; want the body accepted at once", res.OK, res.Reason, res.Text, res.Stats.Attempts, res.Diagnostics)
	}
	progress := map[int]bool{}
	for _, n := range traceNodes(res, "progress") {
		progress[n.Off] = true
	}
	end := len(condPrefix)
	for i, line := range strings.SplitAfter(condBody, "\n") {
		if line == "" {
			break
		}
		end += len(line)
		if !progress[end] {
			t.Errorf("body line %d (%q) has no progress node at its end (offset %d); progress nodes at %v", i+1, line, end, progress)
		}
	}
	if res.Stats.Probes < 6 {
		t.Errorf("%d probes, want one per body line at least", res.Stats.Probes)
	}
	// Each probe resumed the checkpoint at the last clean cut, before the #if, and submitted
	// only the held lines and the two #endifs.
	regionStart := strings.Index(condPrefix, "#if 1")
	probes := 0
	for _, rs := range ck.all() {
		subs := rs.submitted()
		if len(subs) != 1 || !strings.HasSuffix(subs[0], "#endif\n#endif\n") {
			continue
		}
		probes++
		if !rs.resumed || rs.fromOff != regionStart || !strings.HasPrefix(subs[0], "#if 1\n") {
			t.Errorf("a probe resumed=%v from offset %d submitted %q; want it resumed at %d, the #if's line", rs.resumed, rs.fromOff, subs[0], regionStart)
		}
	}
	if probes != res.Stats.Probes {
		t.Errorf("%d probe sessions, Stats.Probes %d", probes, res.Stats.Probes)
	}
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left: %v", left)
	}
}

// TestErrorInsideOpenConditionalIsFoundAtItsLine: the first attempt's second body line is
// wrong and more lines follow. The piece that ends the body is held until the error is
// reported, so the error must be found inside the open #if while the model still writes, not
// by the final check; the repair is then accepted.
func TestErrorInsideOpenConditionalIsFoundAtItsLine(t *testing.T) {
	a := newAccepted()
	badBody := strings.Replace(condBody, "  int i;\n", "  int i = undefined_thing;\n", 1)
	bad := badBody + "}\nint junk;\n"
	var holding, errWhileHeld atomic.Bool
	// The piece that ends the body is held: the closing brace after it would end the stream
	// (StopAtClose) and start the final check.
	first := modeltest.Rule{Text: bad, Chunk: 5, Hold: func(ctx context.Context, _ int, sent, piece string) {
		if len(sent) >= len(badBody) || len(sent)+len(piece) < len(badBody) {
			return // not the piece that ends the body
		}
		holding.Store(true)
		if !a.waitFor(ctx, func(_ string, errs int) bool { return errs > 0 }) && ctx.Err() == nil {
			holding.Store(false) // the valve: the last piece goes out
		}
	}}
	onUpdate := func(u Update) {
		a.onUpdate(u)
		if u.Kind == "error" && holding.Load() {
			errWhileHeld.Store(true)
		}
	}
	// The repair continues from wherever the policy rolled back to (the prompt keeps the
	// confirmed lines of the body).
	var rules []modeltest.Rule
	for _, r := range continuations(condPrefix, condBody) {
		rules = append(rules, modeltest.Rule{PromptContains: r.PromptSuffix + "// " + FeedbackMarker, Text: r.Text + "}\n", Chunk: 5})
	}
	rules = append(rules, first)
	srv := modeltest.NewServer(t, modeltest.Script{Rules: rules})
	ck := newRecorder(newChecker(t))
	res, err := Search(context.Background(), ck, newClient(t, srv.URL), Request{Prefix: condPrefix, Suffix: condSuffix,
		Filename: "sum.c", Model: "m", StopAtClose: true, Budget: Budget{MaxAttempts: 3}, OnUpdate: onUpdate})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != condBody || res.Stats.Attempts != 2 {
		t.Fatalf("ok=%v reason=%s text=%q attempts=%d diagnostics=%v; want the repair accepted", res.OK, res.Reason, res.Text, res.Stats.Attempts, res.Diagnostics)
	}
	if !errWhileHeld.Load() {
		t.Errorf("the error was not reported while the stand-in held the piece that ends the body (held: %v): it was found only at the end", holding.Load())
	}
	errs := traceNodes(res, "error")
	wantLine := strings.Count(condPrefix, "\n") + 2
	if len(errs) != 1 || errs[0].Line != wantLine || !strings.Contains(errs[0].Diag, "undefined_thing") {
		t.Errorf("error nodes %+v, want one at line %d on undefined_thing", errs, wantLine)
	}
	// The probes of the stopped attempt (one may have been running) are gone with it.
	if left := ck.waitGone(); len(left) > 0 {
		t.Errorf("checker processes left: %v", left)
	}
}

// TestSkippedConditionalIsProbedAsClangSeesIt: inside `#if 0` the lines are skipped, so a
// probe accepts them (as Clang does) and the generation is accepted as the whole file is.
func TestSkippedConditionalIsProbedAsClangSeesIt(t *testing.T) {
	prefix := "int f(void) { return 1; }\n#if 0\nint g(void) {\n"
	body := "  this is not C;\n  nor this\n"
	res := searchLinePaced(t, prefix, body, "}\n#endif\n")
	if !res.OK || res.Text != body {
		t.Fatalf("ok=%v reason=%s text=%q diagnostics=%v; want the skipped body accepted", res.OK, res.Reason, res.Text, res.Diagnostics)
	}
	first := len(prefix) + strings.IndexByte(body, '\n') + 1
	found := false
	for _, n := range traceNodes(res, "progress") {
		found = found || n.Off == first
	}
	if !found {
		t.Errorf("the first skipped line was not confirmed on its own: %+v", traceNodes(res, "progress"))
	}
}

// TestBodysOwnConditionalIsConfirmedLineByLine: the model writes an `#if` … `#endif` of its own
// inside the body; the lines between are confirmed one by one before its `#endif` comes (the
// probes resume the nearest checkpoint before them), not in one piece at the `#endif`.
func TestBodysOwnConditionalIsConfirmedLineByLine(t *testing.T) {
	prefix := "int f(int n) {\n"
	body := "  int s = 0;\n#if 1\n  s += n;\n  s += 1;\n#endif\n  return s;\n"
	res := searchLinePaced(t, prefix, body, "}\nint main(void) { return f(1) - 2; }\n")
	if !res.OK || res.Text != body {
		t.Fatalf("ok=%v reason=%s text=%q diagnostics=%v; want the body accepted", res.OK, res.Reason, res.Text, res.Diagnostics)
	}
	progress := map[int]bool{}
	for _, n := range traceNodes(res, "progress") {
		progress[n.Off] = true
	}
	for _, line := range []string{"  s += n;\n", "  s += 1;\n"} {
		if end := len(prefix) + strings.Index(body, line) + len(line); !progress[end] {
			t.Errorf("line %q inside the body's #if has no progress node at its end (%d); progress nodes at %v", line, end, progress)
		}
	}
}

// searchLinePaced runs one attempt of f.c between prefix and suffix, the stand-in writing body
// and the closing brace, each line held until the one before it is accepted (linePaced).
func searchLinePaced(t *testing.T, prefix, body, suffix string) *Result {
	t.Helper()
	a := newAccepted()
	srv := modeltest.NewServer(t, modeltest.Script{Rules: []modeltest.Rule{{Text: body + "}\n", Chunk: 4, Hold: linePaced(a, body)}}})
	res, err := Search(context.Background(), newChecker(t), newClient(t, srv.URL), Request{Prefix: prefix, Suffix: suffix,
		Filename: "f.c", Model: "m", StopAtClose: true, Budget: Budget{MaxAttempts: 1}, OnUpdate: a.onUpdate})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
