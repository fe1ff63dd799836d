# shellcheck shell=bash
# Shared by the editor test runners (editors/nvim/test/run.sh, editors/emacs/test/run.sh); source it.
#
# It finds the repository and bin/hydra, starts the SCRIPTED STAND-IN model (`hydra sim-server
# --script editors/testdata/script.json`, never a real model) and makes sure no process started by
# the test outlives it: every process started under it carries HYDRA_EDITOR_TEST_ID in its
# environment, and editor_test_finish fails the test when one is still alive (and ends it).

EDITORS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$EDITORS_DIR/.." && pwd)"
HYDRA_BIN="${HYDRA_BIN:-$REPO_ROOT/bin/hydra}"
HYDRA_TESTDATA="$EDITORS_DIR/testdata"
# The terminal tests read marks such as "Hydra⋯" off the screen: without a locale (a bare
# environment such as env -i) Emacs and tmux would not draw them. Users run UTF-8 terminals.
if [ -z "${LC_ALL:-}${LC_CTYPE:-}${LANG:-}" ]; then export LANG=C.UTF-8; fi
export HYDRA_CLANG="${HYDRA_CLANG:-clang-19}"
# The stand-in is up before any editor starts, so the server need not wait for a model that is
# still loading (default 1m): the tests that point it at a dead URL then fail in seconds.
export HYDRA_MODEL_WAIT="${HYDRA_MODEL_WAIT:-2s}"
# The server finds the checker next to its binary or under the repository it runs in; the
# editors run it from their work directory, so name the repository's shim when there is one.
if [ -z "${HYDRA_CLANG_SHIM:-}" ] && [ -x "$REPO_ROOT/bin/hydra-clang-shim" ]; then
  export HYDRA_CLANG_SHIM="$REPO_ROOT/bin/hydra-clang-shim"
fi
# Not exported: the runners pass it to the editor only (env HYDRA_EDITOR_TEST_ID=… nvim …), so
# that exactly the editor and what it starts carry it.
HYDRA_EDITOR_TEST_ID="hydra-editor-test-$$-$RANDOM"

_sim_pid=""
_workdir=""
_outside=""

# editor_test_start NAME: checks bin/hydra, makes a work directory ($WORKDIR) with copies of the
# test files, starts the stand-in model and exports HYDRA_MODEL_URL / HYDRA_MODEL / HYDRA_TEST_CMD.
editor_test_start() {
  local name="$1"
  if [ ! -x "$HYDRA_BIN" ]; then
    echo "$name: $HYDRA_BIN is missing; run 'make build' first (or set HYDRA_BIN)" >&2
    exit 2
  fi
  _workdir="$(mktemp -d "${TMPDIR:-/tmp}/hydra-$name-test.XXXXXX")"
  WORKDIR="$_workdir"
  cp "$HYDRA_TESTDATA"/*.cpp "$HYDRA_TESTDATA"/*.c "$WORKDIR"/
  # Outside the project: the user's cache directory (the server draws the pictures of its
  # searches under it, never into the project) and the desktop's opener. The opener here is a
  # script named xdg-open that records the file it is asked to open, in $HYDRA_TEST_OPENED.
  _outside="$(mktemp -d "${TMPDIR:-/tmp}/hydra-$name-home.XXXXXX")"
  export XDG_CACHE_HOME="$_outside/cache"
  export HYDRA_TEST_OPENER="$_outside/bin/xdg-open" HYDRA_TEST_OPENED="$_outside/opened"
  mkdir -p "$XDG_CACHE_HOME" "$_outside/bin"
  printf '#!/bin/sh\n# Stands in for the desktop opener: records what it is asked to open.\nprintf "%%s\\n" "$1" >>%q\n' \
    "$HYDRA_TEST_OPENED" >"$HYDRA_TEST_OPENER"
  chmod +x "$HYDRA_TEST_OPENER"
  # A compile_flags.txt marks the project root and gives the checker the language standard.
  printf -- '-std=c++17\n' >"$WORKDIR/compile_flags.txt"
  trap editor_test_cleanup EXIT
  local urlfile="$WORKDIR/sim.url"
  "$HYDRA_BIN" sim-server --script "$HYDRA_TESTDATA/script.json" --addr 127.0.0.1:0 \
    >"$urlfile" 2>"$WORKDIR/sim.log" &
  _sim_pid=$!
  local i
  for i in $(seq 1 100); do
    [ -s "$urlfile" ] && break
    kill -0 "$_sim_pid" 2>/dev/null || break
    sleep 0.1
  done
  HYDRA_MODEL_URL="$(head -n1 "$urlfile")"
  if [ -z "$HYDRA_MODEL_URL" ]; then
    echo "$name: the stand-in model did not start:" >&2
    cat "$WORKDIR/sim.log" >&2
    exit 2
  fi
  export HYDRA_MODEL_URL HYDRA_MODEL="scripted-stand-in"
  export HYDRA_TEST_CMD="$HYDRA_BIN lsp"
  # What the server says its version is (serverInfo.version): the clients compare it with theirs.
  HYDRA_TEST_SERVER_VERSION="$("$HYDRA_BIN" --version | sed 's/^hydra //')"
  export HYDRA_TEST_SERVER_VERSION
  echo "$name: model = SCRIPTED STAND-IN (hydra sim-server --script editors/testdata/script.json) at $HYDRA_MODEL_URL, not a real model; checker = real Clang"
}

# editor_test_other_version_server prints the path of a hydra built from this checkout with another
# release's version (-X main.version=0.0.0-other), for the clients' version-mismatch tests:
# bin/hydra-other-version, built with go when it is missing or older than bin/hydra and go is
# here, else the one a run with go left (the Debian 13 root has no go: scripts/test-editors.sh
# builds it on the host first). It prints why not and fails when there is neither.
editor_test_other_version_server() {
  local out="$REPO_ROOT/bin/hydra-other-version"
  if { [ ! -x "$out" ] || [ "$HYDRA_BIN" -nt "$out" ]; } && command -v go >/dev/null 2>&1; then
    (cd "$REPO_ROOT" && go build -ldflags "-X main.version=0.0.0-other" -o "$out" ./cmd/hydra) >&2 ||
      { echo "go build of $out failed"; return 1; }
  fi
  [ -x "$out" ] || { echo "$out is missing and there is no go to build it (run scripts/test-editors.sh on the host first)"; return 1; }
  echo "$out"
}

# _marked_pids prints the processes that carry this test's marker.
_marked_pids() {
  local f pid
  for f in /proc/[0-9]*/environ; do
    pid="${f#/proc/}"
    pid="${pid%/environ}"
    if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qx "HYDRA_EDITOR_TEST_ID=$HYDRA_EDITOR_TEST_ID"; then
      echo "$pid"
    fi
  done
}

