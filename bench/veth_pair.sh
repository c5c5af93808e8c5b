# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Sourced by the veth_*.sh guest scripts: the pair they measure through,
# veth0 198.18.1.1/24 in namespace $A and veth1 198.18.1.2/24 in $B, with
# lo up in both, and its removal. The C bench makes the same pair with
# lib/netns.c; these scripts run bare in the guest without it.
#
#   A=xa B=xb; . bench/veth_pair.sh; veth_pair_up 1500; ...; veth_pair_down

veth_pair_up() {
	ip netns add "$A" && ip netns add "$B" &&
	ip -n "$A" link add veth0 type veth peer name veth1 netns "$B" &&
	ip -n "$A" addr add 198.18.1.1/24 dev veth0 &&
	ip -n "$B" addr add 198.18.1.2/24 dev veth1 &&
	ip -n "$A" link set veth0 mtu "${1:-1500}" up &&
	ip -n "$B" link set veth1 mtu "${1:-1500}" up &&
	ip -n "$A" link set lo up && ip -n "$B" link set lo up
}

veth_pair_down() {
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
}
