// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fault-injection helper itself (fault_inject.h), on a kernel that has
 * fault injection (the FAULT=1 vmtest guest); skips elsewhere, saying why.
 *
 *	restores	what arming wrote is what debugfs shows, and disarming
 *			puts back every value found before
 *	task_filter	with tasks, only those tasks' allocations fail: a child
 *			whose socket() calls fail while the test's own do not
 *	signal		a process killed by SIGTERM while armed disarms on its
 *			way out
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault_inject.h"
#include "test.h"

#define SLAB "/sys/kernel/debug/failslab/"

static void read_attr(const char *name, char *buf, size_t len)
{
	FILE *f = fopen(name, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

static void restores(void)
{
	static const char *const names[] = { "probability", "interval", "times", "verbose",
					     "task-filter", "ignore-gfp-wait" };
	char before[6][32], v[32];
	struct fault_cfg c = { .kind = FAULT_SLAB, .probability = 1, .interval = 1000000,
			       .times = 3, .sleeping_too = true };
	struct fault f;

	for (int i = 0; i < 6; i++) {
		char path[96];

		snprintf(path, sizeof(path), SLAB "%s", names[i]);
		read_attr(path, before[i], sizeof(before[i]));
	}
	/* interval 10^6 at 1%: armed, but practically nothing fails */
	if (!ASSERT_OK(fault_arm(&f, &c), "arm"))
		return;
	read_attr(SLAB "probability", v, sizeof(v));
	ASSERT_STRSTR(v, "1", "probability while armed");
	read_attr(SLAB "ignore-gfp-wait", v, sizeof(v));
	ASSERT_STRSTR(v, "N", "sleeping allocations too");
	read_attr(SLAB "times", v, sizeof(v));
	ASSERT_STRSTR(v, "3", "times while armed");
	ASSERT_GE(fault_disarm(&f), 0, "disarm");
	for (int i = 0; i < 6; i++) {
		char path[96];

		snprintf(path, sizeof(path), SLAB "%s", names[i]);
		read_attr(path, v, sizeof(v));
		if (!test__report(!strcmp(v, before[i]), __FILE__, __LINE__, names[i],
				  "%s after disarm, %s before", v, before[i]))
			break;
	}
	ASSERT_EQ(fault_disarm(&f), 0, "a second disarm does nothing");
}

/* Sockets made and closed: each socket() allocates its sock with
 * GFP_KERNEL (failslab with sleeping_too). Returns how many failed.
 */
static int sockets(int n)
{
	int failed = 0;

	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		if (fd < 0)
			failed++;
		else
			close(fd);
	}
	return failed;
}

static void task_filter(void)
{
	struct fault_cfg c = { .kind = FAULT_SLAB, .probability = 50, .sleeping_too = true,
			       .ntasks = 1 };
	int *child_failed = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int go[2], own_failed = -1;
	struct fault f;
	long injected = -1;
	pid_t pid;

	if (!ASSERT_TRUE(child_failed != MAP_FAILED, "shared page") ||
	    !ASSERT_OK(pipe(go), "pipe"))
		return;
	pid = fork();
	if (pid == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) == 1)
			*child_failed = sockets(200);
		_exit(0);
	}
	close(go[0]);
	c.tasks[0] = pid;
	if (ASSERT_OK(fault_arm(&f, &c), "arm for the child")) {
		ASSERT_EQ(write(go[1], "g", 1), 1, "child started");
		own_failed = sockets(200);
		waitpid(pid, NULL, 0);
		injected = fault_disarm(&f);
	}
	close(go[1]);
	waitpid(pid, NULL, 0);
	if (test__verbose())
		printf("    child: %d of 200 sockets failed; here: %d; injected %ld\n",
		       *child_failed, own_failed, injected);
	ASSERT_GT(*child_failed, 0, "the child's allocations failed");
	ASSERT_EQ(own_failed, 0, "the test's own did not");
	ASSERT_GE(injected, *child_failed, "failures counted");
	munmap(child_failed, 4096);
}

static void on_signal(void)
{
	struct fault_cfg c = { .kind = FAULT_SLAB, .probability = 1, .interval = 1000000 };
	char v[32];
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct fault f;

		/* SIGTERM as the test inherited it: the helper's handler
		 * goes in front of the runner's
		 */
		if (fault_arm(&f, &c))
			_exit(1);
		raise(SIGTERM);
		_exit(2);	/* not reached */
	}
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "armed child died of SIGTERM");
	read_attr(SLAB "probability", v, sizeof(v));
	if (!ASSERT_STRSTR(v, "0", "probability after the child's death")) {
		FILE *f = fopen(SLAB "probability", "w");

		if (f) {
			fputs("0", f);	/* do not leave the guest failing */
			fclose(f);
		}
	}
}

TEST(stress_fault_helper)
{
	const char *why = fault_unavailable(FAULT_SLAB);

	if (why) {
		test__skip("%s", why);
		return;
	}
	if (test__start_subtest("restores"))
		restores();
	if (test__start_subtest("task_filter"))
		task_filter();
	if (test__start_subtest("signal"))
		on_signal();
}
