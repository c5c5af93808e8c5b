#!/usr/bin/env bash
# shellcheck disable=SC2154 # tree, treekey, bdir, out: kselftest_dirs (common.sh)
# Build the kernel's own XDP selftests that apply to the GEM board (ARCH=arm64)
# from the tree vmtest builds the board's kernel from, and print the
# directory that holds them (vmtest/kselftest.sh boots them with
# vmtest/kselftest-gem.sh; vmtest/README.md, "The kernel's selftests").
#
#   vmtest/kselftest-gem-build.sh IMAGEDIR
#
# Settings as for vmtest/build.sh (PATCHES, KERNEL_SRC, DEBUG, RT, FAULT),
# with VMTEST_ARCH=arm64. The kernel is built first (its Image is copied to
# IMAGEDIR). The output directory holds
#
#   guest/  for the board's initramfs: xdp_features and xdping cross-built
#           for arm64, xdping_kern.bpf.o, and net/'s xdp_dummy.bpf.o (one
#           program, for the native-XDP probe)
#   host/   xdp_features built for this host: the tester on the board's tap
#
# Why not upstream's Makefile, as the x86 build does: it cross-builds libbpf
# and the helpers only with a target libelf it finds by itself, and builds
# bpftool, resolve_btfids and vmlinux.h for programs that need none of them
# (progs/xdp_features.c and progs/xdping_kern.c include only UAPI headers).
# These few files are compiled directly, each against the tree's own libbpf
# (Debian 12's libbpf 1.1 lacks bpf_xdp_query()'s feature_flags, which
# xdp_features asks for), statically linked, once for arm64 against the
# sysroot vmtest/rootfs.sh unpacks and once for the host.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 1 ] || die "usage: vmtest/kselftest-gem-build.sh IMAGEDIR"
imgdir=$1
arch=$(norm_arch "${VMTEST_ARCH:-x86_64}")
[ "$arch" = arm64 ] || die "vmtest/kselftest-gem-build.sh builds the GEM board's tests (ARCH=arm64), not $arch" \
	"x86_64 builds with vmtest/kselftest-build.sh"
cache=$(cache_dir)
patchdir=$(cd "${PATCHDIR:-$XDPLAB_ROOT/kernel-patches}" && pwd)
cross=$(cross_compile arm64)
command -v "${cross}gcc" >/dev/null || die "no ${cross}gcc" "run 'scripts/deps.sh vm-arm64'"

image=$("$VMTEST_DIR/build.sh" "$imgdir")
sysroot=$("$VMTEST_DIR/rootfs.sh" arm64)/root
# Sets tree, treekey, bdir and out (vmtest/common.sh).
kselftest_dirs "$arch" "$cache" "$patchdir"

# libbpf.a and its headers from the tree, for one target (host or arm64).
libbpf() {
	local dir=$out/$1/libbpf
	shift
	mkdir -p "$dir"
	make -s -C "$tree/tools/lib/bpf" OUTPUT="$dir/" "$@" "$dir/libbpf.a" &&
		make -s -C "$tree/tools/lib/bpf" OUTPUT="$dir/" DESTDIR="$dir" prefix= "$@" install_headers
}

