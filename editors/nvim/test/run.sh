#!/usr/bin/env bash
# Runs the Neovim plugin's headless end-to-end tests against the real `hydra lsp` (bin/hydra), with
# the scripted stand-in model and the real Clang checker:
#   generate: the code action (through require("hydra").code_action) repairs a program; the buffer
#             must equal editors/testdata/sum.expected.cpp and compile with clang-19; the summary
#             offers :HydraShowTrace, which hands the configured trace_opener (a recording stand-in)
#             the SVG of this search, in the user's cache directory (before: "no picture yet");
#   menu:     the same through vim.lsp.buf.code_action's menu (the user's pick);
#   settings: require("hydra").update_settings reaches the running server (a bad model URL
#             makes generation fail, the restored one makes it succeed);
#   cancel:   :HydraGenerate on a slowly answered prompt, then :HydraCancel;
#   lsp-file: lsp/hydra.lua (nvim-lspconfig's shape) starts the server, through vim.lsp.enable on
#             Neovim 0.11+, else its table checked and given to vim.lsp.start; then "generate";
#   lazy:     (only when named) the README's lazy.nvim spec: its build step installs the server
#             into an empty data directory, from $HYDRA_TEST_ARCHIVE or from source, then
#             "generate" with the server it installed.
# and, with Neovim in a real terminal (tmux, 80x24, cmdheight=1; editors/nvim/test/tui.lua is the
# user's config), typed as a person types:
#   tui-natural: type a signature with its `{`, Esc, :HydraGenerate: the body goes after the
#             signature, the cursor stays, no "Press ENTER" ever, one summary line; `u` once
#             removes the whole generation (never bringing back rolled-back text), CTRL-R redoes
#             it; the summary offers :HydraShowTrace, which hands the desktop's opener (xdg-open,
#             a recording stand-in) the SVG of this search; :HydraLog shows the checker's reason
#             whole;
#   tui-typing: keep typing elsewhere while a generation streams in: every key lands where it was
#             typed, the generated code is intact, the result compiles;
#   tui-clangd: clangd behind Hydra in a project with a compile_commands.json of 25 files: its
#             indexing progress shows as "clangd: indexing …", also while the code-action menu
#             is open, and never as Hydra's, never in :HydraLog, never a "Press ENTER"; the menu's
#             "Generate with repair (Hydra)" repairs the program; 'omnifunc' is the LSP's;
#   tui-ghost: ghost text after a pause in insert mode, dismissed by typing and by CTRL-], asked for
#             at once by M-] (next), accepted a word (M-w), a line (M-l), then the rest (Tab); a
#             thinking mark while the server works, the request cancelled when the user types on;
#             no request in a comment or a string;
#   tui-typescript: (editors/nvim/test/typescript.sh) a .ts file, checked by TypeScript's own
#             compiler: a type error rooted on an earlier line is repaired, the edits stream in,
#             one `u` removes the whole generation.
# Run one case: editors/nvim/test/run.sh tui-ghost. Exit status 0 when every check passed.
set -uo pipefail
# shellcheck source=../../testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../testlib.sh"
NVIM="${NVIM:-nvim}"
editor_test_start nvim
echo "nvim: $("$NVIM" --version | head -n1)"

status=0
run_case() {
  local case="$1" file="$2"
  echo "--- nvim: $case"
  env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_CASE="$case" HYDRA_TEST_SERVER_VERSION="$HYDRA_TEST_SERVER_VERSION" \
    HYDRA_TEST_FILE="$WORKDIR/$file" HYDRA_TEST_EXPECTED="$HYDRA_TESTDATA/sum.expected.cpp" \
    timeout 180 "$NVIM" --headless --clean -u "$EDITORS_DIR/nvim/test/init.lua" </dev/null \
    2>"$WORKDIR/nvim-$case.log" || status=1
  # What the plugin showed in the message area (progress, the end of the generation).
  echo "  nvim messages:"
  tr '\r' '\n' <"$WORKDIR/nvim-$case.log" | sed -e '/^$/d' -e 's/^/    | /' | tail -n 30
  echo
  editor_test_no_orphans "nvim $case" || status=1
}

