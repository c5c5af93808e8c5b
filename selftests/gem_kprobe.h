/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Counting the calls of a kernel function, optionally only those whose
 * arguments pass a filter, for the board's GEM tests that must show what
 * the driver was called with (CONFIG_KPROBE_EVENTS; tracefs is mounted if
 * it is not):
 *
 *	struct gem_kprobe k;
 *	gem_kprobe_add(&k, "gem_rx0", "gem_rx budget=%x2:s32", "budget == 0");
 *	...
 *	long n = gem_kprobe_hits(&k);	// calls that passed the filter
 *	gem_kprobe_del(&k);
 *
 * The events live in the "xdplab" group; the calls are counted in the
 * trace buffer, which is cleared by gem_kprobe_add().
 */
#ifndef XDPLAB_GEM_KPROBE_H
#define XDPLAB_GEM_KPROBE_H

#include <stdbool.h>

struct gem_kprobe {
	char name[48];
	bool added;
};

/* NULL if kprobe events can be added here, or why not (for test__skip). */
const char *gem_kprobe_unavailable(void);
/* probe: "FUNC [FETCHARGS]" as kprobe_events takes it; filter may be NULL.
 * 0, or -1 (nothing left behind).
 */
int gem_kprobe_add(struct gem_kprobe *k, const char *name, const char *probe,
		   const char *filter);
/* Calls recorded since the add; -1 if the trace cannot be read. */
long gem_kprobe_hits(const struct gem_kprobe *k);
/* Times the probe fired since it was added, filter or not, from
 * kprobe_profile (not the trace buffer); -1 if unreadable. What tells a
 * probe that never fired from a trace that lost its events.
 */
long gem_kprobe_fired(const struct gem_kprobe *k);
/* Forgets the calls recorded so far, for every event. */
void gem_kprobe_clear(void);
/* Removes the event (safe on one never added). */
void gem_kprobe_del(struct gem_kprobe *k);

#endif
