/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The emulated GEM board's NIC, for the tests that run on it. */
#ifndef XDPLAB_GEM_H
#define XDPLAB_GEM_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

/* The GEM: XDPLAB_GEM_IF (set by the board's vmtest), else the first
 * interface bound to macb. false, with the reason in why, when there is none.
 */
bool gem_find(char ifname[IF_NAMESIZE], char *why, size_t len);

#endif
