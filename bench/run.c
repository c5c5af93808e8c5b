// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Starting and stopping what a scenario runs (iperf3, xdplab, xdp-bench)
 * inside its namespaces, and reading what they print. A child gets its own
 * process group, so a Ctrl-C reaches only the bench, which then stops its
 * children in order: xdplab gets a SIGINT and detaches, as at a user's
 * Ctrl-C, before the namespaces go.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "netns.h"

#define MAX_CHILDREN 16
static pid_t live[MAX_CHILDREN];

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void track(pid_t pid, bool add)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (add && !live[i]) {
			live[i] = pid;
			return;
		}
		if (!add && live[i] == pid) {
			live[i] = 0;
			return;
		}
	}
}

void children_kill_all(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (!live[i])
			continue;
		kill(-live[i], SIGKILL);
		kill(live[i], SIGKILL);
		waitpid(live[i], NULL, 0);
		live[i] = 0;
	}
}

int child_start(struct child *c, const char *ns, char *const argv[])
{
	pid_t parent = getpid();
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	if (ns)
		n = snprintf(c->cmd, sizeof(c->cmd), "ip netns exec %s", ns);
	for (int i = 0; argv[i] && n < sizeof(c->cmd); i++)
		n += snprintf(c->cmd + n, sizeof(c->cmd) - n, "%s%s", n ? " " : "", argv[i]);
	if (bench.verbose)
		fprintf(stderr, "+ %s\n", c->cmd);
	c->out = memfd_create("bench-out", MFD_CLOEXEC);
	c->err = memfd_create("bench-err", MFD_CLOEXEC);
	if (c->out < 0 || c->err < 0)
		goto fail;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		goto fail;
	if (c->pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		dup2(c->out, 1);
		dup2(c->err, 2);
		if (ns && netns_enter(ns) < 0) {
			fprintf(stderr, "cannot enter namespace %s: %s\n", ns, strerror(errno));
			_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(c->pid, c->pid);
	track(c->pid, true);
	return 0;
fail:
	child_close(c);
	return -1;
}

static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

bool child_exited(struct child *c)
{
	int st;

	if (c->reaped || c->pid <= 0)
		return true;
	if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
		c->status = exit_code(st);
		c->reaped = true;
		track(c->pid, false);
	}
	return c->reaped;
}

static void child_kill(struct child *c)
{
	int st;

	if (c->reaped || c->pid <= 0)
		return;
	kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	if (waitpid(c->pid, &st, 0) == c->pid)
		c->status = exit_code(st);
	c->reaped = true;
	track(c->pid, false);
}

int child_wait(struct child *c, double timeout)
{
	double end = now() + timeout;

	while (!child_exited(c)) {
		if (bench_stop || now() > end) {
			child_kill(c);
			return -1;
		}
		usleep(10000);
	}
	return c->status;
}

int child_stop(struct child *c)
{
	double end = now() + 5;

	if (c->reaped || c->pid <= 0)
		return c->status;
	kill(c->pid, SIGINT);
	while (!child_exited(c)) {
		if (now() > end) {
			child_kill(c);
			return -1;
		}
		usleep(5000);
	}
	return c->status;
}

char *child_output(const struct child *c, int which)
{
	int fd = c->pid > 0 ? (which == 1 ? c->out : c->err) : -1;
	off_t len = fd > 0 ? lseek(fd, 0, SEEK_END) : 0;
	char *buf = malloc(len > 0 ? len + 1 : 1);
	ssize_t got = 0;

	if (!buf)
		return NULL;
	if (len > 0)
		got = pread(fd, buf, len, 0);
	buf[got > 0 ? got : 0] = '\0';
	return buf;
}

/* Skips lines that say nothing about the failure (libxdp's bpffs chatter,
 * "Usage:" banners) and prefers lines that say error or failed.
 */
void child_errline(const struct child *c, char *buf, size_t len)
{
	char *text = child_output(c, 2), *best = NULL, *line, *save = NULL;
	int best_score = -1;

	if (text && !*text) {
		free(text);
		text = child_output(c, 1);
	}
	buf[0] = '\0';
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int score = 1;

		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line)
			continue;
		if (strcasestr(line, "error") || strcasestr(line, "fail") ||
		    strcasestr(line, "refus") || strcasestr(line, "too large") ||
		    strcasestr(line, "cannot") || strcasestr(line, "unable"))
			score = 2;
		if (strstr(line, "bpffs") || strstr(line, "dispatcher"))
			score = 0;
		if (score >= best_score) {
			best = line;
			best_score = score;
		}
	}
	if (best)
		snprintf(buf, len, "%s", best);
	free(text);
}

void child_close(struct child *c)
{
	if (c->pid > 0 && !c->reaped)
		child_kill(c);
	if (c->out > 0)
		close(c->out);
	if (c->err > 0)
		close(c->err);
	c->out = c->err = -1;
}

