// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The live-frames traffic generator: BPF_PROG_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES runs xdp_trafficgen on a frame we build, and
 * its bpf_redirect() really transmits, batch by batch, from kernel context.
 * No socket and no skb on the way out: the cheapest way to load a driver's
 * ndo_xdp_xmit, or a veth peer's XDP RX path, from one core.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>

#include "core.h"
#include "pkt.h"
#include "xdp_trafficgen.skel.h"

struct gen_opts {
	struct pkt_spec spec;
	const char *src_ip, *dst_ip;
	bool dst_mac_set, src_mac_set;
	unsigned long long count;	/* 0: until duration or Ctrl-C */
	int threads;
	__u32 batch;
};

struct worker {
	pthread_t tid;
	int cpu;
	int prog_fd;
	const void *frame;
	__u32 len, batch;
	unsigned long long todo;	/* 0: no limit */
	int err;
};

static int running;	/* workers still sending; the last one out ends the run */

enum { OPT_SRC_IP = 0x400, OPT_DST_IP, OPT_SRC_MAC, OPT_DST_MAC, OPT_SPORT, OPT_DPORT,
       OPT_BATCH };

static const struct argp_option options[] = {
	{ "size", 's', "BYTES", 0, "frame size without FCS (default 64; 42 to about 3400)", 0 },
	{ "count", 'n', "N", 0, "send N frames (default: until -d or Ctrl-C)", 0 },
	{ "threads", 't', "N", 0, "sending threads, one per CPU (default 1)", 0 },
	{ "ipv6", '6', NULL, 0, "IPv6 (default IPv4)", 0 },
	{ "src-ip", OPT_SRC_IP, "ADDR", 0, "default 198.18.0.1 or fd00:198:18::1", 0 },
	{ "dst-ip", OPT_DST_IP, "ADDR", 0, "default 198.18.0.2 or fd00:198:18::2", 0 },
	{ "src-mac", OPT_SRC_MAC, "MAC", 0, "default IFNAME's address", 0 },
	{ "dst-mac", OPT_DST_MAC, "MAC", 0, "default ff:ff:ff:ff:ff:ff", 0 },
	{ "sport", OPT_SPORT, "PORT", 0, "UDP source port (default 9)", 0 },
	{ "dport", OPT_DPORT, "PORT", 0, "UDP destination port (default 9)", 0 },
	{ "batch", OPT_BATCH, "N", 0, "frames per kernel batch (default 64)", 0 },
	{},
};

