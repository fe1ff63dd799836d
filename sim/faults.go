package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/checkers/mutate"
	"github.com/hydra-lsp/hydra/internal/textops"
)

// Distance classes of a fault: how far before the reported error its root lies, counted in
// source lines (the simulator's own measure; no policy uses it).
const (
	// ClassLocal: the root is on the line clang reports (regenerating that line fixes it).
	ClassLocal = "local"
	// ClassMid: the root is on an earlier line, in the later half of the generated lines before
	// the error's line.
	ClassMid = "mid"
	// ClassFar: the root's line lies in the first half of the generated lines before the
	// error's line, so a repair must roll back past half-way.
	ClassFar = "far"
)

// Fault is an injected error, checked with the real clang: Text fails to compile and the root
// lies on or before the line of the first error clang reports (on the same line clang may point
// a few columns before the root, e.g. at the callee of a call whose arguments changed). Offsets are bytes in Text, which is a whole program (the task's
// prompt included).
type Fault struct {
	Op   mutate.Op `json:"op"`
	Desc string    `json:"desc"`
	Text string    `json:"-"`
	// Diff is where Text first differs from the correct program; a retry regenerates the fault
	// exactly when it starts at or before Diff.
	Diff     int    `json:"diff"`
	RootOff  int    `json:"root_off"`
	RootLine int    `json:"root_line"`
	ErrOff   int    `json:"err_off"`
	ErrLine  int    `json:"err_line"`
	Diag     string `json:"diag"`
	Class    string `json:"class"`
	// Gen is where the generated text starts (the prompt's length).
	Gen int `json:"gen_start"`
	// ErrPos is the first error's position in the generated text, normalised by its length.
	ErrPos float64 `json:"err_pos"`
	// Hint is what clang's first diagnostic gives a local repair (see DiagHint).
	Hint string `json:"hint"`
	// Workaround, when not nil, is a local repair that keeps the root: Text up to the error's
	// line, then the rest rewritten as the diagnostic suggests (every later use of the
	// identifier clang did not know replaced by the one it meant). The real clang checked that
	// it compiles. Only faults whose root lies before the error's line have one.
	Workaround *Fault `json:"-"`
	// IsWorkaround marks a Workaround: a correct program that keeps another fault's root.
	IsWorkaround bool `json:"-"`
}

// What a diagnostic gives a local repair (Fault.Hint).
const (
	// HintSuggestion: clang names the fix ("did you mean 'x'?", or a fix-it such as "add ';'").
	HintSuggestion = "suggestion"
	// HintType: a type mismatch (the types are named, the fix is not).
	HintType = "type_mismatch"
	// HintNone: the diagnostic names neither a fix nor the types involved.
	HintNone = "none"
)

var (
	// clang: "use of undeclared identifier 'a'; did you mean 'b'?"; tsc: "Cannot find name 'a'. Did you mean 'b'?".
	didYouMean  = regexp.MustCompile(`'([A-Za-z_$][A-Za-z0-9_$]*)'.*(?:; did|\. Did) you mean (?:'[^']*::)?'?([A-Za-z_$][A-Za-z0-9_$]*)'`)
	typeWords   = regexp.MustCompile(`cannot initialize|cannot convert|no viable conversion|incompatible|invalid operands|assigning to '|no matching (?:function|constructor)|is not assignable to`)
	fixItPhrase = regexp.MustCompile(`expected '[^']+'|[Dd]id you mean|' expected\.`)
)

// DiagHint says what clang's (or tsc's) diagnostic msg gives a local repair: HintSuggestion,
// HintType or HintNone.
func DiagHint(msg string) string {
	switch {
	case fixItPhrase.MatchString(msg):
		return HintSuggestion
	case typeWords.MatchString(msg):
		return HintType
	}
	return HintNone
}

