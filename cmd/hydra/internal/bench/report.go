package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hydra-lsp/hydra/internal/stats"
)

// Run is the outcome of one policy on one task.
type Run struct {
	Task   string `json:"task"`
	Policy string `json:"policy"`
	// Latency is the search's wall time; Tokens its output tokens over all rollouts.
	Latency time.Duration `json:"latency_ns"`
	Tokens  int           `json:"tokens"`
	// PromptTokens and CachedPromptTokens are the prompt tokens billed and served from the
	// server's prefix cache.
	PromptTokens       int `json:"prompt_tokens"`
	CachedPromptTokens int `json:"cached_prompt_tokens"`
	Attempts           int `json:"attempts"`
	// HitError: the search saw a static error (a rollout was rejected, or the final program
	// does not compile).
	HitError bool `json:"hit_error"`
	// Accepted is the engine's verdict; StaticOK whether the final program compiles when
	// checked again, on its own, by clang; Functional whether it passed its tests (nil when
	// the task has none).
	Accepted   bool   `json:"accepted"`
	StaticOK   bool   `json:"static_ok"`
	Functional *bool  `json:"functional,omitempty"`
	Reason     string `json:"reason"`
	// CheckpointResumes, RestartBytes and ResubmittedBytes describe checker-side rollback:
	// rollouts resumed from a checkpoint, the bytes of prefix the repairs started after, and
	// the bytes the checker had to re-check because no checkpoint sat exactly there.
	CheckpointResumes int `json:"checkpoint_resumes"`
	RestartBytes      int `json:"restart_bytes"`
	ResubmittedBytes  int `json:"resubmitted_bytes"`
	// CheckerLagMS is how long, on average, the checker accepted a chunk after the model had
	// streamed it (see checkerLag): near the chunking delay when the checker keeps up.
	CheckerLagMS float64 `json:"checker_lag_ms"`
	// Learned is what a learning TokPol believed when the run ended (its class masses and q,
	// learned from the runs before; see policy.Beliefs).
	Learned *Learned `json:"learned,omitempty"`
	Err     string   `json:"error,omitempty"`
}

// Learned is a learning TokPol's beliefs as means: the root's distance-class masses, q, and
// how many finished errors they were learned from.
type Learned struct {
	Local    float64 `json:"local"`
	Far      float64 `json:"far"`
	Q        float64 `json:"q"`
	Episodes int     `json:"episodes"`
	// StartLocal, StartFar and StartQ are where its learning began.
	StartLocal float64 `json:"start_local"`
	StartFar   float64 `json:"start_far"`
	StartQ     float64 `json:"start_q"`
}

// Metrics summarise a policy's runs over a set of tasks (the paper's Table 3 plus correctness).
type Metrics struct {
	Tasks             int     `json:"tasks"`
	LatencyMean       float64 `json:"latency_mean_s"`
	LatencyP50        float64 `json:"latency_p50_s"`
	LatencyP75        float64 `json:"latency_p75_s"`
	TokensMean        float64 `json:"tokens_mean"`
	TokensP50         float64 `json:"tokens_p50"`
	TokensP75         float64 `json:"tokens_p75"`
	StaticCorrect     float64 `json:"static_correct"`
	FunctionalCorrect float64 `json:"functional_correct"`
	// FunctionalTasks is how many of the tasks have tests (the denominator of FunctionalCorrect).
	FunctionalTasks int     `json:"functional_tasks"`
	AttemptsMean    float64 `json:"attempts_mean"`
	// CheckpointResumesMean is the mean number of checker resumes per task; CheckerReuse the
	// share of the repairs' restart prefixes the checker did not re-check (1 = all from checkpoints).
	CheckpointResumesMean float64 `json:"checkpoint_resumes_mean"`
	CheckerReuse          float64 `json:"checker_reuse"`
	// PromptCacheHit is the share of prompt tokens served from the server's prefix cache.
	PromptCacheHit float64 `json:"prompt_cache_hit"`
	Failures       int     `json:"infrastructure_failures"`
	// RepairOverheadMean is the mean over tasks of the run's output tokens minus those of the
	// same task's unconstrained (one-pass) run: what repairing cost, independently of program
	// length (set when unconstrained ran).
	RepairOverheadMean float64 `json:"repair_overhead_tokens_mean"`
	// CheckerLagP50 and CheckerLagP95 are percentiles over the runs of their mean checker lag
	// (ms): how far checking ran behind the model's stream.
	CheckerLagP50 float64 `json:"checker_lag_p50_ms"`
	CheckerLagP95 float64 `json:"checker_lag_p95_ms"`
}

