#!/usr/bin/env bash
# Decide whether a guest boots with KVM or TCG; print "kvm" or "tcg" and say
# why on stderr.
#
#   vmtest/kvm.sh KERNEL_IMAGE
#
#   XDPLAB_KVM=auto (default): KVM when a probe shows it boots a kernel, TCG
#   otherwise; XDPLAB_KVM=1: KVM or an error; XDPLAB_KVM=0: TCG.
#
# A /dev/kvm that opens is not enough: under PVM (a KVM flavour for nested
# clouds) the device works but a stock kernel hangs early in boot. So the
# probe boots the image itself, without a root file system, and waits for the
# kernel to reach the point where it looks for one. The answer is cached per
# host kernel and QEMU version, so the probe costs seconds once.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 1 ] || die "usage: vmtest/kvm.sh KERNEL_IMAGE"
image=$1
arch=$(norm_arch "${VMTEST_ARCH:-x86_64}")
want=${XDPLAB_KVM:-auto}

tcg() { log "using TCG: $*"; echo tcg; exit 0; }

case "$want" in
0) tcg "XDPLAB_KVM=0" ;;
1 | auto) ;;
*) die "XDPLAB_KVM=$want: expected auto, 0 or 1" ;;
esac

# Why KVM cannot be used here, or nothing.
obstacle() {
	[ "$arch" = "$(norm_arch "$(uname -m)")" ] || { echo "the guest is $arch, the host $(uname -m)"; return; }
	[ -e /dev/kvm ] || { echo "no /dev/kvm"; return; }
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo "/dev/kvm is not readable and writable for $(id -un)"; return; }
	[ ! -d /sys/module/kvm_pvm ] || { echo "/dev/kvm is PVM (kvm_pvm loaded), under which stock kernels hang at boot"; return; }
}
why=$(obstacle)
if [ -n "$why" ]; then
	[ "$want" = auto ] || die "XDPLAB_KVM=1 but $why" "drop XDPLAB_KVM to use TCG"
	tcg "$why"
fi
[ "$want" = 1 ] && { log "using KVM (XDPLAB_KVM=1)"; echo kvm; exit 0; }

qemu=qemu-system-x86_64
cache=$(cache_dir)
key="$(uname -r)-$("$qemu" --version | head -n 1 | tr -dc '0-9.')"
verdict=$cache/kvm-probe-$key
if [ ! -f "$verdict" ]; then
	log "probing KVM: booting $image without a root file system (at most 30 s, once per host kernel and QEMU)"
	out=$(timeout -k 5 30 "$qemu" -M pc -accel kvm -cpu host -m 256 -nodefaults -no-user-config \
		-no-reboot -display none -serial stdio -monitor none -kernel "$image" \
		-append "console=ttyS0 panic=-1 root=/dev/nonexistent" </dev/null 2>&1 || true)
	# Any kernel that got as far as mounting its root has booted under KVM.
	if grep -qE 'VFS: Unable to mount root|Kernel panic' <<<"$out"; then
		echo kvm >"$verdict"
	else
		echo "the probe guest did not reach its root mount in 30 s under KVM" >"$verdict"
	fi
fi
v=$(cat "$verdict")
[ "$v" = kvm ] || tcg "$v (cached in $verdict)"
log "using KVM (probe cached in $verdict)"
echo kvm
