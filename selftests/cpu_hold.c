// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Holding a CPU with a SCHED_FIFO loop: cpu_hold.h */
#define _GNU_SOURCE
#include <dirent.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "cli.h"
#include "cpu_hold.h"
#include "netns.h"

#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"
/* 6.12's fair server gives CFS tasks 50 ms a second under any RT load */
#define FAIR_SERVER	"/sys/kernel/debug/sched/fair_server/cpu%d/runtime"

pid_t rt_hog(int cpu, double secs)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;
	double end;
	pid_t pid = fork();

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(1);
	for (end = now_secs() + secs; now_secs() < end;)
		;
	_exit(0);
}

static int first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, len, f);

	if (f)
		fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int napi_threads(const char *ifname, pid_t *pids, long *ids, int max)
{
	char prefix[IF_NAMESIZE + 8], comm[64], path[300];
	struct dirent *de;
	DIR *d = opendir("/proc");
	int n = 0;

	if (!d)
		return 0;
	snprintf(prefix, sizeof(prefix), "napi/%s-", ifname);
	while (n < max && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (first_line(path, comm, sizeof(comm)) || strncmp(comm, prefix, strlen(prefix)))
			continue;
		pids[n] = atoi(de->d_name);
		ids[n++] = atol(comm + strlen(prefix));
	}
	closedir(d);
	return n;
}

int cpu_hold_start(struct cpu_hold *h, int cpu, double secs)
{
	char fair[128];

	memset(h, 0, sizeof(*h));
	h->hog = -1;
	h->cpu = cpu;
	snprintf(fair, sizeof(fair), FAIR_SERVER, cpu);
	if (first_line(RT_RUNTIME, h->rt, sizeof(h->rt)))
		return -1;
	first_line(fair, h->fair, sizeof(h->fair));
	if (sh("echo -1 > " RT_RUNTIME) || (*h->fair && sh("echo 0 > %s", fair)))
		goto undo;
	h->hog = rt_hog(cpu, secs);
	if (h->hog < 0)
		goto undo;
	/* the loop must have taken the CPU: it has if it still runs */
	usleep(200000);
	if (waitpid(h->hog, NULL, WNOHANG) == 0)
		return 0;
	h->hog = -1;
undo:
	cpu_hold_stop(h);
	return -1;
}

void cpu_hold_stop(struct cpu_hold *h)
{
	char fair[128];

	if (h->hog > 0) {
		kill(h->hog, SIGKILL);
		waitpid(h->hog, NULL, 0);
		h->hog = -1;
	}
	snprintf(fair, sizeof(fair), FAIR_SERVER, h->cpu);
	if (*h->fair)
		sh("echo %s > %s", h->fair, fair);
	if (*h->rt)
		sh("echo %s > " RT_RUNTIME, h->rt);
	*h->fair = *h->rt = 0;
}
