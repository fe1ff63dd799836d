#!/usr/bin/env bash
# Runs the editor clients' tests against the real `hydra lsp` (bin/hydra), the real Clang checker
# and a SCRIPTED STAND-IN model (`hydra sim-server --script editors/testdata/script.json`):
#
#   nvim    editors/nvim/test/run.sh     headless Neovim: code action → repaired program; cancel
#   emacs   editors/emacs/test/run.sh    batch Emacs + eglot: hydra-generate, inline ghost text, cancel;
#                                        clangd-19 behind hydra lsp (M-., diagnostics, completion)
#   vscode  vscode-extension/            tsc, eslint, node:test (logic against the real server with
#                                        only `vscode` stubbed), vsce package → hydra-lsp.vsix, then
#                                        that .vsix in real VS Code: code-server driven headless
#                                        (vscode-extension/test/vscode/run.sh; its tools are
#                                        installed on first use into ~/.cache/hydra-lsp/vscode-test)
#
# Neovim and Emacs run in two generations:
#   debian12  the host's Debian 12 packages: Neovim 0.7.2, Emacs 28.2 with elpa-eglot 1.9
#   debian13  inside a Debian 13 root (scripts/debian13-root.sh, built on first use and cached
#             outside the repository): Neovim 0.10.4, Emacs 30.1 with its built-in eglot
# The same test scripts run in both; VS Code runs once, on the host.
#
# Installs what is missing (Debian: neovim, emacs-nox, elpa-eglot, nodejs, npm; the npm packages
# from vscode-extension/package-lock.json), builds bin/hydra when it is missing, prints PASS/FAIL
# per editor and generation and exits non-zero when any failed.
#   scripts/test-editors.sh [--generation debian12|debian13|all] [--jobs N] [nvim] [emacs] [vscode]
#   (default: all three editors, both generations; HYDRA_EDITOR_GENERATION sets the default)
# The runs (editor × generation) are independent: --jobs N (HYDRA_EDITOR_JOBS) runs up to N at a
# time, each with its own log, printed whole once all have ended. The default, 1, runs them one
# after another with their output as it comes: the terminal tests poll tmux and jq many times a
# second, so on two cores the runs compete for CPU and two at a time took longer in all than one
# after another.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT="$(pwd)"

generation="${HYDRA_EDITOR_GENERATION:-all}"
jobs="${HYDRA_EDITOR_JOBS:-1}"
want=()
while [ $# -gt 0 ]; do
  case "$1" in
  --jobs | -j)
    jobs="${2:-}"
    shift 2 || { echo "test-editors: --jobs needs a value" >&2; exit 2; }
    ;;
  --jobs=*) jobs="${1#*=}"; shift ;;
  --generation | -g)
    generation="${2:-}"
    shift 2 || { echo "test-editors: --generation needs a value" >&2; exit 2; }
    ;;
  --generation=*) generation="${1#*=}"; shift ;;
  *) want+=("$1"); shift ;;
  esac
done
case "$generation" in
debian12) gens=(debian12) ;;
debian13) gens=(debian13) ;;
all) gens=(debian12 debian13) ;;
*) echo "test-editors: unknown generation '$generation' (want debian12, debian13 or all)" >&2; exit 2 ;;
esac
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "test-editors: --jobs wants a number of runs at a time (1 or more), not '$jobs'" >&2; exit 2; }
[ ${#want[@]} -eq 0 ] && want=(nvim emacs vscode)

# --- install what is missing -------------------------------------------------------------------
apt_missing=()
has() { command -v "$1" >/dev/null 2>&1; }
for e in "${want[@]}"; do
  if [ "$e" = nvim ] || [ "$e" = emacs ]; then
    # The terminal tests: the editor in tmux, its reported state read with jq.
    has tmux || apt_missing+=(tmux)
    has jq || apt_missing+=(jq)
  fi
  case "$e" in
  nvim) has nvim || apt_missing+=(neovim) ;;
  emacs)
    has emacs || apt_missing+=(emacs-nox)
    # eglot: built into Emacs 29+, from Debian's elpa-eglot on Emacs 28.
    if ! has emacs || ! emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
      apt_missing+=(elpa-eglot)
    fi
    # clangd-test.el runs the real clangd-19 behind hydra lsp.
    has clangd-19 || apt_missing+=(clangd-19)
    ;;
  vscode) { has node && has npm; } || apt_missing+=(nodejs npm) ;;
  *)
    echo "test-editors: unknown editor '$e' (want nvim, emacs or vscode)" >&2
    exit 2
    ;;
  esac
