// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The bugs the fresh-context review of the tun series v2 found
 * (kernel-patches/tun/review-v2.md, issue 19), one test each; bug 4, the
 * PREEMPT_RT lock order, is tun_page_pool/reattach_while_copying_mb in
 * test_tun.c, which has the copy race it needs.
 *
 *  tun_carve_reuse   (1) frames written to a tap with no XDP program, merged
 *                    by GRO, forwarded and segmented in software to a
 *                    second tap, must keep their bytes while they wait in
 *                    that tap's queue and more frames are written.
 *  tun_gro_charge    (found by kmemleak, a stock bug) TCP frames written to
 *                    an IFF_NAPI tap and merged by GRO: their charge on
 *                    the writer's socket all comes back.
 *  tun_xdp_csum_start (review-v13-full BUG 1, stock's too) an 802.1Q TCP
 *                    frame with NEEDS_CSUM whose tag the program pops:
 *                    the skb's csum_start is the TCP header's, written,
 *                    multi-buffer and through vhost-net's batches.
 *  tun_mb_overflow   (2) the largest frames a multi-buffer program takes,
 *                    grown at the front and sent back out (XDP_TX): sent
 *                    whole or counted dropped, nothing written out of
 *                    bounds (DEBUG=1: KASAN).
 *  tun_mb_truesize   (3) 9000-byte frames through a CPUMAP (the kthread
 *                    builds their skb from the xdp_frame) are charged to
 *                    the receiving socket at least the pages they hold.
 *  tun_gso_one_mss   (5) a TCP GSO frame of one MSS (a 32-byte TCP header)
 *                    under XDP_TX: one frame back at the tap fd.
 *  tun_gso_pressure  (6) UDP GSO frames redirected to a second tap with
 *                    20 % of the writer's order >= 1 allocations failing
 *                    (FAULT=1): every segment arrives.
 *  tun_gso_pool_empty (6, v10) the same with all of them failing: no frame
 *                    finds pool pages, and every one must still arrive.
 *
 * and the bugs of the review of v3 (review-v3.md):
 *
 *  tun_xdp_act_len_xsk     (1) 20,000-byte NEEDS_CSUM frames redirected to
 *                          an AF_XDP socket in copy mode (which frees the
 *                          frame inside xdp_do_redirect()) while the copy
 *                          the checksum needs finds the pool empty: all at
 *                          the socket, rx_bytes right, no kernel report
 *                          (DEBUG=1: KASAN use-after-free in tun_xdp_act()).
 *  tun_seg_pressure_large  (2) 100,000-byte NEEDS_CSUM frames under XDP_TX
 *                          while the copy finds the pool empty (FAULT=1):
 *                          all back at the tap fd, none dropped.
 *  tun_seg_order0_own_buf  (review-v10 BUG 2) the same with 9000-byte
 *                          frames built in order-0 pages, and no buffer
 *                          for the copy either: all at the socket.
 *
 * and one of issue 19's design points:
 *
 *  tun_bad_vnet_hdr        frames of the multi-buffer path whose
 *                          virtio-net header stock refuses, under a frags
 *                          program: write() fails with EINVAL and the
 *                          program never runs, as on stock.
 *  tun_check_hdr_nomem     (review-v6 BUG 1) good GSO and large NEEDS_CSUM
 *                          frames under XDP_DROP while the check's atomic
 *                          skb allocation fails (FAULT=1): write() takes
 *                          every one, and the program sees each.
 *  tun_check_hdr_path      (review-v6 NIT 10) good frames of that path
 *                          under XDP_TX and XDP_REDIRECT: the program runs
 *                          once on the whole frame, on the native path
 *                          unless the check pulled headers past the linear
 *                          part, and the frame arrives intact.
 *
 * and the bugs of the review of v9 (review-v9.md):
 *
 *  tun_tx_tcp_gso_no_csum  (1) TCP GSO frames without NEEDS_CSUM under
 *                          XDP_TX: every segment back, no kernel report
 *                          (DEBUG=1: DEBUG_NET's unset transport header).
 *  tun_cpumap_devmap_return (2) pool frames a CPUMAP program redirects to
 *                          a DEVMAP target that refuses them: none
 *                          recycled into the pool's lockless cache.
 *
 * and a design point of the review of v11 (review-v11b.md):
 *
 *  tun_native_after_changes  64-byte frames under XDP_DROP after the
 *                          program's attach, detach and re-attach, and
 *                          replacement, on a tap and an IFF_NAPI one:
 *                          all dropped in the driver (rx_dropped).
 *
 * The programs are a few raw instructions, loaded here: each test needs a
 * verdict no xdplab program gives (a push then XDP_TX, a CPUMAP redirect
 * without headers parsed, XDP_TX without touching the frame).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/if_xdp.h>
#include <linux/sock_diag.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "fault_inject.h"
#include "netns.h"
#include "page_pool.h"
#include "pkt.h"
#include "stress.h"
#include "test.h"
#include "tun.h"
#include "vhost_net.h"

/* test_tun.c's: what tun makes of a frame by page size, and frames longer
 * than struct frame holds.
 */
size_t tun_buf_len(size_t len);
size_t tun_one_buf_max(void);
size_t tun_mb_frame_len(size_t len);
size_t tun_pool_page(void);
size_t frame_build_big(uint8_t *buf, size_t size, const struct tap *t, size_t len);
int send_write_big(const struct tap *t, const uint8_t *buf, size_t len, int n);

#define TAP0 "xtun0"
#define TAP1 "xtun1"
#define FWD_IP "198.18.23.1"
#define FWD_PEER_IP "198.18.23.2"

/* ---- raw programs ---- */

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define CALL(f)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define MOV_REG(d, s)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define LD_MAP_FD(d, fd) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
/* r0 = the value of key 0 of the array map fd, or NULL */
#define LOOKUP_KEY0(fd) \
	INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0), \
	MOV_REG(BPF_REG_2, BPF_REG_10), \
	INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4), \
	LD_MAP_FD(BPF_REG_1, fd), \
	CALL(BPF_FUNC_map_lookup_elem)

int xdp_raw_attach(const char *ns, const char *ifname, const struct bpf_insn *insns,
		      size_t n)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_XDP,
		    .prog_flags = BPF_F_XDP_HAS_FRAGS);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "tun_review", "GPL", insns, n, &o);
	int saved;

	if (fd < 0)
		return -1;
	saved = netns_enter(ns);
	if (saved < 0 || bpf_xdp_attach(netns_ifindex(ns, ifname), fd, XDP_FLAGS_DRV_MODE, NULL)) {
		if (saved >= 0)
			netns_leave(saved);
		close(fd);
		return -1;
	}
	netns_leave(saved);
	return fd;
}

static int xdp_tx_attach(const char *ns, const char *ifname)
{
	const struct bpf_insn p[] = { MOV_IMM(BPF_REG_0, XDP_TX), EXIT() };

	return xdp_raw_attach(ns, ifname, p, sizeof(p) / sizeof(p[0]));
}

/* Since v8 XDP_TX queues a GSO or NEEDS_CSUM frame whole for the tap's
 * own reader; a redirect still sends it as frames of its own, copied
 * (tun_xdp_xmit_seg()). Tests of that path redirect to a second tap.
 */
static int xdp_redirect_attach(const char *ns, const char *ifname, int to_ifindex)
{
	const struct bpf_insn p[] = {
		MOV_IMM(BPF_REG_1, to_ifindex), MOV_IMM(BPF_REG_2, 0),
		CALL(BPF_FUNC_redirect), EXIT(),
	};

	return xdp_raw_attach(ns, ifname, p, sizeof(p) / sizeof(p[0]));
}

/* ---- frames and their readers ---- */

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (p[i] << 8) | p[i + 1];
	if (len & 1)
		s += p[len - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* Sum of the IPv4 pseudo header for l4len bytes of protocol proto. */
static uint32_t pseudo4(const uint8_t *ip, uint8_t proto, size_t l4len)
{
	return sum16(ip + 12, 8, 0) + proto + l4len;
}

/* IPv4 header checksum, and the TCP one: complete, or (partial) only the
 * pseudo header, as a guest asking for checksum offload leaves it.
 */
static void tcp4_fix_csums(uint8_t *ip, size_t l4len, bool partial)
{
	uint8_t *th = ip + 20;

	ip[10] = ip[11] = 0;
	*(uint16_t *)(ip + 10) = htons(~fold(sum16(ip, 20, 0)) & 0xffff);
	th[16] = th[17] = 0;
	if (partial)
		*(uint16_t *)(th + 16) = htons(fold(pseudo4(ip, 6, l4len)));
	else
		*(uint16_t *)(th + 16) = htons(~fold(sum16(th, l4len, pseudo4(ip, 6, l4len))) &
					       0xffff);
}

/* A TCP/IPv4 frame PEER_IP:4242 -> dst:PORT to dst_mac with payload bytes
 * of the pattern (from offset 0), an ACK; opt: 12 bytes of options (NOP,
 * NOP, timestamps) in the header. Returns its length.
 */
static size_t tcp4_frame(uint8_t *buf, size_t size, const uint8_t *dst_mac, const char *dst,
			 size_t payload, bool opt)
{
	struct pkt_spec spec = { .ipver = 4, .l4 = PKT_TCP, .sport = 4242, .dport = PORT,
				 .len = 54 + payload };
	size_t olen = opt ? 12 : 0, len;

	memcpy(spec.dst_mac, dst_mac, 6);
	memcpy(spec.src_mac, (uint8_t[]){ 2, 0, 0, 0, 0x22, 2 }, 6);
	pkt_parse_ip(PEER_IP, &spec.src);
	pkt_parse_ip(dst, &spec.dst);
	if (size < 54 + olen + payload || !pkt_build(buf, size, &spec))
		return 0;
	len = 54 + olen + payload;
	if (opt) {
		uint8_t *th = buf + 34;

		memmove(th + 32, th + 20, payload);
		for (size_t i = 0; i < payload; i++)
			th[32 + i] = pkt_pattern(i);
		memcpy(th + 20, (uint8_t[]){ 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0 }, 12);
		th[12] = 8 << 4;
		*(uint16_t *)(buf + 16) = htons(len - 14);
	}
	buf[20] = 0x40;		/* DF */
	buf[21] = 0;
	tcp4_fix_csums(buf + 14, len - 34, false);
	return len;
}

static int write_vh(int fd, const struct virtio_net_hdr *vh, const void *frame, size_t len)
{
	uint8_t hdr[VHOST_NET_HDR_LEN] = {};
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)frame, len } };

	memcpy(hdr, vh, sizeof(*vh));
	return writev(fd, iov, 2) == (ssize_t)(sizeof(hdr) + len) ? 0 : -1;
}

static uint8_t rbuf[256 << 10];

/* Reads one frame from a non-blocking tap fd within timeout s: its length
 * (the virtio-net header in rbuf, the frame after it), or -1.
 */
static ssize_t tap_read(int fd, double timeout)
{
	double end = now_secs() + timeout;

	do {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n = read(fd, rbuf, sizeof(rbuf));

		if (n > VHOST_NET_HDR_LEN)
			return n - VHOST_NET_HDR_LEN;
		poll(&p, 1, 50);
	} while (now_secs() < end);
	return -1;
}

long long dev_stat(const char *ns, const char *ifname, const char *name)
{
	char buf[64];

	if (sh_out(buf, sizeof(buf), "ip netns exec %s cat /sys/class/net/%s/statistics/%s", ns,
		   ifname, name))
		return -1;
	return atoll(buf);
}

/* What the namespace's counters say, after a failure. */
static void diag(const char *ns)
{
	static char buf[16384];

	if (!sh_out(buf, sizeof(buf), "ip netns exec %s nstat -a -s | grep -v ' 0 '; "
		    "ip -n %s -s link", ns, ns))
		printf("%s", buf);
}

/* Packets the qdisc of ifname in ns has sent (GSO segments counted one
 * by one), or -1. tun counts its own transmit statistics only when the
 * reader takes the frame.
 */
static long long qdisc_sent(const char *ns, const char *ifname)
{
	char buf[4096], *p;

	if (sh_out(buf, sizeof(buf), "tc -n %s -s -j qdisc show dev %s", ns, ifname))
		return -1;
	p = strstr(buf, "\"packets\":");
	return p ? atoll(p + strlen("\"packets\":")) : -1;
}

/* A namespace with tap TAP0 (extra flags, MTU mtu) at TAP_IP/24, IPv6 off
 * so that no frame of the kernel's own mixes with the test's.
 */
static bool setup(const char *tag, char *ns, int extra, int mtu, struct tap *t)
{
	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return false;
	}
	if (!ASSERT_OK(netns_add(tag, ns), "netns"))
		return false;
	return ASSERT_OK(sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
			    "net.ipv6.conf.default.disable_ipv6=1", ns), "no IPv6") &&
	       ASSERT_OK(tap_make(ns, TAP0, extra, mtu, t), "tap") &&
	       ASSERT_OK(sh("ip -n %s addr add " TAP_IP "/24 dev " TAP0, ns), "address");
}

/* A stock bug the series fixes (Linux 6.12 to at least 6.18): on a kernel
 * without xdplab's tun series, whose taps have no RX_SG, its test would
 * fail every run, so it skips there with the reason unless
 * XDPLAB_RUN_STOCK_BUGS=1 is set. true if it skipped.
 */
static bool skip_stock_bug(const char *ns, const char *patch, const char *what)
{
	if (getenv("XDPLAB_RUN_STOCK_BUGS") || tap_has_rx_sg(ns))
		return false;
	test__skip("tun without xdplab's series (no RX_SG), whose %s fixes this: stock %s "
		   "(XDPLAB_RUN_STOCK_BUGS=1 runs it)", patch, what);
	return true;
}

