// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/tcp.h>
#include <linux/icmp.h>

#include "pkt.h"

static size_t l3_len(int ipver)
{
	return ipver == 6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
}

static size_t l4_len(enum pkt_l4 l4)
{
	switch (l4) {
	case PKT_TCP:
		return sizeof(struct tcphdr);
	case PKT_ICMP:
		return sizeof(struct icmphdr);
	default:
		return sizeof(struct udphdr);
	}
}

size_t pkt_ext_len(uint8_t type)
{
	return type == IPPROTO_ROUTING || type == IPPROTO_AH ? 24 : 8;
}

static size_t exts_len(const struct pkt_spec *s)
{
	size_t n = 0;

	for (int i = 0; i < s->n_ext && i < PKT_MAX_EXT; i++)
		n += pkt_ext_len(s->ext[i]);
	return n;
}

size_t pkt_hdr_len(const struct pkt_spec *s)
{
	return ETH_HLEN + (s->vlan ? 4 : 0) + l3_len(s->ipver) + exts_len(s) + l4_len(s->l4);
}

/* Writes the extension headers of s at p, the last one naming proto. */
static void put_exts(uint8_t *p, const struct pkt_spec *s, uint8_t proto)
{
	for (int i = 0; i < s->n_ext && i < PKT_MAX_EXT; i++) {
		size_t len = pkt_ext_len(s->ext[i]);

		p[0] = i + 1 < s->n_ext ? s->ext[i + 1] : proto;
		switch (s->ext[i]) {
		case IPPROTO_FRAGMENT:
			/* M set on a first fragment, clear on a later one. */
			*(uint16_t *)(p + 2) = htons(s->frag_off << 3 | !s->frag_off);
			*(uint32_t *)(p + 4) = htonl(0x10000 + i);
			break;
		case IPPROTO_AH:
			p[1] = len / 4 - 2;
			*(uint32_t *)(p + 4) = htonl(0x100);	/* SPI */
			*(uint32_t *)(p + 8) = htonl(1);	/* sequence number */
			break;
		case IPPROTO_ROUTING:
			p[1] = len / 8 - 1;
			p[2] = 253;	/* routing type for experiments (RFC 4727) */
			break;
		default:
			/* Options headers: one PadN option fills the rest. */
			p[1] = len / 8 - 1;
			p[2] = 1;
			p[3] = len - 4;
		}
		p += len;
	}
}

static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; len -= 2, p += 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* The pseudo-header sum that TCP, UDP and ICMPv6 checksums start from. */
static uint32_t pseudo_sum(const struct pkt_spec *s, uint8_t proto, size_t l4len)
{
	uint32_t sum = 0;

	if (s->ipver == 6) {
		sum = csum_add(sum, &s->src, 16);
		sum = csum_add(sum, &s->dst, 16);
		sum += (uint32_t)(l4len >> 16) + (l4len & 0xffff);
	} else {
		sum = csum_add(sum, &s->src, 4);
		sum = csum_add(sum, &s->dst, 4);
		sum += l4len;
	}
	return sum + proto;
}

size_t pkt_build(void *buf, size_t size, const struct pkt_spec *s)
{
	uint8_t *p = buf, *l4;
	size_t off, l4len, plen, i;
	uint8_t proto;

	if (s->len < pkt_hdr_len(s) || s->len > size || (s->ipver != 4 && s->ipver != 6))
		return 0;
	memset(buf, 0, s->len);
	memcpy(p, s->dst_mac, 6);
	memcpy(p + 6, s->src_mac, 6);
	off = 12;
	if (s->vlan) {
		*(uint16_t *)(p + off) = htons(ETH_P_8021Q);
		*(uint16_t *)(p + off + 2) = htons(s->vlan & 0xfff);
		off += 4;
	}
	*(uint16_t *)(p + off) = htons(s->ipver == 6 ? ETH_P_IPV6 : ETH_P_IP);
	off += 2;

	l4len = s->len - off - l3_len(s->ipver) - exts_len(s);
	switch (s->l4) {
	case PKT_TCP:
		proto = IPPROTO_TCP;
		break;
	case PKT_ICMP:
		proto = s->ipver == 6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
		break;
	default:
		proto = IPPROTO_UDP;
	}

	if (s->ipver == 6) {
		struct ipv6hdr *ip6 = (void *)(p + off);

		ip6->version = 6;
		ip6->payload_len = htons(exts_len(s) + l4len);
		ip6->nexthdr = s->n_ext ? s->ext[0] : proto;
		ip6->hop_limit = 64;
		memcpy(&ip6->saddr, &s->src, 16);
		memcpy(&ip6->daddr, &s->dst, 16);
	} else {
		struct iphdr *ip = (void *)(p + off);

		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(sizeof(*ip) + exts_len(s) + l4len);
		ip->frag_off = htons(0x4000);	/* DF */
		ip->ttl = 64;
		ip->protocol = s->n_ext ? s->ext[0] : proto;
		memcpy(&ip->saddr, &s->src, 4);
		memcpy(&ip->daddr, &s->dst, 4);
		ip->check = csum_fold(csum_add(0, ip, sizeof(*ip)));
	}
	off += l3_len(s->ipver);
	put_exts(p + off, s, proto);
	off += exts_len(s);
	l4 = p + off;

	plen = l4len - l4_len(s->l4);
	for (i = 0; i < plen; i++)
		l4[l4_len(s->l4) + i] = pkt_pattern(i);

	if (s->l4 == PKT_UDP) {
		struct udphdr *uh = (void *)l4;

		uh->source = htons(s->sport);
		uh->dest = htons(s->dport);
		uh->len = htons(l4len);
		uh->check = csum_fold(csum_add(pseudo_sum(s, proto, l4len), l4, l4len));
		if (!uh->check)
			uh->check = 0xffff;
	} else if (s->l4 == PKT_TCP) {
		struct tcphdr *th = (void *)l4;

		th->source = htons(s->sport);
		th->dest = htons(s->dport);
		th->seq = htonl(1);
		th->doff = sizeof(*th) / 4;
		th->ack = 1;
		th->window = htons(65535);
		th->check = csum_fold(csum_add(pseudo_sum(s, proto, l4len), l4, l4len));
	} else {
		struct icmphdr *ih = (void *)l4;

		ih->type = s->ipver == 6 ? 128 : ICMP_ECHO;	/* echo request */
		ih->un.echo.id = htons(s->sport);
		ih->un.echo.sequence = htons(1);
		ih->checksum = csum_fold(csum_add(s->ipver == 6 ?
				pseudo_sum(s, proto, l4len) : 0, l4, l4len));
	}
	return s->len;
}

bool pkt_pattern_ok(const void *buf, size_t len, size_t off)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != pkt_pattern(off + i))
			return false;
	return true;
}

int pkt_parse_ip(const char *s, struct in6_addr *addr)
{
	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, s, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return 6;
	return 0;
}

int pkt_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char extra;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5], &extra) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = b[i];
	}
	return 0;
}
