// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * prog-cost: what each program costs per frame, run by BPF_PROG_TEST_RUN
 * with a large repeat (the kernel times the loop and reports the mean),
 * on a 64-byte frame and on a 9000-byte multi-buffer frame (the kernel
 * puts what does not fit the first page into fragments; only xdp.frags
 * programs take it), against an empty program (r0 = XDP_PASS; exit) of the
 * same kind. The difference is what the program's own work costs: parsing,
 * per-CPU stats, the verdict. Measuring only: nothing is attached.
 *
 * Besides the CLI's defaults, a few programs run under a configuration of
 * their own (xdp_drop --proto udp --port 9, xdp_pass --count-proto), and
 * Debian's xdp-filter runs the same rule as the peer: it is loaded on a
 * veth in a throw-away namespace (the only way it loads), its program is
 * taken by id, and it is unloaded again before the first sample.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "bench.h"
#include "netns.h"
#include "xdplab.h"
#include "pkt.h"

enum { M_NS, M_OVERHEAD, M_MPPS, M_VERDICT, M_NR };

static const struct metric_def metrics[M_NR] = {
	[M_NS] = { "ns", "nanoseconds per frame (the kernel's mean over the repeat)" },
	[M_OVERHEAD] = { "overhead_ns", "ns per frame above the empty program, same round" },
	[M_MPPS] = { "mpps", "million frames/s one core could run" },
	[M_VERDICT] = { "verdict", "the program's return value (enum xdp_action)" },
};

static const struct column cols[] = {
	{ M_NS, "ns/frame", "%.1f" },
	{ M_OVERHEAD, "+ns over empty", "%.1f" },
	{ M_MPPS, "Mpps/core", "%.1f" },
};

enum { K_PROG, K_SIZE };
#define EMPTY -1
#define EMPTY_FRAGS -2
#define BIG 9000
#define MAX_OBJS 16
#define MAX_PROGS 48

static struct bpf_object *objs[MAX_OBJS];
static struct xdplab_cfg objs_cfg[MAX_OBJS];	/* .rodata cfg beyond the CLI's defaults */
static int nobjs;

/* Objects measured a second time, with the options of a real command line. */
static const struct variant {
	const char *obj, *suffix;
	struct xdplab_cfg cfg;
} variants[] = {
	{ "xdp_drop", "udp/9", { .match_l4 = XDPLAB_L4_UDP, .match_dport = 9 } },
	{ "xdp_pass", "count-proto", { .count_proto = 1 } },
};

/* xdp-filter with the same rule, or none: its features decide which of its
 * programs it loads (all features by default, -f udp for the smallest).
 */
static const struct peer {
	const char *label, *load_args, *rule;
} peers[] = {
	{ "xdp-filter allow-all", "", NULL },
	{ "xdp-filter udp/9", "", "port 9 -p udp" },
	{ "xdp-filter -f udp udp/9", "-f udp", "port 9 -p udp" },
};
#define PEER_OBJ -1

static struct {
	int obj;		/* objs[] index, or PEER_OBJ */
	int peer;		/* peers[] index for PEER_OBJ */
	struct bpf_program *prog;
	char name[64];
	char id[64];		/* name as a point id: no spaces or slashes */
	bool frags;
	int fd;
	char error[160];
} progs[MAX_PROGS];
static int nprogs, empty_fd = -1, empty_frags_fd = -1;
static unsigned char frame[BIG];

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!bench.verbose || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Opens one object and lists its XDP entry points, names ending in suffix. */
static void open_object(const char *path, const char *suffix, const struct xdplab_cfg *cfg)
{
	struct bpf_object *o;
	struct bpf_program *p;

	if (nobjs == MAX_OBJS || !(o = bpf_object__open_file(path, NULL)))
		return;
	objs[nobjs] = o;
	memset(&objs_cfg[nobjs], 0, sizeof(objs_cfg[nobjs]));
	if (cfg)
		objs_cfg[nobjs] = *cfg;
	bpf_object__for_each_program(p, o) {
		enum bpf_attach_type at = bpf_program__expected_attach_type(p);

		if (bpf_program__type(p) != BPF_PROG_TYPE_XDP || at == BPF_XDP_CPUMAP ||
		    at == BPF_XDP_DEVMAP || nprogs == MAX_PROGS)
			continue;
		progs[nprogs].obj = nobjs;
		progs[nprogs].prog = p;
		progs[nprogs].fd = -1;
		progs[nprogs].frags = !strncmp(bpf_program__section_name(p), "xdp.frags", 9);
		progs[nprogs].error[0] = '\0';
		snprintf(progs[nprogs].name, sizeof(progs[nprogs].name), "%s%s%s",
			 bpf_program__name(p), suffix ? " " : "", suffix ?: "");
		nprogs++;
	}
	nobjs++;
}

