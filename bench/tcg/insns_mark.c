// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The guest half of a counted window (bench/gem-insns.sh): reads the
 * interface's and UDP's counters, runs the mark, sleeps SECONDS, runs the
 * mark again and reads the counters again, then prints
 *
 *	WINDOW <label> rx=<frames> udp_in=<datagrams> rcvbuf_errors=<n>
 *	       tcp_in=<segments> ns=<ns>
 *
 * The mark is a function the linker puts at a fixed address
 * (INSNS_MARK_ADDR, the Makefile's --section-start); the tb_insns plugin,
 * given that address in TB_INSNS_MARK, writes a snapshot of its kernel
 * counts each time the guest runs it. Between the two marks this process
 * only sleeps, so the kernel's work in the window is the traffic's, and
 * the counters are read outside it.
 *
 *	insns_mark IFNAME SECONDS LABEL
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* noinline and used: the plugin keys on the block at this address, which
 * must stay a function of its own that a call enters.
 */
__attribute__((noinline, used, section("xdplab_mark")))
void insns_mark(void)
{
	__asm__ volatile("" ::: "memory");
}

static unsigned long long read_ull(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (!f || fscanf(f, "%llu", &v) != 1) {
		fprintf(stderr, "insns_mark: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	return v;
}

struct snmp {
	unsigned long long udp_in, rcvbuf_errors, tcp_in;
};

/* /proc/net/snmp: the second "Udp:" line's InDatagrams (field 1) and
 * RcvbufErrors (5), the second "Tcp:" line's InSegs (10).
 */
static void read_snmp(struct snmp *c)
{
	int udp = 0, tcp = 0;
	char line[1024];
	FILE *f = fopen("/proc/net/snmp", "r");

	memset(c, 0, sizeof(*c));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Udp:", 4) && ++udp == 2)
			sscanf(line + 4, "%llu %*u %*u %*u %llu", &c->udp_in, &c->rcvbuf_errors);
		if (!strncmp(line, "Tcp:", 4) && ++tcp == 2)
			sscanf(line + 4, "%*d %*d %*d %*d %*u %*u %*u %*u %*u %llu", &c->tcp_in);
	}
	fclose(f);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long rx0, rx1;
	struct snmp c0, c1;
	struct timespec len = { 0 };
	char path[256];
	long long t0, t1;

	if (argc != 4 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: insns_mark IFNAME SECONDS LABEL (e.g. insns_mark eth0 4 udp64)\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", argv[1]);
	len.tv_sec = atoi(argv[2]);

	read_snmp(&c0);
	rx0 = read_ull(path);
	t0 = now_ns();
	insns_mark();
	nanosleep(&len, NULL);
	insns_mark();
	t1 = now_ns();
	rx1 = read_ull(path);
	read_snmp(&c1);
	printf("WINDOW %s rx=%llu udp_in=%llu rcvbuf_errors=%llu tcp_in=%llu ns=%lld\n",
	       argv[3], rx1 - rx0, c1.udp_in - c0.udp_in, c1.rcvbuf_errors - c0.rcvbuf_errors,
	       c1.tcp_in - c0.tcp_in, t1 - t0);
	return 0;
}
