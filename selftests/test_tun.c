// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tun/tap under XDP (issue #6, kernel-patches/tun/): frames enter a tap
 * two ways, write() on the tap fd (tun_get_user(), tun_build_skb()) and
 * vhost-net batches (tun_sendmsg() with TUN_MSG_PTR, tun_xdp_one()), with
 * IFF_NAPI off, on, and with IFF_NAPI_FRAGS; the xdplab CLI attaches
 * pass / drop / tx / redirect on the tap; frames of 64, 1500 and 9000 bytes
 * and a UDP GSO frame described by the virtio-net header are checked end
 * to end: a UDP socket behind the tap (pass), the program's counters
 * (drop), the tap fd itself (tx) and a second tap's fd (redirect).
 *
 * The page-pool tests need the series: they look for the tap's page pools
 * in the netdev netlink family and skip when there are none (stock tun
 * has no page_pool). vhost tests skip without /dev/vhost-net (the host).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "fault_inject.h"
#include "netns.h"
#include "pkt.h"
#include "page_pool.h"
#include "test.h"
#include "tun.h"
#include "vhost_net.h"
#include "xdplab.h"
#include "xdp_drop.skel.h"

#define TAP0 "xtun0"
#define TAP1 "xtun1"
#define N_FRAMES 16
#define GSO_PAYLOAD 3000
#define GSO_SIZE 1000
#define GSO_BIG_PAYLOAD 15000
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5	/* Linux 4.18; older uapi headers lack it */
#endif

static char out[65536];

enum path { VIA_WRITE, VIA_VHOST };
static const char *const path_name[] = { "write", "vhost" };

/* Makes t->fd (opened in ns, not attached to a device) the tap name in
 * ns: a new device, or the same fd attached again after its device went
 * away.
 */
static int tap_set_iff(const char *ns, const char *name, int extra_flags, int mtu,
		       struct tap *t)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | extra_flags };
	int saved = netns_enter(ns), err;

	if (saved < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	err = ioctl(t->fd, TUNSETIFF, &ifr) || vhost_net_tap_prepare(t->fd) ||
	      ioctl(t->fd, SIOCGIFHWADDR, &ifr);
	netns_leave(saved);
	if (err)
		return -1;
	memcpy(t->mac, ifr.ifr_hwaddr.sa_data, 6);
	t->ifindex = netns_ifindex(ns, name);
	return sh("ip -n %s link set %s mtu %d up", ns, name, mtu) ? -1 : 0;
}

int tap_make(const char *ns, const char *name, int extra_flags, int mtu, struct tap *t)
{
	int saved = netns_enter(ns);

	if (saved < 0)
		return -1;
	/* O_NONBLOCK: tun_build_skb() (and so XDP in the driver) needs it.
	 * The device goes to the namespace the fd was opened in.
	 */
	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	netns_leave(saved);
	if (t->fd < 0)
		return -1;
	if (tap_set_iff(ns, name, extra_flags, mtu, t)) {
		tap_close(t);
		return -1;
	}
	return 0;
}

void tap_close(struct tap *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* ---- frames ---- */

static const char *const size_name[] = { "64B", "1500B", "9000B", "gso", "gso-15000B" };
static const size_t size_len[] = { 64, 1500, 9000, 42 + GSO_PAYLOAD, 42 + GSO_BIG_PAYLOAD };

static uint16_t csum_fold32(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

void frame_build(struct frame *f, const struct tap *t, enum size_kind k)
{
	bool gso = k == SZ_GSO || k == SZ_GSO_BIG;

	frame_build_udp(f, t, size_len[k], gso ? GSO_SIZE : 0, gso);
}

/* ---- what a frame takes of tun's buffers, by page size ---- */

/* A buffer of tun's (tun_can_build_skb(), tun_build_skb_pool()) on x86-64
 * and arm64: TUN_RX_PAD (NET_SKB_PAD, 64-byte cache lines) and
 * XDP_PACKET_HEADROOM before the frame, the frame cache-aligned, then a
 * struct skb_shared_info of 320 bytes (MAX_SKB_FRAGS 17).
 */
#define TUN_BUF_PAD	(64 + 256)
#define TUN_BUF_SHINFO	320

/* The bytes a frame of len bytes takes of a pool page. */
size_t tun_buf_len(size_t len)
{
	return ((len + TUN_BUF_PAD + 63) & ~(size_t)63) + TUN_BUF_SHINFO;
}

/* The longest frame tun puts in one buffer of a page: 3,456 bytes with
 * 4 KB pages, 64,896 with 64 KB pages. A longer frame, or a GSO one, is
 * the multi-buffer path's under a frags program (generic XDP's without).
 */
size_t tun_one_buf_max(void)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return ((page - TUN_BUF_SHINFO) & ~(size_t)63) - TUN_BUF_PAD;
}

/* len, when a frame of len bytes is too long for one buffer (9000 bytes
 * with 4 KB pages); else the first round length that is: 65,000 bytes
 * with 64 KB pages, still a UDP datagram.
 */
size_t tun_mb_frame_len(size_t len)
{
	size_t max = tun_one_buf_max();

	return len > max ? len : max + 104;
}

/* The size of a page of tun's pools (TUN_PP_PAGE_SIZE): 8 KB, or one
 * page where pages are larger.
 */
size_t tun_pool_page(void)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return page < 8192 ? 8192 : page;
}

/* Sum of the IPv4 pseudo header of the UDP datagram in the frame. */
static uint32_t udp_pseudo_sum(const uint8_t *ip, size_t udp_len)
{
	uint32_t s = 0;

	for (int i = 12; i < 20; i += 2)
		s += (ip[i] << 8) | ip[i + 1];
	return s + 17 + udp_len;
}

/* A UDP frame of len bytes, PEER_IP:4242 -> TAP_IP:PORT, with no offload
 * asked, in buf (struct frame holds 16 KB): its length, or 0. Above
 * 14 + 65535 bytes its IP and UDP lengths are wrong (a frame for XDP_TX
 * back to the tap, not for a socket).
 */
size_t frame_build_big(uint8_t *buf, size_t size, const struct tap *t, size_t len)
{
	struct pkt_spec spec = { .ipver = 4, .l4 = PKT_UDP, .sport = 4242, .dport = PORT,
				 .len = len };

	memcpy(spec.dst_mac, t->mac, 6);
	memcpy(spec.src_mac, (uint8_t[]){ 2, 0, 0, 0, 0x22, 2 }, 6);
	pkt_parse_ip(PEER_IP, &spec.src);
	pkt_parse_ip(TAP_IP, &spec.dst);
	return pkt_build(buf, size, &spec);
}

/* Writes the len bytes at buf n times to the tap's fd, behind vh; returns
 * how many went in whole.
 */
static int send_write_vh(const struct tap *t, const struct virtio_net_hdr *vh,
			 const uint8_t *buf, size_t len, int n)
{
	uint8_t hdr[VHOST_NET_HDR_LEN] = {};
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)buf, len } };
	int ok = 0;

	memcpy(hdr, vh, sizeof(*vh));
	for (int i = 0; i < n; i++)
		ok += writev(t->fd, iov, 2) == (ssize_t)(sizeof(hdr) + len);
	return ok;
}

/* Writes the len bytes at buf n times to the tap's fd, behind a virtio-net
 * header that asks nothing; returns how many went in whole.
 */
int send_write_big(const struct tap *t, const uint8_t *buf, size_t len, int n)
{
	return send_write_vh(t, &(struct virtio_net_hdr){}, buf, len, n);
}

/* Checksum offload asked of the kernel, the way a guest's virtio-net
 * would: partial checksum (pseudo header only) in the UDP header of the
 * len-byte frame at data, the rest described by vh.
 */
static void frame_csum_partial(uint8_t *data, size_t len, struct virtio_net_hdr *vh)
{
	uint8_t *udp = data + 14 + 20;
	uint32_t s = csum_fold32(udp_pseudo_sum(data + 14, len - 34));

	udp[6] = s >> 8;
	udp[7] = s & 0xff;
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->csum_start = 34;
	vh->csum_offset = 6;
}

