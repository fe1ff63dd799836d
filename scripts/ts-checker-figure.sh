#!/usr/bin/env bash
# The TypeScript checker benchmark's current figures, as docs/checker-benchmark.md holds them
# (registered figure `ts-checker-benchmark` in docs/figures.json; `go run ./cmd/docfigures update
# ts-checker-benchmark` runs this and writes its output into the doc, stamped with the commit).
# A small run, so that it fits a shared 2-core machine: 4 files of rxjs's sources (60 to 300
# lines, spread over the corpus), every unit timed in Hydra's checker, 8 units of each file in
# each baseline. Prints a Markdown table (each side's per-unit median, p90 and max, and its median
# over Hydra's), then every side's verdict on the files and the machine's load while it ran.
# Needs `make build`, scripts/install-deps.sh test (TypeScript and the corpus) and jq.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin/hydra bench checker --lang typescript --json -q --ts-files 4 --ts-samples 8 | jq -r '
  def r(x): (x * 1000 | round) / 1000;
  def row(name; s): "| \(name) | \(s.median_ms | r(.)) | \(s.p90_ms | r(.)) | \(s.max_ms | r(.)) | \(s.samples) | \(s.ratio | r(.)) |";
  "| side | per-unit median (ms) | p90 (ms) | max (ms) | units timed | median ÷ Hydra'"'"'s |",
  "|---|---|---|---|---|---|",
  row("Hydra: `checkers/typescript`, one `tsc --api` session"; .sides.hydra),
  row("`tsc -p` re-run on the prefix (`tsc`)"; .sides.tsc),
  row("`tsc --lsp --stdio`: didChange, pull diagnostic (`lsp`)"; .sides.lsp),
  row("`tsc --api`, fresh snapshot, invalidateAll (`api_fresh`)"; .sides.api_fresh),
  "",
  "Verdicts on the whole files: \(if .verdicts_agree then "all four sides agree" else "the sides DISAGREE" end) (\([.files[] | "`\(.file)`: \(.verdicts.hydra)\(if .agree then "" else " (tsc \(.verdicts.tsc), lsp \(.verdicts.lsp), api_fresh \(.verdicts.api_fresh))" end)"] | join("; "))). First unit (opening the file, left out above): Hydra \(.sides.hydra.open_ms | r(.)) ms, lsp \(.sides.lsp.open_ms | r(.)) ms, api_fresh \(.sides.api_fresh.open_ms | r(.)) ms (medians). TypeScript \(.typescript_version); \(.units) units in \(.files | length) files; \(.cpus) processors, load average \(.load_average_start[0]) at the start and \(.load_average_end[0]) at the end."'
