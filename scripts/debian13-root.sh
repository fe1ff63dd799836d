#!/usr/bin/env bash
# A Debian 13 (trixie) root for running the editor tests on the editors most people run: Neovim
# 0.10, Emacs 30 with its built-in eglot, beside the clang-19 and clangd-19 the checker needs.
# Built on first use with debootstrap (about a minute with a nearby mirror) and cached outside the
# repository; later runs only install what the package list below gained.
#
#   scripts/debian13-root.sh path           # prints the root's path, building it when needed
#   scripts/debian13-root.sh run CMD [ARG…] # runs CMD inside the root, in the repository
#
# `run` uses bubblewrap (chroot where bubblewrap cannot make a root, e.g. inside a chroot): the
# root becomes /, the repository and ../shared are bound at their own paths (so bin/hydra, the
# test data and every path a test prints stay the same), with a private /tmp and a new PID
# namespace, and everything in it dies with the caller.
# The host-built bin/hydra (static Go) and bin/hydra-clang-shim (libclang-cpp 19.1, which trixie
# ships too) run there unchanged.
#
# Needs root (debootstrap, and bwrap binding a root file system) or sudo. Environment:
#   HYDRA_CACHE_DIR   where the root lives (default: ${XDG_CACHE_HOME:-$HOME/.cache}/hydra-lsp)
#   HYDRA_DEBIAN_MIRROR  the Debian mirror (default: http://deb.debian.org/debian)
#   HYDRA_ROOT_ENTER  `chroot` takes the chroot fallback even where bubblewrap works (to test it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
REPO="$(pwd)"

# What the editor tests need inside the root. Emacs 30 has eglot built in; Debian 13 packages no
# C++ tree-sitter grammar, so Emacs uses c++-mode there (c++-ts-mode needs one). git: package-vc-install
# (editors/emacs/test/install-test.el).
PACKAGES=(neovim emacs-nox clang-19 clangd-19 libclang-cpp19 procps ca-certificates tmux jq tree-sitter-c-src git)

CACHE="${HYDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hydra-lsp}"
ROOTFS="$CACHE/debian13-root"
STAMP="$ROOTFS/.hydra-packages"
MIRROR="${HYDRA_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

die() {
  echo "debian13-root: $*" >&2
  exit 2
}

SUDO=
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "needs root (debootstrap, bwrap over a root file system); run as root or install sudo"
  SUDO="sudo -E"
fi

need_host_tools() {
  local missing=()
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "debian13-root: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    die "apt-get install ${missing[*]} failed"
}

