// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tap-fwd (seed 001): the seed's topology with the project's own parts.
 *
 *   ns A: iperf3 -c ── veth0 ══ veth1 (ns F: the forwarder, bench/fwd.c:
 *         AF_PACKET TPACKET_V2 ring ─▶ lib/vhost_net.c) ─▶ tap (ns B) ─▶ iperf3 -s
 *         ACKs: tap read() ─▶ AF_PACKET send on veth1 ─▶ veth0
 *
 * One TCP stream at MTU 1500. veth0 checksums and segments in software
 * (tx off, tso off), so what the forwarder reads are MTU-sized frames
 * with complete checksums, as from a NIC. Rows: IFF_NAPI off and on, with
 * no XDP program on the tap, `xdplab pass --no-frags` or `--frags`. The
 * GRO columns come from namespace B's IP counters: Ip InReceives counts
 * the skbs that reach IP, IpExt In*Pkts the segments in them, so their
 * ratio is the frames GRO merged into one skb (1: no merging).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_tun.h>

#include "bench.h"
#include "fwd.h"
#include "netns.h"
#include "vhost_net.h"

enum { M_GBPS, M_TAP_KPPS, M_SKB_KPPS, M_MERGE, M_ACK_KPPS, M_KICK, M_DROPS, M_TAP_DROPS,
       M_BACKLOG_DROPS, M_ACK_DROPS, M_RETR, M_RTO, M_RTT,
       CPU_SPLIT_SLOTS, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_GBPS] = { "gbps", "Gbit/s (iperf3 sum_received)" },
	[M_TAP_KPPS] = { "tap_kpps", "thousand frames/s into the tap (its rx_packets)" },
	[M_SKB_KPPS] = { "ip_skb_kpps", "thousand skbs/s reaching IP in namespace B (Ip InReceives)" },
	[M_MERGE] = { "gro_segs_per_skb", "segments per skb at IP in namespace B "
					  "(IpExt In*Pkts / Ip InReceives): GRO's merging" },
	[M_ACK_KPPS] = { "ack_kpps", "thousand frames/s the tap sent back (ACKs)" },
	[M_KICK] = { "frames_per_kick", "frames posted to vhost-net per kick (a burst)" },
	[M_DROPS] = { "ring_drops", "frames the forwarder's AF_PACKET ring had no room for" },
	[M_TAP_DROPS] = { "tap_drops", "frames the tap dropped (its rx_dropped)" },
	[M_BACKLOG_DROPS] = { "backlog_drops", "frames dropped for a full per-CPU backlog "
					     "(/proc/net/softnet_stat, machine-wide)" },
	[M_ACK_DROPS] = { "ack_drops", "frames the tap dropped on the way back (tx_dropped) or "
				     "the forwarder could not send" },
	[M_RETR] = { "retransmits", "TCP retransmits (iperf3 sum_sent)" },
	[M_RTO] = { "rto", "the sender's retransmission timeouts (TcpExtTCPTimeouts in namespace A)" },
	[M_RTT] = { "mean_rtt_us", "the sender's mean RTT, µs (iperf3)" },
	CPU_SPLIT_METRICS,
};

static const struct column cols[] = {
	{ M_GBPS, "Gbit/s", "%.2f" },
	{ M_TAP_KPPS, "tap kpps", "%.0f" },
	{ M_SKB_KPPS, "IP skb kpps", "%.0f" },
	{ M_MERGE, "GRO segs/skb", "%.2f" },
	{ M_ACK_KPPS, "ACK kpps", "%.1f" },
	{ M_KICK, "frames/kick", "%.1f" },
	{ M_DROPS, "ring drops", "%.0f" },
	{ M_TAP_DROPS, "tap drops", "%.0f" },
	{ M_BACKLOG_DROPS, "backlog drops", "%.0f" },
	{ M_ACK_DROPS, "ACK drops", "%.0f" },
	{ M_RETR, "retr", "%.0f" },
	{ M_RTO, "RTOs", "%.0f" },
	{ M_RTT, "RTT µs", "%.0f" },
	{ M_SYS, "sys %", "%.0f" },
	{ M_SOFTIRQ, "softirq %", "%.0f" },
	{ M_IDLE, "idle %", "%.0f" },
};

