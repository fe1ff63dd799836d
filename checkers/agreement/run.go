package agreement

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/mutate"
)

// Mutants makes up to perProgram mutants of each program (deterministic for seed), in program
// order, and stops at max in total (max ≤ 0: no limit).
func Mutants(progs []Program, perProgram, max int, seed uint64) []Program {
	var out []Program
	for i, p := range progs {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		for k, m := range mutate.All(p.Text, p.Lang, rng, perProgram) {
			if max > 0 && len(out) >= max {
				return out
			}
			q := p
			q.ID = fmt.Sprintf("%s#m%d", p.ID, k)
			q.Text, q.Op, q.Desc = m.Text, string(m.Op), m.Desc
			out = append(out, q)
		}
	}
	return out
}

// Outcome is the comparison on one program.
type Outcome struct {
	Program     Program
	Incremental Verdict
	Whole       Verdict
	Agree       bool
	// Warm is set when the incremental side resumed a checkpoint instead of starting cold.
	Warm bool
	// Err is an infrastructure failure on either side (counted as a disagreement).
	Err error
}

// Report sums up a Run.
type Report struct {
	Outcomes []Outcome
	Total    int
	Agreed   int
	// WholeRejected counts programs whole-file clang rejects (mutants that broke the program).
	WholeRejected int
	// SameColumn counts agreeing rejections whose first errors are also in the same column
	// (columns are not part of the bar; this says how close the two sides are).
	SameColumn int
	// Late counts first errors that arrived after progress past their offset.
	Late    int
	Warm    int
	Elapsed time.Duration
	// Per operator (originals under "original"): total and agreed.
	ByOp map[string][2]int
}

// Rate is the fraction of programs on which both sides agree.
func (r *Report) Rate() float64 {
	if r.Total == 0 {
		return 0
	}
	return float64(r.Agreed) / float64(r.Total)
}

// Disagreements returns the outcomes where the sides disagree (or one failed).
func (r *Report) Disagreements() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if !o.Agree {
			out = append(out, o)
		}
	}
	return out
}

// String is the report for people: totals, per-operator table, every disagreement.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agreement: %d/%d = %.2f%% in %s\n", r.Agreed, r.Total, 100*r.Rate(), r.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "  whole-file clang rejected %d; first error in the same column too: %d; first error arrived after progress past it: %d\n",
		r.WholeRejected, r.SameColumn, r.Late)
	fmt.Fprintf(&b, "  incremental side resumed a shared preamble checkpoint: %d\n", r.Warm)
	ops := make([]string, 0, len(r.ByOp))
	for op := range r.ByOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		c := r.ByOp[op]
		fmt.Fprintf(&b, "  %-18s %5d/%-5d agree\n", op, c[1], c[0])
	}
	for _, o := range r.Disagreements() {
		fmt.Fprintf(&b, "DISAGREE %s", o.Program.ID)
		if o.Program.Op != "" {
			fmt.Fprintf(&b, " [%s: %s]", o.Program.Op, o.Program.Desc)
		}
		if o.Err != nil {
			fmt.Fprintf(&b, "\n    failure: %v\n", o.Err)
			continue
		}
		fmt.Fprintf(&b, "\n    incremental: %s\n    whole-file:  %s\n", o.Incremental, o.Whole)
	}
	return b.String()
}

// Config configures Run.
type Config struct {
	Checker checkers.Checker
	Clang   string // whole-file clang driver (ClangPath)
	Workers int    // default 2
	// Warm lets the incremental side resume a checkpoint of the same preamble made by an
	// earlier program of the same group (consecutive programs with the same ID before '#').
	Warm bool
	// Progress, when set, is called after each program (from worker goroutines, serially).
	Progress func(done, total int)
}

// Run compares both sides on every program. Programs are processed in groups (an original and
// its mutants share a group) so that with Warm set a group's preamble checkpoint is reused.
func Run(ctx context.Context, cfg Config, progs []Program) *Report {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	start := time.Now()
	// Group consecutive programs by corpus id.
	var groups [][]int
	for i, p := range progs {
		id, _, _ := strings.Cut(p.ID, "#")
		if len(groups) > 0 {
			prev, _, _ := strings.Cut(progs[groups[len(groups)-1][0]].ID, "#")
			if prev == id {
				groups[len(groups)-1] = append(groups[len(groups)-1], i)
				continue
			}
		}
		groups = append(groups, []int{i})
	}
	outcomes := make([]Outcome, len(progs))
	work := make(chan []int)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range work {
				var held []checkers.Checkpoint
				for _, i := range g {
					outcomes[i] = compare(ctx, cfg, progs[i], &held)
					mu.Lock()
					done++
					if cfg.Progress != nil {
						cfg.Progress(done, len(progs))
					}
					mu.Unlock()
				}
				for _, cp := range held {
					cp.Release()
				}
			}
		}()
	}
	for _, g := range groups {
		select {
		case work <- g:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	r := &Report{Outcomes: outcomes, Total: len(progs), ByOp: map[string][2]int{}, Elapsed: time.Since(start)}
	for _, o := range outcomes {
		op := o.Program.Op
		if op == "" {
			op = "original"
		}
		c := r.ByOp[op]
		c[0]++
		if o.Agree {
			r.Agreed++
			c[1]++
		}
		r.ByOp[op] = c
		if !o.Whole.OK && o.Err == nil {
			r.WholeRejected++
			if o.Agree && o.Incremental.Col == o.Whole.Col {
				r.SameColumn++
			}
		}
		if o.Warm {
			r.Warm++
		}
		if o.Incremental.Late {
			r.Late++
		}
	}
	return r
}

// compare runs both sides on one program.
func compare(ctx context.Context, cfg Config, p Program, held *[]checkers.Checkpoint) Outcome {
	o := Outcome{Program: p}
	var w *warmth
	if cfg.Warm {
		pe := chunk.PreambleEnd(p.Text, chunk.OptionsForFlags(p.Flags, p.Base))
		w = &warmth{keep: func(cp checkers.Checkpoint) {
			if cp.Off() == pe && len(*held) < 4 {
				*held = append(*held, cp)
			} else {
				cp.Release()
			}
		}}
	}
	o.Incremental, o.Warm, o.Err = incremental(ctx, cfg.Checker, p.Text, p.Base, p.Flags, w)
	if o.Err != nil {
		o.Err = fmt.Errorf("incremental: %w", o.Err)
		return o
	}
	wv, err := Whole(ctx, cfg.Clang, p.Text, p.Base, p.Flags)
	if err != nil {
		o.Err = err
		return o
	}
	o.Whole = wv
	o.Agree = Agree(o.Incremental, o.Whole)
	return o
}
