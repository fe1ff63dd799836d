#!/usr/bin/env bash
# Builds the platform VSIX dist/hydra-lsp-<version>-linux-<x64|arm64>.vsix (`make vsix`): the VS
# Code extension with the release archive's server inside, under server/ (bin/hydra, the static
# checker shim, Clang's builtin headers, TypeScript's native compiler under third_party/ with its
# LICENSE, INSTALL, VERSION, LICENSE: the layout `make dist`
# unpacks to), so that installing the extension is all a user does. The extension starts
# server/bin/hydra when the hydra.path setting is empty or does not work, before `hydra` on PATH
# (vscode-extension/src/server.ts). `vsce package --target` marks the VSIX for its platform;
# VS Code installs it only there.
#
# It runs scripts/dist.sh --no-check for the binaries (the same build as `make dist`), then
# `vsce package --target` (vscode-extension's node_modules: npm ci there first), then
# vscode-extension/scripts/check-vsix.mjs --server on the result.
#
# usage: scripts/vsix.sh   (environment: as scripts/dist.sh: LLVM_CONFIG, GO, VERSION, DIST_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
GO=${GO:-go}
arch=$($GO env GOARCH)
case $arch in
amd64) target=linux-x64 ;;
arm64) target=linux-arm64 ;;
*) echo "vsix: no VS Code target for GOARCH $arch" >&2; exit 1 ;;
esac
version=${VERSION:-$(./scripts/version.sh)}
out=${DIST_DIR:-$top/dist}
stage=$out/build/hydra-$version-linux-$arch
vsix=$out/hydra-lsp-$version-$target.vsix
[ -x vscode-extension/node_modules/.bin/vsce ] ||
  { echo "vsix: vsce is missing: run 'npm ci' in vscode-extension first" >&2; exit 1; }

VERSION=$version DIST_DIR=$out ./scripts/dist.sh --no-check
[ -x "$stage/bin/hydra" ] || { echo "vsix: $stage/bin/hydra was not built" >&2; exit 1; }

server=vscode-extension/server
trap 'rm -rf "$top/$server"' EXIT
rm -rf "$server" && mkdir -p "$server"
cp -a "$stage/bin" "$stage/lib" "$stage/third_party" "$stage/INSTALL" "$stage/VERSION" "$stage/LICENSE" "$server/"
echo "== vsce package --target $target"
(cd vscode-extension && ./node_modules/.bin/vsce package --no-yarn --skip-license --target "$target" -o "$vsix" >/dev/null)
node vscode-extension/scripts/check-vsix.mjs --server "$vsix"
echo "== $vsix: $(du -k "$vsix" | cut -f1) KiB"