/* Frame i of a TCP flow of mss-byte frames: its IP ID and sequence
 * number set, checksums complete.
 */
static void tcp4_frame_number(uint8_t *frame, size_t len, int i, size_t mss)
{
	uint8_t *ip = frame + 14, *th = ip + 20;

	*(uint16_t *)(ip + 4) = htons(i + 1);
	*(uint32_t *)(th + 4) = htonl(1 + i * mss);
	tcp4_fix_csums(ip, len - 34, false);
}

/* ---- 1: a carved page reused under plain page references ---- */

#define CARVE_FRAMES 16
#define CARVE_MSS 1448

/* Frames written to TAP0 (IFF_NAPI, an XDP_PASS program: since v5 only a
 * tap with a program builds its frames in pool pages) that GRO merges, are
 * forwarded to TAP1, whose only offload is the checksum, and segmented
 * there in software: the segments share the written frames' pages through
 * plain page references (skb_segment()), and the merged skb, the frames'
 * own reference, is freed. While they wait in TAP1's queue, more frames
 * are written to TAP0. Stock tun's page_frag reuses a page only when
 * nobody else holds it; the segments read from TAP1 must carry the bytes
 * that were written.
 */
TEST(tun_carve_reuse)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t0 = { .fd = -1 }, t1 = { .fd = -1 };
	const struct bpf_insn pass[] = { MOV_IMM(BPF_REG_0, XDP_PASS), EXIT() };
	struct virtio_net_hdr vh = {};
	static uint8_t frame[2048];
	int good = 0, bad = 0, gso = 0, other = 0, pfd = -1;
	long long tx0;
	size_t len;

	if (!setup("tuncr", ns, IFF_NAPI, 1500, &t0))
		goto out;
	pfd = xdp_raw_attach(ns, TAP0, pass, sizeof(pass) / sizeof(pass[0]));
	if (!ASSERT_GE(pfd, 0, "XDP_PASS program on the first tap"))
		goto out;
	if (!ASSERT_OK(tap_make(ns, TAP1, 0, 1500, &t1), "second tap") ||
	    !ASSERT_OK(ioctl(t1.fd, TUNSETOFFLOAD, TUN_F_CSUM), "checksum offload only") ||
	    !ASSERT_OK(sh("ip -n %s addr add " FWD_IP "/24 dev " TAP1 " && "
			  "ip -n %s neigh replace " FWD_PEER_IP " lladdr 02:00:00:00:23:02 dev "
			  TAP1 " nud permanent && "
			  "ip netns exec %s sysctl -qw net.ipv4.ip_forward=1 && "
			  "ip netns exec %s sh -c 'echo 20000000 > /sys/class/net/" TAP0
			  "/gro_flush_timeout'", ns, ns, ns, ns), "forwarding, GRO held 20 ms"))
		goto out;
	tx0 = qdisc_sent(ns, TAP1);
	len = tcp4_frame(frame, sizeof(frame), t0.mac, FWD_PEER_IP, CARVE_MSS, false);
	for (int i = 0; i < CARVE_FRAMES; i++) {
		tcp4_frame_number(frame, len, i, CARVE_MSS);
		if (!ASSERT_OK(write_vh(t0.fd, &vh, frame, len), "TCP frame written"))
			goto out;
	}
	/* Wait until they all left TAP1's transmit path: then the merged skb
	 * is freed and only the segments hold the pages.
	 */
	for (double end = now_secs() + 10; now_secs() < end;)
		if (qdisc_sent(ns, TAP1) - tx0 >= CARVE_FRAMES)
			break;
	if (!ASSERT_GE(qdisc_sent(ns, TAP1) - tx0, CARVE_FRAMES,
		       "segments queued at the second tap")) {
		diag(ns);
		goto out;
	}
	/* Other frames of the same size (an EtherType nobody handles: freed
	 * at once), another pattern, into the same queue's buffers.
	 */
	memset(frame + 14, 0xee, len - 14);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	for (int i = 0; i < 4 * CARVE_FRAMES; i++)
		if (!ASSERT_OK(write_vh(t0.fd, &vh, frame, len), "other frame written"))
			goto out;
	for (int i = 0; i < CARVE_FRAMES + other && good + bad < CARVE_FRAMES; i++) {
		ssize_t n = tap_read(t1.fd, 5);
		uint8_t *eth = rbuf + VHOST_NET_HDR_LEN, *ip = eth + 14;

		if (n < 0)
			break;
		if (n < 54 || eth[12] != 8 || eth[13] != 0 || ip[9] != 6) {
			other++;
			continue;
		}
		if (((struct virtio_net_hdr *)rbuf)->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
			gso++;	/* a segment of a merged skb (checksum left to us) */
		if (n == 54 + CARVE_MSS && pkt_pattern_ok(ip + 40, CARVE_MSS, 0))
			good++;
		else
			bad++;
	}
	if (test__verbose())
		printf("    %d intact, %d overwritten, %d from GRO + software GSO, %d others\n",
		       good, bad, gso, other);
	ASSERT_GT(gso, 1, "segments of frames merged by GRO (else the test shows nothing)");
	ASSERT_EQ(bad, 0, "segments whose bytes were overwritten while queued");
	ASSERT_EQ(good, CARVE_FRAMES, "segments intact");
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t0);
	tap_close(&t1);
	netns_del(ns);
}

/* ---- a writer's socket charged for frames GRO merged ---- */

#define GRO_FRAMES 16

struct gro_charge_case {
	const char *name;
	bool prog;	/* an XDP_PASS frags program on the tap */
	int mtu;
	size_t mss;	/* TCP payload of each frame written */
	bool vhost;	/* every other frame through vhost-net */
};

/* Frame i through vhost-net, once vhost has taken it: with a program
 * attached (SOCK_XDP), vhost-net hands tun one-page frames in batches
 * (tun_xdp_one()), uncharged.
 */
static int gro_frame_vhost(struct vhost_net *vn, const uint8_t *frame, size_t len)
{
	const struct virtio_net_hdr vh = {};

	if (vhost_net_post(vn, &vh, frame, len) || vhost_net_kick(vn))
		return -1;
	return vhost_net_drain(vn, 5);
}

/* TCP frames written to an IFF_NAPI tap are merged by GRO (held 200 ms).
 * A frame built in one buffer (build_skb(): stock's tun_build_skb(), the
 * series' pool) is charged to the writer's socket; GRO may take its head
 * as a fragment of the merged skb and free the sk_buff without its
 * destructor (napi_skb_free_stolen_head()), so that the socket keeps
 * about 256 bytes of charge for each such frame: sk_wmem_alloc never gets
 * back to zero and the tun_file is never freed (kmemleak, when no stale
 * pointer hides it). With the charge back, a frame written with a 1-byte
 * send buffer (TUNSETSNDBUF) goes in; with any charge left it cannot
 * (sock_alloc_send_pskb(): EAGAIN), however long one waits.
 *
 * Mixed with uncharged frames of the same flow (vhost-net's batches),
 * GRO must not merge the two: a merged frame's truesize moves to the held
 * skb, so an uncharged one merged into a charged one makes its free give
 * back more than was charged (refcount_t underflow, or the socket freed
 * while open), which the kernel's log shows.
 */
static void gro_charge_case_run(const struct gro_charge_case *c)
{
	const struct bpf_insn pass[] = { MOV_IMM(BPF_REG_0, XDP_PASS), EXIT() };
	struct vhost_net vn = { .fd = -1, .kick = -1, .call = -1 };
	const char *novhost = c->vhost ? vhost_net_unavailable() : NULL;
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	struct virtio_net_hdr vh = {};
	static uint8_t frame[9000];
	int pfd = -1, sndbuf = 1, err = 0;
	bool watching = false;
	struct kwatch kw;
	double end;
	size_t len;

	if (novhost) {
		test__skip("%s", novhost);
		return;
	}
	if (!setup("tungc", ns, IFF_NAPI, c->mtu, &t))
		goto out;
	if (skip_stock_bug(ns, "2/7", "leaves GRO-merged frames' charge on the socket"))
		goto out;
	kwatch_start(&kw);
	watching = true;
	if (c->vhost && !ASSERT_OK(vhost_net_open(&vn, t.fd, 256, 9216), "vhost-net on the tap"))
		goto out;
	if (c->prog) {
		pfd = xdp_raw_attach(ns, TAP0, pass, sizeof(pass) / sizeof(pass[0]));
		if (!ASSERT_GE(pfd, 0, "XDP_PASS frags program"))
			goto out;
	}
	if (!ASSERT_OK(sh("ip netns exec %s sh -c 'echo 200000000 > /sys/class/net/" TAP0
			  "/gro_flush_timeout'", ns), "GRO held 200 ms"))
		goto out;
	len = tcp4_frame(frame, sizeof(frame), t.mac, TAP_IP, c->mss, false);
	if (!ASSERT_GT(len, 0, "frame built"))
		goto out;
	for (int i = 0; i < GRO_FRAMES; i++) {
		tcp4_frame_number(frame, len, i, c->mss);
		if (c->vhost && i % 2) {
			if (!ASSERT_OK(gro_frame_vhost(&vn, frame, len), "TCP frame through vhost-net"))
				goto out;
		} else if (!ASSERT_OK(write_vh(t.fd, &vh, frame, len), "TCP frame written")) {
			goto out;
		}
	}
	if (!ASSERT_OK(ioctl(t.fd, TUNSETSNDBUF, &sndbuf), "1-byte send buffer"))
		goto out;
	/* A frame nobody takes (an EtherType without a handler), freed at
	 * once: it only asks for room in the send buffer.
	 */
	memset(frame + 14, 0xee, 46);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	for (end = now_secs() + 5; now_secs() < end; usleep(20 * 1000)) {
		err = write_vh(t.fd, &vh, frame, 60) ? errno : 0;
		if (err != EAGAIN)
			break;
	}
	test__report(err == 0, __FILE__, __LINE__, "charge returned",
		     "a 60-byte write with a 1-byte send buffer, 5 s after %d %s frames of "
		     "%zu bytes: %s (EAGAIN: the writer's socket is still charged for frames "
		     "GRO merged)", GRO_FRAMES, c->name, len, err ? strerror(err) : "went in");
out:
	vhost_net_close(&vn);
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
	if (watching)
		kwatch_check(&kw, "written and merged frames");
}

TEST(tun_gro_charge)
{
	static const struct gro_charge_case cases[] = {
		{ "no-xdp", false, 1500, 1448, false },
		{ "pass", true, 1500, 1448, false },
		/* larger than one buffer: the multi-buffer path */
		{ "frags-pass", true, 9000, 8000, false },
		/* odd frames through vhost-net (XDP_PASS: its batch path) */
		{ "mixed-vhost", true, 1500, 1448, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (test__start_subtest(cases[i].name))
			gro_charge_case_run(&cases[i]);
}

/* ---- the checksum start after the program moved the frame's start ---- */

/* Pops an 802.1Q tag: the MACs move up 4 bytes, then the frame's start
 * (bpf_xdp_adjust_head(4)); XDP_PASS. A frame without the tag passes as
 * it is.
 */
static const struct bpf_insn vlan_pop_pass[] = {
	MOV_REG(BPF_REG_6, BPF_REG_1),
	INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, 0, 0),	/* data */
	INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, 4, 0),	/* data_end */
	MOV_REG(BPF_REG_4, BPF_REG_2),
	INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, 18),
	INSN(BPF_JMP | BPF_JGT | BPF_X, BPF_REG_4, BPF_REG_3, 11, 0),	/* to XDP_PASS */
	INSN(BPF_LDX | BPF_MEM | BPF_H, BPF_REG_5, BPF_REG_2, 12, 0),
	INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 9, 0x0081),	/* 0x8100, big endian */
	INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_7, BPF_REG_2, 0, 0),
	INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_8, BPF_REG_2, 4, 0),
	INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_9, BPF_REG_2, 8, 0),
	INSN(BPF_STX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_7, 4, 0),
	INSN(BPF_STX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_8, 8, 0),
	INSN(BPF_STX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_9, 12, 0),
	MOV_REG(BPF_REG_1, BPF_REG_6),
	MOV_IMM(BPF_REG_2, 4),
	CALL(BPF_FUNC_xdp_adjust_head),
	MOV_IMM(BPF_REG_0, XDP_PASS),
	EXIT(),
};

/* An AF_PACKET socket on ifname in ns that prepends each frame's
 * virtio-net header (PACKET_VNET_HDR): how the stack describes the skb.
 */
static int packet_vnet_open(const char *ns, const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int saved = netns_enter(ns), fd, one = 1;

	if (saved < 0)
		return -1;
	sll.sll_ifindex = if_nametoindex(ifname);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	if (fd >= 0 && (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
			bind(fd, (struct sockaddr *)&sll, sizeof(sll)))) {
		close(fd);
		fd = -1;
	}
	netns_leave(saved);
	return fd;
}

/* The virtio-net header the packet socket gave the frame received on the
 * tap with IP ID id (an IPv4 TCP frame from port 4242, its tag popped),
 * within timeout s. 0, or -1 if none came.
 */
