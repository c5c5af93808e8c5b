#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Runs the kernel's own tools/testing/selftests/net/veth.sh against the
# running kernel: builds what it needs (xdp_dummy.bpf.o, udpgso_bench_tx,
# udpgso_bench_rx) from that kernel tree into a temporary directory, runs
# it there and removes the directory again.
#
#   selftests/kselftest_veth.sh [KSRC]
#
# KSRC is the kernel source tree the running kernel was built from
# (default: $XDPLAB_KSRC, else the vmtest worktree
# ~/.cache/xdplab/trees/*-work). Exit status: veth.sh's own (0 = every check
# passed), 4 = skipped (tree or tool missing; the reason is the last line).
set -uo pipefail

skip() { echo "kselftest_veth: skip: $*"; exit 4; }

ksrc=${1:-${XDPLAB_KSRC:-}}
if [ -z "$ksrc" ]; then
	for d in "${XDPLAB_CACHE:-$HOME/.cache/xdplab}"/trees/*-work; do
		[ -d "$d" ] && ksrc=$d
	done
fi
sd=$ksrc/tools/testing/selftests
[ -n "$ksrc" ] && [ -f "$sd/net/veth.sh" ] ||
	skip "no kernel tree with tools/testing/selftests/net/veth.sh (give KSRC or set XDPLAB_KSRC)"
for t in clang gcc ethtool ip; do
	command -v $t >/dev/null || skip "$t not found"
done

dir=$(mktemp -d /tmp/kselftest-veth.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
multiarch=$(gcc -print-multiarch 2>/dev/null)
cp "$sd/net/veth.sh" "$dir/" &&
	clang -O2 -g -target bpf ${multiarch:+-I/usr/include/$multiarch} \
		-c "$sd/net/xdp_dummy.bpf.c" -o "$dir/xdp_dummy.bpf.o" &&
	gcc -O2 -I"$sd" -o "$dir/udpgso_bench_tx" "$sd/net/udpgso_bench_tx.c" &&
	gcc -O2 -I"$sd" -o "$dir/udpgso_bench_rx" "$sd/net/udpgso_bench_rx.c" ||
	{ echo "kselftest_veth: could not build veth.sh's helpers from $sd"; exit 1; }

echo "kselftest_veth: $sd/net/veth.sh on $(uname -r)"
cd "$dir" && sh ./veth.sh 2>&1 | tee "$dir/out"
rc=${PIPESTATUS[0]}
echo "kselftest_veth: veth.sh: $(grep -c ' ok *$' "$dir/out") checks ok," \
	"$(grep -ci 'fail *$' "$dir/out") failed, exit status $rc"
exit $rc
