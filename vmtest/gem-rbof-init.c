// SPDX-License-Identifier: GPL-2.0
/*
 * The whole userland of the sifive_u board (vmtest/gem-rbof.sh): /init of
 * its initramfs, built static for riscv64. It checks that frames spanning
 * several GEM RX buffers arrive byte for byte on a NET_IP_ALIGN=2 kernel,
 * where macb sets the receive buffer offset (NCFGR.RBOF) to 2.
 *
 * QEMU loops the GEM's transmit back to its receive (a UDP socket sent to
 * itself), so every frame the program sends to its own MAC comes back
 * through gem_rx(). Frame lengths sweep across the first and second RX
 * buffer boundaries at MTU 9000; each payload byte depends on its position,
 * so a part of a frame written or read 2 bytes off shows as a mismatch.
 *
 * Three passes at MTU 9000, where an RX buffer is a page: without a
 * program (the skb built from the RX buffers), with a native XDP_PASS
 * program that accepts fragments (the same frames through the xdp_buff
 * path), and with one that sends each frame back out once with XDP_TX
 * (marked 'T', it returns marked 'R' and is passed): that frame must come
 * back whole, with the FCS macb computes for an XDP frame when checksum
 * offload is on, also when it spans several buffers. Then the same three
 * at MTU 1280, where two RX buffers share a page (page_pool fragments).
 * The programs are loaded with bpf(2) directly: there is no libbpf for
 * riscv64 here, and a few instructions need none.
 *
 * Output, one line each, read by vmtest/gem-rbof.sh:
 *   rbof: <pass>: <n> frames, <ok> ok (<f> with ...), <bad> corrupt, <lost> lost
 *   rbof: <pass>: len <L>: byte <i> is 0x.., expected 0x..  (first mismatch)
 *   RBOF-RESULT: PASS | FAIL <why> | SKIP <why>
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/reboot.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define IFNAME		"eth0"
#define MTU		9000
#define SMALL_MTU	1280	/* two RX buffers to a 4K page, NET_IP_ALIGN 2 */
#define ETHERTYPE	0x88b5	/* IEEE local experimental */
#define RECV_WAIT_MS	3000
#define SEQ_OFF		(ETH_HLEN + 1)	/* where a frame's sequence number is */
#define MARK_OFF	(SEQ_OFF + 4)	/* 'T': XDP_TX me, 'R': I was */

static unsigned char own_mac[ETH_ALEN];
static int ifindex;

