#!/usr/bin/env bash
# The main job on an example (what `make run` ends with): generate the body of
# examples/long_words.cpp with repair. The model is a SCRIPTED STAND-IN served by
# `hydra sim-server --script` (no model can run here): its first attempt declares
# `std::vector<int> long_words;` where strings are stored, an error whose root cause lies two
# lines before the line Clang rejects. The real Clang checker finds it while the "model" is still
# writing, the policy (TokPol) rolls back, and the accepted program is printed. Point
# `hydra generate` at a real OpenAI-compatible server with --model-url to use a real model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
HYDRA=bin/hydra

out=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT

$HYDRA sim-server --script examples/long_words.script.json >"$out/url" 2>"$out/server.log" &
server_pid=$!
for _ in $(seq 50); do [ -s "$out/url" ] && break; sleep 0.1; done
url=$(head -1 "$out/url")
[ -n "$url" ] || { echo "demo: the stand-in model server did not start:"; cat "$out/server.log"; exit 2; }

# The picture of the search (tree over the program's lines, streaming vs checking timeline);
# HYDRA_DEMO_TRACE chooses where it goes (docs/demo-trace.svg is made this way).
trace=${HYDRA_DEMO_TRACE:-${TMPDIR:-/tmp}/hydra-demo-trace.svg}
echo "== hydra generate --model-url $url (scripted stand-in model) --trace-svg $trace examples/long_words.cpp"
$HYDRA generate --model-url "$url" --model scripted-stand-in --trace-svg "$trace" examples/long_words.cpp >"$out/result.cpp"
echo "== accepted program:"
cat "$out/result.cpp"
echo "== hydra check on the result (the real Clang checker, streamed line by line):"
$HYDRA check "$out/result.cpp"
echo "== the search, drawn: $trace"