void frame_build_udp(struct frame *f, const struct tap *t, size_t len, unsigned int gso_size,
		     bool partial_csum)
{
	memset(&f->vh, 0, sizeof(f->vh));
	f->len = frame_build_big(f->data, sizeof(f->data), t, len);
	f->payload = f->len - 42;
	if (partial_csum)
		frame_csum_partial(f->data, f->len, &f->vh);
	if (gso_size) {
		/* UDP segmentation offload. */
		f->vh.gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
		f->vh.hdr_len = 42;
		f->vh.gso_size = gso_size;
	}
}

/* Is the UDP checksum of the datagram at ip (udp_len bytes) complete and
 * right? A zero checksum field (none) counts as right.
 */
static bool udp_csum_ok(const uint8_t *ip, size_t udp_len)
{
	const uint8_t *udp = ip + 20;
	uint32_t s = udp_pseudo_sum(ip, udp_len);

	if (!udp[6] && !udp[7])
		return true;
	for (size_t i = 0; i + 1 < udp_len; i += 2)
		s += (udp[i] << 8) | udp[i + 1];
	if (udp_len & 1)
		s += udp[udp_len - 1] << 8;
	return csum_fold32(s) == 0xffff;
}

int send_write(const struct tap *t, const struct frame *f, int n)
{
	uint8_t hdr[VHOST_NET_HDR_LEN] = {};
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)f->data, f->len } };
	int ok = 0;

	memcpy(hdr, &f->vh, sizeof(f->vh));
	for (int i = 0; i < n; i++)
		ok += writev(t->fd, iov, 2) == (ssize_t)(sizeof(hdr) + f->len);
	return ok;
}

static int send_vhost(struct vhost_net *vn, const struct frame *f, int n)
{
	int posted = 0;

	while (posted < n) {
		if (!vhost_net_room(vn) && vhost_net_reap(vn, 2) <= 0)
			break;
		if (vhost_net_post(vn, &f->vh, f->data, f->len))
			break;
		posted++;
	}
	if (vhost_net_kick(vn) || vhost_net_drain(vn, 10))
		return -1;
	return posted;
}

/* ---- receivers ---- */

