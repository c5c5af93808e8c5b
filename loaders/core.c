// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "core.h"
#include "xdp_probe.h"

#define BPF_FS_MAGIC 0xcafe4a11

bool xdplab_verbose;
volatile int xdplab_exiting;

/* libbpf reports the kernel's netlink extack as a warning; keep the last
 * one so an attach error can quote the kernel's own reason.
 */
static char kernel_msg[256];

enum {
	OPT_FRAGS = 0x100, OPT_NO_FRAGS, OPT_NO_GSO, OPT_KEEP, OPT_PIN, OPT_BTF,
	OPT_PROTO, OPT_PORT, OPT_IPVER, OPT_COUNT_PROTO,
};

static const struct argp_option common_options[] = {
	{ NULL, 0, NULL, 0, "Attaching:", 1 },
	{ "mode", 'm', "MODE", 0, "native (default) or skb (generic XDP)", 1 },
	{ "frags", OPT_FRAGS, NULL, 0, "load the multi-buffer (xdp.frags) program", 1 },
	{ "no-frags", OPT_NO_FRAGS, NULL, 0, "load the linear-only program", 1 },
	{ "no-gso", OPT_NO_GSO, NULL, 0, "do not ask for GSO superframes whole (BPF_F_XDP_GSO, "
	  "a kernel with the veth GSO series): the program sees segments, as on stock", 1 },
	{ "keep", OPT_KEEP, NULL, 0, "leave the program attached at exit", 1 },
	{ "pin", OPT_PIN, "DIR", 0, "pin program and maps under DIR on bpffs (implies --keep)", 1 },
	{ "btf", OPT_BTF, "FILE", 0, "kernel BTF to use instead of /sys/kernel/btf/vmlinux", 1 },
	{ NULL, 0, NULL, 0, "Matching (other frames are passed untouched):", 2 },
	{ "proto", OPT_PROTO, "PROTO", 0, "tcp, udp or icmp", 2 },
	{ "port", OPT_PORT, "PORT", 0, "TCP or UDP destination port (not with --proto icmp)", 2 },
	{ "ip", OPT_IPVER, "4|6", 0, "the IP version to match, 4 or 6 (not an address)", 2 },
	{ "count-proto", OPT_COUNT_PROTO, NULL, 0, "parse every frame, even without a filter: "
	  "count malformed frames, and L4 protocols in the xdp_proto map (costs more a frame)", 2 },
	{},
};

static const struct argp_option output_options[] = {
	{ NULL, 0, NULL, 0, "Output:", 3 },
	{ "interval", 'i', "SECS", 0, "seconds between stats lines (default 1)", 3 },
	{ "duration", 'd', "SECS", 0, "stop after SECS (default: at Ctrl-C)", 3 },
	{ "json", 'j', NULL, 0, "one JSON object a line", 3 },
	{ "quiet", 'q', NULL, 0, "no per-interval lines, only the summary", 3 },
	{ "verbose", 'v', NULL, 0, "libbpf debug output (verifier log on errors)", 3 },
	{},
};

void xdplab_usage_err(struct argp_state *state, const char *hint, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", state->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (hint)
		fprintf(stderr, " (hint: %s)\n", hint);
	else
		fprintf(stderr, " (hint: %s --help)\n", state->name);
	exit(2);
}

void xdplab_opt_once(struct argp_state *state, int key, const char *name)
{
	struct xdplab_opts *o = state->input;

	for (int i = 0; i < o->nseen; i++)
		if (o->seen[i] == key)
			xdplab_usage_err(state, "give each option once",
					 "%s given more than once", name);
	if (o->nseen < (int)(sizeof(o->seen) / sizeof(o->seen[0])))
		o->seen[o->nseen++] = key;
}

static double parse_secs(const char *arg, struct argp_state *state)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || !*arg || !(v >= 0) || v > 1e7)
		xdplab_usage_err(state, "a number such as 10 or 0.5",
				 "'%s' is not a number of seconds", arg);
	return v;
}

