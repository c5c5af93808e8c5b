/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A netconsole target on an interface, through configfs */
#ifndef XDPLAB_NETCONSOLE_H
#define XDPLAB_NETCONSOLE_H

/* Why no target can be made here, or NULL. PREEMPT_RT is a reason: 6.12's
 * netpoll transmits with interrupts off, where a driver's spinlock_t
 * sleeps, so every driver that locks its TX path (stock macb too) logs
 * "sleeping function called from invalid context".
 */
const char *netconsole_unavailable(void);
/* Target name sending ifname's kernel messages to peer (UDP port 6666),
 * enabled; 0, or -1 with whatever was made of it removed
 */
int netconsole_add(const char *name, const char *ifname, const char *peer);
void netconsole_del(const char *name);

#endif