int udp_listen_in(const char *ns)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int saved = netns_enter(ns), fd, big = 8 << 20;

	if (saved < 0)
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	netns_leave(saved);
	if (fd < 0)
		return -1;
	inet_pton(AF_INET, TAP_IP, &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (bind(fd, (void *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reassembles payload pieces in order: a frame of `payload` bytes may
 * arrive whole or as GSO segments; each piece must hold the pattern at
 * its running offset. Returns whole frames seen intact.
 */
struct reasm {
	size_t payload, off;
	int good, bad;
};

static void reasm_piece(struct reasm *r, const uint8_t *p, size_t len)
{
	if (r->off + len > r->payload || !pkt_pattern_ok(p, len, r->off)) {
		r->bad++;
		r->off = 0;
		return;
	}
	r->off += len;
	if (r->off == r->payload) {
		r->good++;
		r->off = 0;
	}
}

int sock_collect(int fd, size_t payload, int want, double timeout)
{
	static uint8_t buf[65536];
	struct reasm r = { .payload = payload };
	double end = now_secs() + timeout;

	while (r.good < want && now_secs() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		while ((n = recv(fd, buf, sizeof(buf), 0)) >= 0)
			reasm_piece(&r, buf, n);
	}
	return r.bad ? -r.bad : r.good;
}

/* Frames read from a tap fd (virtio-net header first): UDP to PORT,
 * reassembled; for tx the source MAC must be the one the frame was sent to.
 * A UDP checksum is bad when it is neither complete and right nor left to
 * the reader (NEEDS_CSUM in the header).
 */
int tap_collect_csum(int fd, size_t payload, int want, const uint8_t *src_mac,
		     double timeout, struct tap_rx_counts *counts)
{
	struct tap_rx_counts none;
	static uint8_t buf[65536 + VHOST_NET_HDR_LEN];
	struct reasm r = { .payload = payload };
	double end = now_secs() + timeout;

	if (!counts)
		counts = &none;
	memset(counts, 0, sizeof(*counts));
	while (r.good < want && now_secs() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			const struct virtio_net_hdr *vh = (const void *)buf;
			uint8_t *eth = buf + VHOST_NET_HDR_LEN, *ip = eth + 14;
			size_t flen = n - VHOST_NET_HDR_LEN;

			if (flen < 42 || eth[12] != 0x08 || eth[13] != 0 || ip[9] != 17 ||
			    ((ip[22] << 8) | ip[23]) != PORT)
				continue;	/* not ours: IPv6 ND, ARP ... */
			if (src_mac && memcmp(eth + 6, src_mac, 6)) {
				r.bad++;
				continue;
			}
			counts->pieces++;
			counts->gso += vh->gso_type != VIRTIO_NET_HDR_GSO_NONE;
			if (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
				counts->needs_csum++;
			else if (!udp_csum_ok(ip, flen - 34))
				counts->bad_csum++;
			reasm_piece(&r, eth + 42, flen - 42);
		}
	}
	return r.bad ? -r.bad : r.good;
}

static int tap_collect(int fd, size_t payload, int want, const uint8_t *src_mac,
		       double timeout)
{
	return tap_collect_csum(fd, payload, want, src_mac, timeout, NULL);
}

/* ---- the verdict matrix ---- */

enum verdict { V_PASS, V_DROP, V_TX, V_REDIRECT, V_NR };

/* Where frames of payload bytes end up after verdict v: the socket behind
 * the tap (pass; drop: a short wait that must see none), back at t0's fd
 * with swapped MACs (tx), or at t1's fd (redirect). Returns how many.
 */
static int collect(enum verdict v, int sfd, const struct tap *t0, const struct tap *t1,
		   size_t payload)
{
	switch (v) {
	case V_PASS:
		return sock_collect(sfd, payload, N_FRAMES, 10);
	case V_DROP:
		return sock_collect(sfd, payload, N_FRAMES, 0.2);
	case V_TX:
		return tap_collect(t0->fd, payload, N_FRAMES, t0->mac, 10);
	default:
		return tap_collect(t1->fd, payload, N_FRAMES, NULL, 10);
	}
}
static const char *const verdict_name[] = { "pass", "drop", "tx", "redirect" };

struct napi_mode {
	const char *name;
	int flags;
};
static const struct napi_mode napi_modes[] = {
	{ "napi-off", 0 },
	{ "napi", IFF_NAPI },
	{ "napi-frags", IFF_NAPI | IFF_NAPI_FRAGS },
};

/* UDP GSO written to a tap (VIRTIO_NET_HDR_GSO_UDP_L4) came with USO in
 * Linux 6.2, together with the TUN_F_USO4/6 offload flags (accepted only
 * as a pair); an older kernel refuses such frames with EINVAL. Asks a
 * throw-away tap in the netns.
 */
static bool tap_takes_udp_gso(const char *ns)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int saved = netns_enter(ns), fd;
	bool ok = false;

	if (saved < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xtunprobe");
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd >= 0 && !ioctl(fd, TUNSETIFF, &ifr))
		ok = !ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6);
	if (fd >= 0)
		close(fd);	/* not persistent: the tap goes with the fd */
	netns_leave(saved);
	return ok;
}

static bool cli_stop_ok(struct cli_bg *bg, const char *ns, const char *ifname)
{
	int st = cli_stop(bg, SIGINT, 10, out, sizeof(out));

	if (!ASSERT_EQ(st, 0, "xdplab exit status"))
		fprintf(stdout, "%s", out);
	return ASSERT_EQ(xdp_prog_id(ns, ifname), 0, "detached") && st == 0;
}

static void one_verdict(const char *ns, struct tap *t0, struct tap *t1, struct vhost_net *vn,
			enum verdict v, bool udp_gso)
{
	static const char *const args[] = {
		"pass " TAP0 " --json -q",
		"drop " TAP0 " --proto udp --port 7100 --json -q",
		"tx " TAP0 " --json -q",
		"redirect " TAP0 " " TAP1 " --json -q",
	};
	long long expect_count = 0;
	struct cli_bg bg;
	int sfd = -1;

	if (v == V_PASS) {
		sfd = udp_listen_in(ns);
		if (!ASSERT_GE(sfd, 0, "udp socket"))
			return;
	}
	if (!cli_attach(&bg, ns, TAP0, args[v]))
		goto out;
	for (enum path p = VIA_WRITE; p <= VIA_VHOST; p++) {
		if (p == VIA_VHOST && !vn)
			continue;
		for (enum size_kind k = SZ_64; k < SZ_NR; k++) {
			static struct frame f;
			char what[64];
			int sent, got = 0;

			if (k == SZ_GSO && !udp_gso)
				continue;	/* reported as a skipped subtest */
			snprintf(what, sizeof(what), "%s %s %s", path_name[p], size_name[k],
				 verdict_name[v]);
			frame_build(&f, t0, k);
			sent = p == VIA_WRITE ? send_write(t0, &f, N_FRAMES)
					      : send_vhost(vn, &f, N_FRAMES);
			if (!test__report(sent == N_FRAMES, __FILE__, __LINE__, what,
					  "%d of %d frames went in", sent, N_FRAMES))
				continue;
			expect_count += k == SZ_GSO && v == V_DROP ? 0 : N_FRAMES;
			got = collect(v, sfd, t0, t1, f.payload);
			if (v == V_DROP)
				test__report(got <= 0, __FILE__, __LINE__, what,
					     "%d frames got through", got);
			else
				test__report(got == N_FRAMES, __FILE__, __LINE__, what,
					     "%d of %d frames arrived intact (negative: bad ones)",
					     got, N_FRAMES);
		}
	}
	if (cli_stop_ok(&bg, ns, TAP0)) {
		long long n = json_num(out, "\"summary\"", verdict_name[v]);

		/* A GSO frame is one buffer to XDP, whichever path it takes. */
		ASSERT_GE(n, v == V_DROP ? N_FRAMES * 3 : N_FRAMES, "program counted frames");
	}
	(void)expect_count;
out:
	if (sfd >= 0)
		close(sfd);
}

TEST(tun_xdp_verdicts)
{
	const char *novhost = vhost_net_unavailable();
	char probe_ns[NETNS_NAME_MAX] = "";
	bool udp_gso = false;

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (ASSERT_OK(netns_add("tunp", probe_ns), "netns")) {
		udp_gso = tap_takes_udp_gso(probe_ns);
		netns_del(probe_ns);
	}
	for (size_t m = 0; m < sizeof(napi_modes) / sizeof(napi_modes[0]); m++) {
		for (enum verdict v = V_PASS; v < V_NR; v++) {
			char name[64], ns[NETNS_NAME_MAX] = "";
			struct tap t0 = { .fd = -1 }, t1 = { .fd = -1 };
			struct vhost_net vn = { .fd = -1, .kick = -1, .call = -1 };
			bool have_vn = false;

			snprintf(name, sizeof(name), "%s/%s", napi_modes[m].name, verdict_name[v]);
			if (!test__start_subtest(name))
				continue;
			if (!ASSERT_OK(netns_add("tun", ns), "netns"))
				continue;
			if (!ASSERT_OK(tap_make(ns, TAP0, napi_modes[m].flags, 9000, &t0), "tap") ||
			    !ASSERT_OK(tap_make(ns, TAP1, 0, 9000, &t1), "second tap") ||
			    !ASSERT_OK(sh("ip -n %s addr add " TAP_IP "/24 dev " TAP0 " && "
					  "ip -n %s neigh replace " PEER_IP
					  " lladdr 02:00:00:00:22:02 dev " TAP0, ns, ns), "address"))
				goto next;
			if (!novhost) {
				have_vn = ASSERT_OK(vhost_net_open(&vn, t0.fd, 256, 9216),
						    "vhost-net on the tap");
				if (!have_vn)
					goto next;
			} else if (test__verbose()) {
				printf("    vhost-net part skipped: %s\n", novhost);
			}
			one_verdict(ns, &t0, &t1, have_vn ? &vn : NULL, v, udp_gso);
next:
			vhost_net_close(&vn);
			tap_close(&t0);
			tap_close(&t1);
			netns_del(ns);
		}
	}
	if (novhost && test__start_subtest("vhost"))
		test__skip("%s: the vhost-net half of every subtest above did not run", novhost);
	if (!udp_gso && test__start_subtest("gso"))
		test__skip("tap refuses UDP GSO frames (VIRTIO_NET_HDR_GSO_UDP_L4, Linux 6.2): "
			   "the gso frames of every subtest above were not sent");
}

/* The series is there when a tap has page pools of its own. */
static bool tap_has_pool(const char *ns, const struct tap *t, char *why, size_t len)
{
	struct pp_info pi;

	if (pp_dump(ns, t->ifindex, false, &pi)) {
		snprintf(why, len, "no page-pool netlink API (netdev family) in this kernel");
		return false;
	}
	if (!pi.npools) {
		snprintf(why, len, "tun has no page_pool here (kernel without kernel-patches/tun)");
		return false;
	}
	return true;
}

/* The series keeps the buffer of a frame that XDP dropped for the next
 * frame written to the queue. Closing the tap must give it back to its
 * pool, or the pool would wait for that page for ever. 64 B, 1500 B and
 * 64 B again: the kept buffer is too small once and reused once.
 */
static void dropped_buffer_freed(void)
{
	static const enum size_kind sizes[] = { SZ_64, SZ_1500, SZ_64 };
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	static struct frame f;
	struct cli_bg bg;

	if (!ASSERT_OK(netns_add("tunpd", ns), "netns"))
		return;
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t), "tap"))
		goto out;
	if (!cli_attach(&bg, ns, TAP0, "drop " TAP0 " --proto udp --port 7100 --json -q"))
		goto out;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		frame_build(&f, &t, sizes[i]);
		ASSERT_EQ(send_write(&t, &f, 16), 16, "written");
	}
	if (cli_stop_ok(&bg, ns, TAP0))
		ASSERT_GE(json_num(out, "\"summary\"", "drop"), 48, "program dropped the frames");
	tap_close(&t);
	assert_pools_gone(ns, "page pools left after closing the tap");
out:
	tap_close(&t);
	netns_del(ns);
}

/* XDP_DROP in the driver on the tap ifindex of ns, or -1. */
static int xdp_drop_attach(struct xdp_drop_bpf *skel, const char *ns, int ifindex)
{
	int saved = netns_enter(ns), err;

	if (saved < 0)
		return -1;
	err = bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.xdp_drop),
			     XDP_FLAGS_DRV_MODE, NULL);
	netns_leave(saved);
	return err;
}

/* The same tap fd, written to all along by another process under an
 * XDP_DROP program (every frame's buffer kept in the queue for the next),
 * while its device is deleted and the fd attached to a new one: the old
 * device's pool is destroyed and the new one created with writers inside
 * tun_get_user(). A buffer of an old pool must not stay in the queue of the
 * new: once the writes stop, no pool of a deleted device may be left while
 * the fd lives on, and none at all once it is closed.
 */
#define REATTACH_ROUNDS 8

