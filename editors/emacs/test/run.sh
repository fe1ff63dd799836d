#!/usr/bin/env bash
# Runs the Emacs package's end-to-end tests against the real `hydra lsp` (bin/hydra), with the
# scripted stand-in model and the real Clang checker, Emacs set up by the README's snippet:
#   batch:  hydra-test.el in batch Emacs: hydra-generate (the buffer must equal
#           editors/testdata/sum.expected.cpp and compile with clang-19; hydra-show-trace hands
#           the SVG of the search, in the user's cache directory, to hydra-trace-opener),
#           inline completion as ghost text (dismissed by typing, accepted with TAB), settings set
#           with setq reaching the running server, hydra-cancel;
# and Emacs in a real terminal (tmux, 80x24; tui.el), typed into as a person types:
#   tui-typing:  M-x hydra-generate, then at once typing elsewhere: no key lost, code intact,
#                the summary says the file was checked again; tui-typing-broken: the typing
#                does not compile, and the summary says so;
#   tui-follow:  point follows the generated text; one C-/ undoes the generation; one summary,
#                which offers M-x hydra-show-trace: in the terminal it hands the SVG of the
#                search to xdg-open (a recording stand-in);
#   tui-code-action: eglot's own path, M-x eglot-code-actions → "Generate with repair (Hydra)",
#                with a stand-in streaming for more than 10 s: no confirmation prompt, no timeout,
#                eglot's "Edit successful!" never hides the progress line, one C-/ undoes it all;
#   tui-inline:  hydra-inline-mode: TAB (indent) and Backspace ask again after a pause, a mode-line
#                mark while the server works, typing dismisses, TAB accepts, nothing in comments;
#   tui-inline-cancel: typing cancels the running request ($/cancelRequest);
#   tui-typescript: (editors/emacs/test/typescript.sh) a .ts file, checked by TypeScript's own
#                compiler: a type error rooted on an earlier line is repaired, the edits stream
#                in, one C-/ undoes the whole generation;
#   version: version-test.el: the server's version in *Messages*; no warning with bin/hydra, one
#           naming both versions with a server built with another release's version;
#   clangd: clangd-test.el, the real clangd-19 behind `hydra lsp';
#   install (only when named; Emacs 29+; HYDRA_TEST_ARCHIVE=make dist's archive): install-test.el,
#   package-vc-install from a local clone, M-x hydra-install-server from the archive, a generation.
# Run some: editors/emacs/test/run.sh tui-inline. Exit status 0 when every check passed.
set -uo pipefail
# shellcheck source=../../testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../testlib.sh"
EMACS="${EMACS:-emacs}"
editor_test_start emacs
echo "emacs: $("$EMACS" --version | head -n1)"

