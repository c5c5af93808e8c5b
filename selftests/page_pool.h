/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Page pools as the netdev netlink family reports them (Linux 6.8+). */
#ifndef XDPLAB_PAGE_POOL_H
#define XDPLAB_PAGE_POOL_H

#include <stdbool.h>

struct pp_info {
	int npools;		/* pools of the ifindex asked for (0: every pool) */
	int detached;		/* of those, destroyed but with pages out */
	unsigned long long inflight;
	unsigned long long alloc, slow, recycled;
	unsigned long long cached;	/* of recycled, into the lockless cache */
};

/* Dumps the page pools (or, with stats, their counters) in namespace ns
 * (NULL: this one). ifindex 0: all of them, including those whose device
 * is gone. Returns 0, or -1 when the kernel has no netdev family or no
 * page-pool commands.
 */
int pp_dump(const char *ns, int ifindex, bool stats, struct pp_info *pi);
/* Asserts that ns has no page pool left, nor a page in flight, waiting up
 * to 10 s for pools still releasing pages (they retry once a second).
 */
void assert_pools_gone(const char *ns, const char *what);

#endif
