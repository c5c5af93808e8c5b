// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The netdev generic netlink family (Linux 6.8+), read without libynl:
 * page pools and their statistics (page_pool.h), and the per-queue
 * statistics of a device (qstats.h). Attribute numbers are the 6.12 UAPI's,
 * written out because Debian 12's <linux/netdev.h> (6.1) has none of them.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "netns.h"
#include "page_pool.h"
#include "qstats.h"
#include "test.h"

#define NETDEV_CMD_QSTATS_GET		12
#define NETDEV_A_QSTATS_IFINDEX		1
#define NETDEV_A_QSTATS_QUEUE_TYPE	2
#define NETDEV_A_QSTATS_QUEUE_ID	3
#define NETDEV_A_QSTATS_SCOPE		4
#define NETDEV_A_QSTATS_RX_PACKETS	8
#define NETDEV_A_QSTATS_RX_BYTES	9
#define NETDEV_A_QSTATS_TX_PACKETS	10
#define NETDEV_A_QSTATS_TX_BYTES	11
#define NETDEV_A_QSTATS_RX_ALLOC_FAIL	12
#define NETDEV_A_QSTATS_TX_STOP		33
#define NETDEV_A_QSTATS_TX_WAKE		34
#define NETDEV_QSTATS_SCOPE_QUEUE	1
#define NETDEV_QUEUE_TYPE_RX		0
#define NETDEV_QUEUE_TYPE_TX		1

#define NETDEV_CMD_PAGE_POOL_GET	5
#define NETDEV_CMD_PAGE_POOL_STATS_GET	9
#define NETDEV_A_PAGE_POOL_ID		1
#define NETDEV_A_PAGE_POOL_IFINDEX	2
#define NETDEV_A_PAGE_POOL_INFLIGHT	4
#define NETDEV_A_PAGE_POOL_DETACH_TIME	6
#define NETDEV_A_PP_STATS_INFO		1
#define NETDEV_A_PP_STATS_ALLOC_FAST	8
#define NETDEV_A_PP_STATS_ALLOC_SLOW	9
#define NETDEV_A_PP_STATS_RECYCLE_CACHED 14
#define NETDEV_A_PP_STATS_RECYCLE_RING	16

