// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/sockios.h>

#include "netns.h"

bool netns_verbose;

#define MAX_TRACKED 64
static char tracked[MAX_TRACKED][NETNS_NAME_MAX];

static int vsh(char *out, size_t len, const char *fmt, va_list ap)
{
	char cmd[1024];
	FILE *f;
	size_t n = 0;
	int st;

	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	if (netns_verbose)
		fprintf(stderr, "+ %s\n", cmd);
	if (!out) {
		char quiet[1100];

		/* Braces, so that the redirection is the whole command's: put
		 * after the last simple command, it would be that command's
		 * last, and "echo 1 > file >/dev/null" writes nothing to file.
		 */
		snprintf(quiet, sizeof(quiet), netns_verbose ? "%s" : "{ %s\n} >/dev/null 2>&1", cmd);
		st = system(quiet);
	} else {
		f = popen(cmd, "r");
		if (!f)
			return -1;
		while (n + 1 < len && !feof(f)) {
			size_t r = fread(out + n, 1, len - 1 - n, f);

			if (!r)
				break;
			n += r;
		}
		out[n] = '\0';
		st = pclose(f);
	}
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int sh(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsh(NULL, 0, fmt, ap);
	va_end(ap);
	return ret;
}

int sh_out(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsh(out, len, fmt, ap);
	va_end(ap);
	return ret;
}

static void track(const char *name, bool add)
{
	for (int i = 0; i < MAX_TRACKED; i++) {
		if (add && !tracked[i][0]) {
			snprintf(tracked[i], NETNS_NAME_MAX, "%s", name);
			return;
		}
		if (!add && !strcmp(tracked[i], name)) {
			tracked[i][0] = '\0';
			return;
		}
	}
}

int netns_add(const char *tag, char name[NETNS_NAME_MAX])
{
	snprintf(name, NETNS_NAME_MAX, "xdplab-%d-%s", getpid(), tag);
	if (sh("ip netns add %s", name)) {
		fprintf(stderr, "netns: cannot create namespace %s (hint: needs root and iproute2)\n",
			name);
		return -1;
	}
	track(name, true);
	return 0;
}

void netns_del(const char *name)
{
	if (!name || !name[0])
		return;
	sh("ip netns del %s", name);
	track(name, false);
}

void netns_cleanup_all(void)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i][0])
			netns_del(tracked[i]);
}

void netns_reap_stale(void)
{
	DIR *d = opendir("/run/netns");
	struct dirent *e;
	int pid;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "xdplab-%d-", &pid) != 1 || pid == getpid())
			continue;
		if (kill(pid, 0) && errno == ESRCH)
			sh("ip netns del %s", e->d_name);
	}
	closedir(d);
}

int netns_enter(const char *name)
{
	char path[128];
	int saved, fd;

	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0)
		return -1;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		if (fd >= 0)
			close(fd);
		close(saved);
		return -1;
	}
	close(fd);
	return saved;
}

void netns_leave(int saved)
{
	if (saved < 0)
		return;
	if (setns(saved, CLONE_NEWNET))
		perror("netns: setns back");
	close(saved);
}

socklen_t netns_sockaddr(const char *ip, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (void *)ss;
	struct sockaddr_in6 *s6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return sizeof(*s4);
	}
	inet_pton(AF_INET6, ip, &s6->sin6_addr);
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	return sizeof(*s6);
}

int netns_ifindex(const char *ns, const char *ifname)
{
	int saved = -1, idx;

	if (ns && (saved = netns_enter(ns)) < 0)
		return 0;
	idx = if_nametoindex(ifname);
	netns_leave(saved);
	return idx;
}

static int read_mac(const char *ns, const char *ifname, unsigned char mac[6])
{
	struct ifreq ifr = {};
	int saved, s, err = -1;

	saved = netns_enter(ns);
	if (saved < 0)
		return -1;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (s >= 0 && !ioctl(s, SIOCGIFHWADDR, &ifr)) {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		err = 0;
	}
	if (s >= 0)
		close(s);
	netns_leave(saved);
	return err;
}

int veth_pair_join(struct veth_pair *vp, const char *ns0, const char *if0,
		   const char *ns1, const char *if1, int id, int mtu)
{
	return veth_pair_join_mq(vp, ns0, if0, ns1, if1, id, mtu, 0);
}

