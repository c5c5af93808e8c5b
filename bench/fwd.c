// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The forwarder of tap-fwd, in the role testpmd had in seed 001: frames
 * that arrive on a wire-side interface are read from an AF_PACKET
 * (PACKET_MMAP) ring and handed to a tap through vhost-net
 * (lib/vhost_net.h), so tun gets them in TUN_MSG_PTR batches as from a VM;
 * what the tap sends back (TCP ACKs) is read() from the tap fd and sent out
 * of the wire side.
 *
 * One thread does both directions, sleeping in poll() between bursts, as
 * a process sharing two CPUs with iperf3 has to. A burst is whatever
 * frames the ring holds when the thread looks, up to FWD_BURST a kick:
 * testpmd's rx_burst. The ring is TPACKET_V2, not V3: V3 hands frames
 * over a block at a time, when the block is full or its timer fires, and
 * that timer counts jiffies (4 ms at HZ=250), which a TCP stream pays in
 * its round trip: with V3 and a 1 ms block timeout the 6.12 guest moved
 * 0.2 Gbit/s.
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

#define FWD_FRAME 2048		/* a ring slot: header + a 1514-byte frame */
#define FWD_FRAMES 1024
#define FWD_BURST 64		/* vhost-net's own batch (VHOST_NET_BATCH) */

int fwd_open(struct fwd *f, const char *ns, const char *ifname, int tap_fd,
	     struct vhost_net *vn, char *err, size_t errlen)
{
	struct tpacket_req req = {
		.tp_block_size = FWD_FRAME * 32,
		.tp_block_nr = FWD_FRAMES / 32,
		.tp_frame_size = FWD_FRAME,
		.tp_frame_nr = FWD_FRAMES,
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int v = TPACKET_V2, one = 1, saved;

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
		snprintf(err, errlen, "TPACKET_V2 ring on %s: %s", ifname, strerror(errno));
		goto fail;
	}
	/* What we send out of the wire side is not to come back in. */
	setsockopt(f->pfd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	f->ring_len = (size_t)FWD_FRAME * FWD_FRAMES;
	f->ring = mmap(NULL, f->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, f->pfd, 0);
	if (f->ring == MAP_FAILED) {
		snprintf(err, errlen, "mmap of the TPACKET_V2 ring: %s", strerror(errno));
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

/* Wire -> tap: every frame the ring holds, a kick every FWD_BURST. */
static int wire_to_tap(struct fwd *f)
{
	unsigned int posted = 0;

	for (;;) {
		struct tpacket2_hdr *h = (void *)((char *)f->ring + (size_t)f->slot * FWD_FRAME);

		if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			break;
		/* A full vhost ring: let vhost have what is posted, take
		 * back what it is done with.
		 */
		while (!vhost_net_room(f->vn) && f->run) {
			if (posted && vhost_net_kick(f->vn))
				return -1;
			if (posted)
				f->kicks++;
			posted = 0;
			if (vhost_net_reap(f->vn, 0.1) < 0)
				return -1;
		}
		if (vhost_net_post(f->vn, NULL, (char *)h + h->tp_mac, h->tp_snaplen)) {
			f->too_big++;
		} else {
			f->to_tap++;
			posted++;
		}
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		f->slot = (f->slot + 1) % FWD_FRAMES;
		if (posted == FWD_BURST) {
			if (vhost_net_kick(f->vn))
				return -1;
			f->kicks++;
			posted = 0;
		}
	}
	if (posted) {
		if (vhost_net_kick(f->vn))
			return -1;
		f->kicks++;
	}
	return 0;
}

/* Tap -> wire: what the tap transmitted, without its virtio-net header. */
static void tap_to_wire(struct fwd *f)
{
	static __thread unsigned char buf[VHOST_NET_HDR_LEN + 65536];
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
	f->to_tap = f->to_wire = f->kicks = f->too_big = f->send_fail = 0;
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
	struct tpacket_stats st = {};
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
