// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Live tests: real traffic through veth pairs and a tap in throw-away
 * namespaces, each program attached by the xdplab CLI, with assertions on
 * what arrives (count and content) and on the CLI's own counters.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>

#include "cli.h"
#include "netns.h"
#include "prog_test_run.h"
#include "pkt.h"
#include "test.h"

#define OUT_LEN 65536
static char out[OUT_LEN];

/* A socket of `type` made inside ns (it stays there). */
static int sock_in(const char *ns, int family, int type, int proto)
{
	int saved = netns_enter(ns), fd;

	if (saved < 0)
		return -1;
	fd = socket(family, type | SOCK_CLOEXEC, proto);
	netns_leave(saved);
	return fd;
}

static int udp_listen(const char *ns, const char *ip, int port)
{
	struct sockaddr_storage ss;
	socklen_t sl = netns_sockaddr(ip, port, &ss);
	int fd = sock_in(ns, ss.ss_family, SOCK_DGRAM, 0);
	int big = 4 << 20;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (bind(fd, (void *)&ss, sl)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends n datagrams of size bytes (payload pattern) from ns to ip:port. */
static int udp_send(const char *ns, const char *ip, int port, int n, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t sl = netns_sockaddr(ip, port, &ss);
	int fd = sock_in(ns, ss.ss_family, SOCK_DGRAM, 0), sent = 0;
	static uint8_t buf[65536];

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < size; i++)
		buf[i] = pkt_pattern(i);
	for (int i = 0; i < n; i++)
		sent += sendto(fd, buf, size, 0, (void *)&ss, sl) == (ssize_t)size;
	close(fd);
	return sent;
}

/* Receives datagrams until n arrived or timeout; counts those whose
 * content is the pattern of `size` bytes.
 */
static int udp_recv(int fd, int n, size_t size, double timeout)
{
	static uint8_t buf[65536];
	double end = now_secs() + timeout;
	int good = 0;

	while (good < n && now_secs() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, 50) <= 0)
			continue;
		r = recv(fd, buf, sizeof(buf), 0);
		good += r == (ssize_t)size && pkt_pattern_ok(buf, size, 0);
	}
	return good;
}

static int start_and_wait(struct cli_bg *bg, const char *ns, const char *ifname,
			  const char *args)
{
	if (!ASSERT_OK(cli_start(bg, ns, args), "start xdplab"))
		return -1;
	if (!ASSERT_OK(cli_wait_attached(bg, ns, ifname, 10), "program attached")) {
		cli_stop(bg, SIGKILL, 5, out, sizeof(out));
		fprintf(stdout, "%s", out);
		return -1;
	}
	return 0;
}

/* Ctrl-C, clean exit, nothing left attached; the output is in `out`. */
static bool stop_clean(struct cli_bg *bg, const char *ns, const char *ifname)
{
	int st = cli_stop(bg, SIGINT, 10, out, sizeof(out));

	if (!ASSERT_EQ(st, 0, "xdplab exit status"))
		fprintf(stdout, "%s", out);
	return ASSERT_EQ(xdp_prog_id(ns, ifname), 0, "detached") && st == 0;
}

