// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdplab-bench: runs the chosen scenarios (all by default), each in its own
 * throw-away namespaces, and prints a markdown table per scenario; writes
 * every sample to JSON and plots the ratios.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "netns.h"

static const struct scenario *const all_scenarios[] = {
	&scen_veth_tcp, &scen_veth_flip, &scen_veth_redirect, &scen_small_udp, &scen_tap,
	&scen_prog_cost,
	&scen_peers,
	&scen_tap_vhost,
	&scen_tap_fwd,
};
#define NSCEN (int)(sizeof(all_scenarios) / sizeof(all_scenarios[0]))

static struct {
	bool want[NSCEN];
	bool any_named;
	const char *points[32];
	int npoints;
	const char *outdir;
	bool no_plot, list, repeat_set, no_baselines;
} opt;

/* ---- options ---- */

enum { OPT_NO_PLOT = 0x100, OPT_PORT, OPT_LIST, OPT_ALTERNATE, OPT_PIN, OPT_NO_BASELINES };

static const struct argp_option options[] = {
	{ "quick", 'q', NULL, 0, "quick mode: 2 rounds of short samples (under 3 minutes)", 0 },
	{ "repeat", 'r', "N", 0, "samples of each point (default 5, quick 2)", 0 },
	{ "duration", 'd', "SECS", 0, "seconds a sample (default: each scenario's own)", 0 },
	{ "warmup", 'w', "N", 0, "N rounds first that are not recorded (default 0)", 0 },
	{ "alternate", OPT_ALTERNATE, NULL, 0, "odd rounds take the points in reverse order, "
	  "so that a point and its baseline swap places (ABBA)", 0 },
	{ "pin", OPT_PIN, NULL, 0, "veth-tcp, veth-flip: iperf3 client on CPU 0, server on CPU 1 "
	  "(iperf3 -A 0,1), so the scheduler cannot put both on one CPU; tap-vhost: "
	  "the writer on CPU 0, the socket reader on CPU 1", 0 },
	{ "point", 'p', "GLOB", 0, "only points whose id matches (with their baselines); "
	  "repeatable, see --list", 0 },
	{ "no-baselines", OPT_NO_BASELINES, NULL, 0, "with -p: run only the points named, "
	  "not their baselines (their ratios stay empty); for counting one point's work", 0 },
	{ "list", OPT_LIST, NULL, 0, "list scenarios and point ids, run nothing", 0 },
	{ "out", 'o', "DIR", 0, "results directory (default bench/results next to build/)", 0 },
	{ "no-plot", OPT_NO_PLOT, NULL, 0, "skip gnuplot", 0 },
	{ "port", OPT_PORT, "PORT", 0, "iperf3 port inside the namespaces (default 5201)", 0 },
	{ "verbose", 'v', NULL, 0, "show every command and failure as it happens", 0 },
	{},
};

