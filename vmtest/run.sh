#!/usr/bin/env bash
# Entry point of the make targets: get a kernel, then boot it.
#
#   vmtest/run.sh test     run CMD (default: build/test_xdplab) in the guest
#   vmtest/run.sh shell    interactive guest shell
#   vmtest/run.sh kernel   only build (or fetch) the kernel; print its path
#
#   KERNEL=6.12 (default)  Debian's linux-source-6.12 + PATCHES (vmtest/build.sh)
#   KERNEL=debian-6.1      Debian's prebuilt 6.1 kernel (vmtest/debian-kernel.sh)
#   KERNEL=<file>          boot that image as it is
#   DEBUG=1, RT=1, FAULT=1, O2=1, PAGE64K=1 flavours of the 6.12 build (vmtest/build.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"

mode=${1:-test}
case "$mode" in test | shell | kernel) ;; *) die "usage: vmtest/run.sh test|shell|kernel" ;; esac
export VMTEST_ARCH
VMTEST_ARCH=$(norm_arch "${VMTEST_ARCH:-x86_64}")
# riscv64 and 32-bit arm kernels boot only their own board's test program.
case "$mode:$VMTEST_ARCH" in
test:riscv64 | test:arm | shell:riscv64 | shell:arm)
	die "ARCH=$VMTEST_ARCH has no vmtest guest: its kernel boots one test program" \
	"make vmtest-rbof (riscv64 sifive_u) or make vmtest-zynq (32-bit arm, Zynq-7000)" ;;
esac
t0=$SECONDS

boot_opts=()
# The board's default selection of tests.
ARM64_TESTS="-t 'gem_*' -t 'macb_*' -t 'prog_*'"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xdplab-vmtest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
kernel=${KERNEL:-6.12}
# RT=1 and FAULT=1 are configurations of the kernel built here; a prebuilt
# kernel is what it is.
flavours="$([ "${RT:-0}" = 0 ] || echo ' RT=1')$([ "${FAULT:-0}" = 0 ] || echo ' FAULT=1')$([ "${O2:-0}" = 0 ] || echo ' O2=1')$([ "${PAGE64K:-0}" = 0 ] || echo ' PAGE64K=1')"
case "$kernel" in
6.12 | "") ;;
*)
	[ -z "$flavours" ] || die "${flavours# }: only for the 6.12 kernel built here; KERNEL=$kernel is prebuilt and cannot be reconfigured" \
		"drop KERNEL= to build 6.12 with${flavours}, or drop${flavours} to boot $kernel" ;;
esac
case "$kernel" in
6.12 | "")
	if [ "$mode" = kernel ]; then
		image=$("$VMTEST_DIR/build.sh")
	else
		image=$("$VMTEST_DIR/build.sh" "$tmp")
	fi
	# The tree the kernel was built from, for tests that need its own
	# files (selftests/kselftest_veth.sh runs its net/veth.sh).
	if [ -n "${KERNEL_SRC:-}" ]; then
		XDPLAB_KSRC=$(cd "$KERNEL_SRC" && pwd)
	else
		XDPLAB_KSRC=$(cache_dir)/trees/$(basename "$("$VMTEST_DIR/source.sh")")-work
	fi
	export XDPLAB_KSRC
	label="Linux 6.12 PATCHES=${PATCHES:-$([ -n "${KERNEL_SRC:-}" ] && echo none || echo all)}$([ "${DEBUG:-0}" = 0 ] || echo ' DEBUG=1')$flavours"
	[ -z "${KERNEL_SRC:-}" ] || label="$KERNEL_SRC$([ "${DEBUG:-0}" = 0 ] || echo ' DEBUG=1')$flavours"
	;;
debian-6.1)
	[ "$VMTEST_ARCH" = x86_64 ] || die "KERNEL=debian-6.1 is x86_64 only"
	[ -z "${KERNEL_SRC:-}" ] && [ "${PATCHES:-none}" = none ] ||
		die "KERNEL=debian-6.1 is Debian's prebuilt kernel: no PATCHES or KERNEL_SRC" "drop PATCHES=/KERNEL_SRC=, or use KERNEL=6.12"
	eval "$("$VMTEST_DIR/debian-kernel.sh")"
	image=$DEBIAN_KERNEL
	boot_opts+=(--initrd "$DEBIAN_INITRD" --moddir "$DEBIAN_MODDIR" --modules "$DEBIAN_MODULES")
	label="Debian $DEBIAN_RELEASE"
	;;
*)
	[ -f "$kernel" ] || die "KERNEL=$kernel: not 6.12, debian-6.1 or an image file"
	image=$kernel
	label=$kernel
	;;
esac

if [ "$mode" = kernel ]; then
	echo "$image"
	exit 0
fi
log "kernel ready after $((SECONDS - t0)) s"
# KASAN and lockdep under TCG: more memory, more time. RT=1 has lockdep too.
if [ "${DEBUG:-0}" = 1 ]; then
	export VMTEST_MEM=${VMTEST_MEM:-4096} VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-3600}
elif [ "${RT:-0}" = 1 ]; then
	export VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-3600}
fi

if [ "$mode" = shell ]; then
	exec "$VMTEST_DIR/boot.sh" "${boot_opts[@]}" --interactive --label "$label" "$image"
fi
runner=$XDPLAB_ROOT/build/test_xdplab
# The GEM board: its own build, and the tests that make sense on a
# physical-style NIC (vmtest/README.md says why the others are left out).
if [ "$VMTEST_ARCH" = arm64 ]; then
	runner=$XDPLAB_ROOT/build/arm64/test_xdplab
	[ -n "${CMD:-}" ] || CMD="$runner $ARM64_TESTS"
fi
export CMD=${CMD:-$runner}
if [ "${CMD%% *}" = "$runner" ] && [ ! -x "$runner" ]; then
	die "no $runner to run in the guest" "run 'make$([ "$VMTEST_ARCH" = arm64 ] && echo ' arm64')' first, or give CMD='...'"
fi
"$VMTEST_DIR/boot.sh" "${boot_opts[@]}" --label "$label" "$image"