static error_t common_parse(int key, char *arg, struct argp_state *state)
{
	struct xdplab_opts *o = state->input;
	char *end;
	long v;

	switch (key) {
	case 'm':
		xdplab_opt_once(state, key, "--mode");
		if (!strcmp(arg, "native") || !strcmp(arg, "drv"))
			o->xdp_flags = XDP_FLAGS_DRV_MODE;
		else if (!strcmp(arg, "skb") || !strcmp(arg, "generic"))
			o->xdp_flags = XDP_FLAGS_SKB_MODE;
		else
			xdplab_usage_err(state, "--mode native or --mode skb",
					 "unknown mode '%s'", arg);
		break;
	case OPT_FRAGS:
	case OPT_NO_FRAGS:
		if (o->frags != FRAGS_AUTO && o->frags != (key == OPT_FRAGS ? FRAGS_ON : FRAGS_OFF))
			xdplab_usage_err(state, "give one of them", "--frags and --no-frags contradict each other");
		o->frags = key == OPT_FRAGS ? FRAGS_ON : FRAGS_OFF;
		break;
	case OPT_NO_GSO:
		o->no_gso = true;
		break;
	case OPT_KEEP:
		o->keep = true;
		break;
	case OPT_PIN:
		xdplab_opt_once(state, key, "--pin");
		o->pin_dir = arg;
		o->keep = true;
		break;
	case OPT_BTF:
		xdplab_opt_once(state, key, "--btf");
		o->btf_path = arg;
		break;
	case OPT_PROTO:
		xdplab_opt_once(state, key, "--proto");
		if (!strcmp(arg, "tcp"))
			o->cfg.match_l4 = XDPLAB_L4_TCP;
		else if (!strcmp(arg, "udp"))
			o->cfg.match_l4 = XDPLAB_L4_UDP;
		else if (!strcmp(arg, "icmp"))
			o->cfg.match_l4 = XDPLAB_L4_ICMP;
		else
			xdplab_usage_err(state, "--proto tcp, udp or icmp",
					 "unknown protocol '%s'", arg);
		break;
	case OPT_PORT:
		xdplab_opt_once(state, key, "--port");
		v = strtol(arg, &end, 0);
		if (*end || !*arg || v < 1 || v > 65535)
			xdplab_usage_err(state, "a TCP or UDP port, 1 to 65535",
					 "'%s' is not a port", arg);
		o->cfg.match_dport = v;
		break;
	case OPT_IPVER:
		xdplab_opt_once(state, key, "--ip");
		if (strcmp(arg, "4") && strcmp(arg, "6"))
			xdplab_usage_err(state, "--ip 4 or --ip 6 matches the IP version; "
					 "addresses are not matched",
					 "--ip takes the IP version, not '%s'", arg);
		o->cfg.match_ipver = arg[0] - '0';
		break;
	case OPT_COUNT_PROTO:
		o->cfg.count_proto = 1;
		break;
	case 'i':
		xdplab_opt_once(state, key, "--interval");
		o->interval = parse_secs(arg, state);
		if (o->interval < 0.1)
			xdplab_usage_err(state, "-i 0.1 or more",
					 "the interval must be at least 0.1 s");
		break;
	case 'd':
		xdplab_opt_once(state, key, "--duration");
		o->duration = parse_secs(arg, state);
		break;
	case 'j':
		o->json = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'v':
		xdplab_verbose = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp attach_argp = { .options = common_options, .parser = common_parse };
static const struct argp output_argp = { .options = output_options, .parser = common_parse };

static error_t cmd_parse(int key, char *arg, struct argp_state *state)
{
	struct xdplab_opts *o = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		for (int i = 0; i < 3; i++)
			state->child_inputs[i] = o;
		return 0;
	case ARGP_KEY_ARG:
		if (o->nargs >= (int)(sizeof(o->args) / sizeof(o->args[0])))
			xdplab_usage_err(state, NULL, "too many arguments ('%s')", arg);
		o->args[o->nargs++] = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int xdplab_parse_cmd(const struct xdplab_cmd_desc *d, int argc, char **argv,
		     struct xdplab_opts *o)
{
	const struct argp own = { .options = d->options, .parser = d->parser };
	struct argp_child children[4] = {};
	struct argp argp = {
		.parser = cmd_parse,
		.args_doc = d->args_doc,
		.doc = d->doc,
		.children = children,
	};
	char prog[64];
	int n = 0;

	if (d->options)
		children[n++] = (struct argp_child){ &own, 0, NULL, 0 };
	if (!d->no_attach)
		children[n++] = (struct argp_child){ &attach_argp, 0, NULL, 0 };
	children[n++] = (struct argp_child){ &output_argp, 0, NULL, 0 };
	argp_err_exit_status = 2;
	snprintf(prog, sizeof(prog), "xdplab %s", d->name);
	argv[0] = prog;
	argp_parse(&argp, argc, argv, 0, NULL, o);
	if (o->nargs < d->nargs) {
		fprintf(stderr, "xdplab %s: expected %s (hint: xdplab %s --help)\n",
			d->name, d->args_doc, d->name);
		exit(2);
	}
	/* ICMP has no ports: such a filter would match nothing, silently. */
	if (o->cfg.match_l4 == XDPLAB_L4_ICMP && o->cfg.match_dport) {
		fprintf(stderr, "xdplab %s: --port matches TCP and UDP destination ports; ICMP has"
			" none (hint: drop --port, or use --proto tcp or udp)\n", d->name);
		exit(2);
	}
	o->ifname = o->args[0];
	return 0;
}

void xdplab_opts_init(struct xdplab_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->xdp_flags = XDP_FLAGS_DRV_MODE;
	o->frags = FRAGS_AUTO;
	o->interval = 1;
}

int xdplab_err(const char *hint, const char *fmt, ...)
{
	va_list ap;

	fputs("xdplab: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (hint)
		fprintf(stderr, " (hint: %s)", hint);
	fputc('\n', stderr);
	return 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN) {
		char line[512], *m;
		va_list cp;

		va_copy(cp, ap);
		vsnprintf(line, sizeof(line), fmt, cp);
		va_end(cp);
		m = strstr(line, "Kernel error message: ");
		if (m) {
			snprintf(kernel_msg, sizeof(kernel_msg), "%s",
				 m + strlen("Kernel error message: "));
			kernel_msg[strcspn(kernel_msg, "\n")] = '\0';
		}
	}
	/* Without -v, errors are explained by xdplab's own one-liners. */
	if (!xdplab_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void on_signal(int sig)
{
	(void)sig;
	xdplab_exiting = 1;
}

void xdplab_init(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	libbpf_set_print(libbpf_print);
	/* No SA_RESTART: a signal must cut a sleep short. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

double xdplab_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void xdplab_sleep_until(double t)
{
	double left;

	while (!xdplab_exiting && (left = t - xdplab_now()) > 0) {
		struct timespec ts = { (time_t)left, (long)((left - (time_t)left) * 1e9) };

		if (nanosleep(&ts, NULL) && errno != EINTR)
			break;
	}
}

static const char *const action_names[] = { "aborted", "drop", "pass", "tx", "redirect" };

int xdplab_parse_action(const char *s)
{
	for (int i = 0; i <= XDP_REDIRECT; i++)
		if (!strcmp(s, action_names[i]))
			return i;
	return -1;
}

const char *xdplab_action_name(int action)
{
	return action >= 0 && action <= XDP_REDIRECT ? action_names[action] : "?";
}

static bool has_cap(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

int xdplab_ifindex(const char *name, const char *role)
{
	int idx;

	if (!name || !*name) {
		xdplab_err("see xdplab --help", "no %s%sinterface given", role, *role ? " " : "");
		return 0;
	}
	idx = if_nametoindex(name);
	if (!idx)
		xdplab_err("'ip link' lists the interfaces of this network namespace",
			   "unknown %s%sinterface '%s'", role, *role ? " " : "", name);
	return idx;
}

static int if_ioctl(const char *name, unsigned long req, struct ifreq *ifr)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err;

	if (s < 0)
		return -errno;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
	err = ioctl(s, req, ifr) ? -errno : 0;
	close(s);
	return err;
}

/* The series' kfunc that tells a program a superframe's gso_segs (progs/
 * parse.bpf.h, xdplab_gso_segs()): a function in the kernel's BTF. libbpf
 * resolves the programs' weak reference the same way. Where it is, does
 * it answer in generic XDP too (v6 of the series, which also names its
 * gso_type bits: enum xdp_gso_type)? v5's answered on veth only.
 */
enum { GSO_STATE_NONE, GSO_STATE_NATIVE, GSO_STATE_NATIVE_AND_SKB };

static int kernel_gso_state(void)
{
	static int cached = -1;
	struct btf *btf;

	if (cached >= 0)
		return cached;
	btf = btf__load_vmlinux_btf();
	cached = !btf || btf__find_by_name_kind(btf, "bpf_xdp_gso_state", BTF_KIND_FUNC) <= 0 ?
		 GSO_STATE_NONE :
		 btf__find_by_name_kind(btf, "xdp_gso_type", BTF_KIND_ENUM) > 0 ?
		 GSO_STATE_NATIVE_AND_SKB : GSO_STATE_NATIVE;
	btf__free(btf);
	return cached;
}

bool xdplab_kernel_has_gso_state(void)
{
	return kernel_gso_state() != GSO_STATE_NONE;
}

static void prog_describe(__u32 id, char *buf, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &ilen))
		snprintf(buf, len, "'%s' (id %u)", info.name, id);
	else
		snprintf(buf, len, "id %u", id);
	if (fd >= 0)
		close(fd);
}

int xdplab_check_env(const struct xdplab_opts *o)
{
	if (!has_cap(CAP_NET_ADMIN) || (!has_cap(CAP_BPF) && !has_cap(CAP_SYS_ADMIN)))
		return xdplab_err("run as root, or with CAP_BPF and CAP_NET_ADMIN",
				  "not enough privileges to load and attach XDP programs");
	if (o->btf_path ? access(o->btf_path, R_OK) : access("/sys/kernel/btf/vmlinux", R_OK))
		return xdplab_err(o->btf_path ? "give a readable BTF file with --btf" :
				  "the kernel needs CONFIG_DEBUG_INFO_BTF=y, or give one with --btf",
				  "no kernel BTF at %s: CO-RE programs cannot be relocated",
				  o->btf_path ?: "/sys/kernel/btf/vmlinux");
	return 0;
}

int xdplab_check_iface(struct xdplab_opts *o)
{
	struct ifreq ifr;

	o->ifindex = xdplab_ifindex(o->ifname, "");
	if (!o->ifindex)
		return 1;
	if (!if_ioctl(o->ifname, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP))
		return xdplab_err("ip link set dev IFNAME up", "interface %s is down", o->ifname);
	return 0;
}

int xdplab_preflight(struct xdplab_opts *o)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct statfs st;
	char who[128];
	int err;

	if (xdplab_check_env(o) || xdplab_check_iface(o))
		return 1;
	err = bpf_xdp_query(o->ifindex, 0, &q);
	if (!err && q.attach_mode != XDP_ATTACHED_NONE) {
		prog_describe(q.prog_id ?: q.drv_prog_id ?: q.skb_prog_id ?: q.hw_prog_id,
			      who, sizeof(who));
		return xdplab_err("see 'xdplab status'; 'ip link set dev IFNAME xdp off' removes it",
				  "interface %s already has XDP program %s attached",
				  o->ifname, who);
	}

	if (o->pin_dir) {
		if (statfs(o->pin_dir, &st))
			return xdplab_err("mkdir it on a bpffs mount (mount -t bpf bpf /sys/fs/bpf)",
					  "pin directory %s: %s", o->pin_dir, strerror(errno));
		if (st.f_type != BPF_FS_MAGIC)
			return xdplab_err("mount -t bpf bpf /sys/fs/bpf and pin below it",
					  "pin directory %s is not on a bpffs", o->pin_dir);
	}
	return 0;
}

const struct bpf_object_open_opts *xdplab_open_opts(const struct xdplab_opts *o)
{
	static struct bpf_object_open_opts opts;

	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.btf_custom_path = o->btf_path;
	return &opts;
}

/* The largest MTU a linear-only program can take on 4K pages: a page less
 * XDP headroom, skb_shared_info and the Ethernet header. Drivers differ a
 * little; this is veth's figure, close to the others'.
 */
#define LINEAR_MTU_MAX (4096 - 256 - 320 - 14 - 8)

static bool btf_prog_tagged_gso(const struct bpf_object *obj, const struct bpf_program *prog);

struct bpf_program *xdplab_pick_prog(struct xdplab_opts *o, struct bpf_object *obj,
				     struct bpf_program *linear, struct bpf_program *frags)
{
	bool kernel_frags = xdplab_kernel_has_frags();
	struct ifreq ifr;
	int mtu = 0;

	if (!if_ioctl(o->ifname, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;

	if (o->frags == FRAGS_AUTO)
		o->frags = frags && kernel_frags ? FRAGS_ON : FRAGS_OFF;
	if (o->frags == FRAGS_ON && !frags) {
		xdplab_err("drop --frags", "this program has no multi-buffer variant");
		return NULL;
	}
	if (o->frags == FRAGS_ON && !kernel_frags) {
		xdplab_err("multi-buffer XDP needs Linux 5.18 or later; use --no-frags",
			   "the running kernel does not accept xdp.frags programs");
		return NULL;
	}
	if (o->frags == FRAGS_OFF && mtu > LINEAR_MTU_MAX &&
	    o->xdp_flags & XDP_FLAGS_DRV_MODE) {
		xdplab_err(kernel_frags ? "drop --no-frags, or lower the MTU" :
			   "lower the MTU (this kernel has no multi-buffer XDP)",
			   "MTU %d of %s is too large for a program without frags support (at most %d)",
			   mtu, o->ifname, LINEAR_MTU_MAX);
		return NULL;
	}
	if (linear)
		bpf_program__set_autoload(linear, o->frags == FRAGS_OFF);
	if (frags)
		bpf_program__set_autoload(frags, o->frags == FRAGS_ON);
	/* Only a program that keeps its promise (XDPLAB_GSO_PRESERVING) asks
	 * for superframes: a frame it changed could not be segmented again.
	 */
	o->cfg.gso_opt_in = o->frags == FRAGS_ON && !o->no_gso && btf_prog_tagged_gso(obj, frags) &&
			    xdplab_kernel_has_xdp_gso();
	if (o->cfg.gso_opt_in)
		bpf_program__set_flags(frags, bpf_program__flags(frags) | BPF_F_XDP_GSO);
	/* What the program will do with the kfunc (it asks only when opted
	 * in, and only where the kernel has it: bpf_ksym_exists()); noted
	 * for status. Generic XDP hands superframes to frags programs too;
	 * where the kfunc does not answer there (v5), a packet is a frame.
	 */
	o->cfg.count_segs = o->cfg.gso_opt_in &&
			    kernel_gso_state() >= (o->xdp_flags & XDP_FLAGS_SKB_MODE ?
						   GSO_STATE_NATIVE_AND_SKB : GSO_STATE_NATIVE);
	return o->frags == FRAGS_ON ? frags : linear;
}

int xdplab_load_err(const char *what, int err)
{
	if (err == -EPERM || err == -EACCES)
		return xdplab_err("run as root, or with CAP_BPF and CAP_NET_ADMIN",
				  "loading %s: permission denied", what);
	return xdplab_err(xdplab_verbose ? NULL : "-v shows libbpf's log and the verifier's",
			  "cannot load %s: %s", what, strerror(-err));
}

int xdplab_percpu_sum(const struct bpf_map *map, __u32 key, void *out, size_t size)
{
	int ncpu = libbpf_num_possible_cpus();
	size_t n = size / sizeof(__u64), vsz = bpf_map__value_size(map);
	__u64 *vals, *sum = out;
	int err;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc(ncpu, vsz);
	if (!vals)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(map), &key, vals);
	memset(out, 0, size);
	for (int c = 0; !err && c < ncpu; c++)
		for (size_t i = 0; i < n; i++)
			sum[i] += vals[c * (vsz / sizeof(__u64)) + i];
	free(vals);
	return err;
}

/* Is func_id tagged "xdplab:gso_preserving" (XDPLAB_GSO_PRESERVING)? */
static bool btf_func_tagged_gso(const struct btf *btf, __u32 func_id)
{
	for (__u32 id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_is_decl_tag(t) && t->type == func_id &&
		    btf_decl_tag(t)->component_idx == -1 &&
		    !strcmp(btf__name_by_offset(btf, t->name_off), "xdplab:gso_preserving"))
			return true;
	}
	return false;
}

/* The same, before load, from the object's own BTF. */
static bool btf_prog_tagged_gso(const struct bpf_object *obj, const struct bpf_program *prog)
{
	const struct btf *btf;
	int id;

	if (!prog)
		return false;
	btf = bpf_object__btf(obj);
	id = btf ? btf__find_by_name_kind(btf, bpf_program__name(prog), BTF_KIND_FUNC) : -1;
	return id > 0 && btf_func_tagged_gso(btf, id);
}

bool xdplab_prog_gso_preserving(int prog_fd)
{
	struct bpf_prog_info info = {};
	struct bpf_func_info func = {};
	__u32 len = sizeof(info), btf_id;
	struct btf *btf;
	bool tagged;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) || !info.btf_id || !info.nr_func_info)
		return false;
	/* The entry point is the first func_info record (instruction 0). Not
	 * the name: the kernel cuts it to 15 characters, and "xdp_drop" is
	 * also the start of "xdp_drop_frags".
	 */
	btf_id = info.btf_id;
	memset(&info, 0, sizeof(info));
	info.nr_func_info = 1;
	info.func_info_rec_size = sizeof(func);
	info.func_info = (__u64)(unsigned long)&func;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) || !func.type_id)
		return false;
	btf = btf__load_from_kernel_by_id(btf_id);
	if (!btf)
		return false;
	tagged = btf_func_tagged_gso(btf, func.type_id);
	btf__free(btf);
	return tagged;
}

