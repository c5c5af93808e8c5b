// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A model of the GEM RX ring, run on the build host against the index
 * arithmetic of kernel-patches/macb (drivers/net/ethernet/cadence/
 * macb_rx_ring.h, compiled as it is): QEMU's GEM cannot be stopped at a
 * chosen ring position, nor made to fail a refill on demand.
 *
 * The model has the driver's side as gem_rx() and gem_rx_refill() run it
 * (the header's helpers decide how far each goes) and a GEM that writes
 * frames into the descriptors it owns, one buffer after the other, as the
 * hardware and QEMU's cadence_gem do: a descriptor with RX_USED set is no
 * buffer (the frame is cut there), one without is written, whether the
 * driver gave it a buffer or not (a zeroed descriptor points at address 0).
 *
 * What must hold, in every scenario:
 *  - at open, and after every poll that had pages to give, every
 *    descriptor of the ring is armed (issue 20, bug 5);
 *  - the poll never reads a descriptor it did not arm (bug 1: RX_USED
 *    left over from the last lap, no page behind it);
 *  - the GEM never writes to a descriptor without a buffer;
 *  - every frame the GEM wrote whole reaches the stack;
 *  - after the indices are reset to entry 0 with pages still in the ring
 *    (HRESP recovery, resume), the whole ring is armed again.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "macb_rx_ring.h"

#define MAX_RING 8192

struct desc {
	bool used;		/* RX_USED: the GEM wrote it, or nobody armed it */
	bool sof, eof;
};

struct model {
	unsigned int size, head, tail;	/* rx_prepared_head, rx_tail */
	unsigned int hw;		/* the GEM's next descriptor */
	struct desc d[MAX_RING];
	bool page[MAX_RING];		/* rx_buff[entry] */
	bool in_frame;
	int fail_allocs;		/* the next refills' allocations fail */
	/* what happened */
	unsigned long unarmed_reads;	/* RX_USED set, no page */
	unsigned long unarmed_writes;	/* the GEM wrote a descriptor without a buffer */
	unsigned long whole, delivered, cut;
	unsigned int min_armed_after_refill;
};

static int passed, failed;

static void check(bool ok, const char *scenario, const char *what, unsigned long got,
		  unsigned long want)
{
	printf("%s %s: %s (%lu, want %lu)\n", ok ? "ok  " : "FAIL", scenario, what, got, want);
	if (ok)
		passed++;
	else
		failed++;
}

static void model_open(struct model *m, unsigned int size, unsigned int start)
{
	memset(m, 0, sizeof(*m));	/* dma_alloc_coherent() zeroes the ring */
	m->size = size;
	m->head = m->tail = start;	/* gem_init_rx_ring() sets both to 0 */
	m->hw = start & (size - 1);
	m->min_armed_after_refill = UINT_MAX;
}

/* gem_rx_refill() */
static void refill(struct model *m)
{
	while (gem_rx_ring_space(m->head, m->tail, m->size) > 0) {
		unsigned int e = m->head & (m->size - 1);

		if (!m->page[e]) {
			if (m->fail_allocs > 0) {
				m->fail_allocs--;
				break;
			}
			m->page[e] = true;
		}
		m->d[e].used = false;	/* ctrl = 0, then the address */
		m->head++;
	}
	if (m->head - m->tail < m->min_armed_after_refill && m->fail_allocs == 0)
		m->min_armed_after_refill = m->head - m->tail;
}

/* gem_rx(): frames count against the budget; a descriptor without a page
 * is not consumed (the driver logs it and stops)
 */
static int poll(struct model *m, int budget)
{
	int count = 0;

	while (count < budget && gem_rx_ring_to_read(m->head, m->tail, m->size)) {
		unsigned int e = m->tail & (m->size - 1);
		struct desc *d = &m->d[e];

		if (!d->used)
			break;
		if (!m->page[e]) {
			m->unarmed_reads++;
			count++;
			break;
		}
		m->page[e] = false;
		m->tail++;
		if (d->sof)
			m->in_frame = true;	/* an open frame is dropped */
		if (d->eof && m->in_frame) {
			m->delivered++;
			m->in_frame = false;
			count++;
		}
	}
	refill(m);
	return count;
}

/* The GEM receives a frame of n buffers: false when the ring ran out */
static bool receive(struct model *m, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		struct desc *d = &m->d[m->hw];

		if (d->used) {
			if (k)
				m->cut++;
			return false;
		}
		if (!m->page[m->hw])
			m->unarmed_writes++;
		d->used = true;
		d->sof = k == 0;
		d->eof = k == n - 1;
		m->hw = (m->hw + 1) & (m->size - 1);
	}
	m->whole++;
	return true;
}

