// SPDX-License-Identifier: GPL-2.0
/*
 * The whole userland of the Zynq-7000 board (vmtest/gem-zynq.sh): /init of
 * its initramfs, built static for armhf. It opens the GEM while the page
 * allocations of the open's RX ring fill fail, and reads the kernel log for
 * what that left behind.
 *
 * Why a 32-bit board: macb counts a failed RX buffer allocation in a
 * u64_stats counter, and gem_rx_refill() runs in process context too (open,
 * resume, HRESP recovery), preemptible. On a 64-bit kernel the stats update
 * is a plain increment; on a 32-bit one u64_stats_update_begin() is a
 * seqcount write, and under lockdep it asserts that preemption is off. Only
 * here does that show, and only when an allocation of the open fails.
 *
 * The steps:
 *  1. fail_page_alloc is armed for this task alone (task-filter, our own
 *     make-it-fail) and for allocations whose stack goes through
 *     gem_init_rings() alone (require-start/end from /proc/kallsyms), at
 *     probability 100, including sleeping and highmem allocations of order
 *     0. 'space' lets the first page_pool bulk refill through, so that the
 *     open fills its ring in part and goes on (an open that got no buffer
 *     at all fails, which is allowed too).
 *  2. SIOCSIFFLAGS up: macb_open() -> gem_init_rings() -> gem_rx_refill(),
 *     whose next allocation fails -> gem_rx_alloc_failed().
 *  3. The injection must have hit: the attribute's 'times' went down, and
 *     the queue's rx-alloc-fail counter (netdev netlink, qstats) went up.
 *     Otherwise the test could not have failed, and it says SKIP.
 *  4. Disarmed, the GEM is taken down and brought up again, which must
 *     work, and down again.
 *  5. The kernel log (syslog(2)) must hold no WARNING, BUG, Oops, panic or
 *     UBSAN report.
 *
 * Output, read by vmtest/gem-zynq.sh: "zynq: ..." lines, then one of
 *   ZYNQ-RESULT: PASS <what ran>
 *   ZYNQ-RESULT: FAIL <the first report's line> (<its trace: gem_rx_alloc_failed or not>)
 *   ZYNQ-RESULT: FAIL <step>: <error>
 *   ZYNQ-RESULT: SKIP <why the test could not tell>
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/reboot.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define IFNAME		"eth0"
#define FPA		"/sys/kernel/debug/fail_page_alloc/"
#define TIMES		300
/* the function whose stack frames the injected failures must come from
 * (-DFILL_FN='"..."' points it elsewhere, to see the test say SKIP)
 */
#ifndef FILL_FN
#define FILL_FN		"gem_init_rings"
#endif

/* include/uapi/linux/netdev.h of 6.9+ (Debian 12's headers are 6.1's) */
#define NETDEV_FAMILY_NAME		"netdev"
#define NETDEV_CMD_QSTATS_GET		12
#define NETDEV_A_QSTATS_IFINDEX		1
#define NETDEV_A_QSTATS_RX_ALLOC_FAIL	12

static void result(const char *fmt, ...)
{
	va_list ap;

	printf("ZYNQ-RESULT: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	sync();
	/* QEMU runs with -no-reboot: a restart ends it */
	reboot(LINUX_REBOOT_CMD_RESTART);
	reboot(LINUX_REBOOT_CMD_POWER_OFF);
	exit(1);
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

static void must_write(const char *path, const char *val)
{
	int err = write_str(path, val);

	if (err)
		result("SKIP cannot write '%s' to %s: %s", val, path, strerror(-err));
}

static long read_long(const char *path, bool *ok)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY), n;

	*ok = false;
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	*ok = true;
	return strtol(buf, NULL, 0);
}

static int set_up(bool up)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (fd < 0)
		return -errno;
	strncpy(ifr.ifr_name, IFNAME, IFNAMSIZ - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		err = -errno;
	} else {
		if (up)
			ifr.ifr_flags |= IFF_UP;
		else
			ifr.ifr_flags &= ~IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			err = -errno;
	}
	close(fd);
	return err;
}

/* [start, end) of a text symbol: its address and the next higher one */
static bool symbol_range(const char *name, unsigned long *start, unsigned long *end)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long addr, next = ~0ul;
	char type, sym[256], line[512];
	bool found = false;

	if (!f)
		return false;
	*start = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %255s", &addr, &type, sym) != 3)
			continue;
		if (!found && (type == 't' || type == 'T') && !strcmp(sym, name)) {
			*start = addr;
			found = true;
		}
	}
	if (!found || !*start) {
		fclose(f);
		return false;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %255s", &addr, &type, sym) == 3 &&
		    addr > *start && addr < next)
			next = addr;
	}
	fclose(f);
	*end = next;
	return next != ~0ul;
}

/* --- the queue's rx-alloc-fail counter, netdev netlink qstats-get --------- */

struct nlbuf {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[256];
};

