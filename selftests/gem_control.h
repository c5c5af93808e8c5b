/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The board's host control service (vmtest/gem-control.sh) */
#ifndef XDPLAB_GEM_CONTROL_H
#define XDPLAB_GEM_CONTROL_H

#include <stddef.h>

/* Sends one request; the connection's fd for gem_control_recv(), or -1
 * with the reason in reply (XDPLAB_GEM_CONTROL unset or unreachable)
 */
int gem_control_send(const char *req, char *reply, size_t len);
/* The answer on fd (closed) within timeout s: 0 for "ok ...", else -1 */
int gem_control_recv(int fd, char *reply, size_t len, int timeout);
/* One request and its answer, a flap of up to 60 s included */
int gem_control(const char *req, char *reply, size_t len);

#endif
