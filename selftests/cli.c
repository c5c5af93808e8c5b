// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "netns.h"
#include "test.h"

double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int cli_start(struct cli_bg *bg, const char *ns, const char *args)
{
	char cmd[2048];
	int p[2];

	snprintf(cmd, sizeof(cmd), "exec %s %s", test__path("xdplab"), args);
	if (test__verbose())
		fprintf(stderr, "+ [%s] %s &\n", ns ?: "-", cmd);
	if (pipe2(p, O_CLOEXEC))
		return -1;
	bg->pid = fork();
	if (bg->pid < 0)
		return -1;
	bg->status = -1;
	if (!bg->pid) {
		if (ns && netns_enter(ns) < 0)
			_exit(126);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execl("/bin/sh", "sh", "-c", cmd, NULL);
		_exit(127);
	}
	close(p[1]);
	bg->out = p[0];
	return 0;
}

long xdp_prog_query(const char *ns, const char *ifname, char *name, size_t len, int *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int saved = ns ? netns_enter(ns) : -1, idx;
	long id = -1;

	if (name && len)
		name[0] = '\0';
	if (mode)
		*mode = XDP_ATTACHED_NONE;
	if (ns && saved < 0)
		return -1;
	idx = if_nametoindex(ifname);
	if (idx && !bpf_xdp_query(idx, 0, &q)) {
		id = q.prog_id ?: q.drv_prog_id ?: q.skb_prog_id ?: q.hw_prog_id;
		if (mode)
			*mode = q.attach_mode;
		if (id && name) {
			struct bpf_prog_info info = {};
			__u32 ilen = sizeof(info);
			int fd = bpf_prog_get_fd_by_id(id);

			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &ilen))
				snprintf(name, len, "%s", info.name);
			if (fd >= 0)
				close(fd);
		}
	}
	netns_leave(saved);
	return id;
}

unsigned int xdp_prog_id(const char *ns, const char *ifname)
{
	long id = xdp_prog_query(ns, ifname, NULL, 0, NULL);

	return id > 0 ? id : 0;
}

int cli_wait_attached(struct cli_bg *bg, const char *ns, const char *ifname, double timeout)
{
	double end = now_secs() + timeout;

	while (now_secs() < end) {
		int st;

		if (xdp_prog_id(ns, ifname))
			return 0;
		if (waitpid(bg->pid, &st, WNOHANG) == bg->pid) {
			/* Reaped; cli_stop only collects the output. */
			bg->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			bg->pid = -1;
			return -1;
		}
		usleep(10000);
	}
	return -1;
}

bool cli_attach(struct cli_bg *bg, const char *ns, const char *ifname, const char *args)
{
	static char out[16384];

	if (!ASSERT_OK(cli_start(bg, ns, args), "start xdplab"))
		return false;
	/* A bound, not a delay: on a KASAN kernel under TCG the CLI's BTF
	 * parsing and program load alone took over 20 s, and beside a flood
	 * on the emulated GEM over 60.
	 */
	if (!ASSERT_OK(cli_wait_attached(bg, ns, ifname, test__bound(60)), "program attached")) {
		cli_stop(bg, SIGKILL, 5, out, sizeof(out));
		fprintf(stdout, "%s", out);
		return false;
	}
	return true;
}

int cli_stop(struct cli_bg *bg, int sig, double timeout, char *out, size_t len)
{
	double end = now_secs() + timeout;
	size_t n = 0;
	int st = -1, ret = -1;

	if (bg->pid > 0 && sig)
		kill(bg->pid, sig);
	/* Drain the pipe while waiting so a chatty child cannot block. */
	for (;;) {
		struct pollfd pfd = { bg->out, POLLIN, 0 };
		double left = end - now_secs();

		if (left <= 0) {
			if (bg->pid > 0)
				kill(bg->pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)(left * 1000) + 1) > 0) {
			char tmp[4096];
			ssize_t r = read(bg->out, tmp, sizeof(tmp));

			if (r <= 0)
				break;	/* EOF: the child is gone */
			if (out && n + 1 < len) {
				size_t c = (size_t)r < len - 1 - n ? (size_t)r : len - 1 - n;

				memcpy(out + n, tmp, c);
				n += c;
			}
		}
	}
	if (out && len)
		out[n] = '\0';
	close(bg->out);
	if (bg->pid > 0 && waitpid(bg->pid, &st, 0) == bg->pid)
		ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	else if (bg->pid < 0)
		ret = bg->status;
	bg->pid = -1;
	return ret;
}

long long json_num(const char *text, const char *line_marker, const char *key)
{
	const char *line = line_marker ? strstr(text, line_marker) : text;
	const char *eol, *k;
	char pat[64];

	if (!line)
		return -1;
	while (line > text && line[-1] != '\n')
		line--;
	eol = strchr(line, '\n');
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	k = strstr(line, pat);
	if (!k || (eol && k > eol))
		return -1;
	return strtoll(k + strlen(pat), NULL, 10);
}

long long ethtool_queue_stat(const char *ns, const char *ifname, const char *dir, const char *name)
{
	static char text[65536];
	long long sum = -1;
	char *l, *save;

	if (sh_out(text, sizeof(text), "%s%s%sethtool -S %s", ns ? "ip netns exec " : "",
		   ns ? ns : "", ns ? " " : "", ifname))
		return -1;
	for (l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char d[8], key[96];
		long long v;
		int q;

		if (sscanf(l, " %7[a-z]_queue_%d_%95[^:]: %lld", d, &q, key, &v) == 4 &&
		    !strcmp(d, dir) && !strcmp(key, name))
			sum = (sum < 0 ? 0 : sum) + v;
	}
	return sum;
}