static void put_attr(struct nlbuf *m, int type, const void *data, int len)
{
	struct nlattr *a = (struct nlattr *)((char *)m + NLMSG_ALIGN(m->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Calls @fn for each attribute of each reply; 0, or -errno */
static int genl_call(int fd, struct nlbuf *req,
		     void (*fn)(struct nlattr *a, void *arg), void *arg)
{
	static char buf[32768];
	bool done = false;

	if (send(fd, req, req->nh.nlmsg_len, 0) < 0)
		return -errno;
	while (!done) {
		int n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0)
			return -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			struct nlattr *a;
			int len;

			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				return e->error;
			}
			len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
			while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
				fn(a, arg);
				len -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
			}
			if (!(nh->nlmsg_flags & NLM_F_MULTI))
				done = true;
		}
	}
	return 0;
}

static void family_id_attr(struct nlattr *a, void *arg)
{
	if (a->nla_type == CTRL_ATTR_FAMILY_ID)
		*(int *)arg = *(uint16_t *)((char *)a + NLA_HDRLEN);
}

static void alloc_fail_attr(struct nlattr *a, void *arg)
{
	char *p = (char *)a + NLA_HDRLEN;

	if (a->nla_type != NETDEV_A_QSTATS_RX_ALLOC_FAIL)
		return;
	if (a->nla_len == NLA_HDRLEN + 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		*(long long *)arg = v;
	} else if (a->nla_len == NLA_HDRLEN + 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		*(long long *)arg = v;
	}
}

/* The device's rx-alloc-fail, -1 when the kernel or driver does not say */
static long long rx_alloc_fail(int ifindex)
{
	struct nlbuf req = {};
	long long val = -1;
	int fd, family = 0;
	uint32_t idx = ifindex;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req.nh.nlmsg_type = GENL_ID_CTRL;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.gh.cmd = CTRL_CMD_GETFAMILY;
	req.gh.version = 1;
	put_attr(&req, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME, sizeof(NETDEV_FAMILY_NAME));
	if (genl_call(fd, &req, family_id_attr, &family) || !family)
		goto out;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req.nh.nlmsg_type = family;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 2;
	req.gh.cmd = NETDEV_CMD_QSTATS_GET;
	req.gh.version = 1;
	put_attr(&req, NETDEV_A_QSTATS_IFINDEX, &idx, sizeof(idx));
	if (genl_call(fd, &req, alloc_fail_attr, &val))
		val = -1;
out:
	close(fd);
	return val;
}

/* --- the kernel log ------------------------------------------------------ */

static char *klog;

static void read_klog(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), n;

	if (size <= 0)
		result("SKIP syslog(2) gives no kernel log: %s", strerror(errno));
	free(klog);
	klog = calloc(1, size + 1);
	if (!klog)
		result("SKIP no memory for a %d-byte kernel log", size);
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, klog, size);
	if (n < 0)
		result("SKIP syslog(2) READ_ALL: %s", strerror(errno));
	klog[n] = 0;
}

static const char *const reports[] = {
	"WARNING:", "BUG:", "Oops", "Kernel panic", "UBSAN:",
	"Unable to handle kernel", "Internal error:",
};

/* The line of the first report (NULL: none) and, through @in_trace and
 * @frame, whether gem_rx_alloc_failed is in the lines that follow it up to
 * its "---[ end trace" and the first macb frame named there.
 */
static char *first_report(bool *in_trace, char *frame, size_t frame_len)
{
	char *line, *end, *found = NULL;

	*in_trace = false;
	frame[0] = 0;
	for (line = klog; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (!found) {
			for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
				if (strstr(line, reports[i])) {
					found = line;
					break;
				}
		}
		if (found) {
			char *g = strstr(line, "gem_");

			if (!g)
				g = strstr(line, "macb_");
			if (strstr(line, "gem_rx_alloc_failed"))
				*in_trace = true;
			if (g && !frame[0]) {
				size_t k = strcspn(g, " )");

				snprintf(frame, frame_len, "%.*s", (int)k, g);
			}
			if (line != found && strstr(line, "---[ end trace"))
				break;
		}
		if (end && found != line)
			*end = '\n';
	}
	if (!found)
		return NULL;
	/* strip the <level> prefix syslog(2) keeps */
	if (found[0] == '<' && strchr(found, '>'))
		found = strchr(found, '>') + 1;
	return found;
}

static int count_in_klog(const char *what)
{
	int n = 0;

	for (const char *p = klog; (p = strstr(p, what)); p++)
		n++;
	return n;
}

