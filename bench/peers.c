// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * peers: the field's reference tool against ours on the same traffic.
 * Live frames go into veth0; on veth1 either Debian's `xdp-bench drop|pass`
 * or `xdplab drop|pass` runs. Both are judged by the same counter, veth1's
 * rx_packets, so neither tool's own accounting matters. Where xdp-bench does
 * not load (Debian's 1.3.1 attaches to the tracepoint xdp_redirect_map_err,
 * which newer kernels removed) its rows carry its error instead.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "netns.h"

enum { M_RX_MPPS, M_GEN_MPPS, M_TOOL_MPPS, CPU_SPLIT_SLOTS, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_RX_MPPS] = { "rx_mpps", "million frames/s received by veth1 (rx_packets)" },
	[M_GEN_MPPS] = { "gen_mpps", "million frames/s sent by the generator" },
	[M_TOOL_MPPS] = { "tool_mpps", "million frames/s the tool itself counted (xdplab only)" },
	CPU_SPLIT_METRICS,
};

static const struct column cols[] = {
	{ M_RX_MPPS, "veth1 Mpps", "%.3f" },
	{ M_GEN_MPPS, "sent Mpps", "%.3f" },
	{ M_SYS, "sys %", "%.0f" },
	{ M_SOFTIRQ, "softirq %", "%.0f" },
	{ M_IDLE, "idle %", "%.0f" },
};

enum { K_TOOL, K_ACTION };
enum { TOOL_XDP_BENCH, TOOL_XDPLAB };
static const char *const action[] = { "drop", "pass" };

static struct veth_pair vp;
static char peer_mac[32];
static int cur_gro;

static void plan(struct scen *s)
{
	for (int a = 0; a <= 1; a++) {
		char group[32], label[48];
		int base = s->npts;

		snprintf(group, sizeof(group), "XDP_%s", a ? "PASS" : "DROP");
		for (int t = TOOL_XDP_BENCH; t <= TOOL_XDPLAB; t++) {
			struct point *p;

			snprintf(label, sizeof(label), "%s %s", t ? "xdplab" : "xdp-bench", action[a]);
			p = scen_add(s, base, -1, group, label, "%s/%s", action[a],
				     t ? "xdplab" : "xdp-bench");
			p->knob[K_TOOL] = t;
			p->knob[K_ACTION] = a;
		}
	}
}