struct nlreq {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

/* The id of generic netlink family name, or -1 */
static int genl_family(int sk, const char *name)
{
	struct nlreq r = { .nh = { .nlmsg_type = GENL_ID_CTRL, .nlmsg_flags = NLM_F_REQUEST },
			   .gh = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };
	struct nlattr *a = (void *)r.attrs;
	char buf[8192];
	ssize_t n;

	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + strlen(name) + 1;
	strcpy((char *)a + NLA_HDRLEN, name);
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(a->nla_len);
	if (send(sk, &r, r.nh.nlmsg_len, 0) < 0 || (n = recv(sk, buf, sizeof(buf), 0)) < 0)
		return -1;
	struct nlmsghdr *nh = (void *)buf;

	if (!NLMSG_OK(nh, (size_t)n) || nh->nlmsg_type == NLMSG_ERROR)
		return -1;
	for (char *p = (char *)NLMSG_DATA(nh) + GENL_HDRLEN; p + NLA_HDRLEN <= buf + nh->nlmsg_len;) {
		struct nlattr *x = (void *)p;

		if (x->nla_len < NLA_HDRLEN)
			break;
		if (x->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)((char *)x + NLA_HDRLEN);
		p += NLA_ALIGN(x->nla_len);
	}
	return -1;
}

static unsigned long long nla_u(const struct nlattr *a)
{
	const char *d = (const char *)a + NLA_HDRLEN;

	if (a->nla_len - NLA_HDRLEN == 4)
		return *(uint32_t *)d;
	return *(uint64_t *)d;
}

/* Walks the attributes of one dump message; for STATS the interesting
 * ones are inside the INFO nest.
 */
static void pp_msg(const char *p, const char *end, int ifindex, bool stats, struct pp_info *pi)
{
	int ifi = 0;
	bool detached = false;
	unsigned long long inflight = 0, alloc = 0, slow = 0, rec = 0, cached = 0;

	for (; p + NLA_HDRLEN <= end;) {
		const struct nlattr *a = (const void *)p;
		int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if (stats && type == NETDEV_A_PP_STATS_INFO) {
			for (const char *q = p + NLA_HDRLEN; q + NLA_HDRLEN <= p + a->nla_len;) {
				const struct nlattr *b = (const void *)q;

				if (b->nla_len < NLA_HDRLEN)
					break;
				if ((b->nla_type & NLA_TYPE_MASK) == NETDEV_A_PAGE_POOL_IFINDEX)
					ifi = nla_u(b);
				q += NLA_ALIGN(b->nla_len);
			}
		} else if (stats) {
			if (type == NETDEV_A_PP_STATS_ALLOC_FAST || type == NETDEV_A_PP_STATS_ALLOC_SLOW)
				alloc += nla_u(a);
			if (type == NETDEV_A_PP_STATS_ALLOC_SLOW)
				slow += nla_u(a);
			else if (type == NETDEV_A_PP_STATS_RECYCLE_CACHED ||
				 type == NETDEV_A_PP_STATS_RECYCLE_RING)
				rec += nla_u(a);
			if (type == NETDEV_A_PP_STATS_RECYCLE_CACHED)
				cached += nla_u(a);
		} else if (type == NETDEV_A_PAGE_POOL_IFINDEX) {
			ifi = nla_u(a);
		} else if (type == NETDEV_A_PAGE_POOL_INFLIGHT) {
			inflight = nla_u(a);
		} else if (type == NETDEV_A_PAGE_POOL_DETACH_TIME) {
			detached = true;
		}
		p += NLA_ALIGN(a->nla_len);
	}
	if (ifindex && ifi != ifindex)
		return;
	pi->npools++;
	pi->detached += detached;
	pi->inflight += inflight;
	pi->alloc += alloc;
	pi->slow += slow;
	pi->recycled += rec;
	pi->cached += cached;
}

/* Dumps cmd of the netdev family in namespace ns (NULL: this one), with
 * the request attributes attrs (len bytes, already laid out), and hands
 * each reply message's attributes to msg(). 0; -errno when the kernel
 * answered with an error, in an NLMSG_ERROR or the dump's NLMSG_DONE
 * (-EOPNOTSUPP: the device does not report what was asked); -1 without the
 * family or on a socket error.
 */
static int netdev_dump(const char *ns, int cmd, const void *attrs, size_t len,
		       void (*msg)(const char *p, const char *end, void *ctx), void *ctx)
{
	int saved = ns ? netns_enter(ns) : -1, sk, fam, done = 0, ret = -1;
	struct nlreq r = { .nh = { .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
				   .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + len },
			   .gh = { .cmd = cmd, .version = 1 } };
	static char buf[65536];

	if (ns && saved < 0)
		return -1;
	if (len > sizeof(r.attrs))
		return -1;
	if (len)	/* memcpy() from NULL is undefined even for 0 bytes */
		memcpy(r.attrs, attrs, len);
	sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	netns_leave(saved);
	if (sk < 0)
		return -1;
	fam = genl_family(sk, "netdev");
	if (fam < 0)
		goto out;
	r.nh.nlmsg_type = fam;
	if (send(sk, &r, r.nh.nlmsg_len, 0) < 0)
		goto out;
	while (!done) {
		ssize_t n = recv(sk, buf, sizeof(buf), 0);
		struct nlmsghdr *nh = (void *)buf;

		if (n <= 0)
			goto out;
		for (; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE) {
				/* a dump reports its error here, not in an
				 * NLMSG_ERROR
				 */
				if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) &&
				    *(int *)NLMSG_DATA(nh) < 0) {
					ret = *(int *)NLMSG_DATA(nh);
					goto out;
				}
				done = 1;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				if (e->error) {
					ret = e->error;
					goto out;
				}
				continue;
			}
			msg((char *)NLMSG_DATA(nh) + GENL_HDRLEN, (char *)nh + nh->nlmsg_len, ctx);
		}
	}
	ret = 0;
out:
	close(sk);
	return ret;
}

struct pp_ctx {
	int ifindex;
	bool stats;
	struct pp_info *pi;
};

static void pp_msg_cb(const char *p, const char *end, void *ctx)
{
	struct pp_ctx *c = ctx;

	pp_msg(p, end, c->ifindex, c->stats, c->pi);
}

int pp_dump(const char *ns, int ifindex, bool stats, struct pp_info *pi)
{
	struct pp_ctx c = { ifindex, stats, pi };

	memset(pi, 0, sizeof(*pi));
	return netdev_dump(ns, stats ? NETDEV_CMD_PAGE_POOL_STATS_GET : NETDEV_CMD_PAGE_POOL_GET,
			   NULL, 0, pp_msg_cb, &c) ? -1 : 0;
}

