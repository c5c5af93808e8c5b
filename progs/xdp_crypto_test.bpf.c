// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The BPF crypto kfuncs on a frame whose fragments the XDP buffer shares
 * (kernel-patches/veth, review-v3 BUG 2; selftests/veth_gso.c,
 * veth_gso_review/crypto_shared_frags).
 *
 * crypto_setup (BPF_PROG_TYPE_SYSCALL, run once by the test) makes an
 * "ecb(aes)" context from crypto_key and keeps it in crypto_ctx_map.
 * xdp_crypto_test, loaded with BPF_F_XDP_GSO on the receiving veth,
 * encrypts CRYPTO_TEST_LEN bytes in place (source and destination the
 * same dynptr), CRYPTO_TEST_OFF bytes into the first fragment of the
 * first TCP frame to `port` whose payload is in fragments, then passes
 * every frame. It writes only once, and records where (the TCP sequence
 * number and the offset in that frame's payload, plus the SYN's sequence
 * number, so the test can find the block in the stream) and the block
 * before and after, read back through the same dynptr.
 *
 * A test fixture: the XDP program needs crypto_setup to have run, which
 * generic loaders (xdp-loader, ip link) do not do. The kfuncs are weak so
 * that the object still opens where the kernel lacks them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xdp_crypto_test.h"

#ifndef ETH_P_IP
#define ETH_P_IP	0x0800
#endif
#define TCP_FLAG_SYN	0x02
#define TCP_FLAG_ACK	0x10

/* bpf_crypto_ctx_create()'s parameter block (struct bpf_crypto_params in
 * kernel/bpf/crypto.c), declared here under a name of our own: the arm64
 * vmlinux.h comes from a kernel without the crypto kfuncs and lacks it.
 * The kfunc takes it as params__sz bytes of memory, and libbpf matches a
 * struct argument by kind, not by name.
 */
struct xdplab_crypto_params {
	char type[14];
	__u8 reserved[2];
	char algo[128];
	__u8 key[256];
	__u32 key_len;
	__u32 authsize;
};

extern struct bpf_crypto_ctx *
bpf_crypto_ctx_create(const struct xdplab_crypto_params *params, __u32 params__sz,
		      int *err) __ksym __weak;
extern void bpf_crypto_ctx_release(struct bpf_crypto_ctx *ctx) __ksym __weak;
extern int bpf_crypto_encrypt(struct bpf_crypto_ctx *ctx, const struct bpf_dynptr *src,
			      const struct bpf_dynptr *dst,
			      const struct bpf_dynptr *siv__nullable) __ksym __weak;
extern int bpf_dynptr_from_xdp(struct xdp_md *xdp, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym __weak;
extern int bpf_dynptr_adjust(const struct bpf_dynptr *p, __u32 start, __u32 end) __ksym __weak;

/* A referenced kptr: "kptr" is what 6.12 calls one (libbpf 1.1's __kptr). */
struct crypto_slot {
	struct bpf_crypto_ctx __attribute__((btf_type_tag("kptr"))) *ctx;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct crypto_slot);
} crypto_ctx_map SEC(".maps");

/* TCP destination port of the stream (host order); set before load. */
const volatile __u16 port = 0;

/* Set by user space before crypto_setup runs. */
__u8 crypto_key[CRYPTO_TEST_KEY_LEN] = {};
int setup_err = 1;	/* 1: crypto_setup has not run */

/* What the XDP program saw and did. */
__u64 frames;		/* TCP frames to `port` */
__u64 frag_frames;	/* of them with payload in fragments */
__u64 tries;		/* bpf_crypto_encrypt() calls */
int crypt_err;		/* the last one's return value */
__u32 done;		/* the block was encrypted */
__u32 syn_seq;		/* the client's SYN */
__u32 seq;		/* the frame that was written to */
__u32 payload_off;	/* where in its TCP payload */
__u32 lin_len;		/* its linear part (data_end - data) */
__u32 buff_len;		/* and all of it */
__u8 before[CRYPTO_TEST_LEN];
__u8 after[CRYPTO_TEST_LEN];