// Summarize computes the metrics of runs. Runs that failed on an infrastructure error count as
// incorrect and in Failures, but not in the latency and token figures.
func Summarize(runs []Run) Metrics {
	m := Metrics{Tasks: len(runs)}
	if len(runs) == 0 {
		return m
	}
	var lat, tok, lag []float64
	var static, fn, att, res, restart, resub, prompt, cached float64
	for _, r := range runs {
		if r.Err == "" { // a run the infrastructure broke has no cost figures; it counts as incorrect
			lat = append(lat, r.Latency.Seconds())
			tok = append(tok, float64(r.Tokens))
			if r.CheckerLagMS > 0 {
				lag = append(lag, r.CheckerLagMS)
			}
		}
		if r.StaticOK {
			static++
		}
		if r.Functional != nil {
			m.FunctionalTasks++
			if *r.Functional {
				fn++
			}
		}
		if r.Err != "" {
			m.Failures++
		}
		att += float64(r.Attempts)
		res += float64(r.CheckpointResumes)
		restart += float64(r.RestartBytes)
		resub += float64(r.ResubmittedBytes)
		prompt += float64(r.PromptTokens)
		cached += float64(r.CachedPromptTokens)
	}
	n := float64(len(runs))
	m.LatencyMean, m.LatencyP50, m.LatencyP75 = mean(lat), stats.Quantile(lat, 0.50), stats.Quantile(lat, 0.75)
	m.TokensMean, m.TokensP50, m.TokensP75 = mean(tok), stats.Quantile(tok, 0.50), stats.Quantile(tok, 0.75)
	m.CheckerLagP50, m.CheckerLagP95 = stats.Quantile(lag, 0.50), stats.Quantile(lag, 0.95)
	m.StaticCorrect = static / n
	if m.FunctionalTasks > 0 {
		m.FunctionalCorrect = fn / float64(m.FunctionalTasks)
	}
	m.AttemptsMean = att / n
	m.CheckpointResumesMean = res / n
	if restart > 0 {
		m.CheckerReuse = math.Max(0, 1-resub/restart)
	}
	if prompt > 0 {
		m.PromptCacheHit = cached / prompt
	}
	return m
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// PolicyReport is one policy's metrics over all tasks and over the tasks that hit a static error.
type PolicyReport struct {
	All      Metrics `json:"all"`
	Erroring Metrics `json:"erroring"`
}

// Ratio compares a policy with the post-hoc baseline on the erroring tasks: the relative
// change of mean tokens and mean latency (−0.70 = 70% fewer).
type Ratio struct {
	TokensChange  float64 `json:"tokens_change"`
	LatencyChange float64 `json:"latency_change"`
}

// Report is what `hydra bench` prints: --json writes it as one object.
type Report struct {
	// Simulator states the simulated model's assumptions (or names the real server).
	Simulator map[string]any          `json:"simulator"`
	Policies  map[string]PolicyReport `json:"policies"`
	// VsPostHoc compares each policy with post-hoc repair on erroring tasks (when posthoc ran).
	VsPostHoc map[string]Ratio `json:"vs_posthoc,omitempty"`
	// ErrorFree compares each policy's mean latency with unconstrained generation on the tasks
	// no policy saw an error on (relative change; when unconstrained ran).
	ErrorFreeVsUnconstrained map[string]float64 `json:"error_free_latency_vs_unconstrained,omitempty"`
	Config                   Config             `json:"config"`
	ErroringTasks            []string           `json:"erroring_tasks"`
	// Paired compares TokPol with local-first, fixed and post-hoc on the erroring tasks: the
	// geometric mean of the per-task ratios with a bootstrap interval, Holm-corrected over the
	// table's comparisons (tokens and latency of every pair) for a 95% family-wise level.
	Paired []Paired `json:"paired,omitempty"`
	// Learned is, per learning TokPol policy, what it had learned by the end of the run (the
	// beliefs of its run that had seen the most finished errors).
	Learned map[string]Learned `json:"learned,omitempty"`
	Runs    []Run              `json:"runs,omitempty"`
	order   []string
}

// NewReport builds the report of runs made with cfg. A task counts as erroring when any policy's
// run on it hit a static error: the first rollout is the same for every policy (same prompt,
// same seed), so this is "the model's first program had an error".
func NewReport(cfg Config, sim map[string]any, runs []Run) *Report {
	r := &Report{Simulator: sim, Policies: map[string]PolicyReport{}, Config: cfg, order: cfg.Policies, ErroringTasks: []string{}}
	erroring := map[string]bool{}
	for _, x := range runs {
		if x.HitError {
			erroring[x.Task] = true
		}
	}
	for t := range erroring {
		r.ErroringTasks = append(r.ErroringTasks, t)
	}
	sort.Strings(r.ErroringTasks)
	by := map[string][]Run{}
	for _, x := range runs {
		by[x.Policy] = append(by[x.Policy], x)
	}
	for _, p := range cfg.Policies {
		var errRuns []Run
		for _, x := range by[p] {
			if erroring[x.Task] {
				errRuns = append(errRuns, x)
			}
		}
		r.Policies[p] = PolicyReport{All: Summarize(by[p]), Erroring: Summarize(errRuns)}
	}
	if ph, ok := r.Policies["posthoc"]; ok && ph.Erroring.Tasks > 0 {
		r.VsPostHoc = map[string]Ratio{}
		for _, p := range cfg.Policies {
			e := r.Policies[p].Erroring
			r.VsPostHoc[p] = Ratio{TokensChange: change(e.TokensMean, ph.Erroring.TokensMean), LatencyChange: change(e.LatencyMean, ph.Erroring.LatencyMean)}
		}
	}
	if _, ok := by["unconstrained"]; ok {
		clean := func(p string) []Run {
			var out []Run
			for _, x := range by[p] {
				if !erroring[x.Task] {
					out = append(out, x)
				}
			}
			return out
		}
		uc := Summarize(clean("unconstrained"))
		if uc.Tasks > 0 {
			r.ErrorFreeVsUnconstrained = map[string]float64{}
			for _, p := range cfg.Policies {
				r.ErrorFreeVsUnconstrained[p] = change(Summarize(clean(p)).LatencyMean, uc.LatencyMean)
			}
		}
	}
	if _, ok := by["unconstrained"]; ok {
		base := map[string]float64{}
		for _, x := range by["unconstrained"] {
			if x.Err == "" {
				base[x.Task] = float64(x.Tokens)
			}
		}
		overhead := func(rs []Run) float64 {
			var d []float64
			for _, x := range rs {
				if b, ok := base[x.Task]; ok && x.Err == "" {
					d = append(d, float64(x.Tokens)-b)
				}
			}
			return mean(d)
		}
		for _, p := range cfg.Policies {
			pr := r.Policies[p]
			var errRuns []Run
			for _, x := range by[p] {
				if erroring[x.Task] {
					errRuns = append(errRuns, x)
				}
			}
			pr.All.RepairOverheadMean, pr.Erroring.RepairOverheadMean = overhead(by[p]), overhead(errRuns)
			r.Policies[p] = pr
		}
	}
	if _, ok := by["tokpol"]; ok {
		for _, b := range []string{"local-first", "fixed", "posthoc"} {
			if _, ok := by[b]; ok {
				r.Paired = append(r.Paired, pairedOn(runs, r.ErroringTasks, "tokpol", b))
			}
		}
	}
	// TokPol's variants (tokpol:learn=0, tokpol:beliefs=FILE, …) against the same baselines and
	// against plain TokPol, after TokPol's own pairs.
	for _, a := range cfg.Policies {
		if !strings.HasPrefix(a, "tokpol:") {
			continue
		}
		for _, b := range []string{"tokpol", "local-first", "fixed", "posthoc"} {
			if _, ok := by[b]; ok {
				r.Paired = append(r.Paired, pairedOn(runs, r.ErroringTasks, a, b))
			}
		}
	}
	HolmPaired(r.Paired)
	for _, p := range cfg.Policies {
		for _, x := range by[p] {
			if x.Learned != nil && (r.Learned[p].Episodes < x.Learned.Episodes) {
				if r.Learned == nil {
					r.Learned = map[string]Learned{}
				}
				r.Learned[p] = *x.Learned
			}
		}
	}
	if cfg.KeepRuns {
		r.Runs = runs
	}
	return r
}

// change is the relative change from base to x (0 when base is 0).
func change(x, base float64) float64 {
	if base == 0 {
		return 0
	}
	return x/base - 1
}

// WriteTable writes the human-readable report.
func (r *Report) WriteTable(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintln(b, "Model:", describeModel(r.Simulator))
	fmt.Fprintf(b, "Tasks: %d, of which %d hit a static error; seed %d; policies run side by side on the same tasks.\n",
		r.Config.Tasks, len(r.ErroringTasks), r.Config.Seed)
	section := func(title string, pick func(PolicyReport) Metrics, ratios bool) {
		fmt.Fprintf(b, "\n%s\n", title)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "policy\ttasks\tlat mean s\tp50\tp75\ttok mean\tp50\tp75\trepair overhead\tstatic\tfunctional\tattempts\t"
		if ratios && r.VsPostHoc != nil {
			head += "tok vs posthoc\tlat vs posthoc\t"
		}
		fmt.Fprintln(tw, head)
		for _, p := range r.order {
			m := pick(r.Policies[p])
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f%%\t%s\t%.2f\t", p, m.Tasks,
				m.LatencyMean, m.LatencyP50, m.LatencyP75, m.TokensMean, m.TokensP50, m.TokensP75, m.RepairOverheadMean,
				100*m.StaticCorrect, functional(m), m.AttemptsMean)
			if ratios && r.VsPostHoc != nil {
				v := r.VsPostHoc[p]
				fmt.Fprintf(tw, "%+.0f%%\t%+.0f%%\t", 100*v.TokensChange, 100*v.LatencyChange)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	section(fmt.Sprintf("Tasks that hit a static error (%d):", len(r.ErroringTasks)), func(p PolicyReport) Metrics { return p.Erroring }, true)
	section(fmt.Sprintf("All tasks (%d):", r.Config.Tasks), func(p PolicyReport) Metrics { return p.All }, false)

	if len(r.Paired) > 0 {
		fmt.Fprintf(b, "\nPaired on the erroring tasks (geometric mean of per-task ratios; bootstrap intervals Holm-corrected for the %d comparisons of this table, 95%% family-wise; CI%% is each interval's own level):\n", 2*len(r.Paired))
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "ratio\ttasks\ttokens\tCI\tCI%\tverdict\tlatency\tCI\tCI%\tverdict\t")
		for _, p := range r.Paired {
			fmt.Fprintf(tw, "%s/%s\t%d\t%.3f\t%.3f–%.3f\t%.1f\t%s\t%.3f\t%.3f–%.3f\t%.1f\t%s\t\n", p.A, p.B, p.Tokens.Tasks,
				p.Tokens.Ratio, p.Tokens.Lo, p.Tokens.Hi, 100*p.Tokens.Level, verdict(p.Tokens),
				p.Latency.Ratio, p.Latency.Lo, p.Latency.Hi, 100*p.Latency.Level, verdict(p.Latency))
		}
		tw.Flush()
	}
	fmt.Fprintln(b, "\nRollback reuse (all tasks):")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tcheckpoint resumes/task\tchecker prefix reuse\tprompt cache hit\terror-free latency vs unconstrained\tchecker lag p50 ms\tp95\t")
	for _, p := range r.order {
		m := r.Policies[p].All
		ef := "-"
		if v, ok := r.ErrorFreeVsUnconstrained[p]; ok {
			ef = fmt.Sprintf("%+.1f%%", 100*v)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f%%\t%.0f%%\t%s\t%.0f\t%.0f\t\n", p, m.CheckpointResumesMean, 100*m.CheckerReuse, 100*m.PromptCacheHit, ef, m.CheckerLagP50, m.CheckerLagP95)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

func functional(m Metrics) string {
	if m.FunctionalTasks == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%% of %d", 100*m.FunctionalCorrect, m.FunctionalTasks)
}

// describeModel describes the model the report is about: the simulator's key assumptions and
// its notes (it is never presented as a real model), or the real server.
func describeModel(sim map[string]any) string {
	if sim == nil {
		return "unknown"
	}
	if real, _ := sim["real_model"].(bool); real {
		return fmt.Sprintf("%v at %v (a real server)", sim["model"], sim["url"])
	}
	g := func(k string) any { return sim[k] }
	var b strings.Builder
	fmt.Fprintf(&b, "%v: a SIMULATED stand-in, not a real model (profile %v, %v ms/token x time scale %v; "+
		"first-attempt error rate %v, root distance local/mid/far %v/%v/%v, fix prob %v, stickiness %v, logprob AUC %v, new-fault rate %v; tokenizer %v)",
		g("model"), g("profile"), g("token_latency_ms"), g("time_scale"), g("error_rate"), g("local_frac"), g("mid_frac"),
		g("far_frac"), g("fix_prob"), g("stickiness"), g("logprob_auc"), g("new_fault_rate"), g("tokenizer"))
	if notes, ok := sim["notes"].([]any); ok {
		b.WriteString("\nSimulator assumptions:")
		for _, n := range notes {
			fmt.Fprintf(&b, "\n  - %v", n)
		}
	}
	if o, ok := sim["request_outcomes"]; ok {
		fmt.Fprintf(&b, "\nSimulator request outcomes: %v", o)
	}
	return b.String()
}