static unsigned long long num(const char *arg, unsigned long long max, struct argp_state *st)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 0);

	if (*end || !*arg || v > max)
		xdplab_usage_err(st, NULL, "'%s' is not a number up to %llu", arg, max);
	return v;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	struct xdplab_opts *o = state->input;
	struct gen_opts *g = o->extra;

	switch (key) {
	case 's':
		xdplab_opt_once(state, key, "--size");
		g->spec.len = num(arg, 65535, state);
		break;
	case 'n':
		xdplab_opt_once(state, key, "--count");
		g->count = num(arg, ~0ULL, state);
		break;
	case 't':
		xdplab_opt_once(state, key, "--threads");
		g->threads = num(arg, 256, state);
		if (!g->threads)
			xdplab_usage_err(state, "-t 1 or more", "--threads must be at least 1");
		break;
	case '6':
		g->spec.ipver = 6;
		break;
	case OPT_SRC_IP:
		xdplab_opt_once(state, key, "--src-ip");
		g->src_ip = arg;
		break;
	case OPT_DST_IP:
		xdplab_opt_once(state, key, "--dst-ip");
		g->dst_ip = arg;
		break;
	case OPT_SRC_MAC:
	case OPT_DST_MAC:
		xdplab_opt_once(state, key, key == OPT_SRC_MAC ? "--src-mac" : "--dst-mac");
		if (pkt_parse_mac(arg, key == OPT_SRC_MAC ? g->spec.src_mac : g->spec.dst_mac))
			xdplab_usage_err(state, "six hex bytes, as in 02:00:00:00:00:02",
					 "'%s' is not a MAC address", arg);
		*(key == OPT_SRC_MAC ? &g->src_mac_set : &g->dst_mac_set) = true;
		break;
	case OPT_SPORT:
		xdplab_opt_once(state, key, "--sport");
		g->spec.sport = num(arg, 65535, state);
		break;
	case OPT_DPORT:
		xdplab_opt_once(state, key, "--dport");
		g->spec.dport = num(arg, 65535, state);
		break;
	case OPT_BATCH:
		xdplab_opt_once(state, key, "--batch");
		g->batch = num(arg, 256, state);
		if (!g->batch)
			xdplab_usage_err(state, "--batch 1 to 256", "--batch must be at least 1");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct xdplab_cmd_desc desc = {
	.name = "trafficgen",
	.args_doc = "IFNAME",
	.nargs = 1,
	.no_attach = true,
	.options = options,
	.parser = parse,
	.doc = "Send UDP frames out of IFNAME from kernel context with BPF_PROG_RUN live\n"
	       "frames (Linux 5.18+). Nothing is attached anywhere.\v"
	       "On a veth the frames arrive at the peer's XDP program (or, with GRO on,\n"
	       "its stack); without either the peer drops them.\n"
	       "Examples:\n"
	       "  xdplab trafficgen veth0 -d 5                 64-byte IPv4 for 5 s\n"
	       "  xdplab trafficgen veth0 -n 1000000 -s 1500 -6\n"
	       "  xdplab trafficgen veth0 -t 2 --dst-mac 02:00:00:00:00:02 --dport 7",
};

static int ip_or_default(const char *s, int ipver, const char *def4, const char *def6,
			 struct in6_addr *a)
{
	int v = pkt_parse_ip(s ?: (ipver == 6 ? def6 : def4), a);

	if (v != ipver)
		return xdplab_err("--src-ip/--dst-ip must match the IP version (-6 for IPv6)",
				  "'%s' is not an IPv%d address", s, ipver);
	return 0;
}

static void *send_loop(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!xdplab_exiting) {
		/* Chunks short enough that Ctrl-C and -d take effect promptly. */
		__u32 n = w->todo && w->todo < (1 << 16) ? w->todo : (1 << 16);
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			    .data_in = w->frame,
			    .data_size_in = w->len,
			    .repeat = n,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			    .batch_size = w->batch);

		if (bpf_prog_test_run_opts(w->prog_fd, &opts)) {
			w->err = -errno;
			break;
		}
		if (w->todo && !(w->todo -= n))
			break;
	}
	if (__atomic_sub_fetch(&running, 1, __ATOMIC_SEQ_CST) == 0)
		xdplab_exiting = 1;
	return NULL;
}

struct gen_run {
	struct worker *w;
	int n;		/* workers to start */
	int started;
	bool joined;
};

/* Called once the stats loop has its baseline, so no frame goes uncounted. */
static void start_workers(void *ctx, const struct xdplab_opts *o)
{
	struct gen_run *gen = ctx;

	(void)o;
	for (int i = 0; i < gen->n; i++) {
		__atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST);
		if (pthread_create(&gen->w[i].tid, NULL, send_loop, &gen->w[i])) {
			__atomic_sub_fetch(&running, 1, __ATOMIC_SEQ_CST);
			xdplab_err(NULL, "cannot start sending thread %d", i);
			xdplab_exiting = 1;
			return;
		}
		gen->started++;
	}
}

/* The summary is taken after this: every frame a worker sent is in it. */
static void stop_workers(void *ctx, const struct xdplab_opts *o)
{
	struct gen_run *gen = ctx;

	(void)o;
	xdplab_exiting = 1;
	for (int i = 0; i < gen->started; i++)
		pthread_join(gen->w[i].tid, NULL);
	gen->joined = true;
}