static int scen_index(const char *name)
{
	for (int i = 0; i < NSCEN; i++)
		if (!strcmp(all_scenarios[i]->name, name))
			return i;
	return -1;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	char *end;
	long v;
	double d;
	int i;

	switch (key) {
	case 'q':
		bench.quick = true;
		break;
	case 'r':
		v = strtol(arg, &end, 10);
		if (*end || v < 1 || v > BENCH_MAX_ROUNDS)
			argp_error(state, "--repeat '%s': a number from 1 to %d", arg,
				   BENCH_MAX_ROUNDS);
		bench.repeat = v;
		opt.repeat_set = true;
		break;
	case 'd':
		d = strtod(arg, &end);
		if (*end || !(d > 0) || d > 600)
			argp_error(state, "--duration '%s': seconds, more than 0 and at most 600", arg);
		bench.duration = d;
		break;
	case 'w':
		v = strtol(arg, &end, 10);
		if (*end || v < 0 || v > 10)
			argp_error(state, "--warmup '%s': a number from 0 to 10", arg);
		bench.warmup = v;
		break;
	case OPT_ALTERNATE:
		bench.alternate = true;
		break;
	case OPT_PIN:
		if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
			argp_error(state, "--pin needs 2 CPUs, this machine has %ld",
				   sysconf(_SC_NPROCESSORS_ONLN));
		bench.pin = true;
		break;
	case 'p':
		if (opt.npoints == (int)(sizeof(opt.points) / sizeof(opt.points[0])))
			argp_error(state, "too many --point");
		opt.points[opt.npoints++] = arg;
		break;
	case 'o':
		opt.outdir = arg;
		break;
	case OPT_NO_PLOT:
		opt.no_plot = true;
		break;
	case OPT_LIST:
		opt.list = true;
		break;
	case OPT_NO_BASELINES:
		opt.no_baselines = true;
		break;
	case OPT_PORT:
		v = strtol(arg, &end, 10);
		if (*end || v < 1 || v > 65535)
			argp_error(state, "--port '%s': a port number from 1 to 65535", arg);
		bench.port = v;
		break;
	case 'v':
		bench.verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (!strcmp(arg, "all")) {
			for (i = 0; i < NSCEN; i++)
				opt.want[i] = true;
		} else if ((i = scen_index(arg)) < 0) {
			char known[256] = "";

			for (int j = 0; j < NSCEN; j++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
					 j ? ", " : "", all_scenarios[j]->name);
			fprintf(stderr, "xdplab-bench: unknown scenario '%s' (known: %s, all)\n",
				arg, known);
			exit(2);
		} else {
			opt.want[i] = true;
		}
		opt.any_named = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char doc[] =
	"Run the seed threads' measurements on the running kernel, each variable\n"
	"against its baseline in the same run, in throw-away namespaces.\n"
	"\n"
	"Scenarios (default: all):\n"
	"  veth-tcp       iperf3 TCP through veth, MTU 1500/8000/9000, XDP_PASS\n"
	"                 frags / non-frags / none, receiver GRO on / off (seed 000)\n"
	"  veth-flip      the veth-tcp XDP_PASS ratio inside one iperf3 stream: the\n"
	"                 program attached and detached in -d second windows\n"
	"  veth-redirect  live frames -> veth -> xdp_redirect_map -> veth pair ->\n"
	"                 xdp_rxq_info pass / drop, or GRO and no program (seed 003)\n"
	"  small-udp      iperf3 -u 64/128 B with and without XDP; XDP_DROP of\n"
	"                 generated frames, native and skb mode (seed 004)\n"
	"  tap            frames written to a tap fd, IFF_NAPI off/on, XDP drop/pass\n"
	"                 (seed 001)\n"
	"  prog-cost      ns per packet of each program under BPF_PROG_TEST_RUN,\n"
	"                 64 B and 9000 B multi-buffer, against an empty program\n"
	"  peers          Debian's xdp-bench drop|pass and xdp-filter (UDP port 9)\n"
	"                 against xdplab on the same frames: Mpps, test-run ns, verdicts\n"
	"  tap-vhost      frames into a tap via vhost-net batches and write(), NAPI\n"
	"                 off/on, XDP drop/pass/none, 64/1500 B and 9000 B GSO (seed 001)\n"
	"  tap-fwd        iperf3 TCP -> veth -> AF_PACKET forwarder -> vhost-net -> tap,\n"
	"                 NAPI off/on, no XDP / xdp_pass / xdp_pass_frags (seed 001)\n"
	"\v"
	"Output: a markdown table per scenario on stdout, progress on stderr, and\n"
	"in bench/results/DATE-TIME/: results.json (every sample, machine, kernel,\n"
	"commands), tables.md and SCENARIO.png (ratios; gnuplot). Each point is\n"
	"sampled once a round, rounds interleave the points; the table shows the\n"
	"median (min-max), and ratios are taken within a round.\n"
	"\n"
	"Examples:\n"
	"  xdplab-bench                          everything, 5 rounds (15-20 min)\n"
	"  xdplab-bench -q                       quick mode, under 3 minutes\n"
	"  xdplab-bench veth-tcp prog-cost       two scenarios\n"
	"  xdplab-bench -p 'veth-tcp/mtu8000/*'  one MTU, all its rows\n"
	"  xdplab-bench -p veth-tcp/mtu1500/pass-frags/gro-off -r 10 -d 10\n"
	"  xdplab-bench --list                   scenarios and point ids\n"
	"  make bench QUICK=1 SCENARIOS='veth-tcp tap'";

static const struct argp argp = { options, parse, "[SCENARIO...]", doc, NULL, NULL, NULL };

/* ---- run ---- */

static void on_signal(int sig)
{
	if (bench_stop) {
		/* A second Ctrl-C: no more waiting for an orderly stop. */
		children_kill_all();
		netns_cleanup_all();
		signal(sig, SIG_DFL);
		raise(sig);
	}
	bench_stop = 1;
}

static void select_points(struct scen *s)
{
	if (!opt.npoints)
		return;
	for (int i = 0; i < s->npts; i++) {
		struct point *p = &s->pts[i];

		p->selected = false;
		for (int j = 0; j < opt.npoints; j++)
			if (!fnmatch(opt.points[j], p->id, 0) ||
			    !strncmp(p->id, opt.points[j], strlen(opt.points[j])))
				p->selected = true;
	}
	/* A ratio needs its baseline in the same rounds. */
	for (int i = s->npts - 1; i >= 0 && !opt.no_baselines; i--)
		for (int b = 0; b < 2; b++)
			if (s->pts[i].selected && s->pts[i].base[b] >= 0)
				s->pts[s->pts[i].base[b]].selected = true;
}

static int nselected(const struct scen *s)
{
	int n = 0;

	for (int i = 0; i < s->npts; i++)
		n += s->pts[i].selected;
	return n;
}

static bool in_path(const char *prog)
{
	char *path = getenv("PATH"), *copy, *dir, *save = NULL, buf[PATH_MAX];
	bool found = false;

	if (!path)
		path = "/usr/sbin:/usr/bin:/sbin:/bin";
	copy = strdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", dir, prog);
		found = !access(buf, X_OK);
	}
	free(copy);
	return found;
}

static double loadavg1(void)
{
	double l = NAN;
	FILE *f = fopen("/proc/loadavg", "re");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = NAN;
		fclose(f);
	}
	return l;
}

