// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * peers: the field's reference tools against ours on the same traffic.
 * Live frames (64-byte UDP, port 9 to port 9) go into veth0; on veth1 one
 * tool runs: Debian's `xdp-bench drop|pass` or `xdplab drop|pass`, or, for
 * a filtering rule, `xdp-filter` (UDP destination port 9 denied, the rest
 * allowed) or `xdplab drop --proto udp --port 9`. All are judged by the
 * same counter, veth1's rx_packets, so no tool's own accounting matters.
 *
 * With the program attached, the bench also takes it by its id and runs it
 * under BPF_PROG_TEST_RUN: on the generator's frame for a cost per frame,
 * and on a shared set of frames (the rule's own, its near misses) for the
 * verdicts, compared with what the rule says. Where xdp-bench does not load
 * (Debian's 1.3.1 attaches to the tracepoint xdp_redirect_map_err, which
 * newer kernels removed) its rows carry its error instead.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "netns.h"
#include "pkt.h"

enum { M_RX_MPPS, M_GEN_MPPS, M_TOOL_MPPS, M_NS, M_WRONG, CPU_SPLIT_SLOTS, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_RX_MPPS] = { "rx_mpps", "million frames/s received by veth1 (rx_packets)" },
	[M_GEN_MPPS] = { "gen_mpps", "million frames/s sent by the generator" },
	[M_TOOL_MPPS] = { "tool_mpps", "million frames/s the tool itself counted (xdplab only)" },
	[M_NS] = { "test_run_ns", "ns a frame of the attached program under BPF_PROG_TEST_RUN, "
				   "on the generator's frame" },
	[M_WRONG] = { "wrong_verdicts", "frames of the shared set whose verdict is not the rule's" },
	CPU_SPLIT_METRICS,
};

static const struct column cols[] = {
	{ M_RX_MPPS, "veth1 Mpps", "%.3f" },
	{ M_GEN_MPPS, "sent Mpps", "%.3f" },
	{ M_NS, "test-run ns/frame", "%.1f" },
	{ M_WRONG, "wrong verdicts", "%.0f" },
	{ M_SYS, "sys %", "%.0f" },
	{ M_SOFTIRQ, "softirq %", "%.0f" },
	{ M_IDLE, "idle %", "%.0f" },
};

enum { K_TOOL, K_RULE };
enum { TOOL_XDP_BENCH, TOOL_XDP_FILTER, TOOL_XDPLAB };
enum { RULE_DROP, RULE_PASS, RULE_UDP9 };
static const char *const rule_group[] = { "XDP_DROP", "XDP_PASS", "drop UDP dport 9" };
static const char *const rule_id[] = { "drop", "pass", "udp9" };
static const char *const tool_id[] = { "xdp-bench", "xdp-filter", "xdplab" };

/* The shared frame set: what the rule is about, and its near misses. */
static const struct verdict_frame {
	const char *what;
	int ipver, l4, sport, dport, vlan, len;
} vframes[] = {
	{ "UDP 9->9 (the generator's)", 4, PKT_UDP, 9, 9, 0, 64 },
	{ "UDP 1024->9", 4, PKT_UDP, 1024, 9, 0, 64 },
	{ "UDP 9->53", 4, PKT_UDP, 9, 53, 0, 64 },
	{ "TCP 1024->9", 4, PKT_TCP, 1024, 9, 0, 64 },
	{ "ICMP", 4, PKT_ICMP, 0, 0, 0, 64 },
	{ "IPv6 UDP 1024->9", 6, PKT_UDP, 1024, 9, 0, 80 },
	{ "802.1Q IPv4 UDP 1024->9", 4, PKT_UDP, 1024, 9, 100, 68 },
	{ "UDP 1024->9, 1500 B", 4, PKT_UDP, 1024, 9, 0, 1500 },
};
#define NVF (int)(sizeof(vframes) / sizeof(vframes[0]))
#define TEST_RUN_REPEAT 100000