/* cfg from one map, if it is an xdplab .rodata: 0, or -1 if not. */
static int rodata_cfg(int map_fd, struct xdplab_cfg *out)
{
	struct bpf_map_info m = {};
	__u32 len = sizeof(m), zero = 0;
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct btf *btf = NULL;
	void *val = NULL;
	int ret = -1;

	if (bpf_obj_get_info_by_fd(map_fd, &m, &len) || m.type != BPF_MAP_TYPE_ARRAY ||
	    m.max_entries != 1 || !m.btf_id || !strstr(m.name, ".rodata"))
		return -1;
	btf = btf__load_from_kernel_by_id(m.btf_id);
	sec = btf ? btf__type_by_id(btf, m.btf_value_type_id) : NULL;
	if (!sec || !btf_is_datasec(sec))
		goto out;
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, v->name_off), "cfg") ||
		    vs->size != sizeof(*out) || vs->offset + sizeof(*out) > m.value_size)
			continue;
		val = malloc(m.value_size);
		if (val && !bpf_map_lookup_elem(map_fd, &zero, val)) {
			memcpy(out, (char *)val + vs->offset, sizeof(*out));
			ret = 0;
		}
		break;
	}
out:
	free(val);
	btf__free(btf);
	return ret;
}

/* The cfg in prog_fd's .rodata: 0, or -1 when it is no xdplab program. */
static int prog_cfg(int prog_fd, struct xdplab_cfg *cfg)
{
	struct bpf_prog_info info = {};
	__u32 ids[16], len = sizeof(info);
	int ret = -1;

	info.nr_map_ids = 16;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -1;
	for (__u32 i = 0; i < info.nr_map_ids && i < 16 && ret < 0; i++) {
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		ret = rodata_cfg(fd, cfg);
		close(fd);
	}
	return ret;
}

