// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A minimal generic netlink client: resolve the "netdev" family, then
 * NETDEV_CMD_DEV_GET for one ifindex. libbpf 1.2 wraps this as
 * bpf_xdp_query()'s feature_flags; Debian 12 ships libbpf 1.1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "netdev_genl.h"

#define NETDEV_CMD_DEV_GET		1
#define NETDEV_A_DEV_IFINDEX		1
#define NETDEV_A_DEV_XDP_FEATURES	3

struct req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

static void put_attr(struct req *r, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (void *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Sends r, receives one reply and calls cb on each attribute of it. */
static int transact(int sk, struct req *r, int (*cb)(const struct nlattr *, void *), void *arg)
{
	char buf[8192];
	struct nlmsghdr *nh = (void *)buf;
	ssize_t n;

	r->nh.nlmsg_flags = NLM_F_REQUEST;
	if (send(sk, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(sk, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(nh, (size_t)n))
		return -EBADMSG;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(nh);

		return e->error ? e->error : -ENODATA;
	}
	{
		char *p = (char *)NLMSG_DATA(nh) + GENL_HDRLEN;
		char *end = (char *)nh + nh->nlmsg_len;

		while (p + NLA_HDRLEN <= end) {
			struct nlattr *a = (void *)p;

			if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
				break;
			if (cb(a, arg))
				return 0;
			p += NLA_ALIGN(a->nla_len);
		}
	}
	return -ENODATA;
}

static int family_id_cb(const struct nlattr *a, void *arg)
{
	if ((a->nla_type & NLA_TYPE_MASK) != CTRL_ATTR_FAMILY_ID)
		return 0;
	memcpy(arg, (char *)a + NLA_HDRLEN, sizeof(uint16_t));
	return 1;
}

static int features_cb(const struct nlattr *a, void *arg)
{
	if ((a->nla_type & NLA_TYPE_MASK) != NETDEV_A_DEV_XDP_FEATURES)
		return 0;
	memcpy(arg, (char *)a + NLA_HDRLEN, sizeof(uint64_t));
	return 1;
}

int netdev_xdp_features(int ifindex, uint64_t *features)
{
	struct req r = {};
	uint16_t family = 0;
	uint32_t idx = ifindex;
	int sk, err;

	sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (sk < 0)
		return -errno;

	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = GENL_ID_CTRL;
	r.gh.cmd = CTRL_CMD_GETFAMILY;
	r.gh.version = 1;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, "netdev", sizeof("netdev"));
	err = transact(sk, &r, family_id_cb, &family);
	if (err) {
		close(sk);
		return err == -ENODATA ? -ENOENT : err;
	}

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = family;
	r.gh.cmd = NETDEV_CMD_DEV_GET;
	r.gh.version = 1;
	put_attr(&r, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	*features = 0;
	err = transact(sk, &r, features_cb, features);
	close(sk);
	return err;
}

void netdev_xdp_features_str(uint64_t f, char *buf, size_t len)
{
	static const char *const names[] = {
		"BASIC", "REDIRECT", "NDO_XMIT", "XSK_ZEROCOPY", "HW_OFFLOAD", "RX_SG",
		"NDO_XMIT_SG",
	};
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f & (1ULL << i) && off < len)
			off += snprintf(buf + off, len - off, "%s%s", off ? " " : "", names[i]);
	if (!off)
		snprintf(buf, len, "none");
}
