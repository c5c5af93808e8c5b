// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * small-udp (seed 004): the macb page_pool thread's two tests on a veth
 * pair. Stack: iperf3 -u with 64 and 128-byte datagrams (iperf3's -l, as
 * the thread used it), delivered pps with and without `xdplab pass` on the
 * receiving veth1. XDP: live frames of 64 and 128 bytes into veth1 where
 * `xdplab drop` counts its drops, in native mode and in skb (generic)
 * mode as the thread's xdp-bench did. Every row carries the /proc/stat
 * split including idle, the thread's answer to "same line rate, less CPU?".
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "netns.h"

enum { M_KPPS, M_SENT_KPPS, M_LOSS, CPU_SPLIT_SLOTS, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_KPPS] = { "kpps", "thousand packets/s delivered to iperf3 (stack rows) or "
			     "dropped by XDP (generator rows)" },
	[M_SENT_KPPS] = { "sent_kpps", "thousand packets/s sent" },
	[M_LOSS] = { "loss", "% of sent packets not delivered (iperf3 rows)" },
	CPU_SPLIT_METRICS,
};

static const struct column cols[] = {
	{ M_KPPS, "kpps", "%.0f" },
	{ M_SENT_KPPS, "sent kpps", "%.0f" },
	{ M_LOSS, "loss %", "%.1f" },
	CPU_SPLIT_COLUMNS,
};

enum { K_KIND, K_SIZE, K_PROG };
enum { KIND_IPERF, KIND_GEN };
enum { PROG_NONE, PROG_PASS, PROG_DROP, PROG_DROP_SKB };
static const int sizes[] = { 64, 128 };

static struct iperf_pair ip;
static int cur_gro;
static char peer_mac[18];

static void add(struct scen *s, int base, const char *group, int kind, int size, int prog,
		const char *label, const char *id)
{
	struct point *p = scen_add(s, base, -1, group, label, "%s%d/%s",
				   kind == KIND_IPERF ? "iperf" : "gen", size, id);

	p->knob[K_KIND] = kind;
	p->knob[K_SIZE] = size;
	p->knob[K_PROG] = prog;
}

static void plan(struct scen *s)
{
	char group[48];
	int base;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(group, sizeof(group), "iperf3 -u -l %d", sizes[i]);
		base = s->npts;
		add(s, base, group, KIND_IPERF, sizes[i], PROG_NONE, "no XDP", "none");
		add(s, base, group, KIND_IPERF, sizes[i], PROG_PASS, "xdplab pass", "pass");
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(group, sizeof(group), "generator %d B", sizes[i]);
		base = s->npts;
		add(s, base, group, KIND_GEN, sizes[i], PROG_DROP, "xdplab drop, native",
		    "drop");
		add(s, base, group, KIND_GEN, sizes[i], PROG_DROP_SKB,
		    "xdplab drop --mode skb (GRO on)", "drop-skb");
	}
}

static int setup(struct scen *s)
{
	bool iperf = false;

	cur_gro = 0;
	for (int i = 0; i < s->npts; i++)
		iperf |= s->pts[i].selected && s->pts[i].knob[K_KIND] == KIND_IPERF;
	if (iperf_pair_setup(&ip, s, "udp", 4, 0, iperf))
		return -1;
	mac_str(peer_mac, ip.vp.mac[1]);
	return 0;
}

static void sample(struct scen *s, struct point *p, int round)
{
	int kind = p->knob[K_KIND], size = p->knob[K_SIZE], prog = p->knob[K_PROG];
	char secs[16], sz[16], port[16];
	struct sample sm;
	double kpps, sent;

	sample_init(&sm);
	if (kind == KIND_IPERF && iperf_pair_serve(&ip, s, p))
		return;
	if (gro_set(p, ip.vp.ns[1], ip.vp.ifname[1], &cur_gro, prog == PROG_DROP_SKB))
		return;
	if (prog != PROG_NONE) {
		char *args[] = { prog == PROG_PASS ? "pass" : "drop", ip.vp.ifname[1], "-q", "--json",
				 prog == PROG_DROP_SKB ? "--mode" : NULL, "skb", NULL };

		if (sample_xdp(&sm, p, ip.vp.ns[1], ip.vp.ifname[1], args))
			return;
	}
	if (kind == KIND_GEN) {
		double gsecs, drops;

		if (sample_gen(&sm, s, p, ip.vp.ns[0], ip.vp.ifname[0], peer_mac, ip.vp.ip4[0],
			       ip.vp.ip4[1], size) ||
		    sample_gen_result(&sm, p, &gsecs, &sent))
			goto out;
		/* The generator's own count ends a moment before its last
		 * batches do, so drops can exceed it: no loss figure here.
		 */
		drops = sample_xdp_count(&sm, p, "drop");
		if (isnan(drops))
			goto out;
		sent /= gsecs;
		kpps = drops / gsecs;
	} else {
		double pk, lost, rsecs;

		/* iperf3 counts whole seconds. */
		snprintf(secs, sizeof(secs), "%d", scen_secs(s));
		snprintf(sz, sizeof(sz), "%d", size);
		snprintf(port, sizeof(port), "%d", bench.port);
		if (sample_load(&sm, s, p, ip.vp.ns[0], (char *const[]){ "iperf3", "-u", "-c",
									ip.vp.ip4[1], "-p", port,
									"-t", secs, "-l", sz, "-b",
									"0", "-J", NULL }))
			goto out;
		pk = json_num(sm.out, "sum_received", "packets");
		lost = json_num(sm.out, "sum_received", "lost_packets");
		rsecs = json_num(sm.out, "sum_received", "seconds");
		sent = json_num(sm.out, "sum_sent", "packets") / json_num(sm.out, "sum_sent", "seconds");
		kpps = (pk - lost) / rsecs;
		if (sm.status || isnan(kpps) || !(rsecs > 0)) {
			sample_iperf_failed(&sm, p, &ip);
			goto out;
		}
		point_set(p, round, M_LOSS, 100.0 * (1 - kpps / sent));
	}
	point_set(p, round, M_KPPS, kpps / 1e3);
	point_set(p, round, M_SENT_KPPS, sent / 1e3);
	point_set_cpu(p, round, M_USER, &sm.cs);
out:
	sample_done(&sm);
}

static void teardown(struct scen *s)
{
	(void)s;
	iperf_pair_teardown(&ip);
}

const struct scenario scen_small_udp = {
	.name = "small-udp",
	.title = "small UDP packets: iperf3 -u through the stack, XDP_DROP of generated frames",
	.seed = "Seed 004 (macb page_pool, Jan 2026): iperf3 UDP 64 / 128 B at line rate, "
		"273 / 545 kpps with and without page_pool; system CPU from /proc/stat 179 -> 91 "
		"ticks; xdp-trafficgen + xdp-bench (skb mode) for drops. Here on a veth pair: "
		"the stack rows with and without XDP, the drop rows native and skb mode. "
		"CPU columns: % of one core over the run, machine-wide.",
	.needs = "iperf3 ethtool ss",
	SCEN_TABLE(metrics, cols),
	.ratio_head = { "× first row" },
	.plot_ylabel = "pps ratio to the group's first row",
	.duration = 3,
	.quick_duration = 1,
	SCEN_HOOKS,
};