static void open_objects(void)
{
	char pattern[PATH_MAX + 32];
	glob_t g;

	if (nobjs)
		return;
	libbpf_set_print(quiet_print);
	snprintf(pattern, sizeof(pattern), "%s/build/*.bpf.o", bench.root);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		open_object(g.gl_pathv[i], NULL, NULL);
	globfree(&g);
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		snprintf(pattern, sizeof(pattern), "%s/build/%s.bpf.o", bench.root,
			 variants[v].obj);
		open_object(pattern, variants[v].suffix, &variants[v].cfg);
	}
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]) && nprogs < MAX_PROGS; i++) {
		progs[nprogs].obj = PEER_OBJ;
		progs[nprogs].peer = i;
		progs[nprogs].fd = -1;
		progs[nprogs].frags = false;
		progs[nprogs].error[0] = '\0';
		snprintf(progs[nprogs].name, sizeof(progs[nprogs].name), "%s", peers[i].label);
		nprogs++;
	}
}

static const char *prog_id(int i)
{
	char *c;

	snprintf(progs[i].id, sizeof(progs[i].id), "%s", progs[i].name);
	for (c = progs[i].id; *c; c++)
		if (*c == ' ' || *c == '/')
			*c = '-';
	return progs[i].id;
}

static void plan(struct scen *s)
{
	int e, ef;
	struct point *p;

	open_objects();
	if (!nprogs)
		snprintf(s->error, sizeof(s->error), "no XDP programs in %.300s/build/*.bpf.o (hint: make)",
			 bench.root);
	e = s->npts;
	p = scen_add(s, e, -1, "64 B", "empty program", "64/empty");
	p->knob[K_PROG] = EMPTY;
	p->knob[K_SIZE] = 64;
	ef = s->npts;
	p = scen_add(s, ef, -1, "64 B", "empty program, frags", "64/empty-frags");
	p->knob[K_PROG] = EMPTY_FRAGS;
	p->knob[K_SIZE] = 64;
	for (int i = 0; i < nprogs; i++) {
		p = scen_add(s, progs[i].frags ? ef : e, -1, "64 B", progs[i].name, "64/%s",
			     prog_id(i));
		p->knob[K_PROG] = i;
		p->knob[K_SIZE] = 64;
	}
	ef = s->npts;
	p = scen_add(s, ef, -1, "9000 B multi-buffer", "empty program, frags",
		     "9000/empty-frags");
	p->knob[K_PROG] = EMPTY_FRAGS;
	p->knob[K_SIZE] = BIG;
	for (int i = 0; i < nprogs; i++) {
		if (!progs[i].frags)
			continue;
		p = scen_add(s, ef, -1, "9000 B multi-buffer", progs[i].name, "9000/%s",
			     prog_id(i));
		p->knob[K_PROG] = i;
		p->knob[K_SIZE] = BIG;
	}
}

/* The CLI's defaults where they differ from zero (rxq-info passes), over
 * the object's own options.
 */
static void cli_defaults(struct bpf_object *o, const struct xdplab_cfg *own)
{
	struct btf *btf = bpf_object__btf(o);
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	struct bpf_map *m, *rodata = NULL;
	const void *init = NULL;
	size_t size = 0;
	char *data;
	int id;

	bpf_object__for_each_map(m, o) {
		const char *name = bpf_map__name(m);
		size_t n = strlen(name);

		if (n >= 7 && !strcmp(name + n - 7, ".rodata")) {
			rodata = m;
			init = bpf_map__initial_value(m, &size);
		}
	}
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	if (!init || id < 0 || !(data = malloc(size)))
		return;
	memcpy(data, init, size);
	sec = btf__type_by_id(btf, id);
	v = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		struct xdplab_cfg *cfg;

		if (strcmp(btf__name_by_offset(btf, var->name_off), "cfg") ||
		    v->offset + sizeof(*cfg) > size)
			continue;
		cfg = (struct xdplab_cfg *)(data + v->offset);
		*cfg = *own;
		cfg->action = XDP_PASS;
	}
	bpf_map__set_initial_value(rodata, data, size);
	free(data);
}

static int load_empty(bool frags)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = frags ? BPF_F_XDP_HAS_FRAGS : 0);

	return bpf_prog_load(BPF_PROG_TYPE_XDP, frags ? "empty_frags" : "empty", "GPL", insns,
			     2, &opts);
}