int xdplab_prog_gso_opt_in(int prog_fd)
{
	struct xdplab_cfg cfg;

	return prog_cfg(prog_fd, &cfg) ? -1 : !!cfg.gso_opt_in;
}

int xdplab_prog_count_segs(int prog_fd)
{
	struct xdplab_cfg cfg;

	return prog_cfg(prog_fd, &cfg) ? -1 : !!cfg.count_segs;
}

/* ---- stats ---- */

struct snapshot {
	struct xdplab_datarec rec[XDPLAB_STAT_MAX];
	double t;
};

static void snap(const struct bpf_map *stats, struct snapshot *s)
{
	for (__u32 i = 0; i < XDPLAB_STAT_MAX; i++)
		xdplab_percpu_sum(stats, i, &s->rec[i], sizeof(s->rec[i]));
	s->t = xdplab_now();
}

/* Totals over the verdict slots (not MALFORMED, which double counts). */
static struct xdplab_datarec rx_total(const struct snapshot *s)
{
	struct xdplab_datarec r = {};

	for (int i = 0; i <= XDP_REDIRECT; i++) {
		r.packets += s->rec[i].packets;
		r.bytes += s->rec[i].bytes;
		r.mb_packets += s->rec[i].mb_packets;
		r.frames += s->rec[i].frames;
	}
	return r;
}

