#!/usr/bin/env bash
# shellcheck disable=SC2154 # tree, treekey, bdir, out: kselftest_dirs (common.sh)
# Build the kernel's own XDP / veth / tun / vhost-net selftests from the tree
# vmtest builds the guest kernel from, against that kernel's vmlinux, and
# print the directory that holds them (for vmtest/kselftest-guest.sh).
#
#   vmtest/kselftest-build.sh IMAGEDIR
#
# Settings as for vmtest/build.sh (PATCHES, KERNEL_SRC, DEBUG, RT, FAULT);
# x86_64 here; ARCH=arm64 (the GEM board) in vmtest/kselftest-gem-build.sh.
# The kernel is built first (vmtest/build.sh copies its image to IMAGEDIR);
# the selftests are built from the same tree, so the series' own selftest
# patches are in. One output directory per kernel build directory and series
# selection, in <cache>/kselftest/; make there is incremental, and a rerun
# whose key (kernel key, tree state, this script) matches does not even
# start make.
#
# The tree is never written to. tools/testing/selftests/bpf is built through
# a view: a directory of symlinks to the tree in which prog_tests/ holds only
# the XDP tests and progs/ only the BPF programs they, the XDP shell tests
# and their helper binaries name. Upstream's Makefile then builds those
# (about 31 objects instead of 825), without bpf_testmod.ko (the guest kernel
# has no modules).
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 1 ] || die "usage: vmtest/kselftest-build.sh IMAGEDIR"
imgdir=$1
arch=$(norm_arch "${VMTEST_ARCH:-x86_64}")
# The GEM board's tests are another set, built another way.
[ "$arch" = x86_64 ] || exec "$VMTEST_DIR/kselftest-gem-build.sh" "$imgdir"
cache=$(cache_dir)
patchdir=$(cd "${PATCHDIR:-$XDPLAB_ROOT/kernel-patches}" && pwd)

image=$("$VMTEST_DIR/build.sh" "$imgdir")
# Sets tree, treekey, bdir and out (vmtest/common.sh).
kselftest_dirs "$arch" "$cache" "$patchdir"

# The XDP tests of test_progs (globs in prog_tests/), and the helper
# binaries of the shell tests.
PROG_TESTS=('xdp*.c' test_xdp_veth.c)
BPF_HELPERS=(xdp_features xdp_redirect_multi xdping xskxceiver xdp_synproxy)
BPF_SCRIPTS=(test_xdp_meta.sh test_xdp_redirect.sh test_xdp_redirect_multi.sh
	test_xdp_vlan.sh test_xdp_vlan_mode_generic.sh test_xdp_vlan_mode_native.sh
	test_xdp_features.sh test_xdping.sh test_xsk.sh xsk_prereqs.sh)
NET_SCRIPTS=(veth.sh udpgro.sh udpgro_fwd.sh net_helper.sh in_netns.sh)

# A directory mirroring DIR with symlinks, except for the entries named
# after it, which the caller fills in.
mirror() {
	local dir=$1 to=$2 e
	shift 2
	mkdir -p "$to"
	for e in "$dir"/* "$dir"/.[!.]*; do
		[ -e "$e" ] || continue
		case " $* " in *" ${e##*/} "*) continue ;; esac
		ln -sfn "$e" "$to/${e##*/}"
	done
}

