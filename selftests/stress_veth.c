// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * veth under storms (issue 16): a pair of 4 queues a side, xdp_pass_frags
 * on both ends (so both directions run XDP in veth's NAPI, with its page
 * pools), UDP both ways (plain datagrams up to 8000 bytes and UDP GSO
 * superframes), and one kind of change made again and again:
 *
 *	prog_replace	frags -> linear -> frags -> none -> linear -> none, both ends
 *	mtu		9000, 68, 1500, 4000, 576 on both ends
 *	channels	ethtool -L rx/tx 1..4 on both ends (veth has channels,
 *			not rings: the "rings" subtest skips, saying so)
 *	link_flap	one end down and up, then the other: the peer's carrier
 *			follows (veth has no carrier of its own to flip)
 *	alloc_fail_refill  atomic page and slab allocations fail (5%), and
 *			page_pool_alloc_pages() (20%, fail_function) while the
 *			traffic runs and programs change: NAPI's refills
 *	alloc_fail_setup   a child changing programs, channels and MTU has
 *			every 5th of its own allocations fail (task filter,
 *			sleeping ones too): the error paths of XDP setup
 *	mixed		all of the above changes, in a seeded random order
 *
 * After each storm: traffic flowed both ways, RX works again both ways
 * within STRESS_RX_BOUND s (a UDP probe), no kernel report since the storm
 * began, the pair deleted with its namespaces still there and no page pool
 * left in them (veth's own pools carry no netdev, so netlink lists them
 * only where a series adds one: the check counts what it can see), and
 * kmemleak clean at the end of the test where it is built.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "netns.h"
#include "page_pool.h"
#include "stress.h"
#include "test.h"

#define NET_ID 150		/* 198.18.150.0/24 */
#define QUEUES 4
#define BLAST_PORT 7300
#define PROBE_PORT 7301

struct vstorm {
	struct veth_pair vp;
	struct pass_progs *pp;
	struct blaster b[2];
	struct kwatch kw;
	int channels;		/* RX and TX queues in use on each end */
	bool up;
};

static bool vs_up(struct vstorm *v, const char *tag, struct pass_progs *pp)
{
	memset(v, 0, sizeof(*v));
	v->b[0].pid = v->b[1].pid = -1;
	v->pp = pp;
	v->channels = QUEUES;
	kwatch_start(&v->kw);
	if (!ASSERT_OK(veth_pair_add_mq(&v->vp, tag, NET_ID, 0, QUEUES), "veth pair"))
		return false;
	v->up = true;
	for (int i = 0; i < 2; i++)
		if (!ASSERT_OK(xdp_set_native(v->vp.ns[i], v->vp.ifname[i], pp->frags),
			       "xdp_pass_frags on both ends"))
			return false;
	/* both ways: each side sends to the other's address */
	return ASSERT_OK(blast_start(&v->b[0], v->vp.ns[0], v->vp.ip4[1], BLAST_PORT, 8000, true),
			 "traffic 0->1") &
	       ASSERT_OK(blast_start(&v->b[1], v->vp.ns[1], v->vp.ip4[0], BLAST_PORT, 8000, true),
			 "traffic 1->0");
}

/* Puts the pair back as vs_up() left it (the storm may have left it half
 * changed), then checks what every storm must leave behind.
 */
