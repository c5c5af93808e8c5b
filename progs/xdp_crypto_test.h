/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What progs/xdp_crypto_test.bpf.c and selftests/veth_gso.c
 * (veth_gso_review/crypto_shared_frags) agree on. Included after
 * vmlinux.h (BPF) or <linux/types.h> (user space); includes nothing.
 */
#ifndef XDP_CRYPTO_TEST_H
#define XDP_CRYPTO_TEST_H

/* One AES block, encrypted in place, CRYPTO_TEST_OFF bytes into the first
 * fragment of the first TCP frame whose payload is in fragments.
 */
#define CRYPTO_TEST_LEN		16
#define CRYPTO_TEST_OFF		32
#define CRYPTO_TEST_KEY_LEN	16	/* AES-128 */

#endif