/* After a tap is gone, its pools go at once when all their pages are back,
 * or within the page pool's release retries (a second apart) otherwise.
 */
void assert_pools_gone(const char *ns, const char *what)
{
	struct pp_info pools = {};

	for (int i = 0; i < 50; i++) {
		if (!pp_dump(ns, 0, false, &pools) && !pools.npools)
			break;
		usleep(200 * 1000);
	}
	ASSERT_EQ(pools.npools, 0, what);
	ASSERT_EQ(pools.inflight, 0, "pages in flight");
}

/* One message of a qstats dump: one queue of one direction */
static void qstats_msg(const char *p, const char *end, void *ctx)
{
	struct qstats *q = ctx;
	unsigned long long v[NETDEV_A_QSTATS_TX_WAKE + 1] = {};
	bool have[NETDEV_A_QSTATS_TX_WAKE + 1] = {};
	struct qstats_queue *s;

	for (; p + NLA_HDRLEN <= end;) {
		const struct nlattr *a = (const void *)p;
		int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if (type <= NETDEV_A_QSTATS_TX_WAKE) {
			v[type] = nla_u(a);
			have[type] = true;
		}
		p += NLA_ALIGN(a->nla_len);
	}
	if (!have[NETDEV_A_QSTATS_QUEUE_ID] || v[NETDEV_A_QSTATS_QUEUE_ID] >= QSTATS_MAX_QUEUES)
		return;
	if (v[NETDEV_A_QSTATS_QUEUE_TYPE] == NETDEV_QUEUE_TYPE_RX) {
		s = &q->rx[v[NETDEV_A_QSTATS_QUEUE_ID]];
		s->packets = have[NETDEV_A_QSTATS_RX_PACKETS] ? (long long)v[NETDEV_A_QSTATS_RX_PACKETS] : -1;
		s->bytes = have[NETDEV_A_QSTATS_RX_BYTES] ? (long long)v[NETDEV_A_QSTATS_RX_BYTES] : -1;
		s->alloc_fail = have[NETDEV_A_QSTATS_RX_ALLOC_FAIL] ?
				(long long)v[NETDEV_A_QSTATS_RX_ALLOC_FAIL] : -1;
		if (v[NETDEV_A_QSTATS_QUEUE_ID] + 1 > (unsigned int)q->nrx)
			q->nrx = v[NETDEV_A_QSTATS_QUEUE_ID] + 1;
	} else {
		s = &q->tx[v[NETDEV_A_QSTATS_QUEUE_ID]];
		s->packets = have[NETDEV_A_QSTATS_TX_PACKETS] ? (long long)v[NETDEV_A_QSTATS_TX_PACKETS] : -1;
		s->bytes = have[NETDEV_A_QSTATS_TX_BYTES] ? (long long)v[NETDEV_A_QSTATS_TX_BYTES] : -1;
		s->stop = have[NETDEV_A_QSTATS_TX_STOP] ? (long long)v[NETDEV_A_QSTATS_TX_STOP] : -1;
		s->wake = have[NETDEV_A_QSTATS_TX_WAKE] ? (long long)v[NETDEV_A_QSTATS_TX_WAKE] : -1;
		if (v[NETDEV_A_QSTATS_QUEUE_ID] + 1 > (unsigned int)q->ntx)
			q->ntx = v[NETDEV_A_QSTATS_QUEUE_ID] + 1;
	}
}

int qstats_dump(int ifindex, struct qstats *q)
{
	struct {
		struct nlattr ifa;
		uint32_t ifindex;
		struct nlattr sa;
		uint32_t scope;
	} attrs = {
		{ .nla_len = NLA_HDRLEN + 4, .nla_type = NETDEV_A_QSTATS_IFINDEX }, (uint32_t)ifindex,
		{ .nla_len = NLA_HDRLEN + 4, .nla_type = NETDEV_A_QSTATS_SCOPE }, NETDEV_QSTATS_SCOPE_QUEUE,
	};

	memset(q, 0, sizeof(*q));
	return netdev_dump(NULL, NETDEV_CMD_QSTATS_GET, &attrs, sizeof(attrs), qstats_msg, q);
}