// workaround builds f's local repair when clang's diagnostic suggests one ("use of undeclared
// identifier 'a'; did you mean 'b'?"): from the error's line on, every whole-word a becomes b.
// It returns nil when the diagnostic suggests nothing, the root is on the error's line, or the
// rewritten program does not compile.
func (p *planner) workaround(ctx context.Context, t Task, f *Fault) (*Fault, error) {
	m := didYouMean.FindStringSubmatch(f.Diag)
	if m == nil || f.RootLine >= f.ErrLine {
		return nil, nil
	}
	lineStart := strings.LastIndexByte(f.Text[:f.ErrOff], '\n') + 1
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(m[1]) + `\b`)
	text := f.Text[:lineStart] + word.ReplaceAllString(f.Text[lineStart:], m[2])
	if text == f.Text {
		return nil, nil
	}
	res, err := runClang(ctx, p.clang, t, text)
	if err != nil || !res.ok {
		return nil, err
	}
	return &Fault{Op: f.Op, Desc: fmt.Sprintf("%s; kept, and later uses of '%s' written as '%s'", f.Desc, m[1], m[2]),
		Text: text, Diff: f.Diff, RootOff: f.RootOff, RootLine: f.RootLine, ErrOff: f.ErrOff, ErrLine: f.ErrLine,
		Gen: f.Gen, Class: f.Class, IsWorkaround: true}, nil
}

// Plan is what the simulated model does on a task: whether its first attempt has a fault, and
// the faults it may make on later attempts.
type Plan struct {
	TaskID string `json:"task_id"`
	// First is the first attempt's fault (nil: the first attempt is correct).
	First *Fault `json:"first,omitempty"`
	// WantClass is the distance class drawn for First; First.Class may differ when no mutant of
	// that class was found.
	WantClass string `json:"want_class,omitempty"`
	// WantPos is the first error's position drawn for First (see Fault.ErrPos).
	WantPos float64 `json:"want_pos,omitempty"`
	// Pool holds further checked faults that retries may introduce (new faults at the base rate).
	Pool []*Fault `json:"pool,omitempty"`
	// ClangRuns counts the compiler runs the plan took.
	ClangRuns int `json:"clang_runs"`
}

// opsFor orders the mutation operators by how likely each gives a fault of the class.
func opsFor(class string, ops []mutate.Op, rng *rand.Rand) []mutate.Op {
	pref := map[string][]mutate.Op{
		ClassLocal: {mutate.DeleteSemi, mutate.NoMember, mutate.ArgCount},
		ClassMid:   {mutate.MoveDecl, mutate.RenameDecl, mutate.ChangeType},
		ClassFar:   {mutate.DeleteInclude, mutate.RenameDecl, mutate.ChangeType},
	}[class]
	allowed := map[mutate.Op]bool{}
	for _, o := range ops {
		allowed[o] = true
	}
	var first, rest []mutate.Op
	inPref := map[mutate.Op]bool{}
	for _, o := range pref {
		if allowed[o] {
			first = append(first, o)
			inPref[o] = true
		}
	}
	for _, o := range ops {
		if !inPref[o] {
			rest = append(rest, o)
		}
	}
	rng.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return append(first, rest...)
}

// opsOf is the planner's operators that make sense in t's language (mutate.OpsFor).
func (p *planner) opsOf(t Task) []mutate.Op {
	var out []mutate.Op
	for _, o := range p.ops {
		if slices.Contains(mutate.OpsFor(t.Lang), o) {
			out = append(out, o)
		}
	}
	return out
}

// planner makes Plans with the real clang (for TypeScript tasks, the real tsc).
type planner struct {
	clang      string
	ops        []mutate.Op
	candidates int // clang runs per plan at most
	poolSize   int
}

// classMatches is how many faults of the drawn class a plan looks for before it picks the one
// whose first error lies nearest the drawn position.
const classMatches = 4

