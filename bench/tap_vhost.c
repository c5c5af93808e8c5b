// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tap-vhost (seed 001, issue #6): frames into a tap the way a VM sends
 * them, through vhost-net (lib/vhost_net.h: tun_sendmsg() gets TUN_MSG_PTR
 * batches of up to 64 xdp_buffs, tun_xdp_one()), next to the same frames
 * written to the tap fd (tun_get_user()), IFF_NAPI off and on, XDP_DROP or
 * XDP_PASS (xdplab's programs, native on the tap) with a UDP socket behind
 * the tap counting what is delivered. 64 and 1500-byte frames, and a
 * 9000-byte UDP GSO frame described by the virtio-net header (the generic
 * XDP path on a stock tun). Needs /dev/vhost-net for the vhost rows: the
 * vmtest guest has it, the host may not.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_tun.h>

#include "bench.h"
#include "netns.h"
#include "pkt.h"
#include "vhost_net.h"

enum { M_KPPS, M_XDP_KPPS, M_RX_KPPS, M_NS_PKT, M_USER, M_SYS, M_SOFTIRQ, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_KPPS] = { "kpps", "thousand frames/s that went into the tap" },
	[M_XDP_KPPS] = { "xdp_kpps", "thousand frames/s counted by the XDP program" },
	[M_RX_KPPS] = { "rx_kpps", "thousand datagrams/s read by the socket behind the tap" },
	[M_NS_PKT] = { "sys_ns_pkt", "ns of system + softirq CPU a frame" },
	[M_USER] = { "user", "% of a core" },
	[M_SYS] = { "system", "% of a core" },
	[M_SOFTIRQ] = { "softirq", "% of a core" },
};

static const struct column cols[] = {
	{ M_KPPS, "kpps in", "%.1f" },
	{ M_XDP_KPPS, "XDP kpps", "%.1f" },
	{ M_RX_KPPS, "socket kpps", "%.1f" },
	{ M_NS_PKT, "sys+si ns/frame", "%.0f" },
	{ M_USER, "user %", "%.0f" },
	{ M_SYS, "sys %", "%.0f" },
	{ M_SOFTIRQ, "softirq %", "%.0f" },
};

enum { K_PATH, K_NAPI, K_PROG, K_SIZE };
enum { VIA_WRITE, VIA_VHOST };
/* PROG_NONE: no program at all, the path most taps (QEMU's) run. */
enum { PROG_DROP, PROG_PASS, PROG_NONE, PROG_NR };
static const char *const prog_id[] = { "drop", "pass", "none" };
static const char *const prog_label[] = { "XDP_DROP", "XDP_PASS", "no XDP" };
enum { SZ_64, SZ_1500, SZ_GSO, SZ_NR };
static const char *const size_label[] = { "64 B", "1500 B", "9000 B GSO" };
static const char *const size_id[] = { "64", "1500", "gso9000" };
static const size_t size_len[] = { 64, 1500, 9000 };
#define GSO_SIZE 1448
#define TAP "xvtap0"
#define TAP_IP "198.18.6.1"
#define PEER_IP "198.18.6.2"
#define PEER_MAC "02:00:00:00:06:02"
#define PORT 9

static char ns[NETNS_NAME_MAX];
static struct tap_dev tap = { .fd = -1 };
static int tap_napi = -1, sock_fd = -1;
static struct vhost_net vn = { .fd = -1, .kick = -1, .call = -1 };
static bool have_vhost;
static char novhost[160];

struct frame {
	struct virtio_net_hdr vh;
	uint8_t data[9216];
	size_t len;
};
static struct frame frames[SZ_NR];