static void tcp_stream(const struct veth_pair *vp, size_t total)
{
	struct sockaddr_storage ss;
	socklen_t sl = netns_sockaddr(vp->ip4[1], 5100, &ss);
	int ls = sock_in(vp->ns[1], AF_INET, SOCK_STREAM, 0), cs = -1, as = -1, one = 1;
	static uint8_t buf[65536];
	size_t sent = 0, got = 0, bad = 0;
	double end = now_secs() + 20;

	if (!ASSERT_GE(ls, 0, "listen socket"))
		return;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!ASSERT_OK(bind(ls, (void *)&ss, sl), "bind") || !ASSERT_OK(listen(ls, 1), "listen"))
		goto out;
	cs = sock_in(vp->ns[0], AF_INET, SOCK_STREAM, 0);
	if (!ASSERT_OK(connect(cs, (void *)&ss, sl), "connect"))
		goto out;
	as = accept(ls, NULL, NULL);
	if (!ASSERT_GE(as, 0, "accept"))
		goto out;
	fcntl(cs, F_SETFL, O_NONBLOCK);
	fcntl(as, F_SETFL, O_NONBLOCK);
	/* One thread drives both ends; bytes carry their offset's pattern. */
	while (got < total && now_secs() < end) {
		struct pollfd p[2] = { { as, POLLIN, 0 }, { cs, sent < total ? POLLOUT : 0, 0 } };
		ssize_t r;

		poll(p, 2, 100);
		if (p[1].revents & POLLOUT) {
			size_t n = total - sent < sizeof(buf) ? total - sent : sizeof(buf);

			for (size_t i = 0; i < n; i++)
				buf[i] = pkt_pattern(sent + i);
			r = send(cs, buf, n, 0);
			if (r > 0)
				sent += r;
			if (sent == total)
				shutdown(cs, SHUT_WR);
		}
		if (p[0].revents & POLLIN) {
			r = recv(as, buf, sizeof(buf), 0);
			if (r > 0) {
				bad += !pkt_pattern_ok(buf, r, got);
				got += r;
			}
		}
	}
	ASSERT_EQ(got, total, "bytes delivered");
	ASSERT_EQ(bad, 0, "chunks with wrong content");
out:
	close(ls);
	if (cs >= 0)
		close(cs);
	if (as >= 0)
		close(as);
}

