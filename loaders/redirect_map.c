// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "core.h"
#include "xdp_redirect_map.skel.h"

static const struct xdplab_cmd_desc desc = {
	.name = "redirect-map",
	.args_doc = "IFNAME OUT_IFNAME",
	.nargs = 2,
	.doc = "Redirect frames arriving on IFNAME to OUT_IFNAME through a DEVMAP.\v"
	       "The map path batches transmits (bulk flush per NAPI poll), unlike\n"
	       "plain bpf_redirect(). A veth OUT_IFNAME delivers only if its peer has\n"
	       "an XDP program or GRO on.\n"
	       "Examples:\n"
	       "  xdplab redirect-map veth1 veth2\n"
	       "  xdplab redirect-map eth0 veth0 --mode skb\n",
};

/* Fills the DEVMAP slot of whichever entry point was loaded. */
static int fill_devmap(void *ctx, const struct xdplab_opts *o, struct bpf_object *obj)
{
	struct bpf_devmap_val val = { .ifindex = o->cfg.ifindex };
	const char *name = o->frags == FRAGS_ON ? "tx_port_frags" : "tx_port";
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);
	__u32 key = 0;

	(void)ctx;
	if (!map || bpf_map_update_elem(bpf_map__fd(map), &key, &val, 0))
		return xdplab_err("the egress device must support XDP redirect (ndo_xdp_xmit)",
				  "cannot put %s in the DEVMAP: %s", o->args[1], strerror(errno));
	return 0;
}

int cmd_redirect_map(int argc, char **argv)
{
	const struct xdplab_hooks hooks = { .loaded = fill_devmap };
	struct xdplab_opts o;

	xdplab_opts_init(&o);
	xdplab_parse_cmd(&desc, argc, argv, &o);
	o.cfg.ifindex = xdplab_ifindex(o.args[1], "egress");
	if (!o.cfg.ifindex)
		return 1;
	return XDPLAB_SKEL_RUN(&o, xdp_redirect_map_bpf, xdp_redirect_map, &hooks);
}