static struct veth_pair vp;
static char peer_mac[18];
static unsigned char vbuf[NVF][1600];
static size_t vlen[NVF];
static bool filter_loaded;
/* Each tool's verdicts on the frame set, as letters, for the note. */
static char verdicts[3][3][NVF + 1];

static void plan(struct scen *s)
{
	for (int r = RULE_DROP; r <= RULE_UDP9; r++) {
		int base = s->npts;

		for (int t = TOOL_XDP_BENCH; t <= TOOL_XDPLAB; t++) {
			char label[64];
			struct point *p;

			if ((r == RULE_UDP9) != (t == TOOL_XDP_FILTER) && t != TOOL_XDPLAB)
				continue;
			if (r == RULE_UDP9)
				snprintf(label, sizeof(label), "%s", t == TOOL_XDPLAB ?
					 "xdplab drop --proto udp --port 9" :
					 "xdp-filter load -f udp; port 9 -p udp");
			else
				snprintf(label, sizeof(label), "%s %s", tool_id[t], rule_id[r]);
			p = scen_add(s, base, -1, rule_group[r], label, "%s/%s", rule_id[r],
				     tool_id[t]);
			p->knob[K_TOOL] = t;
			p->knob[K_RULE] = r;
		}
	}
}

static void frames_build(void)
{
	for (int i = 0; i < NVF; i++) {
		const struct verdict_frame *v = &vframes[i];
		struct pkt_spec spec = { .ipver = v->ipver, .l4 = v->l4, .sport = v->sport,
					 .dport = v->dport, .vlan = v->vlan, .len = v->len };

		memcpy(spec.dst_mac, vp.mac[1], 6);
		memcpy(spec.src_mac, vp.mac[0], 6);
		pkt_parse_ip(v->ipver == 4 ? vp.ip4[0] : "fd00:198:18::1", &spec.src);
		pkt_parse_ip(v->ipver == 4 ? vp.ip4[1] : "fd00:198:18::2", &spec.dst);
		vlen[i] = pkt_build(vbuf[i], sizeof(vbuf[i]), &spec);
	}
}

