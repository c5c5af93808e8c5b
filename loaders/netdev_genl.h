/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The netdev generic netlink family, asked for a device's XDP features. */
#ifndef XDPLAB_NETDEV_GENL_H
#define XDPLAB_NETDEV_GENL_H

#include <stdint.h>

/* NETDEV_XDP_ACT_* bits (Linux 6.3+), spelled out because Debian 12's
 * kernel headers predate them.
 */
#define XDP_FEAT_BASIC		(1U << 0)
#define XDP_FEAT_REDIRECT	(1U << 1)
#define XDP_FEAT_NDO_XMIT	(1U << 2)
#define XDP_FEAT_XSK_ZEROCOPY	(1U << 3)
#define XDP_FEAT_HW_OFFLOAD	(1U << 4)
#define XDP_FEAT_RX_SG		(1U << 5)
#define XDP_FEAT_NDO_XMIT_SG	(1U << 6)

/* Returns 0 and the feature bits, or -errno (-ENOENT: no netdev family,
 * i.e. a kernel older than 6.3).
 */
int netdev_xdp_features(int ifindex, uint64_t *features);
/* Writes "BASIC REDIRECT ..." for the bits set. */
void netdev_xdp_features_str(uint64_t features, char *buf, size_t len);

#endif