status=0
# --- Emacs in a terminal (tmux, 80x24), set up by the README's snippet (tui.el), typed into ----
text_of() { jq -R -s . "$1"; } # FILE's text as a JSON string
tui_case() { # NAME FILE: starts Emacs on FILE in the terminal; eglot connects after the first command
  local name="$1" file="$2"
  echo "--- emacs: $name (in tmux, 80x24)"
  STATE="$WORKDIR/$name.state.json"
  rm -f "$STATE"
  # PATH: the desktop's opener (xdg-open) is the test's recording stand-in.
  tui_start "emacs-$name" env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_STATE="$STATE" \
    PATH="$(dirname "$HYDRA_TEST_OPENER"):$PATH" TERM=screen "$EMACS" -nw -q -l "$EDITORS_DIR/emacs/test/tui.el" "$WORKDIR/$file"
  tui_wait_json "$STATE" '.text != null' 30
  tui_keys C-l # a first command: eglot-ensure connects after it
  tui_wait_json "$STATE" '.attached' 30 || { echo "not ok - $name: the server did not attach"; status=1; }
}
tui_end() { # NAME: quits Emacs as a person does (C-g, then C-x C-c, answering its questions)
  # C-g alone first: a quit in a terminal discards the keys typed ahead of it, so a C-x C-c sent
  # with it would be lost.
  tui_keys C-g
  tui_wait_screen 'Quit' 2
  tui_keys C-x C-c
  # Each question is answered once: the screen may still show it for a moment after the answer.
  # When neither a question nor the exit comes within 3 s, C-x C-c was lost (a message that
  # came in, e.g. "Hydra: cancelled", can replace "Quit" before the quit has been handled, and
  # the keys typed during it are discarded): as a person would, press C-g and C-x C-c again,
  # twice at most.
  local i screen answered="" since=0 retries=0
  for i in $(seq 1 150); do
    tui_running || break
    screen="$(tui_screen)"
    since=$((since + 1))
    if [[ "$screen" == *"Save file"* && "$answered" != *save* ]]; then
      tui_keys n
      answered+=" save"
    elif [[ "$screen" == *"Modified buffers exist"* && "$answered" != *modified* ]]; then
      tui_type 'yes'
      tui_keys Enter
      answered+=" modified"
    elif [[ "$screen" == *"Active processes exist"* && "$answered" != *active* ]]; then
      tui_type 'yes'
      tui_keys Enter
      answered+=" active"
    elif [[ -z "$answered" && $since -ge 30 && $retries -lt 2 ]]; then
      echo "# $1: no question and no exit 3 s after C-x C-c: C-g and C-x C-c again"
      tui_keys C-g
      sleep 0.5
      tui_keys C-x C-c
      since=0
      retries=$((retries + 1))
    fi
    sleep 0.1
  done
  if tui_running; then
    echo "not ok - $1: C-x C-c did not end Emacs:"
    tui_screen | tail -n 3
    status=1
  fi
  tui_stop
  editor_test_no_orphans "emacs $1" || status=1
}

case_tui_typing() {
  # M-x hydra-generate at the end of count.cpp, then at once M-< C-o and a comment line typed at the
  # top while the answer streams in: every key lands where it was typed, nothing is lost.
  tui_case tui-typing count.cpp
  tui_keys 'M->'
  tui_keys M-x
  tui_type 'hydra-generate'
  tui_keys Enter 'M-<' C-o
  tui_type '// note: counts positives'
  tui_wait_done
  local expected
  expected="$( (echo '// note: counts positives'; cat "$HYDRA_TESTDATA/count.expected.cpp") | jq -R -s .)"
  tcheck "hydra-generate returned at once: the typing went on while it ran" '.generating_seen' '.'
  tcheck "the generation succeeds" '.ok' '.'
  tcheck "every typed key is where it was typed and the generated code is intact" ".text == $expected" '.text'
  tcheck "the summary says the whole file was checked again with the typing: it compiles" \
    '.message | test("checked again with your edits: it compiles")' '.message'
  tui_end tui-typing
}

case_tui_typing_broken() {
  # The same, but what the user types does not compile: the summary says so.
  tui_case tui-typing-broken count.cpp
  tui_keys 'M->'
  tui_keys M-x
  tui_type 'hydra-generate'
  tui_keys Enter 'M-<' C-o
  tui_type 'int oops = ;'
  tui_wait_done
  tcheck "the typed text is there" '.text | startswith("int oops = ;\n#include")' '.text'
  tcheck "the summary says the file, with the user's edits, does not compile" \
    '.message | test("does not compile")' '.message'
  tui_end tui-typing-broken
}