static int packet_vnet_read(int fd, uint16_t id, struct virtio_net_hdr *vh, double timeout)
{
	static uint8_t buf[16384];

	for (double end = now_secs() + timeout; now_secs() < end;) {
		struct sockaddr_ll from;
		socklen_t flen = sizeof(from);
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		const uint8_t *f = buf + sizeof(*vh);

		if (n < 0) {
			poll(&p, 1, 50);
			continue;
		}
		if (from.sll_pkttype == PACKET_OUTGOING || n < (ssize_t)sizeof(*vh) + 54 ||
		    f[12] != 0x08 || f[13] != 0x00 || f[23] != 6 ||
		    ntohs(*(uint16_t *)(f + 18)) != id || ntohs(*(uint16_t *)(f + 34)) != 4242)
			continue;
		memcpy(vh, buf, sizeof(*vh));
		return 0;
	}
	return -1;
}

struct csum_start_case {
	const char *name;
	size_t len;	/* bytes of the tagged frame */
	bool vhost;	/* through vhost-net's batches (tun_xdp_one()) */
};

/* A guest with checksum offload writes an 802.1Q TCP frame with
 * NEEDS_CSUM, csum_start 38 (its TCP header) and csum_offset 16; the
 * program pops the tag. The skb the stack gets must say that the TCP
 * header starts at 34: with 38, whoever completes the checksum (a device
 * without checksum offload, skb_checksum_help() for a reader without it)
 * writes it 4 bytes into the segment and leaves the real field wrong.
 * Generic XDP keeps csum_start right (it counts from the skb's head); the
 * driver's runs must move the header's start with the frame's.
 */
static void csum_start_case_run(const struct csum_start_case *c)
{
	struct vhost_net vn = { .fd = -1, .kick = -1, .call = -1 };
	const char *novhost = c->vhost ? vhost_net_unavailable() : NULL;
	static uint8_t plain[8192], frame[8192];
	struct virtio_net_hdr vh = {
		.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 38, .csum_offset = 16,
	}, got = {};
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	int pfd = -1, sfd = -1;
	size_t len;

	if (novhost) {
		test__skip("%s", novhost);
		return;
	}
	if (!setup("tuncs", ns, 0, 9000, &t))
		goto out;
	if (skip_stock_bug(ns, "3/7", "leaves csum_start where the writer put it when the "
			   "program moves the frame's start"))
		goto out;
	if (c->vhost && !ASSERT_OK(vhost_net_open(&vn, t.fd, 256, 9216), "vhost-net on the tap"))
		goto out;
	pfd = xdp_raw_attach(ns, TAP0, vlan_pop_pass,
			     sizeof(vlan_pop_pass) / sizeof(vlan_pop_pass[0]));
	if (!ASSERT_GE(pfd, 0, "VLAN-popping XDP_PASS program (frags) in the driver"))
		goto out;
	sfd = packet_vnet_open(ns, TAP0);
	if (!ASSERT_GE(sfd, 0, "AF_PACKET socket with PACKET_VNET_HDR on the tap"))
		goto out;
	/* The untagged frame, its TCP checksum left to offload, then the tag
	 * (VLAN 5) in front of its EtherType.
	 */
	len = tcp4_frame(plain, sizeof(plain), t.mac, TAP_IP, c->len - 4 - 54, false);
	if (!ASSERT_EQ(len, c->len - 4, "frame built"))
		goto out;
	*(uint16_t *)(plain + 18) = htons(0x5a5a);
	tcp4_fix_csums(plain + 14, len - 34, true);
	memcpy(frame, plain, 12);
	frame[12] = 0x81, frame[13] = 0x00, frame[14] = 0x00, frame[15] = 0x05;
	memcpy(frame + 16, plain + 12, len - 12);
	len += 4;
	if (c->vhost) {
		if (!ASSERT_OK(vhost_net_post(&vn, &vh, frame, len) || vhost_net_kick(&vn) ||
			       vhost_net_drain(&vn, 5) < 0, "tagged frame through vhost-net"))
			goto out;
	} else if (!ASSERT_OK(write_vh(t.fd, &vh, frame, len), "tagged frame written")) {
		goto out;
	}
	if (!ASSERT_OK(packet_vnet_read(sfd, 0x5a5a, &got, 3),
		       "the frame, its tag popped, at the packet socket"))
		goto out;
	if (test__verbose())
		printf("    %zu-byte frame: flags %#x, csum_start %u, csum_offset %u\n", len,
		       got.flags, got.csum_start, got.csum_offset);
	ASSERT_EQ(got.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_F_NEEDS_CSUM,
		  "the skb still asks for its checksum");
	ASSERT_EQ(got.csum_start, 34, "csum_start: the TCP header, after the tag's 4 bytes went");
	ASSERT_EQ(got.csum_offset, 16, "csum_offset: TCP's checksum field");
out:
	if (sfd >= 0)
		close(sfd);
	vhost_net_close(&vn);
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	if (ns[0])
		netns_del(ns);
}

TEST(tun_xdp_csum_start)
{
	static const struct csum_start_case cases[] = {
		/* one buffer: native XDP (stock's tun_build_skb(), the pool) */
		{ "write_200", 200, false },
		/* larger than a page: the multi-buffer path (stock: generic) */
		{ "write_5000", 5000, false },
		/* vhost-net's batch, tun_xdp_one() */
		{ "vhost_200", 200, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (test__start_subtest(cases[i].name))
			csum_start_case_run(&cases[i]);
}

/* ---- 2: more fragments than a frame has room for ---- */

/* The largest frames the multi-buffer path takes: 142,720 bytes on x86-64
 * with a 4 KB head (v2), 146,816 with a head of one 8 KB pool page (v3).
 */
static const size_t mb_max_lens[] = { 142720, 146816 };

/* Frames at the largest size a frags program takes, with a UDP checksum
 * left to the kernel (no GSO), to a program that pushes 4 bytes at the
 * front (bpf_xdp_adjust_head(-4), as a VLAN push) and returns XDP_TX. The
 * frame then needs one fragment more than a frame can have: it must come
 * back whole, or be counted dropped; and a frame written after it must
 * still come back.
 */
TEST(tun_mb_overflow)
{
	const struct bpf_insn prog[] = {
		MOV_IMM(BPF_REG_2, -4), CALL(BPF_FUNC_xdp_adjust_head),
		MOV_IMM(BPF_REG_0, XDP_TX), EXIT(),
	};
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	static uint8_t frame[160 << 10];
	int pfd = -1;

	if (!setup("tunmo", ns, 0, 9000, &t))
		goto out;
	pfd = xdp_raw_attach(ns, TAP0, prog, sizeof(prog) / sizeof(prog[0]));
	if (!ASSERT_GE(pfd, 0, "push-and-tx frags program"))
		goto out;
	for (size_t k = 0; k <= sizeof(mb_max_lens) / sizeof(mb_max_lens[0]); k++) {
		/* the last round: an ordinary 9000-byte frame after them */
		size_t len = k < sizeof(mb_max_lens) / sizeof(mb_max_lens[0]) ? mb_max_lens[k] : 9000;
		struct virtio_net_hdr vh = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
					     .csum_start = 34, .csum_offset = 6 };
		struct frame *f = malloc(sizeof(*f));
		long long dropped = dev_stat(ns, TAP0, "rx_dropped");
		char what[64];
		ssize_t n;

		if (!ASSERT_OK_PTR(f, "frame"))
			goto out;
		/* headers of a 9000-byte UDP frame, the pattern after them */
		frame_build_udp(f, &t, 9000, 0, true);
		memcpy(frame, f->data, 42);
		free(f);
		for (size_t i = 42; i < len; i++)
			frame[i] = pkt_pattern(i - 42);
		snprintf(what, sizeof(what), "%zu-byte frame", len);
		if (!test__report(!write_vh(t.fd, &vh, frame, len), __FILE__, __LINE__, what,
				  "write: %s", strerror(errno)))
			continue;
		n = tap_read(t.fd, 5);
		if (n < 0 && len != 9000) {
			test__report(dev_stat(ns, TAP0, "rx_dropped") > dropped, __FILE__,
				     __LINE__, what, "neither sent back nor counted dropped");
			continue;
		}
		test__report(n == (ssize_t)len + 4 &&
			     pkt_pattern_ok(rbuf + VHOST_NET_HDR_LEN + 46, len - 42, 0),
			     __FILE__, __LINE__, what,
			     "came back as %zd bytes (want %zu, the pattern intact)", n, len + 4);
	}
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
}

/* ---- v5: a multi-buffer frame's tail grown by the program ---- */

#define GROW_BY 100

/* Frames larger than a page under a frags program that grows the tail
 * by GROW_BY bytes (bpf_xdp_adjust_tail(), which for a multi-buffer frame
 * needs the rxq's frag_size) and returns XDP_TX, or XDP_DROP if it
 * cannot: each must come back GROW_BY bytes longer, the frame intact and
 * the new bytes zero. tun before v5 registered frag_size 0. "Larger than
 * a page" is larger than tun puts in one buffer: 9000 and 16000 bytes
 * with 4 KB pages (fragments in one and in two pool pages); with 64 KB
 * pages, where those fit one buffer, 65,000 and 72,000 bytes, as many
 * bytes longer as tun_mb_frame_len() makes 9000 (past 14 + 65535 bytes
 * the IP and UDP lengths are wrong: nothing reads them on XDP_TX).
 */
TEST(tun_mb_grow_tail)
{
	const struct bpf_insn prog[] = {
		MOV_IMM(BPF_REG_2, GROW_BY), CALL(BPF_FUNC_xdp_adjust_tail),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 2, 0),
		MOV_IMM(BPF_REG_0, XDP_TX), EXIT(),
		MOV_IMM(BPF_REG_0, XDP_DROP), EXIT(),
	};
	static const size_t lens[] = { 9000, 16000 };
	const size_t shift = tun_mb_frame_len(lens[0]) - lens[0];
	const size_t cap = lens[sizeof(lens) / sizeof(lens[0]) - 1] + shift;
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	uint8_t *frame = NULL;
	int pfd = -1;

	if (!setup("tungt", ns, 0, 9000, &t))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG: frames over a page take generic XDP");
		goto out;
	}
	pfd = xdp_raw_attach(ns, TAP0, prog, sizeof(prog) / sizeof(prog[0]));
	if (!ASSERT_GE(pfd, 0, "grow-and-tx frags program"))
		goto out;
	frame = malloc(cap);
	if (!ASSERT_OK_PTR(frame, "frame buffer"))
		goto out;
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		static const uint8_t zero[GROW_BY];
		size_t len = lens[k] + shift;
		char what[64];
		ssize_t n;

		if (!ASSERT_EQ(frame_build_big(frame, cap, &t, len), len, "frame built"))
			continue;
		snprintf(what, sizeof(what), "%zu-byte frame grown by %d", len, GROW_BY);
		if (!ASSERT_EQ(send_write_big(&t, frame, len, 1), 1, "frame written"))
			continue;
		n = tap_read(t.fd, 5);
		test__report(n == (ssize_t)(len + GROW_BY) &&
			     !memcmp(rbuf + VHOST_NET_HDR_LEN, frame, len) &&
			     !memcmp(rbuf + VHOST_NET_HDR_LEN + len, zero, GROW_BY),
			     __FILE__, __LINE__, what,
			     "came back as %zd bytes (want %zu: the frame, then %d zero bytes)", n,
			     len + GROW_BY, GROW_BY);
	}
out:
	free(frame);
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
}

#define GSO_GROW_LEN 15000
#define GSO_GROW_SIZE 1400

/* review-v5 BUG 1: a UDP GSO frame of GSO_GROW_LEN bytes (NEEDS_CSUM) under
 * a frags program that tries to grow the tail by 4 bytes and returns
 * XDP_TX whatever the helper said. A multi-buffer GSO frame's tail cannot
 * grow (stock: generic XDP; v4: the rxq had no frag_size), so it must come
 * back as GSO_GROW_SIZE segments, none longer than one segment, with the
 * whole payload. v5 let the grow succeed, GSO was dropped, and the reader
 * got one frame of GSO_GROW_LEN + 4 bytes.
 */
TEST(tun_mb_gso_grow_tail)
{
	const struct bpf_insn prog[] = {
		MOV_IMM(BPF_REG_2, 4), CALL(BPF_FUNC_xdp_adjust_tail),
		MOV_IMM(BPF_REG_0, XDP_TX), EXIT(),
	};
	const size_t payload = GSO_GROW_LEN - 42;
	const int want = (payload + GSO_GROW_SIZE - 1) / GSO_GROW_SIZE;
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	static struct frame f;
	int pfd = -1, frames = 0;
	size_t got = 0, longest = 0;

	if (!setup("tungg", ns, 0, 1500, &t))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG: GSO frames take generic XDP");
		goto out;
	}
	pfd = xdp_raw_attach(ns, TAP0, prog, sizeof(prog) / sizeof(prog[0]));
	if (!ASSERT_GE(pfd, 0, "grow-and-tx frags program"))
		goto out;
	frame_build_udp(&f, &t, GSO_GROW_LEN, GSO_GROW_SIZE, true);
	if (!ASSERT_EQ(send_write(&t, &f, 1), 1, "GSO frame written"))
		goto out;
	for (ssize_t n; frames < want + 2 && (n = tap_read(t.fd, frames < want ? 5 : 0.5)) >= 0;) {
		frames++;
		got += n > 42 ? n - 42 : 0;
		if ((size_t)n > longest)
			longest = n;
	}
	if (test__verbose())
		printf("    %d frames back, %zu payload bytes, the longest %zu bytes\n", frames, got,
		       longest);
	ASSERT_LE(longest, 42 + GSO_GROW_SIZE, "longest frame back (one segment at most)");
	ASSERT_EQ(frames, want, "segments back");
	ASSERT_EQ(got, payload, "payload bytes back");
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
}

