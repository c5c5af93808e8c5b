// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * veth-flip: the veth-tcp ratio (XDP_PASS program on veth1 ÷ no program)
 * measured inside ONE iperf3 stream. The program is attached and
 * detached in windows of -d seconds, in the order none, XDP, XDP, none
 * (ABBA, so a linear drift cancels), and each window's rate is veth0's tx
 * bytes over the window's own clock. Attaching and detaching happen
 * between windows, never inside one.
 *
 * Why not separate connections (veth-tcp): under TCG the guest's speed
 * moves by 10-30% from one iperf3 connection to the next and stays
 * nearly level within one, so a ratio of two connections carries that
 * luck; two windows of one stream a second apart share it.
 *
 * One sample = one stream of PAIRS none/XDP window pairs; its ratio is
 * the XDP windows' bytes per second over the no-XDP windows'.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "netns.h"

#define PAIRS 4
#define QUICK_PAIRS 2	/* -q: one ABBA cycle, so the quick run stays under 3 min */
#define SETTLE_SECS 2.0	/* after the stream starts: slow start, autotuning */

enum { M_RATIO, M_GBPS_NONE, M_GBPS_XDP, M_MB_SHARE, M_PAIR_MIN, M_PAIR_MAX, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_RATIO] = { "ratio", "XDP windows' rate ÷ no-XDP windows' rate" },
	[M_GBPS_NONE] = { "gbps_none", "Gbit/s, no-XDP windows" },
	[M_GBPS_XDP] = { "gbps_xdp", "Gbit/s, XDP windows" },
	[M_MB_SHARE] = { "mb_share", "% of the program's frames that were multi-buffer" },
	[M_PAIR_MIN] = { "pair_min", "lowest ratio of one window pair" },
	[M_PAIR_MAX] = { "pair_max", "highest ratio of one window pair" },
};

static const struct column cols[] = {
	{ M_RATIO, "XDP ÷ no XDP, one stream", "%.3f" },
	{ M_GBPS_NONE, "no XDP Gbit/s", "%.2f" },
	{ M_GBPS_XDP, "XDP Gbit/s", "%.2f" },
	{ M_MB_SHARE, "multi-buffer %", "%.0f" },
	{ M_PAIR_MIN, "pair min", "%.2f" },
	{ M_PAIR_MAX, "pair max", "%.2f" },
};

enum { K_MTU, K_FRAGS };

static struct iperf_pair ip;

static void plan(struct scen *s)
{
	static const struct { int mtu, frags; } pts[] = { { 1500, 1 }, { 8000, 1 }, { 1500, 0 } };

	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		char group[32];
		struct point *p;

		snprintf(group, sizeof(group), "MTU %d", pts[i].mtu);
		p = scen_add(s, -1, -1, group,
			     pts[i].frags ? "XDP_PASS frags, GRO off" : "XDP_PASS non-frags, GRO off",
			     "mtu%d/%s/gro-off", pts[i].mtu, pts[i].frags ? "pass-frags" : "pass");
		p->knob[K_MTU] = pts[i].mtu;
		p->knob[K_FRAGS] = pts[i].frags;
	}
}

static int setup(struct scen *s)
{
	return iperf_pair_setup(&ip, s, "flip", 2, 1500, true);
}

/* veth0's tx bytes, read through a /proc/net/dev opened inside its
 * namespace (the open file stays bound to it); cheap enough to take at
 * the edges of a window without an `ip` process in between.
 */
static int txbytes_open(void)
{
	int saved = netns_enter(ip.vp.ns[0]), fd;

	if (saved < 0)
		return -1;
	fd = open("/proc/thread-self/net/dev", O_RDONLY | O_CLOEXEC);
	netns_leave(saved);
	return fd;
}

