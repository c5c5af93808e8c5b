// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tun/tap under storms (issue 16). One tap (IFF_NAPI) in a namespace, with
 * traffic both ways on its one queue:
 *
 *	in:  4 processes writing frames of 64, 1500 and 9000 bytes to the
 *	     same tap fd (several writers on one queue), plus one vhost-net
 *	     writer where /dev/vhost-net exists (TUN_MSG_PTR batches)
 *	out: UDP (plain and GSO) from the namespace's stack to a neighbour
 *	     behind the tap, and a reader draining the tap fd
 *
 * and one kind of change made again and again:
 *
 *	prog_replace	pass frags -> tx frags -> pass linear -> none -> tx linear -> none
 *	mtu		68, 9000, 1500, 576, 4000
 *	rings		tun has no ethtool -G: its ring is the TX ptr_ring, resized
 *			by txqueuelen (1, 16, 1000, 4, 500; 1 is the smallest
 *			that leaves a ring)
 *	link_flap	down/up, then carrier off/on (TUNSETCARRIER)
 *	writers		8 writers and XDP_TX on every frame, against the stack's TX
 *	alloc_fail_writers  the writers' own allocations fail (task filter,
 *			sleeping ones too, 10%): tun_get_user()'s error paths
 *	alloc_fail_atomic   atomic page and slab allocations fail (5%), all
 *			tasks and softirq, and page_pool_alloc_pages() (20%,
 *			fail_function): NAPI, page_pool refills
 *	mixed		all the changes, in a seeded random order
 *
 * After each storm: traffic flowed both ways, a frame written to the tap
 * reaches a socket and a datagram sent by the stack reaches the tap fd,
 * each within STRESS_RX_BOUND s, no kernel report, and once the tap is
 * closed no page pool left in the namespace (tun has pools only with
 * kernel-patches/tun: on stock there is nothing to see). kmemleak at the
 * end where it is built.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <linux/types.h>
#include <net/if.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "netns.h"
#include "page_pool.h"
#include "stress.h"
#include "test.h"
#include "tun.h"
#include "vhost_net.h"
#include "xdplab.h"
#include "xdp_tx.skel.h"

#define TAP "xstun0"
#define MAX_WRITERS 8

/* slots of the shared counters */
enum { C_WRITTEN, C_VHOST, C_READ, C_NR };

struct tstorm {
	char ns[NETNS_NAME_MAX];
	struct tap t;
	struct kwatch kw;
	int nwriters;
	pid_t writers[MAX_WRITERS], vhost, reader;
	unsigned long long *counts;
	struct blaster b;
	struct pass_progs *pp;
	int tx_frags, tx_linear;
};

/* ---- the traffic ---- */

static void child_setup(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
}

static void writer(struct tstorm *s)
{
	static const enum size_kind kinds[] = { SZ_64, SZ_1500, SZ_9000 };
	static struct frame f[3];
	double give_up = now_secs() + 600;

	child_setup();
	for (int k = 0; k < 3; k++)
		frame_build(&f[k], &s->t, kinds[k]);
	for (unsigned int i = 0; now_secs() < give_up; i++) {
		if (send_write(&s->t, &f[i % 3], 1) == 1)
			__atomic_fetch_add(&s->counts[C_WRITTEN], 1, __ATOMIC_RELAXED);
		if (!(i % 8))
			usleep(1000);	/* leave a TCG guest time for the storm */
	}
	_exit(0);
}

static void vhost_writer(struct tstorm *s)
{
	struct vhost_net vn = { .fd = -1, .kick = -1, .call = -1 };
	double give_up = now_secs() + 600;
	static struct frame f;

	child_setup();
	frame_build(&f, &s->t, SZ_1500);
	if (vhost_net_open(&vn, s->t.fd, 256, 9216))
		_exit(2);
	while (now_secs() < give_up) {
		int n = 0;

		while (n < 16 && vhost_net_room(&vn) && !vhost_net_post(&vn, NULL, f.data, f.len))
			n++;
		vhost_net_kick(&vn);
		__atomic_fetch_add(&s->counts[C_VHOST], n, __ATOMIC_RELAXED);
		vhost_net_reap(&vn, 0.1);
		usleep(2000);
	}
	vhost_net_close(&vn);
	_exit(0);
}

