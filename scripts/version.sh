#!/bin/sh
# Prints the version that `make build`, `make dist` and `make vsix` stamp into hydra (hydra
# --version, the LSP's serverInfo, hydra doctor). The release comes from the file VERSION, the one
# source the editor clients carry too (vscode-extension/package.json's version, hydra.el's
# Version: header and hydra-version, the Neovim plugin's require("hydra").version; TestClient
# VersionsMatchVERSION in cmd/hydra keeps them equal). A build of the commit tagged v<release>
# with a clean tree is that release ("0.1.0"); any other build adds the commit after a "+"
# ("0.1.0+e627e48-dirty"), semantic versioning's build metadata. The clients compare only the
# part before the "+" with their own version, and warn when it differs.
set -eu
cd "$(dirname "$0")/.."
release=$(tr -d ' \n' <VERSION)
[ -n "$release" ] || { echo "version.sh: VERSION is empty" >&2; exit 1; }
describe=$(git describe --tags --always --dirty 2>/dev/null || true)
if [ -z "$describe" ] || [ "$describe" = "v$release" ]; then
  echo "$release"
else
  echo "$release+$describe"
fi
