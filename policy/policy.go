// Package policy holds Hydra's repair policies (docs/POLICIES.md): implementations
// of engine.Policy that decide, when the checker rejects a rollout, from which accepted prefix to
// generate again. Call ByName to get one by the name the CLI and the language server use, and
// Names for the list.
//
// Every policy here is stateless: what it knows about earlier failures it reads from the
// engine.State it is given (the error history and the rollouts), so one value can serve many
// searches at once.
package policy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hydra-lsp/hydra/engine"
)

// Default is the name of the policy used when none is named: TokPol.
const Default = "tokpol"

// Option sets a policy parameter. Options a policy does not use are ignored by it.
type Option func(*Options)

// Options are the parameters of the policies. The zero value of a field means its default.
type Options struct {
	// SuccessProb is the chance that a repair from a candidate at or before the root cause
	// fixes the error (TokPol's q). Default 0.7.
	SuccessProb float64
	// Prior is the shape of TokPol's prior over the root cause. Default DefaultPrior().
	Prior Prior
	// SameErrorBytes is the offset threshold under which a new error with the same category
	// counts as the same failure again. Default 80 bytes.
	SameErrorBytes int
	// BytesPerToken estimates tokens from bytes when a rollout's tokens are not known. Default 3.5.
	BytesPerToken float64
	// PastTokens is the cost, in tokens, of getting past the error once the root is fixed
	// (TokPol's T(c) adds it to the tokens from c to the error). Default 10.
	PastTokens float64
	// Lines is how far back the fixed-distance policy rolls back. Default 5.
	Lines int
	// Width is how many rollback points the parallel policy explores at once. Default 3.
	Width int
	// NoLastResort turns off the rule that a search's last attempt restarts from the root.
	NoLastResort bool
	// NoLearning keeps TokPol's prior and q fixed instead of learning them from outcomes.
	NoLearning bool
	// PersistLearning makes TokPol learn per model (State.Model) with the process-wide learner
	// kept under the user's cache directory (ModelLearner), instead of in memory per policy value.
	PersistLearning bool
	// BeliefsFile keeps what TokPol learns in this file, whatever the model (it starts from
	// what the file holds and saves after every finished error), instead of in memory per
	// policy value: `tokpol:beliefs=FILE`, for learning across benchmark runs.
	BeliefsFile string
}

// WithPersistentLearning makes TokPol learn per model across the searches of the process and
// across runs (ModelLearner). Without it a TokPol value learns across the searches it serves.
func WithPersistentLearning() Option { return func(o *Options) { o.PersistLearning = true } }

// WithoutLearning keeps TokPol's prior and q fixed.
func WithoutLearning() Option { return func(o *Options) { o.NoLearning = true } }

// WithSuccessProb sets TokPol's success probability q (0 < q ≤ 1).
func WithSuccessProb(q float64) Option { return func(o *Options) { o.SuccessProb = q } }

// WithPrior sets TokPol's prior shape.
func WithPrior(p Prior) Option { return func(o *Options) { o.Prior = p } }

// WithSameErrorBytes sets the offset threshold of "the same error again".
func WithSameErrorBytes(n int) Option { return func(o *Options) { o.SameErrorBytes = n } }

// WithLines sets the fixed-distance policy's rollback distance in lines.
func WithLines(n int) Option { return func(o *Options) { o.Lines = n } }

// WithWidth sets how many rollback points the parallel policy explores at once.
func WithWidth(k int) Option { return func(o *Options) { o.Width = k } }

// WithoutLastResort turns off the restart from the root on a search's last attempt.
func WithoutLastResort() Option { return func(o *Options) { o.NoLastResort = true } }

func newOptions(opts []Option) Options {
	var o Options
	for _, f := range opts {
		f(&o)
	}
	if o.SuccessProb <= 0 || o.SuccessProb > 1 {
		o.SuccessProb = 0.7
	}
	if o.Prior == (Prior{}) {
		o.Prior = DefaultPrior()
	}
	if o.SameErrorBytes <= 0 {
		o.SameErrorBytes = 80
	}
	if o.BytesPerToken <= 0 {
		o.BytesPerToken = 3.5
	}
	if o.PastTokens <= 0 {
		o.PastTokens = 10
	}
	if o.Lines <= 0 {
		o.Lines = 5
	}
	if o.Width <= 0 {
		o.Width = 3
	}
	return o
}

