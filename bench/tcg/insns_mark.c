// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The guest half of a counted window (bench/gem-insns.sh): reads the
 * interface's and UDP's counters, runs the mark, sleeps SECONDS, runs the
 * mark again and reads the counters again, then prints
 *
 *	WINDOW <label> rx=<frames> udp_in=<datagrams> rcvbuf_errors=<n> ns=<ns>
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

/* The second "Udp:" line of /proc/net/snmp: InDatagrams is field 1,
 * RcvbufErrors field 5.
 */
static void read_udp(unsigned long long *in, unsigned long long *rcvbuf)
{
	char line[1024];
	int seen = 0;
	FILE *f = fopen("/proc/net/snmp", "r");

	*in = *rcvbuf = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Udp:", 4) && ++seen == 2)
			sscanf(line + 4, "%llu %*u %*u %*u %llu", in, rcvbuf);
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
	unsigned long long rx0, rx1, in0, in1, err0, err1;
	struct timespec len = { 0 };
	char path[256];
	long long t0, t1;

	if (argc != 4 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: insns_mark IFNAME SECONDS LABEL (e.g. insns_mark eth0 4 udp64)\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", argv[1]);
	len.tv_sec = atoi(argv[2]);

	read_udp(&in0, &err0);
	rx0 = read_ull(path);
	t0 = now_ns();
	insns_mark();
	nanosleep(&len, NULL);
	insns_mark();
	t1 = now_ns();
	rx1 = read_ull(path);
	read_udp(&in1, &err1);
	printf("WINDOW %s rx=%llu udp_in=%llu rcvbuf_errors=%llu ns=%lld\n", argv[3],
	       rx1 - rx0, in1 - in0, err1 - err0, t1 - t0);
	return 0;
}