enum { K_NAPI, K_PROG };	/* as scen_plan_napi() sets them */
enum { PROG_NONE, PROG_PASS, PROG_FRAGS };
static const char *const prog_label[] = { "no XDP", "xdp_pass", "xdp_pass_frags" };
static const char *const prog_id[] = { "none", "pass", "pass-frags" };
#define TAP "fwtap0"
#define NET_ID 8	/* 198.18.8.0/24: veth0 .1, the tap .2 */

static struct veth_pair vp;	/* ns[0]: A, the client; ns[1]: F, the forwarder */
static char nsb[NETNS_NAME_MAX];
static char veth0_mac[18];
static struct tap_dev tap = { .fd = -1 };
static struct vhost_net vn = { .fd = -1, .kick = -1, .call = -1 };
static struct fwd fw = { .pfd = -1 };
static struct child server;
static bool server_up;
static int tap_napi = -1;
static char novhost[200];

static void plan(struct scen *s)
{
	scen_plan_napi(s, 3, prog_label, prog_id);
}

static void tap_close(void)
{
	fwd_close(&fw);
	vhost_net_close(&vn);
	tap_dev_close(&tap);
	tap_napi = -1;
}

/* The tap in B with vhost-net as its feeder and the forwarder on veth1. */
static int tap_open(struct scen *s, bool napi)
{
	char tapmac[18];

	tap_close();
	if (tap_dev_open(&tap, nsb, TAP, IFF_VNET_HDR | (napi ? IFF_NAPI : 0), 1500, vp.ip4[1],
			 vp.ip4[0], veth0_mac, s->error, sizeof(s->error)))
		return -1;
	mac_str(tapmac, tap.mac);
	if (vhost_net_tap_prepare(tap.fd) || vhost_net_open(&vn, tap.fd, 256, 2048)) {
		snprintf(s->error, sizeof(s->error), "vhost-net on %s: %s", TAP, strerror(errno));
		tap_close();
		return -1;
	}
	if (sh("ip -n %s neigh replace %s lladdr %s dev %s", vp.ns[0], vp.ip4[1], tapmac,
	       vp.ifname[0])) {
		snprintf(s->error, sizeof(s->error), "cannot point %s at the tap's MAC", vp.ip4[1]);
		tap_close();
		return -1;
	}
	if (fwd_open(&fw, vp.ns[1], vp.ifname[1], tap.fd, &vn, s->error, sizeof(s->error))) {
		tap_close();
		return -1;
	}
	tap_napi = napi;
	return 0;
}

static int setup(struct scen *s)
{
	const char *why = vhost_net_unavailable();

	server_up = false;
	server.pid = -1;
	tap_napi = -1;
	novhost[0] = '\0';
	if (why) {
		/* Every row needs vhost-net: the rows say so, nothing is set up. */
		snprintf(novhost, sizeof(novhost), "%s", why);
		snprintf(s->note, sizeof(s->note), "Not measured: %s.", why);
		return 0;
	}
	if (veth_pair_add(&vp, "fwd", NET_ID, 1500)) {
		snprintf(s->error, sizeof(s->error), "cannot make the veth pair (run with -v)");
		return -1;
	}
	if (scen_netns_add(s, "fwdtap", nsb))
		return -1;
	mac_str(veth0_mac, vp.mac[0]);
	/* veth1 is the forwarder's wire: no address of its own. The client
	 * side sends what a NIC would put on the wire: MTU-sized frames with
	 * their checksums filled in.
	 */
	if (sh("ip -n %s addr flush dev %s", vp.ns[1], vp.ifname[1]) ||
	    sh("ip netns exec %s ethtool -K %s tx off tso off", vp.ns[0], vp.ifname[0]) ||
	    sh("ip -n %s link set lo up", nsb)) {
		snprintf(s->error, sizeof(s->error), "cannot set up %s / %s", vp.ifname[0],
			 vp.ifname[1]);
		return -1;
	}
	if (tap_open(s, false))
		return -1;
	if (iperf3_server(&server, nsb, bench.port, s->error, sizeof(s->error)))
		return -1;
	server_up = true;
	snprintf(s->note, sizeof(s->note),
		 "Set-up: veth pair %s (%s, iperf3 -c) / %s (%s, no address, the forwarder's "
		 "AF_PACKET TPACKET_V2 ring of 1024 frames); `ip netns "
		 "exec %s ethtool -K %s tx off tso off`; tap " TAP " in %s (IFF_TAP|IFF_NO_PI|"
		 "IFF_VNET_HDR[|IFF_NAPI]), %s/24, fed by lib/vhost_net.c (TX ring of 256, a "
		 "kick per burst of at most 64); static neighbours both ways; iperf3 -s in %s.",
		 vp.ifname[0], vp.ns[0], vp.ifname[1], vp.ns[1], vp.ns[0], vp.ifname[0], nsb,
		 vp.ip4[1], nsb);
	return 0;
}