TEST(live_veth)
{
	struct veth_pair vp;
	struct cli_bg bg;
	char args[256];
	int fd;

	if (!ASSERT_OK(veth_pair_add(&vp, "lv", 10, 0), "veth pair"))
		return;

	if (test__start_subtest("udp_pass")) {
		fd = udp_listen(vp.ns[1], vp.ip4[1], 5001);
		snprintf(args, sizeof(args), "pass %s --json -q", vp.ifname[1]);
		if (ASSERT_GE(fd, 0, "listen") && !start_and_wait(&bg, vp.ns[1], vp.ifname[1], args)) {
			ASSERT_EQ(udp_send(vp.ns[0], vp.ip4[1], 5001, 100, 512), 100, "sent");
			ASSERT_EQ(udp_recv(fd, 100, 512, 5), 100, "received intact");
			if (stop_clean(&bg, vp.ns[1], vp.ifname[1]))
				ASSERT_GE(json_num(out, "\"summary\"", "pass"), 100, "pass counted");
		}
		close(fd);
	}
	if (test__start_subtest("udp6_drop_port")) {
		int ctl = udp_listen(vp.ns[1], vp.ip6[1], 5003);

		fd = udp_listen(vp.ns[1], vp.ip6[1], 5002);
		snprintf(args, sizeof(args), "drop %s --proto udp --port 5002 --json -q",
			 vp.ifname[1]);
		if (ASSERT_GE(fd, 0, "listen") &&
		    !start_and_wait(&bg, vp.ns[1], vp.ifname[1], args)) {
			ASSERT_EQ(udp_send(vp.ns[0], vp.ip6[1], 5002, 50, 100), 50, "sent to 5002");
			/* Same path, in order: once the control datagram is in, the
			 * dropped ones would have been too.
			 */
			ASSERT_EQ(udp_send(vp.ns[0], vp.ip6[1], 5003, 1, 100), 1, "sent control");
			ASSERT_EQ(udp_recv(ctl, 1, 100, 5), 1, "control received");
			ASSERT_EQ(udp_recv(fd, 1, 100, 0.05), 0, "nothing to 5002 arrived");
			if (stop_clean(&bg, vp.ns[1], vp.ifname[1])) {
				ASSERT_EQ(json_num(out, "\"summary\"", "drop"), 50, "drop counted");
				ASSERT_STRSTR(out, "{\"event\":\"attached\",", "attach event");
				ASSERT_STRSTR(out, "\"frags\":true,\"filter\":{\"proto\":\"udp\","
					      "\"port\":5002,\"ip\":null},", "the summary names the filter");
			}
		}
		close(fd);
		close(ctl);
	}
	if (test__start_subtest("ipv6_ext_chain_drop")) {
		/* RFC 8200's six extension headers in its recommended order, then
		 * UDP: written raw into veth0, so the chain reaches veth1's
		 * program as built.
		 */
		static const uint8_t chain[] = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
						 IPPROTO_FRAGMENT, IPPROTO_AH, IPPROTO_DSTOPTS };
		int ps = sock_in(vp.ns[0], AF_PACKET, SOCK_RAW, 0);
		struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = vp.ifindex[0],
					   .sll_halen = 6 };
		struct pkt_spec spec = { .ipver = 6, .l4 = PKT_UDP, .sport = 1000, .len = 200,
					 .n_ext = sizeof(chain) };
		uint8_t f[256];
		int sent9 = 0, sent10 = 0;

		memcpy(spec.ext, chain, sizeof(chain));
		memcpy(spec.dst_mac, vp.mac[1], 6);
		memcpy(spec.src_mac, vp.mac[0], 6);
		memcpy(sll.sll_addr, vp.mac[1], 6);
		pkt_parse_ip(vp.ip6[0], &spec.src);
		pkt_parse_ip(vp.ip6[1], &spec.dst);
		snprintf(args, sizeof(args), "drop %s --proto udp --port 9 --json -q", vp.ifname[1]);
		if (ASSERT_GE(ps, 0, "packet socket") &&
		    !start_and_wait(&bg, vp.ns[1], vp.ifname[1], args)) {
			for (int i = 0; i < 10; i++) {
				spec.dport = 9;
				pkt_build(f, sizeof(f), &spec);
				sent9 += sendto(ps, f, spec.len, 0, (void *)&sll, sizeof(sll)) == 200;
				spec.dport = 10;
				pkt_build(f, sizeof(f), &spec);
				sent10 += sendto(ps, f, spec.len, 0, (void *)&sll, sizeof(sll)) == 200;
			}
			ASSERT_EQ(sent9, 10, "sent to udp/9");
			ASSERT_EQ(sent10, 10, "sent to udp/10");
			if (stop_clean(&bg, vp.ns[1], vp.ifname[1])) {
				ASSERT_EQ(json_num(out, "\"summary\"", "drop"), 10,
					  "every udp/9 frame dropped");
				ASSERT_GE(json_num(out, "\"summary\"", "pass"), 10,
					  "udp/10 frames passed");
				ASSERT_EQ(json_num(out, "\"summary\"", "malformed"), 0,
					  "none malformed");
			}
		}
		if (ps >= 0)
			close(ps);
	}
	if (test__start_subtest("icmp_ping")) {
		snprintf(args, sizeof(args), "pass %s --json -q", vp.ifname[1]);
		if (!start_and_wait(&bg, vp.ns[1], vp.ifname[1], args)) {
			ASSERT_OK(sh("ip netns exec %s ping -c 3 -i 0.2 -W 2 %s", vp.ns[0], vp.ip4[1]),
				  "ping through xdp_pass");
			if (stop_clean(&bg, vp.ns[1], vp.ifname[1]))
				ASSERT_GE(json_num(out, "\"summary\"", "pass"), 3, "pass counted");
		}
	}
	if (test__start_subtest("tcp_stream")) {
		snprintf(args, sizeof(args), "pass %s --json -q", vp.ifname[1]);
		if (!start_and_wait(&bg, vp.ns[1], vp.ifname[1], args)) {
			tcp_stream(&vp, 8 << 20);
			if (stop_clean(&bg, vp.ns[1], vp.ifname[1]))
				ASSERT_GE(json_num(out, "\"summary\"", "pass"), 100, "pass counted");
		}
	}
	if (test__start_subtest("tx_reflect")) {
		int ps = sock_in(vp.ns[0], AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
		struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
					   .sll_ifindex = vp.ifindex[0] };
		bool seen = false;
		double end;

		struct cli_bg rx;

		/* veth0 takes XDP_TX'd frames from its peer only with NAPI on,
		 * which an XDP program of its own guarantees.
		 */
		snprintf(args, sizeof(args), "pass %s -q", vp.ifname[0]);
		if (start_and_wait(&rx, vp.ns[0], vp.ifname[0], args))
			goto tx_out;
		snprintf(args, sizeof(args), "tx %s --proto udp --port 7 --json -q", vp.ifname[1]);
		if (ASSERT_GE(ps, 0, "packet socket") &&
		    ASSERT_OK(bind(ps, (void *)&sll, sizeof(sll)), "bind") &&
		    !start_and_wait(&bg, vp.ns[1], vp.ifname[1], args)) {
			ASSERT_EQ(udp_send(vp.ns[0], vp.ip4[1], 7, 1, 64), 1, "sent");
			for (end = now_secs() + 5; !seen && now_secs() < end;) {
				struct pollfd p = { ps, POLLIN, 0 };
				struct sockaddr_ll from;
				socklen_t fl = sizeof(from);
				uint8_t f[2048];
				ssize_t r;

				if (poll(&p, 1, 50) <= 0)
					continue;
				r = recvfrom(ps, f, sizeof(f), 0, (void *)&from, &fl);
				seen = r >= 42 && from.sll_pkttype != PACKET_OUTGOING &&
				       !memcmp(f, vp.mac[0], 6) && !memcmp(f + 6, vp.mac[1], 6) &&
				       f[23] == IPPROTO_UDP && f[36] == 0 && f[37] == 7;
			}
			ASSERT_TRUE(seen, "reflected frame with swapped MACs on veth0");
			if (stop_clean(&bg, vp.ns[1], vp.ifname[1]))
				if (!ASSERT_EQ(json_num(out, "\"summary\"", "tx"), 1, "tx counted"))
					printf("%s", out);
		}
		stop_clean(&rx, vp.ns[0], vp.ifname[0]);
tx_out:
		if (ps >= 0)
			close(ps);
	}
	veth_pair_del(&vp);
}