/* Loads xdp-filter as peers[i] says on a throw-away veth, keeps an fd of its
 * program, unloads it. Returns the fd, or -1 with the reason in err.
 */
static int load_peer(const struct peer *pe, char *err, size_t len)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct veth_pair vp;
	int fd = -1, saved;

	if (sh("command -v xdp-filter")) {
		snprintf(err, len, "xdp-filter not installed (scripts/deps.sh installs xdp-tools)");
		return -1;
	}
	if (veth_pair_add(&vp, "pcost", 16, 0)) {
		snprintf(err, len, "cannot make a veth pair for xdp-filter");
		return -1;
	}
	/* nsenter, not ip netns exec: xdp-filter pins its maps in the bpffs
	 * of this mount namespace, which ip netns exec would hide.
	 */
	if (sh("nsenter --net=/run/netns/%s xdp-filter load -m skb %s %s", vp.ns[0],
	       pe->load_args, vp.ifname[0]) ||
	    (pe->rule && sh("nsenter --net=/run/netns/%s xdp-filter %s", vp.ns[0], pe->rule))) {
		snprintf(err, len, "xdp-filter load %s / %s failed", pe->load_args,
			 pe->rule ?: "no rule");
		goto out;
	}
	saved = netns_enter(vp.ns[0]);
	if (saved >= 0) {
		if (!bpf_xdp_query(vp.ifindex[0], XDP_FLAGS_SKB_MODE, &q) && q.prog_id)
			fd = bpf_prog_get_fd_by_id(q.prog_id);
		netns_leave(saved);
	}
	if (fd < 0)
		snprintf(err, len, "xdp-filter's program not found on %s", vp.ifname[0]);
out:
	sh("nsenter --net=/run/netns/%s xdp-filter unload %s", vp.ns[0], vp.ifname[0]);
	veth_pair_del(&vp);
	return fd;
}

static int setup(struct scen *s)
{
	struct pkt_spec spec = { .ipver = 4, .l4 = PKT_UDP, .sport = 9, .dport = 9, .len = BIG,
				 .dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 } };
	bool used[MAX_OBJS] = {};

	if (!nprogs)
		return -1;
	pkt_parse_ip("198.18.0.1", &spec.src);
	pkt_parse_ip("198.18.0.2", &spec.dst);
	/* One frame for both sizes: a 64-byte run reads its first 64 bytes,
	 * whose IP and UDP lengths then say 9000; the parser does not mind.
	 * Build the 64-byte one anyway, so both are well-formed.
	 */
	pkt_build(frame, sizeof(frame), &spec);
	empty_fd = load_empty(false);
	empty_frags_fd = load_empty(true);
	if (empty_fd < 0 || empty_frags_fd < 0) {
		snprintf(s->error, sizeof(s->error), "cannot load an empty XDP program: %s",
			 strerror(errno));
		return -1;
	}
	for (int i = 0; i < s->npts; i++) {
		int pi = s->pts[i].knob[K_PROG];

		if (!s->pts[i].selected || pi < 0)
			continue;
		if (progs[pi].obj != PEER_OBJ)
			used[progs[pi].obj] = true;
		else if (progs[pi].fd < 0 && !progs[pi].error[0])
			progs[pi].fd = load_peer(&peers[progs[pi].peer], progs[pi].error,
						 sizeof(progs[pi].error));
	}
	for (int o = 0; o < nobjs; o++) {
		int err;

		if (!used[o])
			continue;
		cli_defaults(objs[o], &objs_cfg[o]);
		err = bpf_object__load(objs[o]);
		for (int i = 0; i < nprogs; i++) {
			if (progs[i].obj != o)
				continue;
			if (err)
				snprintf(progs[i].error, sizeof(progs[i].error),
					 "loading %s failed: %s", bpf_object__name(objs[o]),
					 strerror(-err));
			else
				progs[i].fd = bpf_program__fd(progs[i].prog);
		}
	}
	snprintf(s->note, sizeof(s->note),
		 "Each sample is one BPF_PROG_TEST_RUN with repeat %d; the programs are loaded "
		 "from build/*.bpf.o with the CLI's defaults (match everything, rxq-info "
		 "passes) but no egress device or CPU, so the map redirects return their "
		 "fallback verdict, ABORTED. 'udp/9' and 'count-proto' rows run with those "
		 "options; the xdp-filter rows are Debian's xdp-filter's program, loaded "
		 "(xdp-filter load -m skb [-f udp], xdp-filter port 9 -p udp) and unloaded "
		 "again before the samples.",
		 bench.quick ? 200000 : 1000000);
	return 0;
}

