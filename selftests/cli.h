/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Running build/xdplab from tests, in a namespace, as a user would. */
#ifndef XDPLAB_CLI_H
#define XDPLAB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct cli_bg {
	pid_t pid;
	int out;	/* read end of the child's stdout+stderr */
	int status;	/* exit status once reaped early */
};

/* Starts `xdplab ARGS` (a shell-split string) inside namespace ns (NULL:
 * here) in the background. Returns 0 or -1.
 */
int cli_start(struct cli_bg *bg, const char *ns, const char *args);
/* Waits (bounded) until ifname in ns has an XDP program, or the child
 * exited. Returns 0 once attached.
 */
int cli_wait_attached(struct cli_bg *bg, const char *ns, const char *ifname, double timeout);
/* cli_start() + cli_wait_attached() (20 s) with their assertions; on
 * failure the child is killed and its output printed. True once attached.
 */
bool cli_attach(struct cli_bg *bg, const char *ns, const char *ifname, const char *args);
/* Sends sig (0: none, just wait), waits at most timeout seconds (then
 * SIGKILL), collects the output into out. Returns the exit status, 128+sig
 * if killed, or -1.
 */
int cli_stop(struct cli_bg *bg, int sig, double timeout, char *out, size_t len);
/* Pulls a number out of a JSON line: "key":NUMBER. Returns -1 if absent. */
long long json_num(const char *text, const char *line_marker, const char *key);
/* What is attached to ifname in ns (NULL: here): the program id (0:
 * nothing, -1: the interface cannot be queried), and its name and attach
 * mode (XDP_ATTACHED_*) if asked.
 */
long xdp_prog_query(const char *ns, const char *ifname, char *name, size_t len, int *mode);
/* The id of the XDP program on ifname in ns, 0 if none. */
unsigned int xdp_prog_id(const char *ns, const char *ifname);
double now_secs(void);
/* Sum over the queues of a driver counter from `ethtool -S ifname` in ns
 * (NULL: here): dir "rx" or "tx", name the part after "<dir>_queue_<n>_"
 * ("xdp_xmit"). -1 when the driver has no such counter.
 */
long long ethtool_queue_stat(const char *ns, const char *ifname, const char *dir,
			     const char *name);

#endif
