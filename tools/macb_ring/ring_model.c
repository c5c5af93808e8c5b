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
 *    (HRESP recovery, resume), the whole ring is armed again;
 *  - an open whose refill stops at entry h (allocations failing) leaves
 *    every descriptor from h on to software (RX_USED, no page) and RX_WRAP
 *    on the last one, so the GEM neither writes to a descriptor without a
 *    buffer nor goes past the end of the ring (review-v3 B1).
 *
 * What gem_init_rx_ring() writes to a descriptor without a buffer before
 * the refill comes from the header too (gem_rx_ring_unarmed_addr()); a
 * header without it is a series whose gem_init_rx_ring() writes nothing
 * there, and the model then keeps dma_alloc_coherent()'s zeroes, as v3 did.
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
	bool wrap;		/* RX_WRAP: the GEM's next descriptor is entry 0 */
};

/* the two bits of the address word, as the model passes them to the header */
#define M_RX_USED 1u
#define M_RX_WRAP 2u

struct model {
	unsigned int size, head, tail;	/* rx_prepared_head, rx_tail */
	unsigned int hw;		/* the GEM's next descriptor */
	struct desc d[MAX_RING];
	bool page[MAX_RING];		/* rx_buff[entry] */
	bool in_frame;
	int fail_allocs;		/* the next refills' allocations fail */
	int allocs_ok;			/* >= 0: so many more succeed, then all fail */
	/* what happened */
	unsigned long unarmed_reads;	/* RX_USED set, no page */
	unsigned long unarmed_writes;	/* the GEM wrote a descriptor without a buffer */
	unsigned long past_end;		/* the GEM left the last entry without RX_WRAP */
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
	m->allocs_ok = -1;
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
			if (m->allocs_ok == 0)
				break;
			if (m->allocs_ok > 0)
				m->allocs_ok--;
			m->page[e] = true;
			m->d[e].wrap = e == m->size - 1;	/* paddr |= RX_WRAP */
		}
		m->d[e].used = false;	/* ctrl = 0, then the address */
		m->head++;
	}
	if (m->head - m->tail < m->min_armed_after_refill && m->fail_allocs == 0)
		m->min_armed_after_refill = m->head - m->tail;
}

/* gem_init_rx_ring(), after the indices are set: every descriptor goes to
 * software before the refill; one holding a page keeps its address (and
 * its RX_WRAP), one without gets the header's address word
 */
