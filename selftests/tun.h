/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A tap with XDP, its frames and their receivers: the helpers of
 * test_tun.c that the stress tests (stress_tun.c) share.
 *
 *	netns: tap TAP_IP/24, PEER_IP a neighbour that does not exist
 *	frames written to the tap: PEER_IP:4242 -> TAP_IP:PORT, UDP
 */
#ifndef XDPLAB_TUN_H
#define XDPLAB_TUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/virtio_net.h>

#define TAP_IP "198.18.22.1"
#define PEER_IP "198.18.22.2"
#define PEER_MAC "02:00:00:00:22:02"
#define PORT 7100

struct tap {
	int fd;
	int ifindex;
	uint8_t mac[6];
};

/* A tap named name in ns (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | extra_flags,
 * non-blocking, ready to be a vhost-net backend), MTU mtu, up. 0 or -1.
 */
int tap_make(const char *ns, const char *name, int extra_flags, int mtu, struct tap *t);
void tap_close(struct tap *t);

/* SZ_GSO_BIG (not in the verdict matrix): a GSO frame spread over several
 * pages, for the multi-buffer test.
 */
enum size_kind { SZ_64, SZ_1500, SZ_9000, SZ_GSO, SZ_NR, SZ_GSO_BIG = SZ_NR };

struct frame {
	struct virtio_net_hdr vh;
	uint8_t data[16384];
	size_t len;
	size_t payload;		/* UDP payload bytes */
};

/* A UDP frame to t of size k, with the virtio-net header it needs. */
void frame_build(struct frame *f, const struct tap *t, enum size_kind k);
/* A UDP frame to t of len bytes (at most sizeof(f->data)); gso_size: UDP
 * GSO in the virtio-net header; partial_csum: the UDP checksum left to the
 * kernel (NEEDS_CSUM), as GSO needs.
 */
void frame_build_udp(struct frame *f, const struct tap *t, size_t len, unsigned int gso_size,
		     bool partial_csum);
/* Writes f n times to the tap's fd; returns how many went in whole. */
int send_write(const struct tap *t, const struct frame *f, int n);
/* A non-blocking UDP socket on TAP_IP:PORT in ns, or -1. */
int udp_listen_in(const char *ns);
/* Collects frames of payload bytes from fd for at most timeout s, until want
 * arrived whole; returns how many did (negative: how many were corrupt).
 */
int sock_collect(int fd, size_t payload, int want, double timeout);
/* TUNSETOFFLOAD's UDP GSO flags (Linux 6.2), for older uAPI headers */
#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif

/* What tap_collect_csum() saw of the frames it read. */
struct tap_rx_counts {
	int pieces;	/* UDP frames to PORT read */
	int gso;	/* of them, with GSO in their virtio-net header */
	int needs_csum;	/* with NEEDS_CSUM: the checksum left to the reader */
	int bad_csum;	/* with a UDP checksum neither complete nor left to it */
};

/* Frames read from a tap fd (virtio-net header first) within timeout s:
 * UDP to PORT, reassembled as sock_collect() does; src_mac: the source MAC
 * each must have (NULL: any). counts: NULL, or what the pieces were.
 */
int tap_collect_csum(int fd, size_t payload, int want, const uint8_t *src_mac,
		     double timeout, struct tap_rx_counts *counts);

/* Does the tap TAP0 in ns offer multi-buffer XDP (RX_SG in xdplab status)?
 * Without it, frames over a page take generic XDP.
 */
bool tap_has_rx_sg(const char *ns);

struct bpf_insn;
/* An xdp.frags program of n raw instructions, attached in the driver to
 * ifname in ns (tun_review.c). Returns its fd, or -1.
 */
int xdp_raw_attach(const char *ns, const char *ifname, const struct bpf_insn *insns, size_t n);
/* A counter of /sys/class/net/IFNAME/statistics in ns, or -1. */
long long dev_stat(const char *ns, const char *ifname, const char *name);

#endif
