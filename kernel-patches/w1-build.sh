#!/usr/bin/env bash
# Every patch of a series builds on its own with W=1: each commit from
# BASE (exclusive) to HEAD of TREE is checked out in a worktree of its own
# and `make W=1 DIR` is run for each ARCH, counting every "warning:" and
# "error:" line of the build (not only those naming the driver: a macro
# expanded from include/ warns there).
#
#   kernel-patches/w1-build.sh TREE BASE HEAD [DIR] [ARCH...]
#
#   TREE   a kernel git tree with the series committed on BASE
#   DIR    what to build (default drivers/net/ethernet/cadence/); several
#          targets separated by spaces ("drivers/net/veth.o net/core/")
#   ARCH   arm64 (the board's tinyconfig + base.config + arm64.config),
#          x86_64, riscv64, i386 (tinyconfig + COMPILE_TEST and the driver's
#          options: w1-<arch> below); default: arm64 x86_64 riscv64
#
# W1_EXTRA_OPTS: more options to enable for the COMPILE_TEST arches (the
# veth series: "VETH"); they name the build directory, as the default set
# is the macb series'.
# Build directories: $XDPLAB_CACHE/w1/<arch> (default ~/.cache/xdplab), kept,
# so a rerun rebuilds only what the commits touch. Exit status 1 when any
# commit warned or failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "w1-build: $1${2:+ (hint: $2)}" >&2; exit 2; }
[ $# -ge 3 ] || die "usage: kernel-patches/w1-build.sh TREE BASE HEAD [DIR] [ARCH...]"
tree=$(cd "$1" && pwd) base=$2 head=$3
shift 3
dir=drivers/net/ethernet/cadence/
if [ $# -gt 0 ] && [[ "$1" == */* ]]; then dir=$1; shift; fi
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(arm64 x86_64 riscv64)
git -C "$tree" rev-parse -q --verify "$base^{commit}" >/dev/null || die "no commit $base in $tree"
git -C "$tree" rev-parse -q --verify "$head^{commit}" >/dev/null || die "no commit $head in $tree"
cache=${XDPLAB_CACHE:-$HOME/.cache/xdplab}/w1
wt=$cache/worktree
mkdir -p "$cache"

# The options every COMPILE_TEST build turns on: the driver, the paths
# the series touches (XDP, page_pool, PTP, netpoll, suspend) and PCI for
# macb_pci.
compile_test_opts="COMPILE_TEST NET INET NETDEVICES ETHERNET NET_VENDOR_CADENCE COMMON_CLK MACB MACB_PCI PCI
MACB_USE_HWSTAMP PTP_1588_CLOCK PM PM_SLEEP SUSPEND NETPOLL NETCONSOLE OF BPF_SYSCALL PAGE_POOL PAGE_POOL_STATS
${W1_EXTRA_OPTS:-}"

kbuild() { # ARCH: the kbuild ARCH and CROSS_COMPILE
	case $1 in
	arm64) echo "arm64 aarch64-linux-gnu-" ;;
	riscv64) echo "riscv riscv64-linux-gnu-" ;;
	x86_64) echo "x86_64 " ;;
	i386) echo "i386 " ;;
	*) die "unknown ARCH $1" "arm64, x86_64, riscv64 or i386" ;;
	esac
}

configure() { # ARCH BDIR
	local karch cross
	read -r karch cross <<<"$(kbuild "$1")"
	make -s -C "$wt" O="$2" ARCH="$karch" CROSS_COMPILE="$cross" tinyconfig >/dev/null
	if [ "$1" = arm64 ]; then
		(cd "$2" && ARCH=$karch CROSS_COMPILE=$cross "$wt/scripts/kconfig/merge_config.sh" -m -O "$2" .config \
			"$root/kernel-patches/config/base.config" "$root/kernel-patches/config/arm64.config" >/dev/null)
	else
		local o args=()
		for o in $compile_test_opts; do args+=(--enable "$o"); done
		[ "$1" != i386 ] || args+=(--disable 64BIT)
		"$wt/scripts/config" --file "$2/.config" "${args[@]}"
	fi
	make -s -C "$wt" O="$2" ARCH="$karch" CROSS_COMPILE="$cross" olddefconfig >/dev/null
	grep -q '^CONFIG_MACB=y' "$2/.config" || die "$1: CONFIG_MACB did not survive olddefconfig" "see $2/.config"
}

[ -e "$wt/.git" ] || git -C "$tree" worktree add -q --detach "$wt" "$base"
# The worktree may belong to another tree of the same source (the one the
# first run was given): bring this tree's commits into its object store.
head_id=$(git -C "$tree" rev-parse "$head^{commit}")
git -C "$wt" cat-file -e "$head_id^{commit}" 2>/dev/null || git -C "$wt" fetch -q "$tree" "$head_id" ||
	die "cannot fetch $head from $tree into the worktree $wt"
fail=0
for c in $(git -C "$tree" rev-list --reverse "$base..$head"); do
	git -C "$wt" checkout -q --detach "$c"
	subject=$(git -C "$tree" log -1 --format=%s "$c")
	for a in "${arches[@]}"; do
		bdir=$cache/$a${W1_EXTRA_OPTS:+-${W1_EXTRA_OPTS// /-}}
		read -r karch cross <<<"$(kbuild "$a")"
		[ -f "$bdir/.config" ] || { mkdir -p "$bdir"; configure "$a" "$bdir"; }
		log=$bdir/build-$(git -C "$tree" rev-parse --short "$c").log
		rc=0
		# shellcheck disable=SC2086 # DIR may name several targets
		make -C "$wt" O="$bdir" ARCH="$karch" CROSS_COMPILE="$cross" -j"$(nproc)" W=1 $dir >"$log" 2>&1 || rc=$?
		w=$(grep -c 'warning:' "$log" || true) e=$(grep -c 'error:' "$log" || true)
		printf '%s %-8s rc=%d warnings=%d errors=%d  %s\n' "$(git -C "$tree" rev-parse --short "$c")" "$a" "$rc" "$w" "$e" "$subject"
		[ "$rc" = 0 ] && [ "$w" = 0 ] && [ "$e" = 0 ] || { fail=1; grep -E 'warning:|error:' "$log" | head -5; }
	done
done
exit $fail