static void plan(struct scen *s)
{
	for (int sz = SZ_64; sz < SZ_NR; sz++) {
		for (int prog = PROG_DROP; prog < PROG_NR; prog++) {
			int first = s->npts;

			for (int path = VIA_WRITE; path <= VIA_VHOST; path++) {
				for (int napi = 0; napi <= 1; napi++) {
					char group[48], label[48];
					struct point *p;

					snprintf(group, sizeof(group), "%s %s", size_label[sz],
						 prog_label[prog]);
					snprintf(label, sizeof(label), "%s, NAPI %s",
						 path == VIA_VHOST ? "vhost-net" : "write()",
						 napi ? "on" : "off");
					/* Ratios: to write() without NAPI, and to NAPI off. */
					p = scen_add(s, first, napi ? s->npts - 1 : -1, group, label,
						     "%s/%s/%s/napi-%s", size_id[sz], prog_id[prog],
						     path == VIA_VHOST ? "vhost" : "write",
						     napi ? "on" : "off");
					p->knob[K_PATH] = path;
					p->knob[K_NAPI] = napi;
					p->knob[K_PROG] = prog;
					p->knob[K_SIZE] = sz;
				}
			}
		}
	}
}

static void tap_close(void)
{
	vhost_net_close(&vn);
	if (sock_fd >= 0)
		close(sock_fd);
	sock_fd = -1;
	tap_dev_close(&tap);
	tap_napi = -1;
}

static void frames_build(const uint8_t *tapmac)
{
	for (int sz = SZ_64; sz < SZ_NR; sz++) {
		struct pkt_spec spec = { .ipver = 4, .l4 = PKT_UDP, .sport = 9, .dport = PORT,
					 .len = size_len[sz] };
		struct frame *f = &frames[sz];

		memcpy(spec.dst_mac, tapmac, 6);
		pkt_parse_mac(PEER_MAC, spec.src_mac);
		pkt_parse_ip(PEER_IP, &spec.src);
		pkt_parse_ip(TAP_IP, &spec.dst);
		memset(&f->vh, 0, sizeof(f->vh));
		f->len = pkt_build(f->data, sizeof(f->data), &spec);
		if (sz == SZ_GSO) {
			uint8_t *ip = f->data + 14, *udp = ip + 20;
			uint32_t c = 17 + f->len - 34;

			for (int i = 12; i < 20; i += 2)
				c += (ip[i] << 8) | ip[i + 1];
			while (c >> 16)
				c = (c & 0xffff) + (c >> 16);
			udp[6] = c >> 8;	/* pseudo-header sum: CHECKSUM_PARTIAL */
			udp[7] = c & 0xff;
			f->vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
			f->vh.gso_type = 5;	/* VIRTIO_NET_HDR_GSO_UDP_L4 */
			f->vh.hdr_len = 42;
			f->vh.gso_size = GSO_SIZE;
			f->vh.csum_start = 34;
			f->vh.csum_offset = 6;
		}
	}
}

static int tap_open(struct scen *s, bool napi)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int saved, big = 16 << 20;

	tap_close();
	if (tap_dev_open(&tap, ns, TAP, IFF_VNET_HDR | (napi ? IFF_NAPI : 0), 9000, TAP_IP,
			 PEER_IP, PEER_MAC, s->error, sizeof(s->error)))
		return -1;
	if (vhost_net_tap_prepare(tap.fd)) {
		snprintf(s->error, sizeof(s->error), "TUNSETVNETHDRSZ %s: %s", TAP,
			 strerror(errno));
		tap_close();
		return -1;
	}
	saved = netns_enter(ns);
	if (saved < 0) {
		tap_close();
		return -1;
	}
	sock_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	netns_leave(saved);
	if (sock_fd < 0) {
		snprintf(s->error, sizeof(s->error), "socket: %s", strerror(errno));
		tap_close();
		return -1;
	}
	inet_pton(AF_INET, TAP_IP, &sa.sin_addr);
	setsockopt(sock_fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (bind(sock_fd, (void *)&sa, sizeof(sa))) {
		snprintf(s->error, sizeof(s->error), "bind %s:%d: %s", TAP_IP, PORT,
			 strerror(errno));
		tap_close();
		return -1;
	}
	frames_build(tap.mac);
	have_vhost = false;
	if (!novhost[0]) {
		if (vhost_net_open(&vn, tap.fd, 256, sizeof(frames[0].data)))
			snprintf(novhost, sizeof(novhost), "vhost-net setup failed: %s",
				 strerror(errno));
		else
			have_vhost = true;
	}
	tap_napi = napi;
	return 0;
}

