// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "core.h"
#include "xdp_pass.skel.h"

static const struct xdplab_cmd_desc desc = {
	.name = "pass",
	.args_doc = "IFNAME",
	.nargs = 1,
	.doc = "XDP_PASS every frame on IFNAME and count it.\v"
	       "Examples:\n"
	       "  xdplab pass eth0                 native mode until Ctrl-C\n"
	       "  xdplab pass veth1 --mode skb     generic XDP\n"
	       "  xdplab pass veth1 -d 10 --json   ten seconds, JSON lines\n",
};

int cmd_pass(int argc, char **argv)
{
	struct xdplab_opts o;

	xdplab_opts_init(&o);
	xdplab_parse_cmd(&desc, argc, argv, &o);
	return XDPLAB_SKEL_RUN(&o, xdp_pass_bpf, xdp_pass, NULL);
}