/* ---- 3: what a multi-buffer frame is charged ---- */

#define TRUESIZE_FRAMES 16

/* 9000-byte UDP frames to a local socket that does not read them, through
 * a CPUMAP (no program on its entry): the kthread builds each skb from the
 * xdp_frame, charging it the frame's buffer size once for the head and
 * once for each fragment. A 9014-byte frame cannot sit in less than
 * 12 KB of buffers (a page of 4 KB cannot hold it with its headroom and
 * shared info), so each must be charged at least that. With 64 KB pages
 * a 9014-byte frame fits one buffer, and takes no multi-buffer path: the
 * frames are 65,000 bytes long there (tun_mb_frame_len(), still a UDP
 * datagram), and each must be charged at least the two pages of 64 KB it
 * cannot sit in less than.
 */
TEST(tun_mb_truesize)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	int mfd = -1, pfd = -1, sfd = -1;
	__u32 key = 0, qsize = 256;
	static uint8_t frame[14 + 65535];
	const size_t page = sysconf(_SC_PAGESIZE), len = tun_mb_frame_len(9014);
	/* the pages a frame with tun's headroom and shared info fills */
	const size_t least = (tun_buf_len(len) + page - 1) / page * page;
	__u32 mem[SK_MEMINFO_VARS];
	socklen_t ml = sizeof(mem);
	long long rcvd = 0;
	char what[64];

	if (!setup("tunts", ns, 0, 9000, &t))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG (kernel without the multi-buffer patch): 9000-byte "
			   "frames take generic XDP, not the xdp_frame path whose truesize this checks");
		goto out;
	}
	if (len > sizeof(frame)) {
		test__skip("with %zu KB pages no UDP datagram is longer than tun's one buffer "
			   "(%zu bytes): none is multi-buffer", page >> 10, tun_one_buf_max());
		goto out;
	}
	mfd = bpf_map_create(BPF_MAP_TYPE_CPUMAP, "tun_cpumap", 4, 4, 1, NULL);
	if (!ASSERT_GE(mfd, 0, "cpumap") ||
	    !ASSERT_OK(bpf_map_update_elem(mfd, &key, &qsize, 0), "cpumap entry: CPU 0"))
		goto out;
	{
		const struct bpf_insn prog[] = {
			LD_MAP_FD(BPF_REG_1, mfd), MOV_IMM(BPF_REG_2, 0), MOV_IMM(BPF_REG_3, 0),
			CALL(BPF_FUNC_redirect_map), EXIT(),
		};

		pfd = xdp_raw_attach(ns, TAP0, prog, sizeof(prog) / sizeof(prog[0]));
	}
	if (!ASSERT_GE(pfd, 0, "cpumap-redirect frags program"))
		goto out;
	sfd = udp_listen_in(ns);
	if (!ASSERT_GE(sfd, 0, "udp socket"))
		goto out;
	if (!ASSERT_EQ(frame_build_big(frame, sizeof(frame), &t, len), len, "frame built") ||
	    !ASSERT_EQ(send_write_big(&t, frame, len, TRUESIZE_FRAMES), TRUESIZE_FRAMES,
		       "frames written"))
		goto out;
	/* UdpInDatagrams counts datagrams read; IpInDelivers those handed
	 * to UDP, which queues them to the socket there and then.
	 */
	for (double end = now_secs() + 10; now_secs() < end;) {
		char buf[64];

		if (!sh_out(buf, sizeof(buf), "ip netns exec %s nstat -a -s -z -j IpInDelivers | "
			    "sed -n 's/.*\"IpInDelivers\": *\\([0-9]*\\).*/\\1/p'", ns))
			rcvd = atoll(buf);
		if (rcvd >= TRUESIZE_FRAMES)
			break;
	}
	if (!ASSERT_EQ(rcvd, TRUESIZE_FRAMES, "datagrams handed to UDP"))
		diag(ns);
	if (rcvd != TRUESIZE_FRAMES ||
	    !ASSERT_OK(getsockopt(sfd, SOL_SOCKET, SO_MEMINFO, mem, &ml), "SO_MEMINFO"))
		goto out;
	if (test__verbose())
		printf("    rmem %u for %d frames: %u a frame\n", mem[SK_MEMINFO_RMEM_ALLOC],
		       TRUESIZE_FRAMES, mem[SK_MEMINFO_RMEM_ALLOC] / TRUESIZE_FRAMES);
	snprintf(what, sizeof(what), "truesize a %zu-byte frame is charged", len);
	ASSERT_GE(mem[SK_MEMINFO_RMEM_ALLOC] / TRUESIZE_FRAMES, least, what);
	ASSERT_EQ(sock_collect(sfd, len - 42, TRUESIZE_FRAMES, 5), TRUESIZE_FRAMES,
		  "datagrams intact");
out:
	if (sfd >= 0)
		close(sfd);
	if (pfd >= 0)
		close(pfd);
	if (mfd >= 0)
		close(mfd);
	tap_close(&t);
	netns_del(ns);
}

/* ---- 5: a GSO frame of one segment ---- */

/* A TCPv4 GSO frame whose payload is one MSS (gso_size 1448) behind a
 * 32-byte TCP header: virtio_net_hdr_to_skb() keeps GSO (it counts a
 * 20-byte header), tcp_gso_segment() then finds nothing to segment. Under
 * a frags program returning XDP_TX, stock's generic XDP sent the skb back
 * as it was: one frame must come back at the tap fd, its payload intact.
 * Since v8 XDP_TX queues the skb whole and only a redirect segments, so the
 * frame is also redirected to a second tap: one frame must arrive there.
 */
TEST(tun_gso_one_mss)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 }, t1 = { .fd = -1 };
	struct virtio_net_hdr vh = {
		.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
		.hdr_len = 66, .gso_size = CARVE_MSS, .csum_start = 34, .csum_offset = 16,
	};
	static uint8_t frame[2048];
	size_t len;

	if (!setup("tun1m", ns, 0, 1500, &t) ||
	    !ASSERT_OK(tap_make(ns, TAP1, 0, 1500, &t1), "second tap"))
		goto out;
	len = tcp4_frame(frame, sizeof(frame), t.mac, TAP_IP, CARVE_MSS, true);
	tcp4_fix_csums(frame + 14, len - 34, true);
	for (int redirect = 0; redirect <= 1; redirect++) {
		int pfd = redirect ? xdp_redirect_attach(ns, TAP0, t1.ifindex) :
				     xdp_tx_attach(ns, TAP0);
		int got = 0, rfd = redirect ? t1.fd : t.fd;

		if (!ASSERT_GE(pfd, 0, redirect ? "redirect frags program" : "tx frags program"))
			break;
		for (int i = 0; i < 4; i++) {
			ssize_t n;

			if (!ASSERT_OK(write_vh(t.fd, &vh, frame, len),
				       "GSO frame of one MSS written"))
				break;
			n = tap_read(rfd, 5);
			got += n == (ssize_t)len &&
			       pkt_pattern_ok(rbuf + VHOST_NET_HDR_LEN + 66, CARVE_MSS, 0);
		}
		ASSERT_EQ(got, 4, redirect ? "frames at the second tap's fd, intact" :
					     "frames back at the tap fd, intact");
		close(pfd);
	}
out:
	tap_close(&t1);
	tap_close(&t);
	netns_del(ns);
}

/* ---- 6: segments under memory pressure ---- */

#define PRESSURE_FRAMES 16

/* UDP GSO frames of 15 segments, redirected by a frags program to a second
 * tap, while percent % of the writer's allocations of order 1 and up that
 * cannot sleep fail: every segment must arrive at that tap's fd (as
 * segments, or as the GSO frame).
 */
static void gso_pressure(const char *name, int percent)
{
	struct fault_cfg cfg = { .kind = FAULT_PAGE_ALLOC, .probability = percent,
				 .min_order = 1, .ntasks = 1, .tasks = { getpid() } };
	const char *why = fault_unavailable(FAULT_PAGE_ALLOC);
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 }, t1 = { .fd = -1 };
	struct tap_rx_counts rc;
	struct fault fault = {};
	static struct frame f;
	int pfd = -1, sent, got;
	long long rx_dropped, tx_dropped;
	long injected;

	if (why) {
		test__skip("%s", why);
		return;
	}
	if (!setup(name, ns, 0, 1500, &t) ||
	    !ASSERT_OK(tap_make(ns, TAP1, 0, 1500, &t1), "second tap"))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG redirects through generic XDP, which drops a "
			   "GSO frame larger than the target's MTU");
		goto out;
	}
	pfd = xdp_redirect_attach(ns, TAP0, t1.ifindex);
	if (!ASSERT_GE(pfd, 0, "redirect frags program"))
		goto out;
	frame_build(&f, &t, SZ_GSO_BIG);
	/* Where lost segments went, for the report below. */
	rx_dropped = dev_stat(ns, TAP0, "rx_dropped");
	tx_dropped = dev_stat(ns, TAP1, "tx_dropped");
	if (!ASSERT_OK(fault_arm(&fault, &cfg), "arm fail_page_alloc"))
		goto out;
	sent = send_write(&t, &f, PRESSURE_FRAMES);
	injected = fault_disarm(&fault);
	ASSERT_EQ(sent, PRESSURE_FRAMES, "GSO frames written");
	ASSERT_GT(injected, 0, "allocations failed on purpose");
	got = tap_collect_csum(t1.fd, f.payload, sent, NULL, 10, &rc);
	ASSERT_EQ(got, sent, "frames back whole (all their segments)");
	ASSERT_EQ(rc.bad_csum, 0, "segments with an incomplete checksum");
	if (test__verbose() || got != sent)
		printf("    %ld allocations failed, %d of %d frames back (%d pieces, %d GSO); "
		       "%s rx_dropped +%lld, %s tx_dropped +%lld\n", injected, got, sent,
		       rc.pieces, rc.gso, TAP0, dev_stat(ns, TAP0, "rx_dropped") - rx_dropped,
		       TAP1, dev_stat(ns, TAP1, "tx_dropped") - tx_dropped);
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t1);
	tap_close(&t);
	netns_del(ns);
}

TEST(tun_gso_pressure)
{
	gso_pressure("tungp", 20);
}

/* Every frame misses the pool (its pages are order 1): each must still
 * run the program on the native path, in order-0 pages the writer may
 * wait for. Generic XDP, which v9 fell back to, drops a redirected GSO
 * frame larger than the target's MTU (EMSGSIZE), uncounted.
 */
TEST(tun_gso_pool_empty)
{
	gso_pressure("tungpe", 100);
}

/* ---- review-v11b DESIGN 1: frames for one buffer stay in the driver ---- */

#define NATIVE_FRAMES 16

/* NATIVE_FRAMES 64-byte frames written to t under an XDP_DROP program:
 * all dropped in the driver. Since v11 tun_build_skb() runs no program,
 * so a frame for one buffer gets native XDP only from the queue's pool,
 * which must be there whenever a program is; rx_dropped counts a native
 * XDP_DROP and not generic XDP's.
 */
static void native_drops(const char *ns, struct tap *t, const char *after)
{
	static struct frame f;
	long long before = dev_stat(ns, TAP0, "rx_dropped");
	char what[96];

	frame_build(&f, t, SZ_64);
	snprintf(what, sizeof(what), "frames written after %s", after);
	if (!ASSERT_EQ(send_write(t, &f, NATIVE_FRAMES), NATIVE_FRAMES, what))
		return;
	snprintf(what, sizeof(what), "frames dropped in the driver after %s", after);
	ASSERT_EQ(dev_stat(ns, TAP0, "rx_dropped") - before, NATIVE_FRAMES, what);
}

/* The program attached, detached and attached again, and replaced by
 * another, on a tap and on an IFF_NAPI one: after each, 64-byte frames
 * are dropped by the program in the driver.
 */