static void run_scenario(struct scen *s)
{
	const struct scenario *d = s->def;
	int total = nselected(s), done = 0;

	s->started = now();
	s->load = loadavg1();
	bench_log("%s: %d points x %d rounds (+%d warm-up), %.0f s a sample%s", d->name, total,
		  bench.repeat, bench.warmup, s->duration,
		  bench.alternate ? ", odd rounds in reverse order" : "");
	if (bench.pin)
		bench_log("%s: iperf3 client pinned to CPU 0, server to CPU 1", d->name);
	if (d->setup(s)) {
		bench_log("%s: %s", d->name, s->error[0] ? s->error : "setup failed");
		d->teardown(s);
		scen_netns_del_all(s);
		s->ended = now();
		return;
	}
	/* Warm-up rounds have negative numbers: point_set() drops their
	 * samples. With --alternate, odd rounds go backwards, so a point
	 * sampled right after its baseline in one round comes right before
	 * it in the next, and what the order does cancels out in the median.
	 */
	for (int r = -bench.warmup; r < bench.repeat && !bench_stop; r++) {
		bool back = bench.alternate && (r & 1);

		for (int k = 0; k < s->npts && !bench_stop; k++) {
			int i = back ? s->npts - 1 - k : k;
			struct point *p = &s->pts[i];
			double med, lo, hi;
			const struct column *c = &d->cols[0];

			if (!p->selected || p->skip)
				continue;
			p->cmd[0] = '\0';
			if (r < 0) {
				char err[sizeof(p->error)];

				/* A warm-up failure is not a result */
				memcpy(err, p->error, sizeof(err));
				d->sample(s, p, r);
				memcpy(p->error, err, sizeof(err));
				fprintf(stderr, "  [warm-up] %-44s done\n", p->id);
				continue;
			}
			s->rounds = r + 1;	/* a partial round counts too */
			d->sample(s, p, r);
			done++;
			if (bench_stop)
				break;
			if (stats3(&p->m[c->metric][r], 1, &med, &lo, &hi)) {
				char val[32];

				snprintf(val, sizeof(val), c->fmt, med);
				fprintf(stderr, "  [%d/%d] %-44s %s %s\n", r + 1, bench.repeat,
					p->id, val, c->head);
			} else {
				fprintf(stderr, "  [%d/%d] %-44s failed: %.120s\n", r + 1,
					bench.repeat, p->id, p->error);
			}
		}
	}
	(void)done;
	d->teardown(s);
	children_kill_all();
	scen_netns_del_all(s);
	s->ended = now();
}

