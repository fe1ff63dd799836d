#!/usr/bin/env bash
# Regenerates the measured tables and the heatmap of docs/POLICIES.md (between its
# "<!-- bench-docs:NAME -->" markers) from two `hydra bench` runs against the SIMULATED model (a
# stand-in, not a real model) and the real Clang checker:
#   goal   TokPol, local-first and fixed (and unconstrained, for the repair overhead) on 80 tasks
#          whose first program has an error, under a simulator that contradicts TokPol's prior
#          (local 0.1, far 0.6, fix 0.5, logprob-auc 0.6); beside them TokPol that does not learn
#          (tokpol:learn=0) and TokPol that starts from what it learned on 40 other tasks in an
#          earlier run (tokpol:beliefs=docs/bench/tokpol-beliefs.json, written by that run);
#   sweep  TokPol against local-first, fixed and post-hoc over a grid of root-cause distances,
#          with a heatmap (docs/bench/sweep.svg);
#   concurrency  error-free searches at the simulated model's real token rate (7 ms), 1, 4 and 16
#          at once: how far the checker runs behind the model's stream as searches are added.
# Usage: scripts/bench-docs.sh [goal] [sweep] [concurrency]   (default all; run `make build` first)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
HYDRA=bin/hydra
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(goal sweep concurrency)
mkdir -p docs/bench
for part in "${parts[@]}"; do
  case $part in
  goal)
    sim=error-rate=1,local=0.1,far=0.6,fix=0.5,logprob-auc=0.6
    beliefs=docs/bench/tokpol-beliefs.json
    rm -f "$beliefs"
    # An earlier run, on 40 other tasks: TokPol learns into $beliefs.
    $HYDRA bench --tasks 40 --seed 11 --sim "$sim" --policies "tokpol:beliefs=$beliefs" --time-scale 0 --markdown |
      grep '^What tokpol' | sed 's/^What /Earlier run (40 other tasks, seed 11): what /' >docs/bench/goal.md
    $HYDRA bench --tasks 80 --seed 1 --sim "$sim" \
      --policies "tokpol,local-first,fixed,unconstrained,tokpol:learn=0,tokpol:beliefs=$beliefs" --time-scale 0 --markdown >>docs/bench/goal.md ;;
  sweep)
    $HYDRA bench --tasks 16 --seed 2 --sweep local=0.1/0.3,far=0.35/0.6 --sim error-rate=1,fix=0.5,logprob-auc=0.6 \
      --policies tokpol,local-first,fixed,posthoc --time-scale 0 --plot docs/bench/sweep.svg --markdown >docs/bench/sweep.md ;;
  concurrency)
    {
      echo "| searches at once | checker lag p50 / p95 (ms) | latency mean (s) |"
      echo "|--:|---|--:|"
      for n in 1 4 16; do
        $HYDRA bench --tasks 16 --seed 3 --sim error-rate=0 --policies tokpol --time-scale 1 --concurrency "$n" --json |
          awk -v n="$n" '/"checker_lag_p50_ms"/ && !p50 { gsub(/[^0-9.]/, "", $2); p50 = $2 }
                         /"checker_lag_p95_ms"/ && !p95 { gsub(/[^0-9.]/, "", $2); p95 = $2 }
                         /"latency_mean_s"/ && !lat { gsub(/[^0-9.]/, "", $2); lat = $2 }
                         END { printf "| %d | %.0f / %.0f | %.2f |\n", n, p50, p95, lat }'
      done
    } >docs/bench/concurrency.md ;;
  *) echo "bench-docs: unknown part $part (goal, sweep, concurrency)" >&2; exit 2 ;;
  esac
  # Splice the part's output between its markers in docs/POLICIES.md.
  awk -v part="$part" -v file="docs/bench/$part.md" '
    $0 == "<!-- bench-docs:" part " -->" { print; while ((getline line < file) > 0) print line; skip = 1; next }
    $0 == "<!-- bench-docs:" part " end -->" { skip = 0 }
    !skip { print }' docs/POLICIES.md >docs/POLICIES.md.new
  mv docs/POLICIES.md.new docs/POLICIES.md
done
