// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tap (seed 001): frames written to a tap fd, as a VMM or a user-space
 * switch would, one writev() a frame: tun_get_user() is the tap's receive
 * path. With IFF_NAPI the skb is queued and NAPI (with GRO) is scheduled
 * for it; without, it goes up the stack at once. XDP drop / pass on the
 * tap runs in tun_build_skb() (the fd is O_NONBLOCK, which that fast path
 * needs). The seed's batched path (TUN_MSG_PTR, up to 64 buffers a call)
 * belongs to vhost-net and is out of user space's reach; writev is what a
 * process can do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <linux/if_tun.h>

#include "bench.h"
#include "netns.h"
#include "pkt.h"

enum { M_KPPS, M_XDP_KPPS, M_FAIL_KPPS, CPU_SPLIT_SLOTS, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_KPPS] = { "kpps", "thousand frames/s written (writev returned the length)" },
	[M_XDP_KPPS] = { "xdp_kpps", "thousand frames/s counted by the XDP program" },
	[M_FAIL_KPPS] = { "failed_kpps", "thousand writev()/s that failed" },
	CPU_SPLIT_METRICS,
};

static const struct column cols[] = {
	{ M_KPPS, "kpps written", "%.0f" },
	{ M_XDP_KPPS, "XDP kpps", "%.0f" },
	CPU_SPLIT_COLUMNS,
};

enum { K_NAPI, K_PROG };	/* as scen_plan_napi() sets them */
enum { PROG_NONE, PROG_PASS, PROG_DROP };
static const char *const prog_label[] = { "no XDP", "XDP_PASS", "XDP_DROP" };
static const char *const prog_id[] = { "none", "pass", "drop" };
#define TAP "xtap0"
#define TAP_IP "198.18.5.1"
#define PEER_IP "198.18.5.2"
#define PEER_MAC "02:00:00:00:05:02"
#define FRAME 64

static char ns[NETNS_NAME_MAX];
static struct tap_dev tap = { .fd = -1 };
static int tap_napi = -1;
static unsigned char frame[FRAME];

static void plan(struct scen *s)
{
	scen_plan_napi(s, 3, prog_label, prog_id);
}

static void tap_close(void)
{
	tap_dev_close(&tap);
	tap_napi = -1;
}

/* A tap in our namespace, up, addressed, with the frame built for it. */
static int tap_open(struct scen *s, bool napi)
{
	struct pkt_spec spec = { .ipver = 4, .l4 = PKT_UDP, .sport = 9, .dport = 9,
				 .len = FRAME };

	tap_close();
	if (tap_dev_open(&tap, ns, TAP, napi ? IFF_NAPI : 0, 0, TAP_IP, PEER_IP, PEER_MAC,
			 s->error, sizeof(s->error)))
		return -1;
	memcpy(spec.dst_mac, tap.mac, 6);
	pkt_parse_mac(PEER_MAC, spec.src_mac);
	pkt_parse_ip(PEER_IP, &spec.src);
	pkt_parse_ip(TAP_IP, &spec.dst);
	if (!pkt_build(frame, sizeof(frame), &spec)) {
		snprintf(s->error, sizeof(s->error), "cannot build the frame");
		tap_close();
		return -1;
	}
	tap_napi = napi;
	return 0;
}

static int setup(struct scen *s)
{
	tap.fd = -1;
	tap_napi = -1;
	if (scen_netns_add(s, "tap", ns))
		return -1;
	return tap_open(s, false);
}

static void sample(struct scen *s, struct point *p, int round)
{
	int napi = p->knob[K_NAPI], prog = p->knob[K_PROG];
	struct iovec iov = { frame, sizeof(frame) };
	struct tap_writes w;
	struct sample sm;
	struct cpustat c0, c1;
	struct cpusplit cs;

	sample_init(&sm);
	if (napi != tap_napi && tap_open(s, napi)) {
		point_take_error(p, s);
		return;
	}
	point_cmd(p, "xdplab-bench: tap " TAP " in %s (TUNSETIFF IFF_TAP|IFF_NO_PI%s, "
		  "O_NONBLOCK fd), up, " TAP_IP "/24", ns, napi ? "|IFF_NAPI" : "");
	if (prog != PROG_NONE) {
		char *args[] = { prog == PROG_PASS ? "pass" : "drop", TAP, "-q", "--json", NULL };

		if (sample_xdp(&sm, p, ns, TAP, args))
			return;
	}
	point_cmd(p, "xdplab-bench: writev() one %d-byte UDP frame (" PEER_IP " -> " TAP_IP
		  ":9) at a time to the tap fd for %g s", FRAME, s->duration);
	cpustat_read(&c0);
	tap_dev_write_for(&tap, &iov, 1, 256, s->duration, &w);
	cpustat_read(&c1);
	sample_xdp_stop(&sm);
	if (bench_stop)
		goto out;
	if (!w.ok) {
		point_err(p, "every writev() failed: %s", strerror(w.last_err));
		goto out;
	}
	if (prog != PROG_NONE) {
		double n = sample_xdp_count(&sm, p, prog == PROG_PASS ? "pass" : "drop");

		if (isnan(n))
			goto out;
		point_set(p, round, M_XDP_KPPS, n / w.secs / 1e3);
	}
	if (w.fail)
		point_err(p, "some writev() failed: %s", strerror(w.last_err));
	cpustat_split(&c0, &c1, &cs);
	point_set(p, round, M_KPPS, w.ok / w.secs / 1e3);
	point_set(p, round, M_FAIL_KPPS, w.fail / w.secs / 1e3);
	point_set_cpu(p, round, M_USER, &cs);
out:
	sample_done(&sm);
}

static void teardown(struct scen *s)
{
	(void)s;
	tap_close();
}

const struct scenario scen_tap = {
	.name = "tap",
	.title = "frames written to a tap fd, IFF_NAPI off and on, XDP on the tap",
	.seed = SEED_001_TAP "iperf3 through tap <-> "
		"testpmd, 4.63 -> 9.28 Gbit/s once NAPI (and so GRO) served vhost-net's batched "
		"path (Linux 5.18); Hemminger asked about sendmmsg on tap. Here one process "
		"writev()s 64-byte frames into the tap; the XDP program is xdplab's, native on "
		"the tap. Counts include the writer's own CPU time.",
	SCEN_TABLE(metrics, cols),
	.ratio_head = { "× no XDP", "× NAPI off" },
	.plot_ylabel = "frames written per second, ratio",
	.duration = 3,
	.quick_duration = 0.5,
	SCEN_HOOKS,
};
