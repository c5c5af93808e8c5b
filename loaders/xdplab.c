// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdplab: the subcommand dispatcher. */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "core.h"

int cmd_pass(int argc, char **argv);
int cmd_drop(int argc, char **argv);
int cmd_tx(int argc, char **argv);
int cmd_redirect(int argc, char **argv);
int cmd_redirect_map(int argc, char **argv);
int cmd_redirect_cpu(int argc, char **argv);
int cmd_rxq_info(int argc, char **argv);
int cmd_trafficgen(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_demo(int argc, char **argv);

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} cmds[] = {
	{ "pass", cmd_pass, "XDP_PASS and count" },
	{ "drop", cmd_drop, "XDP_DROP (all, or a protocol/port)" },
	{ "tx", cmd_tx, "swap MACs and XDP_TX back out" },
	{ "redirect", cmd_redirect, "bpf_redirect() to another interface" },
	{ "redirect-map", cmd_redirect_map, "redirect through a DEVMAP" },
	{ "redirect-cpu", cmd_redirect_cpu, "redirect to other CPUs through a CPUMAP" },
	{ "rxq-info", cmd_rxq_info, "count per CPU and RX queue" },
	{ "trafficgen", cmd_trafficgen, "send UDP frames with BPF_PROG_RUN live frames" },
	{ "status", cmd_status, "what is attached where, and driver XDP features" },
	{ "demo", cmd_demo, "veth pair in two namespaces, traffic, stats, cleanup" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: xdplab COMMAND [OPTION...] [ARGS]\n"
		   "CO-RE XDP programs, loaded, attached and measured.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-14s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\nCommon options (see xdplab COMMAND --help):\n"
		   "  -m, --mode native|skb   --frags / --no-frags   -d SECS   -i SECS\n"
		   "  --json   -q   --keep   --pin DIR   --btf FILE   -v\n\n"
		   "Examples:\n"
		   "  xdplab demo                      the tour, in throw-away namespaces\n"
		   "  xdplab pass eth0 -d 10           count what eth0 receives for 10 s\n"
		   "  xdplab status                    what is attached, what drivers can do\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		if (argc >= 3 && !strcmp(argv[1], "help")) {
			/* "xdplab help CMD" is "xdplab CMD --help". */
			argv[1] = argv[2];
			argv[2] = "--help";
			argc = 3;
		} else {
			usage(argc < 2 ? stderr : stdout);
			return argc < 2 ? 2 : 0;
		}
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("xdplab %s (libbpf %s)\n", XDPLAB_VERSION, libbpf_version_string());
		return 0;
	}
	xdplab_init();
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "xdplab: unknown command '%s' (hint: xdplab --help lists them)\n", argv[1]);
	return 2;
}
