#!/usr/bin/env bash
# Build the guest kernel and print the path of its boot image.
#
#   vmtest/build.sh [DIR]      (settings from the environment)
#
# With DIR, the image is copied there (under the build lock) and that copy's
# path is printed.
#
#   VMTEST_ARCH  x86_64 (default), arm64, riscv64 (the sifive_u board of
#                vmtest/gem-rbof.sh) or arm (32-bit: the Zynq-7000 board of
#                vmtest/gem-zynq.sh; also builds its DTB, copied beside the
#                image when DIR is given)
#   PATCHES      none | all (default) | veth,tun,... (see vmtest/series.sh)
#   PATCHDIR     where the <driver>/ series live (default kernel-patches/)
#   DEBUG=1      also merge kernel-patches/config/debug.config (and <arch>-debug.config)
#   RT=1         also merge rt.config: PREEMPT_RT, lockdep, atomic-sleep checks
#   FAULT=1      also merge fault.config: failslab, fail_page_alloc, fail_function
#                (the three combine; each combination is a flavour of its own)
#   O2=1         also merge o2.config: -O2 as distributions build, not -Os
#   PAGE64K=1    arm64 only: 64 KiB pages (arm64-64k.config), for what a
#                driver holds per page; combines with the three above
#   VMTEST_SEED  1 (default): a flavour's first build starts from a copy of
#                the plain build of its arch (see seed_from below); 0: cold
#   KERNEL_SRC   build this tree as it is instead of Debian's source
#                (no series are applied to it; PATCHES must be none)
#   V=1          show the kernel build's output instead of logging it
#
# One build directory (make O=) per source tree, architecture and flavour
# (DEBUG, RT, FAULT), whatever PATCHES says: the series share one worktree. It records the key it was built for (source version, series hash,
# config hash); when the key matches, nothing runs, not even make. A changed
# series re-applies (vmtest/patch.sh) and make rebuilds only what changed.
set -euo pipefail
. "$(dirname "$0")/common.sh"

arch=$(norm_arch "${VMTEST_ARCH:-x86_64}")
karch=$(kbuild_arch "$arch")
cross=$(cross_compile "$arch")
patchdir=${PATCHDIR:-$XDPLAB_ROOT/kernel-patches}
patchdir=$(cd "$patchdir" 2>/dev/null && pwd) ||
	die "PATCHDIR=${PATCHDIR:-} is not a directory" "point PATCHDIR at a folder holding <driver>/*.patch"
confdir=$XDPLAB_ROOT/kernel-patches/config
debug=${DEBUG:-0} rt=${RT:-0} fault=${FAULT:-0} o2=${O2:-0} page64k=${PAGE64K:-0}
for v in DEBUG=$debug RT=$rt FAULT=$fault O2=$o2 PAGE64K=$page64k; do
	[ "${v#*=}" = 0 ] || [ "${v#*=}" = 1 ] || die "$v: expected 0 or 1"
done
[ "$page64k" = 0 ] || [ "$arch" = arm64 ] ||
	die "PAGE64K=1 is for ARCH=arm64 only (the board's Cortex-A72 has 64 KiB pages; x86_64 has none)"

case "$arch" in
x86_64) image=arch/x86/boot/bzImage target=bzImage ;;
arm64) image=arch/arm64/boot/Image target=Image ;;
riscv64) image=arch/riscv/boot/Image target=Image ;;
arm) image=arch/arm/boot/zImage target=zImage dtb=xilinx/zynq-zc702.dtb ;;
esac
[ -z "$cross" ] || command -v "${cross}gcc" >/dev/null ||
	die "no cross compiler ${cross}gcc" "run 'scripts/deps.sh vm'"
command -v pahole >/dev/null || die "pahole not found (needed for BTF)" "run 'scripts/deps.sh vm' (package dwarves)"

# The flavour: which checkers are built in. It names the build directory and
# ends the kernel release (6.12.117-xdplab-veth+tun+macb-debug-rt).
frags=("$confdir/base.config" "$confdir/$arch.config")
# 32-bit arm boots one static program (vmtest/gem-zynq.sh): arm.config is
# complete on its own, checkers included, and base.config's BPF/BTF, 9p and
# netfilter would only make a slow build slower.
if [ "$arch" = arm ]; then
	frags=("$confdir/arm.config")
	[ "$debug$rt$fault$o2" = 0000 ] ||
		die "DEBUG=, RT=, FAULT= and O2= are not for ARCH=arm" "arm.config already has lockdep, atomic-sleep checks and fail_page_alloc; drop them"