TEST(tun_native_after_changes)
{
	static const struct bpf_insn drop[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const struct { const char *name; int flags; } taps[] = {
		{ "plain", 0 }, { "napi", IFF_NAPI },
	};

	for (size_t i = 0; i < sizeof(taps) / sizeof(taps[0]); i++) {
		char ns[NETNS_NAME_MAX] = "";
		struct tap t = { .fd = -1 };
		int pfd = -1, pfd2 = -1;

		if (!test__start_subtest(taps[i].name))
			continue;
		if (!setup("tunna", ns, taps[i].flags, 1500, &t))
			goto next;
		pfd = xdp_raw_attach(ns, TAP0, drop, 2);
		if (!ASSERT_GE(pfd, 0, "drop program"))
			goto next;
		native_drops(ns, &t, "the attach");
		if (!ASSERT_OK(sh("ip -n %s link set " TAP0 " xdp off", ns), "detach"))
			goto next;
		close(pfd);
		pfd = xdp_raw_attach(ns, TAP0, drop, 2);
		if (!ASSERT_GE(pfd, 0, "drop program again"))
			goto next;
		native_drops(ns, &t, "a detach and a new attach");
		pfd2 = xdp_raw_attach(ns, TAP0, drop, 2);
		if (!ASSERT_GE(pfd2, 0, "a second drop program over the first"))
			goto next;
		native_drops(ns, &t, "the program's replacement");
next:
		if (pfd2 >= 0)
			close(pfd2);
		if (pfd >= 0)
			close(pfd);
		tap_close(&t);
		netns_del(ns);
	}
}

/* ==== the review of v3 (kernel-patches/tun/review-v3.md) ==== */

/* The writer's order >= 1 allocations that cannot sleep fail whenever
 * tun_xdp_xmit_seg() is on the stack: the pool, once it has to grow, has no
 * buffer for the copy of a frame that leaves by XDP_TX or XDP_REDIRECT,
 * while the frame's own buffers (tun_build_xdp_mb()) are still allocated.
 * false (skipped, or an assertion failed) if not armed.
 */
static bool seg_pool_faults(struct fault *f)
{
	struct fault_cfg c = { .kind = FAULT_PAGE_ALLOC, .probability = 100, .min_order = 1,
			       .ntasks = 1, .tasks = { getpid() } };
	const char *why = fault_unavailable(FAULT_PAGE_ALLOC);

	if (why) {
		test__skip("%s", why);
		return false;
	}
	if (access("/sys/kernel/debug/fail_page_alloc/require-start", W_OK)) {
		test__skip("kernel without CONFIG_FAULT_INJECTION_STACKTRACE_FILTER "
			   "(the FAULT=1 vmtest guest has it)");
		return false;
	}
	/* tun_xdp_xmit_skb(), should the compiler have inlined the other */
	if (fault_text_range("tun_xdp_xmit_seg", &c.require_start, &c.require_end) &&
	    fault_text_range("tun_xdp_xmit_skb", &c.require_start, &c.require_end)) {
		test__skip("no tun_xdp_xmit_seg() in /proc/kallsyms: kernel without the tun "
			   "series' multi-buffer XDP_TX/REDIRECT path");
		return false;
	}
	return ASSERT_OK(fault_arm(f, &c), "arm fail_page_alloc under tun_xdp_xmit_seg()");
}

/* Headers of a UDP frame to t with its checksum left to the kernel, then
 * len - 42 bytes of the pattern: a frame larger than an IPv4 datagram can
 * say (as tun_mb_overflow writes), which tun takes whole.
 */
static void big_udp_frame(uint8_t *frame, const struct tap *t, size_t len)
{
	struct frame *f = malloc(sizeof(*f));

	if (!f)
		return;
	frame_build_udp(f, t, 9000, 0, true);
	memcpy(frame, f->data, 42);
	free(f);
	for (size_t i = 42; i < len; i++)
		frame[i] = pkt_pattern(i - 42);
}

/* ---- v3 bug 1: the frame's length read after it was given away ---- */

#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

#define XSK_NDESC 64
#define XSK_CHUNK 4096

/* An AF_XDP socket in copy mode, multi-buffer (XDP_USE_SG), receive only,
 * on queue 0 of a device: the fill ring holds every chunk of the UMEM.
 */
struct xsk {
	int fd;
	uint8_t *umem;
	void *fill, *comp, *rx;
	size_t fill_len, comp_len, rx_len;
	struct xdp_mmap_offsets off;
};

static void xsk_close(struct xsk *x)
{
	if (x->rx && x->rx != MAP_FAILED)
		munmap(x->rx, x->rx_len);
	if (x->comp && x->comp != MAP_FAILED)
		munmap(x->comp, x->comp_len);
	if (x->fill && x->fill != MAP_FAILED)
		munmap(x->fill, x->fill_len);
	if (x->umem && (void *)x->umem != MAP_FAILED)
		munmap(x->umem, XSK_NDESC * XSK_CHUNK);
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	x->umem = NULL;
	x->fill = x->comp = x->rx = NULL;
}

/* 0, or -1 with errno (EAFNOSUPPORT: no AF_XDP in this kernel). */
static int xsk_open(struct xsk *x, const char *ns, int ifindex)
{
	struct xdp_umem_reg mr = { .len = XSK_NDESC * XSK_CHUNK, .chunk_size = XSK_CHUNK };
	struct sockaddr_xdp sa = { .sxdp_family = AF_XDP, .sxdp_ifindex = ifindex,
				   .sxdp_flags = XDP_COPY | XDP_USE_SG };
	socklen_t ol = sizeof(x->off);
	int n = XSK_NDESC, saved;
	uint64_t *addr;

	saved = netns_enter(ns);
	if (saved < 0)
		return -1;
	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	netns_leave(saved);
	if (x->fd < 0)
		return -1;
	x->umem = mmap(NULL, mr.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((void *)x->umem == MAP_FAILED)
		return -1;
	mr.addr = (uintptr_t)x->umem;
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) ||
	    getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &x->off, &ol))
		return -1;
	x->fill_len = x->off.fr.desc + n * sizeof(uint64_t);
	x->comp_len = x->off.cr.desc + n * sizeof(uint64_t);
	x->rx_len = x->off.rx.desc + n * sizeof(struct xdp_desc);
	x->fill = mmap(NULL, x->fill_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       x->fd, XDP_UMEM_PGOFF_FILL_RING);
	x->comp = mmap(NULL, x->comp_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       x->fd, XDP_UMEM_PGOFF_COMPLETION_RING);
	x->rx = mmap(NULL, x->rx_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, x->fd,
		     XDP_PGOFF_RX_RING);
	if (x->fill == MAP_FAILED || x->comp == MAP_FAILED || x->rx == MAP_FAILED)
		return -1;
	addr = (uint64_t *)((uint8_t *)x->fill + x->off.fr.desc);
	for (int i = 0; i < n; i++)
		addr[i] = (uint64_t)i * XSK_CHUNK;
	__atomic_store_n((uint32_t *)((uint8_t *)x->fill + x->off.fr.producer), n,
			 __ATOMIC_RELEASE);
	return bind(x->fd, (struct sockaddr *)&sa, sizeof(sa));
}

/* Takes what the RX ring holds within timeout s, giving each chunk back to
 * the fill ring: the lengths of the first frames (of their descriptors
 * together) into lens[], at most max; returns how many frames.
 */
static int xsk_drain(struct xsk *x, size_t *lens, int max, double timeout)
{
	uint32_t *rprod = (uint32_t *)((uint8_t *)x->rx + x->off.rx.producer);
	uint32_t *rcons = (uint32_t *)((uint8_t *)x->rx + x->off.rx.consumer);
	uint32_t *fprod = (uint32_t *)((uint8_t *)x->fill + x->off.fr.producer);
	struct xdp_desc *d = (struct xdp_desc *)((uint8_t *)x->rx + x->off.rx.desc);
	uint64_t *fa = (uint64_t *)((uint8_t *)x->fill + x->off.fr.desc);
	double end = now_secs() + timeout;
	size_t cur = 0;
	int got = 0;

	do {
		uint32_t p = __atomic_load_n(rprod, __ATOMIC_ACQUIRE), c = *rcons;
		uint32_t fp = *fprod;
		struct pollfd pf = { x->fd, POLLIN, 0 };

		for (; c != p; c++) {
			struct xdp_desc *e = &d[c & (XSK_NDESC - 1)];

			cur += e->len;
			if (!(e->options & XDP_PKT_CONTD)) {
				if (got < max)
					lens[got] = cur;
				got++;
				cur = 0;
			}
			fa[fp++ & (XSK_NDESC - 1)] = e->addr;
		}
		__atomic_store_n(rcons, c, __ATOMIC_RELEASE);
		__atomic_store_n(fprod, fp, __ATOMIC_RELEASE);
		if (got >= max)
			break;
		poll(&pf, 1, 50);
	} while (now_secs() < end);
	return got;
}

/* An AF_XDP socket on the tap's queue 0 (xsk_open()), an XSKMAP holding it
 * and a frags program redirecting every frame into it. false if skipped
 * (no AF_XDP) or an assertion failed; what was made is the caller's to
 * close.
 */
static bool xsk_redirect_setup(const char *ns, const struct tap *t, struct xsk *x, int *mfd,
			       int *pfd)
{
	__u32 key = 0;

	if (xsk_open(x, ns, t->ifindex)) {
		if (errno == EAFNOSUPPORT)
			test__skip("kernel without AF_XDP (CONFIG_XDP_SOCKETS)");
		else
			ASSERT_OK(-errno, "AF_XDP socket, copy mode, XDP_USE_SG, on the tap");
		return false;
	}
	*mfd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "tun_xskmap", 4, 4, 1, NULL);
	if (!ASSERT_GE(*mfd, 0, "xskmap") ||
	    !ASSERT_OK(bpf_map_update_elem(*mfd, &key, &x->fd, 0), "xskmap entry: the socket"))
		return false;
	{
		const struct bpf_insn prog[] = {
			LD_MAP_FD(BPF_REG_1, *mfd), MOV_IMM(BPF_REG_2, 0), MOV_IMM(BPF_REG_3, 0),
			CALL(BPF_FUNC_redirect_map), EXIT(),
		};

		*pfd = xdp_raw_attach(ns, TAP0, prog, sizeof(prog) / sizeof(prog[0]));
	}
	return ASSERT_GE(*pfd, 0, "xskmap-redirect frags program");
}

#define XSK_FRAMES 8
#define XSK_FRAME_LEN 20000

/* v3 bug 1. tun_xdp_act() took the length of a multi-buffer frame for
 * rx_bytes (xdp_get_buff_len(), which reads the frame's shared info)
 * after xdp_do_redirect() or tun_xdp_tx() had given the frame away. An
 * AF_XDP socket in copy mode copies the frame and frees it inside
 * xdp_do_redirect(): the read is then a use-after-free every time the
 * frame sits in pages of its own, which it does when the pool has no
 * buffer for the copy that a NEEDS_CSUM frame needs (seg_pool_faults()).
 * 20,000-byte UDP frames with NEEDS_CSUM, redirected into the socket by a
 * frags program: every frame must reach it whole, rx_bytes must count
 * each, and the kernel must report nothing (DEBUG=1: KASAN).
 */
TEST(tun_xdp_act_len_xsk)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	struct xsk x = { .fd = -1 };
	struct virtio_net_hdr vh = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				     .csum_start = 34, .csum_offset = 6 };
	static uint8_t frame[XSK_FRAME_LEN];
	size_t lens[XSK_FRAMES] = {};
	struct fault fault = {};
	struct kwatch kw = { .fd = -1 };
	int mfd = -1, pfd = -1, got = 0, whole = 0;
	long long bytes0, bytes;
	long injected;

	if (!setup("tunxk", ns, 0, 9000, &t))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG: frames over a page take generic XDP, not "
			   "tun_xdp_act()");
		goto out;
	}
	if (!xsk_redirect_setup(ns, &t, &x, &mfd, &pfd))
		goto out;
	big_udp_frame(frame, &t, sizeof(frame));
	bytes0 = dev_stat(ns, TAP0, "rx_bytes");
	kwatch_start(&kw);
	if (!seg_pool_faults(&fault))
		goto out;
	for (int i = 0; i < XSK_FRAMES; i++) {
		if (!ASSERT_OK(write_vh(t.fd, &vh, frame, sizeof(frame)), "frame written"))
			break;
		got += xsk_drain(&x, lens + got, 1, 5);
		if (got <= i)
			break;
	}
	injected = fault_disarm(&fault);
	bytes = dev_stat(ns, TAP0, "rx_bytes") - bytes0;
	for (int i = 0; i < got && i < XSK_FRAMES; i++)
		whole += lens[i] == sizeof(frame);
	if (test__verbose())
		printf("    %ld allocations failed, %d of %d frames at the socket (%d whole), "
		       "rx_bytes +%lld\n", injected, got, XSK_FRAMES, whole, bytes);
	ASSERT_GT(injected, 0, "copies that found the pool empty (else the test shows nothing)");
	ASSERT_EQ(got, XSK_FRAMES, "frames at the AF_XDP socket");
	ASSERT_EQ(whole, XSK_FRAMES, "frames at the socket at their full length");
	ASSERT_EQ(bytes, (long long)XSK_FRAMES * XSK_FRAME_LEN, "rx_bytes of the tap");
	kwatch_check(&kw, "kernel log (KASAN: use-after-free in tun_xdp_act)");
out:
	if (kw.fd >= 0)
		close(kw.fd);
	if (pfd >= 0)
		close(pfd);
	if (mfd >= 0)
		close(mfd);
	xsk_close(&x);
	tap_close(&t);
	netns_del(ns);
}

/* ---- v3 bug 2: frames too large for the fallback's pages ---- */

#define SEG_BIG_FRAMES 8
#define SEG_BIG_LEN 100000

/* v3 bug 2. A frame that leaves by XDP_TX or XDP_REDIRECT with a checksum
 * left to the kernel and no GSO is copied into new buffers; when the pool
 * has none without sleeping, into order-0 pages, which hold 73,088 bytes
 * at most (a 4 KB head and 17 fragments). Larger ones, up to the 142,720
 * the multi-buffer path takes, were dropped, where stock's generic XDP
 * sent them. Since v8 XDP_TX queues such a frame whole for the tap's
 * reader, and a redirect to a device is bound by its MTU (64 KB at most),
 * so the frames are redirected into an AF_XDP socket (copy mode,
 * multi-buffer), which takes any length: 100,000-byte frames while the
 * copy's buffers cannot be had (seg_pool_faults()); each must reach the
 * socket whole, none counted dropped.
 *
 * len: the frames' length. pool_empty: every allocation of the writer that
 * cannot sleep fails, of any order, not only the copy's (so the frame
 * itself is built in order-0 pages the writer waits for).
 */