build() {
	local t0=$SECONDS sb=$tree/tools/testing/selftests/bpf key
	kselftest_needs_build "$bdir/arch/arm64/boot/Image" "$image" "run make kselftest ARCH=arm64 again" \
		"sysroot=$sysroot" || return 0
	rm -rf "$out/guest" "$out/host" "$out/gen"
	mkdir -p "$out/guest" "$out/host" "$out/gen"
	log "building the GEM board's kernel selftests from $tree in $out (log: $out/build.log)"
	: >"$out/build.log"
	{
		# UAPI headers of this tree (arm64), for the BPF programs.
		make -s -C "$tree" O="$out/hdr" ARCH=arm64 INSTALL_HDR_PATH="$out/usr" headers_install &&
			libbpf host &&
			libbpf arm64 CROSS_COMPILE="$cross" ARCH=arm64 EXTRA_CFLAGS="-g -O2 -idirafter $sysroot/usr/include"
	} >>"$out/build.log" 2>&1 || die "headers or libbpf did not build; log: $out/build.log"

	# The BPF programs: bytecode is the same for both little-endian
	# targets, so one object serves the guest's DUT and the host's tester.
	local bpfcc=(clang -g -O2 --target=bpf -D__TARGET_ARCH_arm64 -I"$out/arm64/libbpf/include"
		-I"$tree/tools/include/uapi" -I"$out/usr/include" -I"$sb"
		-idirafter /usr/include/"$(gcc -print-multiarch)" -idirafter /usr/include)
	{
		"${bpfcc[@]}" -c "$sb/progs/xdp_features.c" -o "$out/gen/xdp_features.bpf.o" &&
			bpftool gen skeleton "$out/gen/xdp_features.bpf.o" name xdp_features >"$out/gen/xdp_features.skel.h" &&
			"${bpfcc[@]}" -c "$sb/progs/xdping_kern.c" -o "$out/guest/xdping_kern.bpf.o" &&
			"${bpfcc[@]}" -c "$tree/tools/testing/selftests/net/xdp_dummy.bpf.c" -o "$out/guest/xdp_dummy.bpf.o"
	} >>"$out/build.log" 2>&1 || die "the BPF programs did not build; log: $out/build.log"

	# xdp_features.c as 6.12 ships it passes accept() and recvfrom() an
	# uninitialised address length, and tests an uninitialised state: on
	# x86 the stack happened to hold something usable, the arm64 build's
	# accept() fails at once with EINVAL ("Failed accepting connections on
	# device eth0 control socket"). Build a copy with the three set.
	sed -e 's/^\([[:space:]]*\)socklen_t addrlen;$/\1socklen_t addrlen = sizeof(struct sockaddr_storage);/' \
		-e 's/^\([[:space:]]*\)int state, err = 0,/\1int state = CMD_STOP, err = 0,/' \
		"$sb/xdp_features.c" >"$out/gen/xdp_features.c"
	[ "$(grep -cE 'addrlen = sizeof\(struct sockaddr_storage\);|int state = CMD_STOP' "$out/gen/xdp_features.c")" = 3 ] ||
		die "xdp_features.c in $tree is not the one vmtest/kselftest-gem-build.sh knows" \
			"look at its addrlen and state variables and update the sed above"

	# The user-space programs, with the include order of upstream's
	# Makefile (its own directory, libbpf's headers, tools/include).
	local flags=(-g -O2 -Wall -Wno-unused-result -I"$sb" -I"$out/gen" -I"$tree/tools/include" -I"$tree/tools/include/uapi")
	local acc=("${cross}gcc" "${flags[@]}" -I"$out/arm64/libbpf/include" -idirafter "$sysroot/usr/include")
	# shellcheck disable=SC2054 # the commas are the linker's
	local alibs=("$out/arm64/libbpf/libbpf.a" -L"$sysroot/usr/lib/aarch64-linux-gnu"
		-Wl,-rpath-link,"$sysroot/usr/lib/aarch64-linux-gnu" -lelf -lz -lpthread)
	local hcc=(gcc "${flags[@]}" -I"$out/host/libbpf/include")
	{
		"${acc[@]}" -o "$out/guest/xdp_features" "$out/gen/xdp_features.c" "$sb/network_helpers.c" "${alibs[@]}" &&
			"${acc[@]}" -o "$out/guest/xdping" "$sb/xdping.c" "$sb/testing_helpers.c" "$sb/disasm.c" "${alibs[@]}" &&
			"${hcc[@]}" -o "$out/host/xdp_features" "$out/gen/xdp_features.c" "$sb/network_helpers.c" \
				"$out/host/libbpf/libbpf.a" -lelf -lz -lpthread
	} >>"$out/build.log" 2>&1 || {
		grep -E 'error' "$out/build.log" | head -20 | sed 's/^/vmtest:   /' >&2
		die "xdp_features or xdping did not build; log: $out/build.log"
	}
	# xdping opens <argv[0]>_kern.bpf.o: it must sit next to the binary.
	echo "$key" >"$out/.xdplab-key"
	log "built the GEM board's selftests in $((SECONDS - t0)) s"
}
mkdir -p "$cache/kselftest"
# The shared worktree must hold this selection while its files are read.
with_lock "$cache/build/$treekey.lock" build
echo "$out"
