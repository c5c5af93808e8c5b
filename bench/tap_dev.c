// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A tap device inside a scenario's namespace, as tap, tap-vhost and tap-fwd
 * use it: the fd is opened from within the namespace (tun puts the device
 * in the opener's namespace), O_NONBLOCK because tun's build_skb / XDP fast
 * path for write() needs it, and closing the fd removes the device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <net/if.h>
#include <linux/if_tun.h>

#include "bench.h"

int tap_dev_open(struct tap_dev *t, const char *ns, const char *name, int flags, int mtu,
		 const char *ip, const char *peer_ip, const char *peer_mac, char *err,
		 size_t errlen)
{
	struct ifreq ifr = {};
	char mtustr[24] = "";
	int saved;

	t->fd = -1;
	saved = netns_enter(ns);
	if (saved < 0) {
		snprintf(err, errlen, "cannot enter namespace %s", ns);
		return -1;
	}
	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	netns_leave(saved);
	if (t->fd < 0) {
		snprintf(err, errlen, "cannot open /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | flags;
	if (ioctl(t->fd, TUNSETIFF, &ifr) || ioctl(t->fd, SIOCGIFHWADDR, &ifr)) {
		snprintf(err, errlen, "TUNSETIFF %s%s: %s", name,
			 flags & IFF_NAPI ? " with IFF_NAPI" : "", strerror(errno));
		tap_dev_close(t);
		return -1;
	}
	memcpy(t->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (mtu)
		snprintf(mtustr, sizeof(mtustr), " mtu %d", mtu);
	if (sh("ip -n %s link set dev %s%s up", ns, name, mtustr) ||
	    sh("ip -n %s addr add %s/24 dev %s", ns, ip, name) ||
	    sh("ip -n %s neigh replace %s lladdr %s dev %s", ns, peer_ip, peer_mac, name)) {
		snprintf(err, errlen, "cannot bring %s up", name);
		tap_dev_close(t);
		return -1;
	}
	return 0;
}

void tap_dev_close(struct tap_dev *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

void tap_dev_write_for(struct tap_dev *t, const struct iovec *iov, int iovcnt, int batch,
		       double secs, struct tap_writes *w)
{
	ssize_t len = 0;
	double t0 = now(), end = t0 + secs;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	memset(w, 0, sizeof(*w));
	for (;;) {
		for (int i = 0; i < batch; i++) {
			if (writev(t->fd, iov, iovcnt) == len) {
				w->ok++;
			} else {
				w->fail++;
				w->last_err = errno;
			}
		}
		if (bench_stop || now() >= end)
			break;
	}
	w->secs = now() - t0;
}