static void seg_pressure(const char *tag, size_t len, bool pool_empty)
{
	struct fault_cfg empty = { .kind = FAULT_PAGE_ALLOC, .probability = 100,
				   .ntasks = 1, .tasks = { getpid() } };
	const char *why = fault_unavailable(FAULT_PAGE_ALLOC);
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	struct xsk x = { .fd = -1 };
	struct virtio_net_hdr vh = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				     .csum_start = 34, .csum_offset = 6 };
	static uint8_t frame[SEG_BIG_LEN];
	size_t lens[SEG_BIG_FRAMES] = {};
	struct fault fault = {};
	int mfd = -1, pfd = -1, sent = 0, got = 0, whole = 0;
	long long dropped;
	long injected;

	if (pool_empty && why) {
		test__skip("%s", why);
		return;
	}
	if (!setup(tag, ns, 0, 9000, &t))
		goto out;
	if (!tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG: frames over a page take generic XDP");
		goto out;
	}
	if (!xsk_redirect_setup(ns, &t, &x, &mfd, &pfd))
		goto out;
	big_udp_frame(frame, &t, len);
	dropped = dev_stat(ns, TAP0, "rx_dropped");
	if (pool_empty ? !ASSERT_OK(fault_arm(&fault, &empty), "arm fail_page_alloc") :
			 !seg_pool_faults(&fault))
		goto out;
	/* one at a time: the UMEM holds 2.6 such frames */
	for (int i = 0; i < SEG_BIG_FRAMES; i++) {
		if (write_vh(t.fd, &vh, frame, len))
			break;
		sent++;
		got += xsk_drain(&x, lens + got, 1, 5);
		if (got < sent)
			break;
	}
	injected = fault_disarm(&fault);
	dropped = dev_stat(ns, TAP0, "rx_dropped") - dropped;
	for (int i = 0; i < got && i < SEG_BIG_FRAMES; i++)
		whole += lens[i] == len;
	if (test__verbose())
		printf("    %ld allocations failed, %d of %d frames at the socket (%d whole), "
		       "%lld dropped\n", injected, got, sent, whole, dropped);
	ASSERT_EQ(sent, SEG_BIG_FRAMES, "frames written");
	ASSERT_GT(injected, 0, "copies that found the pool empty (else the test shows nothing)");
	ASSERT_EQ(got, sent, "frames at the AF_XDP socket");
	ASSERT_EQ(whole, got, "frames at the socket at their full length");
	ASSERT_EQ(dropped, 0, "rx_dropped of the tap");
out:
	if (pfd >= 0)
		close(pfd);
	if (mfd >= 0)
		close(mfd);
	xsk_close(&x);
	tap_close(&t);
	netns_del(ns);
}

TEST(tun_seg_pressure_large)
{
	seg_pressure("tunsl", SEG_BIG_LEN, false);
}

/* review-v10 BUG 2. When the pool has no pages, a frame is built in
 * order-0 pages (v10); redirected with its checksum left to the kernel,
 * it is copied again, and when that copy finds no buffer either it must
 * go on its own pages, as a frame of pool pages does: 9000-byte frames
 * while every allocation of the writer that cannot sleep fails.
 */
TEST(tun_seg_order0_own_buf)
{
	seg_pressure("tunso", 9000, true);
}

/* ==== issue 19: invalid virtio-net headers ==== */

/* A frags program that counts its runs in runs[0] and returns verdict. */
static int counting_attach(const char *ns, const char *ifname, int runs_fd, int verdict)
{
	const struct bpf_insn p[] = {
		LOOKUP_KEY0(runs_fd),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),
		MOV_IMM(BPF_REG_1, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
		MOV_IMM(BPF_REG_0, verdict),
		EXIT(),
	};

	return xdp_raw_attach(ns, ifname, p, sizeof(p) / sizeof(p[0]));
}

static long long runs_of(int runs_fd)
{
	unsigned long long v = 0;
	uint32_t k = 0;

	return bpf_map_lookup_elem(runs_fd, &k, &v) ? -1 : (long long)v;
}

/* errno of a write of frame with vh to fd, 0 if the whole of it went in */
static int write_vh_errno(int fd, const struct virtio_net_hdr *vh, const void *frame,
			  size_t len)
{
	errno = 0;
	if (!write_vh(fd, vh, frame, len))
		return 0;
	return errno ?: EIO;
}

#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5	/* linux/virtio_net.h of 5.18 and later */
#endif
#define VH_GSO_PAYLOAD (3 * CARVE_MSS)
/* more than a page, no GSO: the multi-buffer path. 9000 bytes of payload
 * with 4 KB pages; with 64 KB pages, where a 9054-byte frame fits tun's one
 * buffer, as much as makes the frame longer than that (tun_mb_frame_len():
 * 65,000 bytes, still an IP datagram).
 */
#define VH_BIG_PAYLOAD 9000
#define VH_BIG_MAX (65535 - 40)	/* the most TCP payload an IPv4 datagram holds */

struct bad_vh {
	const char *what;
	bool big;
	struct virtio_net_hdr vh;
};

/* Headers that tun_get_user()'s own checks let through and
 * virtio_net_hdr_to_skb() refuses, on TCP/IPv4 frames whose checksum is
 * left to the kernel (csum_start 34, csum_offset 16 where that is good):
 * csum_start 10 puts the transport header inside the Ethernet one.
 */
static const struct bad_vh bad_vhs[] = {
	{ "GSO, csum_start in the Ethernet header", false,
	  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
	    .hdr_len = 54, .gso_size = CARVE_MSS, .csum_start = 10, .csum_offset = 16 } },
	{ "an unknown GSO type", false,
	  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = 0x7f,
	    .hdr_len = 54, .gso_size = CARVE_MSS, .csum_start = 34, .csum_offset = 16 } },
	{ "GSO with gso_size 0", false,
	  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
	    .hdr_len = 54, .csum_start = 34, .csum_offset = 16 } },
	{ "UDP GSO without NEEDS_CSUM", false,
	  { .gso_type = VIRTIO_NET_HDR_GSO_UDP_L4, .hdr_len = 42, .gso_size = CARVE_MSS } },
	{ "no GSO, above a page, csum_start in the Ethernet header", true,
	  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 10, .csum_offset = 16 } },
	/* review-v6 NIT 10: the ECN bit with no GSO type, and a bad GSO
	 * header on a frame with fragments
	 */
	{ "the ECN bit alone", false,
	  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_ECN,
	    .hdr_len = 54, .gso_size = CARVE_MSS, .csum_start = 34, .csum_offset = 16 } },
	{ "GSO with gso_size 0, above a page", true,
	  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
	    .hdr_len = 54, .csum_start = 34, .csum_offset = 16 } },
	/* review-v6 NIT 10: refused only after the check pulled 4,020 bytes
	 * into the head, past the multi-buffer path's linear part: TCP GSO
	 * wants the checksum at offset 16 of the transport header
	 */
	{ "TCP GSO, csum_offset 0, csum_start past the linear part", false,
	  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
	    .hdr_len = 54, .gso_size = CARVE_MSS, .csum_start = 4000, .csum_offset = 0 } },
};

/* The two good frames both tests write to t: a 3-MSS TCP GSO frame and a
 * 9054-byte one without GSO (65,000 bytes with 64 KB pages: longer than
 * tun's one buffer, see VH_BIG_PAYLOAD), both with their checksum left to
 * the kernel (good_gso_vh, good_big_vh). False (and a failed check) if
 * either cannot be built.
 */
static uint8_t good_gso[VH_GSO_PAYLOAD + 128], good_big[VH_BIG_MAX + 128];
static size_t good_gso_len, good_big_len;
static const struct virtio_net_hdr good_gso_vh = {
	.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
	.hdr_len = 54, .gso_size = CARVE_MSS, .csum_start = 34, .csum_offset = 16,
}, good_big_vh = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16 };

static bool good_frames(const struct tap *t)
{
	size_t big_payload = tun_mb_frame_len(54 + VH_BIG_PAYLOAD) - 54;

	if (big_payload > VH_BIG_MAX) {
		test__skip("no TCP/IPv4 frame is longer than tun's one buffer (%zu bytes) with "
			   "%ld KB pages", tun_one_buf_max(), sysconf(_SC_PAGESIZE) >> 10);
		return false;
	}
	good_gso_len = tcp4_frame(good_gso, sizeof(good_gso), t->mac, TAP_IP, VH_GSO_PAYLOAD, false);
	good_big_len = tcp4_frame(good_big, sizeof(good_big), t->mac, TAP_IP, big_payload, false);
	if (!ASSERT_GT(good_gso_len, 0, "GSO frame") || !ASSERT_GT(good_big_len, 0, "large frame"))
		return false;
	tcp4_fix_csums(good_gso + 14, good_gso_len - 34, true);
	tcp4_fix_csums(good_big + 14, good_big_len - 34, true);
	return true;
}

/* Whether a test with a frags program attached natively (pfd, or -1 and
 * errno) can go on: skips if tun took none, then builds good_frames().
 */
static bool frags_prog_ready(int pfd, const struct tap *t)
{
	if (pfd < 0) {
		test__skip("a frags program does not attach to tun natively here (%s)",
			   strerror(errno));
		return false;
	}
	return good_frames(t);
}

/* With a frags program attached, frames that take tun's multi-buffer path
 * (GSO ones, and those longer than tun's one buffer: good_big, 9054 bytes
 * with 4 KB pages, 65,000 with 64 KB pages) and carry a header stock refuses:
 * write() fails with EINVAL, the program never runs (stock checks the
 * header before generic XDP), and rx_dropped counts none of them (tun
 * counts them in rx_frame_errors, which a tap does not report: its
 * net_device_ops have no ndo_get_stats64). A good GSO frame, a good large
 * one and a large DATA_VALID one before them show that the program runs.
 * Under XDP_DROP, XDP_TX and XDP_PASS. Not covered: a NEEDS_CSUM frame of
 * one page or less without GSO, which stock too gives to the native
 * program before any check.
 */
TEST(tun_bad_vnet_hdr)
{
	static const struct { const char *name; int verdict; } verdicts[] = {
		{ "xdp_drop", XDP_DROP }, { "xdp_tx", XDP_TX }, { "xdp_pass", XDP_PASS },
	};
	for (unsigned int i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
		char ns[NETNS_NAME_MAX] = "";
		struct tap t = { .fd = -1 };
		long long runs, dropped;
		int pfd = -1, runs_fd = -1;

		if (!test__start_subtest(verdicts[i].name))
			continue;
		if (!setup("tunvh", ns, 0, 9000, &t))
			goto next;
		runs_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "runs", 4, 8, 1, NULL);
		if (!ASSERT_GE(runs_fd, 0, "runs map"))
			goto next;
		pfd = counting_attach(ns, TAP0, runs_fd, verdicts[i].verdict);
		if (!frags_prog_ready(pfd, &t))
			goto next;
		ASSERT_OK(write_vh_errno(t.fd, &good_gso_vh, good_gso, good_gso_len),
			  "good GSO frame written");
		ASSERT_OK(write_vh_errno(t.fd, &good_big_vh, good_big, good_big_len),
			  "good large frame written");
		/* DATA_VALID without GSO is a good header too (review-v6 NIT 10) */
		ASSERT_OK(write_vh_errno(t.fd, &(struct virtio_net_hdr){
					 .flags = VIRTIO_NET_HDR_F_DATA_VALID }, good_big,
					 good_big_len), "good large DATA_VALID frame written");
		ASSERT_EQ(runs_of(runs_fd), 3, "program runs on the good frames");

		dropped = dev_stat(ns, TAP0, "rx_dropped");
		for (unsigned int b = 0; b < sizeof(bad_vhs) / sizeof(bad_vhs[0]); b++) {
			const struct bad_vh *bad = &bad_vhs[b];
			char what[128];

			runs = runs_of(runs_fd);
			snprintf(what, sizeof(what), "write() of a frame with %s", bad->what);
			ASSERT_EQ(write_vh_errno(t.fd, &bad->vh, bad->big ? good_big : good_gso,
						 bad->big ? good_big_len : good_gso_len), EINVAL, what);
			snprintf(what, sizeof(what), "program runs on a frame with %s", bad->what);
			ASSERT_EQ(runs_of(runs_fd) - runs, 0, what);
		}
		ASSERT_EQ(dev_stat(ns, TAP0, "rx_dropped") - dropped, 0, "rx_dropped");
next:
		if (pfd >= 0)
			close(pfd);
		if (runs_fd >= 0)
			close(runs_fd);
		tap_close(&t);
		netns_del(ns);
	}
}

/* review-v6 BUG 1. The header check's skb comes from build_skb(), an
 * atomic allocation; v6 made it after the frame had been copied, so its
 * failure failed write() with -ENOMEM for frames that stock and v5 take.
 * With every atomic slab allocation the writer makes under
 * tun_xdp_buf_build_skb() (tun_xdp_mb_build_skb() before v10) failing
 * (FAULT=1: failslab with a stack filter,
 * for this task only), good GSO frames and large NEEDS_CSUM ones under an
 * XDP_DROP frags program must all go in, and the program must see each
 * (the fallback takes the sleeping path and generic XDP).
 */
#define NOMEM_FRAMES 8