static void result(const char *fmt, ...)
{
	va_list ap;

	printf("RBOF-RESULT: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	sync();
	reboot(LINUX_REBOOT_CMD_POWER_OFF);
	exit(1);
}

static unsigned char pattern(unsigned int seq, unsigned int i)
{
	/* 251 is prime: a shift by any small count changes most bytes */
	return (i + seq * 13) % 251;
}

/* The Ethernet FCS (CRC-32, reflected, sent least significant byte first) */
static unsigned int eth_crc(const unsigned char *p, unsigned int len)
{
	unsigned int crc = ~0u;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/* What came back is what was sent, or that and its FCS: macb appends a
 * software FCS to frames it sends with checksum offload on (TX_NOCRC), and
 * QEMU sends those 4 bytes on as data where the hardware would not add its
 * own; the receive side then cannot tell them from the frame.
 */
static bool fcs_at(const unsigned char *p, unsigned int len, unsigned int fcs)
{
	return p[len] == (fcs & 0xff) && p[len + 1] == ((fcs >> 8) & 0xff) &&
	       p[len + 2] == ((fcs >> 16) & 0xff) && p[len + 3] == fcs >> 24;
}

static bool same_frame(const unsigned char *rx, int n, const unsigned char *tx, int len)
{
	if (n != len && n != len + 4)
		return false;
	if (memcmp(rx, tx, len))
		return false;
	return n == len || fcs_at(rx, len, eth_crc(tx, len));
}

/* A frame sent back by XDP_TX: the frame, marked 'R', the FCS of its first
 * trip (as data), then the FCS macb added to the XDP frame, over all that
 * came before it. The GEM's own FCS would not show: QEMU sends none.
 */
static bool same_tx_frame(const unsigned char *rx, int n, const unsigned char *tx, int len)
{
	if (n != len + 8 || rx[MARK_OFF] != 'R' || memcmp(rx, tx, MARK_OFF) ||
	    memcmp(rx + MARK_OFF + 1, tx + MARK_OFF + 1, len - MARK_OFF - 1))
		return false;
	return fcs_at(rx, len, eth_crc(tx, len)) && fcs_at(rx, len + 4, eth_crc(rx, len + 4));
}

/* The first mismatch, and the byte ranges that differ (at most 8) */
static void report_diff(const char *name, const unsigned char *rx, int n,
			const unsigned char *tx, int len)
{
	int end = n < len ? n : len, i, from = -1, ranges = 0;

	for (i = 0; i <= end && ranges < 8; i++) {
		bool differs = i < end && rx[i] != tx[i];

		if (differs && from < 0) {
			if (!ranges)
				printf("rbof: %s: len %d: byte %d is 0x%02x, expected 0x%02x\n",
				       name, len, i, rx[i], tx[i]);
			from = i;
		} else if (!differs && from >= 0) {
			printf("rbof: %s: len %d: bytes %d-%d differ\n", name, len, from, i - 1);
			from = -1;
			ranges++;
		}
	}
	if (!ranges && n == len + 4)
		printf("rbof: %s: len %d: the frame is intact, its 4-byte trailer is not its FCS (%02x%02x%02x%02x)\n",
		       name, len, rx[len], rx[len + 1], rx[len + 2], rx[len + 3]);
	else if (!ranges)
		printf("rbof: %s: len %d: %d bytes came back\n", name, len, n);
}

static int if_ioctl(unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	if (fd < 0)
		return -errno;
	strncpy(ifr->ifr_name, IFNAME, IFNAMSIZ - 1);
	err = ioctl(fd, req, ifr) ? -errno : 0;
	close(fd);
	return err;
}

static int read_int(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void setup_gem(int mtu)
{
	struct ifreq ifr = {};
	long long deadline;
	int err;

	ifindex = if_nametoindex(IFNAME);
	if (!ifindex)
		result("SKIP no %s: the GEM was not probed (see the boot log)", IFNAME);
	if ((err = if_ioctl(SIOCGIFHWADDR, &ifr)))
		result("FAIL SIOCGIFHWADDR: %s", strerror(-err));
	memcpy(own_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);

	/* the MTU sizes the RX buffers at the next open */
	memset(&ifr, 0, sizeof(ifr));
	if ((err = if_ioctl(SIOCGIFFLAGS, &ifr)))
		result("FAIL SIOCGIFFLAGS: %s", strerror(-err));
	if (ifr.ifr_flags & IFF_UP) {
		ifr.ifr_flags &= ~IFF_UP;
		if ((err = if_ioctl(SIOCSIFFLAGS, &ifr)))
			result("FAIL %s down: %s", IFNAME, strerror(-err));
	}

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_mtu = mtu;
	if ((err = if_ioctl(SIOCSIFMTU, &ifr)))
		result("FAIL MTU %d on %s: %s", mtu, IFNAME, strerror(-err));

	memset(&ifr, 0, sizeof(ifr));
	if ((err = if_ioctl(SIOCGIFFLAGS, &ifr)))
		result("FAIL SIOCGIFFLAGS: %s", strerror(-err));
	ifr.ifr_flags |= IFF_UP;
	if ((err = if_ioctl(SIOCSIFFLAGS, &ifr)))
		result("FAIL %s up: %s", IFNAME, strerror(-err));

	deadline = now_ms() + 30000;
	while (read_int("/sys/class/net/" IFNAME "/carrier") != 1) {
		if (now_ms() > deadline)
			result("FAIL no carrier on %s within 30 s", IFNAME);
		usleep(100000);
	}
	printf("rbof: %s up, MTU %d, NET_IP_ALIGN 2 (riscv64)\n", IFNAME, mtu);
}

static int packet_socket(void)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETHERTYPE),
		.sll_ifindex = ifindex,
	};
	int one = 1, fd;

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETHERTYPE));
	if (fd < 0)
		result("FAIL AF_PACKET socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		result("FAIL bind to %s: %s", IFNAME, strerror(errno));
	/* our own transmits would be looped to us by the stack as well */
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)))
		result("FAIL PACKET_IGNORE_OUTGOING: %s", strerror(errno));
	return fd;
}

