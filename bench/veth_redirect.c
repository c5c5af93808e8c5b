// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * veth-redirect (seed 003): the path of "net: veth: alloc skb in bulk for
 * ndo_xdp_xmit", with the live-frames generator in place of pktgen on a NIC:
 *
 *   ns gen:  xdplab trafficgen veth0 ──▶ veth1 (ns fwd, xdplab redirect-map
 *            veth1 rdr0) ──▶ rdr0 ══ veth1 (ns remote: xdplab rxq-info
 *            --action pass|drop, or no program and GRO on)
 *
 * Frames redirected into a veth reach its peer only through the peer's
 * NAPI, which runs when the peer has an XDP program or GRO on; the baseline
 * row is GRO on with no program, the kernel's own xdp_frame -> skb path.
 * "Received" is veth1's rx_packets (every frame its NAPI took off the
 * ring), the same counter in every row.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "netns.h"

enum { M_RX_MPPS, M_GEN_MPPS, M_DROP_MPPS, M_XDP_MPPS, CPU_SPLIT_SLOTS,
       M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_RX_MPPS] = { "rx_mpps", "million frames/s received by the remote veth1" },
	[M_GEN_MPPS] = { "gen_mpps", "million frames/s sent by the generator" },
	[M_DROP_MPPS] = { "ring_drop_mpps", "million frames/s the remote veth1 dropped (ring full)" },
	[M_XDP_MPPS] = { "xdp_mpps", "million frames/s counted by xdp_rxq_info" },
	CPU_SPLIT_METRICS,
};

static const struct column cols[] = {
	{ M_RX_MPPS, "received Mpps", "%.3f" },
	{ M_GEN_MPPS, "sent Mpps", "%.3f" },
	{ M_DROP_MPPS, "ring drops Mpps", "%.3f" },
	{ M_SYS, "sys %", "%.0f" },
	{ M_SOFTIRQ, "softirq %", "%.0f" },
	{ M_IDLE, "idle %", "%.0f" },
};

enum { K_SIZE, K_MODE };
enum { MODE_GRO, MODE_PASS, MODE_DROP };
static const char *const mode_label[] = { "no program, GRO on (baseline)",
					  "xdp_rxq_info XDP_PASS", "xdp_rxq_info XDP_DROP" };
static const char *const mode_id[] = { "gro-noprog", "rxq-pass", "rxq-drop" };
static const int sizes[] = { 64, 1500 };

/* a: generator -> forwarder; b: (moved into a's forwarder ns) -> remote */
static struct veth_pair a, b;
static struct child fwd;
static char remote_mac[18];
static int cur_gro;
#define FWD_OUT "rdr0"

static void plan(struct scen *s)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char group[32];
		int base = s->npts;

		snprintf(group, sizeof(group), "%d B", sizes[i]);
		for (int m = MODE_GRO; m <= MODE_DROP; m++) {
			struct point *p = scen_add(s, base, -1, group, mode_label[m], "%d/%s",
						   sizes[i], mode_id[m]);

			p->knob[K_SIZE] = sizes[i];
			p->knob[K_MODE] = m;
		}
	}
}

static int setup(struct scen *s)
{
	cur_gro = -1;
	fwd.pid = -1;
	if (veth_pair_add(&a, "rdra", 2, 0) || veth_pair_add(&b, "rdrb", 3, 0)) {
		snprintf(s->error, sizeof(s->error), "cannot make the veth pairs (run with -v)");
		return -1;
	}
	/* b's first end becomes the forwarder's way out. */
	if (sh("ip -n %s link set dev %s name %s", b.ns[0], b.ifname[0], FWD_OUT) ||
	    sh("ip -n %s link set dev %s netns %s", b.ns[0], FWD_OUT, a.ns[1]) ||
	    sh("ip -n %s link set dev %s up", a.ns[1], FWD_OUT)) {
		snprintf(s->error, sizeof(s->error), "cannot move %s into %s", FWD_OUT, a.ns[1]);
		return -1;
	}
	mac_str(remote_mac, b.mac[1]);
	{
		struct point dummy = {};
		char *args[] = { "redirect-map", a.ifname[1], FWD_OUT, "-q", "--json", NULL };

		if (xdplab_start(&fwd, &dummy, a.ns[1], a.ifname[1], args)) {
			snprintf(s->error, sizeof(s->error), "%s", dummy.error);
			return -1;
		}
		snprintf(s->note, sizeof(s->note),
			 "Forwarder, for every row: `%.400s`. Frames: UDP to %s (the remote veth1), "
			 "dst MAC %s; a passed frame meets no socket and is freed by the stack.",
			 fwd.cmd, b.ip4[1], remote_mac);
	}
	return 0;
}

