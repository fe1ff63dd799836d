#!/usr/bin/env bash
# Builds the release archive dist/hydra-<version>-linux-<arch>.tar.gz (`make dist`): hydra (pure
# Go, CGO_ENABLED=0), the checker's shim linked fully static against Debian's static Clang/LLVM 19
# archives and glibc's libc.a (checkers/clang/shim/Makefile, STATIC=1), Clang's builtin headers,
# TypeScript's native compiler (tsc, static Go, from third_party/typescript: install-deps.sh),
# the editor clients and INSTALL. Neither binary loads a shared library, so the archive runs on an
# x86-64 Linux without any Clang or LLVM package and whatever its glibc. What it needs from the
# system is the C and C++ standard library headers (g++ or libstdc++-dev), as Clang does.
#
# Then it checks what it built: the shim has no program interpreter (no shared library at all),
# its start-up time (median of 21 runs to its usage message, against the shared-library shim of
# `make build` when bin/hydra-clang-shim is one), and a smoke test: the unpacked archive's
# `hydra check` on a C++ file that includes <vector> and on a TypeScript file (with the archive's
# own tsc), and `hydra doctor` naming that tsc, with PATH and LD_LIBRARY_PATH stripped of
# the LLVM directories and, when unshare(1) can (root), /usr/lib/llvm-19 and /usr/include/clang
# hidden under empty directories in a private mount namespace.
#
# It also runs checkers/clang's tests of the shim's own malloc and folding sets against the static
# shim, whose link must keep both replacements (checkers/clang/shim/Makefile).
#
# usage: scripts/dist.sh [--no-check]   (environment: LLVM_CONFIG, GO, VERSION, DIST_DIR: where
#                                        the archive goes, dist/ by default)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
check=1
[ "${1:-}" = --no-check ] && check=0

LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-19}
GO=${GO:-go}
arch=$($GO env GOARCH)
version=${VERSION:-$(./scripts/version.sh)}
name=hydra-$version-linux-$arch
out=${DIST_DIR:-$top/dist}
mkdir -p "$out" && out=$(cd "$out" && pwd)
build=$out/build
stage=$build/$name
archive=$out/$name.tar.gz

command -v "$LLVM_CONFIG" >/dev/null || { echo "dist: $LLVM_CONFIG not found: make deps installs Clang/LLVM 19" >&2; exit 1; }
libdir=$("$LLVM_CONFIG" --libdir)
resource=$libdir/clang/$("$LLVM_CONFIG" --version | cut -d. -f1)/include
for need in "$libdir/libclangFrontend.a:libclang-19-dev" "$libdir/libLLVMSupport.a:llvm-19-dev" \
  "/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libzstd.a:libzstd-dev" \
  "/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libc.a:libc6-dev" \
  "$resource/stddef.h:libclang-common-19-dev"; do
  [ -e "${need%%:*}" ] || { echo "dist: ${need%%:*} is missing: apt-get install ${need##*:}" >&2; exit 1; }
done

rm -rf "$build" && mkdir -p "$stage/bin" "$stage/editors"
echo "== shim (static; the link takes seconds, the compile minutes)"
start=$SECONDS
make -s -C checkers/clang/shim STATIC=1 LLVM_CONFIG="$LLVM_CONFIG" OUT="$build/hydra-clang-shim.full" 2>&1 |
  grep -v "statically linked applications requires at runtime" | grep -v "in function" || true
[ -x "$build/hydra-clang-shim.full" ] || { echo "dist: the static shim did not link" >&2; exit 1; }
strip -o "$stage/bin/hydra-clang-shim" "$build/hydra-clang-shim.full"
echo "   built in $((SECONDS - start)) s"
echo "== hydra (CGO_ENABLED=0)"
CGO_ENABLED=0 $GO build -trimpath -ldflags="-s -X main.version=$version" -o "$stage/bin/hydra" ./cmd/hydra
echo "== Clang's builtin headers, editor clients, INSTALL"
# The shim's driver finds them at <its directory>/../lib/clang/19/include (checkers/clang's
# BundledClang, whose ClangMajor must match the version here).
major=$(basename "$(dirname "$resource")")
grep -q "ClangMajor = \"$major\"" checkers/clang/shimcmd.go ||
  { echo "dist: Clang $major's headers, but checkers/clang.ClangMajor differs" >&2; exit 1; }