// plan draws and checks the faults of task t. wantFault says whether the first attempt has one
// (drawn by the caller), class its distance class. The first error's position is calibrated:
// a target is drawn from the triangular distribution on [0, 1] (median 0.5, the median
// normalised first-error position of real models' C++ completions) and, among the faults of
// the class found, the one whose error lies nearest it is used.
func (p *planner) plan(ctx context.Context, t Task, rng *rand.Rand, wantFault bool, class string) (*Plan, error) {
	pl := &Plan{TaskID: t.ID}
	if wantFault {
		pl.WantClass = class
		pl.WantPos = (rng.Float64() + rng.Float64()) / 2
	}
	src := t.Text()
	g := len(t.Prompt)
	seen := map[string]bool{src: true}
	var found, match []*Fault
	ops := opsFor(class, p.opsOf(t), rng)
	for i := 0; pl.ClangRuns < p.candidates && i < 6*len(ops); i++ {
		op := ops[i%len(ops)]
		m, err := mutate.Apply(src, t.Lang, op, rng)
		if err != nil {
			if errors.Is(err, mutate.ErrNotApplicable) {
				continue
			}
			return nil, fmt.Errorf("plan %s: %w", t.ID, err)
		}
		diff := textops.CommonPrefix(src, m.Text)
		if seen[m.Text] || diff < g || m.RootOff < g {
			continue // the same mutant again, or one that changes the prompt
		}
		seen[m.Text] = true
		pl.ClangRuns++
		res, err := runClang(ctx, p.clang, t, m.Text)
		if err != nil {
			return nil, fmt.Errorf("plan %s: %w", t.ID, err)
		}
		if res.ok || res.line < m.RootLine {
			continue // compiles, or clang complains before the root's line (not the fault we meant)
		}
		f := &Fault{Op: m.Op, Desc: m.Desc, Text: m.Text, Diff: min(diff, m.RootOff), RootOff: m.RootOff,
			RootLine: m.RootLine, ErrOff: res.off, ErrLine: res.line, Diag: res.diag, Gen: g}
		f.Class = classify(m.Text, g, f)
		f.ErrPos = float64(f.ErrOff-g) / float64(max(len(m.Text)-g, 1))
		f.Hint = DiagHint(f.Diag)
		if f.Workaround, err = p.workaround(ctx, t, f); err != nil {
			return nil, fmt.Errorf("plan %s: %w", t.ID, err)
		}
		found = append(found, f)
		if f.Class == class {
			match = append(match, f)
		}
		if (!wantFault || len(match) >= classMatches) && len(found) >= p.poolSize+1 {
			break
		}
	}
	if wantFault && len(found) > 0 {
		if len(match) == 0 {
			match = []*Fault{closest(found, class)}
		}
		pl.First = match[0]
		for _, f := range match[1:] {
			if math.Abs(f.ErrPos-pl.WantPos) < math.Abs(pl.First.ErrPos-pl.WantPos) {
				pl.First = f
			}
		}
	}
	for _, f := range found {
		if f != pl.First && len(pl.Pool) < p.poolSize {
			pl.Pool = append(pl.Pool, f)
		}
	}
	return pl, nil
}

// classify puts f in a distance class, counting source lines of text from the first generated
// line (the line holding offset g).
func classify(text string, g int, f *Fault) string {
	first := strings.Count(text[:g], "\n") + 1
	switch {
	case f.RootLine == f.ErrLine:
		return ClassLocal
	case float64(f.RootLine-first) < float64(f.ErrLine-first)/2:
		return ClassFar
	}
	return ClassMid
}

// closest picks the found fault whose class is nearest to want (local < mid < far).
func closest(found []*Fault, want string) *Fault {
	rank := map[string]int{ClassLocal: 0, ClassMid: 1, ClassFar: 2}
	best := found[0]
	for _, f := range found[1:] {
		if abs(rank[f.Class]-rank[want]) < abs(rank[best.Class]-rank[want]) {
			best = f
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// clangResult is the verdict of whole-file clang -fsyntax-only and its first error.
type clangResult struct {
	ok   bool
	off  int // byte offset of the first error in the text
	line int
	col  int
	diag string
}

// runClang checks text as a whole file with its language's compiler (lang.Language.CheckFile):
// `clang -fsyntax-only` and the task's flags, or for TypeScript `tsc --noEmit` (then clang is
// not used); the first error in the task's file (not in a header) is the one recorded.
func runClang(ctx context.Context, clang string, t Task, text string) (clangResult, error) {
	l := lang.ForFile(t.Filename())
	o := lang.FileOptions{Name: t.Filename()}
	if l.UsesFlags {
		o.Compiler, o.Flags = clang, append(slices.Clone(t.Flags()), "-ferror-limit=1")
	}
	v, err := l.CheckFile(ctx, text, o)
	if err != nil {
		return clangResult{}, fmt.Errorf("%s check: %w", l.Name, err)
	}
	if v.OK {
		return clangResult{ok: true}, nil
	}
	d, ok := v.FirstIn(t.Filename())
	if !ok {
		return clangResult{}, fmt.Errorf("clang check: %s failed without an error in the file: %s", clang, textops.FirstLine(v.Output))
	}
	return clangResult{off: offsetOf(text, d.Line, d.Col), line: d.Line, col: d.Col, diag: d.Msg}, nil
}

// offsetOf converts a 1-based line and byte column to a byte offset in text.
func offsetOf(text string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			return len(text)
		}
		off += nl + 1
	}
	return min(off+col-1, len(text))
}