#define D(f) ((double)(cur->f - prev->f) / dt)

static void print_interval(const struct xdplab_opts *o, const struct snapshot *prev,
			   const struct snapshot *cur, bool header)
{
	struct xdplab_datarec a = rx_total(prev), b = rx_total(cur);
	double dt = cur->t - prev->t;
	double rx = (b.packets - a.packets) / dt, bits = (b.bytes - a.bytes) * 8 / dt;
	double mb = (b.mb_packets - a.mb_packets) / dt;

	if (o->json) {
		printf("{\"ifname\":\"%s\",\"interval\":%.3f,\"rx_pps\":%.0f,\"pass_pps\":%.0f,"
		       "\"drop_pps\":%.0f,\"tx_pps\":%.0f,\"redirect_pps\":%.0f,"
		       "\"error_pps\":%.0f,\"malformed_pps\":%.0f,\"mb_pps\":%.0f,\"rx_bps\":%.0f}\n",
		       o->ifname, dt, rx, D(rec[XDP_PASS].packets), D(rec[XDP_DROP].packets),
		       D(rec[XDP_TX].packets), D(rec[XDP_REDIRECT].packets),
		       D(rec[XDP_ABORTED].packets), D(rec[XDPLAB_STAT_MALFORMED].packets), mb, bits);
		return;
	}
	if (header)
		printf("%-10s %11s %11s %11s %11s %11s %9s %9s %10s\n", "ifname", "rx/s",
		       "pass/s", "drop/s", "tx/s", "redir/s", "err/s", "mb/s", "Mbit/s");
	printf("%-10s %11.0f %11.0f %11.0f %11.0f %11.0f %9.0f %9.0f %10.1f\n", o->ifname, rx,
	       D(rec[XDP_PASS].packets), D(rec[XDP_DROP].packets), D(rec[XDP_TX].packets),
	       D(rec[XDP_REDIRECT].packets), D(rec[XDP_ABORTED].packets), mb, bits / 1e6);
}