static void reattach_under_traffic(void)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	struct xdp_drop_bpf *skel;
	unsigned long long *written = MAP_FAILED;
	struct pp_info pi = {};
	static struct frame f;
	pid_t pid = -1;
	int st;

	skel = xdp_drop_bpf__open_and_load();
	if (!ASSERT_OK_PTR(skel, "load xdp_drop"))
		return;
	if (!ASSERT_OK(netns_add("tunra", ns), "netns"))
		goto out_skel;
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t), "tap"))
		goto out;
	written = mmap(NULL, sizeof(*written), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_NEQ(written, MAP_FAILED, "shared counter"))
		goto out;
	*written = 0;
	frame_build(&f, &t, SZ_64);
	pid = fork();
	if (pid == 0) {
		/* Until killed; EBADFD while the fd has no device. */
		for (;;)
			if (send_write(&t, &f, 1) == 1)
				__atomic_add_fetch(written, 1, __ATOMIC_RELAXED);
	}
	if (!ASSERT_GE(pid, 0, "fork"))
		goto out;
	for (int round = 0; round < REATTACH_ROUNDS; round++) {
		unsigned long long w0 = __atomic_load_n(written, __ATOMIC_RELAXED);
		double end = now_secs() + 10;

		if (!ASSERT_OK(xdp_drop_attach(skel, ns, t.ifindex), "attach xdp_drop"))
			break;
		/* Frames dropped, and so buffers kept, on this device. */
		while (__atomic_load_n(written, __ATOMIC_RELAXED) < w0 + 200 && now_secs() < end)
			usleep(1000);
		if (!ASSERT_OK(sh("ip -n %s link del " TAP0, ns), "delete under traffic"))
			break;
		if (!ASSERT_OK(tap_set_iff(ns, TAP0, 0, 1500, &t), "same fd, new tap"))
			break;
	}
	/* A pool for the last tap too (since v5 only a tap with a program
	 * has one).
	 */
	ASSERT_OK(xdp_drop_attach(skel, ns, t.ifindex), "attach xdp_drop on the last tap");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	pid = -1;
	/* Pools of deleted devices go within their release retries (a
	 * second apart) once their pages are back.
	 */
	for (int i = 0; i < 50; i++) {
		if (!pp_dump(ns, 0, false, &pi) && !pi.detached)
			break;
		usleep(200 * 1000);
	}
	ASSERT_EQ(pi.detached, 0, "pools of deleted taps left while the fd lives on");
	ASSERT_EQ(pi.npools, 1, "the live tap's pool");
	if (test__verbose())
		printf("    %llu frames written over %d re-attaches\n", *written, REATTACH_ROUNDS);
	tap_close(&t);
	assert_pools_gone(ns, "page pools left after closing the tap");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if (written != MAP_FAILED)
		munmap(written, sizeof(*written));
	tap_close(&t);
	netns_del(ns);
out_skel:
	xdp_drop_bpf__destroy(skel);
}

/* The same race, made certain: a writer takes a buffer from the old pool
 * and is held inside its copy from user space (a page fault waiting for
 * the mmap lock, which an mprotect() of a large populated mapping holds),
 * while the device is deleted and the fd attached to a new one. The
 * mprotect() also takes away the page the writer copies from, so its copy
 * then fails and tun keeps the buffer for the next frame. That buffer
 * must go back to the old pool: the old pool must be gone while the fd
 * lives.
 *
 * The mapping the writer copies from: SRC_MB never touched (each write
 * faults, a page further on), then HOLD_MAPS mappings of the same HOLD_MB
 * of shared memory, all populated: millions of page table entries for
 * mprotect() to rewrite under the lock, without the memory. Both are
 * sized for 4 KB pages: with larger ones the source keeps its bytes (65536
 * pages of 64 KB, 4 GB, are more than a 2 GB guest may map), and the
 * held mappings are as many times more as a page is larger, for as many
 * page table entries.
 */
#define SRC_MB 256
#define HOLD_MB 128
#define HOLD_MAPS 64

struct copy_race {
	int fd;
	uint8_t *src;
	size_t page;
	size_t srclen;		/* bytes of never touched pages at src */
	size_t len;		/* bytes a frame */
	int done, err;		/* writer: finished, errno of its last write */
	int hold_maps;		/* populated mappings for mprotect() to rewrite */
	long writes;
	double t_done, t_protected;
};

static void *copy_race_writer(void *arg)
{
	struct copy_race *r = arg;
	uint8_t hdr[VHOST_NET_HDR_LEN] = {};

	for (long i = 0; i + (long)(r->len / r->page) + 1 < (long)(r->srclen / r->page); i++) {
		struct iovec iov[2] = { { hdr, sizeof(hdr) }, { r->src + i * r->page, r->len } };

		if (writev(r->fd, iov, 2) < 0 && errno == EFAULT) {
			r->err = EFAULT;
			break;
		}
		__atomic_add_fetch(&r->writes, 1, __ATOMIC_RELAXED);
	}
	r->t_done = now_secs();
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* mprotect() holds the mmap lock for writing while it rewrites every
 * page table entry of the mapping (munmap() would downgrade it before it
 * frees the pages); PROT_NONE makes the writer's copy fail afterwards.
 */
static void *copy_race_protect(void *arg)
{
	struct copy_race *r = arg;

	mprotect(r->src, r->srclen + ((size_t)r->hold_maps * HOLD_MB << 20), PROT_NONE);
	r->t_protected = now_secs();
	return NULL;
}

/* An xdp.frags program that drops every frame, in the driver on TAP0 of
 * ns. 0 or -1.
 */
static int drop_frags_attach(const char *ns)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = xdp_raw_attach(ns, TAP0, prog, 2);

	if (fd < 0)
		return -1;
	close(fd);	/* the attachment holds the program */
	return 0;
}

/* Both cases run under an xdp.frags XDP_DROP program (v5: a tap has pools
 * only while a program is attached). !frags: 1000-byte frames, one buffer
 * each. frags: 9000-byte frames (65,000 with 64 KB pages, where 9000 bytes
 * fit one buffer: tun_mb_frame_len()), so that
 * the writer is held in the multi-buffer path's copy, and its failure
 * gives the buffers of the old pool back from there; then frames are
 * dropped by the same program on the new tap. With PREEMPT_RT and
 * lockdep (RT=1) that is the lock order of the review's bug 4: pages put
 * to the pool's ring (spin_lock_bh(), the CPU's BH lock on RT) under
 * pp_lock, and pp_lock taken with BHs off.
 */