int cmd_trafficgen(int argc, char **argv)
{
	struct gen_opts g = { .threads = 1, .batch = 64,
			      .spec = { .ipver = 4, .l4 = PKT_UDP, .sport = 9, .dport = 9,
					.len = 64 } };
	struct xdp_trafficgen_bpf *s = NULL;
	struct worker *w = NULL;
	struct xdplab_opts o;
	struct gen_run gen = {};
	const struct xdplab_hooks hooks = { .ctx = &gen, .started = start_workers,
					    .stopping = stop_workers };
	int ncpu = libbpf_num_possible_cpus(), err, ret = 1;
	unsigned char frame[4096];
	struct ifreq ifr = {};

	xdplab_opts_init(&o);
	o.xdp_flags = 0;	/* attaches nothing */
	o.extra = &g;
	xdplab_parse_cmd(&desc, argc, argv, &o);
	if (!g.dst_mac_set)
		memset(g.spec.dst_mac, 0xff, 6);
	if (ip_or_default(g.src_ip, g.spec.ipver, "198.18.0.1", "fd00:198:18::1", &g.spec.src) ||
	    ip_or_default(g.dst_ip, g.spec.ipver, "198.18.0.2", "fd00:198:18::2", &g.spec.dst))
		return 1;
	if (g.spec.len < pkt_hdr_len(&g.spec) || g.spec.len > sizeof(frame))
		return xdplab_err(NULL, "frame size %zu out of range: %zu to %zu for IPv%d UDP",
				  g.spec.len, pkt_hdr_len(&g.spec), sizeof(frame), g.spec.ipver);
	if (xdplab_check_env(&o) || xdplab_check_iface(&o))
		return 1;
	if (!g.src_mac_set) {
		int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o.ifname);
		if (sk >= 0 && !ioctl(sk, SIOCGIFHWADDR, &ifr))
			memcpy(g.spec.src_mac, ifr.ifr_hwaddr.sa_data, 6);
		if (sk >= 0)
			close(sk);
	}
	pkt_build(frame, sizeof(frame), &g.spec);

	s = xdp_trafficgen_bpf__open_opts(xdplab_open_opts(&o));
	if (!s)
		return xdplab_load_err("xdp_trafficgen", -errno);
	s->rodata->cfg.ifindex = o.ifindex;
	err = xdp_trafficgen_bpf__load(s);
	if (err) {
		ret = xdplab_load_err("xdp_trafficgen", err);
		goto out;
	}

	w = calloc(g.threads, sizeof(*w));
	if (!w)
		goto out;
	for (int i = 0; i < g.threads; i++) {
		w[i] = (struct worker){ .cpu = i % ncpu,
					.prog_fd = bpf_program__fd(s->progs.xdp_trafficgen),
					.frame = frame, .len = g.spec.len, .batch = g.batch };
		/* Split the count; the first threads take the remainder. */
		if (g.count)
			w[i].todo = g.count / g.threads + ((unsigned long long)i < g.count % g.threads);
	}
	gen.w = w;
	gen.n = g.count && g.count < (unsigned long long)g.threads ? (int)g.count : g.threads;
	if (!o.json)
		fprintf(stderr, "sending %zu-byte IPv%d UDP frames out of %s with %d thread%s; Ctrl-C to stop\n",
			g.spec.len, g.spec.ipver, o.ifname, gen.n, gen.n > 1 ? "s" : "");
	/* Ends on -d, a signal, or the last worker finishing its count. */
	xdplab_stats_loop(&o, "xdp_trafficgen", s->maps.xdp_stats, &hooks);
	xdplab_exiting = 1;
	ret = gen.started < gen.n;
	for (int i = 0; i < gen.started; i++) {
		if (!gen.joined)
			pthread_join(w[i].tid, NULL);
		if (w[i].err) {
			ret = xdplab_err(w[i].err == -EINVAL && g.spec.len > 1500 ?
					 "live frames must fit one page with headroom: about 3400 bytes on 4K pages" :
					 w[i].err == -EINVAL ? "BPF_F_TEST_XDP_LIVE_FRAMES needs Linux 5.18 or later" :
					 NULL, "BPF_PROG_RUN with live frames failed: %s", strerror(-w[i].err));
			break;
		}
	}
out:
	free(w);
	xdp_trafficgen_bpf__destroy(s);
	return ret;
}
