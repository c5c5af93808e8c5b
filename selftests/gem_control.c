// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The board's host control service (vmtest/gem-control.sh): one-line
 * requests over TCP to XDPLAB_GEM_CONTROL=<addr>:<port>, which the host
 * turns into QMP on the emulated GEM (HRESP, link down/up, flaps).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "gem_control.h"

/* Sends one request to vmtest/gem-control.sh; the connection's fd, or -1
 * with the reason in reply. The connection is tried 3 times, 20 s each: a
 * SYN or its answer may be lost among a flood.
 */
int gem_control_send(const char *req, char *reply, size_t len)
{
	const char *ep = getenv("XDPLAB_GEM_CONTROL");
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 20 };
	char host[64], *colon;
	int fd = -1;

	snprintf(reply, len, "error: XDPLAB_GEM_CONTROL unset");
	if (!ep || !*ep)
		return -1;
	snprintf(host, sizeof(host), "%s", ep);
	colon = strrchr(host, ':');
	if (!colon) {
		snprintf(reply, len, "error: XDPLAB_GEM_CONTROL=%s is not ADDR:PORT", ep);
		return -1;
	}
	*colon = 0;
	sa.sin_port = htons(atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		snprintf(reply, len, "error: XDPLAB_GEM_CONTROL=%s: not an IPv4 address", ep);
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && dprintf(fd, "%s\n", req) > 0)
			return fd;
		snprintf(reply, len, "error: %s: %s", ep, strerror(errno));
		close(fd);
	}
	return -1;
}

/* The one-line answer on fd (closed), within timeout s: 0 for "ok ...",
 * -1 otherwise (reply says why)
 */
int gem_control_recv(int fd, char *reply, size_t len, int timeout)
{
	struct timeval tv = { .tv_sec = timeout };
	size_t n = 0;
	ssize_t r;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (n + 1 < len && (r = read(fd, reply + n, len - 1 - n)) > 0)
		n += r;
	reply[n] = 0;
	close(fd);
	reply[strcspn(reply, "\n")] = 0;
	if (!n)
		snprintf(reply, len, "error: no answer from the control service within %d s", timeout);
	return strncmp(reply, "ok", 2) ? -1 : 0;
}

/* One request and its answer (a flap of up to 60 s included) */
int gem_control(const char *req, char *reply, size_t len)
{
	int fd = gem_control_send(req, reply, len);

	return fd < 0 ? -1 : gem_control_recv(fd, reply, len, 90);
}
