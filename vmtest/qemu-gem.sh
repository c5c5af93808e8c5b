#!/usr/bin/env bash
# Print the path of the QEMU that runs a GEM board: Debian's own QEMU source
# with vmtest/qemu/*.patch applied, built once and cached.
#
#   vmtest/qemu-gem.sh [aarch64|riscv64]   (default aarch64: xlnx-versal-virt;
#                                          riscv64: sifive_u, vmtest/gem-rbof.sh)
#
# Why not Debian's binary: its emulated GEM writes a frame into a descriptor
# the driver owns whenever another priority queue has a free one, which on
# xlnx-versal-virt (two queues, only queue 0 receives) is always. A ring
# that fills up then gets frames written into buffers the driver has freed,
# and stale descriptors written over refilled slots: memory corruption that
# real hardware cannot cause (vmtest/qemu/0001-*.patch, vmtest/README.md).
# And it applies the receive buffer offset to every buffer of a frame, where
# the hardware applies it to the first only (vmtest/qemu/0002-*.patch): with
# Linux's offset of 2 on riscv64, multi-buffer frames arrived shifted.
# And it never raises a DMA bus error: vmtest/qemu/0003-*.patch lets the
# host do so (QOM property inject-hresp, set over QMP by
# vmtest/gem-control.sh), so that macb's HRESP recovery runs at all.
# And its TX used-bit write-back rewrote the next descriptor too, which a
# second vCPU may be filling: frames stuck for good (vmtest/qemu/0005).
#
#   VMTEST_GEM_QEMU=patched (default)  build or reuse the patched binary
#   VMTEST_GEM_QEMU=system             Debian's qemu-system-<target>, as is
#   VMTEST_GEM_QEMU=<path>             that binary
#
# The build: apt-get source of the installed qemu-system-arm's version (or
# the newest the mirror has), configured for aarch64- and riscv64-softmmu
# with what the boards use (TCG, FDT, virtio-9p, plugins), -j$(nproc). About
# 9 minutes on 2 cores, once: <cache>/qemu-<key>/, keyed by the source version, the
# patches and the configure options.
set -euo pipefail
. "$(dirname "$0")/common.sh"

target=${1:-aarch64}
case "$target" in
aarch64) group=vm-arm64 ;;
riscv64) group=vm-riscv64 ;;
*) die "qemu-gem.sh: unknown target '$target'" "use aarch64 or riscv64" ;;
esac
want=${VMTEST_GEM_QEMU:-patched}
case "$want" in
system)
	command -v "qemu-system-$target" || die "qemu-system-$target not found" "run 'scripts/deps.sh $group'"
	exit 0 ;;
patched) ;;
*)
	[ -x "$want" ] || die "VMTEST_GEM_QEMU=$want: not an executable" "use patched, system or the path of a qemu-system-$target"
	echo "$want"
	exit 0 ;;
esac

cache=$(cache_dir)
patches=("$VMTEST_DIR"/qemu/*.patch)
# The source version Debian built the installed binary from, so that the
# patched QEMU differs from it by the patches only.
version=$(dpkg-query -W -f='${source:Version}' qemu-system-arm 2>/dev/null) ||
	die "qemu-system-arm is not installed" "run 'scripts/deps.sh vm-arm64'"
config=(--target-list=aarch64-softmmu,riscv64-softmmu --without-default-features
	--enable-tcg --enable-fdt=system --enable-virtfs --enable-attr --enable-cap-ng
	--enable-plugins --disable-docs --disable-user --disable-tools --disable-werror)
key=$({ echo "$version" "${config[*]}"; cat "${patches[@]}"; } | hash_stream | cut -c1-8)
dir=$cache/qemu-$key
bin=$dir/build/qemu-system-$target
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

build() {
	[ ! -x "$bin" ] || return 0
	local t0=$SECONDS src lists sources
	rm -rf "$dir"
	mkdir -p "$dir"
	# deb-src entries made from the host's own apt sources, kept in the
	# cache so that the host's apt configuration is left as it was.
	lists=$dir/apt/lists sources=$dir/apt/sources.list
	mkdir -p "$lists/partial"
	{ grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list || true; } |
		sed 's/^deb /deb-src /' >"$sources"
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed 's/^Types:.*/Types: deb-src/' "$f" >"$dir/apt/$(basename "$f")"
	done
	local apt=(apt-get -q -o "Dir::Etc::sourcelist=$sources" -o "Dir::Etc::sourceparts=$dir/apt"
		-o "Dir::State::Lists=$lists" -o APT::Sandbox::User=root)
	log "building a patched QEMU for the GEM boards (aarch64 and riscv64; once, about 9 min): $dir"
	"${apt[@]}" update >"$dir/apt.log" 2>&1 ||
		die "apt-get update of Debian's source lists failed ($dir/apt.log)" "check the network, or set VMTEST_GEM_QEMU=system"
	(cd "$dir" && { "${apt[@]}" source --download-only "qemu=${version#*:}" ||
		"${apt[@]}" source --download-only qemu; } >>"$dir/apt.log" 2>&1) ||
		die "apt-get source qemu failed ($dir/apt.log)" "check the network, or set VMTEST_GEM_QEMU=system"
	src=$dir/src
	(cd "$dir" && dpkg-source -x ./qemu_*.dsc "$src" >>"$dir/apt.log" 2>&1) ||
		die "dpkg-source -x of Debian's qemu failed ($dir/apt.log)" "run 'scripts/deps.sh vm-arm64' (dpkg-dev)"
	local p
	for p in "${patches[@]}"; do
		patch -d "$src" -p1 -s --no-backup-if-mismatch <"$p" ||
			die "vmtest/qemu/$(basename "$p") does not apply to Debian's qemu $(cd "$dir" && ls qemu_*.dsc)" \
				"refresh the patch against that version, or set VMTEST_GEM_QEMU=system"
	done
	mkdir -p "$dir/build"
	(cd "$dir/build" && "$src/configure" "${config[@]}") >"$dir/build.log" 2>&1 || die "configuring QEMU failed ($dir/build.log)" "run 'scripts/deps.sh vm-arm64'"
	ninja -C "$dir/build" -j"$(nproc)" qemu-system-aarch64 qemu-system-riscv64 >>"$dir/build.log" 2>&1 ||
		die "building QEMU failed ($dir/build.log)" "run 'scripts/deps.sh vm-arm64'"
	# Only the binary and what it loads at run time are needed again.
	rm -rf "$src" "$dir"/qemu_* "$dir/apt"
	log "patched QEMU built in $((SECONDS - t0)) s"
}
with_lock "$cache/qemu-$key.lock" build
echo "$bin"
