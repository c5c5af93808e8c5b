/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where the CPU time went between two moments, from the "cpu" line of
 * /proc/stat: the way the macb thread split it (user, system, softirq,
 * idle), as percent of one core, so 200 means both cores of a 2-core box.
 * Machine-wide: whatever else runs on the machine is in the figures too.
 */
#ifndef XDPLAB_CPUSTAT_H
#define XDPLAB_CPUSTAT_H

struct cpustat {
	unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
	double t;		/* CLOCK_MONOTONIC seconds when read */
};

struct cpusplit {
	double user;		/* user + nice */
	double system;
	double softirq;
	double idle;		/* idle + iowait */
	double other;		/* hard irq + steal */
	double wall;		/* seconds between the two reads */
};

/* Reads the machine-wide line of /proc/stat. Returns 0 or -1. */
int cpustat_read(struct cpustat *s);
/* The split between a and b, in percent of one core. */
void cpustat_split(const struct cpustat *a, const struct cpustat *b, struct cpusplit *out);

#endif