TEST(tun_check_hdr_nomem)
{
	struct fault_cfg c = { .kind = FAULT_SLAB, .probability = 100, .ntasks = 1,
			       .tasks = { getpid() } };
	const char *why = fault_unavailable(FAULT_SLAB);
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	int pfd = -1, runs_fd = -1, written = 0;
	struct fault f = {};
	long long runs;
	long injected;

	if (why) {
		test__skip("%s", why);
		return;
	}
	if (access("/sys/kernel/debug/failslab/require-start", W_OK)) {
		test__skip("kernel without CONFIG_FAULT_INJECTION_STACKTRACE_FILTER "
			   "(the FAULT=1 vmtest guest has it)");
		return;
	}
	if (fault_text_range("tun_xdp_buf_build_skb", &c.require_start, &c.require_end) &&
	    fault_text_range("tun_xdp_mb_build_skb", &c.require_start, &c.require_end)) {
		test__skip("no tun_xdp_buf_build_skb() (v9: tun_xdp_mb_build_skb()) in "
			   "/proc/kallsyms: kernel without the tun series' multi-buffer path");
		return;
	}
	if (!setup("tunnm", ns, 0, 9000, &t))
		goto out;
	runs_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "runs", 4, 8, 1, NULL);
	if (!ASSERT_GE(runs_fd, 0, "runs map"))
		goto out;
	pfd = counting_attach(ns, TAP0, runs_fd, XDP_DROP);
	if (!ASSERT_GE(pfd, 0, "drop frags program"))
		goto out;
	if (!good_frames(&t))
		goto out;
	runs = runs_of(runs_fd);
	if (!ASSERT_OK(fault_arm(&f, &c), "arm failslab under the skb builder"))
		goto out;
	for (int i = 0; i < NOMEM_FRAMES; i++) {
		written += !write_vh_errno(t.fd, &good_gso_vh, good_gso, good_gso_len);
		written += !write_vh_errno(t.fd, &good_big_vh, good_big, good_big_len);
	}
	injected = fault_disarm(&f);
	if (test__verbose())
		printf("    %ld allocations failed, %d of %d frames went in, the program ran %lld times\n",
		       injected, written, 2 * NOMEM_FRAMES, runs_of(runs_fd) - runs);
	ASSERT_GT(injected, 0, "check skbs that failed (else the test shows nothing)");
	ASSERT_EQ(written, 2 * NOMEM_FRAMES, "frames write() took");
	ASSERT_EQ(runs_of(runs_fd) - runs, 2 * NOMEM_FRAMES, "program runs");
out:
	fault_disarm(&f);
	if (pfd >= 0)
		close(pfd);
	if (runs_fd >= 0)
		close(runs_fd);
	tap_close(&t);
	netns_del(ns);
}

/* ==== review-v6 NIT 10: the path a checked frame takes, and what arrives ==== */

enum { PATH_RUNS, PATH_LEN, PATH_GREW, PATH_NR };

/* A frags program that counts its runs (PATH_RUNS), keeps
 * bpf_xdp_get_buff_len() of the last frame (PATH_LEN), counts the frames
 * whose tail grew by a byte (PATH_GREW; shrunk back at once) and sends the
 * frame on: XDP_TX, or XDP_REDIRECT to ifindex redirect_to. The tail of a
 * multi-buffer frame grows only where its rxq has a frag_size: tun's
 * native multi-buffer path registers one, generic XDP's rxq has none. So
 * a grown 9054-byte frame took the native path.
 */
static int path_attach(const char *ns, const char *ifname, int stats_fd, int redirect_to)
{
	const struct bpf_insn body[] = {
		MOV_REG(BPF_REG_6, BPF_REG_1),
		CALL(BPF_FUNC_xdp_get_buff_len),
		MOV_REG(BPF_REG_7, BPF_REG_0),
		MOV_REG(BPF_REG_1, BPF_REG_6),
		MOV_IMM(BPF_REG_2, 1),
		CALL(BPF_FUNC_xdp_adjust_tail),
		MOV_IMM(BPF_REG_8, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 4, 0),
		MOV_REG(BPF_REG_1, BPF_REG_6),
		MOV_IMM(BPF_REG_2, -1),
		CALL(BPF_FUNC_xdp_adjust_tail),
		MOV_IMM(BPF_REG_8, 1),
		LOOKUP_KEY0(stats_fd),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 4, 0),
		MOV_IMM(BPF_REG_1, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 8 * PATH_RUNS, BPF_ADD),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_7, 8 * PATH_LEN, 0),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_8, 8 * PATH_GREW, BPF_ADD),
	};
	struct bpf_insn p[sizeof(body) / sizeof(body[0]) + 4];
	size_t n = sizeof(body) / sizeof(body[0]);

	memcpy(p, body, sizeof(body));
	if (redirect_to) {
		p[n++] = MOV_IMM(BPF_REG_1, redirect_to);
		p[n++] = MOV_IMM(BPF_REG_2, 0);
		p[n++] = CALL(BPF_FUNC_redirect);
	} else {
		p[n++] = MOV_IMM(BPF_REG_0, XDP_TX);
	}
	p[n++] = EXIT();
	return xdp_raw_attach(ns, ifname, p, n);
}

static bool path_stats(int fd, long long *v)
{
	uint32_t k = 0;

	return !bpf_map_lookup_elem(fd, &k, v);
}

/* Is the 16-bit checksum at cs + co of out (n bytes), which the writer
 * seeded with the two bytes at the same place of w, complete over
 * [cs, n)? Left to the reader (NEEDS_CSUM in the header it reads) it must
 * still hold the seed.
 */
static bool csum_back_ok(const struct virtio_net_hdr *vh, const uint8_t *out, const uint8_t *w,
			 size_t n, unsigned int cs, unsigned int co)
{
	uint32_t seed = (w[cs + co] << 8) | w[cs + co + 1];

	if (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
		return !memcmp(out + cs + co, w + cs + co, 2);
	return fold(sum16(out + cs, n - cs, seed)) == 0xffff;
}

/* What came of the written TCP frame w (wlen bytes, a checksum at cs + co
 * for the kernel to finish where cs is not 0) at fd within 5 s: the frame
 * whole, bytes equal but for that checksum, or, if gso, TCP segments of it
 * with their payload at its sequence offset and a TCP checksum complete
 * or left to the reader. Returns the payload bytes that arrived right, or
 * -1 on the first frame that is not a right one.
 */
static long frame_back(int fd, const uint8_t *w, size_t wlen, unsigned int cs, unsigned int co,
		       bool gso)
{
	const struct virtio_net_hdr *vh = (const void *)rbuf;
	const uint8_t *out = rbuf + VHOST_NET_HDR_LEN;
	size_t want = wlen - 54;
	long got = 0;

	while (got < (long)want) {
		ssize_t n = tap_read(fd, 5);
		size_t end = cs + co;

		if (n < 0)
			break;
		if ((size_t)n == wlen) {
			if (cs ? memcmp(out, w, end) || memcmp(out + end + 2, w + end + 2, n - end - 2) ||
				 !csum_back_ok(vh, out, w, n, cs, co) :
				 memcmp(out, w, n))
				return -1;
			got += want;
			continue;
		}
		/* a segment: Ethernet, IPv4 and TCP headers of 54 bytes */
		if (!gso || n <= 54 || memcmp(out, w, 14) || out[23] != 6)
			return -1;
		if (!pkt_pattern_ok(out + 54, n - 54, ntohl(*(uint32_t *)(out + 38)) - 1))
			return -1;
		/* the segment's own pseudo header seeds its checksum */
		if (!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
		    fold(sum16(out + 34, n - 34, pseudo4(out + 14, 6, n - 34))) != 0xffff)
			return -1;
		got += n - 54;
	}
	return got;
}

struct path_case {
	const char *what;
	struct virtio_net_hdr vh;
	bool gso;		/* good_gso, else good_big */
	/* did the tail grow: 1 yes, 0 no, -1 either (not asserted); on a
	 * kernel without RX_SG every frame here takes generic XDP: no
	 */
	int grew;
	unsigned int cs, co;	/* the checksum the kernel finishes, cs 0: none */
};

/* Good frames of the multi-buffer path, each under a frags program that
 * sends it on with XDP_TX or XDP_REDIRECT to a second tap: the program
 * runs once and sees the whole frame, its path is the one the series
 * says, and the frame arrives whole (segmented, for GSO), its checksum
 * complete or left to the reader.
 *  - a 3-MSS TCP GSO frame: its tail cannot grow on either path (v5 BUG
 *    1), so its path is not asserted;
 *  - 9054 bytes, NEEDS_CSUM, and 9054 bytes, DATA_VALID: native, the
 *    tail grows;
 *  - 9054 bytes, NEEDS_CSUM at csum_start 4000: the check pulls 4,018
 *    bytes into the head, past the 3,456-byte linear part; that frame
 *    goes on as the check's skb through generic XDP (review-v6 DESIGN 3),
 *    where the tail does not grow.
 * The frames without GSO are good_big, 9054 bytes with 4 KB pages: longer
 * than tun's one buffer. With 64 KB pages, where 9054 bytes fit one buffer
 * (and take the native one-buffer path, no check at all), they are
 * 65,000 bytes long (tun_mb_frame_len()); csum_start 4000 is past the
 * linear part there too (TUN_MB_HEADLEN: 4 KB less headroom and shared
 * info, whatever the page size).
 * A regression that sent every checked frame to generic XDP, or lost the
 * fragments the check's build_skb() covers, fails here; tun_bad_vnet_hdr
 * passes on stock by design and would not see it (review-v6 NIT 10).
 */
TEST(tun_check_hdr_path)
{
	const struct path_case cases[] = {
		{ "TCP GSO frame", good_gso_vh, true, -1, 34, 16 },
		/* good_big's: "<its length>-byte " before the name */
		{ "NEEDS_CSUM frame", good_big_vh, false, 1, 34, 16 },
		{ "DATA_VALID frame", { .flags = VIRTIO_NET_HDR_F_DATA_VALID }, false, 1,
		  0, 0 },
		{ "frame, csum_start 4000",
		  { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 4000, .csum_offset = 16 },
		  false, 0, 4000, 16 },
	};

	const size_t big_mtu = tun_mb_frame_len(54 + VH_BIG_PAYLOAD) - 14;

	for (int redirect = 0; redirect <= 1; redirect++) {
		char ns[NETNS_NAME_MAX] = "";
		struct tap t = { .fd = -1 }, t1 = { .fd = -1 };
		int pfd = -1, stats_fd = -1;
		bool rx_sg;

		if (!test__start_subtest(redirect ? "xdp_redirect" : "xdp_tx"))
			continue;
		if (!setup("tunhp", ns, 0, 9000, &t))
			goto next;
		/* a redirect checks the frame against the target's MTU:
		 * 16000, or good_big's where that is longer (64 KB pages)
		 */
		if (redirect &&
		    !ASSERT_OK(tap_make(ns, TAP1, 0, big_mtu > 16000 ? (int)big_mtu : 16000, &t1),
			       "second tap"))
			goto next;
		rx_sg = tap_has_rx_sg(ns);
		stats_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "path", 4, 8 * PATH_NR, 1, NULL);
		if (!ASSERT_GE(stats_fd, 0, "stats map"))
			goto next;
		pfd = path_attach(ns, TAP0, stats_fd, redirect ? t1.ifindex : 0);
		if (!frags_prog_ready(pfd, &t))
			goto next;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct path_case *c = &cases[i];
			const uint8_t *w = c->gso ? good_gso : good_big;
			size_t wlen = c->gso ? good_gso_len : good_big_len;
			long long before[PATH_NR] = {}, after[PATH_NR] = {};
			int want_grew = rx_sg ? c->grew : 0;
			char what[128], name[64];
			long got;

			if (c->gso)
				snprintf(name, sizeof(name), "%s", c->what);
			else
				snprintf(name, sizeof(name), "%zu-byte %s", wlen, c->what);
			if (!ASSERT_TRUE(path_stats(stats_fd, before), "stats"))
				break;
			snprintf(what, sizeof(what), "write() of a %s", name);
			if (!ASSERT_OK(write_vh_errno(t.fd, &c->vh, w, wlen), what))
				continue;
			got = frame_back(redirect ? t1.fd : t.fd, w, wlen, c->cs, c->co, c->gso);
			if (!ASSERT_TRUE(path_stats(stats_fd, after), "stats"))
				break;
			if (test__verbose())
				printf("    %s: %lld runs, %lld bytes seen, tail grew %lld, %ld payload bytes back\n",
				       name, after[PATH_RUNS] - before[PATH_RUNS], after[PATH_LEN],
				       after[PATH_GREW] - before[PATH_GREW], got);
			snprintf(what, sizeof(what), "program runs on a %s", name);
			ASSERT_EQ(after[PATH_RUNS] - before[PATH_RUNS], 1, what);
			snprintf(what, sizeof(what), "bytes the program saw of a %s", name);
			ASSERT_EQ(after[PATH_LEN], (long long)wlen, what);
			if (want_grew >= 0) {
				snprintf(what, sizeof(what), "tail of a %s grew (1: native path)",
					 name);
				ASSERT_EQ(after[PATH_GREW] - before[PATH_GREW], want_grew, what);
			}
			snprintf(what, sizeof(what), "payload bytes of a %s that arrived right",
				 name);
			ASSERT_EQ(got, (long)(wlen - 54), what);
		}
next:
		if (pfd >= 0)
			close(pfd);
		if (stats_fd >= 0)
			close(stats_fd);
		tap_close(&t1);
		tap_close(&t);
		netns_del(ns);
	}
}

/* ==== the review of v8 (kernel-patches/tun/review-v8.md) ==== */

#define TX_GSO_FRAMES 8
#define TX_GSO_LEN (42 + 16000)
#define TX_GSO_SIZE 8000

/* A tap whose reader takes checksum and UDP GSO offloads, and a frags
 * program returning XDP_TX on it. rx_sg: skip on a kernel without the
 * series' multi-buffer path. false if skipped or not set up.
 */