static const char *mode_name(const struct xdplab_opts *o)
{
	if (o->xdp_flags & XDP_FLAGS_SKB_MODE)
		return "skb";
	return o->xdp_flags & XDP_FLAGS_DRV_MODE ? "native" : "not attached";
}

/* The filter the program was loaded with (cfg.match_*), in words:
 * "IPv6 udp port 9", "tcp or udp port 53", or "every frame".
 */
static void filter_text(const struct xdplab_cfg *c, char *buf, size_t len)
{
	static const char *const l4[] = { "", "tcp", "udp", "icmp" };
	int n = 0;

	if (!c->match_ipver && !c->match_l4 && !c->match_dport) {
		snprintf(buf, len, "every frame");
		return;
	}
	buf[0] = '\0';
	if (c->match_ipver)
		n += snprintf(buf + n, len - n, "IPv%u", c->match_ipver);
	if (c->match_l4 < XDPLAB_L4_MAX && (c->match_l4 || c->match_dport))
		n += snprintf(buf + n, len - n, "%s%s", n ? " " : "",
			      c->match_l4 ? l4[c->match_l4] : "tcp or udp");
	if (c->match_dport)
		snprintf(buf + n, len - n, " port %u", c->match_dport);
}

/* The same as a JSON object; null where the filter does not look. */
static void filter_json(const struct xdplab_cfg *c, char *buf, size_t len)
{
	static const char *const l4[] = { "null", "\"tcp\"", "\"udp\"", "\"icmp\"" };
	char port[8] = "null", ip[8] = "null";

	if (c->match_dport)
		snprintf(port, sizeof(port), "%u", c->match_dport);
	if (c->match_ipver)
		snprintf(ip, sizeof(ip), "%u", c->match_ipver);
	snprintf(buf, len, "{\"proto\":%s,\"port\":%s,\"ip\":%s}",
		 c->match_l4 < XDPLAB_L4_MAX ? l4[c->match_l4] : "null", port, ip);
}

