#!/usr/bin/env bash
# Runs the editor clients' tests against the real `hydra lsp` (bin/hydra), the real Clang checker
# and a SCRIPTED STAND-IN model (`hydra sim-server --script editors/testdata/script.json`):
#
#   nvim    editors/nvim/test/run.sh     headless Neovim: code action → repaired program; cancel
#   emacs   editors/emacs/test/run.sh    batch Emacs + eglot: hydra-generate, inline ghost text, cancel
#   vscode  vscode-extension/            tsc, eslint, node:test (logic against the real server with
#                                        only `vscode` stubbed), vsce package → hydra-lsp.vsix
#
# Installs what is missing (Debian: neovim, emacs-nox, elpa-eglot, nodejs, npm; the npm packages
# from vscode-extension/package-lock.json), builds bin/hydra when it is missing, prints PASS/FAIL
# per editor and exits non-zero when any failed.
#   scripts/test-editors.sh [nvim] [emacs] [vscode]     (default: all three)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT="$(pwd)"

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(nvim emacs vscode)

# --- install what is missing -------------------------------------------------------------------
apt_missing=()
has() { command -v "$1" >/dev/null 2>&1; }
for e in "${want[@]}"; do
  case "$e" in
  nvim) has nvim || apt_missing+=(neovim) ;;
  emacs)
    has emacs || apt_missing+=(emacs-nox)
    # eglot: built into Emacs 29+, from Debian's elpa-eglot on Emacs 28.
    if ! has emacs || ! emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
      apt_missing+=(elpa-eglot)
    fi
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

declare -A result
declare -A took

# The run_* functions are called by name below ("run_$e").
# shellcheck disable=SC2317
run_nvim() { editors/nvim/test/run.sh; }
# shellcheck disable=SC2317
run_emacs() { editors/emacs/test/run.sh; }
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
    echo "--- vscode: vsce package"
    rm -f hydra-lsp.vsix
    npm run -s package || return 1
    node scripts/check-vsix.mjs hydra-lsp.vsix
  )
}

for e in "${want[@]}"; do
  echo
  echo "== test-editors: $e"
  start=$SECONDS
  if "run_$e"; then result[$e]=PASS; else result[$e]=FAIL; fi
  took[$e]=$((SECONDS - start))
done

echo
echo "== test-editors: summary (model: scripted stand-in; server: $HYDRA_BIN; checker: real Clang)"
status=0
for e in "${want[@]}"; do
  printf '  %-7s %s  (%ss)\n' "$e" "${result[$e]}" "${took[$e]}"
  [ "${result[$e]}" = PASS ] || status=1
done
exit $status