TEST(live_mtu9000)
{
	struct veth_pair vp;
	struct cli_bg bg;
	char args[256];
	int fd;

	if (!ASSERT_OK(veth_pair_add(&vp, "lj", 11, 9000), "veth pair at MTU 9000"))
		return;
	/* 20 datagrams of 8000 B at once: more than ARP's queue holds. */
	ASSERT_OK(veth_pair_neigh_permanent(&vp), "neighbours known");
	if (test__start_subtest("frags_pass_jumbo")) {
		fd = udp_listen(vp.ns[1], vp.ip4[1], 5200);
		snprintf(args, sizeof(args), "pass %s --json -q", vp.ifname[1]);
		if (ASSERT_GE(fd, 0, "listen") && !start_and_wait(&bg, vp.ns[1], vp.ifname[1], args)) {
			ASSERT_EQ(udp_send(vp.ns[0], vp.ip4[1], 5200, 20, 8000), 20, "sent");
			ASSERT_EQ(udp_recv(fd, 20, 8000, 5), 20, "received intact");
			if (stop_clean(&bg, vp.ns[1], vp.ifname[1])) {
				ASSERT_STRSTR(out, "\"frags\":true", "frags program chosen");
				/* Linear or multi-buffer is veth's choice (skb headroom);
				 * that the frames were seen whole is ours.
				 */
				ASSERT_GE(json_num(out, "\"summary\"", "rx_bytes"), 20 * 8042,
					  "jumbo frames seen whole");
			}
		}
		close(fd);
	}
	if (test__start_subtest("linear_refused")) {
		int st = sh_out(out, sizeof(out), "ip netns exec %s %s pass %s --no-frags -d 1 2>&1",
				vp.ns[1], test__path("xdplab"), vp.ifname[1]);

		ASSERT_EQ(st, 1, "exit status");
		ASSERT_STRSTR(out, "too large for a program without frags support", "message");
		ASSERT_EQ(xdp_prog_id(vp.ns[1], vp.ifname[1]), 0, "nothing attached");
	}
	veth_pair_del(&vp);
}

