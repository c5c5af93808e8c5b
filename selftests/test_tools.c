// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The objects in build/ are meant for other loaders too: the real
 * xdp-loader (libxdp, which needs the XDP_RUN_CONFIG metadata) and
 * `ip link set dev X xdp obj`. Every .bpf.o in build/ is loaded and unloaded
 * with both, each program that attaches to a device (sections "xdp" and
 * "xdp.frags"), on a veth in a throw-away namespace; new programs are
 * covered as soon as they are built. Multi-buffer programs go on a veth at
 * MTU 9000, where veth refuses a program without BPF_F_XDP_HAS_FRAGS: so
 * the flag must have come through the loader from the section name.
 *
 * Not attached: programs for a CPUMAP entry (section "xdp/cpumap" and
 * "xdp.frags/cpumap"), which the kernel refuses on a device by design;
 * they load as part of their object. Not loaded at all: test fixtures, the
 * objects with a BPF_PROG_TYPE_SYSCALL program (xdp_crypto_test), whose
 * XDP program needs state that program makes and only the test runs it,
 * and whose map needs a BTF fix-up at load (see veth_gso.c, btf_tag_kptr),
 * and those that say so with a variable named xdplab_test_fixture (the
 * verifier cases of xdp_gso_stale_slice and xdp_gso_ext_write, whose
 * programs are there to be refused or to extend another); their subtest
 * says so and skips.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "netns.h"
#include "test.h"

#define MAX_PROGS 16
#define OUT_LEN 8192
/* The kernel keeps BPF_OBJ_NAME_LEN - 1 characters of a program's name. */
#define KNAME_LEN 15

struct obj_progs {
	char path[512];
	char base[64];			/* "xdp_pass" for build/xdp_pass.bpf.o */
	int n;				/* programs that attach to a device */
	char name[MAX_PROGS][64];
	char sec[MAX_PROGS][32];	/* "xdp" or "xdp.frags" */
	bool fixture;			/* a "syscall" program, or xdplab_test_fixture */
};

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The device-attachable programs of an object, in the object's order (the
 * first is the one loaders take by default). Returns 0 or -errno.
 */
static int obj_progs_read(const char *path, struct obj_progs *op)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet_print);
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	struct btf *btf;
	char *dot;
	int err = libbpf_get_error(obj);

	/* Opening is only reading the ELF; libbpf's notes about the
	 * .xdp_run_config section it does not know are noise here.
	 */
	libbpf_set_print(old);
	memset(op, 0, sizeof(*op));
	snprintf(op->path, sizeof(op->path), "%s", path);
	snprintf(op->base, sizeof(op->base), "%s", basename(op->path));
	dot = strstr(op->base, ".bpf.o");
	if (dot)
		*dot = '\0';
	if (err)
		return err;
	btf = bpf_object__btf(obj);
	op->fixture = btf && btf__find_by_name(btf, "xdplab_test_fixture") > 0;
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);

		op->fixture |= bpf_program__type(prog) == BPF_PROG_TYPE_SYSCALL;
		if (bpf_program__type(prog) != BPF_PROG_TYPE_XDP ||
		    (strcmp(sec, "xdp") && strcmp(sec, "xdp.frags")) || op->n >= MAX_PROGS)
			continue;
		snprintf(op->name[op->n], sizeof(op->name[0]), "%s", bpf_program__name(prog));
		snprintf(op->sec[op->n], sizeof(op->sec[0]), "%s", sec);
		op->n++;
	}
	bpf_object__close(obj);
	return 0;
}

/* The .bpf.o objects in build/; the glob is the caller's to free. */
static bool objects(glob_t *g)
{
	memset(g, 0, sizeof(*g));
	if (glob(test__path("*.bpf.o"), 0, NULL, g) || !g->gl_pathc) {
		test__report(false, __FILE__, __LINE__, "objects", "no %s (run make first)",
			     test__path("*.bpf.o"));
		return false;
	}
	return true;
}

/* Is prog (by its full name) what the kernel has attached, directly or, if
 * libxdp used its dispatcher, behind it?
 */
static bool tl_attached_is(const char *ns, const char *prog, const char *loader_status)
{
	char name[64], kname[KNAME_LEN + 1];
	int mode;
	long id = xdp_prog_query(ns, "veth0", name, sizeof(name), &mode);

	snprintf(kname, sizeof(kname), "%s", prog);
	if (!ASSERT_GT(id, 0, "something attached"))
		return false;
	if (!ASSERT_EQ(mode, XDP_ATTACHED_DRV, "in native mode"))
		return false;
	if (!strcmp(name, "xdp_dispatcher")) {
		/* libxdp's dispatcher runs it; only xdp-loader can say what. */
		return loader_status && ASSERT_STRSTR(loader_status, kname, "behind the dispatcher");
	}
	return test__report(!strcmp(name, kname), __FILE__, __LINE__, "the program",
			    "attached '%s', expected '%s'", name, kname);
}

