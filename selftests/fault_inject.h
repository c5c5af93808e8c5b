/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Allocation failures on demand, for one block of a test, through the
 * kernel's fault-injection debugfs (CONFIG_FAULT_INJECTION_DEBUG_FS):
 *
 *	struct fault_cfg c = { .kind = FAULT_PAGE_ALLOC, .probability = 10 };
 *	long injected = fault_run(&c, storm, &ctx);	// armed only around storm()
 *
 * or fault_arm() / fault_disarm() around a block. Whatever happens in
 * between, the injection is turned off again: fault_disarm() on the normal
 * and the failure paths, at exit, and on SIGINT/SIGTERM (the handler
 * disarms, then hands the signal to the one it replaced). Every attribute
 * written is read first and written back on disarm.
 *
 * Which allocations fail, as the kernel decides (should_fail_ex() and its
 * callers in mm/):
 *  - ignore-gfp-wait is Y unless sleeping_too: only allocations that cannot
 *    sleep (GFP_ATOMIC, GFP_NOWAIT: NAPI refills, page_pool's slow path in
 *    softirq) fail. sleeping_too (N) makes GFP_KERNEL ones fail as well,
 *    which is what a writer's own allocations in a tap's write() are.
 *  - tasks: task-filter=Y and /proc/PID/make-it-fail=1 for those tasks only.
 *    The kernel then injects only in task context: softirq and hard irq
 *    never fail, so a filtered injection reaches what runs in the writer's
 *    syscall (tun_get_user()), not a NAPI poll.
 *  - min_order (fail_page_alloc): only allocations of that order and up.
 *  - require_start/require_end (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER):
 *    only allocations with a return address in [start, end) on their
 *    stack, e.g. one function's text (fault_text_range()).
 *  - times counts down as failures are injected; fault_disarm() returns how
 *    many were, so a test can tell that it exercised something at all.
 *
 * FAULT_FUNCTION arms fail_function on one ALLOW_ERROR_INJECTION function
 * (listed in /sys/kernel/debug/fail_function/injectable) to return retval.
 */
#ifndef XDPLAB_FAULT_INJECT_H
#define XDPLAB_FAULT_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum fault_kind { FAULT_SLAB, FAULT_PAGE_ALLOC, FAULT_FUNCTION, FAULT_KIND_NR };

#define FAULT_MAX_TASKS 16
#define FAULT_TIMES_BUDGET 1000000	/* default times: "no limit", but counted */

struct fault_cfg {
	enum fault_kind kind;
	unsigned int probability;	/* percent, 1..100 */
	unsigned int interval;		/* 0, 1: any call may fail; N: every Nth at most */
	long times;			/* most failures to inject; 0: FAULT_TIMES_BUDGET */
	bool sleeping_too;		/* ignore-gfp-wait=N (slab, page_alloc) */
	unsigned int min_order;		/* fail_page_alloc only */
	int ntasks;			/* >0: task-filter on, only tasks[] fail */
	pid_t tasks[FAULT_MAX_TASKS];
	unsigned long require_start;	/* stack filter; unused when end <= start */
	unsigned long require_end;
	const char *func;		/* FAULT_FUNCTION: the function to fail */
	long retval;			/* FAULT_FUNCTION: what it returns */
};

struct fault {
	struct fault_cfg cfg;
	bool armed;
	long times_set;
	struct fault *next;		/* the armed ones, for exit and signals */
	/* values found before arming, written back on disarm */
	char saved[10][32];
};

/* NULL if this kernel can inject faults of kind (mounting debugfs if it is
 * not mounted), or why not, in one line, for test__skip().
 */
const char *fault_unavailable(enum fault_kind kind);
/* Is func listed in /sys/kernel/debug/fail_function/injectable? */
bool fault_function_injectable(const char *func);
/* NULL if fail_function can be armed here without a kernel report of its
 * own, or why not, in one line (x86 with lockdep: see fault_inject.c).
 */
const char *fault_function_self_report(void);
/* Arms cfg. Returns 0, or -1 with errno (and nothing left armed). */
int fault_arm(struct fault *f, const struct fault_cfg *cfg);
/* Disarms (safe on a fault never armed); returns the failures injected
 * while armed, or -1 if the kernel cannot tell (times -1 was asked for).
 */
long fault_disarm(struct fault *f);
/* The failures injected so far, f still armed; -1 if the kernel cannot
 * tell.
 */
long fault_injected(const struct fault *f);
/* Arms cfg, runs fn(arg), disarms. Returns the failures injected, or -1
 * when arming failed (fn did not run).
 */
long fault_run(const struct fault_cfg *cfg, void (*fn)(void *arg), void *arg);
/* The text of function sym, from /proc/kallsyms (root), for require_*:
 * 0, or -1 with errno.
 */
int fault_text_range(const char *sym, unsigned long *start, unsigned long *end);
/* Disarms everything still armed (at exit, on a signal). */
void fault_disarm_all(void);
const char *fault_kind_name(enum fault_kind kind);

#endif