case_tui_follow() {
  # Point follows the generated text; one C-/ undoes the whole generation.
  tui_case tui-follow count.cpp
  local before
  before="$(jq .text "$STATE")"
  tui_keys 'M->'
  tui_keys M-x
  tui_type 'hydra-generate'
  tui_keys Enter
  tui_wait_done
  tcheck "the generation succeeds" '.ok' '.'
  tcheck "the buffer is the expected program" ".text == $(text_of "$HYDRA_TESTDATA/count.expected.cpp")" '.text'
  tcheck "point followed the generated text to its end" '.point == .point_max' '[.point, .point_max]'
  grep -q '(C++//l:Hydra⋯' "$TUI_SCREENS"
  scheck "the 80-column mode line showed :Hydra⋯ while it ran" $?
  tui_wait_screen 'Hydra: accepted' 3
  scheck "the echo area shows the summary" $?
  tcheck "the summary offers the picture of the search (M-x hydra-show-trace)" \
    '.echo | test("^Hydra: accepted .*; M-x hydra-show-trace shows the search$")' '.echo'
  # In a terminal Emacs shows no SVG: hydra-show-trace hands it to xdg-open (the stand-in).
  trace_opened_reset
  tui_keys M-x
  tui_type 'hydra-show-trace'
  tui_keys Enter
  trace_opened_check count.cpp m
  ! grep -q '\[eglot\] hydra: accepted' "$TUI_SCREENS"
  scheck "the summary is shown once (not again as eglot's showMessage)" $?
  ! grep -q 'Edit successful' "$TUI_SCREENS"
  scheck "eglot's \"Edit successful!\" never replaced the progress line" $?
  tui_keys C-/
  tui_wait_json "$STATE" ".text == $before" 5
  tcheck "one C-/ undoes the whole generation" ".text == $before" '.text'
  tui_end tui-follow
}

case_tui_code_action() {
  # eglot's own path: M-x eglot-code-actions, then "Generate with repair (Hydra)" from its menu,
  # with a stand-in that streams the repaired answer for more than 10 s (eglot 1.9 gives up on a
  # synchronous request after 10 s). No confirmation, no timeout, one undo step.
  tui_case tui-code-action maxof.cpp
  local before start took
  before="$(jq .text "$STATE")"
  tui_keys 'M->'
  tui_keys M-x
  tui_type 'eglot-code-actions'
  tui_keys Enter
  tui_wait_screen 'Generate with repair \(Hydra\)' 10
  scheck "eglot's menu offers Generate with repair (Hydra)" $?
  start=$SECONDS
  tui_keys Enter
  tui_wait_json "$STATE" '.generating' 5
  tcheck "the action returned at once: the generation runs in the background" '.generating' '.'
  tui_wait_json "$STATE" '.done' 90 || { echo "not ok - the generation ends"; status=1; }
  sleep 0.3
  took=$((SECONDS - start))
  [ "$took" -gt 10 ]
  scheck "the stand-in streamed for more than 10 s (took ${took} s)" $?
  tcheck "the generation succeeds" '.ok' '.'
  tcheck "the buffer is the expected program" ".text == $(text_of "$HYDRA_TESTDATA/maxof.expected.cpp")" '.text'
  ! grep -Eq 'Proceed\?|Server wants to edit' "$TUI_SCREENS"
  scheck "eglot never asked to confirm an edit" $?
  ! grep -Eq 'Timed out|timed out' "$TUI_SCREENS"
  scheck "no request timed out" $?
  ! grep -q 'Edit successful' "$TUI_SCREENS"
  scheck "eglot's \"Edit successful!\" never replaced the progress line" $?
  grep -Eq '^Hydra: .*(attempt|check|generat)' "$TUI_SCREENS"
  scheck "the echo area showed Hydra's progress while it ran" $?
  tui_wait_screen 'Hydra: accepted' 3
  scheck "the echo area shows the summary" $?
  tui_keys C-/
  tui_wait_json "$STATE" ".text == $before" 5
  tcheck "one C-/ undoes the whole generation" ".text == $before" '.text'
  tui_end tui-code-action
}