/* ns a --veth0/veth1-- ns r --vr/vb-- ns b; frames from the generator in a
 * are redirected in r and must arrive, intact, at a socket in b.
 */
TEST(live_redirect)
{
	static const char *const modes[] = { "redirect", "redirect-map" };
	struct veth_pair p1, p2 = {};
	char nsb[NETNS_NAME_MAX] = "", args[512], mac[32];
	struct cli_bg bg, sink;
	int fd;

	if (live_frames_refused()) {
		test__skip(live_frames_refused());
		return;
	}
	if (!ASSERT_OK(veth_pair_add(&p1, "rd", 12, 0), "pair a-r") ||
	    !ASSERT_OK(netns_add("rdz", nsb), "ns b") ||
	    !ASSERT_OK(veth_pair_join(&p2, p1.ns[1], "vr", nsb, "vb", 13, 0), "pair r-b"))
		goto out;
	/* A veth drops redirected frames unless its peer runs XDP (or GRO). */
	if (start_and_wait(&sink, nsb, "vb", "pass vb -q"))
		goto out;
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", p2.mac[1][0], p2.mac[1][1],
		 p2.mac[1][2], p2.mac[1][3], p2.mac[1][4], p2.mac[1][5]);

	for (int m = 0; m < 2; m++) {
		if (!test__start_subtest(modes[m]))
			continue;
		fd = udp_listen(nsb, p2.ip4[1], 6000);
		snprintf(args, sizeof(args), "%s veth1 vr --proto udp --json -q", modes[m]);
		if (ASSERT_GE(fd, 0, "listen") && !start_and_wait(&bg, p1.ns[1], "veth1", args)) {
			snprintf(args, sizeof(args),
				 "ip netns exec %s %s trafficgen veth0 -n 200 -s 100 --dst-mac %s "
				 "--src-ip %s --dst-ip %s --dport 6000 -q",
				 p1.ns[0], test__path("xdplab"), mac, p1.ip4[0], p2.ip4[1]);
			ASSERT_OK(sh("%s", args), "trafficgen");
			ASSERT_EQ(udp_recv(fd, 200, 100 - 42, 5), 200, "received intact in ns b");
			if (stop_clean(&bg, p1.ns[1], "veth1"))
				ASSERT_EQ(json_num(out, "\"summary\"", "redirect"), 200,
					  "redirect counted");
		}
		close(fd);
	}
	if (test__start_subtest("redirect_cpu")) {
		/* The CPUMAP entry passes frames to r's own stack on another CPU. */
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", p1.mac[1][0],
			 p1.mac[1][1], p1.mac[1][2], p1.mac[1][3], p1.mac[1][4], p1.mac[1][5]);
		fd = udp_listen(p1.ns[1], p1.ip4[1], 6001);
		if (ASSERT_GE(fd, 0, "listen") &&
		    !start_and_wait(&bg, p1.ns[1], "veth1",
				    "redirect-cpu veth1 --proto udp --port 6001 --json -q")) {
			snprintf(args, sizeof(args),
				 "ip netns exec %s %s trafficgen veth0 -n 200 -s 100 --dst-mac %s "
				 "--src-ip %s --dst-ip %s --dport 6001 -q",
				 p1.ns[0], test__path("xdplab"), mac, p1.ip4[0], p1.ip4[1]);
			ASSERT_OK(sh("%s", args), "trafficgen");
			ASSERT_EQ(udp_recv(fd, 200, 100 - 42, 5), 200, "received intact in ns r");
			if (stop_clean(&bg, p1.ns[1], "veth1")) {
				ASSERT_EQ(json_num(out, "\"summary\"", "redirect"), 200,
					  "redirected to the CPUMAP");
				ASSERT_EQ(json_num(out, "\"cpumap\"", "pass"), 200,
					  "passed on the remote CPU");
			}
		}
		close(fd);
	}
	stop_clean(&sink, nsb, "vb");