static void vs_down(struct vstorm *v)
{
	unsigned long long sent[2] = {}, got[2] = {};
	struct veth_pair *vp = &v->vp;
	double took;

	for (int i = 0; i < 2; i++)
		blast_stop(&v->b[i], &sent[i], &got[i]);
	if (!v->up)
		goto out;
	if (test__verbose())
		printf("    traffic: 0->1 %llu sent, %llu received; 1->0 %llu sent, %llu received\n",
		       sent[0], got[1], sent[1], got[0]);
	ASSERT_GT(sent[0], 0, "datagrams sent 0->1");
	ASSERT_GT(sent[1], 0, "datagrams sent 1->0");
	ASSERT_GT(got[0] + got[1], 0, "datagrams received during the storm");
	/* without programs, veth takes any channel count */
	for (int i = 0; i < 2; i++)
		ASSERT_OK(xdp_set_native(vp->ns[i], vp->ifname[i], -1), "detach");
	for (int i = 0; i < 2; i++) {
		ASSERT_OK(link_set_channels(vp->ns[i], vp->ifname[i], QUEUES, QUEUES),
			  "all channels again");
		ASSERT_OK(link_set_up(vp->ns[i], vp->ifname[i], true), "up again");
		ASSERT_OK(link_set_mtu(vp->ns[i], vp->ifname[i], 1500), "MTU 1500 again");
		ASSERT_OK(xdp_set_native(vp->ns[i], vp->ifname[i], v->pp->frags), "frags again");
	}
	took = udp_probe(vp->ns[0], vp->ns[1], vp->ip4[1], PROBE_PORT, STRESS_RX_BOUND);
	ASSERT_GE(took, 0, "RX works 0->1 within the bound");
	took = udp_probe(vp->ns[1], vp->ns[0], vp->ip4[0], PROBE_PORT, STRESS_RX_BOUND);
	ASSERT_GE(took, 0, "RX works 1->0 within the bound");
	/* the device goes first, the namespaces after: the pools of a dead
	 * device are listed under the namespace's lo until their pages are back
	 */
	ASSERT_OK(sh("ip -n %s link del %s", vp->ns[0], vp->ifname[0]), "delete the pair");
	assert_pools_gone(vp->ns[0], "page pools left in ns 0");
	assert_pools_gone(vp->ns[1], "page pools left in ns 1");
out:
	kwatch_check(&v->kw, "no kernel report");
	veth_pair_del(vp);
	memset(vp, 0, sizeof(*vp));
}

/* ---- the changes; each returns 0, or -errno when the kernel refused ---- */

static int op_prog(void *arg, int step)
{
	struct vstorm *v = arg;
	/* frags, linear (replaces), frags (replaces), none, linear, none */
	static const int seq[] = { 1, 2, 1, 0, 2, 0 };
	int what = seq[step % 6], err = 0;

	for (int i = 0; i < 2; i++)
		err = err ?: xdp_set_native(v->vp.ns[i], v->vp.ifname[i],
					    what == 1 ? v->pp->frags :
					    what == 2 ? v->pp->linear : -1);
	return err;
}

static const int mtus[] = { 9000, 68, 1500, 4000, 576 };

static int op_mtu(void *arg, int step)
{
	struct vstorm *v = arg;
	int err = 0;

	for (int i = 0; i < 2; i++)
		err = err ?: link_set_mtu(v->vp.ns[i], v->vp.ifname[i], mtus[step % 5]);
	return err;
}

/* With programs on both ends veth refuses fewer RX queues than the peer
 * has TX queues (and more TX than the peer's RX): each change goes in two
 * steps, TX shrinks and RX grows first, then both take the new count.
 */
static int set_channels_both(struct vstorm *v, int rx, int tx)
{
	int err = 0;

	for (int i = 0; i < 2; i++)
		err = err ?: link_set_channels(v->vp.ns[i], v->vp.ifname[i], rx, tx);
	return err;
}

static int op_channels(void *arg, int step)
{
	struct vstorm *v = arg;
	static const int seq[] = { 1, 4, 2, 3 };
	int to = seq[step % 4], from = v->channels, err;

	err = set_channels_both(v, to > from ? to : from, to < from ? to : from) ?:
	      set_channels_both(v, to, to);
	if (!err)
		v->channels = to;
	return err;
}

static int op_flap(void *arg, int step)
{
	struct vstorm *v = arg;
	int i = step % 2;

	return link_set_up(v->vp.ns[i], v->vp.ifname[i], false) ?:
	       link_set_up(v->vp.ns[i], v->vp.ifname[i], true);
}

static void one_storm(struct pass_progs *pp, const char *tag, storm_op op, const char *what)
{
	struct vstorm v;

	if (vs_up(&v, tag, pp))
		storm_of(op, &v, what, 4);
	vs_down(&v);
}

/* Seeded, so a failure can be replayed: the seed is printed with -v. A
 * linear program with an MTU above one page is refused (ERANGE, EINVAL,
 * EOPNOTSUPP): that refusal is the kernel being right, not an error.
 */
