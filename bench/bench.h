/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdplab-bench: the seed threads' measurements on the running kernel.
 *
 * A scenario plans its points (table rows), builds its topology once,
 * then the driver runs the points round-robin, one sample of each point
 * per round, so slow drift of a shared machine hits every row alike and a
 * row's ratio to its baseline is taken within one round. The report turns
 * the samples into a markdown table (median, min, max), JSON and plots.
 *
 * Everything that touches the network runs the way a user would: the
 * build/xdplab CLI, iperf3, ethtool and ip, each started inside a
 * namespace made with lib/netns.h.
 */
#ifndef XDPLAB_BENCH_H
#define XDPLAB_BENCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "cpustat.h"
#include "netns.h"

#define BENCH_MAX_ROUNDS 50
#define BENCH_MAX_METRICS 12
#define BENCH_MAX_POINTS 64
#define BENCH_MAX_COLS 9

/* What the whole run shares; set by main. */
struct bench_cfg {
	int repeat;		/* rounds; every point is sampled once a round */
	int warmup;		/* rounds run first and not recorded */
	bool alternate;		/* odd rounds take the points in reverse order */
	bool pin;		/* iperf3 client on CPU 0, server on CPU 1 */
	double duration;	/* seconds a sample; 0: each scenario's default */
	bool quick;
	bool verbose;
	int port;		/* iperf3 server port */
	char root[PATH_MAX / 2];	/* the source tree (parent of build/) */
	char xdplab[PATH_MAX];	/* build/xdplab */
	char self[PATH_MAX];	/* how to call this program in a reproduce line */
};

extern struct bench_cfg bench;
/* Set by SIGINT/SIGTERM: finish nothing new, clean up, exit. */
extern volatile int bench_stop;

struct metric_def {
	const char *key;	/* JSON name */
	const char *unit;
};

/* A table column: a metric, its header and printf format. Column 0 is the
 * scenario's main metric, shown as "median (min–max)" and the one ratios
 * and plots are made of; the others show their median.
 */
struct column {
	int metric;
	const char *head;
	const char *fmt;
};

struct point {
	char id[96];		/* "veth-tcp/mtu1500/pass-frags/gro-off" */
	char group[64];		/* first table column, e.g. "MTU 1500" */
	char label[64];		/* second table column, e.g. "XDP_PASS frags" */
	int base[2];		/* the points this one's main metric is divided by; -1 none */
	int knob[6];		/* the scenario's own settings for this point */
	bool selected;
	bool skip;		/* refused for good: no more samples */
	char error[320];	/* why a sample (or all of them) failed */
	char cmd[2048];		/* what the last sample ran */
	double m[BENCH_MAX_METRICS][BENCH_MAX_ROUNDS];	/* NaN: no sample */
};

struct scen;

struct scenario {
	const char *name;
	const char *title;	/* table heading */
	const char *seed;	/* which seed thread, and what it measured */
	const char *needs;	/* programs it needs in PATH, space separated */
	const struct metric_def *metrics;
	int nmetrics;
	const struct column *cols;
	int ncols;
	const char *ratio_head[2];
	const char *plot_ylabel;
	double duration, quick_duration;	/* seconds a sample */
	void (*plan)(struct scen *s);
	int (*setup)(struct scen *s);		/* non-zero: s->error says why */
	void (*sample)(struct scen *s, struct point *p, int round);
	void (*teardown)(struct scen *s);
};

struct scen {
	const struct scenario *def;
	struct point pts[BENCH_MAX_POINTS];
	int npts;
	int rounds;		/* rounds run so far */
	double duration;	/* seconds a sample in this run */
	char error[512];	/* setup failed, or the scenario could not run */
	char note[1024];	/* printed under the table */
	double started, ended;	/* CLOCK_MONOTONIC */
	double load;		/* 1-minute load average when it started */
};

extern const struct scenario scen_veth_tcp, scen_veth_redirect, scen_small_udp, scen_tap,
	scen_prog_cost, scen_peers, scen_veth_flip;

/*
 * lib/netns.h's sh() runs system(), which ignores SIGINT in the caller
 * while its shell runs; a Ctrl-C then only kills that shell (exit 130).
 * In the bench such an exit means the user asked to stop.
 */
int bench_sh_status(int status);
#define sh(...) bench_sh_status(sh(__VA_ARGS__))

/* ---- planning (main.c) ---- */

