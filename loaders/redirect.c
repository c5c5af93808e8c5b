// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "core.h"
#include "xdp_redirect.skel.h"

static const struct xdplab_cmd_desc desc = {
	.name = "redirect",
	.args_doc = "IFNAME OUT_IFNAME",
	.nargs = 2,
	.doc = "Redirect frames arriving on IFNAME to OUT_IFNAME with bpf_redirect().\v"
	       "A veth OUT_IFNAME delivers only if its peer has an XDP program or GRO on.\n"
	       "Examples:\n"
	       "  xdplab redirect veth1 veth2\n"
	       "  xdplab redirect eth0 eth1 --proto udp   UDP only, the rest pass\n",
};

int cmd_redirect(int argc, char **argv)
{
	struct xdplab_opts o;

	xdplab_opts_init(&o);
	xdplab_parse_cmd(&desc, argc, argv, &o);
	o.cfg.ifindex = xdplab_ifindex(o.args[1], "egress");
	if (!o.cfg.ifindex)
		return 1;
	return XDPLAB_SKEL_RUN(&o, xdp_redirect_bpf, xdp_redirect, NULL);
}
