#!/usr/bin/env bash
# Installs the Debian packages Hydra LSP needs, when they are missing.
#   scripts/install-deps.sh build   # what `make build` needs: Clang/LLVM 19 to build and run the checker,
#                                   # bubblewrap + util-linux (prlimit) for the sandbox of `hydra bench`
#   scripts/install-deps.sh test    # plus what the test suite needs: clangd, Neovim, Emacs + eglot, Node.js,
#                                   # tmux and jq (the editors' terminal tests), chromium and what
#                                   # code-server's native modules build with (VS Code's tests),
#                                   # cmake, g++ and googletest's source (the real-project tests)
# Runs apt-get as root (or through sudo); prints the command and fails when it cannot.
set -euo pipefail

build_pkgs=(clang-19 libclang-cpp19-dev llvm-19-dev libclang-19-dev libstdc++-12-dev make bubblewrap util-linux)
test_pkgs=(clangd-19 neovim emacs-nox elpa-eglot procps debootstrap tmux jq
  chromium python3 pkg-config # these three: VS Code's tests (vscode-extension/test/vscode/setup.sh)
  cmake g++ googletest # the real-project tests (internal/realproject): googletest's source, configured with GCC
  libzstd-dev zlib1g-dev) # make dist's static shim (cmd/hydra/dist_test.go): zstd's and zlib's static libraries

want=("${build_pkgs[@]}")
[ "${1:-build}" = test ] && want+=("${test_pkgs[@]}")
# Node.js and npm: to install TypeScript below (Hydra runs tsc's native binary, no Node), and
# for VS Code's tests. Any version >= 18 already on PATH will do; otherwise Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  want+=(nodejs npm)
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing missing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "install-deps: not root and no sudo; run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# After the Debian packages: on a fresh machine npm comes with them.
# TypeScript's own compiler for the TypeScript checker (checkers/typescript): the native
# TypeScript 7 (`tsc --api`), pinned, installed with npm into third_party/typescript (git-ignored,
# never globally). Needs npm only here; Hydra runs the native binary, no Node.
TS_VERSION=7.0.2
install_typescript() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/third_party/typescript"
  if compgen -G "$dir/node_modules/@typescript/typescript-*/lib/tsc" >/dev/null &&
    grep -q "\"version\": \"$TS_VERSION\"" "$dir/node_modules/typescript/package.json" 2>/dev/null; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: npm not found; TypeScript checking needs: npm install --prefix $dir typescript@$TS_VERSION" >&2
    return 0
  fi
  echo "install-deps: installing typescript@$TS_VERSION into $dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --no-save "typescript@$TS_VERSION" >/dev/null
}
install_typescript
# The TypeScript checker's agreement test (checkers/typescript/agreement_test.go) runs on real
# TypeScript: the sources that the rxjs npm package ships (src/, pinned), unpacked into
# third_party/ts-corpus.
TS_CORPUS=rxjs@7.8.2
if [ "${1:-build}" = test ] && command -v npm >/dev/null 2>&1; then
  corpus="$(cd "$(dirname "$0")/.." && pwd)/third_party/ts-corpus"
  if [ ! -f "$corpus/$TS_CORPUS" ]; then
    echo "install-deps: unpacking $TS_CORPUS's TypeScript sources into $corpus"
    rm -rf "$corpus" && mkdir -p "$corpus"
    (cd "$corpus" && npm pack --silent "$TS_CORPUS" >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz && touch "$TS_CORPUS")
  fi
fi