static bool tx_offload_setup(const char *tag, char *ns, struct tap *t, int *pfd, bool rx_sg)
{
	if (!setup(tag, ns, 0, 9000, t))
		return false;
	if (rx_sg && !tap_has_rx_sg(ns)) {
		test__skip("tun without RX_SG: stock's generic XDP queues the skb as it is, "
			   "whatever the reader or the device allow");
		return false;
	}
	if (!ASSERT_OK(ioctl(t->fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6),
		       "checksum and UDP GSO offloads"))
		return false;
	*pfd = xdp_tx_attach(ns, TAP0);
	return ASSERT_GE(*pfd, 0, "tx frags program");
}

/* v8 BUG 1. XDP_TX queued a GSO frame whole for a reader with the offloads
 * it needs, but the device's gso_max_size limits it too: the stack
 * segments a GSO skb of that size or more (gso_features_check()), and the
 * multi-buffer path takes GSO frames of up to 142,720 bytes. With
 * gso_max_size 8192, 16,042-byte UDP GSO frames (gso_size 8000) must
 * reach such a reader as two segments each, none with GSO in its header.
 */
TEST(tun_tx_gso_max_size)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	struct tap_rx_counts rc;
	static struct frame f;
	int pfd = -1, sent, got;

	if (!tx_offload_setup("tungm", ns, &t, &pfd, true) ||
	    !ASSERT_OK(sh("ip -n %s link set " TAP0 " gso_max_size 8192", ns), "gso_max_size"))
		goto out;
	frame_build_udp(&f, &t, TX_GSO_LEN, TX_GSO_SIZE, true);
	sent = send_write(&t, &f, TX_GSO_FRAMES);
	got = tap_collect_csum(t.fd, f.payload, sent, NULL, 10, &rc);
	if (test__verbose())
		printf("    %d of %d frames back: %d pieces, %d with GSO, %d with NEEDS_CSUM\n",
		       got, sent, rc.pieces, rc.gso, rc.needs_csum);
	ASSERT_EQ(sent, TX_GSO_FRAMES, "frames written");
	ASSERT_EQ(got, sent, "frames back whole (all their segments)");
	ASSERT_EQ(rc.gso, 0, "pieces with GSO in their header, past gso_max_size");
	ASSERT_EQ(rc.pieces, 2 * sent, "segments (2 a frame)");
	ASSERT_EQ(rc.bad_csum, 0, "segments with an incomplete checksum");
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
}

/* v8 BUG 2. An XDP_TX frame that tun_net_xmit() dropped was counted twice:
 * tx_dropped there, and rx_dropped by its caller. Stock's generic XDP and
 * the native XDP_TX path count it once, as tx_dropped. A ring of one frame
 * (txqueuelen 1), no read, 4 GSO frames sent back: rx_dropped must not
 * move, tx_dropped must count at least the 3 the ring could not take.
 */
TEST(tun_tx_skb_drop_stats)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	long long rxd, txd;
	static struct frame f;
	int pfd = -1, sent;

	if (!tx_offload_setup("tunds", ns, &t, &pfd, false) ||
	    !ASSERT_OK(sh("ip -n %s link set " TAP0 " txqueuelen 1", ns), "txqueuelen 1"))
		goto out;
	frame_build_udp(&f, &t, TX_GSO_LEN, TX_GSO_SIZE, true);
	rxd = dev_stat(ns, TAP0, "rx_dropped");
	txd = dev_stat(ns, TAP0, "tx_dropped");
	sent = send_write(&t, &f, 4);
	rxd = dev_stat(ns, TAP0, "rx_dropped") - rxd;
	txd = dev_stat(ns, TAP0, "tx_dropped") - txd;
	if (test__verbose())
		printf("    %d written: rx_dropped +%lld, tx_dropped +%lld\n", sent, rxd, txd);
	ASSERT_EQ(sent, 4, "frames written");
	ASSERT_EQ(rxd, 0, "rx_dropped of frames the ring could not take");
	ASSERT_GE(txd, 3, "tx_dropped of frames the ring could not take");
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
}

/* ---- the review of v9 (review-v9.md) ---- */

#define NOCSUM_FRAMES 4
#define NOCSUM_SEGS 6

/* v9 BUG 1. virtio_net_hdr_to_skb() sets an skb's transport header only
 * for NEEDS_CSUM, and a TCP GSO header may come without it (the writer's
 * checksum is complete). XDP_TX of such a frame queued it through
 * tun_xdp_tx_skb(), whose one-MSS test reads the TCP header at an offset
 * never set: DEBUG_NET warns (skb_transport_header()), and without it the
 * test reads about 56 KB past the head. 8,742-byte TCPv4 GSO frames of six
 * 1448-byte segments, without NEEDS_CSUM, under XDP_TX to a reader without
 * TSO: each must come back as its six segments, and the kernel must log no
 * report (the WARN needs DEBUG=1).
 */
TEST(tun_tx_tcp_gso_no_csum)
{
	char ns[NETNS_NAME_MAX] = "";
	struct virtio_net_hdr vh = {
		.gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 54, .gso_size = CARVE_MSS,
	};
	static uint8_t frame[NOCSUM_SEGS * CARVE_MSS + 64];
	struct tap t = { .fd = -1 };
	struct kwatch kw;
	int pfd = -1, got = 0, written = 0;
	size_t len;

	if (!tx_offload_setup("tuntc", ns, &t, &pfd, true))
		goto out;
	len = tcp4_frame(frame, sizeof(frame), t.mac, TAP_IP, NOCSUM_SEGS * CARVE_MSS, false);
	if (!ASSERT_GT(len, 0, "frame built"))
		goto out;
	kwatch_start(&kw);
	for (int i = 0; i < NOCSUM_FRAMES; i++)
		written += !write_vh(t.fd, &vh, frame, len);
	for (ssize_t n; (n = tap_read(t.fd, 5)) > 0;) {
		got += n == 54 + CARVE_MSS;
		if (got == written * NOCSUM_SEGS)
			break;
	}
	if (test__verbose())
		printf("    %d frames written, %d segments of %d bytes back\n", written, got,
		       54 + CARVE_MSS);
	ASSERT_EQ(written, NOCSUM_FRAMES, "GSO frames without NEEDS_CSUM written");
	ASSERT_EQ(got, NOCSUM_FRAMES * NOCSUM_SEGS, "segments back at the tap fd");
	kwatch_check(&kw, "kernel log while the frames went back");
out:
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	netns_del(ns);
}

#define CPUMAP_FRAMES 64
#define CPUMAP_RING 4

/* Frames the cpumap entry's program has seen (the array's one counter). */
static long long cpumap_seen(int cntfd)
{
	__u32 key = 0;
	__u64 n = 0;

	return bpf_map_lookup_elem(cntfd, &key, &n) ? -1 : (long long)n;
}

/* Waits up to 10 s for the cpumap entry's program to have seen want
 * frames; what it saw.
 */
static long long cpumap_wait(int cntfd, long long want)
{
	long long n = cpumap_seen(cntfd);

	for (double end = now_secs() + 10; n < want && now_secs() < end; usleep(20000))
		n = cpumap_seen(cntfd);
	return n;
}

/* v9 BUG 2. A frame of the tap's pool redirected into a CPUMAP, whose
 * entry's program redirects it into a DEVMAP whose target (a second tap,
 * a ring of CPUMAP_RING frames, nobody reading) cannot take it: the
 * kthread's flush gives it back with xdp_return_frame_rx_napi(). That
 * must not recycle into the lockless cache of the tap's pool, which
 * belongs to the writers under tun's lock, from the kthread of another
 * context: the pool's recycle_cached counter must not move (the fix is
 * in the xdp series: no_direct kept through cpumap's flush). The entry's
 * program counts the frames it sees; once it has seen all, one more frame
 * is written and waited for: the kthread runs the program on it only after
 * the flush of the batch before, so by then every refused frame is back.
 * Four frames share a pool page, whatever its size: 1000-byte ones the
 * 8 KB pages of 4 KB-page kernels, 15,744-byte ones the 64 KB pages of
 * 64 KB-page kernels (39 frames of 1000 bytes filled one, which the
 * frames in the second tap's ring held; the second was still being carved
 * at the end, and no page went back to the pool at all).
 */
TEST(tun_cpumap_devmap_return)
{
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 }, t1 = { .fd = -1 };
	struct pp_info before = {}, after = {};
	int dmfd = -1, cmfd = -1, cntfd = -1, cpfd = -1, pfd = -1, sent;
	long long seen = 0;
	static uint8_t frame[14 + 65535];
	const size_t len = tun_pool_page() <= 8192 ? 1000 : tun_pool_page() / 4 - tun_buf_len(0);
	__u32 key = 0, to;

	if (len > sizeof(frame)) {
		test__skip("pool pages of %zu KB: four frames to one would be longer than a UDP "
			   "datagram", tun_pool_page() >> 10);
		return;
	}
	/* the second tap's MTU: the devmap refuses a longer frame itself */
	if (!setup("tuncd", ns, 0, 1500, &t) ||
	    !ASSERT_OK(tap_make(ns, TAP1, 0, len > 1500 ? (int)len : 1500, &t1), "second tap") ||
	    !ASSERT_OK(sh("ip -n %s link set " TAP1 " txqueuelen %d", ns, CPUMAP_RING),
		       "second tap's ring"))
		goto out;
	to = t1.ifindex;
	dmfd = bpf_map_create(BPF_MAP_TYPE_DEVMAP, "tun_devmap", 4, 4, 1, NULL);
	cntfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tun_cpu_seen", 4, 8, 1, NULL);
	if (!ASSERT_GE(dmfd, 0, "devmap") || !ASSERT_GE(cntfd, 0, "counter"))
		goto out;
	{
		/* A devmap looks the ifindex up in the caller's namespace. */
		int saved = netns_enter(ns), err;

		if (!ASSERT_GE(saved, 0, "enter the namespace"))
			goto out;
		err = bpf_map_update_elem(dmfd, &key, &to, 0);
		netns_leave(saved);
		if (!ASSERT_OK(err, "devmap entry: the second tap"))
			goto out;
	}
	{
		LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_XDP_CPUMAP,
			    .prog_flags = BPF_F_XDP_HAS_FRAGS);
		const struct bpf_insn prog[] = {
			LOOKUP_KEY0(cntfd),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),
			MOV_IMM(BPF_REG_1, 1),
			INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
			LD_MAP_FD(BPF_REG_1, dmfd), MOV_IMM(BPF_REG_2, 0), MOV_IMM(BPF_REG_3, 0),
			CALL(BPF_FUNC_redirect_map), EXIT(),
		};

		cpfd = bpf_prog_load(BPF_PROG_TYPE_XDP, "tun_cpu_devmap", "GPL", prog,
				     sizeof(prog) / sizeof(prog[0]), &o);
	}
	if (!ASSERT_GE(cpfd, 0, "cpumap entry's program"))
		goto out;
	{
		struct bpf_cpumap_val val = { .qsize = 256, .bpf_prog.fd = cpfd };

		cmfd = bpf_map_create(BPF_MAP_TYPE_CPUMAP, "tun_cpumap", 4, sizeof(val), 1, NULL);
		if (!ASSERT_GE(cmfd, 0, "cpumap") ||
		    !ASSERT_OK(bpf_map_update_elem(cmfd, &key, &val, 0),
			       "cpumap entry: CPU 0, with its program"))
			goto out;
	}
	{
		const struct bpf_insn prog[] = {
			LD_MAP_FD(BPF_REG_1, cmfd), MOV_IMM(BPF_REG_2, 0), MOV_IMM(BPF_REG_3, 0),
			CALL(BPF_FUNC_redirect_map), EXIT(),
		};

		pfd = xdp_raw_attach(ns, TAP0, prog, sizeof(prog) / sizeof(prog[0]));
	}
	if (!ASSERT_GE(pfd, 0, "cpumap-redirect program"))
		goto out;
	if (pp_dump(ns, t.ifindex, true, &before) || !before.npools) {
		test__skip("no page pool on the tap (kernel without the series, or no netdev "
			   "page-pool statistics)");
		goto out;
	}
	if (!ASSERT_EQ(frame_build_big(frame, sizeof(frame), &t, len), len, "frame built"))
		goto out;
	sent = send_write_big(&t, frame, len, CPUMAP_FRAMES);
	if (!ASSERT_EQ(sent, CPUMAP_FRAMES, "frames written") ||
	    !ASSERT_EQ(cpumap_wait(cntfd, sent), sent, "frames the cpumap program saw") ||
	    !ASSERT_EQ(send_write_big(&t, frame, len, 1), 1, "the last frame written"))
		goto out;
	seen = cpumap_wait(cntfd, sent + 1);
	if (!ASSERT_EQ(seen, sent + 1, "frames the cpumap program saw, the last one too") ||
	    !ASSERT_OK(pp_dump(ns, t.ifindex, true, &after), "page-pool statistics"))
		goto out;
	if (test__verbose())
		printf("    %lld frames of %zu bytes through the cpumap, %lld tx_dropped at the "
		       "second tap; the pool recycled %llu pages into its cache, %llu in all\n",
		       seen, len, dev_stat(ns, TAP1, "tx_dropped"), after.cached - before.cached,
		       after.recycled - before.recycled);
	ASSERT_GT(after.recycled - before.recycled, 0, "pages recycled (the refused frames')");
	ASSERT_EQ(after.cached - before.cached, 0,
		  "pages recycled into the tap pool's lockless cache by the cpumap kthread");
out:
	if (pfd >= 0)
		close(pfd);
	if (cmfd >= 0)
		close(cmfd);
	if (cpfd >= 0)
		close(cpfd);
	if (cntfd >= 0)
		close(cntfd);
	if (dmfd >= 0)
		close(dmfd);
	tap_close(&t1);
	tap_close(&t);
	netns_del(ns);
}
