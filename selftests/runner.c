// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The selftest runner: runs every registered test (or those matching -t),
 * prints a line per result and ends with "N passed, N failed, N skipped".
 * Exit status 1 when anything failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "netns.h"
#include "test.h"

enum result { RES_NONE, RES_OK, RES_FAIL, RES_SKIP };

static struct test_def *tests, **tests_tail = &tests;
static const char *filters[16];
static int nr_filters;
static bool verbose, list_only;
static int passed, failed, skipped;

static struct {
	const struct test_def *test;
	char sub[128];		/* "" while no subtest runs */
	bool had_subtests;
	enum result res;
	char skip_reason[256];
} cur;

void test__register(struct test_def *t)
{
	*tests_tail = t;
	tests_tail = &t->next;
}

bool test__verbose(void)
{
	return verbose;
}

static double bound_scale(void)
{
	static double scale;
	const char *env = getenv("XDPLAB_BOUND_SCALE");
	char line[256];
	FILE *f;

	if (scale)
		return scale;
	scale = 1;
	if (env && *env) {
		scale = strtod(env, NULL);
		if (scale < 1)
			scale = 1;
		return scale;
	}
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return scale;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, " kasan_report\n")) {
			scale = 5;
			break;
		}
	}
	fclose(f);
	return scale;
}

double test__bound(double secs)
{
	return secs * bound_scale();
}

static bool selected(const char *test, const char *sub)
{
	char full[256];

	if (!nr_filters)
		return true;
	snprintf(full, sizeof(full), sub ? "%s/%s" : "%s", test, sub);
	for (int i = 0; i < nr_filters; i++) {
		const char *f = filters[i];
		size_t n = strcspn(f, "/");

		/* "test" selects all its subtests, "test/sub" one of them. */
		if (!sub && (!fnmatch(f, full, 0) ||
			     (f[n] == '/' && !strncmp(f, test, n) && !test[n])))
			return true;
		if (sub && (!fnmatch(f, full, 0) || !fnmatch(f, test, 0)))
			return true;
	}
	return false;
}

static void end_unit(void)
{
	const char *name = cur.test->name;
	char full[300];

	if (cur.res == RES_NONE)
		return;
	snprintf(full, sizeof(full), cur.sub[0] ? "%s/%s" : "%s", name, cur.sub);
	switch (cur.res) {
	case RES_OK:
		passed++;
		printf("ok   %s\n", full);
		break;
	case RES_FAIL:
		failed++;
		printf("FAIL %s\n", full);
		break;
	case RES_SKIP:
		skipped++;
		printf("skip %s: %s\n", full, cur.skip_reason);
		break;
	default:
		break;
	}
	fflush(stdout);
	cur.res = RES_NONE;
	cur.sub[0] = '\0';
}

bool test__start_subtest(const char *name)
{
	/* The test body before its first subtest is no unit of its own, unless
	 * it failed or skipped.
	 */
	if (!cur.had_subtests && cur.res == RES_OK)
		cur.res = RES_NONE;
	end_unit();
	cur.had_subtests = true;
	if (!selected(cur.test->name, name))
		return false;
	snprintf(cur.sub, sizeof(cur.sub), "%s", name);
	cur.res = RES_OK;
	return true;
}

void test__skip(const char *fmt, ...)
{
	va_list ap;

	if (cur.res == RES_FAIL)
		return;
	va_start(ap, fmt);
	vsnprintf(cur.skip_reason, sizeof(cur.skip_reason), fmt, ap);
	va_end(ap);
	cur.res = RES_SKIP;
}

void test__fail(void)
{
	cur.res = RES_FAIL;
}

bool test__report(bool ok, const char *file, int line, const char *name,
		  const char *fmt, ...)
{
	va_list ap;

	if (!ok || verbose) {
		const char *base = strrchr(file, '/');

		fprintf(stdout, "  %s:%d: %s %s", base ? base + 1 : file, line,
			name, ok ? "ok: " : "FAILED: ");
		va_start(ap, fmt);
		vfprintf(stdout, fmt, ap);
		va_end(ap);
		fputc('\n', stdout);
	}
	if (!ok)
		cur.res = RES_FAIL;
	return ok;
}

static char build_dir[PATH_MAX / 2];

const char *test__build_dir(void)
{
	return build_dir;
}

const char *test__path(const char *name)
{
	static char paths[8][PATH_MAX];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", build_dir, name);
	return p;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void on_signal(int sig)
{
	netns_cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(const char *prog)
{
	printf("Usage: %s [-v] [-l] [-t PATTERN]...\n"
	       "Runs the xdplab selftests (as root).\n\n"
	       "  -t PATTERN  run tests or test/subtest names matching the glob\n"
	       "              (repeatable), e.g. -t 'prog_*' -t live_veth/udp\n"
	       "  -l          list the tests instead of running them\n"
	       "  -v          print passing assertions, commands and libbpf logs\n",
	       prog);
}

static void mount_bpffs(void)
{
	struct statfs st;

	/* The loader tests pin; a fresh VM or container may not have bpffs. */
	if (statfs("/sys/fs/bpf", &st) || st.f_type != 0xcafe4a11)
		mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
}

int main(int argc, char **argv)
{
	struct test_def *t;
	int opt;

	while ((opt = getopt(argc, argv, "vlt:h")) != -1) {
		switch (opt) {
		case 'v':
			verbose = netns_verbose = true;
			break;
		case 'l':
			list_only = true;
			break;
		case 't':
			if (nr_filters < 16)
				filters[nr_filters++] = optarg;
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!list_only && geteuid() != 0) {
		fprintf(stderr, "test_xdplab: must run as root (hint: sudo make test)\n");
		return 2;
	}

	{
		char exe[PATH_MAX];

		if (!realpath("/proc/self/exe", exe) ||
		    snprintf(build_dir, sizeof(build_dir), "%s", dirname(exe)) >=
		    (int)sizeof(build_dir)) {
			fprintf(stderr, "test_xdplab: cannot tell where I am\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(libbpf_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(netns_cleanup_all);
	if (!list_only) {
		netns_reap_stale();
		mount_bpffs();
	}

	for (t = tests; t; t = t->next) {
		memset(&cur, 0, sizeof(cur));
		cur.test = t;
		if (list_only) {
			/* Subtests are only known by running the test. */
			if (selected(t->name, NULL))
				printf("%s\n", t->name);
			continue;
		}
		if (!selected(t->name, NULL))
			continue;
		cur.res = RES_OK;
		t->fn();
		end_unit();
		netns_cleanup_all();
	}
	if (!list_only)
		printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