/* Ip InReceives (skbs) and the segments in them (IpExt In*Pkts, which
 * count gso_segs) in namespace ns.
 */
static int ip_counts(const char *ns, double *skbs, double *segs)
{
	static const char *const ect[] = { "InNoECTPkts", "InECT1Pkts", "InECT0Pkts", "InCEPkts" };
	char buf[8192];

	if (sh_out(buf, sizeof(buf), "ip netns exec %s nstat -asz -j Ip* 2>/dev/null", ns))
		return -1;
	*skbs = json_num(buf, NULL, "IpInReceives");
	*segs = 0;
	for (int i = 0; i < 4; i++) {
		char key[32];
		double v;

		snprintf(key, sizeof(key), "IpExt%s", ect[i]);
		v = json_num(buf, NULL, key);
		if (!isnan(v))
			*segs += v;
	}
	return isnan(*skbs) ? -1 : 0;
}

/* One nstat counter (key, e.g. "TcpExtTCPTimeouts") of namespace ns. */
static double nstat_get(const char *ns, const char *key)
{
	char buf[8192];

	if (sh_out(buf, sizeof(buf), "ip netns exec %s nstat -asz -j %s 2>/dev/null", ns, key))
		return NAN;
	return json_num(buf, NULL, key);
}

/* The tap's tx_dropped: what the stack of B sent that the tap let go. */
static double tap_tx_dropped(void)
{
	char buf[4096];

	if (sh_out(buf, sizeof(buf), "ip -n %s -s -j link show dev %s", nsb, TAP))
		return NAN;
	return json_num(buf, "tx", "dropped");
}

/* Frames dropped for a full backlog, all CPUs (softnet_stat's second column). */
static double backlog_drops(void)
{
	unsigned int processed, dropped;
	double sum = 0;
	char line[256];
	FILE *f = fopen("/proc/net/softnet_stat", "re");

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%x %x", &processed, &dropped) == 2)
			sum += dropped;
	fclose(f);
	return sum;
}