# --- Neovim in a terminal -------------------------------------------------------------------
lines_of() { printf '%s\n' "$(cat "$1")" | jq -R . | jq -s -c .; } # FILE's lines (no trailing blank ones), JSON
# no_prompt: no screen ever showed a hit-enter or more prompt, and nvim never was in that mode.
no_prompt() {
  ! grep -Eq 'Press ENTER|-- More --' "$TUI_SCREENS"
  scheck "no \"Press ENTER\" or \"-- More --\" prompt on any screen" $?
  tcheck "nvim never was in a hit-enter or more prompt (mode r/rm)" '.prompt_seen == false' '.modes_seen'
}
tui_case() { # NAME FILE [ENV=VALUE…]: starts nvim on FILE in the terminal and waits for the server
  local name="$1" file="$2"
  shift 2
  echo "--- nvim: $name (in tmux, 80x24)"
  STATE="$WORKDIR/$name.state.json"
  rm -f "$STATE"
  # PATH: the desktop's opener (xdg-open) is the test's recording stand-in.
  # XDG_DATA_HOME: an empty data directory, so that the README's setup starts `hydra` from PATH,
  # never a server an install test (or the user) put in the real one.
  mkdir -p "$WORKDIR/tui-data"
  tui_start "nvim-$name" env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_STATE="$STATE" XDG_DATA_HOME="$WORKDIR/tui-data" \
    PATH="$(dirname "$HYDRA_TEST_OPENER"):$PATH" "$@" "$NVIM" -u "$EDITORS_DIR/nvim/test/tui.lua" -i NONE "$WORKDIR/$file"
  tui_wait_json "$STATE" '.attached' 30 || { echo "not ok - $name: the server did not attach"; status=1; }
}
tui_end() { # NAME: quits nvim, checks for orphans
  tui_keys Escape
  tui_type ":qa!"
  tui_keys Enter
  tui_stop
  echo "  last screen:"
  awk -v RS='\n----- [0-9.]+\n' 'END{print}' "$TUI_SCREENS" | sed -e 's/^/    | /' | tail -n 8
  editor_test_no_orphans "nvim $1" || status=1
}

case_tui_natural() {
  tui_case tui-natural natural.cpp
  local expected before
  expected="$(lines_of "$HYDRA_TESTDATA/sum.expected.cpp")"
  # What the user does: go to the end, open a line, type the signature with its brace, Esc.
  # (`o` under a comment continues it: CTRL-U takes the leader away, as a person would.)
  tui_keys G o C-u
  tui_type 'int sum(const std::vector<int>& v) {'
  tui_keys Escape
  tui_wait_json "$STATE" '.mode == "n" and (.lines | length) == 4' 10
  before="$(jq -c .lines "$STATE")"
  tui_type ':HydraGenerate'
  tui_keys Enter
  tui_wait_done
  tcheck "the generation succeeds" '.last.ok == true' '.last'
  tcheck "the body goes after the signature line: the buffer is the expected program" \
    ".lines == $expected" '.lines'
  tcheck "the cursor stays on the signature's brace" '.cursor == [4, 35]' '.cursor'
  tui_screen >"$WORKDIR/final.screen"
  grep -q 'LSP\[hydra\]' "$TUI_SCREENS"
  scheck "the server's showMessage is not echoed a second time (no LSP[hydra] line)" $((1 - $?))
  [ "$(grep -c 'Hydra: accepted' "$WORKDIR/final.screen")" = 1 ]
  scheck "one summary line (\"Hydra: accepted …\") ends the generation on screen" $?
  [ "$(tail -n 1 "$WORKDIR/final.screen" | awk '{ print length($0) }')" -le 80 ]
  scheck "the summary fits the 80 columns" $?
  tail -n 1 "$WORKDIR/final.screen" | grep -q 'Hydra: accepted.*:HydraShowTrace'
  scheck "the summary offers the picture of the search (:HydraShowTrace)" $?
  no_prompt
  # :HydraShowTrace with the default opener: vim.ui.open on Neovim 0.10+, xdg-open on 0.7.
  trace_opened_reset
  tui_type ':HydraShowTrace'
  tui_keys Enter
  trace_opened_check natural.cpp totl
  # One undo step per generation; undo never brings back rolled-back text.
  tui_keys u
  tui_wait_json "$STATE" ".lines == $before" 5
  tcheck "one \`u\` removes the whole generation (and nothing else)" ".lines == $before" '.lines'
  tui_keys C-r
  tui_wait_json "$STATE" ".lines == $expected" 5
  tcheck "CTRL-R brings the generation back" ".lines == $expected" '.lines'
  # The reason the checker gave, cut in the message area, is whole in :HydraLog.
  tui_type ':HydraLog'
  tui_keys Enter
  tui_wait_screen "use of undeclared identifier 'totl'; did you mean 'total'\?" 5
  scheck ":HydraLog shows the checker's reason whole" $?
  no_prompt
  tui_end tui-natural
}

