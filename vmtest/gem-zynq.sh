#!/usr/bin/env bash
# A 32-bit GEM: boot QEMU's xilinx-zynq-a9 (Zynq-7000, Cortex-A9), whose
# Cadence GEM macb binds as "cdns,zynq-gem", open it while the page
# allocations of its RX ring fill fail, and check the kernel log stays clean
# (vmtest/gem-zynq-init.c, the guest's only program). What it is for: a
# u64_stats update from preemptible process context is a lockdep WARNING on
# a 32-bit kernel and nothing at all on arm64 and x86_64, where the other
# boards run.
#
#   vmtest/gem-zynq.sh                  (make vmtest-zynq)
#
#   PATCHES=macb (default) | none       series applied to Debian's 6.12
#   KERNEL_SRC=<tree>                   or build that tree as it is
#   VMTEST_TIMEOUT=<s>                  bound on the boot (default 600)
#
# The kernel: tinyconfig + kernel-patches/config/arm.config (lockdep,
# atomic-sleep checks, fail_page_alloc), zImage and zynq-zc702.dtb, built by
# vmtest/build.sh (ARCH=arm) into $XDPLAB_CACHE/build/<tree>-arm. QEMU is
# Debian's qemu-system-arm as it is; the GEM has no network behind it, the
# test only opens and closes it.
# Exit 0 when the guest says PASS, 1 on FAIL, 2 when it could not tell.
set -euo pipefail
. "$(dirname "$0")/common.sh"

export VMTEST_ARCH=arm
timeout=${VMTEST_TIMEOUT:-600}
[[ "$timeout" =~ ^[0-9]+$ ]] || die "VMTEST_TIMEOUT=$timeout: expected seconds" "e.g. VMTEST_TIMEOUT=1200"
[ -n "${KERNEL_SRC:-}" ] || export PATCHES=${PATCHES:-macb}
"$XDPLAB_ROOT/scripts/deps.sh" vm-arm
qemu="qemu-system-arm"
command -v "$qemu" >/dev/null || die "no $qemu" "run 'scripts/deps.sh vm-arm' (package qemu-system-arm)"
machines=$("$qemu" -M help 2>&1) || die "$qemu -M help failed: $machines" "reinstall qemu-system-arm"
grep -q '^xilinx-zynq-a9 ' <<<"$machines" ||
	die "$qemu has no xilinx-zynq-a9 machine" "Debian's qemu-system-arm has it: run 'scripts/deps.sh vm-arm'"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xdplab-zynq.XXXXXX")
