/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Per-queue statistics as the netdev netlink family reports them (qstats,
 * Linux 6.10+; the fields a driver does not report read -1).
 */
#ifndef XDPLAB_QSTATS_H
#define XDPLAB_QSTATS_H

#define QSTATS_MAX_QUEUES 16

struct qstats_queue {
	long long packets, bytes;
	long long alloc_fail;		/* RX */
	long long stop, wake;		/* TX */
};

struct qstats {
	int nrx, ntx;
	struct qstats_queue rx[QSTATS_MAX_QUEUES], tx[QSTATS_MAX_QUEUES];
};

/* The per-queue statistics of ifindex (this namespace). 0; -EOPNOTSUPP
 * when the device reports none (no netdev_stat_ops); -1 when the kernel
 * has no qstats (before 6.10) or on a socket error.
 */
int qstats_dump(int ifindex, struct qstats *q);

#endif
