// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A netconsole target on an interface, through configfs */
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "netconsole.h"
#include "netns.h"

#define NETCONSOLE "/sys/kernel/config/netconsole"

const char *netconsole_unavailable(void)
{
	struct utsname u;

	if (!uname(&u) && strstr(u.version, "PREEMPT_RT"))
		return "netconsole on PREEMPT_RT: 6.12's netpoll transmits with interrupts off, "
		       "where the driver's spinlock_t sleeps (stock macb alike)";
	if (access(NETCONSOLE, F_OK))
		sh("mount -t configfs configfs /sys/kernel/config 2>/dev/null");
	if (access(NETCONSOLE, F_OK))
		return "no " NETCONSOLE " (kernel without CONFIG_NETCONSOLE_DYNAMIC)";
	return NULL;
}

int netconsole_add(const char *name, const char *ifname, const char *peer)
{
	netconsole_del(name);
	if (!sh("mkdir " NETCONSOLE "/%s && echo %s > " NETCONSOLE "/%s/dev_name && "
		"echo %s > " NETCONSOLE "/%s/remote_ip && echo 1 > " NETCONSOLE "/%s/enabled",
		name, ifname, name, peer, name, name))
		return 0;
	netconsole_del(name);
	return -1;
}

void netconsole_del(const char *name)
{
	sh("echo 0 > " NETCONSOLE "/%s/enabled 2>/dev/null; rmdir " NETCONSOLE "/%s 2>/dev/null",
	   name, name);
}