static void fill_paths(const char *argv0)
{
	char exe[PATH_MAX], tmp[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		n = 0;
	exe[n] = '\0';
	snprintf(tmp, sizeof(tmp), "%s", exe);
	/* build/xdplab-bench -> the tree is build/.. */
	snprintf(bench.root, sizeof(bench.root), "%.*s", (int)sizeof(bench.root) - 1,
		 dirname(dirname(tmp)));
	snprintf(bench.xdplab, sizeof(bench.xdplab), "%s/build/xdplab", bench.root);
	/* Reproduce lines use the path the user typed when it is relative. */
	snprintf(bench.self, sizeof(bench.self), "%s", strchr(argv0, '/') ? argv0 : exe);
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct scen *runs[NSCEN] = {};
	char argv_line[1024] = "", outdir[PATH_MAX], path[PATH_MAX + 32], stamp[32];
	struct utsname u;
	int nruns = 0, ret = 0, plots_failed = 0;
	double load_before = loadavg1();
	struct sigaction sa = { .sa_handler = on_signal };
	time_t t = time(NULL);
	FILE *f;

	argp_parse(&argp, argc, argv, 0, NULL, NULL);
	fill_paths(argv[0]);
	if (!opt.repeat_set && bench.quick)
		bench.repeat = 2;
	for (int i = 0; i < argc; i++)
		snprintf(argv_line + strlen(argv_line), sizeof(argv_line) - strlen(argv_line),
			 "%s%s", i ? " " : "", argv[i]);

	/* -p alone picks the scenarios its patterns name. */
	if (!opt.any_named) {
		for (int i = 0; i < NSCEN; i++) {
			size_t n = strlen(all_scenarios[i]->name);
			bool hit = !opt.npoints;

			for (int j = 0; j < opt.npoints && !hit; j++)
				hit = !strncmp(opt.points[j], all_scenarios[i]->name, n) &&
				      (opt.points[j][n] == '/' || !opt.points[j][n]);
			opt.want[i] = hit;
		}
	}

	for (int i = 0; i < NSCEN; i++) {
		struct scen *s;

		if (!opt.want[i])
			continue;
		s = calloc(1, sizeof(*s));
		if (!s)
			return 1;
		s->def = all_scenarios[i];
		s->duration = bench.duration ?: bench.quick ? s->def->quick_duration :
			      s->def->duration;
		s->def->plan(s);
		select_points(s);
		if (!nselected(s)) {
			free(s);
			continue;
		}
		runs[nruns++] = s;
	}
	if (!nruns) {
		fprintf(stderr, "xdplab-bench: no point matches %s (see --list)\n",
			opt.npoints ? opt.points[0] : "");
		return 2;
	}
	if (opt.list) {
		for (int i = 0; i < nruns; i++) {
			printf("%s: %s\n", runs[i]->def->name, runs[i]->def->title);
			for (int j = 0; j < runs[i]->npts; j++)
				if (runs[i]->pts[j].selected)
					printf("  %-46s %s, %s\n", runs[i]->pts[j].id,
					       runs[i]->pts[j].group, runs[i]->pts[j].label);
		}
		return 0;
	}

	/* Bad input and missing tools: one line each, before anything runs. */
	if (geteuid() != 0) {
		fprintf(stderr, "xdplab-bench: needs root (namespaces, XDP, BPF_PROG_RUN); run it with sudo\n");
		return 1;
	}
	if (access(bench.xdplab, X_OK)) {
		fprintf(stderr, "xdplab-bench: %s not found (hint: make)\n", bench.xdplab);
		return 1;
	}
	for (int i = 0; i < nruns; i++) {
		char needs[128], *tok, *save = NULL;

		snprintf(needs, sizeof(needs), "%s", runs[i]->def->needs ?: "");
		for (tok = strtok_r(needs, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			if (in_path(tok))
				continue;
			fprintf(stderr, "xdplab-bench: %s needs %s, which is not in PATH "
				"(hint: scripts/deps.sh base)\n", runs[i]->def->name, tok);
			return 1;
		}
	}

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&t));
	if (opt.outdir)
		snprintf(outdir, sizeof(outdir), "%s", opt.outdir);
	else
		snprintf(outdir, sizeof(outdir), "%s/bench/results/%s", bench.root, stamp);
	if (mkdir_p(outdir) || access(outdir, W_OK)) {
		char alt[PATH_MAX];

		snprintf(alt, sizeof(alt), "/tmp/xdplab-bench/%s", stamp);
		bench_log("cannot write %s (%s); results go to %s", outdir, strerror(errno), alt);
		snprintf(outdir, sizeof(outdir), "%s", alt);
		if (mkdir_p(outdir)) {
			fprintf(stderr, "xdplab-bench: cannot create %s: %s\n", outdir,
				strerror(errno));
			return 1;
		}
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	atexit(netns_cleanup_all);
	netns_verbose = false;
	netns_reap_stale();
	uname(&u);
	bench_log("%s, Linux %s, %ld CPUs, load %.2f; %d round%s%s",
		  bench.quick ? "quick mode" : "full mode", u.release,
		  sysconf(_SC_NPROCESSORS_ONLN), load_before, bench.repeat,
		  bench.repeat > 1 ? "s" : "", bench.quick ? "" : "; -q for a quick run");

	for (int i = 0; i < nruns && !bench_stop; i++) {
		run_scenario(runs[i]);
		netns_cleanup_all();
		if (!bench_stop || runs[i]->rounds) {
			report_table(stdout, runs[i]);
			fflush(stdout);
		}
	}
	children_kill_all();
	netns_cleanup_all();

	snprintf(path, sizeof(path), "%s/results.json", outdir);
	f = fopen(path, "w");
	if (f) {
		report_json(f, runs, nruns, argv_line, bench_stop, load_before);
		fclose(f);
	} else {
		fprintf(stderr, "xdplab-bench: cannot write %s: %s\n", path, strerror(errno));
		ret = 1;
	}
	snprintf(path, sizeof(path), "%s/tables.md", outdir);
	f = fopen(path, "w");
	if (f) {
		for (int i = 0; i < nruns; i++)
			report_table(f, runs[i]);
		fclose(f);
	}
	if (!opt.no_plot && !bench_stop)
		for (int i = 0; i < nruns; i++)
			plots_failed |= report_plot(runs[i], outdir);
	if (!opt.outdir) {
		/* bench/results/latest -> the newest run */
		snprintf(path, sizeof(path), "%s/bench/results/latest", bench.root);
		unlink(path);
		if (symlink(stamp, path))
			(void)0;
	}
	if (bench_stop) {
		bench_log("interrupted: children stopped, namespaces removed; partial results in %s",
			  outdir);
		return 130;
	}
	for (int i = 0; i < nruns; i++)
		if (runs[i]->error[0]) {
			bench_log("%s did not run: %s", runs[i]->def->name, runs[i]->error);
			ret = 1;
		}
	bench_log("results: %s/results.json%s", outdir,
		  opt.no_plot ? "" : plots_failed ? " (some plots failed)" : ", plots *.png");
	return ret;
}
