#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds drivers/net/veth.ko from a kernel tree as a module, and has modpost
# check it against vmlinux.o: every symbol veth.ko needs from the kernel
# must be exported. vmtest builds veth into the kernel (CONFIG_VETH=y), where
# a missing EXPORT_SYMBOL goes unnoticed; Debian, allmodconfig and netdev's
# CI build it as a module (review-v3.md of kernel-patches/veth, BUG 1:
# bpf_xdp_make_writable() had no export and modpost failed).
#
# The config is vmtest's x86_64 one (tinyconfig + kernel-patches/config/
# base.config + x86_64.config) with CONFIG_MODULES=y, CONFIG_VETH=m and no
# debug info (BTF is made at vmlinux's link, which this never does), in a
# build directory of its own. It builds vmlinux.o and the modules, not
# vmlinux: the first run is about a vmtest kernel's cold build, a rerun
# after a patch change only what changed. Heavy: wrap it in
# `flock /tmp/xdplab-cpu.lock` on a shared machine.
#
#   tools/veth_modpost/veth_modpost.sh <kernel tree> [build dir]
#
# Exit status: 0 veth.ko built and modpost found nothing; 1 the build or
# modpost failed (its error lines are printed); 2 usage or config problem.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
confdir=$top/kernel-patches/config

die() { echo "veth_modpost: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: $0 <kernel tree> [build dir]"
tree=$(cd "$1" 2>/dev/null && pwd) || die "$1 is not a directory"
[ -f "$tree/Makefile" ] && [ -f "$tree/drivers/net/veth.c" ] || die "$tree is not a Linux tree"
cache=${XDPLAB_CACHE:-$HOME/.cache/xdplab}
bdir=${2:-$cache/build/modpost-$(echo "$tree" | sha256sum | cut -c1-8)-x86_64}
jobs=${JOBS:-$(nproc)}
mkdir -p "$bdir"

frag=$bdir/veth-module.config
cat >"$frag" <<'CONF'
CONFIG_MODULES=y
CONFIG_VETH=m
CONFIG_DEBUG_INFO_NONE=y
# CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT is not set
# CONFIG_DEBUG_INFO_BTF is not set
CONF

# Configure only when the fragments changed: a rerun is incremental.
key=$(cat "$confdir/base.config" "$confdir/x86_64.config" "$frag" | sha256sum | cut -c1-16)
if [ "$(cat "$bdir/.veth-modpost-key" 2>/dev/null)" != "$key" ] || [ ! -f "$bdir/.config" ]; then
	make -s -C "$tree" O="$bdir" ARCH=x86_64 tinyconfig >/dev/null
	(cd "$bdir" && ARCH=x86_64 "$tree/scripts/kconfig/merge_config.sh" -m -O "$bdir" \
		"$bdir/.config" "$confdir/base.config" "$confdir/x86_64.config" "$frag" >/dev/null)
	make -s -C "$tree" O="$bdir" ARCH=x86_64 olddefconfig >/dev/null
	echo "$key" >"$bdir/.veth-modpost-key"
fi
grep -qx 'CONFIG_MODULES=y' "$bdir/.config" || die "CONFIG_MODULES=y did not survive olddefconfig"
grep -qx 'CONFIG_VETH=m' "$bdir/.config" || die "CONFIG_VETH=m did not survive olddefconfig"

log=$bdir/veth-modpost.log
echo "veth_modpost: $tree -> $bdir ($(git -C "$tree" log --oneline -1 2>/dev/null || echo '?'))"
start=$(date +%s)
# vmlinux_o and modules: vmlinux.o is what modpost resolves veth.ko against
# (with `modules` alone it is not built, and every symbol is unresolved).
if make -C "$tree" O="$bdir" ARCH=x86_64 -j"$jobs" vmlinux_o modules >"$log" 2>&1; then
	rc=0
else
	rc=1
fi
# modpost's and the compiler's complaints (the build dir's name has "modpost" in it)
grep -E '^(ERROR|WARNING): modpost:|error:|\*\*\*' "$log" || true
if [ $rc = 0 ] && [ ! -f "$bdir/drivers/net/veth.ko" ]; then
	echo "veth_modpost: the build passed but made no drivers/net/veth.ko" >&2
	rc=1
fi
echo "veth_modpost: $([ $rc = 0 ] && echo PASS || echo FAIL) in $(($(date +%s) - start)) s (log: $log)"
exit $rc