out:
	veth_pair_del(&p1);
	netns_del(nsb);
}

TEST(live_trafficgen)
{
	static const struct { const char *name, *args; long long n; } cases[] = {
		{ "ipv4_64", "-n 10000", 10000 },
		{ "ipv6_1500", "-n 2000 -6 -s 1500", 2000 },
		{ "two_threads", "-n 5001 -t 2", 5001 },
	};
	struct veth_pair vp;
	struct cli_bg bg;
	char args[256], mac[32], gen[OUT_LEN];
	long long xmit0, xmit_err0, xmit, xmit_err;

	if (live_frames_refused()) {
		test__skip(live_frames_refused());
		return;
	}
	if (!ASSERT_OK(veth_pair_add(&vp, "tg", 14, 0), "veth pair"))
		return;
	/*
	 * One RX queue on the receiving end per sending CPU. veth_xdp_xmit()
	 * picks the peer's queue by smp_processor_id() % real_num_rx_queues
	 * and adds to that queue's xdp_xmit counter outside any lock: two
	 * CPUs sending into one queue lose increments (4985 counted of 5001
	 * handed over, every one of them seen by the peer's program). With a
	 * queue each, every counter has one writer and the accounting below
	 * is exact.
	 */
	if (sysconf(_SC_NPROCESSORS_CONF) > 1)
		ASSERT_OK(sh("ip netns exec %s ethtool -L %s rx 2", vp.ns[1], vp.ifname[1]),
			  "two RX queues on the peer");
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", vp.mac[1][0], vp.mac[1][1],
		 vp.mac[1][2], vp.mac[1][3], vp.mac[1][4], vp.mac[1][5]);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!test__start_subtest(cases[i].name))
			continue;
		snprintf(args, sizeof(args), "drop %s --proto udp --port 9 --json -q", vp.ifname[1]);
		if (start_and_wait(&bg, vp.ns[1], vp.ifname[1], args))
			continue;
		xmit0 = ethtool_queue_stat(vp.ns[0], vp.ifname[0], "tx", "xdp_xmit");
		xmit_err0 = ethtool_queue_stat(vp.ns[0], vp.ifname[0], "tx", "xdp_xmit_errors");
		ASSERT_OK(sh_out(gen, sizeof(gen), "ip netns exec %s %s trafficgen %s %s "
				 "--dst-mac %s --json -q 2>&1", vp.ns[0], test__path("xdplab"),
				 vp.ifname[0], cases[i].args, mac), "trafficgen");
		ASSERT_EQ(json_num(gen, "\"summary\"", "redirect"), cases[i].n, "frames sent");
		/* Two senders can outrun the peer's NAPI (under TCG they do)
		 * and veth then refuses frames at its ring. Every frame must
		 * still be accounted for: handed over or refused, and every
		 * frame handed over reaches the peer's program.
		 */
		xmit = ethtool_queue_stat(vp.ns[0], vp.ifname[0], "tx", "xdp_xmit") - xmit0;
		xmit_err = ethtool_queue_stat(vp.ns[0], vp.ifname[0], "tx", "xdp_xmit_errors") -
			   xmit_err0;
		ASSERT_EQ(xmit + xmit_err, cases[i].n, "frames handed to the peer or refused");
		if (stop_clean(&bg, vp.ns[1], vp.ifname[1]))
			ASSERT_EQ(json_num(out, "\"summary\"", "drop"), xmit,
				  "frames dropped by the peer");
	}
	if (test__start_subtest("too_big")) {
		int st = sh_out(gen, sizeof(gen), "ip netns exec %s %s trafficgen %s -n 10 -s 4000 2>&1",
				vp.ns[0], test__path("xdplab"), vp.ifname[0]);

		ASSERT_EQ(st, 1, "exit status");
		ASSERT_STRSTR(gen, "xdplab: ", "one clear line");
	}
	veth_pair_del(&vp);
}