static void reattach_while_copying(bool frags)
{
	size_t page = sysconf(_SC_PAGESIZE), srclen = (size_t)SRC_MB << 20;
	/* A PREEMPT_RT guest takes 2.4 s to delete the tap, and deleting a
	 * tap with a program takes the pools' grace period too (a DEBUG=1
	 * guest on a loaded host no longer held the writer long enough with
	 * HOLD_MAPS): hold it four times as long. Page table entries are what
	 * mprotect() spends its time on: as many as with 4 KB pages.
	 */
	int hold_maps = 4 * HOLD_MAPS * (page > 4096 ? page / 4096 : 1);
	size_t holdlen = (size_t)HOLD_MB << 20, maplen = srclen + hold_maps * holdlen;
	struct copy_race r = { .fd = -1, .page = page, .srclen = srclen,
			       .len = frags ? tun_mb_frame_len(9000) : 1000,
			       .hold_maps = hold_maps };
	char ns[NETNS_NAME_MAX] = "", cmd[160];
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };
	pthread_t writer, protector;
	struct tap t = { .fd = -1 };
	int go[2] = { -1, -1 }, st, err = -1, mfd = -1;
	struct pp_info pi = {};
	posix_spawn_file_actions_t fa;
	double end, t0, t1;
	pid_t del = -1;
	bool held;
	ssize_t wr;

	if (!ASSERT_OK(netns_add("tunrc", ns), "netns"))
		return;
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t), "tap") || !ASSERT_OK(pipe(go), "pipe"))
		goto out;
	/* A program in both cases: since v5 only a tap with one has pools. */
	if (!ASSERT_OK(drop_frags_attach(ns), "drop frags program"))
		goto out;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), TAP0);
	/* The deleter, ip -batch, waits for its command on the pipe: spawning
	 * it once the mmap lock is held would wait for the lock too.
	 */
	if (!ASSERT_OK(posix_spawn_file_actions_init(&fa), "spawn actions"))
		goto out;
	posix_spawn_file_actions_adddup2(&fa, go[0], 0);
	posix_spawn_file_actions_addclose(&fa, go[1]);
	snprintf(cmd, sizeof(cmd), "%s", ns);
	err = posix_spawnp(&del, "ip", &fa, NULL,
			   (char *[]){ "ip", "-n", cmd, "-batch", "-", NULL }, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (!ASSERT_OK(err, "spawn deleter"))
		goto out;
	close(go[0]);
	go[0] = -1;
	/* Address space only; the writer's pages are mapped over it. */
	r.src = mmap(NULL, maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!ASSERT_NEQ(r.src, MAP_FAILED, "address space"))
		goto out;
	if (!ASSERT_NEQ(mmap(r.src, srclen, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), MAP_FAILED,
			"the writer's pages"))
		goto out_map;
	mfd = memfd_create("tun-hold", MFD_CLOEXEC);
	if (!ASSERT_GE(mfd, 0, "memfd") || !ASSERT_OK(ftruncate(mfd, holdlen), "memfd size"))
		goto out_map;
	for (int i = 0; i < hold_maps; i++)
		if (!ASSERT_NEQ(mmap(r.src + srclen + i * holdlen, holdlen, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_FIXED | MAP_POPULATE, mfd, 0), MAP_FAILED,
				"populated shared mapping"))
			goto out_map;
	r.fd = t.fd;
	if (!ASSERT_OK(pthread_create(&writer, NULL, copy_race_writer, &r), "writer"))
		goto out_map;
	end = now_secs() + 10;
	while (__atomic_load_n(&r.writes, __ATOMIC_RELAXED) < 100 && now_secs() < end)
		usleep(1000);
	if (!ASSERT_OK(pthread_create(&protector, NULL, copy_race_protect, &r), "mprotect")) {
		pthread_join(writer, NULL);
		goto out_map;
	}
	/* Let the writer block in its copy, then delete the device and
	 * attach the fd to a new one while it is held there. Nothing here may
	 * fault or map memory (the lock is held): no output until the new tap
	 * is there.
	 */
	usleep(20 * 1000);
	t0 = now_secs();
	wr = write(go[1], "link del " TAP0 "\n", sizeof("link del " TAP0 "\n") - 1);
	close(go[1]);
	go[1] = -1;
	end = now_secs() + 20;
	while ((err = ioctl(t.fd, TUNSETIFF, &ifr)) && errno == EEXIST && now_secs() < end)
		;
	t1 = now_secs();
	held = !__atomic_load_n(&r.done, __ATOMIC_ACQUIRE);
	ASSERT_EQ(wr, (ssize_t)sizeof("link del " TAP0 "\n") - 1, "start the deleter");
	ASSERT_OK(err, "same fd, new tap, while the writer copies");
	ASSERT_TRUE(held, "the writer was still held when the new tap came (else: more HOLD_MAPS)");
	pthread_join(protector, NULL);
	pthread_join(writer, NULL);
	munmap(r.src, maplen);
	if (test__verbose())
		printf("    new tap %.3f s after the delete began, copy failed at %.3f s, "
		       "mprotect done at %.3f s\n", t1 - t0, r.t_done - t0, r.t_protected - t0);
	ASSERT_EQ(r.err, EFAULT, "the writer's copy failed once the page was gone");
	waitpid(del, &st, 0);
	del = -1;
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "old tap deleted");
	for (int i = 0; i < 50; i++) {
		if (!pp_dump(ns, 0, false, &pi) && !pi.detached)
			break;
		usleep(200 * 1000);
	}
	ASSERT_EQ(pi.detached, 0, "pools of the deleted tap left while the fd lives on");
	if (frags && ASSERT_OK(sh("ip -n %s link set " TAP0 " up", ns), "new tap up") &&
	    ASSERT_OK(drop_frags_attach(ns), "drop frags program on the new tap")) {
		/* frames of the writer's length, for the multi-buffer path */
		uint8_t *buf = malloc(r.len);

		if (ASSERT_OK_PTR(buf, "frame") &&
		    ASSERT_EQ(frame_build_big(buf, r.len, &t, r.len), r.len, "frame built"))
			ASSERT_EQ(send_write_big(&t, buf, r.len, 4), 4,
				  "frames dropped on the new tap");
		free(buf);
	}
	tap_close(&t);
	assert_pools_gone(ns, "page pools left after closing the tap");
	goto out;
out_map:
	munmap(r.src, maplen);
out:
	if (mfd >= 0)
		close(mfd);
	if (del > 0) {
		kill(del, SIGKILL);
		waitpid(del, &st, 0);
	}
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	tap_close(&t);
	netns_del(ns);
}

/* An xdp.frags program that passes every frame, in the driver on ifname
 * of ns. Its fd (the attachment holds it too), or -1.
 */
static int pass_frags_attach(const char *ns, const char *ifname)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return xdp_raw_attach(ns, ifname, prog, 2);
}

static int xdp_detach_in(const char *ns, int ifindex)
{
	int saved = netns_enter(ns), err;

	if (saved < 0)
		return -1;
	err = bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	netns_leave(saved);
	return err;
}

/* Pools of ifindex in ns, waiting up to 10 s for there to be want. */
static int pools_of(const char *ns, int ifindex, int want)
{
	struct pp_info pi = {};

	for (double end = now_secs() + 10; now_secs() < end; usleep(100 * 1000))
		if (!pp_dump(ns, ifindex, false, &pi) && pi.npools == want)
			break;
	return pi.npools;
}

/* A device of flags (IFF_TAP plus any) named name in ns, up:
 * its fd, or -1; *ifindex is set.
 */
static int tun_dev_make(const char *ns, const char *name, int flags, int *ifindex)
{
	struct ifreq ifr = { .ifr_flags = flags | IFF_NO_PI };
	int saved = netns_enter(ns), fd;

	if (saved < 0)
		return -1;
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	netns_leave(saved);
	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) || sh("ip -n %s link set %s up", ns, name)) {
		close(fd);
		return -1;
	}
	*ifindex = netns_ifindex(ns, name);
	return fd;
}

/* Issue 19's "pools only where they serve" (v5): a queue has a pool only
 * while an XDP program is attached, and only if it builds frames in
 * tun's own buffers (not IFF_NAPI_FRAGS). A tap without XDP runs stock's
 * code and holds no pool pages.
 */
static void pools_only_with_xdp(void)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	static struct frame f;
	int pfd = -1, dfd = -1, ifindex = 0;

	if (!ASSERT_OK(netns_add("tunpx", ns), "netns"))
		return;
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t), "tap"))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG: no pools (kernel without kernel-patches/tun)");
		goto out;
	}
	frame_build(&f, &t, SZ_1500);
	ASSERT_EQ(send_write(&t, &f, N_FRAMES), N_FRAMES, "frames written, no program");
	ASSERT_EQ(pools_of(ns, t.ifindex, 0), 0, "pools of a tap without XDP");
	pfd = pass_frags_attach(ns, TAP0);
	if (!ASSERT_GE(pfd, 0, "pass program attached"))
		goto out;
	ASSERT_EQ(send_write(&t, &f, N_FRAMES), N_FRAMES, "frames written under XDP_PASS");
	ASSERT_EQ(pools_of(ns, t.ifindex, 1), 1, "pools of a one-queue tap with XDP");
	ASSERT_OK(xdp_detach_in(ns, t.ifindex), "program detached");
	ASSERT_EQ(send_write(&t, &f, N_FRAMES), N_FRAMES, "frames written after the detach");
	ASSERT_EQ(pools_of(ns, t.ifindex, 0), 0, "pools once the program is detached");
	close(pfd);
	pfd = -1;

	/* (IFF_TUN devices take no program in the driver: no ndo_bpf.) */
	dfd = tun_dev_make(ns, "xtunfr", IFF_TAP | IFF_NAPI | IFF_NAPI_FRAGS, &ifindex);
	if (ASSERT_GE(dfd, 0, "IFF_NAPI_FRAGS tap")) {
		pfd = pass_frags_attach(ns, "xtunfr");
		if (ASSERT_GE(pfd, 0, "pass program on the IFF_NAPI_FRAGS tap"))
			ASSERT_EQ(pools_of(ns, ifindex, 0), 0,
				  "pools of an IFF_NAPI_FRAGS tap with XDP");
		close(pfd);
		pfd = -1;
		close(dfd);
	}
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
}