make_view() {
	local v=$1 sb=$tree/tools/testing/selftests/bpf f name
	rm -rf "$v"
	mirror "$tree" "$v" tools
	mirror "$tree/tools" "$v/tools" testing
	mirror "$tree/tools/testing" "$v/tools/testing" selftests
	mirror "$tree/tools/testing/selftests" "$v/tools/testing/selftests" bpf
	mirror "$sb" "$v/tools/testing/selftests/bpf" prog_tests progs
	mkdir -p "$v/tools/testing/selftests/bpf/prog_tests" "$v/tools/testing/selftests/bpf/progs"
	# shellcheck disable=SC2068
	(cd "$sb/prog_tests" && for f in ${PROG_TESTS[@]} *.h; do
		[ -e "$f" ] && ln -sfn "$sb/prog_tests/$f" "$v/tools/testing/selftests/bpf/prog_tests/$f"
	done)
	for f in "$sb"/progs/*.h; do ln -sfn "$f" "$v/tools/testing/selftests/bpf/progs/"; done
	# The BPF programs named by a skeleton include or an object file name
	# in the tests, helpers and scripts, those the helpers open as
	# <argv[0]>_kern.bpf.o, and btf_data for test_progs' own link.
	# shellcheck disable=SC2068
	for name in btf_data "${BPF_HELPERS[@]/%/_kern}" $( (cd "$sb/prog_tests" && cat ${PROG_TESTS[@]}; cd "$sb" &&
		cat "${BPF_HELPERS[@]/%/.c}" "${BPF_SCRIPTS[@]}") |
		grep -oE '[A-Za-z0-9_]+\.(skel\.h|bpf\.o)' | sed -E 's/\.(skel\.h|bpf\.o)$//' | sort -u); do
		[ ! -e "$sb/progs/$name.c" ] || ln -sfn "$sb/progs/$name.c" "$v/tools/testing/selftests/bpf/progs/"
	done
}

build() {
	local t0=$SECONDS jobs=$(($(nproc) < 2 ? $(nproc) : 2)) sd=$tree/tools/testing/selftests
	local key
	kselftest_needs_build "$bdir/arch/x86/boot/bzImage" "$image" "run make kselftest again" || return 0
	mkdir -p "$out/net" "$out/virtio/shim/linux" "$out/bpf"
	log "building the kernel's selftests from $tree in $out (log: $out/build.log)"
	: >"$out/build.log"
	# UAPI headers of this tree, for the net and virtio tests and the BPF
	# programs (upstream's Makefile looks for them in OUTPUT/../usr).
	make -s -C "$tree" O="$out/hdr" ARCH=x86 INSTALL_HDR_PATH="$out/usr" headers_install >>"$out/build.log" 2>&1 ||
		die "headers_install failed; log: $out/build.log"
	make_view "$out/view"
	local sb=$out/view/tools/testing/selftests/bpf helpers=("${BPF_HELPERS[@]}")
	# xdp_synproxy's BPF program reads struct nf_conn: against a kernel
	# without conntrack it does not compile, and with it test_progs would
	# not link. Leave it out, and tell the guest why (bpf/NOT_BUILT).
	: >"$out/bpf/NOT_BUILT"
	# grep reads it all: with -q it would stop at the first match, and
	# pipefail would take bpftool's SIGPIPE for "no conntrack".
	if ! bpftool btf dump file "$bdir/vmlinux" format raw | grep "STRUCT 'nf_conn' " >/dev/null; then
		rm -f "$sb/prog_tests/xdp_synproxy.c" "$sb/progs/xdp_synproxy_kern.c"
		helpers=("${helpers[@]/xdp_synproxy/}")
		echo "xdp_synproxy: the kernel has no conntrack (CONFIG_NF_CONNTRACK): not built" >>"$out/bpf/NOT_BUILT"
	fi
	if ! make -C "$sb" -j"$jobs" O="$bdir" OUTPUT="$out/bpf" VMLINUX_BTF="$bdir/vmlinux" \
		TRUNNER_EXTRA_FILES= LINKED_SKELS= LSKELS= LSKELS_EXTRA= \
		test_progs ${helpers[@]} >>"$out/build.log" 2>&1; then
		grep -E 'error' "$out/build.log" | head -20 | sed 's/^/vmtest:   /' >&2
		die "the selftests/bpf build failed; log: $out/build.log"
	fi
	(cd "$sd/bpf" && cp "${BPF_SCRIPTS[@]}" "$out/bpf/")

	# net/: the scripts, their helpers and the XDP program they attach.
	(cd "$sd/net" && cp "${NET_SCRIPTS[@]}" "$out/net/")
	local cc=(gcc -O2 -Wall -I"$sd" -isystem "$out/usr/include")
	{
		"${cc[@]}" -o "$out/net/udpgso_bench_tx" "$sd/net/udpgso_bench_tx.c" &&
			"${cc[@]}" -o "$out/net/udpgso_bench_rx" "$sd/net/udpgso_bench_rx.c" &&
			"${cc[@]}" -o "$out/net/tun" "$sd/net/tun.c" &&
			"${cc[@]}" -o "$out/net/tap" "$sd/net/tap.c" &&
			clang -O2 -g --target=bpf -I"$out/bpf/tools/include" -I"$out/usr/include" \
				-idirafter /usr/include/"$(gcc -print-multiarch)" -idirafter /usr/include \
				-c "$sd/net/xdp_dummy.bpf.c" -o "$out/net/xdp_dummy.bpf.o"
	} >>"$out/build.log" 2>&1 || die "the net/ selftests did not build; log: $out/build.log"

	# tools/virtio's vhost_net_test, with its Makefile's flags. As shipped it
	# does not build outside the kernel: compiler_types.h includes a header
	# tools/include lacks (the shim points at the kernel's own), and
	# virtio_ring.c ends in MODULE_DESCRIPTION and uses data_race, which the
	# tools headers do not define.
	ln -sfn "$tree/include/linux/compiler-context-analysis.h" "$out/virtio/shim/linux/"
	local vcc=(gcc -g -O2 -Wall -Wno-maybe-uninitialized -Wno-pointer-sign -fno-strict-overflow
		-fno-strict-aliasing -fno-common -U_FORTIFY_SOURCE -pthread
		-I"$tree/tools/virtio" -I"$tree/tools/include" -I"$out/usr/include" -idirafter "$out/virtio/shim"
		-include "$tree/include/linux/kconfig.h" '-DMODULE_DESCRIPTION(x)=' '-Ddata_race(x)=(x)')
	{
		"${vcc[@]}" -c "$tree/drivers/virtio/virtio_ring.c" -o "$out/virtio/virtio_ring.o" &&
			"${vcc[@]}" -c "$tree/tools/virtio/vhost_net_test.c" -o "$out/virtio/vhost_net_test.o" &&
			gcc -pthread -o "$out/virtio/vhost_net_test" "$out/virtio/virtio_ring.o" "$out/virtio/vhost_net_test.o"
	} >>"$out/build.log" 2>&1 || die "tools/virtio/vhost_net_test did not build; log: $out/build.log"

	echo "$key" >"$out/.xdplab-key"
	log "built the selftests in $((SECONDS - t0)) s"
}
mkdir -p "$cache/kselftest"
# The shared worktree must hold this selection while its files are read.
with_lock "$cache/build/$treekey.lock" build
echo "$out"
