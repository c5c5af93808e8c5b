// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the stress_* tests share; see stress.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <linux/types.h>

#include "cli.h"
#include "netns.h"
#include "pkt.h"
#include "stress.h"
#include "test.h"
#include "xdplab.h"
#include "xdp_pass.skel.h"

double stress_secs(void)
{
	const char *e = getenv("XDPLAB_STRESS_SECS");
	double v = e ? atof(e) : 0;

	return v > 0 ? v : STRESS_SECS;
}

void storm_begin(struct storm *s)
{
	memset(s, 0, sizeof(*s));
	s->end = now_secs() + stress_secs();
	s->steps = -1;
}

bool storm_next(struct storm *s)
{
	s->steps++;
	return s->steps < STRESS_STEPS && (s->steps < STRESS_MIN_STEPS || now_secs() < s->end);
}

void storm_of(storm_op op, void *ctx, const char *what, int min_steps)
{
	struct storm s;

	for (storm_begin(&s); storm_next(&s);) {
		int err = op(ctx, s.steps);

		if (err && s.errors++ < 3)
			printf("    %s, step %d: %s\n", what, s.steps, strerror(-err));
	}
	if (test__verbose())
		printf("    %s: %d changes\n", what, s.steps);
	ASSERT_GE(s.steps, min_steps, "changes made");
	ASSERT_EQ(s.errors, 0, "changes refused");
}

/* ---- the kernel's log ---- */

/* What the vmtest's console scan fails a run on, and what RT=1 and the
 * page pool add; kept to lines a healthy kernel never prints. An injected
 * allocation failure is not a report ("page allocation failure" is the
 * point of FAULT=1), what it breaks afterwards is.
 */
static const char *const report_marks[] = {
	"WARNING:", "BUG:", "KASAN", "Oops", "Kernel panic", "UBSAN:",
	"general protection fault", "kernel BUG at",
	"sleeping function called from invalid context", "scheduling while atomic",
	"Invalid wait context", "possible circular locking dependency",
	"possible recursive locking", "inconsistent lock state",
	"suspicious RCU usage", "unreferenced object", "suspected memory leak",
	"stalled pool shutdown", "DMA-API:", "blocked for more than",
	"self-detected stall", "detected stalls on CPUs",
};

/* Lines with a mark that a healthy kernel prints all the same: dma-debug
 * growing its entry pool past a small dma_debug_entries= (test
 * macb_netpoll/xdp_xmit_print)
 */
static const char *const report_exceptions[] = {
	"DMA-API: dma_debug_entry pool grown to",
};

bool kernel_report_line(const char *line)
{
	for (size_t i = 0; i < sizeof(report_exceptions) / sizeof(report_exceptions[0]); i++)
		if (strstr(line, report_exceptions[i]))
			return false;
	for (size_t i = 0; i < sizeof(report_marks) / sizeof(report_marks[0]); i++)
		if (strstr(line, report_marks[i]))
			return true;
	return false;
}

void kwatch_start(struct kwatch *w)
{
	w->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (w->fd >= 0 && lseek(w->fd, 0, SEEK_END) < 0) {
		close(w->fd);
		w->fd = -1;
	}
}

bool kwatch_check(struct kwatch *w, const char *what)
{
	char rec[2048];
	int reports = 0;

	if (w->fd < 0) {
		if (test__verbose())
			printf("    %s: /dev/kmsg unreadable here, kernel log not checked\n", what);
		return true;
	}
	for (;;) {
		ssize_t n = read(w->fd, rec, sizeof(rec) - 1);
		char *msg;

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten before we read it: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		/* "prio,seq,usec,flags;text\n" then " KEY=value" lines */
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		msg[strcspn(msg, "\n")] = '\0';
		if (kernel_report_line(msg) && reports++ < 5)
			printf("    kernel: %s\n", msg);
	}
	close(w->fd);
	w->fd = -1;
	return test__report(reports == 0, __FILE__, __LINE__, what,
			    "%d kernel report line(s) since the storm began", reports);
}

#define KMEMLEAK "/sys/kernel/debug/kmemleak"

static bool kmemleak_cmd(const char *cmd)
{
	int fd = open(KMEMLEAK, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd);
	close(fd);
	return ok;
}

void kmemleak_forget(void)
{
	kmemleak_cmd("clear");
}

