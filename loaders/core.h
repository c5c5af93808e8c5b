/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What every xdplab subcommand shares: the common options, the checks that
 * turn bad input into one clear line, picking the frags or linear entry
 * point, attach with a guaranteed detach, and the per-interval stats.
 *
 * A subcommand's main() is: parse (core argp as a child) -> xdplab_preflight
 * -> open skeleton with xdplab_open_opts() -> xdplab_pick_prog -> set rodata
 * -> load -> xdplab_run -> destroy.
 */
#ifndef XDPLAB_CORE_H
#define XDPLAB_CORE_H

#include <argp.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "xdplab.h"

#define XDPLAB_VERSION "0.1.0"

enum frags_choice { FRAGS_AUTO = -1, FRAGS_OFF = 0, FRAGS_ON = 1 };

struct xdplab_opts {
	const char *ifname;
	int ifindex;
	__u32 xdp_flags;	/* XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE */
	int frags;		/* enum frags_choice; resolved by pick_prog */
	bool no_gso;		/* --no-gso: never ask for GSO superframes */
	double interval;	/* seconds between stats lines */
	double duration;	/* 0: until SIGINT/SIGTERM */
	bool json;
	bool quiet;		/* summary only */
	bool keep;		/* leave the program attached at exit */
	const char *pin_dir;	/* pin program and maps here (implies keep) */
	const char *btf_path;	/* kernel BTF to relocate against */
	struct xdplab_cfg cfg;	/* copied into the program's .rodata */
	const char *args[4];	/* positional arguments; args[0] is ifname */
	int nargs;
	int seen[16];		/* keys of the options given, see xdplab_opt_once() */
	int nseen;
	void *extra;		/* the subcommand's own options */
};

/* How a subcommand parses: the common options come along as a child. */
struct xdplab_cmd_desc {
	const char *name;
	const char *args_doc;	/* e.g. "IFNAME" */
	const char *doc;	/* summary, then \v and examples */
	int nargs;		/* positional arguments required */
	bool no_attach;		/* no attach options (trafficgen, status) */
	const struct argp_option *options;
	argp_parser_t parser;	/* gets the xdplab_opts as state->input */
};

/* For subcommands that need more than the common steps. */
struct xdplab_hooks {
	void *ctx;
	/* After load, before attach: fill maps. Non-zero aborts. */
	int (*loaded)(void *ctx, const struct xdplab_opts *o, struct bpf_object *obj);
	/* Once the stats loop has taken its baseline. */
	void (*started)(void *ctx, const struct xdplab_opts *o);
	/* After the last interval, before the closing snapshot: stop what
	 * still produces frames so the summary holds all of them.
	 */
	void (*stopping)(void *ctx, const struct xdplab_opts *o);
	/* Each interval, after the common stats line; dt in seconds. */
	void (*interval)(void *ctx, const struct xdplab_opts *o, double dt);
	/* At exit, after the common summary; secs is the whole run. */
	void (*summary)(void *ctx, const struct xdplab_opts *o, double secs);
};

extern bool xdplab_verbose;
extern volatile int xdplab_exiting;

void xdplab_opts_init(struct xdplab_opts *o);
/* Parses argv for subcommand d into o; returns 0 or exits with status 2. */
int xdplab_parse_cmd(const struct xdplab_cmd_desc *d, int argc, char **argv,
		     struct xdplab_opts *o);
/* A bad command line, from an option parser: "xdplab CMD: <what> (hint:
 * ...)" on one line (hint NULL: point at --help), then exit status 2.
 */
