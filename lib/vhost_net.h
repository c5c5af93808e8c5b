/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A minimal user-space vhost-net "guest": one transmit virtqueue whose
 * buffers live in this process, handed to /dev/vhost-net with a tap fd as
 * its backend. The vhost worker copies each buffer and, while the tap's
 * send buffer is unlimited (the default), hands them to tun_sendmsg() in
 * TUN_MSG_PTR batches of up to 64 xdp_buffs: the path a VM's virtio-net
 * transmit takes, which a process writing to the tap fd cannot reach.
 *
 *	tap fd (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, see vhost_net_tap_prepare)
 *	vhost_net_open(&vn, tap_fd, 256, 2048)
 *	loop: vhost_net_post() up to vhost_net_room() frames, vhost_net_kick(),
 *	      vhost_net_reap() what vhost has consumed
 *	vhost_net_close(&vn)	(the tap fd stays the caller's)
 *
 * Every frame carries a 12-byte virtio-net header (VIRTIO_F_VERSION_1
 * layout) that tun parses: all zero for a plain frame, or a GSO/checksum
 * request. Only the TX ring is set up: what the tap transmits (towards the
 * "guest") stays in the tap's queue and can be read() from the tap fd.
 */
#ifndef XDPLAB_VHOST_NET_H
#define XDPLAB_VHOST_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#define VHOST_NET_HDR_LEN 12	/* struct virtio_net_hdr_mrg_rxbuf */

struct vhost_net {
	int fd;			/* /dev/vhost-net */
	int kick, call;		/* eventfds */
	unsigned int num;	/* descriptors in the ring */
	size_t slot;		/* bytes a buffer: header + largest frame */
	void *mem;		/* one mapping: ring, then num buffers */
	size_t mem_len;
	struct vring vr;
	uint16_t avail_idx;	/* next avail slot (shadow of vr.avail->idx) */
	uint16_t used_idx;	/* next used entry to look at */
	uint16_t *free_ids;	/* descriptor ids not in flight */
	unsigned int nfree;
	unsigned long long posted, completed, kicks;
};

/* Why vhost-net cannot be used here (no /dev/vhost-net, ...), or NULL. */
const char *vhost_net_unavailable(void);
/* Sets up the header size and byte order a tap fd needs to be a vhost-net
 * backend for this client (TUNSETVNETHDRSZ 12, TUNSETVNETLE). The tap must
 * have been made with IFF_VNET_HDR. Returns 0 or -1 (errno).
 */
int vhost_net_tap_prepare(int tap_fd);
/* Opens /dev/vhost-net, takes ownership, acks VIRTIO_F_VERSION_1, maps a
 * ring of num (a power of two, at most 32768) buffers of max_frame bytes
 * each, and makes tap_fd the TX queue's backend. Returns 0, or -1 with
 * errno set and everything undone.
 */
int vhost_net_open(struct vhost_net *vn, int tap_fd, unsigned int num, size_t max_frame);
/* Detaches the backend and frees everything; safe on a zeroed or closed vn. */
void vhost_net_close(struct vhost_net *vn);

/* Free descriptors (frames that can be posted now). */
static inline unsigned int vhost_net_room(const struct vhost_net *vn)
{
	return vn->nfree;
}
/* Copies hdr (NULL: all zero) and the frame into a free buffer and makes it
 * available, without notifying vhost. Returns 0, or -1 if the ring is full
 * or len is above max_frame.
 */
int vhost_net_post(struct vhost_net *vn, const struct virtio_net_hdr *hdr,
		   const void *frame, size_t len);
/* As vhost_net_post(), but the frame goes in a chain of descriptors: the
 * header and the first `first` bytes in one buffer, the rest in pieces of
 * `piece` bytes, each in a buffer of its own (with buffers of a page or
 * more, a page of its own): how a guest's scattered frame reaches vhost.
 * Takes 1 + ceil((len - first) / piece) free descriptors; returns 0, or -1
 * if there are not that many or a piece does not fit a buffer.
 */
int vhost_net_post_split(struct vhost_net *vn, const struct virtio_net_hdr *hdr,
			 const void *frame, size_t len, size_t first, size_t piece);
/* Notifies vhost of what was posted. Returns 0 or -1. */
int vhost_net_kick(struct vhost_net *vn);
/* Takes back the buffers vhost has consumed; waits up to timeout seconds
 * (0: do not wait) for at least one when none is ready. Returns how many,
 * or -1 on an error.
 */
int vhost_net_reap(struct vhost_net *vn, double timeout);
/* Waits until every posted buffer came back (or timeout). Returns 0 once
 * nothing is in flight, -1 otherwise.
 */
int vhost_net_drain(struct vhost_net *vn, double timeout);

#endif