# editor_test_no_orphans: waits up to 10 s for the editor's server processes to end; fails (and
# ends them) when some outlive the editor.
editor_test_no_orphans() {
  local name="$1" i left
  for i in $(seq 1 100); do
    left="$(_marked_pids)"
    [ -z "$left" ] && { echo "ok - $name: no server or checker process outlives the editor"; return 0; }
    sleep 0.1
  done
  echo "not ok - $name: processes outlived the editor:" >&2
  for i in $left; do ps -o pid=,ppid=,args= -p "$i" >&2 || true; done
  # shellcheck disable=SC2086
  kill $left 2>/dev/null || true
  return 1
}

editor_test_cleanup() {
  _tui kill-server 2>/dev/null || true
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$TUI_SOCKET"
  if [ -n "$_sim_pid" ]; then
    kill "$_sim_pid" 2>/dev/null || true
    wait "$_sim_pid" 2>/dev/null || true
    _sim_pid=""
  fi
  if [ -n "$_workdir" ] && [ -z "${HYDRA_KEEP_TEST_DIR:-}" ]; then
    rm -rf "$_workdir" "$_outside"
  fi
}

# --- an editor in a real terminal ------------------------------------------------------------
# The TUI tests run the editor in tmux at 80x24 (its own tmux server, ended by the cleanup),
# type into it with send-keys, and read the screen with capture-pane. tui_start's watcher keeps
# every distinct screen in $WORKDIR/NAME.screens, so a test can assert that no prompt (Neovim's
# "Press ENTER") ever appeared, however briefly.
TUI_SOCKET="hydra-tui-$$-$RANDOM"
_tui_watch=""
_tui() { tmux -L "$TUI_SOCKET" -f /dev/null "$@"; }

# tui_start NAME COMMAND...: starts COMMAND in an 80x24 terminal; screens go to $WORKDIR/NAME.screens.
tui_start() {
  local name="$1"
  shift
  TUI_SCREENS="$WORKDIR/$name.screens"
  : >"$TUI_SCREENS"
  _tui new-session -d -s hydra -x 80 -y 24 "$(printf '%q ' "$@")" || return 1
  _tui set-option -t hydra remain-on-exit on >/dev/null
  # HYDRA_TUI_RECORD=DIR: the screens are also kept with their colours and the cursor
  # (capture-pane -e), as DIR/NAME.screens, for editors/docs/screens-to-svg.mjs.
  local rec=""
  [ -n "${HYDRA_TUI_RECORD:-}" ] && mkdir -p "$HYDRA_TUI_RECORD" && rec="$HYDRA_TUI_RECORD/$name.screens" && : >"$rec"
  (
    prev=""
    prev_rec=""
    while _tui has-session -t hydra 2>/dev/null; do
      cur="$(_tui capture-pane -p -t hydra 2>/dev/null)"
      if [ "$cur" != "$prev" ]; then
        printf '%s\n----- %s\n' "$cur" "$(date +%s.%N)" >>"$TUI_SCREENS"
        prev="$cur"
      fi
      if [ -n "$rec" ]; then
        cur="$(_tui capture-pane -p -e -t hydra 2>/dev/null)
----- $(_tui display-message -p -t hydra '#{cursor_x} #{cursor_y}' 2>/dev/null)"
        if [ "$cur" != "$prev_rec" ]; then
          printf '%s %s\n' "$cur" "$(date +%s.%N)" >>"$rec"
          prev_rec="$cur"
        fi
      fi
      sleep 0.03
    done
  ) &
  _tui_watch=$!
}