static void mixed(struct pass_progs *pp)
{
	static const storm_op ops[] = { op_prog, op_mtu, op_channels, op_flap };
	unsigned int seed = (unsigned int)getpid();
	struct storm s;
	struct vstorm v;
	int refused = 0;

	if (test__verbose())
		printf("    seed %u\n", seed);
	if (vs_up(&v, "stvmix", pp)) {
		/* the refusals are expected: keep libbpf from printing each */
		libbpf_print_fn_t print = libbpf_set_print(NULL);

		for (storm_begin(&s); storm_next(&s);) {
			int k = rand_r(&seed) % 4, err = ops[k](&v, rand_r(&seed) % 12);

			if (err == -EINVAL || err == -ERANGE || err == -EOPNOTSUPP)
				refused++;
			else if (err && s.errors++ < 3)
				printf("    op %d, step %d: %s\n", k, s.steps, strerror(-err));
		}
		libbpf_set_print(print);
		if (test__verbose())
			printf("    %d changes, %d refused as expected\n", s.steps, refused);
		ASSERT_EQ(s.errors, 0, "changes failed unexpectedly");
	}
	vs_down(&v);
}

/* ---- allocation failures ---- */

struct refill_ctx {
	struct vstorm *v;
	int steps;
};

/* Under injection: program swaps now and then (they re-create the rings
 * and pools), traffic all along. Errors are allowed here, a broken
 * device afterwards is not.
 */
static void refill_storm(void *arg)
{
	struct refill_ctx *c = arg;
	struct storm s;

	for (storm_begin(&s); storm_next(&s);) {
		op_prog(c->v, s.steps);
		usleep(100000);
	}
	c->steps = s.steps;
}

static void alloc_fail_refill(struct pass_progs *pp)
{
	const char *why = storm_faults_unavailable();
	struct fault_cfg base = { .probability = 5 };
	struct refill_ctx c = {};
	struct storm_faults sf;
	struct vstorm v;

	if (why) {
		test__skip("%s", why);
		return;
	}
	if (vs_up(&v, "stvaf", pp) && storm_faults_on(&sf, &base)) {
		c.v = &v;
		refill_storm(&c);
		storm_faults_off(&sf);
		if (test__verbose())
			printf("    %d program changes\n", c.steps);
	}
	vs_down(&v);
}

/* The child that changes things while its own allocations fail. */
static void setup_child(struct vstorm *v)
{
	struct storm s;

	for (storm_begin(&s); storm_next(&s);) {
		op_prog(v, s.steps);
		op_channels(v, s.steps);
		op_mtu(v, s.steps);
	}
}

static void alloc_fail_setup(struct pass_progs *pp)
{
	const char *why = storm_faults_unavailable();
	struct fault_cfg base = { .probability = 100, .interval = 5, .sleeping_too = true,
				  .ntasks = 1 };
	struct storm_faults sf;
	struct vstorm v;
	int go[2], st = -1;
	pid_t pid;

	if (why) {
		test__skip("%s", why);
		return;
	}
	if (!vs_up(&v, "stvas", pp) || !ASSERT_OK(pipe(go), "pipe"))
		goto out;
	pid = fork();
	if (pid == 0) {
		char b;

		close(go[1]);
		/* armed by the parent before the child starts changing */
		if (read(go[0], &b, 1) == 1)
			setup_child(&v);
		_exit(0);
	}
	close(go[0]);
	base.tasks[0] = pid;
	if (storm_faults_on(&sf, &base)) {
		ASSERT_EQ(write(go[1], "g", 1), 1, "child started");
		waitpid(pid, &st, 0);
		storm_faults_off(&sf);
	}
	close(go[1]);
	if (st == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	/* an allocation failure must fail a call, not kill its caller */
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child survived its failures");
out:
	vs_down(&v);
}

TEST(stress_veth)
{
	struct pass_progs pp;

	if (!pass_progs_load(&pp))
		return;
	kmemleak_forget();
	if (test__start_subtest("prog_replace"))
		one_storm(&pp, "stvprog", op_prog, "program changes");
	if (test__start_subtest("mtu"))
		one_storm(&pp, "stvmtu", op_mtu, "MTU changes");
	if (test__start_subtest("channels"))
		one_storm(&pp, "stvch", op_channels, "channel changes");
	if (test__start_subtest("rings"))
		test__skip("veth has no descriptor rings (no ethtool -G): its queues are resized "
			   "by the channels subtest");
	if (test__start_subtest("link_flap"))
		one_storm(&pp, "stvflap", op_flap, "down/up");
	if (test__start_subtest("alloc_fail_refill"))
		alloc_fail_refill(&pp);
	if (test__start_subtest("alloc_fail_setup"))
		alloc_fail_setup(&pp);
	if (test__start_subtest("mixed"))
		mixed(&pp);
	if (test__start_subtest("kmemleak"))
		kmemleak_check("kmemleak after the veth storms");
	pass_progs_free(&pp);
}
