package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteMarkdown writes the report as Markdown (`hydra bench --markdown`), as docs/POLICIES.md
// holds it: the model and every simulator parameter, a table per task set, and TokPol's paired
// ratios with a plain verdict.
func (r *Report) WriteMarkdown(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "Model: %s\n\n", oneLine(describeModel(r.Simulator)))
	fmt.Fprintf(b, "Simulator parameters: %s\n\n", simParams(r.Simulator))
	if fp, ok := r.Simulator["fault_plans"]; ok {
		data, _ := json.Marshal(fp)
		fmt.Fprintf(b, "Fault plans made (what the simulator produced): `%s`\n\n", data)
	}
	bud := r.Config.Budget()
	fmt.Fprintf(b, "Tasks: %d (%d hit a static error); seed %d; concurrency %d; budget per search, the same for every policy: %d attempts, %d output tokens, %s.\n",
		r.Config.Tasks, len(r.ErroringTasks), r.Config.Seed, r.Config.Parallel, bud.MaxAttempts, bud.MaxTokens, bud.Deadline)
	table := func(title string, pick func(PolicyReport) Metrics) {
		fmt.Fprintf(b, "\n%s\n\n", title)
		fmt.Fprintln(b, "| policy | tasks | tokens mean | p50 | p75 | repair overhead (tokens) | latency mean s | p50 | p75 | static | functional | attempts |")
		fmt.Fprintln(b, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
		for _, p := range r.order {
			m := pick(r.Policies[p])
			fmt.Fprintf(b, "| %s | %d | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.1f%% | %s | %.2f |\n", p, m.Tasks,
				m.TokensMean, m.TokensP50, m.TokensP75, m.RepairOverheadMean, m.LatencyMean, m.LatencyP50, m.LatencyP75,
				100*m.StaticCorrect, functional(m), m.AttemptsMean)
		}
	}
	table(fmt.Sprintf("Tasks that hit a static error (%d):", len(r.ErroringTasks)), func(p PolicyReport) Metrics { return p.Erroring })
	table(fmt.Sprintf("All tasks (%d):", r.Config.Tasks), func(p PolicyReport) Metrics { return p.All })
	var lags []string
	for _, p := range r.order {
		if m := r.Policies[p].All; m.CheckerLagP50 > 0 {
			lags = append(lags, fmt.Sprintf("%s %.0f / %.0f", p, m.CheckerLagP50, m.CheckerLagP95))
		}
	}
	if len(lags) > 0 {
		fmt.Fprintf(b, "\nChecker lag behind the model's stream (ms, p50 / p95 over runs of each run's mean): %s.\n", strings.Join(lags, "; "))
	}
	if len(r.Paired) > 0 {
		fmt.Fprintf(b, "\nTokPol against each baseline on the erroring tasks (geometric mean of per-task ratios; bootstrap intervals Holm-corrected for the %d comparisons of this table, 95%% family-wise; wins = the whole corrected interval below 1, loses = above 1, else ties):\n", 2*len(r.Paired))
		fmt.Fprintln(b, "\n| ratio | tasks | tokens | verdict | latency | verdict |")
		fmt.Fprintln(b, "|---|--:|---|---|---|---|")
		for _, p := range r.Paired {
			fmt.Fprintf(b, "| %s/%s | %d | %.3f [%.3f, %.3f] | %s | %.3f [%.3f, %.3f] | %s |\n", p.A, p.B, p.Tokens.Tasks,
				p.Tokens.Ratio, p.Tokens.Lo, p.Tokens.Hi, verdict(p.Tokens), p.Latency.Ratio, p.Latency.Lo, p.Latency.Hi, verdict(p.Latency))
		}
	}
	for _, p := range r.order {
		if l, ok := r.Learned[p]; ok {
			fmt.Fprintf(b, "\nWhat %s had learned by the end (from %d finished errors, starting from local %.2f, far %.2f, q %.2f): local %.2f, far %.2f, q %.2f.\n",
				p, l.Episodes, l.StartLocal, l.StartFar, l.StartQ, l.Local, l.Far, l.Q)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine keeps the first line of s.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// simParams lists every scalar the model description holds, sorted by name.
func simParams(sim map[string]any) string {
	var keys []string
	for k, v := range sim {
		switch v.(type) {
		case float64, bool, string, int, int64:
			if k != "notes" {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("`%s`=%v", k, sim[k]))
	}
	return strings.Join(parts, ", ")
}
