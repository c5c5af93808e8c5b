// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The steps most samples share, so that a scenario file holds only what is
 * its own: an xdplab program on the receiving interface, a load (iperf3's
 * client or the live-frames generator) run for the sample's seconds with
 * the CPU split taken across it, the program stopped after the load, and
 * the load's failure turned into one line in the point's error.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void sample_init(struct sample *sm)
{
	memset(sm, 0, sizeof(*sm));
	sm->xdp.pid = sm->load.pid = -1;
	sm->xdp.out = sm->xdp.err = sm->load.out = sm->load.err = -1;
}

int sample_xdp(struct sample *sm, struct point *p, const char *ns, const char *ifname,
	       char *const args[])
{
	if (xdplab_start(&sm->xdp, p, ns, ifname, args)) {
		/* The CLI said no (e.g. MTU too large for non-frags): for good. */
		p->skip = !bench_stop;
		return -1;
	}
	sm->has_xdp = true;
	return 0;
}

void sample_xdp_stop(struct sample *sm)
{
	if (sm->has_xdp && !sm->xout)
		sm->xout = xdplab_finish(&sm->xdp);
}

int sample_load(struct sample *sm, struct scen *s, struct point *p, const char *ns,
		char *const argv[])
{
	struct cpustat c0, c1;

	cpustat_read(&c0);
	if (child_start(&sm->load, ns, argv)) {
		point_err(p, "cannot start %s", !strcmp(argv[0], bench.xdplab) ?
			  "the generator" : argv[0]);
		return -1;
	}
	point_cmd(p, "%s", sm->load.cmd);
	sm->status = child_wait(&sm->load, scen_secs(s) + 20);
	cpustat_read(&c1);
	cpustat_split(&c0, &c1, &sm->cs);
	sample_xdp_stop(sm);
	if (bench_stop)
		return -1;
	sm->out = child_output(&sm->load, 1);
	return 0;
}

double sample_xdp_count(struct sample *sm, struct point *p, const char *key)
{
	double n = json_num(xdplab_summary(sm->xout), NULL, key);

	if (!(n > 0)) {
		point_err(p, "the XDP program saw no frames");
		return NAN;
	}
	return n;
}

int sample_gen(struct sample *sm, struct scen *s, struct point *p, const char *ns,
	       const char *ifname, const char *dst_mac, const char *src_ip, const char *dst_ip,
	       int size)
{
	char secs[16], sz[16];

	snprintf(secs, sizeof(secs), "%g", s->duration);
	snprintf(sz, sizeof(sz), "%d", size);
	return sample_load(sm, s, p, ns, (char *const[]){ bench.xdplab, "trafficgen",
							  (char *)ifname, "-s", sz, "-d", secs,
							  "--dst-mac", (char *)dst_mac,
							  "--src-ip", (char *)src_ip,
							  "--dst-ip", (char *)dst_ip, "-q",
							  "--json", NULL });
}

int sample_gen_result(struct sample *sm, struct point *p, double *secs, double *sent)
{
	const char *sum = xdplab_summary(sm->out);
	char why[256];

	*secs = json_num(sum, NULL, "seconds");
	if (sm->status || !sum || !(*secs > 0)) {
		child_errline(&sm->load, why, sizeof(why));
		point_err(p, "generator failed (exit %d): %s", sm->status, why);
		return -1;
	}
	*sent = json_num(sum, NULL, "rx_packets");
	return 0;
}

void sample_iperf_error(struct sample *sm, struct point *p)
{
	char why[256] = "";

	if (!json_str(sm->out, "error", why, sizeof(why)))
		child_errline(&sm->load, why, sizeof(why));
	point_err(p, "iperf3 %s: %s", sm->status < 0 ? "timed out" : "failed",
		  why[0] ? why : "no result");
}

void sample_iperf_failed(struct sample *sm, struct point *p, struct iperf_pair *ip)
{
	sample_iperf_error(sm, p);
	iperf_pair_server_lost(ip);
}

void sample_done(struct sample *sm)
{
	free(sm->out);
	free(sm->xout);
	sm->out = sm->xout = NULL;
	child_close(&sm->load);
	child_close(&sm->xdp);
}

int gro_set(struct point *p, const char *ns, const char *ifname, int *cur, int on)
{
	if (on != *cur) {
		if (set_gro(ns, ifname, on)) {
			point_err(p, "ethtool -K %s gro %s failed", ifname, on ? "on" : "off");
			return -1;
		}
		*cur = on;
	}
	point_cmd(p, "ip netns exec %s ethtool -K %s gro %s", ns, ifname, on ? "on" : "off");
	return 0;
}

void mac_str(char buf[18], const unsigned char mac[6])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
}
