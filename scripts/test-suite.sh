#!/usr/bin/env bash
# The test suite after lint (`make test`; .ci/run): the Go tests and the editor clients' tests run
# side by side, then the release archive's test.
#
# Why side by side: the Go tests keep both cores busy (the checker's agreement and Clang tests,
# cmd/hydra's benchmarks), while the editor tests mostly wait (on the stand-in model's pacing, on
# the editors' redraws): Neovim 0.7's run took 190 s of wall time and 61 s of CPU. One after the
# other, the suite's time is the sum of both; side by side, about the Go tests' alone.
# TestReleaseArchive runs after both: scripts/dist.sh packages the VS Code extension
# (vscode-extension/hydra-lsp.vsix, out/), which the VS Code test packages and installs too.
#
# The editors' output is printed whole once the Go tests have ended (it is in a log until then).
# HYDRA_TEST_SERIAL=1 runs everything one after another instead, with all output as it comes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
GO=${GO:-go}
status=0

if [ "${HYDRA_TEST_SERIAL:-}" = 1 ]; then
  make --no-print-directory test-go test-fuzz test-editors || status=1
  exit $status
fi

log="$(mktemp "${TMPDIR:-/tmp}/hydra-test-editors.XXXXXX")"
start=$SECONDS
# Its own process group, so that an interrupted suite ends the editors and what they started.
setsid make --no-print-directory test-editors >"$log" 2>&1 &
editors=$!
trap 'kill -TERM -- -"$editors" 2>/dev/null; rm -f "$log"' INT TERM
trap 'rm -f "$log"' EXIT
echo "== editor clients: started beside the Go tests (their output follows when the Go tests end)"

make --no-print-directory test-go GO_TEST_FLAGS="-skip TestReleaseArchive" || status=1
make --no-print-directory test-fuzz || status=1
echo "== Go tests ended after $((SECONDS - start)) s; waiting for the editor clients"
wait "$editors" || status=1
echo "== editor clients (ended after $((SECONDS - start)) s):"
cat "$log"

echo "== go test -run TestReleaseArchive ./cmd/hydra (the release archive, after the editors)"
$GO test -count=1 -timeout 20m -run '^TestReleaseArchive$' ./cmd/hydra || status=1
echo "== test suite: $((SECONDS - start)) s after lint; $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