static void print_summary(const struct xdplab_opts *o, const char *prog_name,
			  const struct snapshot *first, const struct snapshot *last)
{
	struct xdplab_datarec a = rx_total(first), b = rx_total(last);
	double secs = last->t - first->t;
	__u64 n[XDPLAB_STAT_MAX];
	char filter[96] = "", fjson[96] = "";

	/* Programs that attach have a filter; the generator has none. */
	if (o->xdp_flags) {
		filter_text(&o->cfg, filter + 11, sizeof(filter) - 11);
		memcpy(filter, ", matching ", 11);
		filter_json(&o->cfg, fjson + 10, sizeof(fjson) - 10);
		memcpy(fjson, ",\"filter\":", 10);
	}
	for (int i = 0; i < XDPLAB_STAT_MAX; i++)
		n[i] = last->rec[i].packets - first->rec[i].packets;
	if (secs <= 0)
		secs = 1e-9;
	if (o->json) {
		printf("{\"summary\":true,\"ifname\":\"%s\",\"prog\":\"%s\",\"mode\":\"%s\","
		       "\"frags\":%s%s,\"seconds\":%.3f,\"rx_packets\":%llu,\"rx_bytes\":%llu,"
		       "\"pass\":%llu,\"drop\":%llu,\"tx\":%llu,\"redirect\":%llu,\"aborted\":%llu,"
		       "\"malformed\":%llu,\"mb_packets\":%llu,\"rx_frames\":%llu,"
		       "\"counts\":\"%s\",\"rx_pps\":%.0f}\n",
		       o->ifname, prog_name, mode_name(o),
		       o->frags == FRAGS_ON ? "true" : "false", fjson, secs,
		       (unsigned long long)(b.packets - a.packets),
		       (unsigned long long)(b.bytes - a.bytes),
		       (unsigned long long)n[XDP_PASS], (unsigned long long)n[XDP_DROP],
		       (unsigned long long)n[XDP_TX], (unsigned long long)n[XDP_REDIRECT],
		       (unsigned long long)n[XDP_ABORTED],
		       (unsigned long long)n[XDPLAB_STAT_MALFORMED],
		       (unsigned long long)(b.mb_packets - a.mb_packets),
		       (unsigned long long)(b.frames - a.frames),
		       o->cfg.count_segs ? "segments" : "frames",
		       (b.packets - a.packets) / secs);
		return;
	}
	printf("Summary: %s on %s (%s%s)%s, %.1f s: %llu packets (%.0f/s), %.2f MB;"
	       " pass %llu, drop %llu, tx %llu, redirect %llu, aborted %llu,"
	       " malformed %llu, multi-buffer %llu\n",
	       prog_name, o->ifname, mode_name(o), o->frags == FRAGS_ON ? ", frags" : "", filter,
	       secs,
	       (unsigned long long)(b.packets - a.packets), (b.packets - a.packets) / secs,
	       (b.bytes - a.bytes) / 1e6, (unsigned long long)n[XDP_PASS],
	       (unsigned long long)n[XDP_DROP], (unsigned long long)n[XDP_TX],
	       (unsigned long long)n[XDP_REDIRECT], (unsigned long long)n[XDP_ABORTED],
	       (unsigned long long)n[XDPLAB_STAT_MALFORMED],
	       (unsigned long long)(b.mb_packets - a.mb_packets));
}

/* ---- attach / detach ---- */

static const char *attach_hint(int err, const struct xdplab_opts *o)
{
	switch (err) {
	case -EOPNOTSUPP:
		if (o->xdp_flags & XDP_FLAGS_DRV_MODE)
			return "the driver may have no native XDP: try --mode skb";
		return NULL;
	case -EBUSY:
	case -EEXIST:
		return "another XDP program is attached: see 'xdplab status'";
	case -ERANGE:
	case -E2BIG:
		return "the MTU is too large for this program: try --frags or a smaller MTU";
	case -EPERM:
		return "run as root, or with CAP_BPF and CAP_NET_ADMIN";
	default:
		return NULL;
	}
}

static int pin_all(const struct xdplab_opts *o, struct bpf_object *obj,
		   struct bpf_program *prog)
{
	char path[512];
	int err;

	snprintf(path, sizeof(path), "%s/%s", o->pin_dir, bpf_program__name(prog));
	err = bpf_program__pin(prog, path);
	if (!err)
		err = bpf_object__pin_maps(obj, o->pin_dir);
	if (err) {
		bpf_program__unpin(prog, path);
		bpf_object__unpin_maps(obj, o->pin_dir);
		return xdplab_err("remove stale pins under the directory, or pick another",
				  "cannot pin under %s: %s", o->pin_dir, strerror(-err));
	}
	return 0;
}