TEST(tools_xdp_loader)
{
	char out[OUT_LEN], st[OUT_LEN], sub[160];
	struct veth_pair vp = {}, big = {};
	struct obj_progs op;
	glob_t g;
	const char *ns;
	int rc;

	if (sh("command -v xdp-loader")) {
		test__skip("xdp-loader (xdp-tools) is not installed");
		return;
	}
	if (!objects(&g))
		return;
	if (!ASSERT_OK(veth_pair_add(&vp, "tl", 10, 0), "veth pair") ||
	    !ASSERT_OK(veth_pair_add(&big, "tlj", 12, 9000), "veth pair at MTU 9000"))
		goto out;

	for (size_t i = 0; i < g.gl_pathc; i++) {
		int err = obj_progs_read(g.gl_pathv[i], &op);

		/* i = -1 is the default (first) program, then each by name. */
		for (int p = -1; p < op.n; p++) {
			const char *want = op.n ? op.name[p < 0 ? 0 : p] : "";

			if (p == 0)
				continue;	/* the default load covered it */
			if (p < 0)
				snprintf(sub, sizeof(sub), "%s", op.base);
			else
				snprintf(sub, sizeof(sub), "%s:%s", op.base, want);
			if (!test__start_subtest(sub))
				continue;
			if (op.fixture) {
				test__skip("a test fixture: only its own test loads it");
				break;
			}
			if (!ASSERT_OK(err, "libbpf opens the object") ||
			    !ASSERT_GT(op.n, 0, "a program that attaches to a device"))
				break;
			ns = strcmp(op.sec[p < 0 ? 0 : p], "xdp.frags") ? vp.ns[0] : big.ns[0];

			/* Without bpffs (ip netns exec remounts /sys) libxdp loads
			 * the one program without its dispatcher, as it does on
			 * kernels its dispatcher does not work on.
			 */
			rc = sh_out(out, sizeof(out),
				    "ip netns exec %s xdp-loader load -m native%s%s veth0 %s 2>&1",
				    ns, p < 0 ? "" : " --prog-name ", p < 0 ? "" : want, op.path);
			if (!test__report(rc == 0, __FILE__, __LINE__, "xdp-loader load",
					  "exit %d:\n%s", rc, out))
				goto unload;
			rc = sh_out(st, sizeof(st), "ip netns exec %s xdp-loader status veth0 2>&1",
				    ns);
			ASSERT_EQ(rc, 0, "xdp-loader status");
			tl_attached_is(ns, want, st);
			{
				char kname[KNAME_LEN + 1];

				snprintf(kname, sizeof(kname), "%s", want);
				ASSERT_STRSTR(st, kname, "xdp-loader status names it");
			}
unload:
			rc = sh_out(out, sizeof(out),
				    "ip netns exec %s xdp-loader unload --all veth0 2>&1", ns);
			test__report(rc == 0, __FILE__, __LINE__, "xdp-loader unload --all",
				     "exit %d:\n%s", rc, out);
			ASSERT_EQ(xdp_prog_query(ns, "veth0", NULL, 0, NULL), 0, "nothing attached after");
			/* Whatever failed, the next object starts clean. */
			sh("ip -n %s link set dev veth0 xdp off", ns);
		}
	}
out:
	veth_pair_del(&big);
	veth_pair_del(&vp);
	globfree(&g);
}

/* Does `ip -d link show` say a program is attached? ("xdp" alone would
 * also match the peer's namespace, xdplab-PID-TAG.)
 */
static bool ip_shows_xdp(const char *out)
{
	return strstr(out, "prog/xdp") || strstr(out, " xdp ") || strstr(out, " xdpgeneric ") ||
	       strstr(out, " xdpdrv ") || strstr(out, " xdpoffload ") || strstr(out, " xdpmulti ");
}

TEST(tools_ip_link)
{
	char out[OUT_LEN], sub[160];
	struct veth_pair vp = {}, big = {};
	struct obj_progs op;
	glob_t g;
	const char *ns;
	int rc;

	if (sh("command -v ip")) {
		test__skip("ip (iproute2) is not installed");
		return;
	}
	if (!objects(&g))
		return;
	if (!ASSERT_OK(veth_pair_add(&vp, "ti", 11, 0), "veth pair") ||
	    !ASSERT_OK(veth_pair_add(&big, "tij", 13, 9000), "veth pair at MTU 9000"))
		goto out;

	for (size_t i = 0; i < g.gl_pathc; i++) {
		int err = obj_progs_read(g.gl_pathv[i], &op);

		for (int p = 0; p < op.n || (err && p == 0); p++) {
			bool dup = false;

			/* ip takes a section, and the first program in it. */
			for (int q = 0; q < p; q++)
				dup |= !strcmp(op.sec[q], op.sec[p]);
			if (dup)
				continue;
			snprintf(sub, sizeof(sub), "%s:%s", op.base, err ? "?" : op.sec[p]);
			if (!test__start_subtest(sub))
				continue;
			if (op.fixture) {
				test__skip("a test fixture: only its own test loads it");
				break;
			}
			if (!ASSERT_OK(err, "libbpf opens the object"))
				break;
			ns = strcmp(op.sec[p], "xdp.frags") ? vp.ns[0] : big.ns[0];

			rc = sh_out(out, sizeof(out),
				    "ip -n %s link set dev veth0 xdp obj %s sec %s 2>&1",
				    ns, op.path, op.sec[p]);
			if (rc && strstr(out, "No ELF library support")) {
				test__skip("this ip was built without ELF/libbpf support");
				break;
			}
			if (test__report(rc == 0, __FILE__, __LINE__, "ip link set ... xdp obj",
					 "exit %d:\n%s", rc, out)) {
				tl_attached_is(ns, op.name[p], NULL);
				rc = sh_out(out, sizeof(out), "ip -n %s -d link show dev veth0", ns);
				ASSERT_TRUE(ip_shows_xdp(out), "ip link show lists it");
			}
			rc = sh("ip -n %s link set dev veth0 xdp off", ns);
			ASSERT_EQ(rc, 0, "ip link set ... xdp off");
			ASSERT_EQ(xdp_prog_query(ns, "veth0", NULL, 0, NULL), 0, "nothing attached after");
			sh_out(out, sizeof(out), "ip -n %s -d link show dev veth0", ns);
			ASSERT_FALSE(ip_shows_xdp(out), "ip link show has no xdp");
		}
	}
out:
	veth_pair_del(&big);
	veth_pair_del(&vp);
	globfree(&g);
}