/* The empty programs have negative indices; only the others are in progs[]
 * (spelled out so that no compiler sees a negative subscript). */
static const char *prog_label(int pi)
{
	if (pi == EMPTY)
		return "empty";
	if (pi == EMPTY_FRAGS)
		return "empty_frags";
	return pi >= 0 ? progs[pi].name : "?";
}

static void sample(struct scen *s, struct point *p, int round)
{
	int pi = p->knob[K_PROG], size = p->knob[K_SIZE];
	int fd = pi == EMPTY ? empty_fd : pi == EMPTY_FRAGS ? empty_frags_fd : progs[pi].fd;
	__u32 repeat = bench.quick ? 200000 : 1000000;
	struct pkt_spec spec = { .ipver = 4, .l4 = PKT_UDP, .sport = 9, .dport = 9,
				 .len = size, .dst_mac = { 2, 0, 0, 0, 0, 2 },
				 .src_mac = { 2, 0, 0, 0, 0, 1 } };
	static unsigned char small[64];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = repeat);
	const struct point *base = &s->pts[p->base[0]];
	static const char *const verdicts[] = { "ABORTED", "DROP", "PASS", "TX", "REDIRECT" };

	if (fd < 0) {
		point_skip(p, "%s", pi >= 0 && progs[pi].error[0] ? progs[pi].error : "not loaded");
		return;
	}
	if (size == BIG) {
		opts.data_in = frame;
		opts.data_size_in = BIG;
	} else {
		pkt_parse_ip("198.18.0.1", &spec.src);
		pkt_parse_ip("198.18.0.2", &spec.dst);
		pkt_build(small, sizeof(small), &spec);
		opts.data_in = small;
		opts.data_size_in = sizeof(small);
	}
	if (pi >= 0 && progs[pi].obj == PEER_OBJ)
		point_cmd(p, "xdp-filter load -m skb %s IFNAME%s%s; xdplab-bench: "
			  "bpf_prog_test_run_opts(its program, %d-byte UDP frame to port 9, "
			  "repeat %u)", peers[progs[pi].peer].load_args,
			  peers[progs[pi].peer].rule ? "; xdp-filter " : "",
			  peers[progs[pi].peer].rule ?: "", size, repeat);
	else
		point_cmd(p, "xdplab-bench: bpf_prog_test_run_opts(%s, %d-byte UDP frame%s, "
			  "repeat %u)", prog_label(pi), size,
			  size == BIG ? " (multi-buffer)" : "", repeat);
	if (bpf_prog_test_run_opts(fd, &opts)) {
		point_skip(p, "BPF_PROG_TEST_RUN failed: %s", strerror(errno));
		return;
	}
	point_set(p, round, M_NS, opts.duration);
	point_set(p, round, M_MPPS, opts.duration ? 1e3 / opts.duration : NAN);
	point_set(p, round, M_VERDICT, opts.retval);
	if (base != p)
		point_set(p, round, M_OVERHEAD, opts.duration - base->m[M_NS][round]);
	if (!strchr(p->label, '>') && opts.retval < 5) {
		size_t n = strlen(p->label);

		snprintf(p->label + n, sizeof(p->label) - n, " -> %s", verdicts[opts.retval]);
	}
}

static void teardown(struct scen *s)
{
	(void)s;
	if (empty_fd >= 0)
		close(empty_fd);
	if (empty_frags_fd >= 0)
		close(empty_frags_fd);
	empty_fd = empty_frags_fd = -1;
	for (int i = 0; i < nprogs; i++)
		if (progs[i].obj == PEER_OBJ && progs[i].fd >= 0)
			close(progs[i].fd);
	for (int o = 0; o < nobjs; o++)
		bpf_object__close(objs[o]);
	nobjs = nprogs = 0;
}

const struct scenario scen_prog_cost = {
	.name = "prog-cost",
	.title = "ns per frame of each program under BPF_PROG_TEST_RUN",
	.seed = "No seed thread measured this; it tells the other tables how much of an XDP "
		"row's cost is the program itself and how much the path around it.",
	.metrics = metrics,
	.nmetrics = M_NR,
	.cols = cols,
	.ncols = sizeof(cols) / sizeof(cols[0]),
	.ratio_head = { "× empty" },
	.plot_ylabel = "time per frame, ratio to the empty program",
	.duration = 0,
	.quick_duration = 0,
	.plan = plan,
	.setup = setup,
	.sample = sample,
	.teardown = teardown,
};