done
has "${HYDRA_CLANG:-clang-19}" || apt_missing+=(clang-19)
if [ ${#apt_missing[@]} -gt 0 ]; then
  echo "== test-editors: installing ${apt_missing[*]}"
  SUDO=
  if [ "$(id -u)" -ne 0 ]; then
    if has sudo; then SUDO=sudo; else
      echo "test-editors: not root and no sudo; run: apt-get install -y --no-install-recommends ${apt_missing[*]}" >&2
      exit 2
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${apt_missing[@]}"; }; then
    echo "test-editors: apt-get install ${apt_missing[*]} failed" >&2
    exit 2
  fi
fi

# --- the server ----------------------------------------------------------------------------------
export HYDRA_BIN="${HYDRA_BIN:-$ROOT/bin/hydra}"
if [ ! -x "$HYDRA_BIN" ] || [ ! -x "$ROOT/bin/hydra-clang-shim" ]; then
  echo "== test-editors: building bin/hydra (make build)"
  make -s build || {
    echo "test-editors: make build failed" >&2
    exit 2
  }
fi
# The clients' version-mismatch tests start a server built with another version; build it here,
# where go is (the Debian 13 root has none), with the same source as bin/hydra.
if command -v go >/dev/null 2>&1; then
  go build -ldflags "-X main.version=0.0.0-other" -o "$ROOT/bin/hydra-other-version" ./cmd/hydra ||
    { echo "test-editors: building bin/hydra-other-version failed" >&2; exit 2; }
fi

declare -A result
declare -A took

# run_vscode is called by name below ("run_$e"); Neovim and Emacs run editors/E/test/run.sh.
# Each step returns on failure explicitly: `set -e` does not apply inside `if run_vscode`.
# shellcheck disable=SC2317
run_vscode() {
  (
    cd vscode-extension || return 1
    echo "node $(node --version), npm $(npm --version)"
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      # --ignore-scripts: nothing here needs an install script, and two optional ones would
      # fetch or build native helpers (keytar, vsce-sign) that packaging does not use.
      echo "--- vscode: npm ci"
      npm ci --ignore-scripts --no-audit --no-fund --loglevel=error || return 1
    fi
    echo "--- vscode: tsc"
    npm run -s compile || return 1
    echo "--- vscode: eslint"
    npm run -s lint || return 1
    echo "--- vscode: node:test (the extension's logic against the real hydra lsp; only 'vscode' is stubbed)"
    node --test out/test/*.test.js || return 1
    # Packaged from nothing compiled: `vsce package` alone must build a working .vsix
    # (vscode:prepublish compiles), and that .vsix is what the real VS Code below installs.
    echo "--- vscode: vsce package (from a clean out/)"
    rm -rf hydra-lsp.vsix out
    npm run -s package || return 1
    node scripts/check-vsix.mjs hydra-lsp.vsix || return 1
    echo "--- vscode: in real VS Code (code-server + headless chromium; vscode-extension/test/vscode/run.sh)"
    test/vscode/run.sh hydra-lsp.vsix
  )
}

# in_gen GEN CMD…: runs CMD on the host (debian12) or inside the Debian 13 root (debian13).
in_gen() {
  local gen="$1"
  shift
  if [ "$gen" = debian13 ]; then scripts/debian13-root.sh run "$@"; else "$@"; fi
}

# editor_version GEN E: the editor's name and version as that generation runs it.
editor_version() {
  case "$2" in
  nvim) in_gen "$1" nvim --version 2>/dev/null | head -n1 | sed 's/^NVIM v/Neovim /' ;;
  emacs) in_gen "$1" emacs --version 2>/dev/null | head -n1 | sed 's/^GNU //' ;;
  esac
}

# run_rootcheck: the Debian 13 root's chroot fallback (taken where bubblewrap cannot make a root,
# e.g. on a machine that is itself a chroot) passes a failing command's status through, and leaves
# no mount behind, when the command fails and when the caller is stopped by a signal.
run_rootcheck() {
  local root rc=0 pid
  root="$(scripts/debian13-root.sh path)" || return 1
  HYDRA_ROOT_ENTER=chroot scripts/debian13-root.sh run sh -c 'test -f /etc/debian_version && exit 3' || rc=$?
  [ "$rc" -eq 3 ] || { echo "chroot fallback: want exit status 3, got $rc"; return 1; }
  HYDRA_ROOT_ENTER=chroot scripts/debian13-root.sh run sleep 600 &
  pid=$!
  sleep 2
  kill -TERM "$pid"
  wait "$pid" || true
  if grep -qF " $root/" /proc/self/mountinfo; then
    echo "chroot fallback left mounts behind:"
    grep -F " $root/" /proc/self/mountinfo | awk '{print "  " $5}'
    return 1
  fi
  if pgrep -f "^sleep 600$" >/dev/null; then
    echo "chroot fallback left its command running after SIGTERM"
    return 1
  fi
  echo "chroot fallback: status passed through, no mounts or processes left"
}

runs=()
# As root the Debian 13 root's chroot fallback is checked too (it needs root, as chroot does).
if [[ " ${gens[*]} " == *" debian13 "* ]] && [ ${#want[@]} -gt 0 ] && [ "$(id -u)" -eq 0 ] &&
  [[ " ${want[*]} " != " vscode " ]]; then
  runs+=("rootcheck")
fi
for e in "${want[@]}"; do
  if [ "$e" = vscode ]; then
    runs+=("vscode")
  else
    for g in "${gens[@]}"; do runs+=("$e@$g"); done
  fi
done

# --- the runs ----------------------------------------------------------------------------------
# The label of each run, and the runs that cannot start (no Debian 13 root): decided here, before
# any run starts.
declare -A label
for r in "${runs[@]}"; do
  e="${r%@*}"
  g=""
  [ "$r" != "$e" ] && g="${r#*@}"
  if [ -z "$g" ]; then
    label[$r]="$e"
    [ "$e" = rootcheck ] && label[$r]="Debian 13 root: chroot fallback"
  elif [ "$g" = debian13 ] && ! scripts/debian13-root.sh path >/dev/null; then
    label[$r]="$e (Debian 13 root could not be built)"
    result[$r]=FAIL
    took[$r]=0
  else
    label[$r]="$e: $(editor_version "$g" "$e") (${g/debian/Debian })"
  fi
done

# run_one R: runs R (rootcheck, vscode or EDITOR@GENERATION) in the foreground; its status is R's.
run_one() {
  local e="${1%@*}" g=""
  [ "$1" != "$e" ] && g="${1#*@}"
  if [ -z "$g" ]; then "run_$e"; else in_gen "$g" "editors/$e/test/run.sh"; fi
}

# The chroot fallback's check runs first and alone: it makes mounts in the host's mount table
# under the Debian 13 root and looks for its own `sleep 600` by name.
parallel=()
for r in "${runs[@]}"; do
  [ -n "${result[$r]:-}" ] && continue
  if [ "$r" = rootcheck ] || [ "$jobs" -eq 1 ]; then
    echo
    echo "== test-editors: ${label[$r]}"
    start=$SECONDS
    if run_one "$r"; then result[$r]=PASS; else result[$r]=FAIL; fi
    took[$r]=$((SECONDS - start))
  else
    parallel+=("$r")
  fi
done

# The other runs, up to $jobs at a time (--jobs): each is isolated from the others (its own work
# and cache directories, tmux server, stand-in model on a port of its own, and a marker in the
# environment by which its orphan check finds only its own processes; a Debian 13 run has its own
# /tmp and PID namespace besides), and much of their time is spent waiting (the stand-in model's
# pace, the pauses a person makes while typing). They still share the machine's CPUs, and their
# checks wait for events with time limits: hence only a few at a time. Each run's output goes to
# its own log, printed whole, in the order of the summary, once all have ended; while they run,
# one line per start and end.
if [ ${#parallel[@]} -gt 0 ]; then
  logs="$(mktemp -d "${TMPDIR:-/tmp}/hydra-test-editors.XXXXXX")" || exit 2
  # The longest first (VS Code, then Emacs, then Neovim), so that the last to end starts early.
  order=()
  for pat in vscode 'emacs@*' 'nvim@*'; do
    for r in "${parallel[@]}"; do
      # shellcheck disable=SC2053 # $pat is a glob on purpose
      [[ "$r" == $pat ]] && order+=("$r")
    done
  done
  declare -A lane_of # pid → run
  # Each run in a process group of its own (job control), so that a signal to this script ends
  # each run with everything it started (its runner's EXIT trap ends its tmux server and
  # stand-in model), and the process groups its processes made of their own too (`timeout`
  # makes one): all found by parent process id, from the run down.
  set -m
  tree() { # PID: PID and its descendants
    local c
    echo "$1"
    for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree "$c"; done
  }
  stop_lanes() {
    local pid p groups=()
    for pid in "${!lane_of[@]}"; do
      for p in $(tree "$pid"); do groups+=("$(ps -o pgid= -p "$p" 2>/dev/null | tr -d ' ')"); done
    done
    for p in $(printf '%s\n' "${groups[@]}" | sort -u); do
      [ -n "$p" ] && [ "$p" != "$(ps -o pgid= -p $$ | tr -d ' ')" ] && kill -TERM -- "-$p" 2>/dev/null
    done
    wait
    for p in "${runs[@]}"; do
      [ -f "$logs/$p.log" ] && { echo; cat "$logs/$p.log"; }
    done
    echo "== test-editors: stopped"
    rm -rf "$logs"
    exit 130
  }
  trap stop_lanes INT TERM
  echo
  echo "== test-editors: ${#order[@]} runs, $jobs at a time (--jobs; each run's output follows when all have ended)"
  next=0
  running=0
  while [ $next -lt ${#order[@]} ] || [ $running -gt 0 ]; do
    while [ $next -lt ${#order[@]} ] && [ $running -lt "$jobs" ]; do
      r="${order[next]}"
      next=$((next + 1))
      (
        start=$SECONDS
        echo "== test-editors: ${label[$r]}"
        if run_one "$r"; then echo PASS >"$logs/$r.result"; else echo FAIL >"$logs/$r.result"; fi
        echo $((SECONDS - start)) >"$logs/$r.took"
      ) </dev/null >"$logs/$r.log" 2>&1 &
      lane_of[$!]="$r"
      running=$((running + 1))
      echo "   started  ${label[$r]}"
    done
    pid=""
    wait -n -p pid
    [ -n "$pid" ] || continue
    r="${lane_of[$pid]}"
    unset "lane_of[$pid]"
    running=$((running - 1))
    result[$r]="$(cat "$logs/$r.result" 2>/dev/null || echo FAIL)"
    took[$r]="$(cat "$logs/$r.took" 2>/dev/null || echo '?')"
    echo "   ${result[$r]}     ${label[$r]} (${took[$r]}s)"
  done
  trap - INT TERM
  set +m
  for r in "${runs[@]}"; do
    [ -f "$logs/$r.log" ] || continue
    echo
    cat "$logs/$r.log"
  done
  rm -rf "$logs"
fi

echo
echo "== test-editors: summary (model: scripted stand-in; server: $HYDRA_BIN; checker: real Clang)"
status=0
for r in "${runs[@]}"; do
  printf '  %-44s %s  (%ss)\n' "${label[$r]}" "${result[$r]}" "${took[$r]}"
  [ "${result[$r]}" = PASS ] || status=1
done
exit $status
