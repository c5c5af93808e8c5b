/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the stress_* tests share (stress_common.c): the bounds of a storm,
 * background traffic, attaching programs in a loop, and the checks after
 * each storm.
 *
 * A storm is one kind of change (program, MTU, channels or rings, link,
 * allocation failures, ...) made again and again while traffic flows both
 * ways, bounded by STRESS_STEPS changes and stress_secs() seconds,
 * whichever comes first, but never fewer than STRESS_MIN_STEPS changes (a
 * GEM reopen can take 15 s in a loaded arm64 RT guest). After it:
 *  - no kernel report: what the kernel logged since the storm began
 *    (/dev/kmsg) holds no WARNING, BUG, KASAN, lockdep, RT context,
 *    kmemleak or page-pool stall line (kwatch_*);
 *  - nothing leaked: page pools gone with no page in flight once the
 *    device is (page_pool.h), and kmemleak clean where it is built
 *    (kmemleak_check(), once a test: a scan is slow under TCG);
 *  - RX works again within a stated bound (each test's probe).
 *
 * XDPLAB_STRESS_SECS=N stretches (or shortens) every storm to N seconds.
 */
#ifndef XDPLAB_STRESS_H
#define XDPLAB_STRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fault_inject.h"

#define STRESS_STEPS 2000	/* changes a storm makes at most */
#define STRESS_MIN_STEPS 4	/* and at least, however long they take */
#define STRESS_SECS 10.0	/* default length of a storm */
#define STRESS_RX_BOUND 10.0	/* RX must work again within this (s) */

double stress_secs(void);

/* A storm's bounds and tally: for (storm_begin(&s); storm_next(&s);) ... */
struct storm {
	double end;
	int steps;	/* changes made */
	int errors;	/* changes the kernel refused unexpectedly */
};
void storm_begin(struct storm *s);
bool storm_next(struct storm *s);

/* One change of a storm, step 0, 1, ...: 0, or -errno when refused. */
typedef int (*storm_op)(void *ctx, int step);
/* A storm of op: every change must be accepted (the first refusals are
 * printed), and at least min_steps made within the bounds.
 */
void storm_of(storm_op op, void *ctx, const char *what, int min_steps);

/* ---- the kernel's log ---- */

struct kwatch {
	int fd;		/* /dev/kmsg, positioned at the start; -1 if unreadable */
};
/* Starts watching what the kernel logs from now on. */
void kwatch_start(struct kwatch *w);
/* Asserts that nothing logged since kwatch_start() is a kernel report,
 * printing the ones that are (at most a few), then stops watching. Where
 * /dev/kmsg cannot be read it says so with -v and checks nothing (the
 * vmtest scans the guest's console itself).
 */
bool kwatch_check(struct kwatch *w, const char *what);
/* Is this kernel log line a report (a WARN, a BUG, a lockdep or KASAN
 * splat, an RT context violation, a kmemleak or page-pool stall line)?
 */
bool kernel_report_line(const char *line);

/* kmemleak (CONFIG_DEBUG_KMEMLEAK): forget what it found so far; at the
 * end of a test, scan twice (an object must look unreferenced in two
 * scans) and assert that nothing new is suspected. A no-op where it is not
 * built, or is off.
 */
void kmemleak_forget(void);
void kmemleak_check(const char *what);

/* A step that can hang in the kernel (a reopen after a failed one): if it
 * is not over within secs, a child logs that to the kernel's log and asks
 * for the blocked tasks' stacks (sysrq w), so a hung run says where it
 * hangs. watchdog_stop() ends it (0 if the step finished in time).
 */
pid_t watchdog_start(double secs, const char *what);
void watchdog_stop(pid_t pid);

/* ---- allocation failures during a storm ---- */

/* The failures of a refill storm: slab and page allocations as base says
 * (kind ignored), and, where fail_function can, page_pool_alloc_pages()
 * returning NULL at four times base's probability: a page-pool refill
 * that fails without any other allocation of the guest failing.
 */
struct storm_faults {
	struct fault slab, page, pp;
	bool pp_armed;
};
/* Arms them (asserting each); false if any failed (nothing left armed). */
bool storm_faults_on(struct storm_faults *sf, const struct fault_cfg *base);
/* Disarms, prints how many of each were injected, asserts some were. */
void storm_faults_off(struct storm_faults *sf);
/* Why this kernel cannot inject them, or NULL. */
const char *storm_faults_unavailable(void);

/* ---- traffic ---- */

/* A child in namespace ns that sends UDP to dst (IPv4 or IPv6) port port,
 * of sizes up to max_len, with UDP GSO (UDP_SEGMENT) superframes among them
 * when gso, paced so that a TCG guest still has time for the storm; it
 * also drains a socket on its own side's port, so that the peer's traffic
 * is received, not refused. It stops when told, or after 10 minutes, or
 * with its parent.
 */
struct blaster {
	pid_t pid;
	unsigned long long *counts;	/* shared: [0] sent, [1] received */
};
int blast_start(struct blaster *b, const char *ns, const char *dst, int port,
		int max_len, bool gso);
/* Stops it; sent and received (either may be NULL) say what it did. */
void blast_stop(struct blaster *b, unsigned long long *sent, unsigned long long *received);

/* Sends a datagram from sns to dst:port every 100 ms until one arrives in
 * rns (a socket bound there), for at most timeout s. Returns the seconds
 * it took, or -1.
 */
double udp_probe(const char *sns, const char *rns, const char *dst, int port, double timeout);

/* ---- links, through ioctls (no fork: a task under fault injection can
 * run them, and they cost little under TCG); ns NULL: here. 0 or -errno.
 */
int link_set_mtu(const char *ns, const char *ifname, int mtu);
int link_set_up(const char *ns, const char *ifname, bool up);
/* ethtool -L rx RX tx TX (combined, for a driver that has those, RX) */
int link_set_channels(const char *ns, const char *ifname, int rx, int tx);
/* ethtool -g / -G: rx and tx descriptors */
int link_get_rings(const char *ns, const char *ifname, int *rx, int *tx);
int link_set_rings(const char *ns, const char *ifname, int rx, int tx);
/* /sys/class/net/IFNAME/carrier is 1 within timeout s (here). */
bool link_wait_carrier(const char *ifname, double timeout);

/* ---- programs ---- */

/* Attaches fd (replacing what is there), or detaches with fd < 0, in
 * native mode, on ifname in ns (NULL: here). 0 or -errno.
 */
int xdp_set_native(const char *ns, const char *ifname, int fd);

/* The two xdp_pass entry points, loaded once for a test. */
struct pass_progs {
	struct xdp_pass_bpf *skel;
	int frags, linear;	/* program fds */
};
bool pass_progs_load(struct pass_progs *p);
void pass_progs_free(struct pass_progs *p);

#endif
