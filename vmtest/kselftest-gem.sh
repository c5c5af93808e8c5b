#!/bin/bash
# (/bin/bash: the board's userland has no /usr/bin/env.)
# In the GEM board's guest (ARCH=arm64): run the kernel's XDP selftests that
# apply to a real NIC, against the GEM and its peer on the host's tap, and
# print one line each, as vmtest/kselftest-guest.sh does on x86,
#
#   KSELFTEST PASS|FAIL|SKIP|FLAKY <name>[: <reason>]
#
# and a closing "N passed, N failed, N skipped, N flaky" (verdicts, reruns
# of a failing test and KSELFTEST_REPEAT: vmtest/kselftest-lib.sh). Exit
# status 1 when a test failed (0 with KSELFTEST_ALWAYS_ZERO=1: the host
# judges the result lines).
#
#   vmtest/kselftest-gem.sh DIR [GLOB...]
#
# DIR is what vmtest/kselftest-gem-build.sh built for the guest (boot.sh put
# it into the initramfs). GLOBs select tests by name (bash patterns):
#   bpf/xdp_features:<FEATURE>  XDP_PASS, XDP_DROP, XDP_ABORTED, XDP_TX,
#                               XDP_REDIRECT, XDP_NDO_XMIT: the DUT on the
#                               GEM, the tester on the host's tap
#   bpf/xdping:skb, bpf/xdping:native   xdping's client on the GEM (-S, -N):
#                               ten echo replies from the peer's kernel
#                               turned into requests by XDP_TX
#
# Verdicts. xdp_features: PASS when what the tester observed agrees with what
# the GEM advertises (both, or neither: a feature not advertised and not
# done is what the test asks for), FAIL when they disagree or the tester
# gave no verdict. Where macb refuses a native XDP program at all (stock
# 6.12), every native test SKIPs with the kernel's reason: the test has
# nothing to observe, and a PASS would count features nobody exercised.
set -uo pipefail