mkdir -p "$stage/lib/clang/$major" && cp -a "$resource" "$stage/lib/clang/$major/include"
# TypeScript's native compiler (the TypeScript checker, and TypeScript's language server behind
# `hydra lsp`): its npm platform package, whole (tsc, its lib*.d.ts, its Apache-2.0 LICENSE and
# NOTICE), where checkers/typescript looks beside an installed hydra:
# <hydra's directory>/../third_party/typescript/node_modules/@typescript/typescript-<platform>/.
echo "== TypeScript's native compiler"
case $arch in amd64) tsplat=linux-x64 ;; arm64) tsplat=linux-arm64 ;; *) tsplat=linux-$arch ;; esac
tsrel=third_party/typescript/node_modules/@typescript/typescript-$tsplat
tsver=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' checkers/typescript/typescript.go)
[ -x "$tsrel/lib/tsc" ] || { echo "dist: $tsrel/lib/tsc is missing: scripts/install-deps.sh installs TypeScript $tsver" >&2; exit 1; }
got=$(sed -n 's/^ *"version": "\(.*\)",*$/\1/p' "$tsrel/package.json" | head -n1)
[ "$got" = "$tsver" ] || { echo "dist: $tsrel is TypeScript $got, checkers/typescript.Version is $tsver" >&2; exit 1; }
[ -f "$tsrel/LICENSE" ] || { echo "dist: $tsrel/LICENSE is missing (Apache-2.0: the archive must carry it)" >&2; exit 1; }
mkdir -p "$stage/$(dirname "$tsrel")" && cp -a "$tsrel" "$stage/$tsrel"
echo "   TypeScript $got ($tsplat) adds $(du -sk "$stage/$tsrel" | cut -f1) KiB unpacked," \
  "$(($(tar -C "$stage" -czf - "$tsrel" | wc -c) / 1024)) KiB to the archive"
cp -a editors/nvim editors/emacs "$stage/editors/"
rm -rf "$stage/editors/nvim/test" "$stage/editors/emacs/test"
vsix=
if [ -x vscode-extension/node_modules/.bin/vsce ]; then
  (cd vscode-extension && npm run -s package >/dev/null) && vsix=vscode-extension/hydra-lsp.vsix
fi
if [ -n "$vsix" ] && [ -f "$vsix" ]; then
  cp "$vsix" "$stage/editors/hydra-lsp.vsix"
else # no vsce here (npm ci in vscode-extension brings it): the extension's source instead
  mkdir -p "$stage/editors/vscode"
  cp -a vscode-extension/{src,package.json,package-lock.json,tsconfig.json,README.md} "$stage/editors/vscode/"
fi
cp scripts/INSTALL "$stage/INSTALL"
cp LICENSE "$stage/LICENSE"
echo "$version" >"$stage/VERSION"
tar -C "$build" -czf "$archive" --owner=0 --group=0 "$name"
echo "== $archive: $(du -k "$archive" | cut -f1) KiB ($(du -sk "$stage" | cut -f1) KiB unpacked)"

[ $check = 1 ] || exit 0

echo "== the shim loads no shared library"
if readelf -l "$stage/bin/hydra-clang-shim" | grep -q INTERP || readelf -d "$stage/bin/hydra-clang-shim" 2>/dev/null | grep -q NEEDED; then
  echo "dist: $stage/bin/hydra-clang-shim is dynamically linked" >&2
  exit 1
fi
if readelf -l "$stage/bin/hydra" | grep -q INTERP; then
  echo "dist: $stage/bin/hydra is dynamically linked" >&2
  exit 1
fi

echo "== the shim's own malloc and folding sets run in the static shim (checkers/clang tests)"
rc=0
HYDRA_CLANG_SHIM="$stage/bin/hydra-clang-shim" $GO test -count=1 ./checkers/clang/ -v \
  -run '^(TestAllocatorContract|TestGenerationalMallocKeepsCheckpointsSmall|TestRoomInFoldingSetsBeforeTheFirstFork|TestBucketHeadsBesideTheTable)$' \
  >"$build/shim-tests.log" 2>&1 || rc=$?
grep -E '^(--- |ok|FAIL)|_test.go' "$build/shim-tests.log" | sed 's/^/   /' || true
[ $rc = 0 ] || { echo "dist: the static shim fails checkers/clang's tests ($build/shim-tests.log)" >&2; exit 1; }

