// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The one-minute tour: two throw-away network namespaces joined by a veth
 * pair, `xdplab pass` on one end, the live-frames generator sending into
 * the other, per-second stats, then everything removed again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>

#include "core.h"
#include "netns.h"

static const struct xdplab_cmd_desc desc = {
	.name = "demo",
	.args_doc = "",
	.nargs = 0,
	.no_attach = true,
	.doc = "Make two network namespaces joined by a veth pair, attach xdp_pass to\n"
	       "one end, send frames into the other with the traffic generator, show\n"
	       "the stats, and remove it all again.\v"
	       "Examples:\n"
	       "  xdplab demo            five seconds\n"
	       "  xdplab demo -d 10 -v   longer, showing each command\n",
};

/* Runs `xdplab ARGS...` inside namespace ns; returns the child's pid. */
static pid_t spawn_in(const char *ns, char *const args[])
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n < 0)
		return -1;
	self[n] = '\0';
	pid = fork();
	if (pid)
		return pid;
	if (netns_enter(ns) < 0) {
		fprintf(stderr, "xdplab demo: cannot enter %s\n", ns);
		_exit(1);
	}
	execv(self, args);
	_exit(127);
}

/* Some kernels refuse BPF_F_TEST_XDP_LIVE_FRAMES (EPERM): then 64-byte
 * frames from a UDP socket in ns for secs seconds, to the discard port.
 */
static int udp_send_for(const struct veth_pair *vp, double secs)
{
	static const char payload[64 - 14 - 20 - 8];
	int fd = netns_socket(vp->ns[0], AF_INET, SOCK_DGRAM);
	struct sockaddr_storage ss;
	socklen_t sl = netns_sockaddr(vp->ip4[1], 9, &ss);
	unsigned long long sent = 0;
	double end;

	if (fd < 0)
		return -1;
	end = xdplab_now() + secs;
	while (xdplab_now() < end && !xdplab_exiting)
		sent += sendto(fd, payload, sizeof(payload), 0, (void *)&ss, sl) > 0;
	close(fd);
	fprintf(stderr, "xdplab demo: %llu datagrams sent\n", sent);
	return sent ? 0 : -1;
}

static int wait_attached(const char *ns, const char *ifname, pid_t child)
{
	double end = xdplab_now() + 10;
	int saved = netns_enter(ns), ret = -1;
	__u32 id = 0;

	if (saved < 0)
		return -1;
	while (xdplab_now() < end && !xdplab_exiting) {
		if (!bpf_xdp_query_id(if_nametoindex(ifname), 0, &id) && id) {
			ret = 0;
			break;
		}
		if (waitpid(child, NULL, WNOHANG) == child)
			break;	/* it gave up; it said why */
		usleep(20000);
	}
	netns_leave(saved);
	return ret;
}

int cmd_demo(int argc, char **argv)
{
	struct veth_pair vp;
	struct xdplab_opts o;
	char gendur[32], mac[32];
	pid_t rx = -1, tx = -1;
	int st, ret = 1;

	xdplab_opts_init(&o);
	o.duration = 5;
	xdplab_parse_cmd(&desc, argc, argv, &o);
	netns_verbose = xdplab_verbose;
	if (xdplab_check_env(&o))
		return 1;

	fprintf(stderr, "xdplab demo: making namespaces and a veth pair\n");
	netns_reap_stale();
	if (veth_pair_add(&vp, "demo", 0, 0))
		return 1;
	fprintf(stderr, "xdplab demo: %s/%s (%s) <-> %s/%s (%s)\n", vp.ns[0], vp.ifname[0],
		vp.ip4[0], vp.ns[1], vp.ifname[1], vp.ip4[1]);

	/* xdp_pass runs until the generator is done, then gets a Ctrl-C. */
	rx = spawn_in(vp.ns[1], (char *const[]){ "xdplab", "pass", vp.ifname[1],
						 o.json ? "--json" : "-i1", NULL });
	if (rx < 0 || wait_attached(vp.ns[1], vp.ifname[1], rx)) {
		xdplab_err(NULL, "demo: xdp_pass did not attach to %s", vp.ifname[1]);
		goto out;
	}
	snprintf(gendur, sizeof(gendur), "%g", o.duration);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", vp.mac[1][0], vp.mac[1][1],
		 vp.mac[1][2], vp.mac[1][3], vp.mac[1][4], vp.mac[1][5]);
	fprintf(stderr, "xdplab demo: trafficgen sends 64-byte UDP frames into %s for %s s\n",
		vp.ifname[0], gendur);
	tx = spawn_in(vp.ns[0], (char *const[]){ "xdplab", "trafficgen", vp.ifname[0], "-d",
						 gendur, "--dst-mac", mac, "-q", NULL });
	if (tx < 0)
		goto out;
	if (waitpid(tx, &st, 0) != tx || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tx = -1;
		fprintf(stderr, "xdplab demo: no live frames here; 64-byte UDP datagrams from a socket in %s instead, for %s s\n",
			vp.ns[0], gendur);
		if (udp_send_for(&vp, o.duration))
			goto out;
	}
	if (!kill(rx, SIGINT) && waitpid(rx, &st, 0) == rx && WIFEXITED(st) && !WEXITSTATUS(st))
		ret = 0;
	tx = rx = -1;
out:
	if (tx > 0)
		waitpid(tx, NULL, 0);
	if (rx > 0) {
		kill(rx, SIGINT);
		waitpid(rx, NULL, 0);
	}
	veth_pair_del(&vp);
	fprintf(stderr, "xdplab demo: namespaces removed; %s\n", ret ? "FAILED" : "done");
	return ret;
}