int xdplab_run(struct xdplab_opts *o, struct bpf_object *obj, struct bpf_program *prog,
	       struct bpf_map *stats, const struct xdplab_hooks *hooks)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, detach_opts);
	const char *name = bpf_program__name(prog);
	int fd = bpf_program__fd(prog), err, ret = 0;
	char filter[96], fjson[96];

	if (hooks && hooks->loaded &&
	    hooks->loaded(hooks->ctx, o, obj))
		return 1;
	kernel_msg[0] = '\0';
	err = bpf_xdp_attach(o->ifindex, fd, o->xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		const char *hint = attach_hint(err, o);

		if (kernel_msg[0])
			return xdplab_err(hint, "cannot attach %s to %s: %s (%s)", name, o->ifname,
					  kernel_msg, strerror(-err));
		return xdplab_err(hint, "cannot attach %s to %s: %s", name, o->ifname,
				  strerror(-err));
	}
	if (o->pin_dir && pin_all(o, obj, prog)) {
		ret = 1;
		goto detach;
	}
	filter_text(&o->cfg, filter, sizeof(filter));
	if (o->json) {
		/* The event a script waits for instead of polling ip link.
		 * "gso": what the program promises about GSO frames, and
		 * whether it asked for them whole (BPF_F_XDP_GSO).
		 */
		filter_json(&o->cfg, fjson, sizeof(fjson));
		printf("{\"event\":\"attached\",\"ifname\":\"%s\",\"prog\":\"%s\","
		       "\"mode\":\"%s\",\"frags\":%s,\"gso\":{\"preserving\":%s,\"opt_in\":%s},"
		       "\"filter\":%s}\n", o->ifname, name, mode_name(o),
		       o->frags == FRAGS_ON ? "true" : "false",
		       xdplab_prog_gso_preserving(fd) ? "true" : "false",
		       o->cfg.gso_opt_in ? "true" : "false", fjson);
		fflush(stdout);
	} else {
		fprintf(stderr, "%s attached to %s (%s%s)%s%s, matching %s; Ctrl-C to stop\n", name,
			o->ifname, o->xdp_flags & XDP_FLAGS_SKB_MODE ? "skb mode" : "native mode",
			o->frags == FRAGS_ON ? ", frags" : "",
			xdplab_prog_gso_preserving(fd) ? ", GSO-preserving" : "",
			o->cfg.gso_opt_in ? ", takes GSO superframes" : "", filter);
	}
	xdplab_stats_loop(o, name, stats, hooks);
	if (o->keep) {
		fprintf(stderr, "%s stays attached to %s%s%s; remove it with: ip link set dev %s %s off\n",
			name, o->ifname, o->pin_dir ? ", pinned under " : "",
			o->pin_dir ?: "", o->ifname,
			o->xdp_flags & XDP_FLAGS_SKB_MODE ? "xdpgeneric" : "xdpdrv");
		return 0;
	}
detach:
	/* Replace-if-ours: never take down a program someone put there since. */
	detach_opts.old_prog_fd = fd;
	err = bpf_xdp_detach(o->ifindex, o->xdp_flags, &detach_opts);
	if (err && err != -EEXIST)
		xdplab_err("ip link set dev IFNAME xdp off", "detaching from %s failed: %s",
			   o->ifname, strerror(-err));
	return ret;
}

void xdplab_stats_loop(const struct xdplab_opts *o, const char *name, struct bpf_map *stats,
		       const struct xdplab_hooks *hooks)
{
	struct snapshot first, prev, cur;
	int lines = 0;
	double end;

	/* The maps were made at load, so the baseline is zero: frames that came
	 * between attach and this call count too.
	 */
	memset(&first, 0, sizeof(first));
	first.t = xdplab_now();
	prev = first;
	if (hooks && hooks->started)
		hooks->started(hooks->ctx, o);
	end = o->duration > 0 ? first.t + o->duration : 1e300;
	while (!xdplab_exiting && prev.t < end) {
		double next = prev.t + o->interval;

		xdplab_sleep_until(next < end ? next : end);
		snap(stats, &cur);
		if (!o->quiet && (!xdplab_exiting || cur.t - prev.t >= o->interval / 2)) {
			print_interval(o, &prev, &cur, lines++ % 20 == 0);
			if (hooks && hooks->interval)
				hooks->interval(hooks->ctx, o, cur.t - prev.t);
		}
		prev = cur;
	}
	/* A signal may have come before the first interval: the summary must
	 * still hold everything up to now.
	 */
	if (hooks && hooks->stopping)
		hooks->stopping(hooks->ctx, o);
	snap(stats, &cur);
	if (cur.t > prev.t)
		prev = cur;
	print_summary(o, name, &first, &prev);
	if (hooks && hooks->summary)
		hooks->summary(hooks->ctx, o, prev.t - first.t);
	fflush(stdout);
}