/* Is @fn one of the allocator's own frames, which every backtrace starts with? */
static bool kmemleak_alloc_frame(const char *fn)
{
	static const char *const own[] = {
		"kmemleak_", "kmem_cache_alloc", "__kmalloc", "kmalloc", "kzalloc",
		"__vmalloc", "pcpu_alloc", "slab_", "__alloc_skb", "alloc_skb",
		"__alloc_pages", "alloc_pages", "kmalloc_reserve",
	};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strncmp(fn, own[i], strlen(own[i])))
			return true;
	return false;
}

/* One line a suspect: its size, who allocated it and the first four frames
 * past the allocator, so that a report of many objects fits in a log and
 * shows which one leaked first (the others often hang off it); then the
 * first 3000 bytes of kmemleak's own text.
 */
static void kmemleak_summary(const char *buf)
{
	const char *obj = buf;
	int n = 0;

	while ((obj = strstr(obj, "unreferenced object"))) {
		const char *next = strstr(obj + 1, "unreferenced object");
		size_t len = next ? (size_t)(next - obj) : strlen(obj);
		char one[4096], *line, *save = NULL, size[32] = "?", comm[64] = "?";
		unsigned long jiffies = 0;
		int frames = 0;

		snprintf(one, sizeof(one), "%.*s", (int)len, obj);
		sscanf(one, "unreferenced object %*s (size %31[0-9]", size);
		line = strstr(one, "comm \"");
		if (line)
			sscanf(line, "comm \"%63[^\"]\", pid %*d, jiffies %lu", comm, &jiffies);
		printf("    leak %d: %s B, comm %s, jiffies %lu:", ++n, size, comm, jiffies);
		line = strstr(one, "backtrace");
		line = line ? strchr(line, '\n') : NULL;	/* the frames follow it */
		for (line = line ? strtok_r(line, "\n", &save) : NULL; line && frames < 4;
		     line = strtok_r(NULL, "\n", &save)) {
			char fn[96];

			if (sscanf(line, " %95[^+ ]+", fn) != 1 || strchr(fn, '(') ||
			    kmemleak_alloc_frame(fn))
				continue;
			printf(" %s", fn);
			frames++;
		}
		printf("\n");
		obj += len;
	}
	printf("%.3000s\n", buf);
}

void kmemleak_check(const char *what)
{
	static char buf[1 << 16];
	ssize_t n = 0, r;
	int fd, leaks = 0;

	if (!kmemleak_cmd("scan") || !kmemleak_cmd("scan"))
		return;		/* not built, or disabled */
	fd = open(KMEMLEAK, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (n < (ssize_t)sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = '\0';
	for (char *p = buf; (p = strstr(p, "unreferenced object")); p++)
		leaks++;
	if (!test__report(leaks == 0, __FILE__, __LINE__, what,
			  "kmemleak suspects %d object(s)", leaks))
		kmemleak_summary(buf);
}

static void put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = write(fd, text, strlen(text));

		(void)n;	/* a watchdog has no one to tell */
		close(fd);
	}
}

pid_t watchdog_start(double secs, const char *what)
{
	pid_t pid = fork();

	if (pid == 0) {
		char line[200];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		usleep(secs * 1e6);
		snprintf(line, sizeof(line), "xdplab stress: %s still running after %.0f s, "
			 "blocked tasks follow\n", what, secs);
		fputs(line + strlen("xdplab stress: "), stdout);
		put_file("/dev/kmsg", line);
		put_file("/proc/sysrq-trigger", "w");
		_exit(0);
	}
	return pid;
}

void watchdog_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* ---- allocation failures during a storm ---- */

#define PP_REFILL_FUNC "page_pool_alloc_pages"

const char *storm_faults_unavailable(void)
{
	return fault_unavailable(FAULT_PAGE_ALLOC) ?: fault_unavailable(FAULT_SLAB);
}

bool storm_faults_on(struct storm_faults *sf, const struct fault_cfg *base)
{
	struct fault_cfg c = *base;
	const char *why;

	memset(sf, 0, sizeof(*sf));
	c.kind = FAULT_SLAB;
	if (!ASSERT_OK(fault_arm(&sf->slab, &c), "failslab on"))
		return false;
	c.kind = FAULT_PAGE_ALLOC;
	if (!ASSERT_OK(fault_arm(&sf->page, &c), "fail_page_alloc on")) {
		fault_disarm(&sf->slab);
		return false;
	}
	why = fault_function_self_report();
	if (why) {
		printf("    fail_function left out: %s\n", why);
	} else if (fault_function_injectable(PP_REFILL_FUNC)) {
		c.kind = FAULT_FUNCTION;
		c.func = PP_REFILL_FUNC;
		c.retval = 0;
		c.probability = base->probability * 4 > 100 ? 100 : base->probability * 4;
		sf->pp_armed = ASSERT_OK(fault_arm(&sf->pp, &c), "fail_function " PP_REFILL_FUNC);
	} else if (test__verbose()) {
		printf("    %s is not injectable here: slab and page failures only\n",
		       PP_REFILL_FUNC);
	}
	return true;
}

