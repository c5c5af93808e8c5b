// SPDX-License-Identifier: GPL-2.0-only
/*
 * The layout of GEM RX buffers carved from a page (kernel-patches/macb
 * 0023), checked on the build host against page_pool's own carving.
 *
 * The driver takes its RX buffers as page_pool fragments of one truesize
 * and assumes that buffer k of a page starts at k * stride (frame_sz, and
 * the rxq frag_size that bpf_xdp_adjust_tail() takes fragment offsets
 * modulo) and that the pool's device sync, [offset, offset + max_len),
 * covers the GEM area of every buffer of the page. page_pool_alloc_frag()
 * rounds each request up to the larger of the DMA cache alignment (a
 * runtime value on arm64: 64 or 128, ARCH_DMA_MINALIGN when unknown) and
 * skb_shared_info's; carve() below does the same. For every page size
 * (4K, 16K, 64K), alignment (32, 64, 128, 256), NET_IP_ALIGN (0, 2) and
 * MTU from 68 to 10222 that takes fragments, the stride and max_len of
 * macb_rx_ring.h must match what the pool hands out. One line of output a
 * page size and alignment.
 */
#include <stdbool.h>
#include <stdio.h>

#include "macb_rx_ring.h"

#define HEADROOM	256	/* XDP_PACKET_HEADROOM */
#define SHINFO		320	/* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)), 64-bit */
#define LINE		64	/* SMP_CACHE_BYTES: SKB_DATA_ALIGN */
#define UNIT		64	/* RX_BUFFER_MULTIPLE */
#define BUF_MAX		(255 * UNIT)	/* GEM_RX_BUFFER_MAX */

static unsigned int up(unsigned int x, unsigned int a)
{
	return (x + a - 1) / a * a;
}

/* page_pool_alloc_frag(): where the fragments of one page start */
static unsigned int carve(unsigned int page, unsigned int req, unsigned int align,
			  unsigned int *off, unsigned int max)
{
	unsigned int size = up(req, align), n = 0, o = 0;

	while (o + size <= page && n < max) {
		off[n++] = o;
		o += size;
	}
	return n;
}

int main(void)
{
	static const unsigned int pages[] = { 4096, 16384, 65536 };
	static const unsigned int aligns[] = { 32, 64, 128, 256 };
	static unsigned int off[65536 / 64];
	int failed = 0, passed = 0;

	for (unsigned int p = 0; p < 3; p++) {
		for (unsigned int a = 0; a < 4; a++) {
			unsigned int page = pages[p], align = aligns[a], mtus = 0, bad = 0, first = 0;

			for (unsigned int ip = 0; ip <= 2; ip += 2) {
				for (unsigned int mtu = 68; mtu <= 10222; mtu++) {
					unsigned int size = up(ip + mtu + 14 + 4 + 4, UNIT), truesize;
					unsigned int stride, n, max_len;
					bool ok = true;

					if (size > BUF_MAX)
						size = BUF_MAX;
					truesize = up(HEADROOM + ip + size, LINE) + SHINFO;
					/* the pool aligns to at least skb_shared_info's 8 */
					stride = gem_rx_frag_stride(truesize, align < 8 ? 8 : align);
					if (2 * stride > page)
						continue;	/* a page a buffer: no fragments */
					mtus++;
					max_len = gem_rx_pool_max_len(page, stride, ip + size);
					n = carve(page, stride, align, off, sizeof(off) / sizeof(off[0]));
					ok &= n == page / stride;
					for (unsigned int k = 0; k < n; k++) {
						/* frame_sz and frag_size: buffer k at k * stride */
						ok &= off[k] == k * stride;
						/* the whole buffer, shared info included, in the page */
						ok &= off[k] + truesize <= page;
						/* the device sync covers its GEM area */
						ok &= off[k] + HEADROOM + ip + size <= HEADROOM + max_len;
					}
					ok &= HEADROOM + max_len <= page;
					if (!ok && !bad++)
						first = mtu | ip << 16;
				}
			}
			if (bad)
				printf("FAIL %5u-byte pages, %3u-byte alignment: %u of %u MTUs laid out otherwise than page_pool carves them (first: MTU %u, NET_IP_ALIGN %u)\n",
				       page, align, bad, mtus, first & 0xffff, first >> 16);
			else
				printf("ok   %5u-byte pages, %3u-byte alignment: %u MTUs that take fragments, buffers where page_pool carves them, all synced\n",
				       page, align, mtus);
			if (bad)
				failed++;
			else
				passed++;
		}
	}
	printf("%d passed, %d failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}