static int setup(struct scen *s)
{
	const char *why = vhost_net_unavailable();

	novhost[0] = '\0';
	if (why)
		snprintf(novhost, sizeof(novhost), "%s", why);
	if (scen_netns_add(s, "tapvh", ns))
		return -1;
	if (tap_open(s, false))
		return -1;
	if (novhost[0])
		snprintf(s->note, sizeof(s->note), "vhost-net rows not measured: %s.", novhost);
	return 0;
}

/* The socket behind the tap, drained by a thread while frames go in. */
static volatile int rx_run;
static unsigned long long rx_count;

/* --pin: this thread on CPU cpu only; -1 if it could not be moved. */
static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ? -1 : 0;
}

static void *rx_thread(void *arg)
{
	static char buf[64][2048];
	struct mmsghdr mm[64];
	struct iovec iov[64];

	if (arg && pin_to(1))
		bench_log("tap-vhost: cannot pin the socket reader to CPU 1");
	for (int i = 0; i < 64; i++) {
		iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
		mm[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while (rx_run) {
		struct pollfd p = { sock_fd, POLLIN, 0 };
		int n;

		if (poll(&p, 1, 20) <= 0)
			continue;
		while ((n = recvmmsg(sock_fd, mm, 64, MSG_DONTWAIT, NULL)) > 0)
			rx_count += n;
	}
	return NULL;
}

static void sample(struct scen *s, struct point *p, int round)
{
	int path = p->knob[K_PATH], napi = p->knob[K_NAPI], prog = p->knob[K_PROG];
	const struct frame *f = &frames[p->knob[K_SIZE]];
	uint8_t hdr[VHOST_NET_HDR_LEN] = {};
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)f->data, f->len } };
	struct sample sm;
	unsigned long long ok = 0, fail = 0;
	struct cpustat c0, c1;
	struct cpusplit cs;
	pthread_t rx;
	double t0, t1, end;
	int last_err = 0;
	char *args[] = { (char *)prog_id[prog], TAP, "-q", "--json", NULL };
	cpu_set_t saved_cpus;
	bool pinned = false;

	sample_init(&sm);
	if (path == VIA_VHOST && novhost[0]) {
		point_skip(p, "%s", novhost);
		return;
	}
	if (napi != tap_napi && tap_open(s, napi)) {
		point_take_error(p, s);
		return;
	}
	if (path == VIA_VHOST && !have_vhost) {
		point_skip(p, "%s", novhost);
		return;
	}
	f = &frames[p->knob[K_SIZE]];
	memcpy(hdr, &f->vh, sizeof(f->vh));
	point_cmd(p, "xdplab-bench: tap " TAP " in %s (IFF_TAP|IFF_NO_PI|IFF_VNET_HDR%s, "
		  "O_NONBLOCK), up, mtu 9000, " TAP_IP "/24, UDP socket on :%d", ns,
		  napi ? "|IFF_NAPI" : "", PORT);
	if (prog != PROG_NONE && sample_xdp(&sm, p, ns, TAP, args))
		return;
	point_cmd(p, "xdplab-bench: %s %zu-byte UDP frames%s for %g s", path == VIA_VHOST ?
		  "vhost-net TX ring (256 buffers, kicked every 64) with" : "writev() one at a time,",
		  f->len, f->vh.gso_type ? " (virtio-net header: UDP GSO, 1448)" : "", s->duration);
	/* --pin: the writer stays on CPU 0 and the socket reader on CPU 1,
	 * so the scheduler cannot move one onto the other's CPU mid-sample.
	 */
	if (bench.pin) {
		if (sched_getaffinity(0, sizeof(saved_cpus), &saved_cpus) || pin_to(0)) {
			point_err(p, "cannot pin the writer to CPU 0: %s", strerror(errno));
			goto out;
		}
		pinned = true;
		point_cmd(p, "xdplab-bench --pin: writer on CPU 0, socket reader on CPU 1");
	}
	rx_count = 0;
	rx_run = 1;
	if (pthread_create(&rx, NULL, rx_thread, bench.pin ? (void *)1 : NULL)) {
		point_err(p, "pthread_create failed");
		goto out;
	}
	cpustat_read(&c0);
	t0 = now();
	end = t0 + s->duration;
	if (path == VIA_WRITE) {
		struct tap_writes w;

		tap_dev_write_for(&tap, iov, 2, 64, s->duration, &w);
		ok = w.ok;
		fail = w.fail;
		last_err = w.last_err;
	} else {
		unsigned long long c = vn.completed;

		while (!bench_stop && now() < end) {
			int posted = 0;

			while (vhost_net_room(&vn) && posted < 64 &&
			       !vhost_net_post(&vn, &f->vh, f->data, f->len))
				posted++;
			if (posted && vhost_net_kick(&vn)) {
				last_err = errno;
				break;
			}
			if (vhost_net_reap(&vn, vhost_net_room(&vn) ? 0 : 0.1) < 0) {
				last_err = errno;
				break;
			}
		}
		vhost_net_drain(&vn, 5);
		ok = vn.completed - c;
	}
	t1 = now();
	cpustat_read(&c1);
	usleep(100 * 1000);	/* what NAPI still had queued */
	rx_run = 0;
	pthread_join(rx, NULL);
	sample_xdp_stop(&sm);
	if (bench_stop)
		goto out;
	if (!ok) {
		point_err(p, "no frame went in: %s", strerror(last_err));
		goto out;
	}
	if (prog != PROG_NONE) {
		double n = sample_xdp_count(&sm, p, prog_id[prog]);

		if (isnan(n))
			goto out;
		point_set(p, round, M_XDP_KPPS, n / (t1 - t0) / 1e3);
	}
	if (fail)
		point_err(p, "some writev() failed: %s", strerror(last_err));
	cpustat_split(&c0, &c1, &cs);
	point_set(p, round, M_KPPS, ok / (t1 - t0) / 1e3);
	point_set(p, round, M_RX_KPPS, rx_count / (t1 - t0) / 1e3);
	point_set(p, round, M_NS_PKT, (cs.system + cs.softirq) / 100 * cs.wall / ok * 1e9);
	point_set(p, round, M_USER, cs.user);
	point_set(p, round, M_SYS, cs.system);
	point_set(p, round, M_SOFTIRQ, cs.softirq);