# enter ROOT DIR [--bind|--ro-bind SRC DST]… -- CMD…: runs CMD as root inside ROOT, in DIR, with
# the host's network (apt needs it), a private /tmp, /dev and /proc, and a PID namespace that ends
# every process with the caller. Through bubblewrap where it works; where it cannot make a root
# (inside a chroot "/" is no mount point, and bwrap's first step fails), through chroot, with the
# bind mounts made in the host's mount table and removed again on the way out.
enter() {
  local root="$1" dir="$2"
  shift 2
  local binds=()
  while [ "$1" != -- ]; do
    binds+=("$1" "$2" "$3")
    shift 3
  done
  shift
  local envs=(DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root)
  if [ "${HYDRA_ROOT_ENTER:-}" != chroot ] && $SUDO bwrap --bind "$root" / --unshare-pid -- /bin/true 2>/dev/null; then
    local bargs=() i
    for ((i = 0; i < ${#binds[@]}; i += 3)); do bargs+=("${binds[i]}" "${binds[i + 1]}" "${binds[i + 2]}"); done
    local e sets=()
    for e in "${envs[@]}"; do sets+=(--setenv "${e%%=*}" "${e#*=}"); done
    $SUDO bwrap --bind "$root" / --dev /dev --proc /proc --perms 1777 --tmpfs /tmp "${bargs[@]}" \
      --unshare-pid --die-with-parent "${sets[@]}" --chdir "$dir" -- "$@"
    return
  fi
  [ "$(id -u)" -eq 0 ] || die "bubblewrap cannot make a root here, and the chroot fallback needs root"
  local i rc=0
  # The mounts are made in the caller's mount table, so they are undone by a trap as well: the
  # script runs under `set -e`, and a failing command (a failing test) or a signal must not leave
  # them behind.
  MOUNTED=()
  trap unmount_all EXIT
  trap 'exit 130' INT TERM
  mount --rbind /dev "$root/dev" && MOUNTED+=("$root/dev")
  mount -t tmpfs -o mode=1777 tmpfs "$root/tmp" && MOUNTED+=("$root/tmp")
  for ((i = 0; i < ${#binds[@]}; i += 3)); do
    local dst="$root${binds[i + 2]}"
    mkdir -p "$dst"
    mount --bind "${binds[i + 1]}" "$dst" && MOUNTED+=("$dst")
    if [ "${binds[i]}" = --ro-bind ]; then mount -o remount,bind,ro "$dst"; fi
  done
  MOUNTED+=("$root/proc")
  # The new PID namespace's own /proc, mounted by its first process; --kill-child ends it all.
  # It runs in the background (stdin kept) so that a signal to this script runs the trap at once
  # instead of after the command; the trap kills it first.
  unshare --pid --fork --kill-child -- sh -c 'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' \
    sh "$root" "$root" /usr/bin/env "${envs[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$@" <&0 &
  ENTERED=$!
  wait "$ENTERED" || rc=$?
  ENTERED=
  unmount_all
  trap - EXIT INT TERM
  return $rc
}

# unmount_all: ends the chroot fallback's command if it still runs, then undoes its mounts, last
# first. `umount -l` detaches each with its submounts (the /dev tree) even while a dying process
# still holds a file there.
MOUNTED=()
ENTERED=
unmount_all() {
  local i
  if [ -n "$ENTERED" ]; then
    # unshare --fork blocks SIGTERM and SIGINT while it waits; SIGKILL it, and --kill-child ends
    # everything inside.
    kill -KILL "$ENTERED" 2>/dev/null || true
    wait "$ENTERED" 2>/dev/null || true
    ENTERED=
  fi
  for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
    umount -l "${MOUNTED[i]}" 2>/dev/null || true
  done
  MOUNTED=()
}

# prepare ROOT: the host's DNS and extra CA certificates (a TLS-intercepting proxy's), then the
# packages that the stamp does not list yet.
prepare() {
  local root="$1"
  $SUDO cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    $SUDO mkdir -p "$root/usr/local/share/ca-certificates"
    $SUDO cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  fi
  enter "$root" / -- sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${PACKAGES[*]} >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; exit 1; }; update-ca-certificates >/dev/null 2>&1 || true" ||
    die "installing ${PACKAGES[*]} in $root failed"
  printf '%s\n' "${PACKAGES[@]}" | $SUDO tee "$root/.hydra-packages" >/dev/null
}

ensure_root() {
  mkdir -p "$CACHE"
  # One builder at a time; others wait for it and then reuse its root. The lock is held only
  # while building, not while tests run.
  (
    flock 9
    build_root
  ) 9>"$CACHE/debian13-root.lock" || exit 2
}

build_root() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(printf '%s\n' "${PACKAGES[@]}")" ]; then
    return 0
  fi
  need_host_tools
  if [ ! -x "$ROOTFS/usr/bin/apt-get" ]; then
    local tmp="$ROOTFS.tmp.$$"
    $SUDO rm -rf "$tmp"
    echo "debian13-root: building a Debian 13 root in $ROOTFS (debootstrap, first use only)" >&2
    $SUDO debootstrap --variant=minbase trixie "$tmp" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 || {
      tail -n 20 "$CACHE/debootstrap.log" >&2
      $SUDO rm -rf "$tmp"
      die "debootstrap trixie failed (log: $CACHE/debootstrap.log)"
    }
    $SUDO rm -rf "$ROOTFS"
    $SUDO mv "$tmp" "$ROOTFS"
  fi
  echo "debian13-root: installing ${PACKAGES[*]}" >&2
  prepare "$ROOTFS"
}

case "${1:-}" in
path)
  ensure_root
  echo "$ROOTFS"
  ;;
run)
  shift
  [ $# -gt 0 ] || die "usage: $0 run CMD [ARG…]"
  ensure_root
  binds=(--bind "$REPO" "$REPO")
  shared="$(cd "$REPO/.." && pwd)/shared"
  [ -d "$shared" ] && binds+=(--ro-bind "$shared" "$shared")
  # The tests' own variables pass through; PATH and HOME are the root's.
  enter "$ROOTFS" "$REPO" "${binds[@]}" -- "$@"
  ;;
*)
  die "usage: $0 path | run CMD [ARG…]"
  ;;
esac
