// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "core.h"
#include "xdp_redirect_cpu.skel.h"

struct cpu_opts {
	int cpus[256];
	int ncpus;
	__u32 qsize;
	struct bpf_map *remote_stats;	/* verdicts on the remote CPUs */
};

enum { OPT_QSIZE = 0x200, OPT_CPU_ACTION };

static const struct argp_option options[] = {
	{ "cpu", 'c', "CPU[,CPU...]", 0, "CPUs to spread over (default: all online)", 0 },
	{ "qsize", OPT_QSIZE, "N", 0, "frames queued per CPU (default 2048)", 0 },
	{ "cpu-action", OPT_CPU_ACTION, "pass|drop", 0,
	  "verdict of the program on the remote CPU (default pass)", 0 },
	{},
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	struct xdplab_opts *o = state->input;
	struct cpu_opts *c = o->extra;
	char *tok, *save, *end;
	int act;
	long v;

	switch (key) {
	case 'c':
		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			v = strtol(tok, &end, 10);
			if (*end || v < 0 || v >= libbpf_num_possible_cpus() || c->ncpus >= 256)
				xdplab_usage_err(state, "CPU numbers from 0, as in -c 0,1",
						 "'%s' is not a CPU of this machine", tok);
			c->cpus[c->ncpus++] = v;
		}
		return 0;
	case OPT_QSIZE:
		xdplab_opt_once(state, key, "--qsize");
		v = strtol(arg, &end, 0);
		if (*end || !*arg || v < 1 || v > 16384)
			xdplab_usage_err(state, "--qsize 1 to 16384", "'%s' is not a queue size", arg);
		c->qsize = v;
		return 0;
	case OPT_CPU_ACTION:
		xdplab_opt_once(state, key, "--cpu-action");
		act = xdplab_parse_action(arg);
		if (act != XDP_PASS && act != XDP_DROP)
			xdplab_usage_err(state, "--cpu-action pass or --cpu-action drop",
					 "unknown CPU action '%s'", arg);
		o->cfg.cpu_action = act;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct xdplab_cmd_desc desc = {
	.name = "redirect-cpu",
	.args_doc = "IFNAME",
	.nargs = 1,
	.options = options,
	.parser = parse,
	.doc = "Redirect frames arriving on IFNAME to other CPUs through a CPUMAP; a\n"
	       "program on the CPUMAP entry gives the final verdict there, and the skb\n"
	       "is built on that CPU.\v"
	       "Examples:\n"
	       "  xdplab redirect-cpu eth0                   spread over all CPUs\n"
	       "  xdplab redirect-cpu veth1 -c 1 --cpu-action drop",
};

static int fill_cpumap(void *ctx, const struct xdplab_opts *o, struct bpf_object *obj)
{
	const struct cpu_opts *c = ctx;
	bool frags = o->frags == FRAGS_ON;
	struct bpf_map *cpumap = bpf_object__find_map_by_name(obj, frags ? "cpu_map_frags" : "cpu_map");
	struct bpf_map *avail = bpf_object__find_map_by_name(obj, "cpus_available");
	struct bpf_program *remote = bpf_object__find_program_by_name(obj,
			frags ? "xdp_cpumap_frags" : "xdp_cpumap");
	struct bpf_cpumap_val val = { .qsize = c->qsize };

	val.bpf_prog.fd = bpf_program__fd(remote);
	for (__u32 i = 0; i < (__u32)c->ncpus; i++) {
		__u32 cpu = c->cpus[i];

		if (bpf_map_update_elem(bpf_map__fd(cpumap), &cpu, &val, 0) ||
		    bpf_map_update_elem(bpf_map__fd(avail), &i, &cpu, 0))
			return xdplab_err("is the CPU online?", "cannot add CPU %u to the CPUMAP: %s",
					  cpu, strerror(errno));
	}
	return 0;
}

static void print_remote(void *ctx, const struct xdplab_opts *o, double secs)
{
	const struct cpu_opts *c = ctx;
	struct xdplab_datarec pass, drop;

	xdplab_percpu_sum(c->remote_stats, XDP_PASS, &pass, sizeof(pass));
	xdplab_percpu_sum(c->remote_stats, XDP_DROP, &drop, sizeof(drop));
	if (o->json)
		printf("{\"cpumap\":true,\"seconds\":%.3f,\"pass\":%llu,\"drop\":%llu}\n", secs,
		       (unsigned long long)pass.packets, (unsigned long long)drop.packets);
	else
		printf("On the remote CPUs: pass %llu, drop %llu\n",
		       (unsigned long long)pass.packets, (unsigned long long)drop.packets);
}

int cmd_redirect_cpu(int argc, char **argv)
{
	struct cpu_opts c = { .qsize = 2048 };
	struct xdp_redirect_cpu_bpf *s = NULL;
	struct bpf_program *p;
	struct xdplab_hooks hooks = { .ctx = &c, .loaded = fill_cpumap, .summary = print_remote };
	struct xdplab_opts o;
	int ncpu, err, ret = 1;

	xdplab_opts_init(&o);
	o.extra = &c;
	o.cfg.cpu_action = XDP_PASS;
	xdplab_parse_cmd(&desc, argc, argv, &o);
	ncpu = libbpf_num_possible_cpus();
	if (!c.ncpus)
		for (int i = 0; i < ncpu && i < 256; i++)
			c.cpus[c.ncpus++] = i;

	if (xdplab_preflight(&o))
		return 1;
	s = xdp_redirect_cpu_bpf__open_opts(xdplab_open_opts(&o));
	if (!s)
		return xdplab_load_err("xdp_redirect_cpu", -errno);
	s->rodata->cpus_count = c.ncpus;
	bpf_map__set_max_entries(s->maps.cpu_map, ncpu);
	bpf_map__set_max_entries(s->maps.cpu_map_frags, ncpu);
	bpf_map__set_max_entries(s->maps.cpus_available, ncpu);
	p = xdplab_pick_prog(&o, s->obj, s->progs.xdp_redirect_cpu, s->progs.xdp_redirect_cpu_frags);
	if (!p)
		goto out;
	s->rodata->cfg = o.cfg;
	bpf_program__set_autoload(s->progs.xdp_cpumap, o.frags != FRAGS_ON);
	bpf_program__set_autoload(s->progs.xdp_cpumap_frags, o.frags == FRAGS_ON);
	err = xdp_redirect_cpu_bpf__load(s);
	if (err) {
		ret = xdplab_load_err("xdp_redirect_cpu", err);
		goto out;
	}
	c.remote_stats = s->maps.cpumap_stats;
	ret = xdplab_run(&o, s->obj, p, s->maps.xdp_stats, &hooks);
out:
	xdp_redirect_cpu_bpf__destroy(s);
	return ret;
}
