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
#include <sys/uio.h>

#include "cpustat.h"
#include "netns.h"

#define BENCH_MAX_ROUNDS 50
#define BENCH_MAX_METRICS 20
#define BENCH_MAX_POINTS 128
#define BENCH_MAX_COLS 12

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
	char *netns[2];		/* made by scen_netns_add(), deleted after teardown */
};

extern const struct scenario scen_veth_tcp, scen_veth_redirect, scen_small_udp, scen_tap,
	scen_prog_cost, scen_peers, scen_veth_flip, scen_tap_vhost, scen_tap_fwd;

/* A scenario's table: its metrics (an array of M_NR) and columns. */
#define SCEN_TABLE(metrics_, cols_)					\
	.metrics = metrics_,						\
	.nmetrics = sizeof(metrics_) / sizeof((metrics_)[0]),		\
	.cols = cols_,							\
	.ncols = sizeof(cols_) / sizeof((cols_)[0])
/* A scenario file's four functions, named plan, setup, sample, teardown. */
#define SCEN_HOOKS .plan = plan, .setup = setup, .sample = sample, .teardown = teardown

/*
 * lib/netns.h's sh() runs system(), which ignores SIGINT in the caller
 * while its shell runs; a Ctrl-C then only kills that shell (exit 130).
 * In the bench such an exit means the user asked to stop.
 */
int bench_sh_status(int status);
#define sh(...) bench_sh_status(sh(__VA_ARGS__))

/* ---- the run's settings and a scenario's points (point.c) ---- */

/* Adds a point; base0/base1 are indexes of earlier points or -1. */
struct point *scen_add(struct scen *s, int base0, int base1, const char *group,
		       const char *label, const char *idfmt, ...)
	__attribute__((format(printf, 6, 7)));
/* The tap scenarios' rows: IFF_NAPI off, then on, each with nprog programs
 * (labels[], ids[]): "IFF_NAPI on|off" groups, ids "napi-on|off/ID", ratios
 * to the group's first row and, NAPI on, to the same program NAPI off.
 * knob[0] is 1 for NAPI on, knob[1] the program's index.
 */
void scen_plan_napi(struct scen *s, int nprog, const char *const labels[],
		    const char *const ids[]);
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
/* point_err(), and the point is left out of later rounds: it cannot be
 * measured here (a tool is missing or did not load).
 */
void point_skip(struct point *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A set-up step failed for this point with its reason in s->error: move it
 * to the point, so the next point starts clean.
 */
void point_take_error(struct point *p, struct scen *s);
/* Appends one command line to p->cmd ("; " separated). */
void point_cmd(struct point *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whole seconds (at least 1), for iperf3 -t. */
int scen_secs(const struct scen *s);
/* Makes a throw-away namespace xdplab-PID-TAG into ns (NETNS_NAME_MAX) for
 * the scenario; the runner deletes it after teardown, whatever happened.
 * 0, or -1 with s->error set.
 */
int scen_netns_add(struct scen *s, const char *tag, char *ns);
/* Deletes what scen_netns_add() made; the runner calls it. */
void scen_netns_del_all(struct scen *s);
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

/* ---- one sample's shared steps (sample.c) ---- */

/* What a sample runs: an optional xdplab program on the receiving side,
 * then a load (iperf3's client, the generator) for the sample's seconds.
 */
struct sample {
	struct child xdp, load;
	bool has_xdp;
	int status;		/* the load's exit code; -1: killed at its timeout */
	struct cpusplit cs;	/* CPU over the load's run */
	char *out;		/* the load's stdout */
	char *xout;		/* xdplab's --json lines, once it detached */
};

void sample_init(struct sample *sm);
/* Detaches the program (if any) and keeps its output in sm->xout. */
void sample_xdp_stop(struct sample *sm);
/* xdplab ARGS on ifname in ns. A refusal is for good: p->skip, p->error. */
int sample_xdp(struct sample *sm, struct point *p, const char *ns, const char *ifname,
	       char *const args[]);
/* Runs argv in ns until it exits (at most the sample's seconds + 20), the
 * CPU split across it; then detaches the program. -1: it could not start,
 * or the user stopped the bench.
 */
int sample_load(struct sample *sm, struct scen *s, struct point *p, const char *ns,
		char *const argv[]);
/* What the program counted under key ("pass", "drop", "rx_packets");
 * NaN, and p->error says so, when it saw nothing.
 */
double sample_xdp_count(struct sample *sm, struct point *p, const char *key);
/* The load: `xdplab trafficgen IFNAME -s SIZE -d SECS` to dst_mac/dst_ip. */
int sample_gen(struct sample *sm, struct scen *s, struct point *p, const char *ns,
	       const char *ifname, const char *dst_mac, const char *src_ip, const char *dst_ip,
	       int size);
/* The generator's seconds and frames sent; -1 with p->error if it failed. */
int sample_gen_result(struct sample *sm, struct point *p, double *secs, double *sent);
/* An iperf3 client failed: p->error says why. */
void sample_iperf_error(struct sample *sm, struct point *p);
/* The same, and the pair's server is restarted
 * before the next sample (a server left by a failed client refuses it).
 */
void sample_iperf_failed(struct sample *sm, struct point *p, struct iperf_pair *ip);
void sample_done(struct sample *sm);

/* ethtool -K IFNAME gro on|off in ns unless *cur is already on; the
 * command goes to p either way.
 */
int gro_set(struct point *p, const char *ns, const char *ifname, int *cur, int on);
/* "02:00:00:00:00:01" */
void mac_str(char buf[18], const unsigned char mac[6]);

/* ---- a tap device in a namespace (tap_dev.c) ---- */

/* The thread the tap scenarios (tap, tap-vhost, tap-fwd) reproduce; each
 * goes on to say how it reproduces it.
 */
#define SEED_001_TAP "Seed 001 (tun: NAPI for batched XDP buffs, Feb 2022): "

struct tap_dev {
	int fd;			/* not persistent: the device goes with the fd */
	unsigned char mac[6];
};

/* Opens /dev/net/tun in ns (so the device lives there) with IFF_TAP |
 * IFF_NO_PI | flags, non-blocking, sets mtu (0: leave it), brings it up
 * with ip/24 and a static neighbour peer_ip -> peer_mac. Returns 0, or -1
 * with err saying why and nothing left open.
 */
int tap_dev_open(struct tap_dev *t, const char *ns, const char *name, int flags, int mtu,
		 const char *ip, const char *peer_ip, const char *peer_mac, char *err,
		 size_t errlen);
void tap_dev_close(struct tap_dev *t);

/* What tap_dev_write_for() did. */
struct tap_writes {
	unsigned long long ok, fail;	/* writev() calls that returned the length / not */
	int last_err;			/* errno of the last failure */
	double secs;			/* how long it wrote */
};
/* writev(iov) to the tap fd, one frame a call, for secs (or until
 * bench_stop), looking at the clock every batch calls.
 */
void tap_dev_write_for(struct tap_dev *t, const struct iovec *iov, int iovcnt, int batch,
		       double secs, struct tap_writes *w);

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
