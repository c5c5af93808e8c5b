// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "prog_test_run.h"

int prog_run(const struct bpf_program *prog, void *frame, uint32_t *len, uint32_t cap,
	     uint32_t linear)
{
	struct xdp_md ctx = { .data_end = linear };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = frame,
		    .data_size_in = *len,
		    .data_out = frame,
		    .data_size_out = cap);
	int err;

	/* With a context, data_end is where the linear part ends. */
	if (linear) {
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
	if (err)
		return -errno;
	*len = opts.data_size_out;
	return opts.retval;
}

int stats_sum(const struct bpf_map *map, uint32_t slot, struct xdplab_datarec *out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xdplab_datarec *v = calloc(ncpu, sizeof(*v));
	int err;

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(map), &slot, v);
	for (int c = 0; !err && c < ncpu; c++) {
		out->packets += v[c].packets;
		out->bytes += v[c].bytes;
		out->mb_packets += v[c].mb_packets;
		out->frames += v[c].frames;
	}
	free(v);
	return err;
}

uint64_t percpu_u64_sum(const struct bpf_map *map, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v = calloc(ncpu, sizeof(*v)), sum = 0;

	if (v && !bpf_map_lookup_elem(bpf_map__fd(map), &slot, v))
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
	free(v);
	return sum;
}

const char *live_frames_refused(void)
{
	/* r0 = XDP_DROP; exit: a frame the kernel takes and frees */
	static const struct bpf_insn drop[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char why[160];
	static int probed;
	uint8_t frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	int fd, err = 0;

	if (probed)
		return why[0] ? why : NULL;
	probed = 1;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "live_probe", "GPL", drop, 2, NULL);
	if (fd < 0)
		err = -errno;
	else if (bpf_prog_test_run_opts(fd, &opts))
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (err)
		snprintf(why, sizeof(why),
			 "the running kernel refuses BPF_F_TEST_XDP_LIVE_FRAMES (%s), the generator's mode",
			 strerror(-err));
	return why[0] ? why : NULL;
}