static void sample(struct scen *s, struct point *p, int round)
{
	int napi = p->knob[K_NAPI], prog = p->knob[K_PROG];
	char secs[16], port[16];
	unsigned long long tap0, tap1, tapdr0, tapdr1;
	double skb0, seg0, skb1, seg1, gbps, dt, bl0, rto0, txd0;
	struct sample sm;

	sample_init(&sm);
	if (novhost[0]) {
		point_skip(p, "%s", novhost);
		return;
	}
	if (napi != tap_napi && tap_open(s, napi)) {
		point_take_error(p, s);
		return;
	}
	if (!server_up) {
		if (iperf3_server(&server, nsb, bench.port, s->error, sizeof(s->error))) {
			point_take_error(p, s);
			return;
		}
		server_up = true;
	}
	point_cmd(p, "xdplab-bench: tap " TAP " in %s (IFF_TAP|IFF_NO_PI|IFF_VNET_HDR%s), "
		  "vhost-net fed from the AF_PACKET ring on %s in %s", nsb,
		  napi ? "|IFF_NAPI" : "", vp.ifname[1], vp.ns[1]);
	if (prog != PROG_NONE) {
		char *args[] = { "pass", TAP, prog == PROG_FRAGS ? "--frags" : "--no-frags", "-q",
				 "--json", NULL };

		if (sample_xdp(&sm, p, nsb, TAP, args))
			return;
	}
	if (fwd_start(&fw)) {
		point_err(p, "cannot start the forwarder thread");
		goto out;
	}
	fwd_ring_drops(&fw);
	bl0 = backlog_drops();
	rto0 = nstat_get(vp.ns[0], "TcpExtTCPTimeouts");
	txd0 = tap_tx_dropped();
	if (link_rx(nsb, TAP, &tap0, &tapdr0) || ip_counts(nsb, &skb0, &seg0)) {
		point_err(p, "cannot read %s's counters", TAP);
		goto out;
	}
	snprintf(secs, sizeof(secs), "%d", scen_secs(s));
	snprintf(port, sizeof(port), "%d", bench.port);
	dt = now();
	if (sample_load(&sm, s, p, vp.ns[0], (char *const[]){ "iperf3", "-c", vp.ip4[1], "-p",
							     port, "-t", secs, "-J", NULL }))
		goto out;
	dt = now() - dt;
	fwd_stop(&fw);
	if (link_rx(nsb, TAP, &tap1, &tapdr1) || ip_counts(nsb, &skb1, &seg1)) {
		point_err(p, "cannot read %s's counters", TAP);
		goto out;
	}
	gbps = json_num(sm.out, "sum_received", "bits_per_second") / 1e9;
	if (sm.status || isnan(gbps) || gbps <= 0) {
		/* A server left by a failed client refuses the next one. */
		sample_iperf_error(&sm, p);
		child_close(&server);
		server_up = false;
		goto out;
	}
	if (fw.err)
		point_err(p, "the forwarder stopped: %s", strerror(fw.err));
	if (prog != PROG_NONE && isnan(sample_xdp_count(&sm, p, "pass")))
		goto out;
	point_set(p, round, M_GBPS, gbps);
	point_set(p, round, M_TAP_KPPS, (tap1 - tap0) / dt / 1e3);
	point_set(p, round, M_SKB_KPPS, (skb1 - skb0) / dt / 1e3);
	if (skb1 > skb0)
		point_set(p, round, M_MERGE, (seg1 - seg0) / (skb1 - skb0));
	point_set(p, round, M_ACK_KPPS, fw.to_wire / dt / 1e3);
	if (fw.kicks)
		point_set(p, round, M_KICK, (double)fw.to_tap / fw.kicks);
	point_set(p, round, M_DROPS, fwd_ring_drops(&fw));
	point_set(p, round, M_TAP_DROPS, tapdr1 - tapdr0);
	point_set(p, round, M_BACKLOG_DROPS, backlog_drops() - bl0);
	point_set(p, round, M_ACK_DROPS, tap_tx_dropped() - txd0 + fw.send_fail);
	point_set(p, round, M_RTO, nstat_get(vp.ns[0], "TcpExtTCPTimeouts") - rto0);
	point_set(p, round, M_RETR, json_num(sm.out, "sum_sent", "retransmits"));
	point_set(p, round, M_RTT, json_num(sm.out, NULL, "mean_rtt"));
	point_set_cpu(p, round, M_USER, &sm.cs);
out:
	fwd_stop(&fw);
	sample_done(&sm);
}

static void teardown(struct scen *s)
{
	(void)s;
	if (server.pid > 0)
		child_stop(&server);
	child_close(&server);
	server_up = false;
	tap_close();
	veth_pair_del(&vp);
}

const struct scenario scen_tap_fwd = {
	.name = "tap-fwd",
	.title = "iperf3 TCP through a user-space forwarder into a vhost-net-fed tap, IFF_NAPI off/on",
	.seed = SEED_001_TAP "iperf3 from a NIC through "
		"testpmd into a tap over vhost-net's batched path: 4.63 -> 9.28 Gbit/s once the "
		"batched XDP buffs got NAPI, and so GRO. Here: veth in place of the NIC, an "
		"AF_PACKET TPACKET_V2 forwarder in place of testpmd, lib/vhost_net.c in place "
		"of virtio-user. CPU is machine-wide.",
	.needs = "iperf3 ethtool ss nstat",
	SCEN_TABLE(metrics, cols),
	.ratio_head = { "× no XDP", "× NAPI off" },
	.plot_ylabel = "Gbit/s, ratio",
	.duration = 5,
	.quick_duration = 1,
	SCEN_HOOKS,
};