SEC("syscall")
int crypto_setup(void *unused)
{
	struct xdplab_crypto_params params = {
		.type = "skcipher",
		.algo = "ecb(aes)",
		.key_len = CRYPTO_TEST_KEY_LEN,
	};
	struct bpf_crypto_ctx *cctx, *old;
	struct crypto_slot *slot;
	__u32 zero = 0;
	int err = 0;

	if (!bpf_crypto_ctx_create || !bpf_crypto_ctx_release) {
		setup_err = -95;	/* EOPNOTSUPP */
		return 0;
	}
	__builtin_memcpy(params.key, crypto_key, CRYPTO_TEST_KEY_LEN);
	cctx = bpf_crypto_ctx_create(&params, sizeof(params), &err);
	if (!cctx) {
		setup_err = err ? err : -22;
		return 0;
	}
	slot = bpf_map_lookup_elem(&crypto_ctx_map, &zero);
	if (!slot) {
		bpf_crypto_ctx_release(cctx);
		setup_err = -2;
		return 0;
	}
	old = bpf_kptr_xchg(&slot->ctx, cctx);
	if (old)
		bpf_crypto_ctx_release(old);
	setup_err = 0;
	return 0;
}

SEC("xdp.frags")
int xdp_crypto_test(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bpf_crypto_ctx *cctx;
	struct crypto_slot *slot;
	struct bpf_dynptr ptr;
	struct iphdr *ip;
	struct tcphdr *tcp;
	__u32 lin, len, hdrs, off, frame_seq, zero = 0;
	__u8 flags;
	int err;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_TCP || ip->ihl != 5)
		return XDP_PASS;
	tcp = (void *)(ip + 1);
	if ((void *)(tcp + 1) > end || tcp->dest != bpf_htons(port))
		return XDP_PASS;
	frames++;
	flags = ((__u8 *)tcp)[13];
	if ((flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN) {
		syn_seq = bpf_ntohl(tcp->seq);
		return XDP_PASS;
	}
	lin = end - data;
	len = bpf_xdp_get_buff_len(ctx);
	hdrs = sizeof(*eth) + sizeof(*ip) + tcp->doff * 4;
	/* headers all linear, payload in fragments too */
	if (len <= lin || hdrs > lin)
		return XDP_PASS;
	frag_frames++;
	if (done || len < lin + CRYPTO_TEST_OFF + CRYPTO_TEST_LEN)
		return XDP_PASS;
	if (!bpf_dynptr_from_xdp || !bpf_dynptr_adjust || !bpf_crypto_encrypt)
		return XDP_PASS;
	slot = bpf_map_lookup_elem(&crypto_ctx_map, &zero);
	cctx = slot ? slot->ctx : NULL;
	if (!cctx) {
		crypt_err = -2;	/* ENOENT: crypto_setup did not run */
		return XDP_PASS;
	}
	off = lin + CRYPTO_TEST_OFF;
	if (bpf_dynptr_from_xdp(ctx, 0, &ptr) ||
	    bpf_dynptr_adjust(&ptr, off, off + CRYPTO_TEST_LEN) ||
	    bpf_dynptr_read(before, CRYPTO_TEST_LEN, &ptr, 0, 0))
		return XDP_PASS;
	/* before the write: in an opted-in program the verifier ends the
	 * packet pointers at bpf_crypto_encrypt()
	 */
	frame_seq = bpf_ntohl(tcp->seq);
	tries++;
	/* in place: the block is read from, and written to, the frame */
	err = bpf_crypto_encrypt(cctx, &ptr, &ptr, NULL);
	crypt_err = err;
	/* -EINVAL when the block crosses into the next fragment: try the
	 * next frame
	 */
	if (err || bpf_dynptr_read(after, CRYPTO_TEST_LEN, &ptr, 0, 0))
		return XDP_PASS;
	seq = frame_seq;
	payload_off = off - hdrs;
	lin_len = lin;
	buff_len = len;
	done = 1;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
