#!/usr/bin/env bash
# Runs the Neovim plugin's headless end-to-end tests against the real `hydra lsp` (bin/hydra), with
# the scripted stand-in model and the real Clang checker:
#   generate: the code action (through require("hydra").code_action) repairs a program; the buffer
#             must equal editors/testdata/sum.expected.cpp and compile with clang-19;
#   menu:     the same through vim.lsp.buf.code_action's menu (the user's pick);
#   settings: require("hydra").update_settings reaches the running server (a bad model URL
#             makes generation fail, the restored one makes it succeed);
#   cancel:   :HydraGenerate on a slowly answered prompt, then :HydraCancel.
# Exit status 0 when every check passed.
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
  env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_CASE="$case" \
    HYDRA_TEST_FILE="$WORKDIR/$file" HYDRA_TEST_EXPECTED="$HYDRA_TESTDATA/sum.expected.cpp" \
    timeout 180 "$NVIM" --headless --clean -u "$EDITORS_DIR/nvim/test/init.lua" </dev/null \
    2>"$WORKDIR/nvim-$case.log" || status=1
  # What the plugin showed in the message area (progress, the end of the generation).
  echo "  nvim messages:"
  tr '\r' '\n' <"$WORKDIR/nvim-$case.log" | sed -e '/^$/d' -e 's/^/    | /' | tail -n 30
  echo
  editor_test_no_orphans "nvim $case" || status=1
}
run_case generate sum.cpp
run_case menu sum.cpp
run_case settings sum.cpp
run_case cancel slow.cpp
exit $status
