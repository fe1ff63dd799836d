package benchmark

import (
	"context"
	"fmt"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/internal/stats"
)

// Lever is one setting of one speed or memory lever, measured on the same programs as the
// other settings of the same run, interleaved program by program (side by side).
type Lever struct {
	Name                   string  `json:"name"`
	Setting                string  `json:"setting"`
	IncrementalMedianMS    float64 `json:"incremental_median_ms"`
	IncrementalP99MS       float64 `json:"incremental_p99_ms"`
	ForkMS                 float64 `json:"fork_ms"`
	CheckpointPrivateKB    float64 `json:"checkpoint_private_kb"`
	CheckpointPrivateMaxKB float64 `json:"checkpoint_private_max_kb"`
	CheckpointSamples      int     `json:"checkpoint_samples"`
	// ShimFaultsMean: page faults the shim took on a chunk, mean (breakdown_ms.shim_faults_mean).
	ShimFaultsMean float64 `json:"shim_faults_mean"`
}

// LeverRun is one setting to measure: a checker (e.g. one started with a shim environment
// that turns a lever off) and where checkpoints are taken.
type LeverRun struct {
	Name, Setting   string
	Checker         checkers.Checker
	CheckpointEvery int // every N chunks after the preamble (a huge N: the preamble only)
}

// MeasureLevers streams each program under every run in turn and reports each run's per-line
// latency, fork time and dormant checkpoint memory.
func MeasureLevers(ctx context.Context, cfg Config, runs []LeverRun, progs []agreement.Program) ([]Lever, error) {
	acc := make([]samples, len(runs))
	for _, p := range progs {
		for k, r := range runs {
			c := cfg
			c.Checker, c.CheckpointEvery = r.Checker, r.CheckpointEvery
			cfg.Log("lever %s=%s: %s", r.Name, r.Setting, p.ID)
			var ps samples
			if err := ps.measureIncremental(ctx, c, p); err != nil {
				return nil, fmt.Errorf("lever %s=%s on %s: %w", r.Name, r.Setting, p.ID, err)
			}
			acc[k].add(&ps)
		}
	}
	out := make([]Lever, len(runs))
	for k, r := range runs {
		s := &acc[k]
		out[k] = Lever{Name: r.Name, Setting: r.Setting, IncrementalMedianMS: stats.Median(s.perLine),
			IncrementalP99MS: stats.Quantile(s.perLine, 0.99), ForkMS: stats.Median(s.fork),
			CheckpointPrivateKB: mean(s.privKB), CheckpointPrivateMaxKB: stats.Quantile(s.privKB, 1), CheckpointSamples: len(s.privKB),
			ShimFaultsMean: mean(s.faults())}
	}
	return out, nil
}