out:
	if (pinned)
		sched_setaffinity(0, sizeof(saved_cpus), &saved_cpus);
	sample_done(&sm);
}

static void teardown(struct scen *s)
{
	(void)s;
	tap_close();
}

const struct scenario scen_tap_vhost = {
	.name = "tap-vhost",
	.title = "frames into a tap through vhost-net batches and write(), NAPI off/on, XDP drop/pass/none",
	.seed = SEED_001_TAP "vhost-net hands tun "
		"TUN_MSG_PTR batches; NAPI (and GRO) for them doubled iperf3 through tap <-> "
		"testpmd (4.63 -> 9.28 Gbit/s). Here lib/vhost_net.c is the guest: a TX ring "
		"of 256 buffers kicked every 64 frames, beside writev() on the tap fd; a UDP "
		"socket behind the tap counts XDP_PASS deliveries (GSO frames arrive as "
		"segments, so socket kpps is higher than kpps in). CPU is machine-wide.",
	SCEN_TABLE(metrics, cols),
	.ratio_head = { "× write() NAPI off", "× NAPI off" },
	.plot_ylabel = "frames into the tap per second, ratio",
	.duration = 3,
	.quick_duration = 0.5,	/* 36 rows, 18 s of samples in QUICK=1 */
	SCEN_HOOKS,
};
