/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The selftest runner's interface, in the manner of the kernel's test_progs:
 *
 *	TEST(pass_prog)
 *	{
 *		if (test__start_subtest("ipv4_udp")) {
 *			...
 *			ASSERT_EQ(retval, XDP_PASS, "verdict");
 *		}
 *	}
 *
 * Each subtest (or a test without subtests) is one result: passed, failed
 * or skipped. ASSERT_* print both sides on failure (and with -v on success
 * too), mark the running subtest failed and return whether they held, so
 * a test can `if (!ASSERT_OK(err, "load")) goto out;`.
 */
#ifndef XDPLAB_TEST_H
#define XDPLAB_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct test_def {
	const char *name;
	void (*fn)(void);
	struct test_def *next;
};

void test__register(struct test_def *t);
bool test__start_subtest(const char *name);
void test__skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void test__fail(void);
bool test__verbose(void);
/* How much longer than on a plain kernel a bound on the kernel's work
 * should be: XDPLAB_BOUND_SCALE when set, else 5 on a KASAN kernel (which
 * also has lockdep and kmemleak in xdplab's DEBUG=1 guest, several times
 * slower under emulation), else 1. Bounds, not delays: a test that passes
 * takes no longer for it.
 */
double test__bound(double secs);
/* Where the runner lives: build/, with the CLI and the BPF objects. */
const char *test__build_dir(void);
/* build/NAME, e.g. test__path("xdp_pass.bpf.o"). */
const char *test__path(const char *name);
bool test__report(bool ok, const char *file, int line, const char *name,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define TEST(tname)							\
	static void test_##tname(void);					\
	__attribute__((constructor)) static void register_##tname(void)	\
	{								\
		static struct test_def def = { #tname, test_##tname, NULL }; \
		test__register(&def);					\
	}								\
	static void test_##tname(void)

#define ASSERT_TRUE(cond, name) ({					\
	bool ___ok = !!(cond);						\
	test__report(___ok, __FILE__, __LINE__, name,			\
		     "unexpected false: %s", #cond);			\
})

#define ASSERT_FALSE(cond, name) ({					\
	bool ___ok = !(cond);						\
	test__report(___ok, __FILE__, __LINE__, name,			\
		     "unexpected true: %s", #cond);			\
})

#define ASSERT_OK(res, name) ({						\
	long long ___r = (long long)(res);				\
	test__report(___r == 0, __FILE__, __LINE__, name,		\
		     "%s = %lld, expected 0 (errno %d: %s)", #res, ___r,	\
		     errno, strerror(errno));				\
})

#define ASSERT_ERR(res, name) ({					\
	long long ___r = (long long)(res);				\
	test__report(___r < 0, __FILE__, __LINE__, name,		\
		     "unexpected success: %lld", ___r);			\
})

#define ASSERT_OK_PTR(ptr, name) ({					\
	const void *___p = (ptr);					\
	test__report(___p != NULL, __FILE__, __LINE__, name,		\
		     "unexpected NULL (errno %d: %s)", errno, strerror(errno)); \
})

#define ASSERT_CMP(a, op, b, name) ({					\
	long long ___a = (long long)(a), ___b = (long long)(b);		\
	test__report(___a op ___b, __FILE__, __LINE__, name,		\
		     "%s = %lld, expected " #op " %lld (%s)", #a, ___a, ___b, #b); \
})
#define ASSERT_EQ(a, b, name)	ASSERT_CMP(a, ==, b, name)
#define ASSERT_NEQ(a, b, name)	ASSERT_CMP(a, !=, b, name)
#define ASSERT_GE(a, b, name)	ASSERT_CMP(a, >=, b, name)
#define ASSERT_GT(a, b, name)	ASSERT_CMP(a, >, b, name)
#define ASSERT_LE(a, b, name)	ASSERT_CMP(a, <=, b, name)
#define ASSERT_LT(a, b, name)	ASSERT_CMP(a, <, b, name)

#define ASSERT_STRSTR(hay, needle, name) ({				\
	const char *___h = (hay), *___n = (needle);			\
	test__report(___h && strstr(___h, ___n), __FILE__, __LINE__, name, \
		     "\"%s\" not found in:\n%s", ___n, ___h ? ___h : "(null)"); \
})

#endif
