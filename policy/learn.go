package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Beliefs are what TokPol has learned about one model's errors: pseudo-counts of a Dirichlet
// over the root cause's distance class (local, near, far; Prior's classes) and of a Beta over
// the success probability q. The paper's figures are the starting point (PaperBeliefs).
type Beliefs struct {
	Local float64 `json:"local"`
	Near  float64 `json:"near"`
	Far   float64 `json:"far"`
	// QSucc and QFail count repairs from at or before the root that worked and that failed
	// (expected counts: the root is never seen, only inferred).
	QSucc float64 `json:"q_success"`
	QFail float64 `json:"q_failure"`
	// Episodes is how many finished errors were learned from.
	Episodes int `json:"episodes"`
}

// priorStrength is how many episodes' worth of evidence the starting beliefs carry: after
// about that many observed errors, what was seen weighs as much as the paper's figures.
const priorStrength = 10

// PaperBeliefs are the starting beliefs: the class masses of DefaultPrior (the paper's §2.4
// figures) and q = 0.7, each worth priorStrength episodes.
func PaperBeliefs() Beliefs { return beliefsFrom(DefaultPrior(), 0.7) }

func beliefsFrom(p Prior, q float64) Beliefs {
	return Beliefs{Local: priorStrength * p.Local, Near: priorStrength * p.near(), Far: priorStrength * p.Far,
		QSucc: priorStrength * q, QFail: priorStrength * (1 - q)}
}

// Q is the mean of the belief about q.
func (b Beliefs) Q() float64 { return b.QSucc / (b.QSucc + b.QFail) }

// Masses are the mean class masses (local, far); near is the rest.
func (b Beliefs) Masses() (local, far float64) {
	n := b.Local + b.Near + b.Far
	return b.Local / n, b.Far / n
}

// Episode is one finished error as TokPol saw it: its rollback candidates' offsets, the error's
// offset, where its enclosing top-level declaration starts, the starts of the repairs that failed,
// and the start of the one that got past it.
type Episode struct {
	Cands   []int `json:"cands"`
	Err     int   `json:"err"`
	Scope   int   `json:"scope"`
	Failed  []int `json:"failed"`
	Success int   `json:"success"`
	// Changed is where the successful repair's text first differs from the failed rollout's
	// (at most Err; 0 when unknown). When it lies after Success it locates the root: the fix
	// the repair made begins there, so any rollback point at or before it could have made it,
	// and none after it. At Success (the repair rewrote from its first byte) it says no more
	// than Success does.
	Changed int `json:"changed,omitempty"`
	// Unfinished: the search's budget ran out before any repair got past the error; the
	// episode has only its failures (Success and Changed mean nothing). Leaving such episodes
	// out would leave out the hardest errors and bias q high.
	Unfinished bool `json:"unfinished,omitempty"`
}

// rootBucket is the index of the bucket (of cands) that holds offset x.
func rootBucket(cands []int, x int) int {
	k := 0
	for i, c := range cands {
		if c <= x {
			k = i
		}
	}
	return k
}

// Update returns the beliefs after one episode, by one step of expectation–maximisation: the
// posterior over the root's bucket given every attempt (a failure from a has likelihood 1 − q
// when the root lies at or after a, else 1; the success from s has likelihood q when it does,
// else 0; when the episode says where the successful repair's text first changed, after s,
// the root is in that bucket; an unfinished episode has no success term), computed with the current beliefs (shape p, their class masses and q), is split into
// the prior's classes bucket by bucket; the expected class counts and the expected successes
// and failures of attempts from at or before the root are added to the pseudo-counts.
func (b Beliefs) Update(p Prior, ep Episode) Beliefs {
	if len(ep.Cands) == 0 {
		return b
	}
	p.Local, p.Far = b.Masses()
	q := b.Q()
	local, near, far := PriorParts(p, ep.Cands, ep.Err, ep.Scope)
	m := len(ep.Cands)
	located := !ep.Unfinished && ep.Changed > ep.Success
	at := rootBucket(ep.Cands, ep.Changed)
	w := make([]float64, m)
	for i, c := range ep.Cands {
		w[i] = local[i] + near[i] + far[i]
		for _, a := range ep.Failed {
			if c >= a {
				w[i] *= 1 - q
			}
		}
		switch {
		case ep.Unfinished:
		case c < ep.Success || (located && i != at):
			w[i] = 0
		default:
			w[i] *= q
		}
	}
	total := sum(w)
	if total <= 0 {
		return b // the episode contradicts the model (the success came from after every root it allows)
	}
	for i := range w {
		w[i] /= total
		if all := local[i] + near[i] + far[i]; all > 0 {
			b.Local += w[i] * local[i] / all
			b.Near += w[i] * near[i] / all
			b.Far += w[i] * far[i] / all
		}
	}
	if !ep.Unfinished {
		b.QSucc++
	}
	for _, a := range ep.Failed {
		for i, c := range ep.Cands {
			if c >= a {
				b.QFail += w[i]
			}
		}
	}
	b.Episodes++
	return b
}

