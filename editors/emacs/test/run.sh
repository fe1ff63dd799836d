#!/usr/bin/env bash
# Runs the Emacs package's batch end-to-end test against the real `hydra lsp` (bin/hydra), with
# the scripted stand-in model and the real Clang checker: hydra-generate (the buffer must equal
# editors/testdata/sum.expected.cpp and compile with clang-19), inline completion as ghost text
# (dismissed by typing, accepted with TAB), hydra-cancel; then clangd-test.el with the real
# clangd-19 behind `hydra lsp'. Exit status 0 when every check passed.
set -uo pipefail
# shellcheck source=../../testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../testlib.sh"
EMACS="${EMACS:-emacs}"
editor_test_start emacs
echo "emacs: $("$EMACS" --version | head -n1)"

status=0
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
# Without -Q: Debian's site-start puts elpa-eglot on the load path (Emacs 29+ has eglot built in).
env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_DIR="$WORKDIR" \
  HYDRA_TEST_EXPECTED="$HYDRA_TESTDATA/sum.expected.cpp" \
  timeout 300 "$EMACS" --batch -l "$EDITORS_DIR/emacs/test/hydra-test.el" </dev/null 2>"$WORKDIR/emacs.log" || status=1
# What the package showed in the echo area (progress, the end of each generation).
echo "  emacs messages:"
sed -e '/^$/d' -e '/^Loading /d' -e 's/^/    | /' "$WORKDIR/emacs.log" | tail -n 40
# The same package with the real clangd-19 behind `hydra lsp' (one server gives both): M-.,
# clangd's diagnostics, completion, generation with clean diagnostics after it, clangd killed.
echo "--- emacs: clangd behind hydra lsp"
env HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" HYDRA_TEST_DIR="$WORKDIR" \
  HYDRA_TEST_EXPECTED="$HYDRA_TESTDATA/sum.expected.cpp" \
  timeout 300 "$EMACS" --batch -l "$EDITORS_DIR/emacs/test/clangd-test.el" </dev/null 2>"$WORKDIR/emacs-clangd.log" || status=1
echo "  emacs messages:"
sed -e '/^$/d' -e '/^Loading /d' -e 's/^/    | /' "$WORKDIR/emacs-clangd.log" | tail -n 20
editor_test_no_orphans emacs || status=1
exit $status
