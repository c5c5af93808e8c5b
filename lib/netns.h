/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Throw-away network namespaces and veth pairs for tests, benchmarks and
 * the demo. Every namespace made here is named "xdplab-<pid>-<tag>" and is
 * remembered, so netns_cleanup_all() (run at exit and on SIGINT/SIGTERM)
 * removes whatever a failed test left, and netns_reap_stale() removes what
 * a killed process left.
 */
#ifndef XDPLAB_NETNS_H
#define XDPLAB_NETNS_H

#include <stdbool.h>
#include <net/if.h>
#include <sys/socket.h>

#define NETNS_NAME_MAX 48

/* Two namespaces joined by one veth pair:
 *   ns[0]: ifname[0] 198.18.N.1/24 fd00:198:18:N::1/64
 *   ns[1]: ifname[1] 198.18.N.2/24 fd00:198:18:N::2/64
 * 198.18.0.0/15 is the range set aside for benchmarking (RFC 2544).
 */
struct veth_pair {
	char ns[2][NETNS_NAME_MAX];
	char ifname[2][IF_NAMESIZE];
	int ifindex[2];
	char ip4[2][16];
	char ip6[2][48];
	unsigned char mac[2][6];
};

/* Runs a shell command line; returns its exit status (or -1). Output goes
 * to /dev/null unless netns_verbose is set.
 */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, but captures up to len-1 bytes of stdout into out. */
int sh_out(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
extern bool netns_verbose;

/* Makes "xdplab-<pid>-<tag>" and writes its full name to name. */
int netns_add(const char *tag, char name[NETNS_NAME_MAX]);
void netns_del(const char *name);
void netns_cleanup_all(void);
/* Removes xdplab-<pid>-* namespaces whose process is gone. */
void netns_reap_stale(void);

/* Moves the calling thread into a namespace; returns a handle to go back
 * with netns_leave(), or -1. Sockets made inside stay in that namespace.
 */
int netns_enter(const char *name);
void netns_leave(int saved);

/* A veth pair across two new namespaces, addressed, up, and with IPv6 DAD
 * off so addresses work at once. id (0..255) picks the subnet so several
 * pairs can coexist. mtu 0 leaves the default.
 */
int veth_pair_add(struct veth_pair *vp, const char *tag, int id, int mtu);
void veth_pair_del(struct veth_pair *vp);
/* A veth pair between two namespaces that exist already (the caller owns
 * and deletes them); for topologies of more than two hosts.
 */
int veth_pair_join(struct veth_pair *vp, const char *ns0, const char *if0,
		   const char *ns1, const char *if1, int id, int mtu);

/* The same with `queues` RX and TX queues on each end (0: the default,
 * one), so that `ethtool -L` can change the channels in use later.
 */
int veth_pair_add_mq(struct veth_pair *vp, const char *tag, int id, int mtu, int queues);
int veth_pair_join_mq(struct veth_pair *vp, const char *ns0, const char *if0,
		      const char *ns1, const char *if1, int id, int mtu, int queues);

/* Each end learns the other's MAC as a permanent neighbour (IPv4 and IPv6),
 * for a test that sends a burst before anything else: until ARP answers,
 * the neighbour table queues at most 212,992 bytes of truesize (twelve
 * 8000-byte datagrams) and drops the rest, so on a busy machine a burst
 * loses frames before they reach the wire.
 */
int veth_pair_neigh_permanent(struct veth_pair *vp);

/* ip (IPv4, else IPv6) and port as a socket address; returns its length. */
socklen_t netns_sockaddr(const char *ip, int port, struct sockaddr_storage *ss);

/* A socket(family, type | SOCK_CLOEXEC) made inside ns, or -1. */
int netns_socket(const char *ns, int family, int type);

/* ifindex of ifname inside namespace ns (NULL: the current one). */
int netns_ifindex(const char *ns, const char *ifname);

#endif
