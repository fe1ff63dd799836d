#!/usr/bin/env bash
# Checks a release archive (make dist's dist/hydra-<version>-linux-amd64.tar.gz) on a fresh
# Debian 11 (bullseye, glibc 2.31) with only g++ installed: no Clang, LLVM, Go or Node. The root
# is built on first use with `debootstrap --variant=minbase --include=g++ bullseye` (a few minutes
# with a nearby mirror) and cached outside the repository; each run unpacks the archive into a
# fresh copy's /opt and runs, as a user of that system would, with PATH=/usr/bin:/bin:
#   hydra --version
#   hydra check on a C++ file that includes <vector> (accepted) and on one with an error (rejected,
#     the error named);
#   hydra generate of editors/testdata/sum.cpp with the SCRIPTED STAND-IN model (the archive's own
#     `hydra sim-server --script editors/testdata/script.json`, never a real model), with the
#     engine's default policy, as the editors run it: the checker rejects the stand-in's first
#     attempt, the second is accepted and is editors/testdata/sum.expected.cpp (blank lines
#     aside), which the system's g++ compiles;
#   hydra doctor (exit status 0: the checker and the system headers work).
# Debian 11's Neovim is 0.4.4, older than the plugin's 0.7, so no editor runs there.
#
#   scripts/debian11-archive.sh ARCHIVE     # exit status 0 when every check passed
#
# Needs root (debootstrap, chroot, mount). Environment:
#   HYDRA_CACHE_DIR      where the root lives (default: ${XDG_CACHE_HOME:-$HOME/.cache}/hydra-lsp)
#   HYDRA_DEBIAN_MIRROR  the Debian mirror (default: http://deb.debian.org/debian)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
REPO="$(pwd)"

die() {
  echo "debian11-archive: $*" >&2
  exit 2
}
[ $# -eq 1 ] || die "usage: $0 ARCHIVE (make dist's .tar.gz)"
archive="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ -f "$archive" ] || die "$1: no such file"
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null 2>&1 ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
  die "debootstrap is missing and apt-get install debootstrap failed"

CACHE="${HYDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hydra-lsp}"
BASE="$CACHE/debian11-root"
MIRROR="${HYDRA_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$CACHE"
(
  flock 9
  if [ ! -x "$BASE/usr/bin/g++" ]; then
    tmp="$BASE.tmp.$$"
    rm -rf "$tmp"
    echo "debian11-archive: building a Debian 11 root with g++ in $BASE (debootstrap, first use only)" >&2
    debootstrap --variant=minbase --include=g++ bullseye "$tmp" "$MIRROR" >"$CACHE/debootstrap11.log" 2>&1 || {
      tail -n 20 "$CACHE/debootstrap11.log" >&2
      rm -rf "$tmp"
      die "debootstrap bullseye failed (log: $CACHE/debootstrap11.log)"
    }
    rm -rf "$BASE" && mv "$tmp" "$BASE"
  fi
) 9>"$CACHE/debian11-root.lock" || exit 2

# A fresh copy per run, so that nothing one run leaves (an unpacked archive, a cache) is seen by
# the next; removed on the way out with its mounts.
R="$(mktemp -d /tmp/hydra-debian11-XXXXXX)"
cleanup() {
  umount -l "$R/proc" 2>/dev/null || true
  if grep -q " $R/" /proc/mounts; then echo "debian11-archive: still mounted under $R: not removed" >&2; else rm -rf --one-file-system "$R"; fi
}
trap cleanup EXIT
cp -a "$BASE/." "$R/"
for forbidden in clang clang-19 llvm-config-19 go node; do
  [ ! -e "$R/usr/bin/$forbidden" ] || die "the root has /usr/bin/$forbidden: it is not fresh"
done
mkdir -p "$R/opt" "$R/work"
tar -C "$R/opt" -xzf "$archive"
name="$(basename "$archive" .tar.gz)"
[ -x "$R/opt/$name/bin/hydra" ] || die "$archive holds no $name/bin/hydra"
cp "$REPO/editors/testdata/script.json" "$REPO/editors/testdata/sum.cpp" "$REPO/editors/testdata/sum.expected.cpp" "$R/work/"
cat >"$R/work/ok.cpp" <<'CPP'
#include <vector>
int main() {
  std::vector<int> v{1, 2, 3};
  return v.size() == 3 ? 0 : 1;
}
CPP
cat >"$R/work/bad.cpp" <<'CPP'
#include <vector>
int main() {
  std::vector<int> v{1, 2, 3};
  return v.length();
}
CPP
printf -- '-std=c++17\n' >"$R/work/compile_flags.txt"

# The checks, run inside the root (in a new PID namespace whose /proc is its own: everything
# started there ends with it).
cat >"$R/work/checks.sh" <<'SH'
set -u
hydra=/opt/$1/bin/hydra
fail=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; fail=1; }
echo "debian11: $(cat /etc/debian_version), $(ldd --version | head -n1)"
v=$($hydra --version 2>&1) && ok "hydra --version: $v" || notok "hydra --version: $v"
out=$($hydra check ok.cpp 2>&1) && ok "hydra check accepts a program that includes <vector>" ||
  { notok "hydra check accepts a program that includes <vector>"; echo "$out"; }
if out=$($hydra check bad.cpp 2>&1); then
  notok "hydra check rejects v.length()"; echo "$out"
elif grep -q "no member named 'length'" <<<"$out"; then
  ok "hydra check rejects v.length(): $(grep -m1 length <<<"$out")"
else
  notok "hydra check names the error in bad.cpp"; echo "$out"
fi
$hydra sim-server --script script.json --addr 127.0.0.1:0 >sim.url 2>sim.log &
sim=$!
for _ in $(seq 1 100); do [ -s sim.url ] && break; sleep 0.1; done
url=$(head -n1 sim.url)
if out=$($hydra generate --model-url "$url" --model scripted-stand-in --policy default --verbose sum.cpp 2>gen.log); then
  # The command line keeps the prompt's text as it was and continues it on a new line, where
  # the editors place the body after the signature's line: blank lines aside, the same program.
  if [ "$(grep -v '^$' <<<"$out")" = "$(grep -v '^$' sum.expected.cpp)" ]; then
    ok "hydra generate with the scripted stand-in: the repaired program, sum.expected.cpp ($(tail -n1 gen.log))"
  else
    notok "hydra generate's program is sum.expected.cpp (blank lines aside)"; echo "$out"
  fi
  printf '%s\n' "$out" >generated.cpp
  g++ -std=c++17 -fsyntax-only generated.cpp && ok "the generated program compiles with the system's g++" ||
    notok "the generated program compiles with the system's g++"
  grep -q "totl" gen.log && ok "the checker rejected the stand-in's first attempt (undeclared totl)" ||
    { notok "the checker rejected the stand-in's first attempt"; cat gen.log; }
else
  notok "hydra generate with the scripted stand-in"; cat gen.log sim.log
fi
kill $sim 2>/dev/null
out=$($hydra doctor 2>&1) && ok "hydra doctor: the checker and the system headers work" ||
  notok "hydra doctor: the checker and the system headers work"
sed 's/^/    | /' <<<"$out"
exit $fail
SH
rc=0
unshare --pid --fork --kill-child -- sh -c 'mount -t proc proc "$1/proc" && exec chroot "$@"' sh "$R" \
  /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 /bin/bash -c "cd /work && bash checks.sh '$name'" || rc=$?
[ $rc -eq 0 ] && echo "PASS" || echo "FAIL"
exit $rc
