#!/usr/bin/env bash
# The receive buffer offset on a NET_IP_ALIGN=2 GEM: boot QEMU's riscv64
# sifive_u, whose Cadence GEM macb binds with RBOF=2, and check that frames
# spanning several RX buffers arrive byte for byte (vmtest/gem-rbof-init.c,
# the guest's only program). The arm64 board cannot show it: NET_IP_ALIGN
# is 0 there.
#
#   vmtest/gem-rbof.sh                  (make vmtest-rbof)
#
#   PATCHES=macb (default) | none       series applied to Debian's 6.12
#   KERNEL_SRC=<tree>                   or build that tree as it is
#   KERNEL=<image>                      boot that riscv64 Image instead
#   VMTEST_GEM_QEMU=patched | system | <path>
#                                       the QEMU (vmtest/qemu-gem.sh): patched
#                                       follows the documented offset; Debian's
#                                       own writes it into every buffer
#   VMTEST_TIMEOUT=<s>                  bound on the boot (default 600)
#
# The GEM's transmit is looped back to its receive by QEMU itself (a UDP
# socket on 127.0.0.1 that sends to its own port): no tap, no namespace.
# Exit 0 when the guest says PASS, 1 on FAIL, 2 when it could not tell.
set -euo pipefail
. "$(dirname "$0")/common.sh"

export VMTEST_ARCH=riscv64
[ -n "${KERNEL_SRC:-}" ] || export PATCHES=${PATCHES:-macb}
"$XDPLAB_ROOT/scripts/deps.sh" vm-riscv64

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xdplab-rbof.XXXXXX")
qemu_pid=""
cleanup() {
	[ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

built=$("$VMTEST_DIR/build.sh")
bdir=${built%/arch/riscv/boot/Image}
# KERNEL=<image>: boot that riscv64 Image instead (an earlier series, say);
# the build above still provides the initramfs tools
case "${KERNEL:-}" in
"" | 6.12) cp "$built" "$tmp/Image" ;;
*)
	[ -r "$KERNEL" ] || die "KERNEL=$KERNEL: no such image" "a riscv64 Image, e.g. a copy of an earlier build's arch/riscv/boot/Image"
	cp "$KERNEL" "$tmp/Image" ;;
esac
image=$tmp/Image
qemu=$("$VMTEST_DIR/qemu-gem.sh" riscv64)
firmware=/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin
[ -f "$firmware" ] || die "no OpenSBI firmware at $firmware" "run 'scripts/deps.sh vm-riscv64' (package opensbi)"

# The initramfs: /init and the nodes it needs, nothing else.
riscv64-linux-gnu-gcc -static -O2 -Wall -o "$tmp/init" "$VMTEST_DIR/gem-rbof-init.c" ||
	die "building vmtest/gem-rbof-init.c for riscv64 failed" "run 'scripts/deps.sh vm-riscv64' (libc6-dev-riscv64-cross)"
gen=$bdir/usr/gen_init_cpio
if [ ! -x "$gen" ]; then
	gen=$tmp/gen_init_cpio
	gcc -O2 -o "$gen" "$bdir/source/usr/gen_init_cpio.c" || die "building the kernel's usr/gen_init_cpio failed"
fi
cat >"$tmp/cpio.list" <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /proc 0755 0 0
dir /sys 0755 0 0
file /init $tmp/init 0755 0 0
EOF
"$gen" "$tmp/cpio.list" >"$tmp/initramfs.cpio"

# A free UDP port for the loop: QEMU fails to bind a taken one, so try again.
label="$(case "${KERNEL:-}" in "" | 6.12) cat "$bdir/include/config/kernel.release" ;; *) echo "$KERNEL" ;; esac), QEMU $("$qemu" --version | head -n1 | awk '{print $4}') ($qemu)"
log "sifive_u: $label"
console=$tmp/console.log
for try in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 40000))
	"$qemu" -M sifive_u -smp 2 -m 1G -nodefaults -no-user-config -no-reboot -display none \
		-serial "file:$console" -bios "$firmware" -kernel "$image" -initrd "$tmp/initramfs.cpio" \
		-append "console=ttySIF0 rdinit=/init panic=-1 printk.time=1" \
		-nic "socket,udp=127.0.0.1:$port,localaddr=127.0.0.1:$port" 2>"$tmp/qemu.err" &
	qemu_pid=$!
	# A bind failure ends QEMU before the firmware prints anything.
	for _ in $(seq 100); do
		kill -0 "$qemu_pid" 2>/dev/null && [ ! -s "$console" ] || break
		sleep 0.1
	done
	if kill -0 "$qemu_pid" 2>/dev/null || ! grep -qi "address already in use" "$tmp/qemu.err"; then
		break
	fi
	wait "$qemu_pid" || true
	qemu_pid=""
done
[ -n "$qemu_pid" ] || die "QEMU could not bind a UDP port for the GEM's loop in 5 tries" "see $tmp/qemu.err"

timeout=${VMTEST_TIMEOUT:-600}
t0=$SECONDS
while kill -0 "$qemu_pid" 2>/dev/null && ! grep -q '^RBOF-RESULT:' "$console" 2>/dev/null; do
	if [ $((SECONDS - t0)) -ge "$timeout" ]; then
		log "no result after ${timeout} s: stopping QEMU"
		break
	fi
	sleep 1
done
# Power-off follows the result line; give it a moment, then end QEMU.
for _ in 1 2 3 4 5; do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 1; done
kill "$qemu_pid" 2>/dev/null || true
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=""

grep -E '^rbof:|^RBOF-RESULT:|macb|Oops|BUG|WARNING' "$console" | sed 's/^/  /' >&2 || true
res=$(grep -m1 '^RBOF-RESULT:' "$console" | tr -d '\r' || true)
log "$(($SECONDS - t0)) s in the guest; $label"
case "$res" in
"RBOF-RESULT: PASS"*) log "${res#RBOF-RESULT: }"; exit 0 ;;
"RBOF-RESULT: FAIL"*) log "${res#RBOF-RESULT: }"; exit 1 ;;
"RBOF-RESULT: SKIP"*) log "${res#RBOF-RESULT: }"; exit 2 ;;
*)
	tail -n 30 "$console" | sed 's/^/  /' >&2 || true
	cat "$tmp/qemu.err" >&2 || true
	DIE_STATUS=2 die "the guest gave no result (console above)" "rerun; VMTEST_TIMEOUT=$((timeout * 2)) if it was still booting" ;;
esac