void xdplab_usage_err(struct argp_state *state, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
/* For an option that takes one value: a second one is an error, not a
 * silent override. name is what the user typed it as ("--port").
 */
void xdplab_opt_once(struct argp_state *state, int key, const char *name);
/* One-line error: "xdplab: <what>" and, if hint, "(hint: ...)". Returns 1. */
int xdplab_err(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets up logging and SIGINT/SIGTERM; call once from main(). */
void xdplab_init(void);

/* Resolves o->ifname and checks privileges, BTF, the interface, what is
 * attached already, and the pin directory. Non-zero after printing why.
 */
int xdplab_preflight(struct xdplab_opts *o);
/* The parts of it: privileges and BTF; the interface exists and is up. */
int xdplab_check_env(const struct xdplab_opts *o);
int xdplab_check_iface(struct xdplab_opts *o);
/* Open options carrying --btf. */
const struct bpf_object_open_opts *xdplab_open_opts(const struct xdplab_opts *o);
/* Chooses the frags or linear program (o->frags resolved), turns off
 * autoload of the other one; NULL after printing why. A GSO-preserving
 * frags program also asks for GSO superframes (BPF_F_XDP_GSO, noted in
 * o->cfg.gso_opt_in) where the kernel offers it, unless --no-gso: copy
 * o->cfg into .rodata after this call.
 */
struct bpf_program *xdplab_pick_prog(struct xdplab_opts *o, struct bpf_object *obj,
				     struct bpf_program *linear, struct bpf_program *frags);
/* Explains a failed skeleton load. Returns 1. */
int xdplab_load_err(const char *what, int err);
/* Attaches prog, prints stats from the xdp_stats map every interval until
 * the duration ends or a signal comes, prints a summary, and detaches
 * (unless keep/pin). Returns the exit code.
 */
int xdplab_run(struct xdplab_opts *o, struct bpf_object *obj, struct bpf_program *prog,
	       struct bpf_map *stats, const struct xdplab_hooks *hooks);

/* Prints a stats line every interval until the duration ends or
 * xdplab_exiting, then the summary. xdplab_run calls it once attached.
 */
void xdplab_stats_loop(const struct xdplab_opts *o, const char *name, struct bpf_map *stats,
		       const struct xdplab_hooks *hooks);
/* Sums a per-CPU map slot of `size`-byte records made of __u64 fields. */
int xdplab_percpu_sum(const struct bpf_map *map, __u32 key, void *out, size_t size);
/* The kernel's ifindex for name, or a printed error and 0. */
int xdplab_ifindex(const char *name, const char *role);
/* Is this function tagged XDPLAB_GSO_PRESERVING in prog's BTF? */
bool xdplab_prog_gso_preserving(int prog_fd);
/* Was the loaded program prog_fd given BPF_F_XDP_GSO by xdplab? 1 or 0;
 * -1 when it is not an xdplab program (no cfg in its .rodata).
 */
int xdplab_prog_gso_opt_in(int prog_fd);
/* Does the running kernel have bpf_xdp_gso_state() (the veth GSO series),
 * with which a frags program counts a superframe as gso_segs packets?
 */
bool xdplab_kernel_has_gso_state(void);
/* Does the loaded program prog_fd count packets as GSO segments (its cfg
 * says the kernel has the kfunc)? 1 or 0; -1 when it is no xdplab program.
 */
int xdplab_prog_count_segs(int prog_fd);
double xdplab_now(void);
/* Sleeps until t (CLOCK_MONOTONIC seconds) or a signal. */
void xdplab_sleep_until(double t);
/* Parses an XDP verdict name (aborted, drop, pass, tx, redirect). */
int xdplab_parse_action(const char *s);
const char *xdplab_action_name(int action);

/*
 * The whole life of a program whose skeleton is SKEL (e.g. xdp_pass_bpf)
 * with entry points PROG and PROG_frags: preflight, open, pick, set rodata,
 * load, run, destroy. Evaluates to the exit code. A macro because every
 * skeleton is its own type.
 */
#define XDPLAB_SKEL_RUN(o, SKEL, PROG, hooks) ({				\
	struct SKEL *__s = NULL;					\
	struct bpf_program *__p;					\
	int __ret = 1, __err;						\
									\
	if (!xdplab_preflight(o)) {					\
		__s = SKEL##__open_opts(xdplab_open_opts(o));		\
		if (!__s) {						\
			__ret = xdplab_load_err(#PROG, -errno);		\
		} else {						\
			__p = xdplab_pick_prog(o, __s->obj, __s->progs.PROG,	\
					       __s->progs.PROG##_frags); \
			__s->rodata->cfg = (o)->cfg;			\
			if (__p) {					\
				__err = SKEL##__load(__s);		\
				__ret = __err ? xdplab_load_err(#PROG, __err) : \
					xdplab_run(o, __s->obj, __p,	\
						   __s->maps.xdp_stats, hooks); \
			}						\
		}							\
	}								\
	SKEL##__destroy(__s);						\
	__ret;								\
})

#endif