static int setup(struct scen *s)
{
	char ver[128] = "";

	filter_loaded = false;
	memset(verdicts, 0, sizeof(verdicts));
	if (veth_pair_add(&vp, "peer", 6, 0)) {
		snprintf(s->error, sizeof(s->error), "cannot make the veth pair (run with -v)");
		return -1;
	}
	mac_str(peer_mac, vp.mac[1]);
	frames_build();
	sh_out(ver, sizeof(ver), "dpkg-query -W -f='${Version}' xdp-tools 2>/dev/null");
	snprintf(s->note, sizeof(s->note),
		 "xdp-bench, xdp-filter: Debian xdp-tools %s. Every tool attaches in native mode "
		 "on veth1 (GRO off); the generator sends 64-byte UDP frames, port 9 to 9, to "
		 "veth1's address. test-run ns/frame: the attached program, taken by its id, "
		 "under BPF_PROG_TEST_RUN with repeat %d on the generator's frame.",
		 ver[0] ? ver : "(not installed)", TEST_RUN_REPEAT);
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

/*
 * xdp-filter loads, configures and exits; its maps stay pinned under
 * /sys/fs/bpf/xdp-filter until it is unloaded. It runs through nsenter
 * rather than `ip netns exec`, which would mount a fresh /sys without the
 * bpffs it pins to.
 */
static int xdp_filter(struct point *p, const char *args)
{
	char out[1024] = "";
	int st;

	if (p)
		point_cmd(p, "nsenter --net=/run/netns/%s xdp-filter %s", vp.ns[1], args);
	st = sh_out(out, sizeof(out), "nsenter --net=/run/netns/%s xdp-filter %s 2>&1",
		    vp.ns[1], args);
	if (st && p) {
		char *nl = strrchr(out, '\n');

		while (nl && nl > out && !nl[1]) {
			*nl = '\0';
			nl = strrchr(out, '\n');
		}
		point_err(p, "xdp-filter %s failed (exit %d): %s", args, st,
			  nl ? nl + 1 : out[0] ? out : "no message");
	}
	return st;
}

static void xdp_filter_unload(void)
{
	char args[64];

	if (!filter_loaded)
		return;
	snprintf(args, sizeof(args), "unload %s", vp.ifname[1]);
	xdp_filter(NULL, args);
	filter_loaded = false;
}

static int attach(struct sample *sm, struct point *p, int tool, int rule)
{
	char why[300], args[64];

	if (tool == TOOL_XDPLAB) {
		char *argv[] = { rule == RULE_PASS ? "pass" : "drop", vp.ifname[1], "-q", "--json",
				 rule == RULE_UDP9 ? "--proto" : NULL, "udp", "--port", "9",
				 NULL };

		return sample_xdp(sm, p, vp.ns[1], vp.ifname[1], argv);
	}
	if (tool == TOOL_XDP_FILTER) {
		snprintf(args, sizeof(args), "load -m native -f udp %s", vp.ifname[1]);
		if (xdp_filter(p, args)) {
			p->skip = true;
			return -1;
		}
		filter_loaded = true;
		if (xdp_filter(p, "port 9 -p udp -m dst")) {
			p->skip = true;
			return -1;
		}
		return 0;
	}
	if (child_start(&sm->xdp, vp.ns[1], (char *const[]){ "xdp-bench",
							     (char *)rule_id[rule],
							     vp.ifname[1], NULL })) {
		point_skip(p, "cannot start xdp-bench");
		return -1;
	}
	point_cmd(p, "%s &", sm->xdp.cmd);
	if (xdp_wait_attached(vp.ns[1], vp.ifname[1], &sm->xdp, 15)) {
		if (bench_stop)
			return -1;
		child_wait(&sm->xdp, 5);
		xdp_bench_why(&sm->xdp, why, sizeof(why));
		point_skip(p, "xdp-bench did not load (exit %d): %s", sm->xdp.status,
			  why[0] ? why : "no message");
		return -1;
	}
	return 0;
}

/* The program on veth1, by its id: its cost on the generator's frame and
 * its verdicts on the frame set (letters into v, NVF of them).
 */
static int test_run(struct point *p, double *ns_frame, int *wrong, char *v)
{
	int saved = netns_enter(vp.ns[1]), fd = -1, ret = -1;
	__u32 id = 0;

	if (saved < 0)
		return -1;
	if (bpf_xdp_query_id(if_nametoindex(vp.ifname[1]), 0, &id) || !id) {
		netns_leave(saved);
		point_err(p, "no program on %s to test-run", vp.ifname[1]);
		return -1;
	}
	netns_leave(saved);
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0) {
		point_err(p, "cannot open program id %u", id);
		return -1;
	}
	point_cmd(p, "xdplab-bench: bpf_prog_test_run_opts(program id %u, the generator's frame, "
		  "repeat %d) and once on each of %d frames", id, TEST_RUN_REPEAT, NVF);
	*wrong = 0;
	for (int i = 0; i < NVF; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = vbuf[i], .data_size_in = vlen[i],
			    .repeat = i ? 1 : TEST_RUN_REPEAT);
		bool drop;

		if (bpf_prog_test_run_opts(fd, &o)) {
			point_err(p, "BPF_PROG_TEST_RUN on program id %u failed", id);
			goto out;
		}
		if (!i)
			*ns_frame = o.duration;
		v[i] = o.retval == XDP_DROP ? 'D' : o.retval == XDP_PASS ? 'P' : '?';
		drop = p->knob[K_RULE] == RULE_DROP ||
		       (p->knob[K_RULE] == RULE_UDP9 && vframes[i].l4 == PKT_UDP &&
			vframes[i].dport == 9);
		*wrong += (v[i] == 'D') != drop || v[i] == '?';
	}
	v[NVF] = '\0';
	ret = 0;