/* A tap with XDP, frames written to its fd as a VM's would be. */
TEST(live_tap)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	char ns[NETNS_NAME_MAX] = "", args[256];
	uint8_t tapmac[6], f[2048];
	struct pkt_spec spec = { .ipver = 4, .l4 = PKT_UDP, .sport = 1234, .dport = 9,
				 .len = 200 };
	struct cli_bg bg;
	int tfd = -1, saved, fd, written;

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (!ASSERT_OK(netns_add("tap", ns), "netns"))
		return;
	saved = netns_enter(ns);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xtap0");
	tfd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (tfd < 0 || ioctl(tfd, TUNSETIFF, &ifr)) {
		netns_leave(saved);
		ASSERT_TRUE(false, "create tap");
		goto out;
	}
	netns_leave(saved);
	if (!ASSERT_OK(sh("ip -n %s addr add 198.18.20.1/24 dev xtap0 && ip -n %s link set xtap0 up",
			  ns, ns), "tap up"))
		goto out;
	{
		int s = sock_in(ns, AF_INET, SOCK_DGRAM, 0);
		struct ifreq q = {};

		snprintf(q.ifr_name, sizeof(q.ifr_name), "xtap0");
		ASSERT_OK(ioctl(s, SIOCGIFHWADDR, &q), "tap mac");
		memcpy(tapmac, q.ifr_hwaddr.sa_data, 6);
		close(s);
	}
	memcpy(spec.dst_mac, tapmac, 6);
	memcpy(spec.src_mac, (uint8_t[]){ 2, 0, 0, 0, 0x20, 2 }, 6);
	pkt_parse_ip("198.18.20.2", &spec.src);
	pkt_parse_ip("198.18.20.1", &spec.dst);

	if (test__start_subtest("drop")) {
		pkt_build(f, sizeof(f), &spec);
		if (!start_and_wait(&bg, ns, "xtap0", "drop xtap0 --proto udp --port 9 --json -q")) {
			written = 0;
			for (int i = 0; i < 100; i++)
				written += write(tfd, f, spec.len) == (ssize_t)spec.len;
			ASSERT_EQ(written, 100, "frames written");
			if (stop_clean(&bg, ns, "xtap0"))
				ASSERT_EQ(json_num(out, "\"summary\"", "drop"), 100, "dropped by XDP");
		}
	}
	if (test__start_subtest("pass_to_socket")) {
		spec.dport = 7000;
		pkt_build(f, sizeof(f), &spec);
		fd = udp_listen(ns, "198.18.20.1", 7000);
		snprintf(args, sizeof(args), "pass xtap0 --json -q");
		if (ASSERT_GE(fd, 0, "listen") && !start_and_wait(&bg, ns, "xtap0", args)) {
			for (int i = 0; i < 100; i++)
				ASSERT_EQ(write(tfd, f, spec.len), spec.len, "write");
			ASSERT_EQ(udp_recv(fd, 100, spec.len - 42, 5), 100, "received intact");
			if (stop_clean(&bg, ns, "xtap0"))
				ASSERT_GE(json_num(out, "\"summary\"", "pass"), 100, "pass counted");
		}
		close(fd);
	}
out:
	if (tfd >= 0)
		close(tfd);
	netns_del(ns);
}
