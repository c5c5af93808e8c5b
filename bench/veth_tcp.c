// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * veth-tcp (seed 000): iperf3 TCP client -> veth0 -> veth1 (other netns)
 * -> iperf3 server, at MTU 1500, 8000 and 9000, with no XDP program,
 * `xdplab pass --no-frags` or `xdplab pass --frags` on veth1, and GRO on
 * veth1 off (the veth default) or on. Any XDP program on veth1 takes
 * TSO/GSO away from veth0 (veth_fix_features); that loss is what the
 * ratio to the no-XDP row shows.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "netns.h"

enum { M_GBPS, M_USER_PG, M_SYS_PG, M_SOFTIRQ_PG, CPU_SPLIT_SLOTS,
       M_RETR, M_XDP_KPPS, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_GBPS] = { "gbps", "Gbit/s" },
	[M_USER_PG] = { "user_per_gbps", "% of a core per Gbit/s" },
	[M_SYS_PG] = { "system_per_gbps", "% of a core per Gbit/s" },
	[M_SOFTIRQ_PG] = { "softirq_per_gbps", "% of a core per Gbit/s" },
	CPU_SPLIT_METRICS,
	[M_RETR] = { "retransmits", "segments" },
	[M_XDP_KPPS] = { "xdp_kpps", "thousand frames/s seen by the XDP program" },
};

static const struct column cols[] = {
	{ M_GBPS, "Gbit/s", "%.2f" },
	{ M_USER_PG, "user %/Gbit/s", "%.1f" },
	{ M_SYS_PG, "sys %/Gbit/s", "%.1f" },
	{ M_SOFTIRQ_PG, "softirq %/Gbit/s", "%.1f" },
	{ M_IDLE, "idle %", "%.0f" },
	{ M_RETR, "retr", "%.0f" },
};

enum { K_MTU, K_PROG, K_GRO };
enum { PROG_NONE, PROG_LINEAR, PROG_FRAGS };

static const int mtus[] = { 1500, 8000, 9000 };
static const char *const prog_label[] = { "no XDP", "XDP_PASS non-frags", "XDP_PASS frags" };
static const char *const prog_id[] = { "none", "pass", "pass-frags" };

static struct iperf_pair ip;
static int cur_gro;

static void plan(struct scen *s)
{
	for (size_t m = 0; m < sizeof(mtus) / sizeof(mtus[0]); m++) {
		char group[32];
		int none[2] = { -1, -1 };

		snprintf(group, sizeof(group), "MTU %d", mtus[m]);
		for (int prog = PROG_NONE; prog <= PROG_FRAGS; prog++) {
			int gro_off = -1;

			for (int gro = 0; gro <= 1; gro++) {
				char label[64];
				int self = s->npts;
				struct point *p;

				snprintf(label, sizeof(label), "%s, GRO %s", prog_label[prog],
					 gro ? "on" : "off");
				if (prog == PROG_NONE)
					none[gro] = self;
				p = scen_add(s, none[gro], gro ? gro_off : -1, group, label,
					     "mtu%d/%s/gro-%s", mtus[m], prog_id[prog],
					     gro ? "on" : "off");
				p->knob[K_MTU] = mtus[m];
				p->knob[K_PROG] = prog;
				p->knob[K_GRO] = gro;
				gro_off = self;
			}
		}
	}
}

static int setup(struct scen *s)
{
	cur_gro = 0;
	return iperf_pair_setup(&ip, s, "tcp", 1, 1500, true);
}

static void sample(struct scen *s, struct point *p, int round)
{
	int mtu = p->knob[K_MTU], prog = p->knob[K_PROG], gro = p->knob[K_GRO];
	char secs[16], port[16];
	struct sample sm;
	double gbps, pass;

	sample_init(&sm);
	if (iperf_pair_serve(&ip, s, p) || iperf_pair_mtu(&ip, p, mtu) ||
	    gro_set(p, ip.vp.ns[1], ip.vp.ifname[1], &cur_gro, gro))
		return;
	if (prog != PROG_NONE) {
		char *args[] = { "pass", ip.vp.ifname[1], prog == PROG_FRAGS ? "--frags" : "--no-frags",
				 "-q", "--json", NULL };

		if (sample_xdp(&sm, p, ip.vp.ns[1], ip.vp.ifname[1], args))
			return;
	}

	snprintf(secs, sizeof(secs), "%d", scen_secs(s));
	snprintf(port, sizeof(port), "%d", bench.port);
	/* -O 1: the first second (slow start, the program just attached) is
	 * run but left out of the result.
	 */
	if (sample_load(&sm, s, p, ip.vp.ns[0], (char *const[]){ "iperf3", "-c", ip.vp.ip4[1],
								"-p", port, "-t", secs, "-O",
								"1", "-J",
								bench.pin ? "-A" : NULL, "0,1",
								NULL }))
		goto out;
	gbps = json_num(sm.out, "sum_received", "bits_per_second") / 1e9;
	if (sm.status || isnan(gbps) || gbps <= 0) {
		sample_iperf_failed(&sm, p, &ip);
		goto out;
	}
	if (prog != PROG_NONE) {
		pass = sample_xdp_count(&sm, p, "pass");
		if (isnan(pass))
			goto out;
		point_set(p, round, M_XDP_KPPS,
			  pass / json_num(xdplab_summary(sm.xout), NULL, "seconds") / 1e3);
	}
	point_set(p, round, M_GBPS, gbps);
	point_set_cpu(p, round, M_USER, &sm.cs);
	point_set(p, round, M_USER_PG, sm.cs.user / gbps);
	point_set(p, round, M_SYS_PG, sm.cs.system / gbps);
	point_set(p, round, M_SOFTIRQ_PG, sm.cs.softirq / gbps);
	point_set(p, round, M_RETR, json_num(sm.out, "sum_sent", "retransmits"));
out:
	sample_done(&sm);
}

static void teardown(struct scen *s)
{
	(void)s;
	iperf_pair_teardown(&ip);
}

const struct scenario scen_veth_tcp = {
	.name = "veth-tcp",
	.title = "iperf3 TCP through a veth pair across two namespaces",
	.seed = "Seed 000 (veth page_pool RFC, May 2023): iperf TCP tx -> veth0 -> veth1 "
		"(xdp_pass) -> iperf rx, 6.4-rc1: 7.07 / 14.7 Gbit/s at MTU 1500 / 8000. "
		"Kicinski: keeping GSO across multi-buffer XDP would help most. Here the "
		"same path with no program, `xdplab pass --no-frags` and `--frags` on veth1, "
		"GRO on veth1 off (veth default) and on. CPU: /proc/stat deltas over the "
		"iperf3 run, % of one core per Gbit/s, machine-wide.",
	.needs = "iperf3 ethtool ss",
	SCEN_TABLE(metrics, cols),
	.ratio_head = { "× no XDP", "× GRO off" },
	.plot_ylabel = "throughput ratio (per round)",
	.duration = 5,
	.quick_duration = 1,
	SCEN_HOOKS,
};
