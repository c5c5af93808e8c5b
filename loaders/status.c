// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "core.h"
#include "netdev_genl.h"

static const struct xdplab_cmd_desc desc = {
	.name = "status",
	.args_doc = "[IFNAME]",
	.nargs = 0,
	.no_attach = true,
	.doc = "Show the XDP programs attached to each interface of this network\n"
	       "namespace (or to IFNAME), and what each driver says it can do.\v"
	       "Feature flags: BASIC (XDP_PASS/DROP/TX), REDIRECT (XDP_REDIRECT out),\n"
	       "NDO_XMIT (a redirect target), RX_SG (multi-buffer receive), NDO_XMIT_SG\n"
	       "(multi-buffer redirect target); from the netdev netlink family, Linux 6.3+.\n"
	       "GSO-preserving: the program never changes a frame's length or its\n"
	       "IP/L4 headers. Takes GSO superframes: it was loaded with BPF_F_XDP_GSO\n"
	       "(kernels with the veth GSO series; xdplab asks unless --no-gso).\n"
	       "Counts: \"segments\" when a frags program counts a superframe as its\n"
	       "gso_segs packets (it took superframes and the kernel has\n"
	       "bpf_xdp_gso_state(); in skb mode only from v6 of the series), else\n"
	       "\"frames\".\n"
	       "Examples:\n"
	       "  xdplab status\n"
	       "  ip netns exec ns1 xdplab status veth1 --json",
};

static void prog_line(const char *mode, __u32 id, const struct xdplab_opts *o, bool *first)
{
	static const char *const opt_in_json[] = { "null", "false", "true" };
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	int opt_in = -1;	/* -1: not an xdplab program, we cannot tell */
	int segs = -1;
	bool gso = false;

	if (fd >= 0) {
		bpf_obj_get_info_by_fd(fd, &info, &len);
		gso = xdplab_prog_gso_preserving(fd);
		opt_in = xdplab_prog_gso_opt_in(fd);
		segs = xdplab_prog_count_segs(fd);
		close(fd);
	}
	if (o->json)
		printf("%s{\"mode\":\"%s\",\"id\":%u,\"name\":\"%s\",\"gso_preserving\":%s,"
		       "\"gso_opt_in\":%s,\"counts\":%s}", *first ? "" : ",", mode, id, info.name,
		       gso ? "true" : "false", opt_in_json[opt_in + 1],
		       segs < 0 ? "null" : segs ? "\"segments\"" : "\"frames\"");
	else
		printf("    %-6s id %-5u %s%s%s%s\n", mode, id, info.name[0] ? info.name : "?",
		       gso ? " (GSO-preserving)" : "",
		       opt_in > 0 ? " (takes GSO superframes: BPF_F_XDP_GSO)" : "",
		       segs > 0 ? " (counts GSO segments as packets)" : "");
	*first = false;
}

static void show(int ifindex, const char *name, const struct xdplab_opts *o)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char feat[128] = "unknown";
	uint64_t f;
	bool first = true;
	int err;

	err = netdev_xdp_features(ifindex, &f);
	if (!err)
		netdev_xdp_features_str(f, feat, sizeof(feat));
	else if (err == -ENOENT)
		snprintf(feat, sizeof(feat), "unknown (kernel before 6.3)");
	bpf_xdp_query(ifindex, XDP_FLAGS_DRV_MODE, &q);

	if (o->json)
		printf("{\"ifname\":\"%s\",\"ifindex\":%d,\"xdp_features\":\"%s\",\"progs\":[",
		       name, ifindex, feat);
	else
		printf("%-12s ifindex %-4d xdp features: %s\n", name, ifindex, feat);
	if (q.drv_prog_id)
		prog_line("native", q.drv_prog_id, o, &first);
	if (q.skb_prog_id)
		prog_line("skb", q.skb_prog_id, o, &first);
	if (q.hw_prog_id)
		prog_line("hw", q.hw_prog_id, o, &first);
	if (o->json)
		printf("]}\n");
	else if (first)
		printf("    no XDP program\n");
}

int cmd_status(int argc, char **argv)
{
	struct if_nameindex *ifs, *i;
	struct xdplab_opts o;
	int idx;

	xdplab_opts_init(&o);
	xdplab_parse_cmd(&desc, argc, argv, &o);
	if (o.ifname) {
		idx = xdplab_ifindex(o.ifname, "");
		if (!idx)
			return 1;
		show(idx, o.ifname, &o);
		return 0;
	}
	ifs = if_nameindex();
	if (!ifs)
		return xdplab_err(NULL, "cannot list interfaces: %s", strerror(errno));
	for (i = ifs; i->if_index; i++)
		show(i->if_index, i->if_name, &o);
	if_freenameindex(ifs);
	return 0;
}
