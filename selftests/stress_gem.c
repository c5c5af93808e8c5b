// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The Cadence GEM under storms (issue 16), on the board of `make vmtest
 * ARCH=arm64`, whose GEM's other end is a tap on the host (XDPLAB_GEM_PEER,
 * with an iperf3 server). Traffic both ways all along: two ping floods
 * (requests out, replies in; 56 and 1400 bytes) and a paced UDP stream from
 * the peer (iperf3 -R). One kind of change made again and again:
 *
 *	prog_replace	pass frags -> pass linear -> pass frags -> none -> tx frags -> none
 *	mtu		down, MTU 9000 / 1500 / 576 / 4000, up
 *	rings		ethtool -G rx/tx down to the smallest macb accepts (64)
 *			and up to the largest (RX 8192, TX 4096)
 *	link_flap	down/up (the guest cannot flap a fixed link's carrier)
 *	carrier_flap	the host takes the emulated PHY's link down and up
 *			(vmtest/gem-control.sh): the carrier goes and comes
 *			back with the device up. Needs the board booted with
 *			VMTEST_GEM_PHY=1; skips on the default fixed link
 *	alloc_fail_refill  atomic page and slab allocations fail (5%), and
 *			page_pool_alloc_pages() (20%, fail_function), with a
 *			ring resize now and then: NAPI's RX refill
 *	reopen_fail	a ring resize and a first program while every
 *			page-pool allocation fails: the resize refused, the
 *			GEM not left IFF_UP while runtime-suspended, and it
 *			still goes down and up
 *	xdp_tx_stack_tx XDP_TX of every echo reply and the stack's TX (pings,
 *			and an iperf3 UDP stream to the peer) on the GEM's queue
 *
 * After each storm: the board's ring sizes, MTU and link as they were, the
 * carrier back and a ping answered within STRESS_RX_BOUND s, no kernel
 * report, and (with kernel-patches/macb, whose pools carry the netdev) as
 * many page pools as before and none destroyed with pages in flight.
 * Skips, saying why, where there is no GEM (the host, the x86 guest); the
 * program subtests skip on stock macb, which has no native XDP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>
#include <net/if.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "gem.h"
#include "gem_control.h"
#include "gem_kprobe.h"
#include "netns.h"
#include "page_pool.h"
#include "qstats.h"
#include "stress.h"
#include "test.h"
#include "xdplab.h"
#include "xdp_tx.skel.h"

#define MAX_TRAFFIC 4
/* How long a reopened GEM may take to have a carrier again: 10-15 s were
 * seen in the board's RT guest on a loaded host, well under 1 s otherwise.
 */
#define LINK_BOUND 20.0

struct gstorm {
	char ifname[IF_NAMESIZE];
	const char *peer;
	int ifindex;
	struct kwatch kw;
	pid_t traffic[MAX_TRAFFIC];
	long long rx0, tx0;
	int rx_ring, tx_ring, mtu;	/* as the board had them */
	struct pp_info pools;		/* before the storm */
	struct pass_progs *pp;
	int tx_frags;			/* xdp_tx_frags, matching ICMP */
	bool native;			/* the driver takes native XDP */
};

static long long sys_stat(const char *ifname, const char *what)
{
	char path[160], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, what);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] ? atoll(buf) : -1;
}

/* Sum over the queues of the driver's q<N>_<name> counter (ethtool -S). */
static long long queue_stat(const char *ifname, const char *name)
{
	char out[64];

	if (sh_out(out, sizeof(out), "ethtool -S %s | awk -F: '/^ *q[0-9]+_%s:/ "
		   "{ s += $2; n++ } END { print n ? s : -1 }'", ifname, name))
		return -1;
	return atoll(out);
}

/* Runs a command line in the background, with its output discarded. */
static pid_t bg(const char *fmt, const char *peer)
{
	char cmd[256];
	pid_t pid;

	snprintf(cmd, sizeof(cmd), fmt, peer);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void traffic_start(struct gstorm *g, bool stack_bulk)
{
	g->traffic[0] = bg("exec ping -q -i 0.005 -s 1400 -w 600 %s >/dev/null 2>&1", g->peer);
	g->traffic[1] = bg("exec ping -q -i 0.01 -s 56 -w 600 %s >/dev/null 2>&1", g->peer);
	/* paced: QEMU's GEM stops receiving for good once a burst fills
	 * its ring (vmtest/README.md); -R: the peer sends
	 */
	g->traffic[2] = bg(stack_bulk ?
			   "exec iperf3 -c %s --connect-timeout 5000 -u -b 4M -l 1400 -t 600 >/dev/null 2>&1" :
			   "exec iperf3 -c %s --connect-timeout 5000 -u -R -b 4M -l 1400 -t 600 >/dev/null 2>&1",
			   g->peer);
}

static void traffic_stop(struct gstorm *g)
{
	for (int i = 0; i < MAX_TRAFFIC; i++) {
		if (g->traffic[i] > 0) {
			kill(g->traffic[i], SIGKILL);
			waitpid(g->traffic[i], NULL, 0);
		}
		g->traffic[i] = -1;
	}
}

static int reset_to_board(struct gstorm *g)
{
	int err = xdp_set_native(NULL, g->ifname, -1);

	if (err == -EOPNOTSUPP || err == -EINVAL)
		err = 0;	/* stock macb: there was nothing to detach */
	return err ?: link_set_up(NULL, g->ifname, false) ?:
	       link_set_mtu(NULL, g->ifname, g->mtu) ?:
	       (g->rx_ring ? link_set_rings(NULL, g->ifname, g->rx_ring, g->tx_ring) : 0) ?:
	       link_set_up(NULL, g->ifname, true);
}

static void gs_abandon(struct gstorm *g);

static bool gs_up(struct gstorm *g, struct pass_progs *pp, int tx_frags, bool stack_bulk)
{
	char why[160];

	memset(g, 0, sizeof(*g));
	for (int i = 0; i < MAX_TRAFFIC; i++)
		g->traffic[i] = -1;
	g->pp = pp;
	g->tx_frags = tx_frags;
	g->kw.fd = -1;
	if (!gem_find(g->ifname, why, sizeof(why))) {
		test__skip("%s", why);
		return false;
	}
	g->peer = getenv("XDPLAB_GEM_PEER");
	if (!g->peer || !*g->peer) {
		test__skip("XDPLAB_GEM_PEER unset (the address of the GEM's peer, the tap on the host)");
		return false;
	}
	g->ifindex = if_nametoindex(g->ifname);
	g->mtu = sys_stat(g->ifname, "mtu");
	/* 0: the driver has no ring parameters (not macb) */
	if (link_get_rings(NULL, g->ifname, &g->rx_ring, &g->tx_ring))
		g->rx_ring = g->tx_ring = 0;
	g->native = !xdp_set_native(NULL, g->ifname, pp->frags);
	if (g->native)
		xdp_set_native(NULL, g->ifname, -1);
	if (!ASSERT_TRUE(link_wait_carrier(g->ifname, LINK_BOUND), "carrier before the storm"))
		return false;
	pp_dump(NULL, g->ifindex, false, &g->pools);
	kwatch_start(&g->kw);
	g->rx0 = sys_stat(g->ifname, "statistics/rx_packets");
	g->tx0 = sys_stat(g->ifname, "statistics/tx_packets");
	traffic_start(g, stack_bulk);
	/* The storm starts once both directions carry frames: ping and
	 * iperf3 take seconds to start in a loaded TCG guest, and a storm
	 * over a quiet link tests nothing (it used to end in "rx = 0"
	 * without saying whether RX ever ran). The storm's own counts
	 * start here.
	 */
	for (double end = now_secs() + 3 * STRESS_RX_BOUND; now_secs() < end; usleep(50000)) {
		long long rx = sys_stat(g->ifname, "statistics/rx_packets");
		long long tx = sys_stat(g->ifname, "statistics/tx_packets");

		if (rx > g->rx0 + 10 && tx > g->tx0 + 10) {
			g->rx0 = rx;
			g->tx0 = tx;
			return true;
		}
	}
	ASSERT_TRUE(false, "traffic flowing both ways before the storm");
	printf("    rx %lld, tx %lld packets in %.0f s, before any change\n",
	       sys_stat(g->ifname, "statistics/rx_packets") - g->rx0,
	       sys_stat(g->ifname, "statistics/tx_packets") - g->tx0, 3 * STRESS_RX_BOUND);
	gs_abandon(g);
	return false;
}

/* A storm that skipped after gs_up(): nothing changed, nothing to check. */
static void gs_abandon(struct gstorm *g)
{
	traffic_stop(g);
	if (g->kw.fd >= 0)
		close(g->kw.fd);
	g->kw.fd = -1;
}

/* A reply to a ping within the bound, once the carrier is back. */
static double probe(struct gstorm *g)
{
	double start = now_secs();

	if (!link_wait_carrier(g->ifname, LINK_BOUND))
		return -1;
	start = now_secs();
	while (now_secs() - start < STRESS_RX_BOUND)
		if (!sh("ping -q -c 1 -W 1 -I %s %s", g->ifname, g->peer))
			return now_secs() - start;
	return -1;
}

static void gs_down(struct gstorm *g)
{
	long long rx, tx;
	struct pp_info after = {};
	pid_t wd;

	traffic_stop(g);
	if (!g->ifindex)
		goto out;
	rx = sys_stat(g->ifname, "statistics/rx_packets") - g->rx0;
	tx = sys_stat(g->ifname, "statistics/tx_packets") - g->tx0;
	if (test__verbose())
		printf("    traffic: %lld packets in, %lld out\n", rx, tx);
	ASSERT_GT(rx, 0, "packets received during the storm");
	ASSERT_GT(tx, 0, "packets sent during the storm");
	wd = watchdog_start(60, "putting the GEM back as the board had it");
	ASSERT_OK(reset_to_board(g), "rings, MTU and link as the board had them");
	watchdog_stop(wd);
	ASSERT_GE(probe(g), 0, "ping answered within the bound");
	/* a destroyed pool goes once its last page is back */
	for (int i = 0; i < 50; i++) {
		if (pp_dump(NULL, g->ifindex, false, &after) || !after.detached)
			break;
		usleep(200000);
	}
	if (!ASSERT_EQ(after.detached, 0, "pools destroyed with pages in flight"))
		printf("    %llu page(s) in flight in the GEM's %d pools, the live ones included, after 10 s\n",
		       after.inflight, after.npools);
	ASSERT_EQ(after.npools, g->pools.npools, "as many page pools as before");
out:
	kwatch_check(&g->kw, "no kernel report");
}

/* ---- the changes ---- */

/* Every change below reopens the GEM. Before the next one, the link comes
 * back and a packet arrives (each bounded): a storm of changes that never
 * let the link up would test the link's down state, not RX under changes.
 */
static int settled(struct gstorm *g, int err)
{
	long long rx = sys_stat(g->ifname, "statistics/rx_packets");
	double end;

	if (err || !link_wait_carrier(g->ifname, LINK_BOUND))
		return err;
	for (end = now_secs() + 2; now_secs() < end; usleep(10000))
		if (sys_stat(g->ifname, "statistics/rx_packets") != rx)
			break;
	return 0;
}

static int op_prog(void *arg, int step)
{
	struct gstorm *g = arg;
	int fds[] = { g->pp->frags, g->pp->linear, g->pp->frags, -1, g->tx_frags, -1 };

	return settled(g, xdp_set_native(NULL, g->ifname, fds[step % 6]));
}

static int op_mtu(void *arg, int step)
{
	struct gstorm *g = arg;
	static const int mtus[] = { 9000, 1500, 576, 4000 };

	/* macb takes a new MTU only while down */
	return settled(g, link_set_up(NULL, g->ifname, false) ?:
			  link_set_mtu(NULL, g->ifname, mtus[step % 4]) ?:
			  link_set_up(NULL, g->ifname, true));
}

/* The sizes the storm cycles through, RX/TX: these, or what
 * XDPLAB_GEM_RINGS says ("rx:tx,rx:tx,...", up to 8 pairs), to narrow down
 * what a failing storm needs
 */
static int ring_sizes(int rx[8], int tx[8])
{
	static const int drx[] = { 64, 8192, 128, 512, 4096 }, dtx[] = { 64, 4096, 128, 512, 64 };
	const char *env = getenv("XDPLAB_GEM_RINGS");
	int n = 0;

	while (env && *env && n < 8 && sscanf(env, "%d:%d", &rx[n], &tx[n]) == 2) {
		n++;
		env = strchr(env, ',');
		env = env ? env + 1 : NULL;
	}
	if (n)
		return n;
	memcpy(rx, drx, sizeof(drx));
	memcpy(tx, dtx, sizeof(dtx));
	return 5;
}

static int op_rings(void *arg, int step)
{
	struct gstorm *g = arg;
	int rx[8], tx[8], n = ring_sizes(rx, tx);

	return settled(g, link_set_rings(NULL, g->ifname, rx[step % n], tx[step % n]));
}

static int op_flap(void *arg, int step)
{
	struct gstorm *g = arg;
	(void)step;
	return settled(g, link_set_up(NULL, g->ifname, false) ?:
			  link_set_up(NULL, g->ifname, true));
}

/* Down long enough for phylib, which polls the PHY once a second, to
 * see it even when the guest runs late; the host answers once the link is
 * up again. Both edges must reach the stack: carrier_changes moves by two.
 */
#define CARRIER_FLAP_MS "3000"

static int op_carrier(void *arg, int step)
{
	struct gstorm *g = arg;
	long long changes = sys_stat(g->ifname, "carrier_changes");
	char reply[256];
	int err;

	(void)step;
	if (gem_control("flap " CARRIER_FLAP_MS, reply, sizeof(reply))) {
		printf("    the host's flap: %s\n", reply);
		return -EIO;
	}
	err = settled(g, 0);
	if (!err && sys_stat(g->ifname, "carrier_changes") - changes < 2) {
		printf("    carrier_changes %lld -> %lld: the flap did not reach the stack\n",
		       changes, sys_stat(g->ifname, "carrier_changes"));
		return -ENOLINK;
	}
	return err;
}

struct ctx {
	struct pass_progs *pp;
	int tx_frags;
};

static void one_storm(struct ctx *c, storm_op op, const char *what, bool needs_xdp)
{
	struct gstorm g;

	if (!gs_up(&g, c->pp, c->tx_frags, false))
		return;
	if (needs_xdp && !g.native) {
		test__skip("%s has no native XDP (stock macb, kernel without kernel-patches/macb)",
			   g.ifname);
		gs_abandon(&g);
		return;
	}
	/* with the series, every change below runs with a program attached */
	if (g.native && !needs_xdp)
		ASSERT_OK(xdp_set_native(NULL, g.ifname, c->pp->frags), "xdp_pass_frags");
	storm_of(op, &g, what, 2);
	gs_down(&g);
}

static void carrier_flap(struct ctx *c, const char *ifname)
{
	char path[128], why[256];

	snprintf(path, sizeof(path), "/sys/class/net/%s/phydev", ifname);
	if (access(path, F_OK)) {
		test__skip("%s has a fixed link (QEMU's xlnx-versal-virt DT), whose carrier only "
			   "down/up (link_flap) changes; boot the board with VMTEST_GEM_PHY=1 for a "
			   "PHY the host can flap", ifname);
		return;
	}
	if (gem_control("hresp-count", why, sizeof(why))) {
		test__skip("no host control service to flap the PHY's link (%s; vmtest/gem-control.sh)",
			   why);
		return;
	}
	one_storm(c, op_carrier, "carrier flaps", false);
}

static void refill_storm(void *arg)
{
	struct gstorm *g = arg;
	struct storm st;

	for (storm_begin(&st); storm_next(&st);) {
		if (st.steps % 5 == 4)
			op_rings(g, st.steps / 5);
		usleep(200000);
	}
}

static void alloc_fail_refill(struct ctx *c)
{
	const char *why = storm_faults_unavailable();
	struct fault_cfg base = { .probability = 5 };
	struct storm_faults sf;
	struct gstorm g;

	if (!gs_up(&g, c->pp, c->tx_frags, false))
		return;
	if (why) {
		test__skip("%s", why);
		gs_abandon(&g);
		return;
	}
	if (g.native)
		ASSERT_OK(xdp_set_native(NULL, g.ifname, c->pp->frags), "xdp_pass_frags");
	if (storm_faults_on(&sf, &base)) {
		struct qstats qa, qb;
		/* qstats lists the queues of an interface that is up only:
		 * read before the storm and after gs_down() has put the
		 * board's settings back (the counters live with the device)
		 */
		bool qs = !qstats_dump(if_nametoindex(g.ifname), &qa) && qa.nrx > 0 &&
			  qa.rx[0].alloc_fail >= 0;

		refill_storm(&g);
		storm_faults_off(&sf);
		gs_down(&g);
		/* the refills the pool refused, as qstats reports them
		 * (22/22 of v6; stock macb has no qstats)
		 */
		if (qs && ASSERT_OK(qstats_dump(if_nametoindex(g.ifname), &qb), "qstats after the storm") &&
		    ASSERT_EQ(qb.nrx, qa.nrx, "RX queues in qstats after the storm")) {
			long long fails = 0;

			for (int i = 0; i < qb.nrx; i++)
				fails += qb.rx[i].alloc_fail - qa.rx[i].alloc_fail;
			if (test__verbose())
				printf("    qstats rx alloc_fail: +%lld during the storm\n", fails);
			ASSERT_GT(fails, 0, "RX page allocations that failed, by qstats");
		}
		return;
	}
	gs_down(&g);
}

/* Runs link_set_up(up) in a child for at most secs: 0, -EIO when it was
 * refused, -ETIMEDOUT when it is still in the kernel. Such a child is left
 * there; it holds rtnl, so the caller must not touch a link any more.
 */
static int link_set_up_bounded(const char *ifname, bool up, double secs)
{
	double end = now_secs() + secs;
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(link_set_up(NULL, ifname, up) ? 1 : 0);
	if (pid < 0)
		return -errno;
	while (now_secs() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

#define PP_ALLOC_FUNC "page_pool_alloc_pages"

/* After a reopen that failed and whose restore failed too, the GEM has
 * undone all of its open, pm_runtime_put() included: on silicon its clocks
 * may be gated. It must not stay IFF_UP then, since what checks only IFF_UP
 * or netif_running() would reach its registers: rx-mode changes
 * (macb_set_rx_mode(), counted here with a kprobe, on a promiscuity
 * change), timestamping ioctls (review-v2 bug 4).
 */
static void closed_not_up(const char *ifname)
{
	struct gem_kprobe k = {};
	char st[32] = "";
	long calls = -1;
	bool up;

	up = !sh("ip -o link show %s | grep -q '[<,]UP[,>]'", ifname);
	sh_out(st, sizeof(st), "cat /sys/class/net/%s/device/power/runtime_status", ifname);
	st[strcspn(st, "\n")] = 0;
	if (!gem_kprobe_add(&k, "macb_set_rx_mode", "macb_set_rx_mode", NULL)) {
		sh("ip link set %s promisc on; ip link set %s promisc off", ifname, ifname);
		calls = gem_kprobe_hits(&k);
		gem_kprobe_del(&k);
	}
	if (test__verbose())
		printf("    after the failed restore: %s, runtime PM %s, macb_set_rx_mode() calls %ld\n",
		       up ? "IFF_UP" : "down", st, calls);
	if (!strcmp(st, "active"))
		return;	/* the registers can be reached */
	ASSERT_FALSE(up, "IFF_UP on a GEM closed and runtime-suspended");
	if (calls >= 0)
		ASSERT_EQ(calls, 0, "macb_set_rx_mode() on the runtime-suspended GEM");
}

/* A ring resize, then a first XDP program, while every page-pool
 * allocation fails (fail_function, 100 %): the resize must be refused; the
 * attach, which needs no new buffers since kernel-patches/macb 0013, must
 * allocate nothing if it succeeds; and the interface must still go down and
 * come up again with RX working. A reopen that failed twice used to leave the GEM up with
 * NAPI disabled, and the next close spun in napi_disable() for ever,
 * holding rtnl (issue 16's alloc_fail_refill; issue 20).
 */
static void reopen_fail(struct ctx *c)
{
	struct fault_cfg cfg = { .kind = FAULT_FUNCTION, .probability = 100,
				 .func = PP_ALLOC_FUNC, .retval = 0 };
	static const char *const steps[] = { "ring resize", "first program" };
	char ifname[IF_NAMESIZE], why[160];
	const char *peer = getenv("XDPLAB_GEM_PEER"), *no;
	struct kwatch kw;
	int rx, tx, err;
	struct fault f;
	long injected;
	pid_t wd;

	if (!gem_find(ifname, why, sizeof(why))) {
		test__skip("%s", why);
		return;
	}
	if (!peer || !*peer) {
		test__skip("XDPLAB_GEM_PEER unset (the address of the GEM's peer, the tap on the host)");
		return;
	}
	no = fault_unavailable(FAULT_FUNCTION);
	if (no || !fault_function_injectable(PP_ALLOC_FUNC)) {
		test__skip("%s", no ?: PP_ALLOC_FUNC " is not injectable here");
		return;
	}
	if (link_get_rings(NULL, ifname, &rx, &tx)) {
		test__skip("%s has no ring parameters", ifname);
		return;
	}
	kwatch_start(&kw);
	for (int i = 0; i < 2; i++) {
		if (!ASSERT_OK(fault_arm(&f, &cfg), "fail_function " PP_ALLOC_FUNC))
			break;
		err = i == 0 ? link_set_rings(NULL, ifname, rx == 128 ? 256 : 128, tx) :
			       xdp_set_native(NULL, ifname, c->pp->frags);
		injected = fault_disarm(&f);
		if (test__verbose())
			printf("    %s: %d, %ld allocation(s) failed\n", steps[i], err, injected);
		if (i == 0 && injected == 0) {
			test__skip("%s: no page-pool allocation to fail (stock macb)", ifname);
			link_set_rings(NULL, ifname, rx, tx);
			break;
		}
		if (i == 0) {
			ASSERT_NEQ(err, 0, "ring resize refused");
			closed_not_up(ifname);
		}
		else if (err == 0)
			/* the buffers fit every program: nothing to allocate */
			ASSERT_EQ(injected, 0, "page-pool allocations of the attach");
		wd = watchdog_start(30, "the GEM's down after a failed reopen");
		err = link_set_up_bounded(ifname, false, 60);
		watchdog_stop(wd);
		if (!ASSERT_OK(err, "down within 60 s"))
			return;	/* the down holds rtnl: touch nothing more */
		ASSERT_OK(link_set_up(NULL, ifname, true), "up again");
		ASSERT_TRUE(link_wait_carrier(ifname, LINK_BOUND), "carrier");
		ASSERT_OK(sh("ping -q -c 3 -i 0.2 -W 2 -I %s %s", ifname, peer), "replies");
	}
	xdp_set_native(NULL, ifname, -1);
	link_set_rings(NULL, ifname, rx, tx);
	link_wait_carrier(ifname, LINK_BOUND);
	kwatch_check(&kw, "no kernel report");
}

/* No change: XDP_TX sends every echo reply back out while the stack
 * sends its pings and a UDP stream, on the same TX queue.
 */
static void xdp_tx_stack_tx(struct ctx *c)
{
	long long tx0, err0;
	struct gstorm g;
	double end;

	if (!gs_up(&g, c->pp, c->tx_frags, true))
		return;
	if (!g.native) {
		test__skip("%s has no native XDP (stock macb, kernel without kernel-patches/macb)",
			   g.ifname);
		gs_abandon(&g);
		return;
	}
	tx0 = queue_stat(g.ifname, "xdp_tx");
	err0 = queue_stat(g.ifname, "xdp_tx_err");
	if (ASSERT_OK(xdp_set_native(NULL, g.ifname, c->tx_frags), "xdp_tx_frags (ICMP)")) {
		/* the storm's time counts from the link being up again */
		ASSERT_TRUE(link_wait_carrier(g.ifname, LINK_BOUND), "carrier after the attach");
		for (end = now_secs() + stress_secs(); now_secs() < end;)
			usleep(100000);	/* the storm is the traffic itself */
		if (test__verbose())
			printf("    %s: %d TX queue(s); xdp_tx %lld, xdp_tx_err %lld\n", g.ifname,
			       sh("exit $(ls -d /sys/class/net/%s/queues/tx-* | wc -l)", g.ifname),
			       queue_stat(g.ifname, "xdp_tx") - tx0,
			       queue_stat(g.ifname, "xdp_tx_err") - err0);
		ASSERT_GT(queue_stat(g.ifname, "xdp_tx") - tx0, 0, "replies sent back by XDP_TX");
		ASSERT_EQ(queue_stat(g.ifname, "xdp_tx_err") - err0, 0, "XDP_TX errors");
	}
	gs_down(&g);
}

TEST(stress_gem)
{
	char ifname[IF_NAMESIZE], why[160];
	struct pass_progs pp = {};
	struct xdp_tx_bpf *tx = NULL;
	struct ctx c = { &pp, -1 };

	if (!gem_find(ifname, why, sizeof(why))) {
		test__skip("%s", why);
		return;
	}
	if (!pass_progs_load(&pp))
		return;
	/* XDP_TX for ICMP only: the iperf3 control connection must pass */
	tx = xdp_tx_bpf__open();
	if (!ASSERT_OK_PTR(tx, "open xdp_tx"))
		goto out;
	tx->rodata->cfg.match_l4 = XDPLAB_L4_ICMP;
	if (!ASSERT_OK(xdp_tx_bpf__load(tx), "load xdp_tx"))
		goto out;
	c.tx_frags = bpf_program__fd(tx->progs.xdp_tx_frags);
	kmemleak_forget();
	if (test__start_subtest("prog_replace"))
		one_storm(&c, op_prog, "program changes", true);
	if (test__start_subtest("mtu"))
		one_storm(&c, op_mtu, "MTU changes", false);
	if (test__start_subtest("rings"))
		one_storm(&c, op_rings, "ring resizes", false);
	if (test__start_subtest("link_flap"))
		one_storm(&c, op_flap, "down/up", false);
	if (test__start_subtest("carrier_flap"))
		carrier_flap(&c, ifname);
	if (test__start_subtest("alloc_fail_refill"))
		alloc_fail_refill(&c);
	if (test__start_subtest("reopen_fail"))
		reopen_fail(&c);
	if (test__start_subtest("xdp_tx_stack_tx"))
		xdp_tx_stack_tx(&c);
	if (test__start_subtest("kmemleak"))
		kmemleak_check("kmemleak after the GEM storms");
out:
	xdp_tx_bpf__destroy(tx);
	pass_progs_free(&pp);
}