TEST(tun_page_pool)
{
	char ns[NETNS_NAME_MAX] = "", why[128];
	struct tap t0 = { .fd = -1 };
	struct pp_info before, after;
	static struct frame f;
	int sfd = -1, pfd = -1;

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (!ASSERT_OK(netns_add("tunpp", ns), "netns"))
		return;
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t0), "tap") ||
	    !ASSERT_OK(sh("ip -n %s addr add " TAP_IP "/24 dev " TAP0 " && ip -n %s neigh replace "
			  PEER_IP " lladdr 02:00:00:00:22:02 dev " TAP0, ns, ns), "address"))
		goto out;
	/* Pools serve XDP: a tap has them only while a program is attached. */
	pfd = pass_frags_attach(ns, TAP0);
	if (!tap_has_pool(ns, &t0, why, sizeof(why))) {
		test__skip("%s", why);
		goto out;
	}
	if (test__start_subtest("recycling")) {
		/* 1500-byte frames to a pool page: three to one of 8 KB (4 KB
		 * pages), thirty to one of 64 KB. A round writes enough of
		 * them for five pages or more: 16 with 4 KB pages, 160 with
		 * 64 KB ones (16 there filled half a page, and most rounds
		 * passed no page through the pool's ring).
		 */
		int rounds = 64, per_page = tun_pool_page() / tun_buf_len(size_len[SZ_1500]);
		int per_round = 16 * (per_page / 3 > 1 ? per_page / 3 : 1);

		sfd = udp_listen_in(ns);
		ASSERT_OK(pp_dump(ns, t0.ifindex, true, &before), "stats before");
		frame_build(&f, &t0, SZ_1500);
		/* rounds * per_round frames of 1500 bytes need at least
		 * rounds * per_round / per_page pool pages (341 with 4 KB or
		 * 64 KB pages): more than the pool holds, and without
		 * recycling every one would be a fresh (slow) allocation from
		 * the page allocator.
		 */
		for (int i = 0; i < rounds; i++) {
			ASSERT_EQ(send_write(&t0, &f, per_round), per_round, "written");
			ASSERT_EQ(sock_collect(sfd, f.payload, per_round, 5), per_round,
				  "received");
		}
		ASSERT_OK(pp_dump(ns, t0.ifindex, true, &after), "stats after");
		ASSERT_LT(after.slow - before.slow, rounds * per_round / per_page / 2,
			  "fresh pages: most of the pages came back");
		/* Each round frees its pages when the socket is read; the one
		 * still being filled may be reused without passing through the
		 * pool's ring, so count one a round.
		 */
		ASSERT_GE(after.recycled - before.recycled, rounds, "pages recycled");
		if (test__verbose())
			printf("    %d rounds of %d frames, %d to a pool page of %zu bytes: "
			       "alloc %llu (slow %llu) recycled %llu\n", rounds, per_round,
			       per_page, tun_pool_page(), after.alloc - before.alloc,
			       after.slow - before.slow, after.recycled - before.recycled);
	}
	if (test__start_subtest("delete_under_traffic")) {
		pid_t pid;
		int st;

		/* Unread frames in the socket would hold pages of the pool. */
		if (sfd >= 0)
			close(sfd);
		sfd = -1;
		frame_build(&f, &t0, SZ_64);
		pid = fork();
		if (pid == 0) {
			/* Writes until the device is gone (EBADFD / EIO). */
			for (int i = 0; i < 2000000; i++)
				if (send_write(&t0, &f, 1) != 1 && errno != EAGAIN)
					break;
			_exit(0);
		}
		usleep(300 * 1000);
		ASSERT_OK(sh("ip -n %s link del " TAP0, ns), "delete under traffic");
		waitpid(pid, &st, 0);
		tap_close(&t0);
		assert_pools_gone(ns, "page pools left in the namespace");
	}
	if (test__start_subtest("only_with_xdp"))
		pools_only_with_xdp();
	if (test__start_subtest("dropped_buffer_freed"))
		dropped_buffer_freed();
	if (test__start_subtest("reattach_under_traffic"))
		reattach_under_traffic();
	if (test__start_subtest("reattach_while_copying"))
		reattach_while_copying(false);
	if (test__start_subtest("reattach_while_copying_mb"))
		reattach_while_copying(true);
out:
	if (sfd >= 0)
		close(sfd);
	if (pfd >= 0)
		close(pfd);
	tap_close(&t0);
	netns_del(ns);
}

/* The series advertises multi-buffer XDP (RX_SG); stock 6.12 tun does not. */
TEST(tun_xdp_features)
{
	char ns[NETNS_NAME_MAX] = "", cmd[256];
	struct tap t0 = { .fd = -1 };

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (!ASSERT_OK(netns_add("tunft", ns), "netns"))
		return;
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t0), "tap"))
		goto out;
	snprintf(cmd, sizeof(cmd), "ip netns exec %s %s status " TAP0 " --json", ns,
		 test__path("xdplab"));
	if (!ASSERT_OK(sh_out(out, sizeof(out), "%s", cmd), "xdplab status"))
		goto out;
	if (strstr(out, "\"unknown")) {
		test__skip("kernel without XDP feature flags (netdev xdp-features, Linux 6.3)");
		goto out;
	}
	ASSERT_STRSTR(out, "BASIC", "tap has native XDP");
	if (!strstr(out, "RX_SG"))
		test__skip("tun without RX_SG (kernel without the multi-buffer patch)");
out:
	tap_close(&t0);
	netns_del(ns);
}

/* ---- multi-buffer XDP (RX_SG) ---- */

bool tap_has_rx_sg(const char *ns)
{
	if (sh_out(out, sizeof(out), "ip netns exec %s %s status " TAP0 " --json", ns,
		   test__path("xdplab")))
		return false;
	return strstr(out, "RX_SG");
}

/* Frames larger than a page and a GSO frame over several pages, written to
 * the tap, under one program: all must reach it as multi-buffer frames
 * (mb_packets) with a frags program, none without, and arrive intact where
 * the verdict sends them. "Larger than a page" is larger than tun puts in
 * one buffer (tun_one_buf_max()): 9000-byte frames with 4 KB pages; with
 * 64 KB pages those fit one buffer (and are counted as such), and frames
 * of tun_mb_frame_len(9000) bytes (65,000) are written as well.
 */