static void sample(struct scen *s, struct point *p, int round)
{
	int size = p->knob[K_SIZE], mode = p->knob[K_MODE];
	unsigned long long rx0, rx1, dr0, dr1;
	struct sample sm;
	double gsecs, sent;

	sample_init(&sm);
	if (child_exited(&fwd)) {
		point_err(p, "the forwarder (xdplab redirect-map) has exited");
		return;
	}
	if (gro_set(p, b.ns[1], b.ifname[1], &cur_gro, mode == MODE_GRO))
		return;
	if (mode != MODE_GRO) {
		char *args[] = { "rxq-info", b.ifname[1], "--action",
				 mode == MODE_PASS ? "pass" : "drop", "-q", "--json", NULL };

		if (sample_xdp(&sm, p, b.ns[1], b.ifname[1], args))
			return;
	}
	if (link_rx(b.ns[1], b.ifname[1], &rx0, &dr0)) {
		point_err(p, "cannot read %s counters", b.ifname[1]);
		goto out;
	}
	if (sample_gen(&sm, s, p, a.ns[0], a.ifname[0], remote_mac, a.ip4[0], b.ip4[1], size))
		goto out;
	if (link_rx(b.ns[1], b.ifname[1], &rx1, &dr1))
		rx1 = rx0, dr1 = dr0;
	if (sample_gen_result(&sm, p, &gsecs, &sent))
		goto out;
	point_set(p, round, M_RX_MPPS, (rx1 - rx0) / gsecs / 1e6);
	point_set(p, round, M_DROP_MPPS, (dr1 - dr0) / gsecs / 1e6);
	point_set(p, round, M_GEN_MPPS, sent / gsecs / 1e6);
	if (mode != MODE_GRO)
		point_set(p, round, M_XDP_MPPS,
			  json_num(xdplab_summary(sm.xout), NULL, "rx_packets") / gsecs / 1e6);
	point_set_cpu(p, round, M_USER, &sm.cs);
out:
	sample_done(&sm);
}

static void teardown(struct scen *s)
{
	(void)s;
	child_stop(&fwd);
	child_close(&fwd);
	veth_pair_del(&a);
	veth_pair_del(&b);
}

const struct scenario scen_veth_redirect = {
	.name = "veth-redirect",
	.title = "live frames -> veth -> xdp_redirect_map -> veth pair -> xdp_rxq_info",
	.seed = "Seed 003 (veth: alloc skb in bulk for ndo_xdp_xmit, Jan 2021): ixgbe -> "
		"XDP_REDIRECT (xdp_redirect_map) -> veth0 -> veth1 in a remote netns, XDP_PASS "
		"(xdp_rxq_info), pktgen UDP: 3.64 -> 3.79 Mpps with bulk skb allocation "
		"(Linux 5.12). Here the generator is BPF_PROG_RUN live frames (one thread) "
		"into a veth instead of a NIC.",
	.needs = "ethtool",
	SCEN_TABLE(metrics, cols),
	.ratio_head = { "× baseline" },
	.plot_ylabel = "received Mpps, ratio to GRO on + no program",
	.duration = 3,
	.quick_duration = 0.5,
	SCEN_HOOKS,
};
