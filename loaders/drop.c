// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "core.h"
#include "xdp_drop.skel.h"

static const struct xdplab_cmd_desc desc = {
	.name = "drop",
	.args_doc = "IFNAME",
	.nargs = 1,
	.doc = "XDP_DROP frames on IFNAME (all, or those matching --proto/--port/--ip;"
	       " the rest pass).\v"
	       "Examples:\n"
	       "  xdplab drop veth1                     drop everything\n"
	       "  xdplab drop eth0 --proto udp --port 9 drop UDP to the discard port",
};

int cmd_drop(int argc, char **argv)
{
	struct xdplab_opts o;

	xdplab_opts_init(&o);
	xdplab_parse_cmd(&desc, argc, argv, &o);
	return XDPLAB_SKEL_RUN(&o, xdp_drop_bpf, xdp_drop, NULL);
}