static void reader(struct tstorm *s)
{
	static uint8_t buf[65536 + VHOST_NET_HDR_LEN];
	double give_up = now_secs() + 600;

	child_setup();
	while (now_secs() < give_up) {
		struct pollfd p = { s->t.fd, POLLIN, 0 };

		poll(&p, 1, 50);
		while (read(s->t.fd, buf, sizeof(buf)) > 0)
			__atomic_fetch_add(&s->counts[C_READ], 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

static pid_t spawn(struct tstorm *s, void (*fn)(struct tstorm *s))
{
	pid_t pid = fork();

	if (pid == 0)
		fn(s);
	return pid;
}

static void reap(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

static bool ts_up(struct tstorm *s, const char *tag, struct pass_progs *pp,
		  struct xdp_tx_bpf *tx, int nwriters)
{
	memset(s, 0, sizeof(*s));
	s->t.fd = -1;
	s->vhost = s->reader = -1;
	for (int i = 0; i < MAX_WRITERS; i++)
		s->writers[i] = -1;
	s->pp = pp;
	s->tx_frags = bpf_program__fd(tx->progs.xdp_tx_frags);
	s->tx_linear = bpf_program__fd(tx->progs.xdp_tx);
	s->b.pid = -1;
	kwatch_start(&s->kw);
	s->counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(s->counts != MAP_FAILED, "shared counters")) {
		s->counts = NULL;
		return false;
	}
	if (!ASSERT_OK(netns_add(tag, s->ns), "netns") ||
	    !ASSERT_OK(tap_make(s->ns, TAP, IFF_NAPI, 1500, &s->t), "tap") ||
	    !ASSERT_OK(sh("ip -n %s addr add " TAP_IP "/24 dev " TAP " && "
			  "ip -n %s neigh replace " PEER_IP " lladdr " PEER_MAC " dev " TAP,
			  s->ns, s->ns), "address") ||
	    !ASSERT_OK(xdp_set_native(s->ns, TAP, pp->frags), "xdp_pass_frags on the tap"))
		return false;
	s->nwriters = nwriters;
	for (int i = 0; i < nwriters; i++)
		s->writers[i] = spawn(s, writer);
	if (!vhost_net_unavailable())
		s->vhost = spawn(s, vhost_writer);
	s->reader = spawn(s, reader);
	/* the stack's side: to the neighbour behind the tap */
	return ASSERT_OK(blast_start(&s->b, s->ns, PEER_IP, PORT, 8000, true), "traffic out");
}

static void traffic_stop(struct tstorm *s)
{
	for (int i = 0; i < MAX_WRITERS; i++)
		reap(&s->writers[i]);
	reap(&s->vhost);
	reap(&s->reader);
}

/* A frame written to the tap reaches a socket behind it, within the bound. */
static double probe_in(struct tstorm *s)
{
	static struct frame f;
	int fd = udp_listen_in(s->ns);
	double start = now_secs(), took = -1;

	if (fd < 0)
		return -1;
	frame_build(&f, &s->t, SZ_1500);
	while (now_secs() - start < STRESS_RX_BOUND) {
		send_write(&s->t, &f, 1);
		if (sock_collect(fd, f.payload, 1, 0.1) == 1) {
			took = now_secs() - start;
			break;
		}
	}
	close(fd);
	return took;
}

/* A datagram the stack sends to the neighbour comes out of the tap fd. */
static double probe_out(struct tstorm *s)
{
	static uint8_t buf[65536 + VHOST_NET_HDR_LEN];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int fd = netns_socket(s->ns, AF_INET, SOCK_DGRAM);
	double start = now_secs(), took = -1;

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, PEER_IP, &sa.sin_addr);
	while (took < 0 && now_secs() - start < STRESS_RX_BOUND) {
		struct pollfd p = { s->t.fd, POLLIN, 0 };
		ssize_t n;

		sendto(fd, "probe", 5, 0, (void *)&sa, sizeof(sa));
		poll(&p, 1, 100);
		while ((n = read(s->t.fd, buf, sizeof(buf))) > 0) {
			uint8_t *ip = buf + VHOST_NET_HDR_LEN + 14;

			if (n >= VHOST_NET_HDR_LEN + 42 && ip[9] == 17 &&
			    ((ip[22] << 8) | ip[23]) == PORT)
				took = now_secs() - start;
		}
	}
	close(fd);
	return took;
}

static void ts_down(struct tstorm *s)
{
	unsigned long long sent = 0, got = 0;
	int carrier = 1;

	traffic_stop(s);
	blast_stop(&s->b, &sent, &got);
	if (s->t.fd < 0)
		goto out;
	if (test__verbose())
		printf("    traffic: in %llu written, %llu by vhost, %llu received; "
		       "out %llu sent, %llu read from the tap\n", s->counts[C_WRITTEN],
		       s->counts[C_VHOST], got, sent, s->counts[C_READ]);
	ASSERT_GT(s->counts[C_WRITTEN], 0, "frames written to the tap");
	ASSERT_GT(sent, 0, "datagrams sent out through the tap");
	ASSERT_GT(got + s->counts[C_READ], 0, "frames delivered during the storm");
	/* back to the start: up, carrier, MTU, ring, the pass program */
	ASSERT_OK(link_set_up(s->ns, TAP, true), "up again");
	ASSERT_OK(ioctl(s->t.fd, TUNSETCARRIER, &carrier), "carrier again");
	ASSERT_OK(link_set_mtu(s->ns, TAP, 1500), "MTU 1500 again");
	ASSERT_OK(sh("ip -n %s link set " TAP " txqueuelen 1000", s->ns), "txqueuelen again");
	/* a link going down flushes even permanent neighbours */
	ASSERT_OK(sh("ip -n %s neigh replace " PEER_IP " lladdr " PEER_MAC " dev " TAP, s->ns),
		  "neighbour again");
	ASSERT_OK(xdp_set_native(s->ns, TAP, s->pp->frags), "pass program again");
	ASSERT_GE(probe_in(s), 0, "RX works within the bound");
	ASSERT_GE(probe_out(s), 0, "TX works within the bound");
	/* the tap goes with its last fd; its pools then show under lo */
	tap_close(&s->t);
	assert_pools_gone(s->ns, "page pools left after closing the tap");
out:
	kwatch_check(&s->kw, "no kernel report");
	tap_close(&s->t);
	netns_del(s->ns);
	if (s->counts)
		munmap(s->counts, 4096);
	s->counts = NULL;
}

/* ---- the changes ---- */

static int op_prog(void *arg, int step)
{
	struct tstorm *s = arg;
	int fds[] = { s->pp->frags, s->tx_frags, s->pp->linear, -1, s->tx_linear, -1 };

	return xdp_set_native(s->ns, TAP, fds[step % 6]);
}

static int op_mtu(void *arg, int step)
{
	struct tstorm *s = arg;
	static const int mtus[] = { 68, 9000, 1500, 576, 4000 };

	return link_set_mtu(s->ns, TAP, mtus[step % 5]);
}

static int op_ring(void *arg, int step)
{
	struct tstorm *s = arg;
	static const int len[] = { 1, 16, 1000, 4, 500 };
	struct ifreq ifr = { .ifr_qlen = len[step % 5] };
	int saved = netns_enter(s->ns), fd, err;

	if (saved < 0)
		return -ENOENT;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	netns_leave(saved);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), TAP);
	err = ioctl(fd, SIOCSIFTXQLEN, &ifr) ? -errno : 0;
	close(fd);
	return err;
}

