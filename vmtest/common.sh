# shellcheck shell=bash
# Helpers sourced by the vmtest scripts: messages, the cache location, the
# target architecture, hashing and locking. Sourcing this file runs nothing.

VMTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
XDPLAB_ROOT=$(cd "$VMTEST_DIR/.." && pwd)

log() { printf 'vmtest: %s\n' "$*" >&2; }

# die MESSAGE [HINT]: one line saying what went wrong, one saying what to do.
die() {
	printf 'vmtest: error: %s\n' "$1" >&2
	[ $# -lt 2 ] || printf 'vmtest: hint: %s\n' "$2" >&2
	exit "${DIE_STATUS:-1}"
}

# The cache lives outside the checkout so that `git clean` and fresh clones
# share one kernel source and one set of builds.
cache_dir() {
	local c=${XDPLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xdplab}
	case "$c" in
	*[[:space:]]*) die "cache path '$c' contains white space" \
		"set XDPLAB_CACHE to a path without spaces (it goes on the guest's kernel command line)" ;;
	esac
	mkdir -p "$c" || die "cannot create cache directory $c" "set XDPLAB_CACHE=<dir> to a writable place"
	(cd "$c" && pwd)
}

# norm_arch NAME: the vmtest name of a target architecture (x86_64, arm64,
# riscv64: only the sifive_u RBOF test boots it, vmtest/gem-rbof.sh, or arm:
# 32-bit, only the Zynq-7000 GEM test, vmtest/gem-zynq.sh).
# Accepts what uname -m, Debian and kbuild call them.
norm_arch() {
	case "${1:-x86_64}" in
	x86_64 | x86 | amd64) echo x86_64 ;;
	arm64 | aarch64) echo arm64 ;;
	riscv64 | riscv) echo riscv64 ;;
	arm | armhf | armv7l | armv7) echo arm ;;
	*) die "unsupported ARCH '$1'" "use ARCH=x86_64 (default) or ARCH=arm64" ;;
	esac
}

# kbuild's ARCH= and CROSS_COMPILE= for a vmtest architecture.
kbuild_arch() { case "$1" in x86_64) echo x86 ;; arm64) echo arm64 ;; riscv64) echo riscv ;; arm) echo arm ;; esac; }
cross_compile() {
	case "$1" in x86_64) echo "" ;; arm64) echo aarch64-linux-gnu- ;; riscv64) echo riscv64-linux-gnu- ;;
	arm) echo arm-linux-gnueabihf- ;; esac
}

# hash_stream: short content hash of stdin.
hash_stream() { sha256sum | cut -c1-16; }

# with_lock FILE CMD...: run CMD holding an exclusive lock on FILE, so that
# two engineers building the same tree at once take turns instead of
# corrupting it.
with_lock() {
	local lock=$1
	shift
	exec {lockfd}>"$lock"
	if ! flock -n "$lockfd"; then
		log "waiting for another build holding $lock"
		flock "$lockfd"
	fi
	"$@"
	local rc=$?
	exec {lockfd}>&-
	return $rc
}

# kselftest_dirs ARCH CACHE PATCHDIR: for the kernel vmtest/build.sh builds
# with the settings in the environment (KERNEL_SRC, PATCHES, DEBUG, RT,
# FAULT, O2, PAGE64K), the names it uses: sets tree (the source tree), treekey, bdir
# (its build directory) and out (where the kernel's selftests for that
# kernel and series selection are built).
# shellcheck disable=SC2034 # the caller's variables
kselftest_dirs() {
	local arch=$1 cache=$2 patchdir=$3 suffix sel series
	suffix=$([ "${DEBUG:-0}" = 0 ] || echo -debug)$([ "${RT:-0}" = 0 ] || echo -rt)$([ "${FAULT:-0}" = 0 ] || echo -fault)$([ "${O2:-0}" = 0 ] || echo -o2)$([ "${PAGE64K:-0}" = 0 ] || echo -64k)
	if [ -n "${KERNEL_SRC:-}" ]; then
		tree=$(cd "$KERNEL_SRC" && pwd)
		treekey=ext-$(echo "$tree" | hash_stream | cut -c1-8)
		sel=none
	else
		treekey=$(basename "$("$VMTEST_DIR/source.sh")")
		tree=$cache/trees/$treekey-work
		sel=${PATCHES:-all}
	fi
	bdir=$cache/build/$treekey-$arch$suffix
	series=$("$VMTEST_DIR/series.sh" hash "$sel" "$patchdir")
	out=$cache/kselftest/$treekey-$arch$suffix-$(echo "$sel $series" | hash_stream | cut -c1-8)
}

# kselftest_needs_build BUILT IMAGE HINT [KEY...]: whether the selftests in
# $out must be built for the kernel IMAGE (copied out of BUILT in $bdir).
# Stops when BUILT is no longer IMAGE: another run re-patched the shared
# worktree between the two locks. Returns 1 (up to date) when $out was built
# with the same key: the kernel, the tree's HEAD and tools/ changes, the
# calling script, clang and the KEYs. Sets key, for .xdplab-key after the
# build.
kselftest_needs_build() {
	local built=$1 image=$2 hint=$3
	shift 3
	cmp -s "$built" "$image" ||
		die "$bdir was rebuilt for another selection while this run waited" "$hint"
	key="kernel=$(sha256sum <"$image" | cut -c1-16) tree=$(git -C "$tree" rev-parse HEAD 2>/dev/null)-$(git -C "$tree" diff HEAD -- tools 2>/dev/null | hash_stream) script=$(hash_stream <"$0") clang=$(clang --version | head -1)${*:+ $*}"
	if [ "$(cat "$out/.xdplab-key" 2>/dev/null)" = "$key" ]; then
		log "kselftests up to date: $out"
		return 1
	fi
	rm -f "$out/.xdplab-key"
}