# tui_keys KEY...: tmux key names (Escape, Enter, Tab, BSpace, C-r, …) or plain letters.
tui_keys() { _tui send-keys -t hydra "$@"; }
# tui_type TEXT: types TEXT literally. (tmux takes an argument ending in ";" as the end of its
# command, so a final ";" goes alone, escaped.)
tui_type() {
  if [[ "$1" == *";" ]]; then
    [ "$1" != ";" ] && _tui send-keys -t hydra -l "${1%;}"
    _tui send-keys -t hydra -l '\;'
  else
    _tui send-keys -t hydra -l "$1"
  fi
}
# tui_screen: the screen now.
tui_screen() { _tui capture-pane -p -t hydra; }

# tui_wait_screen REGEX SECONDS: waits until the screen matches REGEX (grep -E); 1 on timeout.
tui_wait_screen() {
  local end=$((SECONDS + $2))
  while [ $SECONDS -lt $end ]; do
    tui_screen | grep -Eq -- "$1" && return 0
    sleep 0.05
  done
  return 1
}

# tui_wait_json FILE JQ SECONDS: waits until jq's expression JQ is true of FILE; 1 on timeout.
tui_wait_json() {
  local end=$((SECONDS + $3))
  while [ $SECONDS -lt $end ]; do
    [ -s "$1" ] && [ "$(jq -r "$2" "$1" 2>/dev/null)" = true ] && return 0
    sleep 0.05
  done
  return 1
}

# tui_running: true while the editor in the terminal has not exited.
tui_running() { [ "$(_tui display-message -p -t hydra '#{pane_dead}' 2>/dev/null)" = 0 ]; }

# tui_stop: waits up to 10 s for the editor to exit, then ends the terminal.
tui_stop() {
  local i
  for i in $(seq 1 200); do
    tui_running || break
    sleep 0.05
  done
  _tui kill-server 2>/dev/null || true
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$TUI_SOCKET"
  if [ -n "$_tui_watch" ]; then
    wait "$_tui_watch" 2>/dev/null || true
    _tui_watch=""
  fi
}

# tcheck DESCRIPTION JQ-EXPRESSION [JQ-DETAIL]: one check on the state the editor reported in
# $STATE (true passes); on failure it prints JQ-DETAIL of the state and sets status=1.
tcheck() {
  if [ "$(jq -r "$2" "$STATE" 2>/dev/null)" = true ]; then
    echo "ok - $1"
  else
    echo "not ok - $1: $(jq -c "${3:-.}" "$STATE" 2>/dev/null | cut -c1-600)"
    status=1
  fi
}

# scheck DESCRIPTION RC: one check by exit status (0 passes), e.g. of a grep on the screens.
scheck() {
  if [ "$2" = 0 ]; then echo "ok - $1"; else
    echo "not ok - $1"
    status=1
  fi
}

# tui_wait_done: waits (up to 60 s) for the editor to report the generation's end in $STATE.
tui_wait_done() {
  tui_wait_json "$STATE" '.done' 60 || { echo "not ok - the generation ends"; status=1; }
  sleep 0.3
}

# trace_opened_reset: forgets what the opener was asked to open so far (before the command).
trace_opened_reset() { : >"$HYDRA_TEST_OPENED"; }

# trace_opened_check FILE IDENT: checks that the file the opener ($HYDRA_TEST_OPENER) was asked
# to open since trace_opened_reset (a path, or a file:// URL) came within 10 s, is the picture of
# this generation's search (an SVG file naming FILE and the checker's error, "use of undeclared
# identifier 'IDENT'"), and lies in the user's cache directory, outside the project.
trace_opened_check() {
  local i opened=""
  for i in $(seq 1 200); do
    [ -s "$HYDRA_TEST_OPENED" ] && break
    sleep 0.05
  done
  [ -s "$HYDRA_TEST_OPENED" ] && opened="$(head -n 1 "$HYDRA_TEST_OPENED")"
  opened="${opened#file://}"
  [ -n "$opened" ]
  scheck "the opener was asked to open a file ($opened)" $?
  case "$opened" in "$XDG_CACHE_HOME"/hydra/traces/*.svg) true ;; *) false ;; esac
  scheck "it is an SVG file in the user's cache directory (hydra/traces)" $?
  case "$opened" in "$WORKDIR"/*) false ;; *) true ;; esac
  scheck "it is not in the project" $?
  [ -f "$opened" ] && grep -q '<svg' "$opened" && grep -q "$1" "$opened" &&
    grep -Eq "undeclared identifier (&#39;|')$2(&#39;|')" "$opened"
  scheck "it is the picture of this search: an SVG naming $1 and the checker's error ('$2')" $?
}