qemu_pid=""
cleanup() {
	if [ -n "$qemu_pid" ]; then
		kill "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t_start=$SECONDS

# zImage and the DTB, copied out under the build's lock.
"$VMTEST_DIR/build.sh" "$tmp" >/dev/null
image=$tmp/zImage
dtb=$tmp/zynq-zc702.dtb
[ -f "$image" ] && [ -f "$dtb" ] || die "vmtest/build.sh left no zImage and zynq-zc702.dtb in $tmp" "rerun with V=1 to see the build"
cache=$(cache_dir)
bdir="" tree=""
kselftest_dirs arm "$cache" "${PATCHDIR:-$XDPLAB_ROOT/kernel-patches}"	# sets bdir, tree
release=$(cat "$bdir/include/config/kernel.release" 2>/dev/null || echo unknown)
t_built=$SECONDS

# The initramfs: /init and /dev/console, nothing else.
arm-linux-gnueabihf-gcc -static -O2 -Wall -o "$tmp/init" "$VMTEST_DIR/gem-zynq-init.c" ||
	die "building vmtest/gem-zynq-init.c for armhf failed" "run 'scripts/deps.sh vm-arm' (libc6-dev-armhf-cross)"
gen=$bdir/usr/gen_init_cpio
if [ ! -x "$gen" ]; then
	gen=$tmp/gen_init_cpio
	gcc -O2 -o "$gen" "$tree/usr/gen_init_cpio.c" || die "building the kernel's usr/gen_init_cpio failed" "is $tree a Linux tree?"
fi
cat >"$tmp/cpio.list" <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /proc 0755 0 0
dir /sys 0755 0 0
file /init $tmp/init 0755 0 0
EOF
"$gen" "$tmp/cpio.list" >"$tmp/initramfs.cpio" || die "gen_init_cpio failed" "see $tmp/cpio.list"

# The console is kept with the other runs (the newest 30 are kept).
mkdir -p "$cache/runs"
run=$(mktemp -d "$cache/runs/$(date +%Y%m%d-%H%M%S)-zynq-XXXX") ||
	die "cannot create a run directory in $cache/runs" "is XDPLAB_CACHE writable?"
console=$run/console.log
label="$release, QEMU $("$qemu" --version | awk 'NR == 1 { print $4 }') ($qemu -M xilinx-zynq-a9)"
log "zynq: $label"
# zynq-zc702.dts makes uart1 the console: QEMU's second serial port.
"$qemu" -M xilinx-zynq-a9 -m 512M -nodefaults -no-user-config -no-reboot -display none \
	-serial null -serial "file:$console" -kernel "$image" -dtb "$dtb" -initrd "$tmp/initramfs.cpio" \
	-append "console=ttyPS0,115200 rdinit=/init panic=-1 printk.time=1" 2>"$run/qemu.err" &
qemu_pid=$!

t0=$SECONDS
while kill -0 "$qemu_pid" 2>/dev/null && ! grep -q '^ZYNQ-RESULT:' "$console" 2>/dev/null; do
	if [ $((SECONDS - t0)) -ge "$timeout" ]; then
		log "no result after ${timeout} s: stopping QEMU"
		break
	fi
	sleep 1
done
# The guest restarts after its result, which ends QEMU (-no-reboot).
for _ in 1 2 3 4 5; do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 1; done
kill "$qemu_pid" 2>/dev/null || true
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=""

if [ ! -s "$console" ]; then
	sed 's/^/  qemu: /' "$run/qemu.err" >&2 || true
	DIE_STATUS=2 die "QEMU printed no console output: $(head -n1 "$run/qemu.err" 2>/dev/null)" \
		"run the $qemu command of vmtest/gem-zynq.sh by hand; its stderr is in $run/qemu.err"
fi
tr -d '\r' <"$console" >"$tmp/console"
grep -E '^zynq:| macb [0-9a-f]+\.ethernet' "$tmp/console" | sed 's/^/  /' >&2 || true
res=$(grep -m1 '^ZYNQ-RESULT:' "$tmp/console" || true)
# A report: from its first line to the end of its trace, at most 40 lines.
if ! grep -q '^ZYNQ-RESULT: PASS' "$tmp/console"; then
	awk '/(WARNING|BUG):|Oops|Internal error:|Kernel panic/ { on = 1 } on && n++ < 40 { print "  " $0 } on && /---\[ end trace/ { exit }' \
		"$tmp/console" >&2 || true
fi
log "$((SECONDS - t0)) s in the guest, $((SECONDS - t_start)) s in all (kernel build $((t_built - t_start)) s); $label"
log "console: $console"
case "$res" in
"ZYNQ-RESULT: PASS"*) log "${res#ZYNQ-RESULT: }"; exit 0 ;;
"ZYNQ-RESULT: FAIL"*) log "${res#ZYNQ-RESULT: }"; exit 1 ;;
"ZYNQ-RESULT: SKIP"*) log "${res#ZYNQ-RESULT: }"; exit 2 ;;
*)
	tail -n 30 "$tmp/console" | sed 's/^/  /' >&2 || true
	sed 's/^/  qemu: /' "$run/qemu.err" >&2 || true
	DIE_STATUS=2 die "the guest gave no result (console above, whole: $console)" \
		"rerun; VMTEST_TIMEOUT=$((timeout * 2)) if it was still booting" ;;
esac
