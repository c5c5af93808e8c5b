// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "core.h"
#include "xdp_tx.skel.h"

static const struct xdplab_cmd_desc desc = {
	.name = "tx",
	.args_doc = "IFNAME",
	.nargs = 1,
	.doc = "Swap MAC addresses and send frames back out of IFNAME (XDP_TX).\v"
	       "Examples:\n"
	       "  xdplab tx veth1                      reflect everything\n"
	       "  xdplab tx veth1 --proto udp --port 7 an XDP echo for UDP port 7\n",
};

int cmd_tx(int argc, char **argv)
{
	struct xdplab_opts o;

	xdplab_opts_init(&o);
	xdplab_parse_cmd(&desc, argc, argv, &o);
	return XDPLAB_SKEL_RUN(&o, xdp_tx_bpf, xdp_tx, NULL);
}
