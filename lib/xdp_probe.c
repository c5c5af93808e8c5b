// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "xdp_probe.h"

/* Does the kernel load an XDP program ("return XDP_PASS") with these
 * BPF_PROG_LOAD flags? *cached keeps the answer for the caller's flag.
 */
static bool kernel_takes_xdp_flags(__u32 flags, int *cached)
{
	const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 2 },	/* r0 = XDP_PASS */
		{ .code = 0x95 },				/* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = flags);
	int fd;

	if (*cached >= 0)
		return *cached;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xdplab_probe", "GPL", insns, 2, &opts);
	*cached = fd >= 0;
	if (fd >= 0)
		close(fd);
	return *cached;
}

bool xdplab_kernel_has_frags(void)
{
	static int cached = -1;

	return kernel_takes_xdp_flags(BPF_F_XDP_HAS_FRAGS, &cached);
}

bool xdplab_kernel_has_xdp_gso(void)
{
	static int cached = -1;

	return kernel_takes_xdp_flags(BPF_F_XDP_HAS_FRAGS | BPF_F_XDP_GSO, &cached);
}