/* Bursts of frames of n buffers, more than the ring holds, between polls */
static void flood(struct model *m, unsigned int n, int rounds, int budget, int fail_every)
{
	for (int r = 0; r < rounds; r++) {
		for (unsigned int f = 0; f < m->size; f++)
			if (!receive(m, n))
				break;
		if (fail_every && r % fail_every == 0)
			m->fail_allocs = 1 + r % 7;
		poll(m, budget);
	}
	/* the flood is over and memory is back: the ring drains and refills */
	m->fail_allocs = 0;
	for (unsigned int i = 0; i < 4 * m->size && poll(m, budget); i++)
		;
}

static void expect_healthy(struct model *m, const char *scenario)
{
	check(m->unarmed_reads == 0, scenario, "descriptors read that were not armed",
	      m->unarmed_reads, 0);
	check(m->unarmed_writes == 0, scenario, "buffers written to descriptors without a page",
	      m->unarmed_writes, 0);
	check(m->delivered == m->whole, scenario, "frames delivered of those written whole",
	      m->delivered, m->whole);
	check(m->head - m->tail == m->size, scenario, "descriptors armed after the flood",
	      m->head - m->tail, m->size);
}

int main(void)
{
	static struct model m;
	static const unsigned int sizes[] = { 64, 128, 512, 8192 };

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "open, ring %u", sizes[i]);
		model_open(&m, sizes[i], 0);
		refill(&m);
		check(m.head - m.tail == sizes[i], name, "descriptors armed", m.head - m.tail,
		      sizes[i]);
	}

	/* ethtool -G rx 64, MTU 9000: three buffers a frame, NAPI budget 64 */
	model_open(&m, 64, 0);
	refill(&m);
	flood(&m, 3, 200, 64, 0);
	expect_healthy(&m, "ring 64, 3-buffer frames");

	model_open(&m, 128, 0);
	refill(&m);
	flood(&m, 3, 200, 64, 0);
	expect_healthy(&m, "ring 128, 3-buffer frames");

	/* one-buffer frames, the budget larger than the ring's 64 */
	model_open(&m, 64, 0);
	refill(&m);
	flood(&m, 1, 200, 64, 0);
	expect_healthy(&m, "ring 64, 1-buffer frames");

	/* GFP_ATOMIC refills failing now and then, default ring */
	model_open(&m, 512, 0);
	refill(&m);
	flood(&m, 1, 300, 64, 5);
	expect_healthy(&m, "ring 512, refills failing");

	/* indices that wrap at UINT_MAX on the way */
	model_open(&m, 64, UINT_MAX - 1000);
	refill(&m);
	flood(&m, 3, 400, 64, 3);
	expect_healthy(&m, "ring 64, indices wrapping");

	/* HRESP recovery and resume: rx_tail and rx_prepared_head back to 0
	 * (RBQP rewritten, the GEM starts at entry 0) while the descriptors
	 * the poll had not reached still hold their pages; the open frame is
	 * dropped. The refill arms every descriptor, with the page it holds
	 * or a new one, and RX goes on.
	 */
	model_open(&m, 64, 0);
	refill(&m);
	for (unsigned int f = 0; f < 10; f++)
		receive(&m, 3);
	poll(&m, 4);
	m.fail_allocs = 40;
	poll(&m, 64);
	m.head = m.tail = 0;
	m.hw = 0;
	m.in_frame = false;
	m.fail_allocs = 0;
	m.whole = m.delivered = 0;
	refill(&m);
	check(m.head - m.tail == 64, "re-init from entry 0", "descriptors armed", m.head - m.tail, 64);
	flood(&m, 3, 50, 64, 0);
	expect_healthy(&m, "after re-init from entry 0");

	printf("%d passed, %d failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}