out:
	close(fd);
	return ret;
}

static void sample(struct scen *s, struct point *p, int round)
{
	int tool = p->knob[K_TOOL], rule = p->knob[K_RULE], wrong;
	unsigned long long rx0, rx1;
	struct sample sm;
	double gsecs, sent, ns_frame;

	sample_init(&sm);
	if (attach(&sm, p, tool, rule))
		goto out;
	if (!test_run(p, &ns_frame, &wrong, verdicts[rule][tool])) {
		point_set(p, round, M_NS, ns_frame);
		point_set(p, round, M_WRONG, wrong);
	}
	if (link_rx(vp.ns[1], vp.ifname[1], &rx0, NULL)) {
		point_err(p, "cannot read %s counters", vp.ifname[1]);
		goto out;
	}
	if (sample_gen(&sm, s, p, vp.ns[0], vp.ifname[0], peer_mac, vp.ip4[0], vp.ip4[1], 64))
		goto out;
	if (link_rx(vp.ns[1], vp.ifname[1], &rx1, NULL))
		rx1 = rx0;
	if (tool == TOOL_XDP_BENCH)
		child_stop(&sm.xdp);
	if (sample_gen_result(&sm, p, &gsecs, &sent))
		goto out;
	point_set(p, round, M_RX_MPPS, (rx1 - rx0) / gsecs / 1e6);
	point_set(p, round, M_GEN_MPPS, sent / gsecs / 1e6);
	if (tool == TOOL_XDPLAB)
		point_set(p, round, M_TOOL_MPPS,
			  json_num(xdplab_summary(sm.xout), NULL, "rx_packets") / gsecs / 1e6);
	point_set_cpu(p, round, M_USER, &sm.cs);
out:
	if (tool == TOOL_XDP_FILTER) {
		char args[64];

		snprintf(args, sizeof(args), "unload %s", vp.ifname[1]);
		point_cmd(p, "nsenter --net=/run/netns/%s xdp-filter %s", vp.ns[1], args);
		xdp_filter_unload();
	}
	sample_done(&sm);
}

static void teardown(struct scen *s)
{
	size_t n = strlen(s->note);

	xdp_filter_unload();
	/* The verdicts, frame by frame, under the table. */
	n += snprintf(s->note + n, sizeof(s->note) - n, " Verdicts (D drop, P pass) on:");
	for (int i = 0; i < NVF && n < sizeof(s->note); i++)
		n += snprintf(s->note + n, sizeof(s->note) - n, "%s %d %s", i ? "," : "", i + 1,
			      vframes[i].what);
	for (int r = RULE_DROP; r <= RULE_UDP9; r++)
		for (int t = TOOL_XDP_BENCH; t <= TOOL_XDPLAB && n < sizeof(s->note); t++)
			if (verdicts[r][t][0])
				n += snprintf(s->note + n, sizeof(s->note) - n, "; %s %s: %s",
					      rule_group[r], tool_id[t], verdicts[r][t]);
	if (n < sizeof(s->note))
		snprintf(s->note + n, sizeof(s->note) - n, ".");
	veth_pair_del(&vp);
}

const struct scenario scen_peers = {
	.name = "peers",
	.title = "Debian's xdp-bench and xdp-filter against xdplab on the same traffic",
	.seed = "The seed threads measured with the kernel samples and xdp-tools (seed 004 "
		"used xdp-trafficgen and xdp-bench). Same generator, same veth, same counter; "
		"only the tool on veth1 changes.",
	SCEN_TABLE(metrics, cols),
	.ratio_head = { "× the peer" },
	.plot_ylabel = "veth1 Mpps, ratio to the peer tool",
	.duration = 3,
	.quick_duration = 0.5,
	SCEN_HOOKS,
};