void storm_faults_off(struct storm_faults *sf)
{
	long pp = sf->pp_armed ? fault_disarm(&sf->pp) : 0;
	long page = fault_disarm(&sf->page), slab = fault_disarm(&sf->slab);

	printf("    injected: %ld slab, %ld page, %ld " PP_REFILL_FUNC " failures\n", slab, page,
	       pp);
	ASSERT_GT(slab + page + pp, 0, "allocation failures injected");
}

/* ---- traffic ---- */

/* A UDP socket in ns (NULL: here) of the family of ip; bound to the
 * wildcard address at port when port is not 0.
 */
static int udp_socket_in(const char *ns, const char *ip, int port)
{
	struct sockaddr_storage ss;
	int saved = ns ? netns_enter(ns) : -1, fd, one = 1;
	socklen_t sl;

	if ((ns && saved < 0) || !netns_sockaddr(ip, 0, &ss)) {
		netns_leave(saved);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	netns_leave(saved);
	if (fd < 0 || !port)
		return fd;
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	sl = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	((struct sockaddr_in *)&ss)->sin_port = htons(port);	/* same offset in both */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (void *)&ss, sl)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void blast_loop(int tx, int rx, bool gso, int max_len, unsigned long long *counts)
{
	/* plain datagrams of several sizes, and (with gso) 16 KB handed to
	 * the stack as one UDP GSO superframe of 1200-byte segments
	 */
	static const int sizes[] = { 18, 1000, 1472, 3000, 8000, 16000 };
	static uint8_t buf[65536];
	double give_up = now_secs() + 600;
	unsigned int i = 0;

	for (size_t k = 0; k < sizeof(buf); k++)
		buf[k] = pkt_pattern(k);
	while (now_secs() < give_up) {
		int len = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
		int seg = gso && len == 16000 ? 1200 : 0;

		i++;
		if (len > max_len && !seg)
			len = max_len;
		setsockopt(tx, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg));
		if (send(tx, buf, len, MSG_DONTWAIT) > 0)
			__atomic_fetch_add(&counts[0], 1, __ATOMIC_RELAXED);
		while (recv(rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			__atomic_fetch_add(&counts[1], 1, __ATOMIC_RELAXED);
		/* a burst of 8, then a pause: leaves the CPUs of a TCG guest
		 * time for the storm itself
		 */
		if (!(i % 8))
			usleep(1000);
	}
}

int blast_start(struct blaster *b, const char *ns, const char *dst, int port, int max_len,
		bool gso)
{
	struct sockaddr_storage ss;
	socklen_t sl = netns_sockaddr(dst, port, &ss);
	int tx, rx;

	b->pid = -1;
	b->counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b->counts == MAP_FAILED) {
		b->counts = NULL;
		return -1;
	}
	tx = udp_socket_in(ns, dst, 0);
	rx = udp_socket_in(ns, dst, port);
	if (!sl || tx < 0 || rx < 0 || connect(tx, (void *)&ss, sl))
		goto fail;
	b->pid = fork();
	if (b->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		blast_loop(tx, rx, gso, max_len, b->counts);
		_exit(0);
	}
	close(tx);
	close(rx);
	return b->pid > 0 ? 0 : -1;
fail:
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
	munmap(b->counts, 4096);
	b->counts = NULL;
	return -1;
}

void blast_stop(struct blaster *b, unsigned long long *sent, unsigned long long *received)
{
	if (b->pid > 0) {
		kill(b->pid, SIGKILL);
		waitpid(b->pid, NULL, 0);
	}
	b->pid = -1;
	if (sent)
		*sent = b->counts ? b->counts[0] : 0;
	if (received)
		*received = b->counts ? b->counts[1] : 0;
	if (b->counts)
		munmap(b->counts, 4096);
	b->counts = NULL;
}

double udp_probe(const char *sns, const char *rns, const char *dst, int port, double timeout)
{
	struct sockaddr_storage ss;
	socklen_t sl = netns_sockaddr(dst, port, &ss);
	int tx = udp_socket_in(sns, dst, 0), rx = udp_socket_in(rns, dst, port);
	double start = now_secs(), took = -1;
	char buf[64];

	if (!sl || tx < 0 || rx < 0)
		goto out;
	while (now_secs() - start < timeout) {
		struct pollfd p = { rx, POLLIN, 0 };

		sendto(tx, "probe", 5, 0, (void *)&ss, sl);
		if (poll(&p, 1, 100) > 0 && recv(rx, buf, sizeof(buf), 0) > 0) {
			took = now_secs() - start;
			break;
		}
	}
out:
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
	return took;
}

/* ---- links ---- */

static int if_ioctl(const char *ns, const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int saved = ns ? netns_enter(ns) : -1, fd, err = 0;

	if (ns && saved < 0)
		return -ENOENT;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	netns_leave(saved);
	if (fd < 0)
		return -errno;
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	if (ioctl(fd, req, ifr))
		err = -errno;
	close(fd);
	return err;
}

int link_set_mtu(const char *ns, const char *ifname, int mtu)
{
	struct ifreq ifr = { .ifr_mtu = mtu };

	return if_ioctl(ns, ifname, SIOCSIFMTU, &ifr);
}

int link_set_up(const char *ns, const char *ifname, bool up)
{
	struct ifreq ifr = {};
	int err = if_ioctl(ns, ifname, SIOCGIFFLAGS, &ifr);

	if (err)
		return err;
	ifr.ifr_flags = up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP;
	return if_ioctl(ns, ifname, SIOCSIFFLAGS, &ifr);
}

int link_set_channels(const char *ns, const char *ifname, int rx, int tx)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = { .ifr_data = (void *)&ch };
	int err = if_ioctl(ns, ifname, SIOCETHTOOL, &ifr);

	if (err)
		return err;
	ch.cmd = ETHTOOL_SCHANNELS;
	ch.rx_count = ch.max_rx ? rx : 0;
	ch.tx_count = ch.max_tx ? tx : 0;
	ch.combined_count = ch.max_combined ? rx : 0;
	return if_ioctl(ns, ifname, SIOCETHTOOL, &ifr);
}