static double txbytes(int fd)
{
	char buf[8192], *l;
	size_t n = strlen(ip.vp.ifname[0]);
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return NAN;
	buf[len] = '\0';
	for (l = buf; l; l = strchr(l, '\n')) {
		unsigned long long v[9];

		while (*l == '\n' || *l == ' ')
			l++;
		if (strncmp(l, ip.vp.ifname[0], n) || l[n] != ':')
			continue;
		/* rx: bytes packets errs drop fifo frame compressed multicast, then tx bytes */
		if (sscanf(l + n + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9)
			return v[8];
	}
	return NAN;
}

/* Sleeps until t, or returns early when the bench is told to stop. */
static void sleep_until(double t)
{
	while (!bench_stop) {
		double left = t - now();

		if (left <= 0)
			return;
		usleep(left > 0.1 ? 100000 : (useconds_t)(left * 1e6));
	}
}

static void sample(struct scen *s, struct point *p, int round)
{
	int fd = -1;
	char port[16];
	struct child xdp = { .pid = -1 }, cli = { .pid = -1 };
	char *args[] = { "pass", ip.vp.ifname[1], p->knob[K_FRAGS] ? "--frags" : "--no-frags",
			 "-q", "--json", NULL };
	double win = s->duration, bytes[2] = { 0 }, secs[2] = { 0 }, pair[PAIRS][2];
	int npairs = bench.quick ? QUICK_PAIRS : PAIRS;
	double frames = 0, mb = 0, pmin = INFINITY, pmax = 0;
	size_t cmd_len = 0;

	if (iperf_pair_serve(&ip, s, p) || iperf_pair_mtu(&ip, p, p->knob[K_MTU]))
		return;
	fd = txbytes_open();
	if (fd < 0 || isnan(txbytes(fd))) {
		point_err(p, "cannot read %s's counters in %s", ip.vp.ifname[0], ip.vp.ns[0]);
		goto out;
	}
	snprintf(port, sizeof(port), "%d", bench.port);
	/* Long enough for every window; stopped with SIGINT when done. */
	if (child_start(&cli, ip.vp.ns[0], (char *const[]){ "iperf3", "-c", ip.vp.ip4[1], "-p", port,
							  "-t", "3600",
							  bench.pin ? "-A" : NULL, "0,1",
							  NULL })) {
		point_err(p, "cannot start iperf3");
		goto out;
	}
	point_cmd(p, "%s", cli.cmd);
	sleep_until(now() + SETTLE_SECS);

	for (int w = 0; w < 2 * npairs && !bench_stop; w++) {
		/* none, XDP, XDP, none, none, XDP, ... */
		int with = (w % 4 == 1 || w % 4 == 2);
		double t0, b0, t1, b1;

		if (with && xdplab_start(&xdp, p, ip.vp.ns[1], ip.vp.ifname[1], args)) {
			p->skip = !bench_stop;
			goto out;
		}
		/* The reproduce line shows the attach once, not once a window. */
		if (with && w == 1)
			cmd_len = strlen(p->cmd);
		else if (with)
			p->cmd[cmd_len] = '\0';
		if (child_exited(&cli)) {
			char why[256];

			child_errline(&cli, why, sizeof(why));
			point_err(p, "iperf3 client exited during the stream: %s", why);
			goto out;
		}
		t0 = now();
		b0 = txbytes(fd);
		sleep_until(t0 + win);
		t1 = now();
		b1 = txbytes(fd);
		if (with) {
			char *out = xdplab_finish(&xdp);
			const char *sum = xdplab_summary(out);

			frames += json_num(sum, NULL, "rx_packets");
			mb += json_num(sum, NULL, "mb_packets");
			free(out);
		}
		bytes[with] += b1 - b0;
		secs[with] += t1 - t0;
		pair[w / 2][with] = (b1 - b0) / (t1 - t0);
	}
	if (bench_stop)
		goto out;
	child_stop(&cli);
	if (!(bytes[0] > 0 && bytes[1] > 0 && frames > 0)) {
		point_err(p, "no traffic in a window (no XDP %.0f B, XDP %.0f B, program saw %.0f)",
			  bytes[0], bytes[1], frames);
		goto out;
	}
	for (int i = 0; i < npairs; i++) {
		double r = pair[i][1] / pair[i][0];

		pmin = fmin(pmin, r);
		pmax = fmax(pmax, r);
		if (bench.verbose)
			bench_log("%s round %d pair %d: %.3f (%.2f / %.2f Gbit/s)\n", p->id, round,
				  i, r, pair[i][1] * 8e-9, pair[i][0] * 8e-9);
	}
	point_set(p, round, M_RATIO, (bytes[1] / secs[1]) / (bytes[0] / secs[0]));
	point_set(p, round, M_GBPS_NONE, bytes[0] / secs[0] * 8e-9);
	point_set(p, round, M_GBPS_XDP, bytes[1] / secs[1] * 8e-9);
	point_set(p, round, M_MB_SHARE, 100 * mb / frames);
	point_set(p, round, M_PAIR_MIN, pmin);
	point_set(p, round, M_PAIR_MAX, pmax);
out:
	if (xdp.pid > 0)
		free(xdplab_finish(&xdp));
	if (cli.pid > 0 && !cli.reaped)
		child_stop(&cli);
	child_close(&cli);
	child_close(&xdp);
	if (fd >= 0)
		close(fd);
}

static void teardown(struct scen *s)
{
	(void)s;
	iperf_pair_teardown(&ip);
}

const struct scenario scen_veth_flip = {
	.name = "veth-flip",
	.title = "iperf3 TCP through a veth pair, XDP_PASS attached and detached within one stream",
	.seed = "Seed 000's veth-tcp ratio (frags XDP_PASS ÷ no XDP) taken inside one iperf3 "
		"stream: windows of -d seconds in the order none, XDP, XDP, none, "
		"4 pairs a sample (2 with -q), the program (`xdplab pass --frags` or `--no-frags` on "
		"veth1) attached and detached between windows; rate = veth0 tx bytes over "
		"the window. GRO on veth1 off (the veth default).",
	.needs = "iperf3",
	SCEN_TABLE(metrics, cols),
	.plot_ylabel = "XDP ÷ no XDP within one stream (per sample)",
	.duration = 2,
	.quick_duration = 1,
	SCEN_HOOKS,
};