static int setup(struct scen *s)
{
	const unsigned char *m;
	char ver[128] = "";

	cur_gro = 0;
	if (veth_pair_add(&vp, "peer", 6, 0)) {
		snprintf(s->error, sizeof(s->error), "cannot make the veth pair (run with -v)");
		return -1;
	}
	m = vp.mac[1];
	snprintf(peer_mac, sizeof(peer_mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	sh_out(ver, sizeof(ver), "dpkg-query -W -f='${Version}' xdp-tools 2>/dev/null");
	snprintf(s->note, sizeof(s->note),
		 "xdp-bench: Debian xdp-tools %s. Both tools attach in native mode on veth1 "
		 "(GRO off); the generator sends 64-byte UDP frames to veth1's address.",
		 ver[0] ? ver : "(not installed)");
	return 0;
}

/* xdp-bench's own words on why it did not load: the libbpf line naming
 * the cause and its last line.
 */
static void xdp_bench_why(const struct child *c, char *buf, size_t len)
{
	char *text = child_output(c, 2), *cause = NULL, *last = NULL, *line, *save = NULL;

	buf[0] = '\0';
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ')
			line++;
		if (!*line || strstr(line, "bpffs") || strstr(line, "dispatcher"))
			continue;
		if (!cause && strstr(line, "libbpf:") && strstr(line, "failed to find"))
			cause = line;
		last = line;
	}
	if (last && cause && cause != last)
		snprintf(buf, len, "%s (%s)", last, cause);
	else if (last)
		snprintf(buf, len, "%s", last);
	free(text);
}

static void sample(struct scen *s, struct point *p, int round)
{
	int tool = p->knob[K_TOOL], a = p->knob[K_ACTION], st;
	char secs[16], why[300], *gout = NULL, *xout = NULL;
	struct child t = { .pid = -1 }, gen = { .pid = -1 };
	unsigned long long rx0, rx1;
	struct cpustat c0, c1;
	struct cpusplit cs;
	const char *sum;
	double gsecs;

	if (cur_gro) {
		set_gro(vp.ns[1], vp.ifname[1], false);
		cur_gro = 0;
	}
	if (tool == TOOL_XDPLAB) {
		char *args[] = { (char *)action[a], vp.ifname[1], "-q", "--json", NULL };

		if (xdplab_start(&t, p, vp.ns[1], vp.ifname[1], args)) {
			p->skip = !bench_stop;
			return;
		}
	} else {
		if (child_start(&t, vp.ns[1], (char *const[]){ "xdp-bench", (char *)action[a],
								vp.ifname[1], NULL })) {
			point_err(p, "cannot start xdp-bench");
			p->skip = true;
			return;
		}
		point_cmd(p, "%s &", t.cmd);
		if (xdp_wait_attached(vp.ns[1], vp.ifname[1], &t, 15)) {
			if (bench_stop)
				goto out;
			child_wait(&t, 5);
			xdp_bench_why(&t, why, sizeof(why));
			point_err(p, "xdp-bench did not load (exit %d): %s", t.status,
				  why[0] ? why : "no message");
			p->skip = true;
			goto out;
		}
	}
	snprintf(secs, sizeof(secs), "%g", s->duration);
	if (link_rx(vp.ns[1], vp.ifname[1], &rx0, NULL)) {
		point_err(p, "cannot read %s counters", vp.ifname[1]);
		goto out;
	}
	cpustat_read(&c0);
	if (child_start(&gen, vp.ns[0], (char *const[]){ bench.xdplab, "trafficgen",
							 vp.ifname[0], "-d", secs, "--dst-mac",
							 peer_mac, "--src-ip", vp.ip4[0],
							 "--dst-ip", vp.ip4[1], "-q", "--json",
							 NULL })) {
		point_err(p, "cannot start the generator");
		goto out;
	}
	point_cmd(p, "%s", gen.cmd);
	st = child_wait(&gen, scen_secs(s) + 20);
	cpustat_read(&c1);
	if (link_rx(vp.ns[1], vp.ifname[1], &rx1, NULL))
		rx1 = rx0;
	if (tool == TOOL_XDPLAB) {
		xout = xdplab_finish(&t);
	} else {
		child_stop(&t);
		xout = child_output(&t, 1);
	}
	if (bench_stop)
		goto out;
	gout = child_output(&gen, 1);
	sum = xdplab_summary(gout);
	gsecs = json_num(sum, NULL, "seconds");
	if (st || !(gsecs > 0)) {
		child_errline(&gen, why, sizeof(why));
		point_err(p, "generator failed (exit %d): %s", st, why);
		goto out;
	}
	cpustat_split(&c0, &c1, &cs);
	point_set(p, round, M_RX_MPPS, (rx1 - rx0) / gsecs / 1e6);
	point_set(p, round, M_GEN_MPPS, json_num(sum, NULL, "rx_packets") / gsecs / 1e6);
	if (tool == TOOL_XDPLAB)
		point_set(p, round, M_TOOL_MPPS,
			  json_num(xdplab_summary(xout), NULL, "rx_packets") / gsecs / 1e6);
	point_set_cpu(p, round, M_USER, &cs);
out:
	free(gout);
	free(xout);
	child_close(&gen);
	child_close(&t);
}

static void teardown(struct scen *s)
{
	(void)s;
	veth_pair_del(&vp);
}

const struct scenario scen_peers = {
	.name = "peers",
	.title = "Debian's xdp-bench against xdplab on the same traffic",
	.seed = "The seed threads measured with the kernel samples and xdp-tools (seed 004 "
		"used xdp-trafficgen and xdp-bench). Same generator, same veth, same counter; "
		"only the tool on veth1 changes.",
	.metrics = metrics,
	.nmetrics = M_NR,
	.cols = cols,
	.ncols = sizeof(cols) / sizeof(cols[0]),
	.ratio_head = { "× xdp-bench" },
	.plot_ylabel = "veth1 Mpps, ratio to xdp-bench",
	.duration = 3,
	.quick_duration = 0.5,
	.plan = plan,
	.setup = setup,
	.sample = sample,
	.teardown = teardown,
};