int link_get_rings(const char *ns, const char *ifname, int *rx, int *tx)
{
	struct ethtool_ringparam r = { .cmd = ETHTOOL_GRINGPARAM };
	struct ifreq ifr = { .ifr_data = (void *)&r };
	int err = if_ioctl(ns, ifname, SIOCETHTOOL, &ifr);

	*rx = r.rx_pending;
	*tx = r.tx_pending;
	return err;
}

int link_set_rings(const char *ns, const char *ifname, int rx, int tx)
{
	struct ethtool_ringparam r = { .cmd = ETHTOOL_GRINGPARAM };
	struct ifreq ifr = { .ifr_data = (void *)&r };
	int err = if_ioctl(ns, ifname, SIOCETHTOOL, &ifr);

	if (err)
		return err;
	r.cmd = ETHTOOL_SRINGPARAM;
	r.rx_pending = rx;
	r.tx_pending = tx;
	return if_ioctl(ns, ifname, SIOCETHTOOL, &ifr);
}

bool link_wait_carrier(const char *ifname, double timeout)
{
	char path[128], c;
	double end = now_secs() + timeout;

	snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", ifname);
	do {
		FILE *f = fopen(path, "r");

		c = f ? fgetc(f) : '0';
		if (f)
			fclose(f);
		if (c == '1')
			return true;
		usleep(50000);
	} while (now_secs() < end);
	return false;
}

/* ---- programs ---- */

int xdp_set_native(const char *ns, const char *ifname, int fd)
{
	int saved = ns ? netns_enter(ns) : -1, idx, err;

	if (ns && saved < 0)
		return -ENOENT;
	idx = if_nametoindex(ifname);
	err = !idx ? -ENODEV : fd >= 0 ? bpf_xdp_attach(idx, fd, XDP_FLAGS_DRV_MODE, NULL)
				     : bpf_xdp_detach(idx, XDP_FLAGS_DRV_MODE, NULL);
	netns_leave(saved);
	return err;
}

bool pass_progs_load(struct pass_progs *p)
{
	p->skel = xdp_pass_bpf__open_and_load();
	if (!ASSERT_OK_PTR(p->skel, "load xdp_pass"))
		return false;
	p->frags = bpf_program__fd(p->skel->progs.xdp_pass_frags);
	p->linear = bpf_program__fd(p->skel->progs.xdp_pass);
	return true;
}

void pass_progs_free(struct pass_progs *p)
{
	xdp_pass_bpf__destroy(p->skel);
	p->skel = NULL;
}