int xdp_wait_attached(const char *ns, const char *ifname, struct child *c, double timeout)
{
	double end = now() + timeout;
	int saved = ns ? netns_enter(ns) : -1, ret = -1;
	__u32 id = 0;

	if (ns && saved < 0)
		return -1;
	while (now() < end && !bench_stop) {
		if (!bpf_xdp_query_id(if_nametoindex(ifname), 0, &id) && id) {
			ret = 0;
			break;
		}
		if (child_exited(c))
			break;
		usleep(5000);
	}
	netns_leave(saved);
	return ret;
}

int xdplab_start(struct child *c, struct point *p, const char *ns, const char *ifname,
		 char *const args[])
{
	char *argv[24] = { bench.xdplab };
	char why[256];
	int i;

	for (i = 0; args[i] && i < 22; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	if (child_start(c, ns, argv)) {
		point_err(p, "cannot start %s", bench.xdplab);
		return -1;
	}
	point_cmd(p, "%s &", c->cmd);
	if (!xdp_wait_attached(ns, ifname, c, 15))
		return 0;
	if (bench_stop) {
		child_close(c);
		return -1;
	}
	child_wait(c, 5);
	child_errline(c, why, sizeof(why));
	point_err(p, "xdplab %s refused (exit %d): %s", args[0], c->status,
		  why[0] ? why + (strncmp(why, "xdplab: ", 8) ? 0 : 8) : "no message");
	child_close(c);
	return -1;
}

char *xdplab_finish(struct child *c)
{
	char *out;

	child_stop(c);
	out = child_output(c, 1);
	child_close(c);
	return out;
}

static const char *find_key(const char *from, const char *to, const char *key)
{
	char pat[96];
	size_t n = snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *p = from;

	while ((p = strstr(p, pat)) && (!to || p < to)) {
		p += n;
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (*p == ':')
			return p + 1;
	}
	return NULL;
}

double json_num(const char *js, const char *section, const char *key)
{
	const char *from = js, *to = NULL, *v;
	char *end;
	double d;

	if (!js)
		return NAN;
	if (section) {
		from = find_key(js, NULL, section);
		if (!from)
			return NAN;
		to = strchr(from, '}');
	}
	v = find_key(from, to, key);
	if (!v)
		return NAN;
	d = strtod(v, &end);
	return end == v ? NAN : d;
}

const char *json_str(const char *js, const char *key, char *buf, size_t len)
{
	const char *v = js ? find_key(js, NULL, key) : NULL;
	size_t n = 0;

	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v++ != '"')
		return NULL;
	while (*v && *v != '"' && n + 1 < len) {
		if (*v == '\\' && v[1])
			v++;
		buf[n++] = *v++;
	}
	buf[n] = '\0';
	return buf;
}

const char *xdplab_summary(const char *out)
{
	return out ? strstr(out, "{\"summary\":true") : NULL;
}

int link_rx(const char *ns, const char *ifname, unsigned long long *packets,
	    unsigned long long *dropped)
{
	char out[4096];
	double p, d;

	if (sh_out(out, sizeof(out), "ip -n %s -s -j link show dev %s", ns, ifname))
		return -1;
	p = json_num(out, "rx", "packets");
	d = json_num(out, "rx", "dropped");
	if (isnan(p))
		return -1;
	*packets = p;
	if (dropped)
		*dropped = isnan(d) ? 0 : d;
	return 0;
}

int iperf3_server(struct child *c, const char *ns, int port, char *err, size_t errlen)
{
	char portstr[16], out[512], why[256];
	double end = now() + 10;

	snprintf(portstr, sizeof(portstr), "%d", port);
	if (child_start(c, ns, (char *const[]){ "iperf3", "-s", "-p", portstr, NULL })) {
		snprintf(err, errlen, "cannot start iperf3 -s");
		return -1;
	}
	while (now() < end && !bench_stop) {
		if (child_exited(c)) {
			child_errline(c, why, sizeof(why));
			snprintf(err, errlen, "iperf3 server could not listen on port %d: %s",
				 port, why[0] ? why : "it exited");
			child_close(c);
			return -1;
		}
		if (!sh_out(out, sizeof(out), "ip netns exec %s ss -Hltn 'sport = :%d'", ns, port) &&
		    strstr(out, "LISTEN"))
			return 0;
		usleep(20000);
	}
	snprintf(err, errlen, bench_stop ? "interrupted" :
		 "iperf3 server did not listen on port %d within 10 s", port);
	child_close(c);
	return -1;
}

int set_gro(const char *ns, const char *ifname, bool on)
{
	return sh("ip netns exec %s ethtool -K %s gro %s", ns, ifname, on ? "on" : "off");
}