static int op_flap(void *arg, int step)
{
	struct tstorm *s = arg;
	int off = 0, on = 1;

	if (step % 2)
		return ioctl(s->t.fd, TUNSETCARRIER, &off) || ioctl(s->t.fd, TUNSETCARRIER, &on) ?
		       -errno : 0;
	return link_set_up(s->ns, TAP, false) ?: link_set_up(s->ns, TAP, true);
}

struct ctx {
	struct pass_progs *pp;
	struct xdp_tx_bpf *tx;
};

static void one_storm(struct ctx *c, const char *tag, storm_op op, const char *what)
{
	struct tstorm s;

	if (ts_up(&s, tag, c->pp, c->tx, 4))
		storm_of(op, &s, what, 4);
	ts_down(&s);
}

/* No change, just load: 8 writers whose frames all go back out by
 * XDP_TX, into the same TX ring as the stack's datagrams.
 */
static void writers(struct ctx *c)
{
	struct tstorm s;
	double end = now_secs() + stress_secs();

	if (ts_up(&s, "sttw", c->pp, c->tx, MAX_WRITERS) &&
	    ASSERT_OK(xdp_set_native(s.ns, TAP, s.tx_frags), "xdp_tx_frags")) {
		while (now_secs() < end)
			usleep(100000);	/* the storm is the traffic itself */
		if (test__verbose())
			printf("    %d writers\n", s.nwriters);
	}
	ts_down(&s);
}