case_tui_inline() {
  # hydra-inline-mode (the README's hook): TAB indents the blank line of the body, the pause asks.
  tui_case tui-inline sum.cpp
  tui_keys 'M->' C-p Tab
  tui_wait_json "$STATE" '.ghost != null' 30
  tcheck "after TAB (indenting) and a pause, ghost text appears" '.ghost != null' '.'
  tcheck "the mode line showed the thinking mark while the server worked" '.inline_status_seen' '.'
  tui_wait_screen 'int total = 0;' 2
  scheck "the ghost text is on the screen" $?
  tui_type 'x'
  tui_wait_json "$STATE" '.ghost == null' 5
  tcheck "typing dismisses the ghost text and inserts the key" '.ghost == null and (.text | endswith("{\n  x\n"))' '.text'
  tui_keys BSpace
  tui_wait_json "$STATE" '.ghost != null' 30
  tcheck "after Backspace and a pause the ghost text is back" '.ghost != null' '.'
  tui_keys Tab
  sleep 0.3
  # The code fills the blank line (its own line break ends it): the expected program without
  # the blank line after it.
  tcheck "TAB accepts it: the buffer is the expected program" ".text == ($(text_of "$HYDRA_TESTDATA/sum.expected.cpp") | rtrimstr(\"\\n\"))" '.text'
  local requests
  requests="$(jq .inline_requests "$STATE")"
  tui_keys Enter
  tui_type '// see sum'
  sleep 1.5
  tcheck "no request in a comment" ".inline_requests == $requests" '.inline_requests'
  tui_end tui-inline
}

case_tui_inline_cancel() {
  tui_case tui-inline-cancel slow.cpp
  tui_keys 'M->' C-p Tab
  tui_wait_json "$STATE" '.inline_status != ""' 30
  tcheck "the mode line shows the thinking mark while the server works" '.inline_status != ""' '.'
  tui_wait_screen '\(C\+\+//l Hydra⋯' 2
  scheck "the thinking mark is on the 80-column mode line" $?
  # After the typing, hydra-inline-mode asks again once typing pauses: that new request shows
  # its own mark (the slow model keeps it up), so the cancelled one's mark is gone when either
  # no mark shows or a newer request holds it.
  local before
  before="$(jq .inline_requests "$STATE")"
  tui_type 'x'
  local cleared=".cancels > 0 and (.inline_status == \"\" or .inline_requests > $before)"
  tui_wait_json "$STATE" "$cleared" 5
  tcheck "typing cancels the running request (\$/cancelRequest) and clears its mark" "$cleared" '.'
  tui_end tui-inline-cancel
}

case_batch() {
  # The package byte-compiles without a warning.
  bc_dir="$(mktemp -d)"
  cp "$EDITORS_DIR/emacs/hydra.el" "$bc_dir/"
  if "$EMACS" --batch -L "$bc_dir" --eval '(setq byte-compile-error-on-warn t)' \
    -f batch-byte-compile "$bc_dir/hydra.el" >"$WORKDIR/bytecomp.log" 2>&1; then
    echo "ok - hydra.el byte-compiles without warnings"
  else
    echo "not ok - hydra.el byte-compiles without warnings:"
    grep -v '^Loading ' "$WORKDIR/bytecomp.log"
    status=1
  fi
  rm -rf "$bc_dir"
  # The C grammar's source as Debian 13 packages it (tree-sitter-c-src), for c-ts-mode.
  local ts_c_src
  ts_c_src="$(find /usr/src/tree-sitter/c -mindepth 2 -maxdepth 2 -name parser -type d 2>/dev/null | sort -V | tail -n1)"
  # Without -Q: Debian's site-start puts elpa-eglot on the load path (Emacs 29+ has eglot built in).
  env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_DIR="$WORKDIR" \
    HYDRA_TEST_EXPECTED="$HYDRA_TESTDATA/sum.expected.cpp" HYDRA_TEST_TS_C_SRC="$ts_c_src" \
    timeout 300 "$EMACS" --batch -l "$EDITORS_DIR/emacs/test/hydra-test.el" </dev/null 2>"$WORKDIR/emacs.log" || status=1
  # What the package showed in the echo area (progress, the end of each generation).
  echo "  emacs messages:"
  sed -e '/^$/d' -e '/^Loading /d' -e 's/^/    | /' "$WORKDIR/emacs.log" | tail -n 40
  editor_test_no_orphans emacs || status=1
}