case_tui_clangd() {
  # clangd behind Hydra (the clangd setting) in a project with a compile_commands.json: clangd
  # indexes its files in the background and reports progress while the user opens the code-action
  # menu and generates. Its progress is labelled clangd's, never a "Press ENTER", never in :HydraLog.
  local i files=""
  for i in $(seq 1 24); do
    printf '#include <map>\n#include <string>\n#include <vector>\nint idx%d(const std::map<std::string, std::vector<int>>& m) { return (int)m.size() + %d; }\n' \
      "$i" "$i" >"$WORKDIR/idx$i.cpp"
    files+="idx$i.cpp "
  done
  files+="count.cpp"
  for i in $files; do
    jq -n --arg d "$WORKDIR" --arg f "$i" '{directory: $d, file: $f, arguments: ["clang++", "-std=c++17", "-c", $f]}'
  done | jq -s . >"$WORKDIR/compile_commands.json"
  tui_case tui-clangd count.cpp HYDRA_TEST_CLANGD=1
  tcheck "'omnifunc' is the LSP's for the C++ buffer" '.omnifunc == "v:lua.vim.lsp.omnifunc"' '.omnifunc'
  tui_wait_screen 'clangd: indexing' 60
  scheck "clangd's indexing progress shows, labelled as clangd's" $?
  # The menu, while clangd keeps reporting; pick Hydra's action by its number.
  tui_keys G
  tui_type ':lua vim.lsp.buf.code_action()'
  tui_keys Enter
  tui_wait_screen '^[0-9]+: Generate with repair \(Hydra\)' 10
  scheck "the code-action menu offers Generate with repair (Hydra)" $?
  sleep 1.5
  local n
  n="$(tui_screen | sed -n 's/^\([0-9][0-9]*\): Generate with repair (Hydra)$/\1/p' | head -n1)"
  tui_type "${n:-1}"
  tui_keys Enter
  tui_wait_done
  tcheck "the generation succeeds" '.last.ok == true' '.last'
  tcheck "the buffer is the expected program" ".lines == $(lines_of "$HYDRA_TESTDATA/count.expected.cpp")" '.lines'
  ! grep -Eq 'Hydra: (clangd|indexing|[0-9]+/[0-9]+)' "$TUI_SCREENS"
  scheck "clangd's progress never shows as Hydra's (\"Hydra: N/M\")" $?
  tcheck ":HydraLog's lines are the generation's only (no clangd N/M lines)" \
    '[.progress_log[] | select(test("^[0-9]+/[0-9]+|indexing|clangd"))] | length == 0' '.progress_log'
  no_prompt
  tui_end tui-clangd
}

