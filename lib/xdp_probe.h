/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the running kernel takes from an XDP program at load time, asked
 * with an empty program: the CLI decides how to load, the tests whether
 * to expect a feature.
 */
#ifndef XDPLAB_XDP_PROBE_H
#define XDPLAB_XDP_PROBE_H

#include <stdbool.h>

/* The veth series' program flag (kernel-patches/veth, "bpf: let an XDP
 * program ask for GSO superframes"): in no upstream uapi header, so the
 * kernel is asked rather than the headers.
 */
#ifndef BPF_F_XDP_GSO
#define BPF_F_XDP_GSO (1U << 8)
#endif

/* Does the running kernel accept BPF_F_XDP_HAS_FRAGS programs? */
bool xdplab_kernel_has_frags(void);
/* Does the running kernel take BPF_F_XDP_GSO (the veth GSO series)? */
bool xdplab_kernel_has_xdp_gso(void);

#endif
