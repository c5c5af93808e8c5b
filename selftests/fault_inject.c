// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Fault injection around one block of a test; see fault_inject.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fault_inject.h"

#define DEBUGFS "/sys/kernel/debug"
#define DEBUGFS_MAGIC 0x64626720

static const char *const dir_of[FAULT_KIND_NR] = {
	[FAULT_SLAB] = DEBUGFS "/failslab",
	[FAULT_PAGE_ALLOC] = DEBUGFS "/fail_page_alloc",
	[FAULT_FUNCTION] = DEBUGFS "/fail_function",
};
static const char *const config_of[FAULT_KIND_NR] = {
	[FAULT_SLAB] = "CONFIG_FAILSLAB",
	[FAULT_PAGE_ALLOC] = "CONFIG_FAIL_PAGE_ALLOC",
	[FAULT_FUNCTION] = "CONFIG_FAIL_FUNCTION",
};

/* The attributes saved and restored, in this order (slot in f->saved). */
enum { A_PROB, A_INTERVAL, A_TIMES, A_VERBOSE, A_TASKS, A_GFP_WAIT, A_MIN_ORDER, A_SPACE,
       A_REQ_START, A_REQ_END, A_NR };
static const char *const attr_name[A_NR] = {
	"probability", "interval", "times", "verbose", "task-filter", "ignore-gfp-wait",
	"min-order", "space", "require-start", "require-end",
};

_Static_assert(A_NR <= sizeof(((struct fault *)0)->saved) / sizeof(((struct fault *)0)->saved[0]),
	       "struct fault's saved[] holds every attribute");

static struct fault *armed_list;
static struct sigaction old_int, old_term;
static bool handlers_set;

const char *fault_kind_name(enum fault_kind kind)
{
	return kind < FAULT_KIND_NR ? dir_of[kind] + sizeof(DEBUGFS) : "?";
}

static bool attr_applies(const struct fault_cfg *cfg, int a)
{
	enum fault_kind kind = cfg->kind;

	/* only with CONFIG_FAULT_INJECTION_STACKTRACE_FILTER: touched when asked */
	if (a == A_REQ_START || a == A_REQ_END)
		return cfg->require_end > cfg->require_start;
	if (a == A_GFP_WAIT)
		return kind != FAULT_FUNCTION;
	if (a == A_MIN_ORDER)
		return kind == FAULT_PAGE_ALLOC;
	return true;
}

/* Plain open/write/close: also called from the signal handler. */
static int put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static int get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int put_attr(enum fault_kind kind, const char *attr, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir_of[kind], attr);
	return put(path, val);
}

const char *fault_unavailable(enum fault_kind kind)
{
	static char why[200];
	struct statfs st;
	struct stat sb;

	if (kind >= FAULT_KIND_NR)
		return "unknown fault kind";
	if ((statfs(DEBUGFS, &st) || st.f_type != DEBUGFS_MAGIC) &&
	    mount("debugfs", DEBUGFS, "debugfs", 0, NULL)) {
		snprintf(why, sizeof(why), "no debugfs at " DEBUGFS " (%s): fault injection needs it",
			 strerror(errno));
		return why;
	}
	if (stat(dir_of[kind], &sb)) {
		snprintf(why, sizeof(why),
			 "kernel without %s / CONFIG_FAULT_INJECTION_DEBUG_FS (no %s; "
			 "the FAULT=1 vmtest guest has them)", config_of[kind], dir_of[kind]);
		return why;
	}
	return NULL;
}

bool fault_function_injectable(const char *func)
{
	char line[256];
	size_t n = strlen(func);
	bool found = false;
	FILE *f;

	if (fault_unavailable(FAULT_FUNCTION))
		return false;
	f = fopen(DEBUGFS "/fail_function/injectable", "r");
	if (!f)
		return false;
	/* "function<TAB>type" */
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, func, n) && (line[n] == '\t' || line[n] == ' ');
	fclose(f);
	return found;
}

/*
 * fail_function hooks its function with a kprobe, which on x86 runs from
 * the int3 handler: lockdep counts that as NMI context. 6.12's
 * should_fail_ex() then calls get_random_u32_below(), which takes the
 * per-CPU entropy batch's local lock that failslab's process-context
 * calls take too, and lockdep reports "inconsistent {INITIAL USE} ->
 * {IN-NMI} usage" of batched_entropy_u8.lock on the first hit and turns
 * itself off for the rest of the boot. The report is the injector's, not
 * the code under test's, so a DEBUG=1 FAULT=1 guest leaves fail_function
 * out rather than fail on it and lose lockdep.
 */
const char *fault_function_self_report(void)
{
	struct utsname u;

	if (access("/proc/lockdep", F_OK) || uname(&u) || strcmp(u.machine, "x86_64"))
		return NULL;
	return "lockdep is on and this is x86_64: fail_function's int3 kprobe draws "
	       "should_fail_ex()'s random number in NMI context, which lockdep reports "
	       "(batched_entropy_u8.lock, {IN-NMI}) and then switches itself off";
}

static void unlink_armed(struct fault *f)
{
	for (struct fault **p = &armed_list; *p; p = &(*p)->next) {
		if (*p == f) {
			*p = f->next;
			break;
		}
	}
	f->next = NULL;
}

static void on_signal(int sig)
{
	fault_disarm_all();
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	raise(sig);
}

