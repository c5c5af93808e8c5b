// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * review-v12 BUG 1 (kernel-patches/tun/review-v12.md, issue 19): a vhost-net
 * writer that may transmit zero-copy (vhost_net.experimental_zcopytx=1)
 * hands tun each frame together with its buffer's completion (msg_control,
 * a struct ubuf_info). When tun copies the frame after all, because its
 * pieces span more pages than an skb has fragments, and an XDP program
 * consumes it in the driver (XDP_DROP here), tun returned without calling
 * the completion: vhost never gives the buffer back, and closing
 * /dev/vhost-net waits for it forever. Stock 6.12 has it in
 * tun_build_skb(); the series had it in tun_build_skb_pool().
 *
 *  tun_vhost_zcopy_consumed  one such frame under XDP_DROP: vhost returns
 *                            its buffer, and the vhost-net fd closes.
 *
 * The vhost side runs in a child: on a kernel with the bug its exit hangs
 * in close() (uninterruptible, until the guest powers off), and the test
 * reports that instead of hanging with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#include "netns.h"
#include "test.h"
#include "tun.h"
#include "vhost_net.h"

#define TAP0 "xtun0"
#define ZC_PARAM "/sys/module/vhost_net/parameters/experimental_zcopytx"
/* The header and 128 bytes (tun's GOODCOPY_LEN, what it copies of a
 * zero-copy frame without hdr_len) in the first buffer, then 48 pieces of
 * 4 bytes each in a page of its own: more pages than MAX_SKB_FRAGS (17 by
 * default, 45 at most), so tun copies the frame. 320 bytes in all: vhost
 * tries zero-copy from 256 (VHOST_GOODCOPY_LEN).
 */
#define ZC_FIRST 128
#define ZC_PIECE 4
#define ZC_LEN (ZC_FIRST + 48 * ZC_PIECE)

static bool zcopy_enabled(void)
{
	FILE *f = fopen(ZC_PARAM, "r");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v == 1;
}

/* The child: posts the frame, waits up to 5 s for vhost to give its buffer
 * back, reports how many came back (0 or 1) on fd, and closes vhost-net
 * (which, with the buffer still out, never returns).
 */
static void zcopy_child(int tap_fd, int fd)
{
	static uint8_t frame[ZC_LEN];
	struct vhost_net vn;
	int back = -1;

	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = i < 12 ? 0x02 : (uint8_t)i;	/* local MACs, then a pattern */
	if (!vhost_net_open(&vn, tap_fd, 64, 4096)) {
		if (!vhost_net_post_split(&vn, NULL, frame, ZC_LEN, ZC_FIRST, ZC_PIECE) &&
		    !vhost_net_kick(&vn))
			back = vhost_net_reap(&vn, 5);
	}
	if (write(fd, &back, sizeof(back)) != sizeof(back))
		_exit(2);
	close(fd);
	vhost_net_close(&vn);
	_exit(0);
}

/* waitpid() with a bound: true once the child has exited. */
static bool child_exited(pid_t pid, double seconds)
{
	for (int i = 0; i < (int)(seconds * 20); i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		usleep(50000);
	}
	return false;
}

TEST(tun_vhost_zcopy_consumed)
{
	static const struct bpf_insn drop[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	const char *novhost = vhost_net_unavailable();
	char ns[NETNS_NAME_MAX] = "";
	struct tap t = { .fd = -1 };
	int pfd = -1, p[2] = { -1, -1 }, back = -1;
	bool stuck = false;
	pid_t pid = -1;

	if (novhost) {
		test__skip("%s", novhost);
		return;
	}
	if (!zcopy_enabled()) {
		test__skip("vhost-net without zero-copy transmit (" ZC_PARAM " is not 1): boot "
			   "with vhost_net.experimental_zcopytx=1, e.g. make vmtest "
			   "VMTEST_APPEND=vhost_net.experimental_zcopytx=1");
		return;
	}
	if (!ASSERT_OK(netns_add("tunzc", ns), "netns") ||
	    !ASSERT_OK(tap_make(ns, TAP0, 0, 1500, &t), "tap"))
		goto out;
	pfd = xdp_raw_attach(ns, TAP0, drop, 2);
	if (!ASSERT_GE(pfd, 0, "XDP_DROP program in the driver") ||
	    !ASSERT_OK(pipe(p), "pipe"))
		goto out;
	pid = fork();
	if (!pid) {
		close(p[0]);
		zcopy_child(t.fd, p[1]);
	}
	if (!ASSERT_GE(pid, 0, "fork"))
		goto out;
	close(p[1]);
	p[1] = -1;

	struct pollfd pf = { .fd = p[0], .events = POLLIN };

	if (!ASSERT_EQ(poll(&pf, 1, 20000), 1, "the child's report within 20 s") ||
	    !ASSERT_EQ(read(p[0], &back, sizeof(back)), (ssize_t)sizeof(back), "report"))
		goto out;
	ASSERT_EQ(back, 1, "buffers vhost gave back, of the 1 frame the program dropped");
	stuck = !child_exited(pid, 10);
	ASSERT_FALSE(stuck, "close(/dev/vhost-net) returned in the child");
	if (stuck)
		fprintf(stderr, "    the child (pid %d) stays in close(/dev/vhost-net), waiting for "
			"the buffer's completion, with the tap; the guest's power-off ends it\n",
			(int)pid);
out:
	if (pid > 0 && !stuck)
		child_exited(pid, 10);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (pfd >= 0)
		close(pfd);
	tap_close(&t);
	if (ns[0])
		netns_del(ns);
}