// Learner holds the beliefs TokPol learns for one model, shared by every search that uses it
// (safe for concurrent use), and, when it has a file, keeps them there across runs.
type Learner struct {
	mu    sync.Mutex
	start Beliefs // where learning began (in this process)
	b     Beliefs
	path  string // "" keeps them in memory only
	err   error  // the last failure to save, if any
}

// NewLearner returns a learner that starts from b and keeps what it learns in memory.
func NewLearner(b Beliefs) *Learner { return &Learner{start: b, b: b} }

// Beliefs returns the current beliefs.
func (l *Learner) Beliefs() Beliefs {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b
}

// Observe learns from one finished episode (see Beliefs.Update) and saves the beliefs when the
// learner has a file.
func (l *Learner) Observe(p Prior, ep Episode) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = l.b.Update(p, ep)
	if l.path == "" {
		return
	}
	l.err = writeBeliefs(l.path, l.b)
}

// Err is the last error saving the beliefs, or nil.
func (l *Learner) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// learners are the persistent learners of this process, by model name.
var learners sync.Map

// ModelLearner returns the learner of a model for this process: every search of the process
// that names the model shares it, and it is kept under the user's cache directory
// (os.UserCacheDir()/hydra/tokpol/MODEL.json), so that later runs start from what earlier ones
// learned. A model never seen before starts from PaperBeliefs. When the cache directory cannot
// be used the learner keeps its beliefs in memory (Err says why).
func ModelLearner(model string) *Learner {
	if v, ok := learners.Load(model); ok {
		return v.(*Learner)
	}
	var l *Learner
	dir, err := os.UserCacheDir()
	switch {
	case standIn(model):
		// A stand-in's outcomes say nothing about a model: learn in memory only.
		l = NewLearner(PaperBeliefs())
	case err == nil:
		l = FileLearner(filepath.Join(dir, "hydra", "tokpol", fileName(model)+".json"), PaperBeliefs())
	default:
		l = NewLearner(PaperBeliefs())
		l.err = fmt.Errorf("tokpol beliefs: %w", err)
	}
	v, _ := learners.LoadOrStore(model, l)
	return v.(*Learner)
}

// FileLearner returns a learner kept in the file at path: it starts from the beliefs the file
// holds (start when there is none, or when it cannot be read: Err says why) and saves them there
// after every episode. Every model's searches that use it share it (`tokpol:beliefs=FILE`).
func FileLearner(path string, start Beliefs) *Learner {
	l := &Learner{b: start, path: path}
	switch data, rerr := os.ReadFile(path); {
	case rerr == nil:
		var b Beliefs
		if jerr := json.Unmarshal(data, &b); jerr != nil || b.Local+b.Near+b.Far <= 0 || b.QSucc+b.QFail <= 0 {
			l.err = fmt.Errorf("tokpol beliefs %s: unreadable, starting from the paper's figures", path)
		} else {
			l.b = b
		}
	case !os.IsNotExist(rerr):
		l.err = fmt.Errorf("tokpol beliefs: %w", rerr)
	}
	l.start = l.b
	return l
}

// fileName makes a model name safe as a file name ("" is "default").
func fileName(model string) string {
	if model == "" {
		return "default"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, model)
}

// writeBeliefs saves b at path through a temporary file.
func writeBeliefs(path string, b Beliefs) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("tokpol beliefs: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tokpol beliefs: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".beliefs-*.tmp")
	if err != nil {
		return fmt.Errorf("tokpol beliefs: %w", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("tokpol beliefs: %w", werr)
	}
	return nil
}

// standIn reports whether model is one of Hydra's own stand-ins for a model (the simulated
// model, the scripted stand-in of the tests), whose beliefs are never kept on disk.
func standIn(model string) bool {
	return model == "hydra-simulated-model" || model == "scripted-stand-in" || strings.HasSuffix(model, "-stand-in")
}