/* Frame lengths (Ethernet header included, FCS not): the sweep covers the
 * ends of the first two RX buffers at MTU 9000, whatever their exact size
 * (a page less headroom and skb_shared_info: 3.5 to 3.8 KB), and ends at a
 * three-buffer frame of MAX_LEN: QEMU 7.2 reads a TX descriptor's length
 * with 13 bits, so longer frames leave the emulated GEM cut short.
 */
#define MAX_LEN 8000

static int next_len(int len, int mtu)
{
	/* at the small MTU every frame fits one buffer: its last 100 sizes */
	if (mtu < MTU)
		return len < 60 ? 60 : len < mtu - 100 ? mtu - 100 :
		       len < mtu + ETH_HLEN ? len + 1 : 0;
	if (len < 60)
		return 60;
	if (len < 1514)
		return 1514;
	if (len < 3300)
		return 3300;
	if (len < 3900)
		return len + 3;
	if (len < 6800)
		return 6800;
	if (len < 7600)
		return len + 5;
	if (len < MAX_LEN)
		return MAX_LEN;
	return 0;
}

/* @xdp_tx: the frames are marked for the XDP_TX program */
static void run_pass(const char *name, int mtu, bool xdp_tx)
{
	static unsigned char tx[MTU + ETH_HLEN], rx[MTU + ETH_HLEN + 64];
	unsigned int seq = 0, ok = 0, bad = 0, lost = 0, fcs_trailers = 0, i;
	int fd = packet_socket(), len, n;
	bool reported = false;

	for (len = next_len(0, mtu); len; len = next_len(len, mtu), seq++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long deadline;

		memcpy(tx, own_mac, ETH_ALEN);
		memcpy(tx + ETH_ALEN, own_mac, ETH_ALEN);
		tx[12] = ETHERTYPE >> 8;
		tx[13] = ETHERTYPE & 0xff;
		for (i = ETH_HLEN; i < (unsigned int)len; i++)
			tx[i] = pattern(seq, i);
		/* QEMU's GEM, with TX checksum offload on, takes any frame
		 * whose byte 14 reads as IP version 4 for IPv4, whatever its
		 * EtherType, and writes an IP checksum into bytes 24-25: byte
		 * 14 is 0. Then the sequence number, so that a late frame is
		 * not taken for this one.
		 */
		tx[ETH_HLEN] = 0;
		memcpy(tx + SEQ_OFF, &seq, sizeof(seq));
		tx[MARK_OFF] = xdp_tx ? 'T' : 'S';
		if (send(fd, tx, len, 0) != len)
			result("FAIL send of %d bytes: %s", len, strerror(errno));

		deadline = now_ms() + RECV_WAIT_MS;
		for (;;) {
			long long left = deadline - now_ms();

			if (left <= 0 || poll(&pfd, 1, left) <= 0) {
				lost++;
				break;
			}
			n = recv(fd, rx, sizeof(rx), 0);
			if (n < (int)(SEQ_OFF + sizeof(seq)) ||
			    memcmp(rx + SEQ_OFF, &seq, sizeof(seq)))
				continue;	/* not this frame's */
			if (xdp_tx ? same_tx_frame(rx, n, tx, len) : same_frame(rx, n, tx, len)) {
				ok++;
				fcs_trailers += n != len;
				break;
			}
			bad++;
			if (!reported && xdp_tx) {
				printf("rbof: %s: len %d: received %d bytes (%d expected: the frame, its first FCS, the XDP frame's FCS), mark '%c'\n",
				       name, len, n, len + 8, n > MARK_OFF ? rx[MARK_OFF] : '?');
				tx[MARK_OFF] = 'R';
				report_diff(name, rx, n, tx, len);
				reported = true;
			} else if (!reported) {
				if (n != len && n != len + 4)
					printf("rbof: %s: len %d: received %d bytes\n", name, len, n);
				report_diff(name, rx, n, tx, len);
				reported = true;
			}
			break;
		}
	}
	close(fd);
	printf("rbof: %s: %u frames, %u ok (%u with the software FCS after them), %u corrupt, %u lost\n",
	       name, seq, ok, fcs_trailers, bad, lost);
	fflush(stdout);
	if (bad || lost)
		result("FAIL %s: %u of %u frames corrupt, %u lost", name, bad, seq, lost);
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

#define INSN(c, d, s_, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s_), .off = (o), .imm = (i) })

/* A native XDP program that takes multi-buffer frames: XDP_PASS, or with
 * @xdp_tx XDP_TX for a frame marked 'T' (marked 'R' on its way out) and
 * XDP_PASS for the rest. Returns the link's fd (closing it detaches the
 * program), or -1 when the driver has no native XDP (stock macb).
 */
static int attach_xdp(bool xdp_tx)
{
	struct bpf_insn pass[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct bpf_insn tx[] = {
		/* r2 = data, r3 = data_end */
		INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, offsetof(struct xdp_md, data), 0),
		INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, offsetof(struct xdp_md, data_end), 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_2, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, MARK_OFF + 1),
		INSN(BPF_JMP | BPF_JGT | BPF_X, BPF_REG_4, BPF_REG_3, 5, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_B, BPF_REG_5, BPF_REG_2, MARK_OFF, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 3, 'T'),
		INSN(BPF_ST | BPF_MEM | BPF_B, BPF_REG_2, 0, MARK_OFF, 'R'),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_TX),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static char log[4096];
	union bpf_attr attr = {};
	int prog, link;

	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.insns = (unsigned long)(xdp_tx ? tx : pass);
	attr.insn_cnt = xdp_tx ? sizeof(tx) / sizeof(tx[0]) : sizeof(pass) / sizeof(pass[0]);
	attr.license = (unsigned long)"GPL";
	attr.prog_flags = BPF_F_XDP_HAS_FRAGS;
	attr.log_buf = (unsigned long)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	prog = sys_bpf(BPF_PROG_LOAD, &attr);
	if (prog < 0)
		result("FAIL loading the %s program: %s\n%s", xdp_tx ? "XDP_TX" : "XDP_PASS",
		       strerror(errno), log);

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog;
	attr.link_create.target_ifindex = ifindex;
	attr.link_create.attach_type = BPF_XDP;
	attr.link_create.flags = XDP_FLAGS_DRV_MODE;
	link = sys_bpf(BPF_LINK_CREATE, &attr);
	if (link < 0 && errno != EOPNOTSUPP)
		result("FAIL native XDP on %s: %s", IFNAME, strerror(errno));
	close(prog);
	return link;
}

/* The three passes at one MTU; false when the driver has no native XDP */
static bool run_mtu(int mtu)
{
	char name[32];
	int link;

	setup_gem(mtu);
	snprintf(name, sizeof(name), "skb/%d", mtu);
	run_pass(name, mtu, false);
	for (int tx = 0; tx < 2; tx++) {
		link = attach_xdp(tx);
		if (link < 0) {
			printf("rbof: xdp: not run, %s has no native XDP (stock macb)\n", IFNAME);
			return false;
		}
		/* an attach may restart the device: wait for the link again */
		setup_gem(mtu);
		snprintf(name, sizeof(name), "%s/%d", tx ? "xdp_tx" : "xdp", mtu);
		run_pass(name, mtu, tx);
		close(link);
	}
	return true;
}

int main(void)
{
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("rbof: the sifive_u GEM's multi-buffer frames, byte for byte\n");

	if (!run_mtu(MTU))
		result("PASS skb only");
	run_mtu(SMALL_MTU);
	result("PASS");
	return 0;
}