case_tui_typing() {
  tui_case tui-typing count.cpp
  tui_keys G
  tui_type ':HydraGenerate'
  tui_keys Enter
  # While the answer streams in, the user adds a comment at the top of the file.
  tui_wait_json "$STATE" '.running' 10
  tui_keys g g O
  tui_type '// note: counts positives'
  tui_keys Escape
  tcheck "the typing started while the generation ran" '.running == true or .done == false' '.'
  tui_wait_done
  local expected
  expected="$( (echo '// note: counts positives'; cat "$HYDRA_TESTDATA/count.expected.cpp") | jq -R . | jq -s -c .)"
  tcheck "the generation succeeds" '.last.ok == true' '.last'
  tcheck "every typed key is where it was typed and the generated code is intact" ".lines == $expected" '.lines'
  tcheck "the summary says the whole file was checked again with the typing: it compiles" \
    '.summary | test("checked again with your edits: it compiles")' '.summary'
  no_prompt
  tui_end tui-typing
}

case_tui_ghost() {
  tui_case tui-ghost sum.cpp
  local expected
  expected="$(lines_of "$HYDRA_TESTDATA/sum.expected.cpp")"
  # The empty line in the body (S: insert with its indent): after the pause, ghost text.
  tui_keys G S
  tui_wait_json "$STATE" '.ghost != null' 30
  tcheck "ghost text appears after a pause in insert mode" '.ghost != null and .mode == "i"' '.'
  tcheck "a thinking mark showed while the server worked" '.thinking_seen' '.'
  tui_wait_screen 'int total = 0;' 2
  scheck "the ghost text is on the screen" $?
  tcheck "ghost text does not change the buffer" '.lines[-1] == "  "' '.lines'
  # Typing dismisses it; Backspace asks again; Tab accepts.
  tui_type 'x'
  tui_wait_json "$STATE" '.ghost == null' 5
  tcheck "typing dismisses the ghost text" '.ghost == null and .lines[-1] == "  x"' '.'
  tui_keys BSpace
  tui_wait_json "$STATE" '.ghost != null' 30
  tcheck "after Backspace and a pause the ghost text is back" '.ghost != null' '.'
  # The README's keys (copilot.lua's names): CTRL-] (dismiss) hides it; M-] (next) with none
  # shown asks for one at once; M-w (accept_word) and M-l (accept_line) insert its first word and
  # the rest of its first line, the rest staying shown; Tab (accept) inserts the rest.
  tui_keys C-]
  tui_wait_json "$STATE" '.ghost == null' 5
  tcheck "CTRL-] (dismiss) hides the ghost text, the buffer unchanged" '.ghost == null and .lines[-1] == "  "' '.'
  local asked
  asked="$(jq '.stats.requests' "$STATE")"
  tui_keys 'M-]'
  tui_wait_json "$STATE" '.ghost != null' 30
  tcheck "M-] (next) with no ghost text asks for one" ".ghost != null and .stats.requests > $asked" '.'
  tui_keys M-w
  tui_wait_json "$STATE" '.lines[-1] == "  int"' 5
  tcheck "M-w (accept_word) inserts the first word; the rest stays shown" \
    '.lines[-1] == "  int" and (.ghost | type == "string" and startswith(" total = 0;"))' '[.lines[-1], .ghost]'
  tui_keys M-l
  tui_wait_json "$STATE" '.lines[-2] == "  int total = 0;"' 5
  tcheck "M-l (accept_line) inserts the rest of its line; the lines after stay shown" \
    '.lines[-2] == "  int total = 0;" and .lines[-1] == "" and .ghost != null' '[.lines[-3:], .ghost]'
  tui_keys Tab
  tui_wait_json "$STATE" ".lines == $expected" 5
  tcheck "Tab accepts it: the buffer is the expected program" ".lines == $expected" '.lines'
  tcheck "the cursor is after the accepted text" '.cursor == [8, 1]' '.cursor'
  # No request in a comment or a string.
  local before
  before="$(jq '.stats.requests' "$STATE")"
  tui_keys Enter
  tui_type '// see sum'
  sleep 1.2
  tcheck "no request in a comment" ".stats.requests == $before and .stats.skipped_comment_or_string > 0" '.stats'
  tui_keys Enter C-u # (CTRL-U: Enter continued the comment)
  tui_type 'const char* s = "a, b'
  sleep 1.2
  tcheck "no request in a string" ".stats.requests == $before and (.lines[-1] | startswith(\"const char\"))" '[.stats, .lines[-1]]'
  tui_keys Tab
  tui_wait_json "$STATE" '.lines[-1] | test("a, b +$")' 3
  tcheck "with no ghost text, Tab is a plain Tab" '.lines[-1] | test("a, b +$")' '.lines[-1]'
  no_prompt
  tui_end tui-ghost
}

