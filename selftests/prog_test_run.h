/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Helpers for unit tests that run a program with BPF_PROG_TEST_RUN. */
#ifndef XDPLAB_PROG_TEST_RUN_H
#define XDPLAB_PROG_TEST_RUN_H

#include <stdint.h>
#include <linux/types.h>
#include "xdplab.h"

struct bpf_map;
struct bpf_program;

/* Runs prog once on frame[0..len); the frame is rewritten in place with
 * what the program left (up to cap bytes). Returns the verdict, or -errno.
 * linear > 0 makes a multi-buffer input whose linear part is that long.
 */
int prog_run(const struct bpf_program *prog, void *frame, uint32_t *len,
	     uint32_t cap, uint32_t linear);
/* Sums one slot of a per-CPU xdplab_datarec map over all CPUs. */
int stats_sum(const struct bpf_map *map, uint32_t slot, struct xdplab_datarec *out);
/* Sums one slot of a per-CPU __u64 map. */
uint64_t percpu_u64_sum(const struct bpf_map *map, uint32_t slot);
/* Why the running kernel refuses BPF_F_TEST_XDP_LIVE_FRAMES (what the
 * generator, `xdplab trafficgen`, sends with), or NULL if it runs a frame.
 */
const char *live_frames_refused(void);

#endif
