// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* kprobe events for the GEM tests: see gem_kprobe.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gem_kprobe.h"
#include "netns.h"

#define TRACEFS "/sys/kernel/tracing"

const char *gem_kprobe_unavailable(void)
{
	if (access(TRACEFS "/kprobe_events", W_OK))
		sh("mount -t tracefs tracefs " TRACEFS " 2>/dev/null");
	if (access(TRACEFS "/kprobe_events", W_OK))
		return "no " TRACEFS "/kprobe_events (kernel without CONFIG_KPROBE_EVENTS)";
	return NULL;
}

int gem_kprobe_add(struct gem_kprobe *k, const char *name, const char *probe,
		   const char *filter)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	if (gem_kprobe_unavailable())
		return -1;
	sh("echo '-:xdplab/%s' >> " TRACEFS "/kprobe_events 2>/dev/null", k->name);
	if (sh("echo 'p:xdplab/%s %s' >> " TRACEFS "/kprobe_events && grep -q ':xdplab/%s ' "
	       TRACEFS "/kprobe_events", k->name, probe, k->name))
		return -1;
	k->added = true;
	/* the event's directory appears with the event; give tracefs a
	 * moment, then say what the kernel has if it never does
	 */
	for (int i = 0; i < 20 && sh("test -d " TRACEFS "/events/xdplab/%s", k->name); i++)
		usleep(100000);
	if (sh("test -d " TRACEFS "/events/xdplab/%s", k->name))
		sh("echo kprobe_events:; cat " TRACEFS "/kprobe_events; echo error_log:; "
		   "cat " TRACEFS "/error_log; ls -d " TRACEFS "/events/kprobes " TRACEFS "/events/xdplab");
	if ((filter && sh("echo '%s' > " TRACEFS "/events/xdplab/%s/filter", filter, k->name)) ||
	    sh("echo > " TRACEFS "/trace && echo 1 > " TRACEFS "/events/xdplab/%s/enable",
	       k->name)) {
		gem_kprobe_del(k);
		return -1;
	}
	return 0;
}

long gem_kprobe_hits(const struct gem_kprobe *k)
{
	char n[32];

	if (!k->added)
		return -1;
	/* grep -c exits 1 when it counts none */
	if (sh_out(n, sizeof(n), "grep -c ' %s:' " TRACEFS "/trace", k->name) > 1)
		return -1;
	return atol(n);
}

long gem_kprobe_fired(const struct gem_kprobe *k)
{
	char n[32];

	if (!k->added ||
	    sh_out(n, sizeof(n), "awk '$1 == \"%s\" { print $2 }' " TRACEFS "/kprobe_profile", k->name) ||
	    !*n)
		return -1;
	return atol(n);
}

void gem_kprobe_clear(void)
{
	sh("echo > " TRACEFS "/trace");
}

void gem_kprobe_del(struct gem_kprobe *k)
{
	if (!k->added)
		return;
	sh("echo 0 > " TRACEFS "/events/xdplab/%s/enable", k->name);
	sh("echo '-:xdplab/%s' >> " TRACEFS "/kprobe_events", k->name);
	k->added = false;
}