static void set_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	if (handlers_set)
		return;
	handlers_set = true;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	atexit(fault_disarm_all);
}

static int make_it_fail(pid_t pid, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/make-it-fail", (int)pid);
	return put(path, on ? "1" : "0");
}

int fault_arm(struct fault *f, const struct fault_cfg *cfg)
{
	enum fault_kind k = cfg->kind;
	char val[64], path[128];
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	if (fault_unavailable(k) || cfg->probability < 1 || cfg->probability > 100 ||
	    cfg->ntasks < 0 || cfg->ntasks > FAULT_MAX_TASKS || (k == FAULT_FUNCTION && !cfg->func)) {
		errno = EINVAL;
		return -1;
	}
	for (int a = 0; a < A_NR; a++) {
		snprintf(path, sizeof(path), "%s/%s", dir_of[k], attr_name[a]);
		if (attr_applies(cfg, a) && get(path, f->saved[a], sizeof(f->saved[a])))
			return -1;
	}
	set_handlers();
	/* On the list before the first write: a signal from here on disarms. */
	f->armed = true;
	f->next = armed_list;
	armed_list = f;
	f->times_set = cfg->times > 0 ? cfg->times : FAULT_TIMES_BUDGET;
	if (k == FAULT_FUNCTION) {
		err |= put_attr(k, "inject", cfg->func);
		snprintf(path, sizeof(path), "%s/retval", cfg->func);
		snprintf(val, sizeof(val), "%#lx", (unsigned long)cfg->retval);
		err |= put_attr(k, path, val);
	}
	for (int i = 0; i < cfg->ntasks; i++)
		err |= make_it_fail(cfg->tasks[i], 1);
	err |= put_attr(k, "verbose", "0");	/* no stack dump a failure */
	err |= put_attr(k, "space", "0");
	err |= put_attr(k, "task-filter", cfg->ntasks ? "Y" : "N");
	if (attr_applies(cfg, A_GFP_WAIT))
		err |= put_attr(k, "ignore-gfp-wait", cfg->sleeping_too ? "N" : "Y");
	if (attr_applies(cfg, A_MIN_ORDER)) {
		snprintf(val, sizeof(val), "%u", cfg->min_order);
		err |= put_attr(k, "min-order", val);
	}
	if (attr_applies(cfg, A_REQ_START)) {
		snprintf(val, sizeof(val), "%#lx", cfg->require_start);
		err |= put_attr(k, "require-start", val);
		snprintf(val, sizeof(val), "%#lx", cfg->require_end);
		err |= put_attr(k, "require-end", val);
	}
	snprintf(val, sizeof(val), "%u", cfg->interval ? cfg->interval : 1);
	err |= put_attr(k, "interval", val);
	snprintf(val, sizeof(val), "%ld", f->times_set);
	err |= put_attr(k, "times", val);
	/* last: nothing fails before the rest is in place */
	snprintf(val, sizeof(val), "%u", cfg->probability);
	err |= put_attr(k, "probability", val);
	if (err) {
		int e = errno;

		fault_disarm(f);
		errno = e ? e : EIO;
		return -1;
	}
	return 0;
}

long fault_injected(const struct fault *f)
{
	char left[32] = "";
	char path[128];

	if (!f->armed)
		return 0;
	snprintf(path, sizeof(path), "%s/times", dir_of[f->cfg.kind]);
	if (get(path, left, sizeof(left)) || atol(left) < 0)
		return -1;
	return f->times_set - atol(left);
}

long fault_disarm(struct fault *f)
{
	enum fault_kind k = f->cfg.kind;
	long injected;

	if (!f->armed)
		return 0;
	/* first: nothing fails from here on */
	put_attr(k, "probability", "0");
	injected = fault_injected(f);
	for (int i = 0; i < f->cfg.ntasks; i++)
		make_it_fail(f->cfg.tasks[i], 0);	/* the task may be gone */
	if (k == FAULT_FUNCTION) {
		char rm[128];

		snprintf(rm, sizeof(rm), "!%s", f->cfg.func);
		put_attr(k, "inject", rm);
	}
	/* back to what was there, probability last */
	for (int a = A_NR - 1; a >= 0; a--)
		if (attr_applies(&f->cfg, a) && f->saved[a][0])
			put_attr(k, attr_name[a], f->saved[a]);
	f->armed = false;
	unlink_armed(f);
	return injected;
}

int fault_text_range(const char *sym, unsigned long *start, unsigned long *end)
{
	char line[256], name[128], type;
	unsigned long addr, lo = 0, hi = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return -1;
	/* sorted by address: the first text symbol above sym's ends it */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %127s", &addr, &type, name) != 3)
			continue;
		if (!lo && (type == 't' || type == 'T') && !strcmp(name, sym))
			lo = addr;
		else if (lo && addr > lo) {
			hi = addr;
			break;
		}
	}
	fclose(f);
	if (!lo || !hi) {
		errno = ENOENT;
		return -1;
	}
	*start = lo;
	*end = hi;
	return 0;
}

void fault_disarm_all(void)
{
	while (armed_list)
		fault_disarm(armed_list);
}

long fault_run(const struct fault_cfg *cfg, void (*fn)(void *arg), void *arg)
{
	struct fault f;

	if (fault_arm(&f, cfg))
		return -1;
	fn(arg);
	return fault_disarm(&f);
}
