#!/usr/bin/env bash
# The GEM board's xdp_features tester, one request per connection: the host
# end of the kernel's xdp_features test, whose device under test runs in the
# guest on the GEM (vmtest/kselftest-gem.sh). vmtest/boot.sh runs it under
# socat in the board's network namespace, where the tap is; stdin and stdout
# are the guest's TCP connection.
#
#   vmtest/gem-tester.sh TESTER TAP PEER_ADDR GUEST_ADDR
#
# The guest sends one line, "xdp_features <FEATURE>", once its DUT listens;
# this runs the tester for that feature on TAP (native XDP on the tap) and
# sends back the tester's output and a last line "XDPLAB-TESTER-EXIT=<n>".
# A request it does not know gets one "error:" line and exit status 2.
set -euo pipefail

[ $# -eq 4 ] || { echo "error: usage: vmtest/gem-tester.sh TESTER TAP PEER_ADDR GUEST_ADDR"; exit 2; }
tester=$1 tap=$2 peer=$3 guest=$4
# The DUT sends echoes back at most 10 s after the tester starts; under TCG
# the control channel's replies can take seconds each.
TIMEOUT=${GEM_TESTER_TIMEOUT:-120}

# Nothing is left on the tap, even when the tester was killed mid-run: the
# next feature's tester attaches with XDP_FLAGS_UPDATE_IF_NOEXIST.
trap 'ip link set dev "$tap" xdpdrv off 2>/dev/null || true' EXIT

read -r -t 30 what feature || { echo "error: no request within 30 s"; exit 2; }
case "$what $feature" in
"xdp_features "XDP_PASS | "xdp_features "XDP_DROP | "xdp_features "XDP_ABORTED | \
	"xdp_features "XDP_TX | "xdp_features "XDP_REDIRECT | "xdp_features "XDP_NDO_XMIT) ;;
*)
	echo "error: unknown request '$what $feature'; expected 'xdp_features XDP_PASS|XDP_DROP|XDP_ABORTED|XDP_TX|XDP_REDIRECT|XDP_NDO_XMIT'"
	exit 2 ;;
esac
# IPv4-mapped IPv6: xdp_features speaks AF_INET6 only, the board is IPv4.
set +e
timeout -k 5 "$TIMEOUT" "$tester" -t -f "$feature" -D "::ffff:$guest" -C "::ffff:$guest" \
	-T "::ffff:$peer" "$tap" 2>&1
rc=$?
set -e
echo "XDPLAB-TESTER-EXIT=$rc"