fi
suffix=""
for f in debug:$debug rt:$rt fault:$fault o2:$o2; do
	[ "${f#*:}" = 1 ] || continue
	f=${f%:*}
	suffix+=-$f
	frags+=("$confdir/$f.config")
	[ ! -e "$confdir/$arch-$f.config" ] || frags+=("$confdir/$arch-$f.config")
done
# The page size is a flavour too: with PAGE64K=1 every object is rebuilt.
if [ "$page64k" = 1 ]; then
	suffix+=-64k
	frags+=("$confdir/arm64-64k.config")
fi
for f in "${frags[@]}"; do
	[ -r "$f" ] || die "missing config fragment $f" "restore it from git (git checkout -- kernel-patches/config)"
done

cache=$(cache_dir)
flavour=$arch$suffix
if [ -n "${KERNEL_SRC:-}" ]; then
	sel=${PATCHES:-none}
	[ "$sel" = none ] || die "KERNEL_SRC trees are built as they are; PATCHES=$sel cannot be applied to them" \
		"apply the series in that tree yourself (git am kernel-patches/<driver>/*.patch) and run with PATCHES=none"
	src=$(cd "$KERNEL_SRC" 2>/dev/null && pwd) || die "KERNEL_SRC=$KERNEL_SRC is not a directory"
	[ -f "$src/Makefile" ] && [ -d "$src/kernel" ] || die "KERNEL_SRC=$src does not look like a Linux tree"
	tree=$src
	treekey=ext-$(echo "$src" | hash_stream | cut -c1-8)
	localver=-xdplab$suffix
	src_id="ext:$src"
	always_make=1
else
	sel=${PATCHES:-all}
	src=$("$VMTEST_DIR/source.sh")
	src_id=$(cat "$src/.git/xdplab-id")
	treekey=$(basename "$src")
	# The release names the series that apply and the flavour:
	# 6.12.117-xdplab-veth+tun, 6.12.117-xdplab-none-rt.
	localver=-xdplab-$("$VMTEST_DIR/series.sh" applied "$sel" "$patchdir")$suffix
	always_make=0
fi
bdir=$cache/build/$treekey-$flavour

series_hash=$("$VMTEST_DIR/series.sh" hash "$sel" "$patchdir")
config_hash=$({
	echo "$arch"
	cat "${frags[@]}"
	"${cross}gcc" --version | head -1
	pahole --version
} | hash_stream)
key="source=$src_id series=$series_hash config=$config_hash release=$localver"
mkdir -p "$bdir"

