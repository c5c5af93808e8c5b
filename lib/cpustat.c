// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cpustat.h"

int cpustat_read(struct cpustat *s)
{
	struct timespec ts;
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &s->user, &s->nice,
		   &s->system, &s->idle, &s->iowait, &s->irq, &s->softirq, &s->steal);
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->t = ts.tv_sec + ts.tv_nsec / 1e9;
	return n >= 7 ? 0 : -1;
}

void cpustat_split(const struct cpustat *a, const struct cpustat *b, struct cpusplit *out)
{
	double hz = sysconf(_SC_CLK_TCK), wall = b->t - a->t;
	/* ticks -> percent of one core over the interval */
	double k = wall > 0 && hz > 0 ? 100.0 / (hz * wall) : 0;

	out->user = k * ((b->user - a->user) + (b->nice - a->nice));
	out->system = k * (b->system - a->system);
	out->softirq = k * (b->softirq - a->softirq);
	out->idle = k * ((b->idle - a->idle) + (b->iowait - a->iowait));
	out->other = k * ((b->irq - a->irq) + (b->steal - a->steal));
	out->wall = wall;
}