// registry maps each policy name to its constructor and a one-line description.
var registry = map[string]struct {
	summary string
	make    func(Options) engine.Policy
}{
	"tokpol":        {"Bayesian root-cause estimation minimising expected tokens, learning its prior and q from outcomes (Hydra's TokPol)", func(o Options) engine.Policy { return newTokPol(o) }},
	"local-first":   {"retry just before the error line, then escalate to earlier declarations", func(o Options) engine.Policy { return &LocalFirst{opts: o} }},
	"fixed":         {"roll back a fixed number of lines, further on each repeated failure", func(o Options) engine.Policy { return &Fixed{opts: o} }},
	"posthoc":       {"baseline: generate the whole program, compile, regenerate all with the errors", func(o Options) engine.Policy { return &PostHoc{opts: o} }},
	"unconstrained": {"baseline: no checking, the program is taken as generated", func(o Options) engine.Policy { return Unconstrained{} }},
	"uncertainty":   {"roll back to before the most uncertain token (needs logprobs)", func(o Options) engine.Policy { return &Uncertainty{opts: o} }},
	"parallel":      {"repair from several rollback points at once, keep the first that passes", func(o Options) engine.Policy { return &Parallel{opts: o} }},
	"random":        {"roll back to a rollback candidate chosen uniformly at random", func(o Options) engine.Policy { return &Random{opts: o} }},
	"lockstep":      {"baseline: check after every chunk, repair only at the current line", func(o Options) engine.Policy { return &Lockstep{opts: o} }},
}

// Names returns the policy names ByName accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Summary returns the one-line description of the named policy, or "" if there is none.
func Summary(name string) string { return registry[name].summary }

// ByName returns the policy with the given name ("" means Default), configured by opts. The
// name may carry parameters after colons, as the CLI takes them: "tokpol:q=0.8:scope=2",
// "fixed:lines=8", "parallel:width=4" (keys: q, local, far, scope, decreasing=0|1, same, lines,
// width, lastresort=false, learn=0|1, beliefs=FILE); they apply after opts.
func ByName(name string, opts ...Option) (engine.Policy, error) {
	spec := strings.Split(strings.TrimSpace(name), ":")
	base := strings.ToLower(spec[0])
	if base == "" {
		base = Default
	}
	r, ok := registry[base]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", spec[0], strings.Join(Names(), ", "))
	}
	for _, kv := range spec[1:] {
		o, err := parseParam(kv)
		if err != nil {
			return nil, fmt.Errorf("policy %q: %w", name, err)
		}
		opts = append(opts, o)
	}
	return r.make(newOptions(opts)), nil
}

// parseParam turns "key=value" into an Option.
func parseParam(kv string) (Option, error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return nil, fmt.Errorf("parameter %q is not key=value", kv)
	}
	if k == "beliefs" {
		if v == "" {
			return nil, fmt.Errorf("parameter beliefs: no file named")
		}
		return func(o *Options) { o.BeliefsFile = v }, nil
	}
	num, err := strconv.ParseFloat(v, 64)
	if err != nil && k != "lastresort" {
		return nil, fmt.Errorf("parameter %s: %q is not a number", k, v)
	}
	switch k {
	case "q":
		if num <= 0 || num > 1 {
			return nil, fmt.Errorf("parameter q: %v is not in (0, 1]", num)
		}
		return WithSuccessProb(num), nil
	case "decreasing":
		return func(o *Options) {
			if o.Prior == (Prior{}) {
				o.Prior = DefaultPrior()
			}
			o.Prior.Decreasing = num != 0
		}, nil
	case "local", "far", "scope":
		if num < 0 || (k != "scope" && num > 1) {
			return nil, fmt.Errorf("parameter %s: %v out of range", k, num)
		}
		return func(o *Options) {
			if o.Prior == (Prior{}) {
				o.Prior = DefaultPrior()
			}
			switch k {
			case "local":
				o.Prior.Local = num
			case "far":
				o.Prior.Far = num
			case "scope":
				o.Prior.Scope = num
			}
		}, nil
	case "same":
		return WithSameErrorBytes(int(num)), nil
	case "lines":
		return WithLines(int(num)), nil
	case "width":
		return WithWidth(int(num)), nil
	case "learn":
		return func(o *Options) { o.NoLearning = num == 0 }, nil
	case "lastresort":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("parameter lastresort: %q is not a boolean", v)
		}
		return func(o *Options) { o.NoLastResort = !b }, nil
	}
	return nil, fmt.Errorf("unknown parameter %q (known: q, local, far, scope, decreasing, same, lines, width, lastresort, learn, beliefs)", k)
}
