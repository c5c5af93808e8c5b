/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Holding a CPU away from a kernel thread (a threaded NAPI, a kworker): a
 * SCHED_FIFO busy loop there, with RT throttling and the CPU's fair server
 * off, so that a SCHED_OTHER thread on that CPU does not run at all until
 * the hold ends. Used to keep a NAPI from polling while a test changes
 * what the poll will find.
 */
#ifndef XDPLAB_CPU_HOLD_H
#define XDPLAB_CPU_HOLD_H

#include <sys/types.h>

/* A SCHED_FIFO busy loop on cpu for at most secs, in a child (killed with
 * its parent); its pid, or -1
 */
pid_t rt_hog(int cpu, double secs);

/* The threads of ifname's threaded NAPIs, "napi/<ifname>-<napi id>": up to
 * max pids and their NAPI ids; returns how many. A name is the same for a
 * device of that name in every namespace.
 */
int napi_threads(const char *ifname, pid_t *pids, long *ids, int max);

struct cpu_hold {
	pid_t hog;
	int cpu;
	char rt[32];	/* sched_rt_runtime_us before the hold */
	char fair[32];	/* the CPU's fair server runtime before ("": none) */
};

/* RT throttling and cpu's fair server off, then the loop for at most
 * secs: 0, or -1 with everything put back
 */
int cpu_hold_start(struct cpu_hold *h, int cpu, double secs);
/* The loop stopped and the settings put back; safe to call twice */
void cpu_hold_stop(struct cpu_hold *h);

#endif /* XDPLAB_CPU_HOLD_H */
