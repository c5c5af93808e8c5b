/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Builds test frames: Ethernet, optional 802.1Q tag, IPv4 or IPv6, optional
 * extension headers, then UDP, TCP or ICMP, with correct checksums and a payload whose bytes depend
 * on their offset, so a receiver can check content and not just length.
 * Used by the traffic generator, the selftests and the bench.
 */
#ifndef XDPLAB_PKT_H
#define XDPLAB_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

enum pkt_l4 { PKT_UDP, PKT_TCP, PKT_ICMP };

#define PKT_MAX_EXT 24

struct pkt_spec {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	int ipver;			/* 4 or 6 */
	struct in6_addr src, dst;	/* IPv4 uses the first 4 bytes */
	enum pkt_l4 l4;
	uint16_t sport, dport;
	uint16_t vlan;			/* 0: untagged */
	size_t len;			/* whole frame, without FCS */
	/* Headers between the IP and L4 headers, in this order, chained by
	 * their next-header fields: IPv6 extension headers by protocol
	 * number (IPPROTO_HOPOPTS, _ROUTING, _FRAGMENT, _AH, _DSTOPTS, or any
	 * other number for one of the generic layout), or AH after IPv4. See
	 * pkt_ext_len() for their sizes.
	 */
	uint8_t ext[PKT_MAX_EXT];
	int n_ext;
	uint16_t frag_off;		/* Fragment headers: offset, 8-byte units */
};

/* Bytes an extension header of this type takes in a built frame: 8 for
 * hop-by-hop, destination options, fragment and unknown types, 24 for a
 * routing header (hdrlen 2) and for AH (hdrlen 4 in its 4-byte units, a
 * 96-bit ICV), so a parser that mixes the units up lands elsewhere.
 */
size_t pkt_ext_len(uint8_t type);

/* Smallest frame pkt_build() can make for spec (headers, no payload). */
size_t pkt_hdr_len(const struct pkt_spec *spec);
/* Writes spec->len bytes to buf; returns the length or 0 if too short. */
size_t pkt_build(void *buf, size_t size, const struct pkt_spec *spec);
/* The payload pattern: byte at payload offset i. */
static inline uint8_t pkt_pattern(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 8));
}
/* Does buf[0..len) hold the pattern starting at payload offset off? */
bool pkt_pattern_ok(const void *buf, size_t len, size_t off);
/* Parses "a.b.c.d" or an IPv6 address into addr; returns 4, 6 or 0. */
int pkt_parse_ip(const char *s, struct in6_addr *addr);
/* Parses "aa:bb:cc:dd:ee:ff"; returns 0 or -1. */
int pkt_parse_mac(const char *s, uint8_t mac[6]);

#endif