dir=${1:-}
[ -n "$dir" ] && [ -d "$dir" ] || {
	echo "kselftest-gem: no test directory '${dir}'; usage: vmtest/kselftest-gem.sh DIR [GLOB...] (make kselftest ARCH=arm64 builds and boots it)" >&2
	exit 2
}
shift
globs=("$@")
[ ${#globs[@]} -gt 0 ] || globs=('*')
gem=${XDPLAB_GEM_IF:-} peer=${XDPLAB_GEM_PEER:-} addr=${XDPLAB_GEM_ADDR%/*} tester=${XDPLAB_GEM_TESTER:-}
[ -n "$gem" ] && [ -n "$peer" ] || {
	echo "kselftest-gem: no GEM in this guest (XDPLAB_GEM_IF, XDPLAB_GEM_PEER unset); it runs on the board: make kselftest ARCH=arm64" >&2
	exit 2
}
TIMEOUT=${KSELFTEST_TIMEOUT:-300}
# xdp_features' DUT listens for its tester on port 12345 (xdp_features.h),
# on IPv6's any address. Read from /proc: the board's ss lacks a library.
dut_listens() { grep -qE '^ *[0-9]+: 0{32}:3039 0{32}:0000 0A ' /proc/net/tcp6; }

logs=/tmp/kselftest-gem
rm -rf "$logs"
mkdir -p "$logs" || exit 1

# shellcheck source=vmtest/kselftest-lib.sh
. "$(dirname "$0")/kselftest-lib.sh"
# xdp_features colours its verdict (busybox sed knows no \x1b: a real ESC).
nocolor() { sed "s/$(printf '\033')\\[[0-9;]*m//g"; }
# No program of a test may stay on the GEM for the next one.
xdp_off() { ip link set dev "$gem" xdp off 2>/dev/null; ip link set dev "$gem" xdpgeneric off 2>/dev/null; }

# Does macb take a native XDP program at all? Stock 6.12 has no ndo_bpf and
# the kernel says so; any other refusal is a failure of the driver.
native=yes native_why=""
probe_native() {
	local out
	if out=$(ip link set dev "$gem" xdpdrv obj "$dir/xdp_dummy.bpf.o" sec xdp 2>&1); then
		ip link set dev "$gem" xdpdrv off
		echo "kselftest-gem: $gem takes native XDP programs"
		return
	fi
	native_why=$(echo "$out" | grep -m1 -iE 'error|support' || echo "$out" | head -n 1)
	if echo "$out" | grep -q 'does not support XDP in native mode'; then
		native=no
	else
		native=broken
	fi
	echo "kselftest-gem: $gem refuses a native XDP program: $native_why"
}

# xdp_features FEATURE: the DUT here, the tester on the host (gem-tester.sh),
# which the guest asks for once the DUT listens.
xdp_features() { try "bpf/xdp_features:$1" xdp_features_once "$1"; }
xdp_features_once() {
	local f=$1 dlog=$logs/xdp_features_$1.dut tlog=$logs/xdp_features_$1.tester
	local dut line rc why
	case "$native" in
	no) result SKIP "$gem has no native XDP ($native_why): nothing for the tester to observe"; return ;;
	broken) result FAIL "$gem refuses a native XDP program: $native_why"; return ;;
	esac
	[ -n "$tester" ] || { result FAIL "no tester service on the host (XDPLAB_GEM_TESTER unset; boot.sh's VMTEST_GEM_TESTER)"; return; }
	(cd "$dir" && exec ./xdp_features -f "$f" -D "::ffff:$addr" -T "::ffff:$peer" "$gem") >"$dlog" 2>&1 </dev/null &
	dut=$!
	for _ in $(seq 300); do
		dut_listens && break
		kill -0 "$dut" 2>/dev/null || break
		sleep 0.1
	done
	if ! dut_listens; then
		kill "$dut" 2>/dev/null
		wait "$dut"
		result FAIL "the DUT did not listen on :12345 within 30 s: $(grep -m1 -iE 'fail|error' "$dlog")"
		show_log "$dlog"
		xdp_off
		return
	fi
	timeout "$TIMEOUT" bash -c 'exec 3<>"/dev/tcp/$1/$2" && echo "xdp_features $3" >&3 && cat <&3' \
		_ "${tester%:*}" "${tester##*:}" "$f" >"$tlog" 2>&1
	# The tester's CMD_STOP ends the DUT; give it 20 s, then end it.
	for _ in $(seq 200); do kill -0 "$dut" 2>/dev/null || break; sleep 0.1; done
	kill "$dut" 2>/dev/null && echo "kselftest-gem: the DUT did not stop after the test; killed" >>"$dlog"
	wait "$dut"
	xdp_off
	line=$(nocolor <"$tlog" | grep -oE 'Feature [A-Z_]+: \[(NOT )?DETECTED\]\[(NOT )?ADVERTISED\]' | tail -n 1)
	rc=$(grep -oE 'XDPLAB-TESTER-EXIT=[0-9]+' "$tlog" | cut -d= -f2)
	case "$line" in
	*"[DETECTED][ADVERTISED]") result PASS "advertised and detected" ;;
	*"[NOT DETECTED][NOT ADVERTISED]") result PASS "neither advertised nor detected" ;;
	*"[NOT DETECTED][ADVERTISED]") result FAIL "advertised, not detected"; show_log "$tlog"; show_log "$dlog" ;;
	*"[DETECTED][NOT ADVERTISED]") result FAIL "detected, not advertised"; show_log "$tlog"; show_log "$dlog" ;;
	*)
		why=$( (nocolor <"$tlog"; cat "$dlog") | grep -m1 -iE 'fail|error|refused|timed out')
		result FAIL "no verdict from the tester (exit ${rc:-none: no answer from $tester})${why:+; $why}"
		show_log "$tlog"
		show_log "$dlog" ;;
	esac
}

# xdping MODE FLAG: the client on the GEM pings the peer ten times; its XDP
# program turns the last reply back into a request (XDP_TX) ten times and
# records each round trip. It fails unless all ten came back.
xdping() { try "bpf/xdping:$1" xdping_once "$@"; }
xdping_once() {
	local mode=$1 flag=$2 log=$logs/xdping_$1.log rc n
	if [ "$mode" = native ]; then
		case "$native" in
		no) result SKIP "$gem has no native XDP ($native_why)"; return ;;
		broken) result FAIL "$gem refuses a native XDP program: $native_why"; return ;;
		esac
	fi
	(cd "$dir" && timeout "$TIMEOUT" ./xdping -I "$gem" "$flag" -c 10 "$peer") >"$log" 2>&1 </dev/null
	rc=$?
	xdp_off
	n=$(sed -n '/^XDP RTT data/,$p' "$log" | grep -c 'bytes from')
	case $rc in
	0) result PASS "$n of 10 round trips by XDP_TX" ;;
	124 | 143) result FAIL "timed out after ${TIMEOUT}s"; show_log "$log" ;;
	*) result FAIL "exit $rc, $n of 10 round trips by XDP_TX: $(grep -m1 -iE 'expected|fail|error|could not' "$log")"; show_log "$log" ;;
	esac
}

echo "kselftest-gem: $(uname -r), GEM $gem ($addr) against $peer, tests from $dir"
probe_native
for f in XDP_PASS XDP_DROP XDP_ABORTED XDP_TX XDP_REDIRECT XDP_NDO_XMIT; do
	xdp_features "$f"
done
xdping skb -S
xdping native -N

# A program left on the GEM would change the next run's verdicts.
if ip -d link show dev "$gem" | grep -q 'prog/xdp'; then
	echo "kselftest-gem: an XDP program is left on $gem: $(ip -d link show dev "$gem" | grep 'prog/xdp')"
else
	echo "kselftest-gem: no XDP program left on $gem"
fi
finish kselftest-gem
