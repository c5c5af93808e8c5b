// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The forwarder of tap-fwd, in the role testpmd had in seed 001: frames
 * that arrive on a wire-side interface are read from an AF_PACKET
 * TPACKET_V3 ring and handed to a tap through vhost-net (lib/vhost_net.h),
 * so tun gets them in TUN_MSG_PTR batches as from a VM; what the tap sends
 * back (TCP ACKs) is read() from the tap fd and sent out of the wire side.
 *
 * One thread does both directions, sleeping in poll() between bursts, as
 * a process sharing two CPUs with iperf3 has to. A V3 ring hands frames
 * over a block at a time: a block is returned to user space when it is
 * full or after FWD_BLOCK_TOV_MS, so a burst reaches vhost in one kick.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "bench.h"
#include "fwd.h"

#define FWD_BLOCK_SIZE (1 << 15)	/* about 20 frames of 1514 bytes */
#define FWD_BLOCKS 64
#define FWD_BLOCK_TOV_MS 1
#define FWD_MAX_FRAME 2048

int fwd_open(struct fwd *f, const char *ns, const char *ifname, int tap_fd,
	     struct vhost_net *vn, char *err, size_t errlen)
{
	struct tpacket_req3 req = {
		.tp_block_size = FWD_BLOCK_SIZE,
		.tp_block_nr = FWD_BLOCKS,
		.tp_frame_size = FWD_MAX_FRAME,
		.tp_frame_nr = FWD_BLOCK_SIZE / FWD_MAX_FRAME * FWD_BLOCKS,
		.tp_retire_blk_tov = FWD_BLOCK_TOV_MS,
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int v = TPACKET_V3, one = 1, saved;

	memset(f, 0, sizeof(*f));
	f->tap_fd = tap_fd;
	f->vn = vn;
	f->ring = MAP_FAILED;
	saved = netns_enter(ns);
	if (saved < 0) {
		snprintf(err, errlen, "cannot enter namespace %s", ns);
		return -1;
	}
	f->pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sll.sll_ifindex = if_nametoindex(ifname);
	netns_leave(saved);
	if (f->pfd < 0 || !sll.sll_ifindex) {
		snprintf(err, errlen, "AF_PACKET socket on %s: %s", ifname, strerror(errno));
		goto fail;
	}
	if (setsockopt(f->pfd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(f->pfd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		snprintf(err, errlen, "TPACKET_V3 ring on %s: %s", ifname, strerror(errno));
		goto fail;
	}
	/* What we send out of the wire side is not to come back in. */
	setsockopt(f->pfd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	f->ring_len = (size_t)FWD_BLOCK_SIZE * FWD_BLOCKS;
	f->ring = mmap(NULL, f->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, f->pfd, 0);
	if (f->ring == MAP_FAILED) {
		snprintf(err, errlen, "mmap of the TPACKET_V3 ring: %s", strerror(errno));
		goto fail;
	}
	if (bind(f->pfd, (struct sockaddr *)&sll, sizeof(sll))) {
		snprintf(err, errlen, "bind AF_PACKET to %s: %s", ifname, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	fwd_close(f);
	return -1;
}

/* Wire -> tap: every block the kernel has handed over, one kick a block. */
static int wire_to_tap(struct fwd *f)
{
	for (;;) {
		struct tpacket_block_desc *bd = (void *)((char *)f->ring +
							 (size_t)f->blk * FWD_BLOCK_SIZE);
		struct tpacket3_hdr *h;
		unsigned int n;

		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) &
		      TP_STATUS_USER))
			return 0;
		n = bd->hdr.bh1.num_pkts;
		h = (void *)((char *)bd + bd->hdr.bh1.offset_to_first_pkt);
		for (unsigned int i = 0; i < n; i++) {
			/* A full ring: wait for vhost to give buffers back. */
			while (!vhost_net_room(f->vn) && f->run)
				if (vhost_net_reap(f->vn, 0.1) < 0)
					return -1;
			if (vhost_net_post(f->vn, NULL, (char *)h + h->tp_mac, h->tp_snaplen))
				f->too_big++;
			else
				f->to_tap++;
			h = (void *)((char *)h + h->tp_next_offset);
		}
		if (n && vhost_net_kick(f->vn))
			return -1;
		f->blocks++;
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		f->blk = (f->blk + 1) % FWD_BLOCKS;
	}
}

/* Tap -> wire: what the tap transmitted, without its virtio-net header. */
static void tap_to_wire(struct fwd *f)
{
	static __thread unsigned char buf[VHOST_NET_HDR_LEN + FWD_MAX_FRAME * 32];
	ssize_t n;

	while ((n = read(f->tap_fd, buf, sizeof(buf))) > VHOST_NET_HDR_LEN) {
		if (send(f->pfd, buf + VHOST_NET_HDR_LEN, n - VHOST_NET_HDR_LEN, MSG_DONTWAIT) < 0)
			f->send_fail++;
		else
			f->to_wire++;
	}
}

static void *fwd_thread(void *arg)
{
	struct fwd *f = arg;

	while (f->run) {
		struct pollfd p[2] = { { f->pfd, POLLIN, 0 }, { f->tap_fd, POLLIN, 0 } };

		if (poll(p, 2, 10) < 0 && errno != EINTR)
			break;
		if (wire_to_tap(f) || vhost_net_reap(f->vn, 0) < 0) {
			f->err = errno;
			break;
		}
		tap_to_wire(f);
	}
	return NULL;
}

int fwd_start(struct fwd *f)
{
	f->to_tap = f->to_wire = f->blocks = f->too_big = f->send_fail = 0;
	f->err = 0;
	f->run = 1;
	if (pthread_create(&f->th, NULL, fwd_thread, f)) {
		f->run = 0;
		return -1;
	}
	f->started = true;
	return 0;
}

void fwd_stop(struct fwd *f)
{
	if (!f->started)
		return;
	f->run = 0;
	pthread_join(f->th, NULL);
	f->started = false;
	vhost_net_drain(f->vn, 2);
}

unsigned long long fwd_ring_drops(struct fwd *f)
{
	struct tpacket_stats_v3 st = {};
	socklen_t len = sizeof(st);

	/* Reading the statistics resets them. */
	if (getsockopt(f->pfd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return 0;
	return st.tp_drops;
}

void fwd_close(struct fwd *f)
{
	fwd_stop(f);
	if (f->ring && f->ring != MAP_FAILED)
		munmap(f->ring, f->ring_len);
	f->ring = MAP_FAILED;
	if (f->pfd > 0)
		close(f->pfd);
	f->pfd = -1;
}