static void mb_verdict(const char *ns, struct tap *t0, struct tap *t1, enum verdict v,
		       bool frags)
{
	static const enum size_kind kinds[] = { SZ_9000, SZ_GSO_BIG };
	const size_t big_len = tun_mb_frame_len(size_len[SZ_9000]);
	/* 9000 bytes fit one buffer: the frame that does not, as a third */
	const bool big = big_len != size_len[SZ_9000];
	const int nkinds = sizeof(kinds) / sizeof(kinds[0]) + big;
	const char *fl = frags ? "--frags" : "--no-frags";
	long long mb, n, want_mb = 0;
	static uint8_t bigbuf[14 + 65535];
	struct cli_bg bg;
	int sfd = -1, st;
	char args[160];

	if (big && big_len > sizeof(bigbuf)) {
		test__skip("no UDP frame is longer than tun's one buffer (%zu bytes) with %ld KB "
			   "pages: only GSO frames are multi-buffer", tun_one_buf_max(),
			   sysconf(_SC_PAGESIZE) >> 10);
		return;
	}
	switch (v) {
	case V_PASS:
		snprintf(args, sizeof(args), "pass " TAP0 " %s --json -q", fl);
		break;
	case V_DROP:
		snprintf(args, sizeof(args), "drop " TAP0 " --proto udp --port %d %s --json -q",
			 PORT, fl);
		break;
	case V_TX:
		snprintf(args, sizeof(args), "tx " TAP0 " %s --json -q", fl);
		break;
	default:
		snprintf(args, sizeof(args), "redirect " TAP0 " " TAP1 " %s --json -q", fl);
		break;
	}
	if (v == V_PASS || v == V_DROP) {
		sfd = udp_listen_in(ns);
		if (!ASSERT_GE(sfd, 0, "udp socket"))
			return;
	}
	/* a redirect of a frame longer than the target's MTU is dropped */
	if (big && v == V_REDIRECT &&
	    !ASSERT_OK(sh("ip -n %s link set " TAP1 " mtu %zu", ns, big_len - 14),
		       "second tap's MTU"))
		goto out;
	if (!cli_attach(&bg, ns, TAP0, args))
		goto out;
	for (int i = 0; i < nkinds; i++) {
		static struct frame f;
		bool is_big = i == (int)(sizeof(kinds) / sizeof(kinds[0]));
		size_t len, payload;
		char what[64];
		int sent, got;

		if (is_big) {
			len = frame_build_big(bigbuf, sizeof(bigbuf), t0, big_len);
			payload = len - 42;
			snprintf(what, sizeof(what), "write %zuB %s", big_len, verdict_name[v]);
			sent = send_write_big(t0, bigbuf, len, N_FRAMES);
		} else {
			frame_build(&f, t0, kinds[i]);
			len = f.len;
			payload = f.payload;
			snprintf(what, sizeof(what), "write %s %s", size_name[kinds[i]],
				 verdict_name[v]);
			sent = send_write(t0, &f, N_FRAMES);
		}
		/* GSO, or more than one buffer holds: multi-buffer */
		if ((!is_big && kinds[i] == SZ_GSO_BIG) || len > tun_one_buf_max())
			want_mb += N_FRAMES;
		if (!test__report(sent == N_FRAMES, __FILE__, __LINE__, what,
				  "%d of %d frames went in", sent, N_FRAMES))
			continue;
		got = collect(v, sfd, t0, t1, payload);
		if (v == V_DROP)
			test__report(got <= 0, __FILE__, __LINE__, what, "%d frames got through",
				     got);
		else
			test__report(got == N_FRAMES, __FILE__, __LINE__, what,
				     "%d of %d frames arrived intact (negative: bad ones)", got,
				     N_FRAMES);
	}
	st = cli_stop(&bg, SIGINT, 10, out, sizeof(out));
	if (!ASSERT_EQ(st, 0, "xdplab exit status")) {
		fprintf(stdout, "%s", out);
		goto out;
	}
	n = json_num(out, "\"summary\"", verdict_name[v]);
	mb = json_num(out, "\"summary\"", "mb_packets");
	if (test__verbose())
		printf("    %lld verdicts, %lld multi-buffer; %lld frames longer than one buffer "
		       "(%zu bytes with %ld KB pages) or GSO\n", n, mb, want_mb,
		       tun_one_buf_max(), sysconf(_SC_PAGESIZE) >> 10);
	ASSERT_GE(n, nkinds * N_FRAMES, "program's verdicts");
	if (frags)
		ASSERT_GE(mb, want_mb, "frames the program saw as multi-buffer");
	else
		ASSERT_EQ(mb, 0, "multi-buffer frames given to a program without frags");
out:
	if (big && v == V_REDIRECT)
		sh("ip -n %s link set " TAP1 " mtu 9000", ns);
	if (sfd >= 0)
		close(sfd);
}

TEST(tun_xdp_multibuf)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t0 = { .fd = -1 }, t1 = { .fd = -1 };

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (!ASSERT_OK(netns_add("tunmb", ns), "netns"))
		return;
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 9000, &t0), "tap") ||
	    !ASSERT_OK(tap_make(ns, TAP1, 0, 9000, &t1), "second tap") ||
	    !ASSERT_OK(sh("ip -n %s addr add " TAP_IP "/24 dev " TAP0 " && "
			  "ip -n %s neigh replace " PEER_IP
			  " lladdr 02:00:00:00:22:02 dev " TAP0, ns, ns), "address"))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG (kernel without the multi-buffer patch)");
		goto out;
	}
	for (enum verdict v = V_PASS; v < V_NR; v++) {
		char name[32];

		snprintf(name, sizeof(name), "frags/%s", verdict_name[v]);
		if (test__start_subtest(name))
			mb_verdict(ns, &t0, &t1, v, true);
	}
	/* A linear-only program cannot be attached in the driver above one
	 * page of MTU; the frames written are not bound by the MTU.
	 */
	if (test__start_subtest("no-frags/pass") &&
	    ASSERT_OK(sh("ip -n %s link set " TAP0 " mtu 1500", ns), "mtu 1500"))
		mb_verdict(ns, &t0, &t1, V_PASS, false);
out:
	tap_close(&t0);
	tap_close(&t1);
	netns_del(ns);
}

/* ---- what a frame asks of the kernel, on XDP_TX and XDP_REDIRECT ---- */

/* A frame written with GSO or a partial checksum in its virtio-net header,
 * which an xdp.frags program sends back out (tx) or to a second tap
 * (redirect), must arrive with each checksum either complete or left to
 * the reader (NEEDS_CSUM in the header it reads).
 *  - tx, the tap's reader having asked for checksum and UDP GSO offload
 *    (TUNSETOFFLOAD): the frame comes back whole, GSO and NEEDS_CSUM in
 *    its header, as stock's generic XDP queued it;
 *  - tx, the reader having asked for none: segmented, checksums complete,
 *    as the stack would send it to such a reader (stock's generic XDP sent
 *    the skb whole all the same: checked on RX_SG kernels only);
 *  - redirect to a second tap (no offloads): segmented, whatever the
 *    segments' size (an XDP redirect carries no GSO state).
 */
enum offload_mode { OM_TX, OM_TX_PLAIN, OM_REDIRECT, OM_NR };
static const char *const offload_mode_name[] = { "tx", "tx-no-offload", "redirect" };

struct offload_case {
	const char *name;
	size_t len;		/* frame bytes */
	unsigned int gso_size;	/* 0: no GSO */
	bool mb;		/* len at least: longer than tun's one buffer */
};

static const struct offload_case offload_cases[] = {
	/* a guest at MTU 9000 with UDP GSO: segments larger than a page */
	{ "gso-8000", 42 + 16000, 8000, false },
	/* larger than a page, checksum left to the kernel, no GSO: larger
	 * than one buffer of tun's, so the multi-buffer path's (9000 bytes
	 * with 4 KB pages; 65,000 with 64 KB pages, where 9000 bytes take
	 * the one-buffer path: tun_mb_frame_len())
	 */
	{ "csum-9000", 9000, 0, true },
	/* GSO in the header, but one segment's worth of payload */
	{ "gso-small", 42 + 500, 1000, false },
};

static void offload_verdict(const char *ns, struct tap *t0, struct tap *t1,
			    enum offload_mode m, const struct offload_case *c, bool rx_sg)
{
	bool tx = m != OM_REDIRECT, whole = m == OM_TX;
	const size_t len = c->mb ? tun_mb_frame_len(c->len) : c->len;
	/* a redirect of a frame longer than the target's MTU is dropped */
	const bool mtu_up = !tx && len - 14 > 9000;
	struct tap_rx_counts rc;
	static struct frame f;
	/* frames longer than struct frame holds (c->mb, 64 KB pages) */
	static uint8_t bigbuf[14 + 65535];
	struct virtio_net_hdr vh = {};
	struct cli_bg bg;
	char args[160];
	size_t payload;
	int sent, got;

