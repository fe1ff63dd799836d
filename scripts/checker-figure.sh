#!/usr/bin/env bash
# The checker benchmark's current figures, as docs/checker-benchmark.md holds them (registered
# figure `checker-benchmark` in docs/figures.json; `go run ./cmd/docfigures update
# checker-benchmark` runs this and writes its output into the doc, stamped with the commit).
# A small run, so that it fits a shared 2-core machine: 4 default programs (2 C++, 2 C) and 2
# heavy-set ones, no growth program; the full run is `bin/hydra bench checker --json`.
# Prints a Markdown table: each figure for the default and the heavy set, the target it is held
# to (issues 2 and 13) and whether this run met it, then the machine's load while it ran.
# Needs `make build` and jq.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin/hydra bench checker --json -q --programs 4 --heavy-programs 2 --growth-lines 0 --slowest 1 | jq -r '
  def r(x): (x * 1000 | round) / 1000;
  def k(x): (x | round);
  def v(ok): if ok then "met" else "not met" end;
  def cell(s; f; ok): s | "\(f) (\(v(ok)))";
  def row(name; f; ok; target): "| \(name) | \(cell(.by_set.default; f; ok)) | \(cell(.by_set.heavy; f; ok)) | \(target) |";
  "| figure | default set | heavy set | target |",
  "|---|---|---|---|",
  row("per-line median (ms)"; .incremental_median_ms | r(.); .incremental_median_ms <= 0.05; "≤ 0.05 (issue 13)"),
  row("per-line p99 (ms)"; .incremental_p99_ms | r(.); .incremental_p99_ms <= 2; "≤ 2 (issue 13)"),
  "| per-line vs clangd `--sync` (×; clangd median ms) | \(.by_set.default.speedup_vs_clangd | k(.)) (\(.by_set.default.clangd_median_ms | r(.)); \(v(.by_set.default.speedup_vs_clangd >= 100))) | \(.by_set.heavy.speedup_vs_clangd | k(.)) (\(.by_set.heavy.clangd_median_ms | r(.)); \(v(.by_set.heavy.speedup_vs_clangd >= 500))) | ≥ 100 default, ≥ 500 heavy (issue 13) |",
  row("per-line vs re-invoking clang (×)"; .speedup_vs_reinvoke | k(.); .speedup_vs_reinvoke >= 1000; "≥ 1000 (issue 2)"),
  row("fork (ms, median)"; .fork_ms | r(.); .fork_ms <= 2; "≤ 2 (issue 2)"),
  row("resume to first event (ms, median)"; .resume_ms | r(.); .resume_ms <= 5; "≤ 5 (issue 2)"),
  row("dormant checkpoint private, mean (KB)"; .checkpoint_private_kb | k(.); .checkpoint_private_kb <= 512; "≤ 512 (issue 13)"),
  row("dormant checkpoint private, max (KB)"; .checkpoint_private_max_kb | k(.); .checkpoint_private_max_kb <= 4096; "≤ 4096 (issue 13)"),
  "| slowest line: ms, of which the shim (Clang) | \(.by_set.default.slowest_lines[0] | "\(.ms | r(.)), \(.shim_ms | r(.))") | \(.by_set.heavy.slowest_lines[0] | "\(.ms | r(.)), \(.shim_ms | r(.))") | — |",
  "",
  "Both sets: a line is driver \(.breakdown_ms.driver | r(.)) + transport \(.breakdown_ms.ipc | r(.)) + shim \(.breakdown_ms.shim | r(.)) ms (medians, `breakdown_ms`); `<bits/stdc++.h>` preamble cold \(.cold_preamble_ms | k(.)) ms, warm \(.warm_preamble_ms | r(.)) ms (\(v(.warm_preamble_ms <= 10)): ≤ 10, issue 2). \(.incremental_samples) per-line samples on \(.programs) programs; \(.cpus) processors, load average \(.machine.load_average_start[0]) at the start and \(.machine.load_average_end[0]) at the end."'