# startup BIN: the median wall time, in milliseconds, of 21 runs of BIN with no arguments (the
# shim prints its usage and exits: loading, relocation and static constructors, no Clang work).
startup() {
  local i s e times=()
  for i in $(seq 21); do
    s=$(date +%s%N)
    "$1" >/dev/null 2>&1 || true
    e=$(date +%s%N)
    times+=($(((e - s) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 11p | awk '{printf "%.1f", $1 / 1000}'
}
echo "== start-up (median of 21 runs to the usage message)"
echo "   static shim: $(startup "$stage/bin/hydra-clang-shim") ms"
if [ -x bin/hydra-clang-shim ] && readelf -l bin/hydra-clang-shim | grep -q INTERP; then
  echo "   shared-library shim (bin/hydra-clang-shim of make build): $(startup bin/hydra-clang-shim) ms"
fi

echo "== smoke test: the unpacked archive, without the LLVM installation"
t=$(mktemp -d /tmp/hydra-dist-XXXX)
trap 'rm -rf "$t"' EXIT
tar -C "$t" -xzf "$archive"
cat >"$t/ok.cpp" <<'EOF'
#include <vector>
int main() {
  std::vector<int> v{1, 2, 3};
  return v.size() == 3 ? 0 : 1;
}
EOF
cat >"$t/bad.cpp" <<'EOF'
#include <vector>
int main() {
  std::vector<int> v{1, 2, 3};
  return v.length();
}
EOF
clean_path=$(tr : '\n' <<<"$PATH" | grep -v llvm | paste -sd:)
clean_ld=$(tr : '\n' <<<"${LD_LIBRARY_PATH:-}" | grep -v llvm | paste -sd: || true)
run_check() { # FILE: hydra check from the archive, in a clean environment, LLVM hidden if we can
  local cmd="cd '$t' && env -i HOME='$t' PATH='$clean_path' LD_LIBRARY_PATH='$clean_ld' '$t/$name/bin/hydra' check '$t/$1'"
  if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    unshare -m bash -c "mount --make-rprivate / && mount -t tmpfs -o ro tmpfs /usr/lib/llvm-19 &&
      { [ ! -d /usr/include/clang ] || mount -t tmpfs -o ro tmpfs /usr/include/clang; } &&
      [ ! -e /usr/lib/llvm-19/lib ] && $cmd"
  else
    echo "   (not root or no unshare: the LLVM directories stay visible)" >&2
    bash -c "$cmd"
  fi
}
out=$(run_check ok.cpp 2>&1) || { echo "$out"; echo "dist: hydra check rejected a correct file" >&2; exit 1; }
echo "   ok.cpp: accepted"
# TypeScript: the archive's own tsc (checkers/typescript finds it beside the unpacked hydra).
printf 'export function add(a: number, b: number): number {\n  return a + b;\n}\n' >"$t/ok.ts"
printf 'export function add(a: number, b: number): number {\n  return a.length + b;\n}\n' >"$t/bad.ts"
out=$(run_check ok.ts 2>&1) || { echo "$out"; echo "dist: hydra check rejected a correct .ts file" >&2; exit 1; }
echo "   ok.ts: accepted"
if out=$(run_check bad.ts 2>&1); then
  echo "$out"
  echo "dist: hydra check accepted a .ts file with an error" >&2
  exit 1
fi
grep -q "length" <<<"$out" || { echo "$out"; echo "dist: the error on bad.ts does not name length" >&2; exit 1; }
echo "   bad.ts: rejected: $(grep -m1 length <<<"$out")"
echo "== hydra doctor from the unpacked archive"
doc=$(cd "$t" && env -i HOME="$t" PATH="$clean_path" "$t/$name/bin/hydra" doctor 2>&1) || true
grep -E '^[^ ]+ +(version|checker|system headers|typescript) ' <<<"$doc" | sed 's/^/   /' || true
grep -q "$t/$name/third_party/typescript/.*tsc" <<<"$doc" ||
  { echo "$doc"; echo "dist: hydra doctor does not name the archive's tsc" >&2; exit 1; }
if out=$(run_check bad.cpp 2>&1); then
  echo "$out"
  echo "dist: hydra check accepted a file with an error" >&2
  exit 1
fi
grep -q "length" <<<"$out" || { echo "$out"; echo "dist: the error on bad.cpp does not name length" >&2; exit 1; }
echo "   bad.cpp: rejected: $(grep -m1 length <<<"$out")"
echo "== dist: $archive checked"
