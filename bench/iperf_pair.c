// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The topology veth-tcp, veth-flip and small-udp measure through: a veth
 * pair across two namespaces, an iperf3 server in the second, both ends'
 * MTU as the last point set it.
 */
#include <stdio.h>

#include "bench.h"

int iperf_pair_setup(struct iperf_pair *ip, struct scen *s, const char *tag, int id, int mtu,
		     bool serve)
{
	ip->server_up = false;
	ip->server.pid = -1;
	ip->mtu = mtu;
	if (veth_pair_add(&ip->vp, tag, id, mtu)) {
		snprintf(s->error, sizeof(s->error), "cannot make the veth pair (run with -v)");
		return -1;
	}
	if (!serve)
		return 0;
	if (iperf3_server(&ip->server, ip->vp.ns[1], bench.port, s->error, sizeof(s->error)))
		return -1;
	ip->server_up = true;
	return 0;
}

int iperf_pair_serve(struct iperf_pair *ip, struct scen *s, struct point *p)
{
	if (ip->server_up)
		return 0;
	if (iperf3_server(&ip->server, ip->vp.ns[1], bench.port, s->error, sizeof(s->error))) {
		point_err(p, "%s", s->error);
		return -1;
	}
	ip->server_up = true;
	return 0;
}

void iperf_pair_server_lost(struct iperf_pair *ip)
{
	child_close(&ip->server);
	ip->server_up = false;
}

int iperf_pair_mtu(struct iperf_pair *ip, struct point *p, int mtu)
{
	struct veth_pair *vp = &ip->vp;

	if (mtu != ip->mtu) {
		if (sh("ip -n %s link set dev %s mtu %d", vp->ns[0], vp->ifname[0], mtu) ||
		    sh("ip -n %s link set dev %s mtu %d", vp->ns[1], vp->ifname[1], mtu)) {
			point_err(p, "cannot set MTU %d", mtu);
			return -1;
		}
		ip->mtu = mtu;
	}
	point_cmd(p, "ip -n %s link set dev %s mtu %d", vp->ns[0], vp->ifname[0], mtu);
	point_cmd(p, "ip -n %s link set dev %s mtu %d", vp->ns[1], vp->ifname[1], mtu);
	return 0;
}

void iperf_pair_teardown(struct iperf_pair *ip)
{
	if (ip->server.pid > 0)
		child_stop(&ip->server);
	child_close(&ip->server);
	ip->server_up = false;
	veth_pair_del(&ip->vp);
}