static void mixed(struct ctx *c)
{
	static const storm_op ops[] = { op_prog, op_mtu, op_ring, op_flap };
	unsigned int seed = (unsigned int)getpid();
	struct storm st;
	struct tstorm s;

	if (test__verbose())
		printf("    seed %u\n", seed);
	if (ts_up(&s, "sttmix", c->pp, c->tx, 4)) {
		for (storm_begin(&st); storm_next(&st);) {
			int k = rand_r(&seed) % 4, err = ops[k](&s, rand_r(&seed) % 30);

			if (err && st.errors++ < 3)
				printf("    op %d, step %d: %s\n", k, st.steps, strerror(-err));
		}
		ASSERT_EQ(st.errors, 0, "changes refused");
	}
	ts_down(&s);
}

/* ---- allocation failures ---- */

static void prog_storm(void *arg)
{
	struct tstorm *s = arg;
	struct storm st;

	for (storm_begin(&st); storm_next(&st);) {
		op_prog(s, st.steps);
		usleep(100000);
	}
}

static void alloc_fail(struct ctx *c, bool writers_only)
{
	const char *why = storm_faults_unavailable();
	struct fault_cfg base = { .probability = writers_only ? 10 : 5,
				  .sleeping_too = writers_only };
	struct storm_faults sf;
	struct tstorm s;

	if (why) {
		test__skip("%s", why);
		return;
	}
	if (ts_up(&s, writers_only ? "sttafw" : "sttafa", c->pp, c->tx, 4)) {
		if (writers_only) {
			for (int i = 0; i < s.nwriters; i++)
				base.tasks[base.ntasks++] = s.writers[i];
		}
		if (storm_faults_on(&sf, &base)) {
			prog_storm(&s);
			storm_faults_off(&sf);
		}
	}
	ts_down(&s);
}

TEST(stress_tun)
{
	struct pass_progs pp = {};
	struct xdp_tx_bpf *tx = NULL;
	struct ctx c = { &pp, NULL };

	if (access("/dev/net/tun", R_OK | W_OK)) {
		test__skip("no /dev/net/tun");
		return;
	}
	if (!pass_progs_load(&pp))
		return;
	tx = xdp_tx_bpf__open_and_load();
	if (!ASSERT_OK_PTR(tx, "load xdp_tx"))
		goto out;
	c.tx = tx;
	if (vhost_net_unavailable() && test__verbose())
		printf("    no vhost-net writer: %s\n", vhost_net_unavailable());
	kmemleak_forget();
	if (test__start_subtest("prog_replace"))
		one_storm(&c, "sttprog", op_prog, "program changes");
	if (test__start_subtest("mtu"))
		one_storm(&c, "sttmtu", op_mtu, "MTU changes");
	if (test__start_subtest("rings"))
		one_storm(&c, "sttring", op_ring, "txqueuelen changes");
	if (test__start_subtest("link_flap"))
		one_storm(&c, "sttflap", op_flap, "down/up and carrier flaps");
	if (test__start_subtest("writers"))
		writers(&c);
	if (test__start_subtest("alloc_fail_writers"))
		alloc_fail(&c, true);
	if (test__start_subtest("alloc_fail_atomic"))
		alloc_fail(&c, false);
	if (test__start_subtest("mixed"))
		mixed(&c);
	if (test__start_subtest("kmemleak"))
		kmemleak_check("kmemleak after the tun storms");
out:
	xdp_tx_bpf__destroy(tx);
	pass_progs_free(&pp);
}
