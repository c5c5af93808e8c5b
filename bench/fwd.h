/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tap-fwd's forwarder (bench/fwd.c): a wire-side interface read through an
 * AF_PACKET TPACKET_V2 ring, its frames handed to a tap through vhost-net;
 * the tap's own transmissions read() back and sent out of the wire side.
 *
 *	fwd_open(&f, ns, "veth1", tap_fd, &vn, err, sizeof(err))
 *	fwd_start(&f) ... traffic ... fwd_stop(&f)	(once a sample)
 *	fwd_close(&f)
 */
#ifndef XDPLAB_BENCH_FWD_H
#define XDPLAB_BENCH_FWD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "vhost_net.h"

struct fwd {
	int pfd;			/* AF_PACKET, bound to the wire side */
	void *ring;			/* its TPACKET_V2 RX ring */
	size_t ring_len;
	unsigned int slot;		/* next ring slot to look at */
	int tap_fd;
	struct vhost_net *vn;		/* its backend is tap_fd */
	pthread_t th;
	volatile int run;
	bool started;
	int err;			/* errno that stopped the thread, 0 if none */
	/* since fwd_start() */
	unsigned long long to_tap;	/* frames posted to vhost-net */
	unsigned long long kicks;	/* vhost-net kicks */
	unsigned long long to_wire;	/* frames read from the tap and sent */
	unsigned long long too_big, send_fail;
};

/* The AF_PACKET ring on ifname in ns. Returns 0, or -1 with err. */
int fwd_open(struct fwd *f, const char *ns, const char *ifname, int tap_fd,
	     struct vhost_net *vn, char *err, size_t errlen);
/* Forwards in a thread of its own until fwd_stop(). */
int fwd_start(struct fwd *f);
/* Stops the thread and waits for vhost-net to give every buffer back. */
void fwd_stop(struct fwd *f);
/* Frames the ring had no room for since the last call. */
unsigned long long fwd_ring_drops(struct fwd *f);
void fwd_close(struct fwd *f);

#endif
