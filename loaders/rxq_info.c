// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>

#include "core.h"
#include "xdp_rxq_info.skel.h"

struct rxq_ctx {
	struct bpf_map *map;
	__u64 prev[XDPLAB_MAX_RXQ];
};

enum { OPT_ACTION = 0x300, OPT_NO_SWAP };

static const struct argp_option options[] = {
	{ "action", OPT_ACTION, "VERDICT", 0, "pass (default), drop, tx or aborted", 0 },
	{ "no-swap-macs", OPT_NO_SWAP, NULL, 0, "with --action tx, send frames back unchanged", 0 },
	{},
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	struct xdplab_opts *o = state->input;
	int act;

	switch (key) {
	case OPT_ACTION:
		xdplab_opt_once(state, key, "--action");
		act = xdplab_parse_action(arg);
		if (act < 0 || act == XDP_REDIRECT)
			xdplab_usage_err(state, "--action pass, drop, tx or aborted",
					 "unknown action '%s'", arg);
		o->cfg.action = act;
		return 0;
	case OPT_NO_SWAP:
		o->cfg.swap_macs = 0;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct xdplab_cmd_desc desc = {
	.name = "rxq-info",
	.args_doc = "IFNAME",
	.nargs = 1,
	.options = options,
	.parser = parse,
	.doc = "Count frames per CPU and per RX queue on IFNAME, then give a verdict,\n"
	       "as samples/bpf's xdp_rxq_info does.\v"
	       "Examples:\n"
	       "  xdplab rxq-info eth0                 which queues do flows land on?\n"
	       "  xdplab rxq-info veth1 --action drop\n",
};

static void print_queues(void *arg, const struct xdplab_opts *o, double dt)
{
	struct rxq_ctx *c = arg;
	bool first = true;

	for (__u32 q = 0; q < XDPLAB_MAX_RXQ; q++) {
		struct xdplab_rxq_rec r;
		double rate;

		if (xdplab_percpu_sum(c->map, q, &r, sizeof(r)) || r.packets == c->prev[q])
			continue;
		rate = (r.packets - c->prev[q]) / dt;
		c->prev[q] = r.packets;
		if (o->json)
			printf("{\"ifname\":\"%s\",\"rxq\":%u,\"pps\":%.0f}\n", o->ifname, q, rate);
		else
			printf("%s  rxq %-2u %11.0f/s", first ? "          " : "", q, rate);
		first = false;
	}
	if (!first && !o->json)
		putchar('\n');
}

static int find_map(void *arg, const struct xdplab_opts *o, struct bpf_object *obj)
{
	struct rxq_ctx *c = arg;

	(void)o;
	c->map = bpf_object__find_map_by_name(obj, "rxq_stats");
	return !c->map;
}

int cmd_rxq_info(int argc, char **argv)
{
	struct rxq_ctx c = {};
	const struct xdplab_hooks hooks = { .ctx = &c, .loaded = find_map,
					    .interval = print_queues };
	struct xdplab_opts o;

	xdplab_opts_init(&o);
	o.cfg.action = XDP_PASS;
	o.cfg.swap_macs = 1;
	xdplab_parse_cmd(&desc, argc, argv, &o);
	return XDPLAB_SKEL_RUN(&o, xdp_rxq_info_bpf, xdp_rxq_info, &hooks);
}
