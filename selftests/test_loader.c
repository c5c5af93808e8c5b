// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The xdplab CLI as a user runs it: each bad input gives one line naming
 * the cause with a hint and a non-zero exit, and leaves nothing attached;
 * SIGINT/SIGTERM detach; -d, --json, --keep, --pin and status do what the
 * help says; the bad-input paths are valgrind clean.
 *
 * Every case runs build/xdplab in a throw-away namespace, with
 * `ip netns exec` (as the README tells users to) or, where the host's mount
 * namespace matters (pinning, signals), forked into the namespace with
 * setns().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "netns.h"
#include "test.h"

static bool kernel_takes_xdp_gso(void);

#define BPF_FS_MAGIC 0xcafe4a11
#define OUT_LEN 16384

#define ASSERT_NOTHING_ATTACHED(ns, ifname) \
	ASSERT_EQ(xdp_prog_query(ns, ifname, NULL, 0, NULL), 0, "nothing attached to " ifname)

/* Runs `[prefix] build/xdplab ARGS` in ns with `ip netns exec`, stdout and
 * stderr into out; returns the exit status.
 */
static int __attribute__((format(printf, 5, 6)))
ld_cli(char *out, size_t len, const char *ns, const char *prefix, const char *fmt, ...)
{
	char args[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	return sh_out(out, len, "ip netns exec %s %s%s%s %s 2>&1", ns, prefix ?: "",
		      prefix ? " " : "", test__path("xdplab"), args);
}

/* The CLI's answer to bad input: exactly one line, "xdplab: <cause>
 * (hint: ...)" ("xdplab COMMAND: ..." for a bad command line), nothing else.
 */
static bool ld_one_error_line(const char *out, const char *cause)
{
	const char *nl = strchr(out, '\n');
	bool ok;

	ok = ASSERT_STRSTR(out, cause, "names the cause");
	ok &= ASSERT_STRSTR(out, "(hint: ", "gives a hint");
	ok &= test__report(!strncmp(out, "xdplab", 6) && strstr(out, ": ") && nl && !nl[1],
			   __FILE__, __LINE__,
			   "one line", "expected one \"xdplab: ...\" line, got:\n%s", out);
	return ok;
}

/* A child of ours running the CLI inside a namespace, found by setns() so
 * it keeps the host's mounts (bpffs) and we hold its real pid to signal.
 */
struct ld_proc {
	pid_t pid;
	int status;		/* exit code, 128+signal, -1 while running */
	char out_path[64];	/* its stdout and stderr */
};

static int ld_spawn(struct ld_proc *p, const char *ns, const char *const *args)
{
	char *argv[24];
	int fd, n = 0;

	p->pid = -1;
	p->status = -1;
	snprintf(p->out_path, sizeof(p->out_path), "/tmp/xdplab-test-out-XXXXXX");
	fd = mkostemp(p->out_path, O_CLOEXEC);
	if (fd < 0)
		return -1;
	argv[n++] = (char *)test__path("xdplab");
	while (*args && n < 23)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	if (test__verbose()) {
		fprintf(stderr, "+ [%s] ", ns);
		for (int i = 0; i < n; i++)
			fprintf(stderr, "%s ", argv[i]);
		fprintf(stderr, "&\n");
	}
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		close(fd);
		return -1;
	}
	if (!p->pid) {
		if (netns_enter(ns) < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	return 0;
}

/* Has it exited? Records the status once reaped. */
static bool ld_exited(struct ld_proc *p)
{
	int st;

	if (p->pid < 0)
		return true;
	if (waitpid(p->pid, &st, WNOHANG) != p->pid)
		return false;
	p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	p->pid = -1;
	return true;
}

/* Waits at most timeout seconds for it to exit, then kills it. Returns its
 * status, or -1 if it had to be killed.
 */
static int ld_wait(struct ld_proc *p, double timeout)
{
	double end = now_secs() + timeout;

	while (!ld_exited(p)) {
		if (now_secs() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, NULL, 0);
			p->pid = -1;
			return -1;
		}
		usleep(10000);
	}
	return p->status;
}

/* Waits until ifname in ns has a program, or the child gave up. */
static bool ld_wait_attached(struct ld_proc *p, const char *ns, const char *ifname,
			     double timeout)
{
	double end = now_secs() + timeout;

	while (now_secs() < end) {
		if (xdp_prog_query(ns, ifname, NULL, 0, NULL) > 0)
			return true;
		if (ld_exited(p))
			return false;
		usleep(10000);
	}
	return false;
}

/* Reads its output into out and removes the file. */
static void ld_output(struct ld_proc *p, char *out, size_t len)
{
	int fd = open(p->out_path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;

	out[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(p->out_path);
}

static void ld_reap(struct ld_proc *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = -1;
	}
	if (p->out_path[0])
		unlink(p->out_path);
}

/* ---- a small JSON syntax check, enough to say a line parses ---- */

static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

static const char *js_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *js_digits(const char *p)
{
	const char *s = p;

	while (*p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

static const char *js_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!(p = js_digits(p)))
		return NULL;
	if (*p == '.' && !(p = js_digits(p + 1)))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		p = js_digits(p);
	}
	return p;
}

static const char *js_container(const char *p, int depth, char close, bool members)
{
	p = js_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (members) {
			p = js_string(js_ws(p));
			if (!p || *(p = js_ws(p)) != ':')
				return NULL;
			p++;
		}
		p = js_value(p, depth + 1);
		if (!p)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *js_value(const char *p, int depth)
{
	p = js_ws(p);
	if (depth > 32)
		return NULL;
	switch (*p) {
	case '{':
		p = js_container(p, depth, '}', true);
		break;
	case '[':
		p = js_container(p, depth, ']', false);
		break;
	case '"':
		p = js_string(p);
		break;
	case 't':
		p = strncmp(p, "true", 4) ? NULL : p + 4;
		break;
	case 'f':
		p = strncmp(p, "false", 5) ? NULL : p + 5;
		break;
	case 'n':
		p = strncmp(p, "null", 4) ? NULL : p + 4;
		break;
	default:
		p = js_number(p);
	}
	return p ? js_ws(p) : NULL;
}

/* Is the line (up to its newline) one JSON object? */
static bool js_object_line(const char *line)
{
	char buf[2048];
	size_t n = strcspn(line, "\n");
	const char *end;

	if (n >= sizeof(buf) || line[0] != '{')
		return false;
	memcpy(buf, line, n);
	buf[n] = '\0';
	end = js_value(buf, 0);
	return end && !*end;
}

static const char *ld_next_line(const char *line)
{
	line += strcspn(line, "\n");
	return *line ? line + 1 : line;
}

/* "key":NUMBER on line, or -1. */
static long long js_num(const char *line, const char *key)
{
	char pat[64];
	const char *k, *eol = line + strcspn(line, "\n");

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	k = strstr(line, pat);
	if (!k || k > eol)
		return -1;
	return strtoll(k + strlen(pat), NULL, 10);
}

/* ---- bad input ---- */

TEST(loader_errors)
{
	char out[OUT_LEN], name[64], dir[64] = "";
	struct veth_pair vp = {}, big = {};
	const char *ns;
	long id;
	int rc;

	/* One pair at the default MTU, one at 9000 for the frags cases. */
	if (!ASSERT_OK(veth_pair_add(&vp, "lde", 1, 0), "veth pair") ||
	    !ASSERT_OK(veth_pair_add(&big, "ldj", 2, 9000), "veth pair at MTU 9000"))
		goto out;
	ns = vp.ns[0];

	if (test__start_subtest("unknown_iface")) {
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass nosuch0 -d 1");
		ASSERT_EQ(rc, 1, "exit code");
		ld_one_error_line(out, "unknown interface 'nosuch0'");
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("iface_down")) {
		if (ASSERT_OK(sh("ip -n %s link set veth0 down", ns), "link down")) {
			rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 -d 1");
			ASSERT_EQ(rc, 1, "exit code");
			ld_one_error_line(out, "interface veth0 is down");
			ASSERT_NOTHING_ATTACHED(ns, "veth0");
		}
		ASSERT_OK(sh("ip -n %s link set veth0 up", ns), "link up again");
	}

	if (test__start_subtest("no_privileges")) {
		if (sh("command -v setpriv")) {
			test__skip("setpriv (util-linux) is not installed");
		} else {
			rc = ld_cli(out, sizeof(out), ns,
				    "setpriv --reuid=65534 --regid=65534 --clear-groups",
				    "pass veth0 -d 1");
			if (rc == 126 || rc == 127) {
				test__skip("user nobody cannot execute %s: %s",
					   test__path("xdplab"), out);
			} else {
				ASSERT_EQ(rc, 1, "exit code");
				ld_one_error_line(out, "not enough privileges");
				ASSERT_STRSTR(out, "CAP_BPF and CAP_NET_ADMIN", "says which");
				ASSERT_NOTHING_ATTACHED(ns, "veth0");
			}
		}
	}

	if (test__start_subtest("no_btf")) {
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 -d 1 --btf /nonexistent");
		ASSERT_EQ(rc, 1, "exit code");
		ld_one_error_line(out, "no kernel BTF at /nonexistent");
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("pin_not_bpffs")) {
		struct statfs st;

		snprintf(dir, sizeof(dir), "/tmp/xdplab-pin-XXXXXX");
		if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp")) {
			dir[0] = '\0';
		} else if (!statfs(dir, &st) && st.f_type == BPF_FS_MAGIC) {
			test__skip("/tmp is a bpffs here");
		} else {
			rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 -d 1 --pin %s", dir);
			ASSERT_EQ(rc, 1, "exit code");
			ld_one_error_line(out, "is not on a bpffs");
			ASSERT_STRSTR(out, dir, "names the directory");
			ASSERT_NOTHING_ATTACHED(ns, "veth0");
		}
		if (dir[0])
			rmdir(dir);
		dir[0] = '\0';
	}

	if (test__start_subtest("pin_missing_dir")) {
		rc = ld_cli(out, sizeof(out), ns, NULL,
			    "pass veth0 -d 1 --pin /sys/fs/bpf/xdplab-no-such-dir-%d", getpid());
		ASSERT_EQ(rc, 1, "exit code");
		ld_one_error_line(out, "No such file or directory");
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("mode_refused")) {
		/* Loopback has no native XDP; generic XDP works on anything. */
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass lo -d 1");
		ASSERT_EQ(rc, 1, "exit code");
		ld_one_error_line(out, "cannot attach");
		ASSERT_STRSTR(out, "--mode skb", "hint names skb mode");
		ASSERT_NOTHING_ATTACHED(ns, "lo");
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass lo --mode skb -d 0.2");
		ASSERT_EQ(rc, 0, "skb mode on lo works");
		ASSERT_STRSTR(out, "Summary: xdp_pass", "summary in skb mode");
		ASSERT_NOTHING_ATTACHED(ns, "lo");
	}

	if (test__start_subtest("mtu_no_frags")) {
		rc = ld_cli(out, sizeof(out), big.ns[0], NULL, "pass veth0 --no-frags -d 1");
		ASSERT_EQ(rc, 1, "exit code");
		ld_one_error_line(out, "MTU 9000 of veth0 is too large for a program without frags");
		ASSERT_STRSTR(out, "drop --no-frags", "hint");
		ASSERT_NOTHING_ATTACHED(big.ns[0], "veth0");
	}

	if (test__start_subtest("mtu_frags_ok")) {
		/* The same MTU with the multi-buffer program: chosen by itself... */
		rc = ld_cli(out, sizeof(out), big.ns[0], NULL, "pass veth0 -d 0.2");
		ASSERT_EQ(rc, 0, "default at MTU 9000");
		ASSERT_STRSTR(out, "xdp_pass_frags attached to veth0 (native mode, frags)",
			      "picked the frags program");
		ASSERT_STRSTR(out, "Summary: xdp_pass_frags on veth0", "summary");
		ASSERT_NOTHING_ATTACHED(big.ns[0], "veth0");
		/* ...or asked for. */
		rc = ld_cli(out, sizeof(out), big.ns[0], NULL, "drop veth0 --frags -d 0.2");
		ASSERT_EQ(rc, 0, "--frags at MTU 9000");
		ASSERT_STRSTR(out, "xdp_drop_frags attached", "frags program");
		ASSERT_NOTHING_ATTACHED(big.ns[0], "veth0");
	}

	if (test__start_subtest("already_attached")) {
		int mode = 0;

		if (!ASSERT_OK(sh("ip -n %s link set dev veth0 xdpgeneric obj %s sec xdp", ns,
				  test__path("xdp_drop.bpf.o")), "ip link attaches xdp_drop"))
			goto attached_out;
		id = xdp_prog_query(ns, "veth0", NULL, 0, NULL);
		if (!ASSERT_GT(id, 0, "xdp_drop attached"))
			goto attached_out;

		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 -d 1");
		ASSERT_EQ(rc, 1, "exit code (native)");
		ld_one_error_line(out, "interface veth0 already has XDP program 'xdp_drop'");
		rc = ld_cli(out, sizeof(out), ns, NULL, "drop veth0 --mode skb -d 1");
		ASSERT_EQ(rc, 1, "exit code (skb)");
		ld_one_error_line(out, "already has XDP program 'xdp_drop'");

		/* The other program is still there, the same one, in its mode. */
		ASSERT_EQ(xdp_prog_query(ns, "veth0", name, sizeof(name), &mode), id, "same program");
		ASSERT_EQ(mode, XDP_ATTACHED_SKB, "still in skb mode");
		ASSERT_TRUE(!strcmp(name, "xdp_drop"), "still xdp_drop");
attached_out:
		sh("ip -n %s link set dev veth0 xdpgeneric off", ns);
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("options")) {
		static const struct { const char *args, *cause; } bad[] = {
			{ "drop veth0 --proto icmp --port 9", "ICMP has none" },
			{ "drop veth0 --port 9 --proto icmp", "ICMP has none" },
			{ "drop veth0 --port 9 --port 10", "--port given more than once" },
			{ "drop veth0 --proto udp --proto tcp", "--proto given more than once" },
			{ "drop veth0 --ip 4 --ip 6", "--ip given more than once" },
			{ "pass veth0 -d 1 --duration 2", "--duration given more than once" },
			{ "pass veth0 --mode skb -m native", "--mode given more than once" },
			{ "pass veth0 --frags --no-frags", "contradict each other" },
			{ "drop veth0 --ip 192.0.2.1", "--ip takes the IP version, not '192.0.2.1'" },
			{ "drop veth0 --port 0", "'0' is not a port" },
			{ "drop veth0 --proto sctp", "unknown protocol 'sctp'" },
			{ "rxq-info veth0 --action drop --action pass", "--action given more than once" },
			{ "trafficgen veth0 -n 5 -n 6", "--count given more than once" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			rc = ld_cli(out, sizeof(out), ns, NULL, "%s -d 1", bad[i].args);
			if (!ASSERT_EQ(rc, 2, bad[i].args))
				printf("%s", out);
			ld_one_error_line(out, bad[i].cause);
			ASSERT_NOTHING_ATTACHED(ns, "veth0");
		}
		rc = ld_cli(out, sizeof(out), ns, NULL, "drop veth0 --ip 4x -d 1");
		ASSERT_STRSTR(out, "--ip 4 or --ip 6", "the hint says what --ip takes");
		rc = ld_cli(out, sizeof(out), ns, NULL, "drop --help");
		ASSERT_STRSTR(out, "the IP version to match, 4 or 6 (not an address)",
			      "--help says --ip takes the version");
		/* Repeating a flag without a value changes nothing: allowed. */
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 -q -q --frags --frags -d 0.2");
		ASSERT_EQ(rc, 0, "repeated flags");
	}
	if (test__start_subtest("usage")) {
		rc = ld_cli(out, sizeof(out), ns, NULL, "frobnicate veth0");
		ASSERT_EQ(rc, 2, "unknown subcommand");
		ld_one_error_line(out, "unknown command 'frobnicate'");
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass");
		ASSERT_EQ(rc, 2, "missing IFNAME");
		ASSERT_STRSTR(out, "expected IFNAME", "says what is missing");
		rc = ld_cli(out, sizeof(out), ns, NULL, "redirect veth0");
		ASSERT_EQ(rc, 2, "redirect without its second interface");
		rc = ld_cli(out, sizeof(out), ns, NULL, "%s", "");
		ASSERT_EQ(rc, 2, "no command at all");
		ASSERT_STRSTR(out, "Usage: xdplab COMMAND", "usage");
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 --mode turbo");
		ASSERT_EQ(rc, 2, "unknown mode");
		ASSERT_STRSTR(out, "unknown mode 'turbo'", "names the mode");
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 -d soon");
		ASSERT_EQ(rc, 2, "bad duration");
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 --bogus-option");
		ASSERT_EQ(rc, 2, "unknown option");
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass --help");
		ASSERT_EQ(rc, 0, "pass --help");
		ASSERT_STRSTR(out, "Examples:", "help has examples");
		rc = ld_cli(out, sizeof(out), ns, NULL, "--version");
		ASSERT_EQ(rc, 0, "--version");
		ASSERT_STRSTR(out, "xdplab ", "version line");
	}
out:
	veth_pair_del(&big);
	veth_pair_del(&vp);
}

/* ---- signals ---- */

/* Starts the CLI without a duration, waits until it is attached, sends
 * sig and expects a clean exit that leaves nothing behind.
 */
static void ld_signal_case(const struct veth_pair *vp, int sig, const char *const *args,
			   const char *summary)
{
	struct ld_proc p = {};
	char out[OUT_LEN];
	int rc;

	if (!ASSERT_OK(ld_spawn(&p, vp->ns[0], args), "spawn xdplab"))
		goto out;
	if (!ASSERT_TRUE(ld_wait_attached(&p, vp->ns[0], "veth0", 10), "attached within 10 s")) {
		ld_wait(&p, 1);
		ld_output(&p, out, sizeof(out));
		fprintf(stdout, "  xdplab said:\n%s", out);
		goto out;
	}
	ASSERT_OK(kill(p.pid, sig), "kill");
	rc = ld_wait(&p, 5);
	ld_output(&p, out, sizeof(out));
	ASSERT_EQ(rc, 0, "exit code after the signal (within 5 s)");
	ASSERT_STRSTR(out, summary, "summary printed");
	ASSERT_NOTHING_ATTACHED(vp->ns[0], "veth0");
out:
	ld_reap(&p);
}

TEST(loader_signals)
{
	struct veth_pair vp = {};

	if (!ASSERT_OK(veth_pair_add(&vp, "lds", 3, 0), "veth pair"))
		return;

	if (test__start_subtest("sigint_detaches")) {
		const char *args[] = { "pass", "veth0", NULL };

		ld_signal_case(&vp, SIGINT, args, "Summary: xdp_pass");
	}
	if (test__start_subtest("sigterm_detaches")) {
		const char *args[] = { "pass", "veth0", NULL };

		ld_signal_case(&vp, SIGTERM, args, "Summary: xdp_pass");
	}
	if (test__start_subtest("sigint_detaches_skb")) {
		const char *args[] = { "drop", "veth0", "--mode", "skb", NULL };

		ld_signal_case(&vp, SIGINT, args, "Summary: xdp_drop_frags on veth0 (skb, frags)");
	}
	if (test__start_subtest("sigint_detaches_quiet_json")) {
		const char *args[] = { "tx", "veth0", "-q", "--json", NULL };

		ld_signal_case(&vp, SIGINT, args, "{\"summary\":true,\"ifname\":\"veth0\",\"prog\":\"xdp_tx");
	}
	veth_pair_del(&vp);
}

/* ---- output, keep, pin ---- */

/* Sends n UDP datagrams from ns[1] to ns[0] and waits (bounded) until a
 * socket in ns[0] has them all: by then they went through XDP on veth0.
 */
static int ld_udp_through(const struct veth_pair *vp, int n, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { 0, 200000 };
	int rs = -1, ss = -1, saved, got = 0;
	double end = now_secs() + 10;
	char buf[64] = "xdplab";

	inet_pton(AF_INET, vp->ip4[0], &a.sin_addr);
	saved = netns_enter(vp->ns[0]);
	if (saved >= 0) {
		rs = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (rs >= 0 && bind(rs, (struct sockaddr *)&a, sizeof(a)))
			close(rs), rs = -1;
		if (rs >= 0)
			setsockopt(rs, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		netns_leave(saved);
	}
	saved = netns_enter(vp->ns[1]);
	if (saved >= 0) {
		ss = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		netns_leave(saved);
	}
	if (rs < 0 || ss < 0)
		goto out;
	for (int i = 0; i < n; i++)
		sendto(ss, buf, sizeof(buf), 0, (struct sockaddr *)&a, sizeof(a));
	while (got < n && now_secs() < end) {
		if (recv(rs, buf, sizeof(buf), 0) > 0)
			got++;
	}
out:
	if (rs >= 0)
		close(rs);
	if (ss >= 0)
		close(ss);
	return got;
}

TEST(loader_output)
{
	char out[OUT_LEN], name[64];
	struct veth_pair vp = {};
	const char *ns;
	int rc;

	if (!ASSERT_OK(veth_pair_add(&vp, "ldo", 4, 0), "veth pair"))
		return;
	ns = vp.ns[0];

	if (test__start_subtest("duration")) {
		double t0 = now_secs(), secs;

		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 -d 1");
		secs = now_secs() - t0;
		ASSERT_EQ(rc, 0, "exit code");
		ASSERT_STRSTR(out, "xdp_pass_frags attached to veth0 (native mode, frags)",
			      "attach line");
		ASSERT_STRSTR(out, "Summary: xdp_pass_frags on veth0 (native, frags), matching every "
			      "frame, ", "summary");
		ASSERT_GE(secs * 10, 9, "ran about 1 s (x10)");
		rc = ld_cli(out, sizeof(out), ns, NULL, "drop veth0 --ip 6 --proto udp --port 9 -d 0.2");
		ASSERT_EQ(rc, 0, "exit code with a filter");
		ASSERT_STRSTR(out, kernel_takes_xdp_gso() ?
			      "GSO-preserving, takes GSO superframes, matching IPv6 udp port 9; Ctrl-C" :
			      "GSO-preserving, matching IPv6 udp port 9; Ctrl-C",
			      "the attach line names the filter (and the GSO opt-in where the kernel has it)");
		ASSERT_STRSTR(out, "Summary: xdp_drop_frags on veth0 (native, frags), matching IPv6 "
			      "udp port 9, ", "the summary names the filter");
		ASSERT_LT(secs, 10, "exited by itself within 10 s");
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("json")) {
		const char *args[] = { "pass", "veth0", "--json", "-i", "0.2", NULL };
		struct ld_proc p = {};
		const char *line, *summary = NULL;
		int lines = 0, got;
		double t_attached;

		if (!ASSERT_OK(ld_spawn(&p, ns, args), "spawn") ||
		    !ASSERT_TRUE(ld_wait_attached(&p, ns, "veth0", 10), "attached"))
			goto json_out;
		t_attached = now_secs();
		got = ld_udp_through(&vp, 10, 9000);
		ASSERT_EQ(got, 10, "datagrams through veth0");
		/* An interval line needs an interval (0.2 s) to pass first; by
		 * then one is printed, or printed at the signal.
		 */
		while (now_secs() < t_attached + 0.3)
			usleep(10000);
		ASSERT_OK(kill(p.pid, SIGINT), "SIGINT");
		rc = ld_wait(&p, 5);
		ld_output(&p, out, sizeof(out));
		ASSERT_EQ(rc, 0, "exit code");
		for (line = out; *line; line = ld_next_line(line)) {
			lines++;
			if (!test__report(js_object_line(line), __FILE__, __LINE__, "JSON line",
					  "line %d is no JSON object:\n%s", lines, out))
				break;
			if (strstr(line, "\"summary\":true") == line + 1)
				summary = line;
		}
		if (!ASSERT_OK_PTR(summary, "a summary line") ||
		    !ASSERT_FALSE(*ld_next_line(summary), "the summary is last"))
			goto json_out;
		ASSERT_GE(lines, 3, "the event, interval lines and the summary");
		{
			char ev[512];

			snprintf(ev, sizeof(ev), "{\"event\":\"attached\",\"ifname\":\"veth0\","
				 "\"prog\":\"xdp_pass_frags\",\"mode\":\"native\",\"frags\":true,"
				 "\"gso\":{\"preserving\":true,\"opt_in\":%s},\"filter\":"
				 "{\"proto\":null,\"port\":null,\"ip\":null}}\n",
				 kernel_takes_xdp_gso() ? "true" : "false");
			if (!ASSERT_OK(strncmp(out, ev, strlen(ev)), "the first line is the attach event"))
				printf("%s", out);
		}
		ASSERT_STRSTR(summary, "\"filter\":{\"proto\":null,\"port\":null,\"ip\":null}",
			      "the summary names the (empty) filter");
		ASSERT_STRSTR(out, "\"rx_pps\":", "interval lines have rates");
		ASSERT_STRSTR(summary, "\"prog\":\"xdp_pass_frags\"", "prog");
		ASSERT_STRSTR(summary, "\"mode\":\"native\"", "mode");
		ASSERT_STRSTR(summary, "\"frags\":true", "frags");
		ASSERT_GE(js_num(summary, "rx_packets"), 10, "rx_packets counts the datagrams");
		ASSERT_GE(js_num(summary, "pass"), 10, "pass counts them");
		ASSERT_EQ(js_num(summary, "pass"), js_num(summary, "rx_packets"), "all passed");
		ASSERT_EQ(js_num(summary, "drop"), 0, "drop");
		ASSERT_EQ(js_num(summary, "tx"), 0, "tx");
		ASSERT_EQ(js_num(summary, "redirect"), 0, "redirect");
		ASSERT_EQ(js_num(summary, "aborted"), 0, "aborted");
		ASSERT_EQ(js_num(summary, "mb_packets"), 0, "no multi-buffer frames at MTU 1500");
		ASSERT_GT(js_num(summary, "rx_bytes"), 10 * 64, "rx_bytes");
json_out:
		ld_reap(&p);
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("keep")) {
		long id;

		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 --keep -d 0.2");
		ASSERT_EQ(rc, 0, "exit code");
		ASSERT_STRSTR(out, "xdp_pass_frags stays attached to veth0", "says it stays");
		id = xdp_prog_query(ns, "veth0", name, sizeof(name), NULL);
		if (ASSERT_GT(id, 0, "still attached after exit"))
			ASSERT_TRUE(!strcmp(name, "xdp_pass_frags"), "xdp_pass_frags");
		ASSERT_OK(sh("ip -n %s link set dev veth0 xdp off", ns), "ip link ... xdp off");
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("pin")) {
		char dir[64] = "/tmp/xdplab-pin-XXXXXX", path[128];
		const char *args[] = { "pass", "veth0", "-d", "0.2", "--pin", dir, NULL };
		bool mounted = false;
		struct ld_proc p = {};
		struct bpf_prog_info pinfo = {};
		struct bpf_map_info minfo = {};
		__u32 len;
		long id;
		int fd;

		/* Our own bpffs instance: no pins of ours land in /sys/fs/bpf. The
		 * CLI runs forked into the namespace, so it sees this mount (ip
		 * netns exec would remount /sys but keep /tmp; this is simpler).
		 */
		if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
			goto pin_out;
		if (mount("bpf", dir, "bpf", 0, NULL)) {
			test__skip("cannot mount a bpffs: %s", strerror(errno));
			goto pin_out;
		}
		mounted = true;
		if (!ASSERT_OK(ld_spawn(&p, ns, args), "spawn"))
			goto pin_out;
		rc = ld_wait(&p, 10);
		ld_output(&p, out, sizeof(out));
		if (!ASSERT_EQ(rc, 0, "exit code")) {
			fprintf(stdout, "  xdplab said:\n%s", out);
			goto pin_out;
		}
		ASSERT_STRSTR(out, "pinned under ", "says it is pinned");
		id = xdp_prog_query(ns, "veth0", NULL, 0, NULL);
		ASSERT_GT(id, 0, "stays attached");

		snprintf(path, sizeof(path), "%s/xdp_pass_frags", dir);
		fd = bpf_obj_get(path);
		if (ASSERT_GE(fd, 0, "program pinned")) {
			len = sizeof(pinfo);
			ASSERT_OK(bpf_obj_get_info_by_fd(fd, &pinfo, &len), "prog info");
			ASSERT_EQ(pinfo.id, id, "the pinned program is the attached one");
			close(fd);
		}
		snprintf(path, sizeof(path), "%s/xdp_stats", dir);
		fd = bpf_obj_get(path);
		if (ASSERT_GE(fd, 0, "xdp_stats pinned")) {
			len = sizeof(minfo);
			ASSERT_OK(bpf_obj_get_info_by_fd(fd, &minfo, &len), "map info");
			ASSERT_TRUE(!strcmp(minfo.name, "xdp_stats"), "map name");
			ASSERT_EQ(minfo.type, BPF_MAP_TYPE_PERCPU_ARRAY, "map type");
			close(fd);
		}
pin_out:
		ld_reap(&p);
		sh("ip -n %s link set dev veth0 xdp off", ns);
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
		if (mounted)
			umount2(dir, MNT_DETACH);
		if (strcmp(dir, "/tmp/xdplab-pin-XXXXXX"))
			rmdir(dir);
	}

	if (test__start_subtest("pin_stale")) {
		/* A name already taken under the pin directory: the CLI says so,
		 * detaches and takes back the pins it made.
		 */
		char dir[64] = "/tmp/xdplab-pin-XXXXXX", path[128];
		const char *args[] = { "pass", "veth0", "-d", "0.2", "--pin", dir, NULL };
		bool mounted = false;
		struct ld_proc p = {};

		if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
			goto stale_out;
		if (mount("bpf", dir, "bpf", 0, NULL)) {
			test__skip("cannot mount a bpffs: %s", strerror(errno));
			goto stale_out;
		}
		mounted = true;
		snprintf(path, sizeof(path), "%s/xdp_pass_frags", dir);
		if (!ASSERT_OK(mkdir(path, 0700), "a stale entry"))
			goto stale_out;
		if (!ASSERT_OK(ld_spawn(&p, ns, args), "spawn"))
			goto stale_out;
		rc = ld_wait(&p, 10);
		ld_output(&p, out, sizeof(out));
		ASSERT_EQ(rc, 1, "exit code");
		ld_one_error_line(out, "cannot pin under");
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
		snprintf(path, sizeof(path), "%s/xdp_stats", dir);
		ASSERT_TRUE(access(path, F_OK) && errno == ENOENT, "no map pin left");
stale_out:
		ld_reap(&p);
		sh("ip -n %s link set dev veth0 xdp off", ns);
		if (mounted)
			umount2(dir, MNT_DETACH);
		if (strcmp(dir, "/tmp/xdplab-pin-XXXXXX"))
			rmdir(dir);
	}
	veth_pair_del(&vp);
}

/* ---- status ---- */

/* The line of out that contains what, or NULL; copied into line. */
static const char *ld_line_with(const char *out, const char *what, char *line, size_t len)
{
	const char *p = strstr(out, what), *s;
	size_t n;

	if (!p)
		return NULL;
	for (s = p; s > out && s[-1] != '\n'; s--)
		;
	n = strcspn(s, "\n");
	snprintf(line, len, "%.*s", (int)n, s);
	return line;
}

/* The veth series' BPF_F_XDP_GSO, asked of the kernel itself rather than
 * of the CLI under test.
 */
static bool kernel_takes_xdp_gso(void)
{
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = XDP_PASS },	/* r0 = XDP_PASS */
		{ .code = 0x95 },					/* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_XDP_HAS_FRAGS | (1U << 8));
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "gso_probe", "GPL", insns, 2, &opts);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* "tcp-segmentation-offload: on|off" of dev in ns, as ethtool -k says it. */
static bool peer_tso_on(const char *ns, const char *dev)
{
	char out[128] = "";

	sh_out(out, sizeof(out), "ip netns exec %s ethtool -k %s | grep '^tcp-segmentation-offload:'",
	       ns, dev);
	return strstr(out, ": on");
}

/* xdplab asks for GSO superframes (BPF_F_XDP_GSO) for a GSO-preserving
 * frags program where the kernel takes the flag, and not with --no-gso:
 * status reads it back, and veth shows it, keeping TSO on the program's
 * peer only for an opted-in program (the series' 0010; stock clears it
 * for any multi-buffer program).
 */
static void status_gso_opt_in(const struct veth_pair *vp)
{
	static const char *const runs[] = { "pass veth0 --keep -d 0.1",
					    "pass veth0 --no-gso --keep -d 0.1" };
	bool series = kernel_takes_xdp_gso();
	char out[OUT_LEN], line[512];
	const char *ns = vp->ns[0];

	for (int i = 0; i < 2; i++) {
		bool want = series && i == 0;

		if (!ASSERT_EQ(ld_cli(out, sizeof(out), ns, NULL, runs[i]), 0, runs[i]))
			break;
		ASSERT_EQ(ld_cli(out, sizeof(out), ns, NULL, "status veth0 --json"), 0,
			  "status --json");
		ASSERT_STRSTR(out, want ? "\"gso_opt_in\":true" : "\"gso_opt_in\":false",
			      runs[i]);
		ASSERT_EQ(ld_cli(out, sizeof(out), ns, NULL, "status veth0"), 0, "status");
		if (ASSERT_OK_PTR(ld_line_with(out, "xdp_pass_frags", line, sizeof(line)),
				  "a line for the program"))
			ASSERT_EQ(!!strstr(line, "takes GSO superframes"), want, runs[i]);
		if (series)
			ASSERT_EQ(peer_tso_on(vp->ns[1], "veth1"), want,
				  "TSO on the peer (on only when opted in)");
		sh("ip -n %s link set dev veth0 xdp off", ns);
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}
	if (!series)
		test__skip("kernel without BPF_F_XDP_GSO (the veth GSO series): both loads "
			   "must be plain frags, as they were");
}

TEST(loader_status)
{
	char out[OUT_LEN], line[512];
	struct veth_pair vp = {};
	const char *ns;
	int rc;

	if (!ASSERT_OK(veth_pair_add(&vp, "ldt", 5, 0), "veth pair"))
		return;
	ns = vp.ns[0];

	if (test__start_subtest("nothing_attached")) {
		rc = ld_cli(out, sizeof(out), ns, NULL, "status");
		ASSERT_EQ(rc, 0, "exit code");
		ASSERT_STRSTR(out, "veth0", "lists veth0");
		ASSERT_STRSTR(out, "lo ", "lists lo");
		ASSERT_STRSTR(out, "no XDP program", "nothing attached");
		rc = ld_cli(out, sizeof(out), ns, NULL, "status nosuch0");
		ASSERT_EQ(rc, 1, "unknown interface");
		ld_one_error_line(out, "unknown interface 'nosuch0'");
	}

	if (test__start_subtest("native_frags")) {
		rc = ld_cli(out, sizeof(out), ns, NULL, "pass veth0 --keep -d 0.1");
		if (!ASSERT_EQ(rc, 0, "pass --keep"))
			goto native_out;
		rc = ld_cli(out, sizeof(out), ns, NULL, "status veth0");
		ASSERT_EQ(rc, 0, "exit code");
		if (ASSERT_OK_PTR(ld_line_with(out, "xdp_pass_frags", line, sizeof(line)),
				  "a line for the program")) {
			ASSERT_STRSTR(line, "native", "mode");
			ASSERT_STRSTR(line, "(GSO-preserving)", "frags programs are GSO-preserving");
		}
		if (strstr(out, "xdp features: unknown")) {
			test__skip("no netdev XDP features on this kernel (before 6.3): %s", out);
			goto native_out;
		}
		/* veth says NDO_XMIT (a redirect target) only while its peer
		 * runs XDP (or GRO): veth0 has a program, so veth1 is a target
		 * and veth0 is not.
		 */
		ASSERT_STRSTR(out, "xdp features: BASIC REDIRECT RX_SG\n", "veth0 features");
		rc = ld_cli(out, sizeof(out), vp.ns[1], NULL, "status veth1");
		ASSERT_EQ(rc, 0, "status veth1");
		ASSERT_STRSTR(out, "xdp features: BASIC REDIRECT NDO_XMIT RX_SG NDO_XMIT_SG",
			      "veth1 features (its peer runs XDP)");
		ASSERT_STRSTR(out, "no XDP program", "nothing on veth1");

		rc = ld_cli(out, sizeof(out), ns, NULL, "status veth0 --json");
		ASSERT_EQ(rc, 0, "status --json");
		ASSERT_TRUE(js_object_line(out), "JSON parses");
		ASSERT_STRSTR(out, "\"ifname\":\"veth0\"", "ifname");
		ASSERT_STRSTR(out, "\"mode\":\"native\"", "mode");
		ASSERT_STRSTR(out, "\"name\":\"xdp_pass_frags\"", "name");
		ASSERT_STRSTR(out, "\"gso_preserving\":true", "gso_preserving");
		ASSERT_STRSTR(out, "\"xdp_features\":\"BASIC REDIRECT RX_SG\"", "features");
native_out:
		sh("ip -n %s link set dev veth0 xdp off", ns);
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("skb_linear")) {
		rc = ld_cli(out, sizeof(out), ns, NULL,
			    "drop veth0 --mode skb --no-frags --keep -d 0.1");
		if (!ASSERT_EQ(rc, 0, "drop --mode skb --no-frags --keep"))
			goto skb_out;
		rc = ld_cli(out, sizeof(out), ns, NULL, "status veth0");
		ASSERT_EQ(rc, 0, "exit code");
		if (ASSERT_OK_PTR(ld_line_with(out, "xdp_drop", line, sizeof(line)),
				  "a line for the program")) {
			ASSERT_STRSTR(line, "skb", "mode");
			ASSERT_FALSE(strstr(line, "frags"), "the linear program");
			ASSERT_FALSE(strstr(line, "GSO-preserving"), "linear programs carry no tag");
		}
		rc = ld_cli(out, sizeof(out), ns, NULL, "status --json");
		ASSERT_EQ(rc, 0, "status --json, all interfaces");
		for (const char *l = out; *l; l = ld_next_line(l))
			if (!test__report(js_object_line(l), __FILE__, __LINE__, "JSON line",
					  "not a JSON object: %.*s", (int)strcspn(l, "\n"), l))
				break;
		ASSERT_STRSTR(out, "{\"mode\":\"skb\"", "skb in JSON");
skb_out:
		sh("ip -n %s link set dev veth0 xdpgeneric off", ns);
		ASSERT_NOTHING_ATTACHED(ns, "veth0");
	}

	if (test__start_subtest("gso_opt_in"))
		status_gso_opt_in(&vp);
	veth_pair_del(&vp);
}

/* ---- valgrind on the bad-input paths ---- */

/*
 * What valgrind 3.19 gets wrong about libbpf 1.1 (both as in Debian 12),
 * each reproduced by a ten-line program that only calls libbpf:
 *  - libbpf's feature probes pass bpf() an attr shorter than the fields
 *    valgrind's wrapper reads; the kernel never reads past the size given;
 *  - parsing the kernel's netlink extack after a refused attach, libbpf
 *    branches on bytes valgrind does not see recvmsg() fill in.
 * Only libbpf's own frames are suppressed; xdplab hands it plain scalars.
 */
static const char ld_supp[] =
	"{\n  libbpf-probe-short-attr-ifindex\n  Memcheck:Param\n"
	"  bpf(attr->prog_ifindex)\n  fun:syscall\n  obj:*libbpf.so*\n}\n"
	"{\n  libbpf-probe-short-attr-attach-type\n  Memcheck:Param\n"
	"  bpf(attr->expected_attach_type)\n  fun:syscall\n  obj:*libbpf.so*\n}\n"
	"{\n  libbpf-netlink-extack\n  Memcheck:Cond\n  obj:*libbpf.so*\n"
	"  obj:*libbpf.so*\n  obj:*libbpf.so*\n  fun:bpf_xdp_attach\n}\n"
	/* A weak kfunc the kernel lacks (bpf_xdp_gso_state()): libbpf looks
	 * for it in the modules' BTF too, with BPF_BTF_GET_NEXT_ID, whose
	 * next_id valgrind does not know the kernel wrote.
	 */
	"{\n  libbpf-module-btf-next-id\n  Memcheck:Cond\n  obj:*libbpf.so*\n"
	"  obj:*libbpf.so*\n  fun:bpf_object__load\n}\n";

/* Under valgrind the CLI's line comes with valgrind's warnings about bpf()
 * commands it does not know; the error line must still be there, whole.
 */
static bool ld_vg_error_line(const char *out, const char *cause)
{
	for (const char *l = out; *l; l = ld_next_line(l)) {
		size_t n = strcspn(l, "\n");

		if (!strncmp(l, "xdplab: ", 8) && memmem(l, n, cause, strlen(cause)) &&
		    memmem(l, n, "(hint: ", 7))
			return true;
	}
	return test__report(false, __FILE__, __LINE__, "error line",
			    "no \"xdplab: ...%s... (hint: ...)\" line in:\n%s", cause, out);
}

TEST(loader_valgrind)
{
	char out[OUT_LEN], supp[64] = "/tmp/xdplab-vg-XXXXXX", vg[256];
	struct veth_pair vp = {}, big = {};
	int rc, fd;

	if (sh("command -v valgrind")) {
		test__skip("valgrind is not installed (scripts/deps.sh base installs it)");
		return;
	}
	fd = mkstemp(supp);
	if (!ASSERT_GE(fd, 0, "suppressions file"))
		return;
	if (!ASSERT_EQ(write(fd, ld_supp, sizeof(ld_supp) - 1), (long)sizeof(ld_supp) - 1,
		       "write suppressions")) {
		close(fd);
		goto out;
	}
	close(fd);
	snprintf(vg, sizeof(vg),
		 "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
		 " --suppressions=%s", supp);
	if (!ASSERT_OK(veth_pair_add(&vp, "ldv", 6, 0), "veth pair") ||
	    !ASSERT_OK(veth_pair_add(&big, "ldw", 7, 9000), "veth pair at MTU 9000"))
		goto out;

	/* 1, not valgrind's 99: the error is the CLI's, and no leak or bad
	 * access came with it.
	 */
	if (test__start_subtest("unknown_iface")) {
		rc = ld_cli(out, sizeof(out), vp.ns[0], vg, "pass nosuch0 -d 1");
		ASSERT_EQ(rc, 1, "exit code");
		ld_vg_error_line(out, "unknown interface 'nosuch0'");
	}
	if (test__start_subtest("iface_down")) {
		sh("ip -n %s link set veth0 down", vp.ns[0]);
		rc = ld_cli(out, sizeof(out), vp.ns[0], vg, "drop veth0 -d 1");
		ASSERT_EQ(rc, 1, "exit code");
		ld_vg_error_line(out, "is down");
		sh("ip -n %s link set veth0 up", vp.ns[0]);
	}
	if (test__start_subtest("no_btf")) {
		rc = ld_cli(out, sizeof(out), vp.ns[0], vg, "tx veth0 -d 1 --btf /nonexistent");
		ASSERT_EQ(rc, 1, "exit code");
		ld_vg_error_line(out, "no kernel BTF");
	}
	if (test__start_subtest("already_attached")) {
		if (ASSERT_OK(sh("ip -n %s link set dev veth0 xdpgeneric obj %s sec xdp", vp.ns[0],
				 test__path("xdp_drop.bpf.o")), "ip link attaches xdp_drop")) {
			rc = ld_cli(out, sizeof(out), vp.ns[0], vg, "pass veth0 -d 1");
			ASSERT_EQ(rc, 1, "exit code");
			ld_vg_error_line(out, "already has XDP program 'xdp_drop'");
		}
		sh("ip -n %s link set dev veth0 xdpgeneric off", vp.ns[0]);
		ASSERT_NOTHING_ATTACHED(vp.ns[0], "veth0");
	}
	if (test__start_subtest("mtu_too_large")) {
		rc = ld_cli(out, sizeof(out), big.ns[0], vg, "pass veth0 --no-frags -d 1");
		ASSERT_EQ(rc, 1, "exit code");
		ld_vg_error_line(out, "too large for a program without frags");
		ASSERT_NOTHING_ATTACHED(big.ns[0], "veth0");
	}
	if (test__start_subtest("mode_refused")) {
		/* Opens and loads the program, fails to attach: the skeleton
		 * must still be freed.
		 */
		rc = ld_cli(out, sizeof(out), vp.ns[0], vg, "pass lo -d 1");
		ASSERT_EQ(rc, 1, "exit code");
		ld_vg_error_line(out, "cannot attach");
		ASSERT_NOTHING_ATTACHED(vp.ns[0], "lo");
	}
out:
	unlink(supp);
	veth_pair_del(&big);
	veth_pair_del(&vp);
}