int veth_pair_join_mq(struct veth_pair *vp, const char *ns0, const char *if0,
		      const char *ns1, const char *if1, int id, int mtu, int queues)
{
	char nq[64] = "";
	int i;

	snprintf(vp->ns[0], NETNS_NAME_MAX, "%s", ns0);
	snprintf(vp->ns[1], NETNS_NAME_MAX, "%s", ns1);
	snprintf(vp->ifname[0], IF_NAMESIZE, "%s", if0);
	snprintf(vp->ifname[1], IF_NAMESIZE, "%s", if1);
	for (i = 0; i < 2; i++) {
		snprintf(vp->ip4[i], sizeof(vp->ip4[i]), "198.18.%d.%d", id, i + 1);
		snprintf(vp->ip6[i], sizeof(vp->ip6[i]), "fd00:198:18:%x::%d", id, i + 1);
	}
	if (queues > 0)
		snprintf(nq, sizeof(nq), " numrxqueues %d numtxqueues %d", queues, queues);
	if (sh("ip -n %s link add %s%s type veth peer name %s%s netns %s",
	       vp->ns[0], vp->ifname[0], nq, vp->ifname[1], nq, vp->ns[1]))
		return -1;
	for (i = 0; i < 2; i++) {
		if ((mtu && sh("ip -n %s link set %s mtu %d", vp->ns[i], vp->ifname[i], mtu)) ||
		    sh("ip -n %s addr add %s/24 dev %s", vp->ns[i], vp->ip4[i], vp->ifname[i]) ||
		    sh("ip -n %s addr add %s/64 dev %s nodad", vp->ns[i], vp->ip6[i],
		       vp->ifname[i]) ||
		    sh("ip -n %s link set lo up", vp->ns[i]) ||
		    sh("ip -n %s link set %s up", vp->ns[i], vp->ifname[i]))
			return -1;
		vp->ifindex[i] = netns_ifindex(vp->ns[i], vp->ifname[i]);
		if (!vp->ifindex[i] || read_mac(vp->ns[i], vp->ifname[i], vp->mac[i]))
			return -1;
	}
	return 0;
}

int veth_pair_neigh_permanent(struct veth_pair *vp)
{
	for (int i = 0; i < 2; i++) {
		const unsigned char *m = vp->mac[!i];
		char mac[18];

		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
			 m[4], m[5]);
		if (sh("ip -n %s neigh replace %s lladdr %s dev %s nud permanent", vp->ns[i],
		       vp->ip4[!i], mac, vp->ifname[i]) ||
		    sh("ip -n %s neigh replace %s lladdr %s dev %s nud permanent", vp->ns[i],
		       vp->ip6[!i], mac, vp->ifname[i]))
			return -1;
	}
	return 0;
}

int veth_pair_add(struct veth_pair *vp, const char *tag, int id, int mtu)
{
	return veth_pair_add_mq(vp, tag, id, mtu, 0);
}

int veth_pair_add_mq(struct veth_pair *vp, const char *tag, int id, int mtu, int queues)
{
	char tags[2][24], names[2][NETNS_NAME_MAX] = {};

	memset(vp, 0, sizeof(*vp));
	for (int i = 0; i < 2; i++) {
		snprintf(tags[i], sizeof(tags[i]), "%s%c", tag, 'a' + i);
		if (netns_add(tags[i], names[i]))
			goto fail;
	}
	if (veth_pair_join_mq(vp, names[0], "veth0", names[1], "veth1", id, mtu, queues))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "netns: cannot set up veth pair %s (run with -v to see the commands)\n",
		tag);
	netns_del(names[0]);
	netns_del(names[1]);
	memset(vp, 0, sizeof(*vp));
	return -1;
}

void veth_pair_del(struct veth_pair *vp)
{
	/* Deleting a namespace deletes the veth end in it, and with it the peer. */
	netns_del(vp->ns[0]);
	netns_del(vp->ns[1]);
	memset(vp->ns, 0, sizeof(vp->ns));
}

int netns_socket(const char *ns, int family, int type)
{
	int saved = netns_enter(ns), fd;

	if (saved < 0)
		return -1;
	fd = socket(family, type | SOCK_CLOEXEC, 0);
	netns_leave(saved);
	return fd;
}