static void init_ring(struct model *m)
{
#ifdef HAVE_UNARMED_ADDR
	for (unsigned int e = 0; e < m->size; e++) {
		unsigned int addr = gem_rx_ring_unarmed_addr(e, m->size, M_RX_USED, M_RX_WRAP);

		if (m->page[e]) {
			m->d[e].used = true;
			continue;
		}
		m->d[e].used = addr & M_RX_USED;
		m->d[e].wrap = addr & M_RX_WRAP;
	}
#endif
	refill(m);
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
		if (m->hw == m->size - 1 && !d->wrap) {
			/* the GEM reads what follows the ring as descriptors:
			 * the model stops it there
			 */
			m->past_end++;
			return false;
		}
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
	check(m->past_end == 0, scenario, "walks past the last entry (no RX_WRAP)", m->past_end, 0);
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
		init_ring(&m);
		check(m.head - m.tail == sizes[i], name, "descriptors armed", m.head - m.tail,
		      sizes[i]);
	}

	/* ethtool -G rx 64, MTU 9000: three buffers a frame, NAPI budget 64 */
	model_open(&m, 64, 0);
	init_ring(&m);
	flood(&m, 3, 200, 64, 0);
	expect_healthy(&m, "ring 64, 3-buffer frames");

	model_open(&m, 128, 0);
	init_ring(&m);
	flood(&m, 3, 200, 64, 0);
	expect_healthy(&m, "ring 128, 3-buffer frames");

	/* one-buffer frames, the budget larger than the ring's 64 */
	model_open(&m, 64, 0);
	init_ring(&m);
	flood(&m, 1, 200, 64, 0);
	expect_healthy(&m, "ring 64, 1-buffer frames");

	/* GFP_ATOMIC refills failing now and then, default ring */
	model_open(&m, 512, 0);
	init_ring(&m);
	flood(&m, 1, 300, 64, 5);
	expect_healthy(&m, "ring 512, refills failing");

	/* indices that wrap at UINT_MAX on the way */
	model_open(&m, 64, UINT_MAX - 1000);
	init_ring(&m);
	flood(&m, 3, 400, 64, 3);
	expect_healthy(&m, "ring 64, indices wrapping");

	/* HRESP recovery and resume: rx_tail and rx_prepared_head back to 0
	 * (RBQP rewritten, the GEM starts at entry 0) while the descriptors
	 * the poll had not reached still hold their pages; the open frame is
	 * dropped. The refill arms every descriptor, with the page it holds
	 * or a new one, and RX goes on.
	 */
	model_open(&m, 64, 0);
	init_ring(&m);
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
	init_ring(&m);
	check(m.head - m.tail == 64, "re-init from entry 0", "descriptors armed", m.head - m.tail, 64);
	flood(&m, 3, 50, 64, 0);
	expect_healthy(&m, "after re-init from entry 0");

	/* review-v3 B1: an open whose refill stops at entry h (the page
	 * pool's allocations fail after h), then the GEM receives more than
	 * the h armed descriptors hold before the poll runs; then memory is
	 * back and RX goes on
	 */
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const unsigned int size = sizes[i];
		const unsigned int stops[] = { 1, 5, size / 2, size - 1 };

		for (unsigned int j = 0; j < sizeof(stops) / sizeof(stops[0]); j++) {
			unsigned int h = stops[j], not_sw = 0;
			char name[80];

			snprintf(name, sizeof(name), "open, ring %u, refill stops at %u", size, h);
			model_open(&m, size, 0);
			m.allocs_ok = h;
			init_ring(&m);
			check(m.head - m.tail == h, name, "descriptors armed", m.head - m.tail, h);
			for (unsigned int e = h; e < size; e++)
				not_sw += !m.d[e].used || m.page[e];
			check(not_sw == 0, name, "descriptors from h on not software's (RX_USED, no page)",
			      not_sw, 0);
			check(m.d[size - 1].wrap, name, "RX_WRAP on the last descriptor",
			      m.d[size - 1].wrap, 1);
			for (unsigned int f = 0; f < 2 * size; f++)
				receive(&m, 1);
			check(m.unarmed_writes == 0, name, "buffers written to descriptors without a page",
			      m.unarmed_writes, 0);
			check(m.past_end == 0, name, "walks past the last entry (no RX_WRAP)",
			      m.past_end, 0);
			m.allocs_ok = -1;
			flood(&m, 1, 50, 64, 0);
			expect_healthy(&m, name);
		}
	}

	/* a re-init (resume, HRESP recovery) from entry 0 whose refill stops
	 * at entry 16: entries 0..15 hold pages the GEM wrote and the poll
	 * had not reached, 16..39 were consumed (RX_USED, no page), 40..63
	 * hold pages still armed. After gem_init_rx_ring() the GEM owns
	 * exactly the armed entries, 0..15 (on v3 also 40..63: harmless while
	 * the GEM stops at 16, but not the ring 0007 describes)
	 */
	{
		const char *name = "re-init from entry 0, refill stops at 16";
		unsigned int gem_owned = 0;

		model_open(&m, 64, 0);
		for (unsigned int e = 0; e < 64; e++) {
			m.page[e] = e < 16 || e >= 40;
			m.d[e].used = e < 40;
			m.d[e].wrap = e == 63;
		}
		m.allocs_ok = 0;
		init_ring(&m);
		check(m.head - m.tail == 16, name, "descriptors armed", m.head - m.tail, 16);
		for (unsigned int e = 16; e < 64; e++)
			gem_owned += !m.d[e].used;
		check(gem_owned == 0, name, "descriptors from 16 on the GEM owns", gem_owned, 0);
		check(m.d[63].wrap, name, "RX_WRAP on the last descriptor", m.d[63].wrap, 1);
		for (unsigned int f = 0; f < 128; f++)
			receive(&m, 1);
		check(m.unarmed_writes == 0, name, "buffers written to descriptors without a page",
		      m.unarmed_writes, 0);
		check(m.past_end == 0, name, "walks past the last entry (no RX_WRAP)", m.past_end, 0);
		m.allocs_ok = -1;
		flood(&m, 1, 50, 64, 0);
		expect_healthy(&m, name);
	}

	printf("%d passed, %d failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}