# The same package with the real clangd-19 behind `hydra lsp' (one server gives both): M-.,
# clangd's diagnostics, completion, generation with clean diagnostics after it, clangd killed.
case_clangd() {
  echo "--- emacs: clangd behind hydra lsp"
  env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_DIR="$WORKDIR" \
    HYDRA_TEST_EXPECTED="$HYDRA_TESTDATA/sum.expected.cpp" \
    timeout 300 "$EMACS" --batch -l "$EDITORS_DIR/emacs/test/clangd-test.el" </dev/null 2>"$WORKDIR/emacs-clangd.log" || status=1
  echo "  emacs messages:"
  sed -e '/^$/d' -e '/^Loading /d' -e 's/^/    | /' "$WORKDIR/emacs-clangd.log" | tail -n 20
  editor_test_no_orphans "emacs clangd" || status=1
}

# install (only when named; Emacs 29+, which has package-vc; HYDRA_TEST_ARCHIVE: the release
# archive of make dist): install-test.el.
case_install() {
  echo "--- emacs: package-vc-install, then hydra-install-server, then a generation"
  [ -n "${HYDRA_TEST_ARCHIVE:-}" ] || { echo "not ok - emacs install: HYDRA_TEST_ARCHIVE (make dist's archive) is not set"; status=1; return; }
  env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_DIR="$WORKDIR" \
    HYDRA_TEST_EXPECTED="$HYDRA_TESTDATA/sum.expected.cpp" HYDRA_TEST_ARCHIVE="$HYDRA_TEST_ARCHIVE" \
    timeout 300 "$EMACS" --batch -l "$EDITORS_DIR/emacs/test/install-test.el" </dev/null 2>"$WORKDIR/emacs-install.log" || status=1
  echo "  emacs messages:"
  sed -e '/^$/d' -e '/^Loading /d' -e 's/^/    | /' "$WORKDIR/emacs-install.log" | tail -n 20
  editor_test_no_orphans "emacs install" || status=1
}

# version: version-test.el against bin/hydra (same release: no warning), then against a server
# built with another version (-X main.version=…): one warning naming both.
case_version() {
  local other
  echo "--- emacs: version (bin/hydra, then a server of another release)"
  env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_DIR="$WORKDIR" \
    timeout 120 "$EMACS" --batch -l "$EDITORS_DIR/emacs/test/version-test.el" </dev/null 2>"$WORKDIR/emacs-version.log" || status=1
  other="$(editor_test_other_version_server)" || { echo "not ok - emacs version: $other"; status=1; return; }
  env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_DIR="$WORKDIR" HYDRA_TEST_CMD="$other lsp" \
    HYDRA_TEST_SERVER_VERSION="$("$other" --version | sed 's/^hydra //')" HYDRA_TEST_MISMATCH=1 \
    timeout 120 "$EMACS" --batch -l "$EDITORS_DIR/emacs/test/version-test.el" </dev/null 2>>"$WORKDIR/emacs-version.log" || status=1
  echo "  emacs messages:"
  sed -e '/^$/d' -e '/^Loading /d' -e 's/^/    | /' "$WORKDIR/emacs-version.log" | tail -n 12
  editor_test_no_orphans "emacs version" || status=1
}

# shellcheck source=typescript.sh
source "$EDITORS_DIR/emacs/test/typescript.sh"

cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(batch version clangd tui-typing tui-typing-broken tui-follow tui-code-action tui-inline tui-inline-cancel tui-typescript)
for c in "${cases[@]}"; do
  case "$c" in
  batch) case_batch ;;
  version) case_version ;;
  clangd) case_clangd ;;
  install) case_install ;;
  tui-typing) case_tui_typing ;;
  tui-typing-broken) case_tui_typing_broken ;;
  tui-follow) case_tui_follow ;;
  tui-code-action) case_tui_code_action ;;
  tui-inline) case_tui_inline ;;
  tui-inline-cancel) case_tui_inline_cancel ;;
  tui-typescript) case_tui_typescript ;;
  *)
    echo "unknown case $c" >&2
    exit 2
    ;;
  esac
done
exit $status