# Every line of every fragment must survive olddefconfig: Kconfig silently
# drops an option whose dependencies are off, and that must not go unnoticed.
check_config() {
	local f line opt bad=()
	for f in "${frags[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*) grep -qxF "$line" "$bdir/.config" || bad+=("$line") ;;
			"# CONFIG_"*" is not set")
				opt=${line#\# }
				opt=${opt%% *}
				! grep -q "^$opt=" "$bdir/.config" || bad+=("$line") ;;
			esac
		done <"$f"
	done
	[ ${#bad[@]} -eq 0 ] || die "Kconfig dropped: ${bad[*]}" \
		"a dependency is missing from kernel-patches/config/; see 'make -C $tree O=$bdir ARCH=$karch menuconfig' (search with /)"
}

configure() {
	log "configuring $bdir (tinyconfig + ${frags[*]##*/})"
	make -s -C "$tree" O="$bdir" ARCH="$karch" CROSS_COMPILE="$cross" tinyconfig >/dev/null
	# merge_config.sh writes its temporaries in the working directory.
	(cd "$bdir" && ARCH=$karch CROSS_COMPILE=$cross "$tree/scripts/kconfig/merge_config.sh" \
		-m -O "$bdir" "$bdir/.config" "${frags[@]}" >/dev/null)
	make -s -C "$tree" O="$bdir" ARCH="$karch" CROSS_COMPILE="$cross" olddefconfig >/dev/null
	check_config
}

# A flavour's first build starts from a copy of a finished build of the same
# tree and arch with fewer checkers (DEBUG+RT from DEBUG, else the plain
# one): Kbuild records, for every object, the CONFIG_ options its sources
# use (fixdep), and after the new configuration only the objects that use
# an option whose value changed are rebuilt, as after any edit of .config.
# PREEMPT_RT changes spinlock_t for nearly every file, so RT gains little;
# FAULT=1 touches the allocators and little else. VMTEST_SEED=0: cold.
seed_from() {
	local cand
	[ "${VMTEST_SEED:-1}" = 1 ] && [ -n "$suffix" ] && [ ! -e "$bdir/.config" ] || return 0
	for cand in $([ "$debug" = 0 ] || echo "$arch-debug") "$arch"; do
		cand=$cache/build/$treekey-$cand
		[ "$cand" != "$bdir" ] && [ -f "$cand/.xdplab-key" ] || continue
		log "seeding $bdir from $cand (VMTEST_SEED=0: a cold build)"
		rm -rf "$bdir" "$bdir.tmp"
		cp -a "$cand" "$bdir.tmp"
		rm -f "$bdir.tmp/.xdplab-key" "$bdir.tmp/.xdplab-config" "$bdir.tmp/build.log"
		mv "$bdir.tmp" "$bdir"
		return 0
	done
}

build() {
	if [ "$always_make" = 0 ]; then
		tree=$("$VMTEST_DIR/patch.sh" "$src" "$sel" "$patchdir")
		# Edits made by hand in the worktree (committed or not) count too.
		key="$key tree=$(git -C "$tree" rev-parse --short HEAD)-$(git -C "$tree" diff HEAD | hash_stream)"
		if [ -f "$bdir/$image" ] && { [ -z "${dtb:-}" ] || [ -f "$bdir/arch/$karch/boot/dts/$dtb" ]; } &&
			[ "$(cat "$bdir/.xdplab-key" 2>/dev/null)" = "$key" ]; then
			log "kernel up to date: $bdir/$image"
			return 0
		fi
	fi
	seed_from
	rm -f "$bdir/.xdplab-key"
	if [ ! -f "$bdir/.config" ] || [ "$(cat "$bdir/.xdplab-config" 2>/dev/null)" != "$config_hash" ] ||
		[ "$always_make" = 1 ]; then
		configure
		echo "$config_hash" >"$bdir/.xdplab-config"
	fi
	local t0=$SECONDS jobs
	jobs=$(nproc)
	local mk=(make -C "$tree" O="$bdir" ARCH="$karch" CROSS_COMPILE="$cross" -j"$jobs"
		LOCALVERSION="$localver" "$target" ${dtb:+"$dtb"})
	log "building $target with $jobs jobs in $bdir (log: $bdir/build.log)"
	if [ "${V:-0}" = 1 ]; then
		"${mk[@]}" 2>&1 | tee "$bdir/build.log"
		[ "${PIPESTATUS[0]}" = 0 ] || die "kernel build failed; log: $bdir/build.log"
	elif ! "${mk[@]}" >"$bdir/build.log" 2>&1; then
		grep -E 'error|Error' "$bdir/build.log" | head -20 | sed 's/^/vmtest:   /' >&2
		tail -n 15 "$bdir/build.log" | sed 's/^/vmtest:   /' >&2
		die "kernel build failed; full log: $bdir/build.log" "rerun with V=1 to watch it"
	fi
	echo "$key" >"$bdir/.xdplab-key"
	log "built $(cat "$bdir/include/config/kernel.release") in $((SECONDS - t0)) s"
}

# Copy the image out while holding the lock: another vmtest may rebuild this
# directory while ours boots.
build_and_copy() {
	build
	[ -z "${1:-}" ] || cp "$bdir/$image" "$1/"
	[ -z "${1:-}" ] || [ -z "${dtb:-}" ] || cp "$bdir/arch/$karch/boot/dts/$dtb" "$1/"
}
# One lock per source tree: every flavour and selection shares its worktree.
with_lock "$cache/build/$treekey.lock" build_and_copy "${1:-}"
if [ -n "${1:-}" ]; then echo "$1/$(basename "$image")"; else echo "$bdir/$image"; fi