	if (len > sizeof(bigbuf)) {
		test__skip("no UDP frame is longer than tun's one buffer (%zu bytes) with %ld KB "
			   "pages", tun_one_buf_max(), sysconf(_SC_PAGESIZE) >> 10);
		return;
	}
	if (!ASSERT_OK(ioctl(t0->fd, TUNSETOFFLOAD, whole ? TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6 : 0),
		       "the reader's offloads"))
		return;
	if (mtu_up && !ASSERT_OK(sh("ip -n %s link set " TAP1 " mtu %zu", ns, len - 14),
				 "second tap's MTU"))
		return;
	if (tx)
		snprintf(args, sizeof(args), "tx " TAP0 " --frags --json -q");
	else
		snprintf(args, sizeof(args), "redirect " TAP0 " " TAP1 " --frags --json -q");
	if (!cli_attach(&bg, ns, TAP0, args))
		goto out_mtu;
	if (len <= sizeof(f.data)) {
		frame_build_udp(&f, t0, len, c->gso_size, true);
		payload = f.payload;
		sent = send_write(t0, &f, N_FRAMES);
	} else {
		/* no GSO (c->mb): the checksum left to the kernel alone */
		if (!ASSERT_EQ(frame_build_big(bigbuf, sizeof(bigbuf), t0, len), len,
			       "frame built"))
			goto out;
		frame_csum_partial(bigbuf, len, &vh);
		payload = len - 42;
		sent = send_write_vh(t0, &vh, bigbuf, len, N_FRAMES);
	}
	if (test__verbose())
		printf("    %d frames of %zu bytes (tun's one buffer: up to %zu with %ld KB pages)\n",
		       sent, len, tun_one_buf_max(), sysconf(_SC_PAGESIZE) >> 10);
	if (!ASSERT_EQ(sent, N_FRAMES, "frames written"))
		goto out;
	got = tap_collect_csum(tx ? t0->fd : t1->fd, payload, N_FRAMES, tx ? t0->mac : NULL,
			       10, &rc);
	test__report(got == N_FRAMES, __FILE__, __LINE__, "frames arrived",
		     "%d of %d %s frames arrived intact (negative: bad ones)", got, N_FRAMES,
		     c->name);
	test__report(rc.bad_csum == 0, __FILE__, __LINE__, "checksums",
		     "%d pieces arrived with an incomplete UDP checksum and no NEEDS_CSUM in "
		     "their virtio-net header", rc.bad_csum);
	if (whole) {
		test__report(rc.pieces == N_FRAMES, __FILE__, __LINE__, "sent whole",
			     "%d pieces read for %d %s frames (1 each: not segmented)", rc.pieces,
			     N_FRAMES, c->name);
		/* virtio_net_hdr_to_skb(): "too small packets are not really
		 * GSO ones"
		 */
		if (c->gso_size && c->len - 42 > c->gso_size)
			test__report(rc.gso == rc.pieces, __FILE__, __LINE__, "GSO kept",
				     "%d of %d pieces with GSO in their virtio-net header", rc.gso,
				     rc.pieces);
		else
			test__report(rc.needs_csum == rc.pieces, __FILE__, __LINE__,
				     "checksum left to the reader", "%d of %d pieces with NEEDS_CSUM",
				     rc.needs_csum, rc.pieces);
	} else if (rx_sg) {
		ASSERT_EQ(rc.gso, 0, "pieces with GSO, to a reader that took no GSO offload");
		ASSERT_EQ(rc.needs_csum, 0, "pieces with NEEDS_CSUM, to a reader that took no "
			  "checksum offload");
	}
out:
	cli_stop_ok(&bg, ns, TAP0);
out_mtu:
	if (mtu_up)
		sh("ip -n %s link set " TAP1 " mtu 9000", ns);
}

TEST(tun_xdp_offload)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t0 = { .fd = -1 }, t1 = { .fd = -1 };
	bool rx_sg;

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (!ASSERT_OK(netns_add("tunof", ns), "netns"))
		return;
	if (!tap_takes_udp_gso(ns)) {
		test__skip("tap refuses UDP GSO frames (VIRTIO_NET_HDR_GSO_UDP_L4, Linux 6.2)");
		goto out;
	}
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 9000, &t0), "tap") ||
	    !ASSERT_OK(tap_make(ns, TAP1, 0, 9000, &t1), "second tap"))
		goto out;
	rx_sg = tap_has_rx_sg(ns);
	for (enum offload_mode m = OM_TX; m < OM_NR; m++) {
		for (size_t i = 0; i < sizeof(offload_cases) / sizeof(offload_cases[0]); i++) {
			const struct offload_case *c = &offload_cases[i];
			char name[64];

			snprintf(name, sizeof(name), "%s/%s", offload_mode_name[m], c->name);
			if (!test__start_subtest(name))
				continue;
			if (m == OM_REDIRECT && c->len - 14 > 9000 && !rx_sg)
				test__skip("tun without RX_SG redirects through generic XDP, "
					   "which drops a GSO frame larger than the target's MTU");
			else
				offload_verdict(ns, &t0, &t1, m, c, rx_sg);
		}
	}
out:
	tap_close(&t0);
	tap_close(&t1);
	netns_del(ns);
}

/* ---- writes under memory pressure ---- */

/* Stock tun built written frames in the task page_frag, refilled with
 * GFP_KERNEL: it can reclaim and falls back to order 0. With every
 * allocation of order 1 and up failing for the writer (fail_page_alloc,
 * min-order 1, only those that cannot sleep, only this task), frames of
 * every path must still go in and arrive: 1500 bytes without a program,
 * 1500 bytes under a pass program, 9000 bytes under a frags pass program.
 */
struct pressure_case {
	const char *name;
	const char *args;	/* xdplab arguments, NULL: no program */
	size_t len;
};

static void pressure_case_run(const char *ns, struct tap *t, int sfd,
			      const struct pressure_case *c)
{
	struct fault_cfg cfg = { .kind = FAULT_PAGE_ALLOC, .probability = 100, .min_order = 1,
				 .ntasks = 1, .tasks = { getpid() } };
	static struct frame f;
	struct fault fault = {};
	struct cli_bg bg;
	int sent, got;
	long injected;

	if (c->args && !cli_attach(&bg, ns, TAP0, c->args))
		return;
	frame_build_udp(&f, t, c->len, 0, false);
	if (ASSERT_OK(fault_arm(&fault, &cfg), "arm fail_page_alloc")) {
		sent = send_write(t, &f, N_FRAMES);
		injected = fault_disarm(&fault);
		test__report(sent == N_FRAMES, __FILE__, __LINE__, "written",
			     "%d of %d %s writes went in (%s)", sent, N_FRAMES, c->name,
			     strerror(errno));
		/* Without a program (stock's task page_frag, also with the
		 * series since v5) the page_frag may be reused whole, with no
		 * allocation to fail: that case only has to go in.
		 */
		if (c->args)
			ASSERT_GT(injected, 0, "allocations failed on purpose");
		got = sock_collect(sfd, f.payload, sent, 10);
		ASSERT_EQ(got, sent, "frames at the socket");
	}
	if (c->args)
		cli_stop_ok(&bg, ns, TAP0);
}

TEST(tun_alloc_pressure)
{
	static const struct pressure_case cases[] = {
		{ "no-xdp", NULL, 1500 },
		{ "pass", "pass " TAP0 " --json -q", 1500 },
		{ "frags-9000", "pass " TAP0 " --frags --json -q", 9000 },
	};
	const char *why = fault_unavailable(FAULT_PAGE_ALLOC);
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	int sfd = -1;

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (why) {
		test__skip("%s", why);
		return;
	}
	if (!ASSERT_OK(netns_add("tunap", ns), "netns"))
		return;
	/* MTU 1500 so that a linear program attaches; written frames are
	 * not bound by it.
	 */
	if (!ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t), "tap") ||
	    !ASSERT_OK(sh("ip -n %s addr add " TAP_IP "/24 dev " TAP0, ns), "address"))
		goto out;
	sfd = udp_listen_in(ns);
	if (!ASSERT_GE(sfd, 0, "udp socket"))
		goto out;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (test__start_subtest(cases[i].name))
			pressure_case_run(ns, &t, sfd, &cases[i]);
out:
	if (sfd >= 0)
		close(sfd);
	tap_close(&t);
	netns_del(ns);
}