/* Adds a point; base0/base1 are indexes of earlier points or -1. */
struct point *scen_add(struct scen *s, int base0, int base1, const char *group,
		       const char *label, const char *idfmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Records one sample of metric mi in the current round. */
void point_set(struct point *p, int round, int mi, double v);

/*
 * The CPU split (lib/cpustat.h) that the scenarios report: four metrics in
 * a row of a scenario's enum, their definitions and their table columns.
 *   enum { M_KPPS, CPU_SPLIT_SLOTS, M_NR };
 *   metrics[] = { [M_KPPS] = { ... }, CPU_SPLIT_METRICS };
 */
#define CPU_SPLIT_SLOTS M_USER, M_SYS, M_SOFTIRQ, M_IDLE
#define CPU_SPLIT_METRICS					\
	[M_USER] = { "user", "% of a core" },			\
	[M_SYS] = { "system", "% of a core" },			\
	[M_SOFTIRQ] = { "softirq", "% of a core" },		\
	[M_IDLE] = { "idle", "% of a core" }
#define CPU_SPLIT_COLUMNS					\
	{ M_USER, "user %", "%.0f" },				\
	{ M_SYS, "sys %", "%.0f" },				\
	{ M_SOFTIRQ, "softirq %", "%.0f" },			\
	{ M_IDLE, "idle %", "%.0f" }
/* Records cs as the four CPU_SPLIT_SLOTS metrics, starting at user. */
void point_set_cpu(struct point *p, int round, int user, const struct cpusplit *cs);
/* Appends to p->error (kept short); prints it with -v. */
void point_err(struct point *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends one command line to p->cmd ("; " separated). */
void point_cmd(struct point *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whole seconds (at least 1), for iperf3 -t. */
int scen_secs(const struct scen *s);
void bench_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- processes (run.c) ---- */

/* CLOCK_MONOTONIC in seconds. */
double now(void);

struct child {
	pid_t pid;
	int out, err;		/* memfds holding the child's stdout / stderr */
	int status;		/* exit code once reaped, 128+sig if killed */
	bool reaped;
	char cmd[768];		/* the command line, as a user would type it */
};

/* Starts argv[0] (looked up in PATH) inside namespace ns (NULL: here),
 * in a process group of its own and killed if the bench dies. c->cmd gets
 * "ip netns exec NS argv...". Returns 0 or -1.
 */
int child_start(struct child *c, const char *ns, char *const argv[]);
/* Waits up to timeout seconds (or until bench_stop); then kills it.
 * Returns its exit code, or -1 if it had to be killed.
 */
int child_wait(struct child *c, double timeout);
/* SIGINT, a grace period, then SIGKILL. Returns the exit code. */
int child_stop(struct child *c);
/* Has it exited already? (reaps it) */
bool child_exited(struct child *c);
/* Its stdout (which 1) or stderr (2), NUL-terminated; free() it. */
char *child_output(const struct child *c, int which);
/* The most telling line of its stderr (else stdout), for a one-line error. */
void child_errline(const struct child *c, char *buf, size_t len);
void child_close(struct child *c);
/* Kills whatever children are still running (at exit, on a signal). */
void children_kill_all(void);

/* Runs `xdplab ARGS...` in ns, and waits until a program is attached to
 * ifname there. On failure p->error says why and the child is gone.
 */
int xdplab_start(struct child *c, struct point *p, const char *ns, const char *ifname,
		 char *const args[]);
/* SIGINT (it detaches), wait, and return its stdout (the --json lines). */
char *xdplab_finish(struct child *c);
/* Waits until an XDP program is attached to ifname in ns, or c exits. */
int xdp_wait_attached(const char *ns, const char *ifname, struct child *c, double timeout);

/* A number from a JSON text: the first "key" after "section" (NULL: from
 * the start) and before the end of that object. NaN if absent.
 */
double json_num(const char *js, const char *section, const char *key);
/* The first "key":"string" value, or NULL. */
const char *json_str(const char *js, const char *key, char *buf, size_t len);
/* The line of xdplab --json output with "summary":true, or NULL. */
const char *xdplab_summary(const char *out);

/* rx packets and rx dropped of ifname in ns, from `ip -s -j link`. */
int link_rx(const char *ns, const char *ifname, unsigned long long *packets,
	    unsigned long long *dropped);
/* Starts `iperf3 -s` in ns and waits until it listens on ip:port. */
int iperf3_server(struct child *c, const char *ns, int port, char *err, size_t errlen);
/* ethtool -K IFNAME gro on|off in ns. */
int set_gro(const char *ns, const char *ifname, bool on);

/* ---- a veth pair with an iperf3 server (iperf_pair.c) ---- */

struct iperf_pair {
	struct veth_pair vp;
	struct child server;	/* iperf3 -s in vp.ns[1] */
	bool server_up;
	int mtu;		/* both ends' MTU now */
};

/* The pair (veth_pair_add(tag, id, mtu)), and the server if serve. */
int iperf_pair_setup(struct iperf_pair *ip, struct scen *s, const char *tag, int id, int mtu,
		     bool serve);
/* Starts the server again if a failed client took it down; p->error says why not. */
int iperf_pair_serve(struct iperf_pair *ip, struct scen *s, struct point *p);
/* A client failed mid-test: a server left so refuses the next one. */
void iperf_pair_server_lost(struct iperf_pair *ip);
/* Both ends to mtu if they are not there yet; the commands go to p either way. */
int iperf_pair_mtu(struct iperf_pair *ip, struct point *p, int mtu);
void iperf_pair_teardown(struct iperf_pair *ip);

/* ---- report (report.c) ---- */

/* median, min, max of the non-NaN values; returns how many there were. */
int stats3(const double *v, int n, double *med, double *min, double *max);
/* The per-round ratios of p's main metric to its base[which]. */
int point_ratios(const struct scen *s, const struct point *p, int which,
		 double out[BENCH_MAX_ROUNDS]);
void report_table(FILE *f, const struct scen *s);
void report_json(FILE *f, struct scen *const *all, int n, const char *argv_line,
		 bool interrupted, double load_before);
/* Writes NAME.dat and NAME.gp to dir and runs gnuplot for NAME.png.
 * Returns 0, or -1 with a line on stderr.
 */
int report_plot(const struct scen *s, const char *dir);

#endif
