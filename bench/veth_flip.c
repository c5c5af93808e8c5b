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
 * One sample = one stream of PAIRS base/test window pairs; its ratio is
 * the test windows' bytes per second over the base windows'. The base
 * windows run no program, except in the XDP_TX echo point, whose base
 * is the same program opted out of GSO superframes.
 *
 * Issue 18's worst cases of the veth GSO series have points of their own
 * here, so each is a ratio inside one stream and, under -icount, a rate
 * that compares across kernels (bench/compare-kernels.sh prints the test
 * windows' rate ÷ the first kernel's):
 *   pass-frags-nogso  `xdplab pass --frags --no-gso`: a frags program
 *                     that does not ask for superframes (BPF_F_XDP_GSO),
 *                     which must get stock's path and cost;
 *   write-frags       a frags program, opted in, that rewrites the last
 *                     byte of every TCP frame with payload (in the last
 *                     fragment of a multi-buffer one): on the series the
 *                     shared fragments are copied first (0007). xdplab's
 *                     programs never write the payload (the contract
 *                     behind their opt-in), so the bench loads
 *                     xdp_gso_test in its GSO_TEST_WRITE_PASS mode itself
 *                     and attaches it with libbpf;
 *   redirect-frags    TCP from ns A through veth0 -> veth1 (ns B) to an
 *                     iperf3 server behind veth2 -> veth3 (ns C): base
 *                     windows forwarded by ns B's stack, test windows
 *                     `xdplab redirect veth1 veth2 --frags`; rate = veth3's
 *                     rx bytes. veth3 has GRO on (a veth takes redirected
 *                     frames only with NAPI) and veth1's MAC, so the
 *                     redirected frames are for it. csum-on: veth0 as
 *                     created (checksum offload and TSO on, so the series'
 *                     program gets superframes); csum-off: `ethtool -K
 *                     veth0 tx off` (checksums done by the sender, no TSO),
 *                     stock's only working set-up, since an xdp_frame
 *                     cannot carry CHECKSUM_PARTIAL and ns C's TCP drops
 *                     what stock redirects with the offload on;
 *                     With the offload on, TCP stalls on both kernels: the
 *                     series segments superframes with their checksums
 *                     done, but a one-MSS TCP skb (a retransmission, a
 *                     tail) is no GSO skb and leaves as stock's do, its
 *                     checksum unfinished; ns C drops it (csum errors);
 *   redirect-udp      the same path for UDP_SEGMENT datagrams of about
 *                     64 KB (every skb a GSO one): from a bench thread in
 *                     ns A to ns C, `xdplab drop veth3 --frags --no-gso
 *                     --proto udp --port 7` takes them there (the same on
 *                     every kernel: veth2 segments what ns B forwards);
 *                     base windows forwarded by ns B, test windows
 *                     `xdplab redirect veth1 veth2 --frags`; rate = veth3's
 *                     rx bytes. What it measures is the redirect of
 *                     superframes that the TCP points cannot show;
 *   tx-udp            XDP_TX of superframes: UDP, not TCP (a frame echoed
 *                     by XDP_TX with only its MACs swapped goes back to
 *                     the sender, nothing receives or ACKs the stream, and
 *                     TCP stalls at its first window). The bench sends
 *                     UDP_SEGMENT datagrams of about 64 KB from ns A to
 *                     veth1's address, `xdplab tx veth1 --frags --proto
 *                     udp --port 7` echoes them (MACs swapped, nothing
 *                     else), `xdplab drop veth0 --frags --proto udp
 *                     --port 7` takes the
 *                     echoes in ns A (veth kicks the NAPI of an XDP_TX
 *                     target only when it has a program: with GRO alone
 *                     its ring fills once and every later XDP_TX fails),
 *                     and the rate is veth0's rx bytes (the echoes, one
 *                     frame a segment on either kernel). Base windows:
 *                     the same program with --no-gso.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "netns.h"
#include <linux/types.h>
#include "xdplab.h"
#include "xdp_gso_test.h"
#include "xdp_gso_test.skel.h"
#include "xdp_probe.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define PAIRS 4
#define QUICK_PAIRS 2	/* -q: one ABBA cycle, so the quick run stays under 3 min */
#define SETTLE_SECS 2.0	/* after the stream starts: slow start, autotuning */

enum { M_RATIO, M_GBPS_NONE, M_GBPS_XDP, M_MB_SHARE, M_PAIR_MIN, M_PAIR_MAX, M_OPT_IN, M_CSUM_ERR, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_RATIO] = { "ratio", "test ÷ base windows' rate" },
	[M_GBPS_NONE] = { "gbps_none", "Gbit/s, base windows (no XDP; tx-udp: opted out)" },
	[M_GBPS_XDP] = { "gbps_xdp", "Gbit/s, test (XDP) windows" },
	[M_MB_SHARE] = { "mb_share", "% of the program's frames that were multi-buffer" },
	[M_PAIR_MIN] = { "pair_min", "lowest ratio of one window pair" },
	[M_PAIR_MAX] = { "pair_max", "highest ratio of one window pair" },
	[M_OPT_IN] = { "gso_opt_in", "1: the test program was loaded with BPF_F_XDP_GSO" },
	[M_CSUM_ERR] = { "csum_errors", "TCP segments the receiver dropped for a bad checksum (redirect)" },
};

static const struct column cols[] = {
	{ M_RATIO, "XDP ÷ no XDP, one stream", "%.3f" },
	{ M_GBPS_NONE, "base Gbit/s", "%.2f" },
	{ M_GBPS_XDP, "XDP Gbit/s", "%.2f" },
	{ M_MB_SHARE, "multi-buffer %", "%.0f" },
	{ M_OPT_IN, "opt-in", "%.0f" },
	{ M_PAIR_MIN, "pair min", "%.2f" },
	{ M_PAIR_MAX, "pair max", "%.2f" },
	{ M_CSUM_ERR, "csum errors", "%.0f" },
};

/* What runs in a window: nothing, an `xdplab` command on veth1, or the
 * bench's own writer (xdp_gso_test, GSO_TEST_WRITE_PASS).
 */
enum prog { P_NONE, P_PASS, P_PASS_FRAGS, P_PASS_FRAGS_NOGSO, P_WRITE_FRAGS, P_REDIRECT_FRAGS,
	    P_TX_FRAGS, P_TX_FRAGS_NOGSO };
/* Where the stream goes and which counter is the rate. */
enum topo {
	T_PAIR,		/* iperf3 to ns B; veth0's tx bytes */
	T_ROUTED,	/* iperf3 to ns C through ns B; veth3's rx bytes */
	T_ECHO,		/* UDP GSO to veth1, echoed; veth0's rx bytes */
	T_ROUTED_UDP,	/* UDP GSO to ns C through ns B; veth3's rx bytes */
};

enum { K_MTU, K_DEF };

#define ECHO_PORT 7

static const struct flip_def {
	const char *id, *label;
	int mtu;
	enum prog base, test;
	enum topo topo;
	bool tx_csum_off;	/* ethtool -K veth0 tx off */
} defs[] = {
	{ "pass-frags", "XDP_PASS frags, GRO off", 1500, P_NONE, P_PASS_FRAGS, T_PAIR, false },
	{ "pass-frags", "XDP_PASS frags, GRO off", 8000, P_NONE, P_PASS_FRAGS, T_PAIR, false },
	{ "pass", "XDP_PASS non-frags, GRO off", 1500, P_NONE, P_PASS, T_PAIR, false },
	{ "pass-frags-nogso", "XDP_PASS frags --no-gso, GRO off", 1500, P_NONE, P_PASS_FRAGS_NOGSO,
	  T_PAIR, false },
	{ "pass-frags-nogso", "XDP_PASS frags --no-gso, GRO off", 8000, P_NONE, P_PASS_FRAGS_NOGSO,
	  T_PAIR, false },
	{ "write-frags", "frags, writes payload (COW), GRO off", 1500, P_NONE, P_WRITE_FRAGS,
	  T_PAIR, false },
	{ "write-frags", "frags, writes payload (COW), GRO off", 8000, P_NONE, P_WRITE_FRAGS,
	  T_PAIR, false },
	{ "redirect-frags/csum-on", "REDIRECT frags ÷ forwarded, csum on", 1500, P_NONE,
	  P_REDIRECT_FRAGS, T_ROUTED, false },
	{ "redirect-frags/csum-off", "REDIRECT frags ÷ forwarded, csum off", 1500, P_NONE,
	  P_REDIRECT_FRAGS, T_ROUTED, true },
	{ "tx-udp", "XDP_TX UDP GSO echo, opt-in ÷ --no-gso", 1500, P_TX_FRAGS_NOGSO, P_TX_FRAGS,
	  T_ECHO, false },
	{ "redirect-udp", "REDIRECT UDP GSO ÷ forwarded", 1500, P_NONE, P_REDIRECT_FRAGS,
	  T_ROUTED_UDP, false },
};

static struct iperf_pair ip;
/* ns C behind ns B: veth2 (ns B) -- veth3 (ns C), iperf3 -s in ns C */
static struct veth_pair vp2;
static struct child server_c = { .pid = -1 };
static int mtu2, cur_csum_off, cur_gro0;

static void plan(struct scen *s)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		const struct flip_def *d = &defs[i];
		char group[32];
		struct point *p;

		snprintf(group, sizeof(group), "MTU %d", d->mtu);
		/* the ids veth-flip always had end in /gro-off */
		if (d->topo == T_PAIR)
			p = scen_add(s, -1, -1, group, d->label, "mtu%d/%s/gro-off", d->mtu, d->id);
		else
			p = scen_add(s, -1, -1, group, d->label, "mtu%d/%s", d->mtu, d->id);
		p->knob[K_MTU] = d->mtu;
		p->knob[K_DEF] = (int)i;
	}
}

/* Is any selected point one of the routed ones? Only then ns C is made. */
static bool need_routed(struct scen *s)
{
	for (int i = 0; i < s->npts; i++)
		if (s->pts[i].selected && (defs[s->pts[i].knob[K_DEF]].topo == T_ROUTED ||
					   defs[s->pts[i].knob[K_DEF]].topo == T_ROUTED_UDP))
			return true;
	return false;
}

static int setup(struct scen *s)
{
	char nsc[NETNS_NAME_MAX];
	char mac[18];

	cur_csum_off = 0;
	cur_gro0 = 0;
	mtu2 = 1500;
	memset(&vp2, 0, sizeof(vp2));
	server_c.pid = -1;
	if (iperf_pair_setup(&ip, s, "flip", 2, 1500, true))
		return -1;
	if (!need_routed(s))
		return 0;
	mac_str(mac, ip.vp.mac[1]);
	if (scen_netns_add(s, "flipc", nsc) ||
	    veth_pair_join(&vp2, ip.vp.ns[1], "veth2", nsc, "veth3", 3, 1500) ||
	    sh("ip netns exec %s sysctl -qw net.ipv4.ip_forward=1", ip.vp.ns[1]) ||
	    sh("ip -n %s route add 198.18.3.0/24 via %s", ip.vp.ns[0], ip.vp.ip4[1]) ||
	    sh("ip -n %s route add 198.18.2.0/24 via %s", nsc, vp2.ip4[0]) ||
	    /* redirected frames keep veth1's MAC as their destination */
	    sh("ip -n %s link set dev veth3 address %s", nsc, mac) ||
	    set_gro(nsc, "veth3", true)) {
		if (!s->error[0])
			snprintf(s->error, sizeof(s->error),
				 "cannot make ns C behind ns B (run with -v)");
		return -1;
	}
	return iperf3_server(&server_c, nsc, bench.port, s->error, sizeof(s->error));
}

/* The point's topology: MTU of the links it uses, veth0's checksum
 * offload and GRO; the commands go to p.
 */
static int topo_set(struct point *p, const struct flip_def *d)
{
	const char *ns0 = ip.vp.ns[0], *if0 = ip.vp.ifname[0];
	int gro0 = 0;

	if (iperf_pair_mtu(&ip, p, d->mtu))
		return -1;
	if (d->topo == T_ROUTED || d->topo == T_ROUTED_UDP) {
		if (!vp2.ns[0][0]) {
			point_skip(p, "ns C was not set up");
			return -1;
		}
		if (mtu2 != d->mtu &&
		    (sh("ip -n %s link set dev veth2 mtu %d", vp2.ns[0], d->mtu) ||
		     sh("ip -n %s link set dev veth3 mtu %d", vp2.ns[1], d->mtu))) {
			point_err(p, "cannot set MTU %d on veth2/veth3", d->mtu);
			return -1;
		}
		mtu2 = d->mtu;
		point_cmd(p, "ip -n %s link set dev veth2 mtu %d", vp2.ns[0], d->mtu);
		point_cmd(p, "ip -n %s link set dev veth3 mtu %d", vp2.ns[1], d->mtu);
	}
	if (cur_csum_off != d->tx_csum_off) {
		if (sh("ip netns exec %s ethtool -K %s tx %s", ns0, if0,
		       d->tx_csum_off ? "off" : "on")) {
			point_err(p, "cannot set tx checksumming on %s", if0);
			return -1;
		}
		cur_csum_off = d->tx_csum_off;
	}
	if (d->tx_csum_off)
		point_cmd(p, "ip netns exec %s ethtool -K %s tx off", ns0, if0);
	return gro_set(p, ns0, if0, &cur_gro0, gro0);
}

/* The rate's counter: a /proc/net/dev opened inside the interface's
 * namespace (the open file stays bound to it); cheap enough to take at
 * the edges of a window without an `ip` process in between.
 */
struct counter {
	int fd;
	const char *ifname;
	int col;		/* 0: rx bytes, 8: tx bytes */
};

static int counter_open(struct counter *c, const char *ns, const char *ifname, int col)
{
	int saved = netns_enter(ns);

	c->fd = -1;
	c->ifname = ifname;
	c->col = col;
	if (saved < 0)
		return -1;
	c->fd = open("/proc/thread-self/net/dev", O_RDONLY | O_CLOEXEC);
	netns_leave(saved);
	return c->fd;
}

static double counter_read(const struct counter *c)
{
	char buf[8192], *l;
	size_t n = strlen(c->ifname);
	ssize_t len = pread(c->fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return NAN;
	buf[len] = '\0';
	for (l = buf; l; l = strchr(l, '\n')) {
		unsigned long long v[9];

		while (*l == '\n' || *l == ' ')
			l++;
		if (strncmp(l, c->ifname, n) || l[n] != ':')
			continue;
		/* rx: bytes packets errs drop fifo frame compressed multicast, then tx bytes */
		if (sscanf(l + n + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9)
			return v[c->col];
	}
	return NAN;
}

/* Tcp InCsumErrors of the namespace whose /proc/net/snmp fd is: what its
 * TCP dropped for a bad checksum (the routed points' receiver, where a
 * redirected CHECKSUM_PARTIAL frame arrives unfinished on stock).
 */
static int snmp_open(const char *ns)
{
	int saved = netns_enter(ns), fd;

	if (saved < 0)
		return -1;
	fd = open("/proc/thread-self/net/snmp", O_RDONLY | O_CLOEXEC);
	netns_leave(saved);
	return fd;
}

static double tcp_csum_errors(int fd)
{
	char buf[8192], *head, *vals, *h, *v, *sh, *sv;
	ssize_t len = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return NAN;
	buf[len] = '\0';
	head = strstr(buf, "\nTcp: ");
	vals = head ? strstr(head + 1, "\nTcp: ") : NULL;
	if (!vals)
		return NAN;
	*strchrnul(head + 1, '\n') = '\0';
	*strchrnul(vals + 1, '\n') = '\0';
	for (h = strtok_r(head + 6, " ", &sh), v = strtok_r(vals + 6, " ", &sv); h && v;
	     h = strtok_r(NULL, " ", &sh), v = strtok_r(NULL, " ", &sv))
		if (!strcmp(h, "InCsumErrors"))
			return strtod(v, NULL);
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

/* ---- the UDP GSO sender of the XDP_TX echo point (a thread of the bench) ---- */

struct udp_gso_sender {
	pthread_t thr;
	bool running;
	volatile int stop;
	char ns[NETNS_NAME_MAX];
	char dst[16];
	int gso_size, err;
	unsigned long long sends;
};

static void *udp_gso_send(void *arg)
{
	struct udp_gso_sender *u = arg;
	static char buf[65507];
	int saved = netns_enter(u->ns), fd = -1, segs = 65507 / u->gso_size;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(ECHO_PORT) };
	size_t len;

	if (saved < 0) {
		u->err = ENOENT;
		return NULL;
	}
	if (bench.pin) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	netns_leave(saved);
	if (segs > 64)
		segs = 64;	/* UDP_MAX_SEGMENTS */
	len = (size_t)segs * u->gso_size;
	inet_pton(AF_INET, u->dst, &dst.sin_addr);
	if (fd < 0 || setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &u->gso_size, sizeof(int)) ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		u->err = errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	memset(buf, 0x5a, sizeof(buf));
	while (!u->stop && !bench_stop) {
		/* ECONNREFUSED: an ICMP port unreachable while no program
		 * was attached (between windows); ENOBUFS: a full qdisc
		 */
		if (send(fd, buf, len, 0) > 0)
			u->sends++;
		else if (errno != ECONNREFUSED && errno != ENOBUFS && errno != EAGAIN) {
			u->err = errno;
			break;
		}
	}
	close(fd);
	return NULL;
}

static int udp_gso_start(struct udp_gso_sender *u, struct point *p, int mtu, const char *dst)
{
	memset(u, 0, sizeof(*u));
	snprintf(u->ns, sizeof(u->ns), "%s", ip.vp.ns[0]);
	snprintf(u->dst, sizeof(u->dst), "%s", dst);
	u->gso_size = mtu - 28;
	if (pthread_create(&u->thr, NULL, udp_gso_send, u)) {
		point_err(p, "cannot start the UDP GSO sender");
		return -1;
	}
	u->running = true;
	point_cmd(p, "(bench thread in %s: UDP to %s:%d, UDP_SEGMENT %d, %d-byte send()s)",
		  u->ns, u->dst, ECHO_PORT, u->gso_size,
		  (65507 / u->gso_size > 64 ? 64 : 65507 / u->gso_size) * u->gso_size);
	return 0;
}

static void udp_gso_stop(struct udp_gso_sender *u)
{
	if (!u->running)
		return;
	u->stop = 1;
	pthread_join(u->thr, NULL);
	u->running = false;
}

/* ---- the bench's own writer (write-frags) ---- */

struct writer {
	struct xdp_gso_test_bpf *skel;
	int fd, ifindex;
	bool opt_in;
};

/* Loads xdp_gso_test_frags in GSO_TEST_WRITE_PASS mode, with
 * BPF_F_XDP_GSO where the kernel takes it (as `xdplab --frags` would for
 * a program that may ask), else without.
 */
static int writer_load(struct writer *w, struct point *p, int mtu)
{
	for (int gso = 1; gso >= 0; gso--) {
		struct xdp_gso_test_bpf *sk = xdp_gso_test_bpf__open();
		struct bpf_program *fp;

		if (!sk)
			break;
		sk->rodata->gso_cfg.mode = GSO_TEST_WRITE_PASS;
		sk->rodata->gso_cfg.mtu = mtu;
		fp = sk->progs.xdp_gso_test_frags;
		bpf_program__set_autoload(sk->progs.xdp_gso_test, false);
		libbpf_print_fn_t prev = NULL;
		int err;

		if (gso) {
			bpf_program__set_flags(fp, bpf_program__flags(fp) | BPF_F_XDP_GSO);
			sk->rodata->cfg.gso_opt_in = 1;
			/* EINVAL on a kernel without the flag: not worth a log */
			prev = libbpf_set_print(NULL);
		}
		err = xdp_gso_test_bpf__load(sk);
		if (gso)
			libbpf_set_print(prev);
		if (!err) {
			w->skel = sk;
			w->fd = bpf_program__fd(fp);
			w->opt_in = gso;
			w->ifindex = netns_ifindex(ip.vp.ns[1], ip.vp.ifname[1]);
			point_cmd(p, "(bench: build/xdp_gso_test.bpf.o xdp_gso_test_frags, mode "
				  "GSO_TEST_WRITE_PASS%s, attached native to %s in %s)",
				  gso ? ", BPF_F_XDP_GSO" : "", ip.vp.ifname[1], ip.vp.ns[1]);
			return 0;
		}
		xdp_gso_test_bpf__destroy(sk);
	}
	point_skip(p, "cannot load xdp_gso_test (GSO_TEST_WRITE_PASS)");
	return -1;
}

/* Attaches (fd >= 0) or detaches the writer on veth1 in ns B. */
static int writer_set(struct writer *w, bool on)
{
	int saved = netns_enter(ip.vp.ns[1]), err;

	if (saved < 0)
		return -1;
	err = on ? bpf_xdp_attach(w->ifindex, w->fd, XDP_FLAGS_DRV_MODE, NULL) :
		   bpf_xdp_detach(w->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	netns_leave(saved);
	return err;
}

static double writer_count(struct writer *w, int slot)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 key = slot;
	double sum = 0;

	if (ncpu <= 0)
		return NAN;
	{
		__u64 v[ncpu];

		if (bpf_map_lookup_elem(bpf_map__fd(w->skel->maps.gso_counts), &key, v))
			return NAN;
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	}
	return sum;
}

static void writer_free(struct writer *w)
{
	if (w->skel)
		xdp_gso_test_bpf__destroy(w->skel);
	w->skel = NULL;
}

/* `xdplab ...` arguments of a program; NULL for none and the writer. */
static int prog_args(enum prog pr, char *args[12])
{
	static char port[8];
	int n = 0;

	snprintf(port, sizeof(port), "%d", ECHO_PORT);
	switch (pr) {
	case P_NONE:
	case P_WRITE_FRAGS:
		return 0;
	case P_PASS:
	case P_PASS_FRAGS:
	case P_PASS_FRAGS_NOGSO:
		args[n++] = "pass";
		args[n++] = ip.vp.ifname[1];
		args[n++] = pr == P_PASS ? "--no-frags" : "--frags";
		if (pr == P_PASS_FRAGS_NOGSO)
			args[n++] = "--no-gso";
		break;
	case P_REDIRECT_FRAGS:
		args[n++] = "redirect";
		args[n++] = ip.vp.ifname[1];
		args[n++] = "veth2";
		args[n++] = "--frags";
		break;
	case P_TX_FRAGS:
	case P_TX_FRAGS_NOGSO:
		args[n++] = "tx";
		args[n++] = ip.vp.ifname[1];
		args[n++] = "--frags";
		if (pr == P_TX_FRAGS_NOGSO)
			args[n++] = "--no-gso";
		args[n++] = "--proto";
		args[n++] = "udp";
		args[n++] = "--port";
		args[n++] = port;
		break;
	}
	args[n++] = "-q";
	args[n++] = "--json";
	args[n] = NULL;
	return n;
}

static void sample(struct scen *s, struct point *p, int round)
{
	const struct flip_def *d = &defs[p->knob[K_DEF]];
	struct counter ctr = { .fd = -1 };
	int snmp = -1;
	double csum0 = NAN;
	char port[16];
	struct child xdp = { .pid = -1 }, cli = { .pid = -1 }, sink = { .pid = -1 };
	struct udp_gso_sender udp = { .running = false };
	struct writer wr = { .skel = NULL };
	char *args[2][12];
	bool attached = false;
	double win = s->duration, bytes[2] = { 0 }, secs[2] = { 0 }, pair[PAIRS][2];
	int npairs = bench.quick ? QUICK_PAIRS : PAIRS;
	double frames = 0, mb = 0, pmin = INFINITY, pmax = 0, opt_in = 0;
	size_t cmd_len = 0;

	(void)s;
	if (iperf_pair_serve(&ip, s, p) || topo_set(p, d))
		return;
	prog_args(d->base, args[0]);
	prog_args(d->test, args[1]);
	if (d->test == P_WRITE_FRAGS && writer_load(&wr, p, d->mtu))
		goto out;
	switch (d->topo) {
	case T_PAIR:
		counter_open(&ctr, ip.vp.ns[0], ip.vp.ifname[0], 8);
		break;
	case T_ROUTED:
		counter_open(&ctr, vp2.ns[1], "veth3", 0);
		snmp = snmp_open(vp2.ns[1]);
		csum0 = tcp_csum_errors(snmp);
		break;
	case T_ECHO:
		counter_open(&ctr, ip.vp.ns[0], ip.vp.ifname[0], 0);
		break;
	case T_ROUTED_UDP:
		counter_open(&ctr, vp2.ns[1], "veth3", 0);
		break;
	}
	if (ctr.fd < 0 || isnan(counter_read(&ctr))) {
		point_err(p, "cannot read %s's counters", ctr.ifname);
		goto out;
	}
	snprintf(port, sizeof(port), "%d", bench.port);
	if (d->topo == T_ECHO) {
		/* only the echoes: ARP must reach veth0, or the neighbour entry
		 * of veth1 fails once it goes stale and the sender stops
		 */
		char *drop[] = { "drop", ip.vp.ifname[0], "--frags", "--proto", "udp", "--port", "7",
				 "-q", "--json", NULL };

		if (xdplab_start(&sink, p, ip.vp.ns[0], ip.vp.ifname[0], drop)) {
			p->skip = !bench_stop;
			goto out;
		}
		if (udp_gso_start(&udp, p, d->mtu, ip.vp.ip4[1]))
			goto out;
	} else if (d->topo == T_ROUTED_UDP) {
		/* The sink in ns C: the same on every kernel (--no-gso: veth2
		 * segments what ns B forwards, as on stock), and it lets ARP
		 * through.
		 */
		char *drop[] = { "drop", "veth3", "--frags", "--no-gso", "--proto", "udp",
				 "--port", "7", "-q", "--json", NULL };

		if (xdplab_start(&sink, p, vp2.ns[1], "veth3", drop)) {
			p->skip = !bench_stop;
			goto out;
		}
		if (udp_gso_start(&udp, p, d->mtu, vp2.ip4[1]))
			goto out;
	} else {
		/* Long enough for every window; stopped with SIGINT when done. */
		const char *dst = d->topo == T_ROUTED ? vp2.ip4[1] : ip.vp.ip4[1];

		if (child_start(&cli, ip.vp.ns[0], (char *const[]){ "iperf3", "-c", (char *)dst,
								  "-p", port, "-t", "3600",
								  bench.pin ? "-A" : NULL,
								  "0,1", NULL })) {
			point_err(p, "cannot start iperf3");
			goto out;
		}
		point_cmd(p, "%s", cli.cmd);
	}
	sleep_until(now() + SETTLE_SECS);

	for (int w = 0; w < 2 * npairs && !bench_stop; w++) {
		/* base, test, test, base, base, test, ... */
		int with = (w % 4 == 1 || w % 4 == 2);
		enum prog pr = with ? d->test : d->base;
		double t0, b0, t1, b1;

		if (pr == P_WRITE_FRAGS) {
			if (writer_set(&wr, true)) {
				point_skip(p, "cannot attach the writer to %s", ip.vp.ifname[1]);
				goto out;
			}
			attached = true;
		} else if (pr != P_NONE) {
			if (xdplab_start(&xdp, p, ip.vp.ns[1], ip.vp.ifname[1], args[with])) {
				p->skip = !bench_stop;
				goto out;
			}
			/* The reproduce line shows each attach once, not once a window. */
			if (w <= 1)
				cmd_len = strlen(p->cmd);
			else
				p->cmd[cmd_len] = '\0';
		}
		if (cli.pid > 0 && child_exited(&cli)) {
			char why[256];

			child_errline(&cli, why, sizeof(why));
			point_err(p, "iperf3 client exited during the stream: %s", why);
			goto out;
		}
		if (udp.running && udp.err) {
			point_err(p, "the UDP GSO sender failed: %s", strerror(udp.err));
			goto out;
		}
		t0 = now();
		b0 = counter_read(&ctr);
		sleep_until(t0 + win);
		t1 = now();
		b1 = counter_read(&ctr);
		if (pr == P_WRITE_FRAGS) {
			writer_set(&wr, false);
			attached = false;
		} else if (pr != P_NONE) {
			char *out = xdplab_finish(&xdp);
			const char *sum = xdplab_summary(out);

			if (with) {
				/* rx_packets counts GSO segments where the
				 * program is opted in; rx_frames the frames
				 */
				double f = json_num(sum, NULL, "rx_frames");

				frames += isnan(f) ? json_num(sum, NULL, "rx_packets") : f;
				mb += json_num(sum, NULL, "mb_packets");
				opt_in = out && strstr(out, "\"opt_in\":true") ? 1 : 0;
			}
			free(out);
		}
		bytes[with] += b1 - b0;
		secs[with] += t1 - t0;
		pair[w / 2][with] = (b1 - b0) / (t1 - t0);
	}
	if (bench_stop)
		goto out;
	if (d->test == P_WRITE_FRAGS) {
		double failed = writer_count(&wr, GSO_CNT_FAILED);

		frames = writer_count(&wr, GSO_CNT_FRAMES);
		/* frames whose written byte lay in a fragment */
		mb = writer_count(&wr, GSO_CNT_ACTED);
		opt_in = wr.opt_in;
		if (failed > 0)
			point_err(p, "the writer's bpf_xdp_store_bytes() failed on %.0f frames", failed);
	}
	if (udp.running)
		udp_gso_stop(&udp);
	else
		child_stop(&cli);
	if (d->topo == T_ROUTED)
		point_set(p, round, M_CSUM_ERR, tcp_csum_errors(snmp) - csum0);
	if (!(bytes[0] > 0 && bytes[1] > 0 && frames > 0)) {
		point_err(p, "no traffic in a window (base %.0f B, test %.0f B, program saw %.0f)",
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
	point_set(p, round, M_OPT_IN, opt_in);
out:
	if (xdp.pid > 0)
		free(xdplab_finish(&xdp));
	udp_gso_stop(&udp);
	if (sink.pid > 0)
		free(xdplab_finish(&sink));
	child_close(&sink);
	if (attached)
		writer_set(&wr, false);
	writer_free(&wr);
	if (cli.pid > 0 && !cli.reaped)
		child_stop(&cli);
	child_close(&cli);
	child_close(&xdp);
	if (ctr.fd >= 0)
		close(ctr.fd);
	if (snmp >= 0)
		close(snmp);
}

static void teardown(struct scen *s)
{
	(void)s;
	if (server_c.pid > 0)
		child_stop(&server_c);
	child_close(&server_c);
	iperf_pair_teardown(&ip);
}

const struct scenario scen_veth_flip = {
	.name = "veth-flip",
	.title = "One stream through veths, an XDP program attached and detached between windows",
	.seed = "Seed 000's veth-tcp ratio (frags XDP_PASS ÷ no XDP) taken inside one iperf3 "
		"stream: windows of -d seconds in the order base, test, test, base, "
		"4 pairs a sample (2 with -q), the program (`xdplab pass --frags` or `--no-frags` on "
		"veth1) attached and detached between windows; rate = veth0 tx bytes over "
		"the window. GRO on veth1 off (the veth default). Issue 18's worst cases the same "
		"way: `pass --frags --no-gso` (opted out); write-frags, a frags program that "
		"rewrites a payload byte of every TCP frame (copy-on-write of shared fragments; "
		"xdp_gso_test loaded by the bench); redirect-frags, `xdplab redirect veth1 veth2 "
		"--frags` to an iperf3 server in ns C ÷ ns B's stack forwarding, veth0's tx "
		"checksumming on or off, rate = veth3 rx bytes; tx-udp, UDP_SEGMENT datagrams "
		"echoed by `xdplab tx veth1 --frags --proto udp --port 7`, opted in ÷ --no-gso, "
		"rate = veth0 rx bytes. The test windows' Gbit/s compare across kernels under "
		"-icount (bench/compare-kernels.sh -I).",
	.needs = "iperf3",
	SCEN_TABLE(metrics, cols),
	.plot_ylabel = "XDP ÷ no XDP within one stream (per sample)",
	.duration = 2,
	.quick_duration = 1,
	SCEN_HOOKS,
};