int main(void)
{
	unsigned long start, end;
	long times_left, times_set = TIMES;
	long long fails;
	char buf[64], frame[96], counted[32];
	struct utsname u;
	int ifindex, err_open, err, warns_before;
	bool ok, in_trace;
	char *rep;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&u);
	printf("zynq: kernel %s %s: the GEM's open under fail_page_alloc\n", u.release, u.machine);

	ifindex = if_nametoindex(IFNAME);
	if (!ifindex)
		result("SKIP no %s: the GEM was not probed (see the boot log)", IFNAME);

	/* lockdep switches itself off after its first report: then the
	 * assertion this test is about cannot fire
	 */
	read_klog();
	rep = first_report(&in_trace, frame, sizeof(frame));
	if (rep)
		result("FAIL before the test, at boot: %s", rep);
	{
		FILE *f = fopen("/proc/lockdep_stats", "r");
		char line[128];
		int on = -1;

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, " debug_locks: %d", &on) == 1)
				break;
		if (f)
			fclose(f);
		if (on < 0)
			result("SKIP no /proc/lockdep_stats: this kernel has no lockdep (CONFIG_PROVE_LOCKING), the assertion cannot fire");
		if (on == 0)
			result("SKIP lockdep is off (debug_locks 0) before the test");
	}

	if (!symbol_range(FILL_FN, &start, &end))
		result("SKIP no %s in /proc/kallsyms: no macb GEM support built in, or no KALLSYMS", FILL_FN);
	printf("zynq: failing order-0 page allocations from %s (0x%lx-0x%lx), task %d only\n",
	       FILL_FN, start, end, getpid());

	if (access(FPA "probability", W_OK))
		result("SKIP no %s: CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS, debugfs", FPA);
	if (access(FPA "require-start", W_OK))
		result("SKIP no %srequire-start: CONFIG_FAULT_INJECTION_STACKTRACE_FILTER", FPA);
	warns_before = count_in_klog("Unable to allocate RX buffer");

	must_write(FPA "task-filter", "Y");
	must_write(FPA "ignore-gfp-wait", "N");
	must_write(FPA "ignore-gfp-highmem", "N");
	must_write(FPA "min-order", "0");
	must_write(FPA "interval", "1");
	/* one page_pool refill is one bulk allocation of up to 64 pages, one
	 * call here: the first goes through, the next fails
	 */
	must_write(FPA "space", "2");
	must_write(FPA "stacktrace-depth", "32");
	snprintf(buf, sizeof(buf), "0x%lx", start);
	must_write(FPA "require-start", buf);
	snprintf(buf, sizeof(buf), "0x%lx", end);
	must_write(FPA "require-end", buf);
	snprintf(buf, sizeof(buf), "%ld", times_set);
	must_write(FPA "times", buf);
	must_write(FPA "probability", "100");
	must_write("/proc/self/make-it-fail", "1");

	err_open = set_up(true);

	must_write("/proc/self/make-it-fail", "0");
	must_write(FPA "probability", "0");
	times_left = read_long(FPA "times", &ok);
	if (!ok)
		result("SKIP cannot read %stimes", FPA);
	printf("zynq: open under injection: %s; %ld page allocation failure(s) injected\n",
	       err_open ? strerror(-err_open) :
	       times_set - times_left ? "up, its RX ring filled in part" : "up",
	       times_set - times_left);

	/* netlink has the queues' counters while the device is up */
	if (err_open && (err = set_up(true)))
		result("FAIL up again, without fault injection: %s", strerror(-err));
	fails = rx_alloc_fail(ifindex);
	if (fails < 0)
		snprintf(counted, sizeof(counted), "not reported");
	else
		snprintf(counted, sizeof(counted), "%lld", fails);
	sleep(1);	/* let the RX poll refill the rest */
	if ((err = set_up(false)))
		result("FAIL down after the injected failures: %s", strerror(-err));
	if ((err = set_up(true)))
		result("FAIL up again, without fault injection: %s", strerror(-err));
	sleep(1);
	if ((err = set_up(false)))
		result("FAIL down at the end: %s", strerror(-err));
	printf("zynq: down, up again and down without fault injection\n");

	read_klog();
	printf("zynq: rx-alloc-fail (netdev qstats) %s; 'Unable to allocate RX buffer' logged %d time(s)\n",
	       counted, count_in_klog("Unable to allocate RX buffer") - warns_before);

	/* a test that cannot fail is no test */
	if (times_set - times_left <= 0)
		result("SKIP no page allocation of the open failed: the injection never hit (%s range, task filter)", FILL_FN);
	if (fails == 0)
		result("SKIP %ld failures injected, but rx-alloc-fail is 0: they did not reach gem_rx_alloc_failed()",
		       times_set - times_left);

	rep = first_report(&in_trace, frame, sizeof(frame));
	if (rep)
		result("FAIL %s (gem_rx_alloc_failed %s the trace%s%s)", rep,
		       in_trace ? "in" : "not in", frame[0] ? "; first macb frame " : "", frame);

	result("PASS %ld RX page allocation(s) of the open failed (rx-alloc-fail %s, open: %s), reopened cleanly, no WARNING or BUG in the kernel log",
	       times_set - times_left, counted,
	       err_open ? strerror(-err_open) : "ok, ring in part");
	return 0;
}
