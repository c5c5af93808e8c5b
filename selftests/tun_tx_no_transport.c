// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * review-v12b BUG 1 (kernel-patches/tun/review-v12b.md, issue 19): a TCP GSO
 * frame written to a tap whose headers the flow dissector cannot parse (an
 * IPv4 header with ihl 0, or an ethertype it does not know), without
 * NEEDS_CSUM, keeps GSO through virtio_net_hdr_to_skb() but gets no
 * transport header. Under XDP_TX of a multi-buffer program, the series'
 * tun_xdp_tx_skb() read the TCP header at that unset offset (64 KB past
 * the buffer) to decide whether the frame is one MSS.
 *
 *  tun_tx_gso_no_transport  such frames under XDP_TX: no kernel report
 *                           (DEBUG=1: DEBUG_NET's unset transport header,
 *                           KASAN), and each frame written comes back at
 *                           the tap fd or is counted dropped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#include "cli.h"
#include "netns.h"
#include "stress.h"
#include "test.h"
#include "tun.h"
#include "vhost_net.h"

#define TAP0 "xtun0"
#define NT_FRAMES 8
#define NT_LEN 200

/* The written frames (or their pieces: the same first 15 bytes) that came
 * back at the non-blocking tap fd within timeout s.
 */
static int frames_back(int fd, const uint8_t *frame, double timeout)
{
	static uint8_t buf[65536];
	int n = 0;

	for (double end = now_secs() + timeout; now_secs() < end;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t len = read(fd, buf, sizeof(buf));

		if (len >= VHOST_NET_HDR_LEN + 15)
			n += !memcmp(buf + VHOST_NET_HDR_LEN, frame, 15);
		else
			poll(&p, 1, 50);
	}
	return n;
}

TEST(tun_tx_gso_no_transport)
{
	static const struct bpf_insn tx[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_TX },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const struct { const char *name; uint16_t ethertype; } kinds[] = {
		{ "ipv4_ihl0", 0x0800 }, { "unknown_ethertype", 0x88b5 },
	};

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct virtio_net_hdr vh = {
			.gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .gso_size = 100,
		};
		uint8_t hdr[VHOST_NET_HDR_LEN] = {}, frame[NT_LEN] = {};
		struct iovec iov[2] = { { hdr, sizeof(hdr) }, { frame, sizeof(frame) } };
		char ns[NETNS_NAME_MAX] = "";
		struct tap t = { .fd = -1 };
		long long drops0, drops1;
		int pfd = -1, written = 0, refused = 0, back;
		struct kwatch kw;

		if (!test__start_subtest(kinds[k].name))
			continue;
		if (access("/dev/net/tun", R_OK | W_OK)) {
			test__skip("no /dev/net/tun");
			continue;
		}
		/* No IPv6: nothing but the frames written comes back. */
		if (!ASSERT_OK(netns_add("tunnt", ns), "netns") ||
		    !ASSERT_OK(sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
				  "net.ipv6.conf.default.disable_ipv6=1", ns), "no IPv6") ||
		    !ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t), "tap"))
			goto next;
		pfd = xdp_raw_attach(ns, TAP0, tx, 2);
		if (!ASSERT_GE(pfd, 0, "XDP_TX program (frags) in the driver"))
			goto next;
		memcpy(hdr, &vh, sizeof(vh));
		memset(frame, 0x02, 12);		/* local MACs */
		frame[12] = kinds[k].ethertype >> 8;
		frame[13] = kinds[k].ethertype & 0xff;
		frame[14] = 0x40;			/* IPv4, ihl 0 */
		drops0 = dev_stat(ns, TAP0, "tx_dropped") + dev_stat(ns, TAP0, "rx_dropped");
		kwatch_start(&kw);
		for (int i = 0; i < NT_FRAMES; i++) {
			if (writev(t.fd, iov, 2) == (ssize_t)(sizeof(hdr) + sizeof(frame)))
				written++;
			else if (errno == EINVAL)
				refused++;
		}
		back = frames_back(t.fd, frame, 2);
		drops1 = dev_stat(ns, TAP0, "tx_dropped") + dev_stat(ns, TAP0, "rx_dropped");
		if (test__verbose())
			printf("    %d written, %d refused (EINVAL), %d back at the tap fd, "
			       "%lld counted dropped\n", written, refused, back, drops1 - drops0);
		ASSERT_EQ(written + refused, NT_FRAMES, "frames written or refused with EINVAL");
		ASSERT_GE(back + (drops1 - drops0), written,
			  "frames back at the tap fd or counted dropped");
		kwatch_check(&kw, "kernel log while the frames went out");
next:
		if (pfd >= 0)
			close(pfd);
		tap_close(&t);
		if (ns[0])
			netns_del(ns);
	}
}