case_tui_ghost_cancel() {
  tui_case tui-ghost-cancel slow.cpp
  # The slow prompt: the request is still running when the user types on.
  tui_keys G o
  tui_wait_json "$STATE" '.thinking != null' 30
  tcheck "a thinking mark shows while the server works" '.thinking != null' '.'
  tui_wait_screen 'Hydra: ' 2
  scheck "the thinking mark is on the screen" $?
  local cancelled requests
  cancelled="$(jq '.stats.cancelled' "$STATE")"
  requests="$(jq '.stats.requests' "$STATE")"
  tui_type 'x'
  # The mark goes with the cancelled request; after the pause (debounce) a new request may show
  # one of its own, which on a loaded machine can come before a state file with none is seen.
  local gone=".stats.cancelled > $cancelled and (.thinking == null or .stats.requests > $requests) and .ghost == null"
  tui_wait_json "$STATE" "$gone" 5
  tcheck "typing cancels the running request" "$gone" '.'
  no_prompt
  tui_end tui-ghost-cancel
}

# lazy: the README's lazy.nvim spec in a Neovim with an empty data directory: its build step
# installs the server (from the release archive $HYDRA_TEST_ARCHIVE names, e.g. make dist's, else
# from source: make build in this checkout), config() starts it, and it generates.
case_lazy() {
  local data="$WORKDIR/lazy-data"
  rm -rf "$data" && mkdir -p "$data"
  if [ -n "${HYDRA_TEST_ARCHIVE:-}" ]; then
    XDG_DATA_HOME="$data" HYDRA_ARCHIVE="$HYDRA_TEST_ARCHIVE" run_case lazy sum.cpp
  else
    XDG_DATA_HOME="$data" run_case lazy sum.cpp
  fi
}

# shellcheck source=typescript.sh
source "$EDITORS_DIR/nvim/test/typescript.sh"

# version: the plugin against a server built with another version (-X main.version=…): it warns
# once, naming both (the other cases check that the matching bin/hydra gives no warning).
case_version() {
  local other
  other="$(editor_test_other_version_server)" || { echo "not ok - version: $other"; status=1; return; }
  HYDRA_TEST_CMD="$other lsp" HYDRA_TEST_SERVER_VERSION="$("$other" --version | sed 's/^hydra //')" \
    HYDRA_TEST_MISMATCH=1 run_case version sum.cpp
}

cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(generate menu settings cancel lsp-file version tui-natural tui-typing tui-clangd tui-ghost tui-ghost-cancel tui-typescript)
for c in "${cases[@]}"; do
  case "$c" in
  generate | menu | settings | lsp-file) run_case "$c" sum.cpp ;;
  lazy) case_lazy ;;
  version) case_version ;;
  cancel) run_case cancel slow.cpp ;;
  tui-natural) case_tui_natural ;;
  tui-typing) case_tui_typing ;;
  tui-clangd) case_tui_clangd ;;
  tui-ghost) case_tui_ghost ;;
  tui-ghost-cancel) case_tui_ghost_cancel ;;
  tui-typescript) case_tui_typescript ;;
  *)
    echo "unknown case $c" >&2
    exit 2
    ;;
  esac
done
exit $status
