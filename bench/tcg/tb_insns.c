// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A QEMU TCG plugin (QEMU 7.2, plugin API 1) that counts the guest
 * kernel's instructions by translation block: every block that starts at a
 * kernel address gets a counter that an inline add bumps each time the
 * block runs, and at exit the blocks are written out as
 *
 *	<start address, hex> <instructions in the block> <times it ran>
 *
 * bench/insn_profile.sh turns that into instructions a frame per kernel
 * function.
 *
 * Snapshots: with TB_INSNS_MARK=<user address, hex>, each time the guest
 * runs the block at that address (bench/tcg/insns_mark.c puts a function
 * there) the counts so far are written to <out>.<n>, n = 1, 2, ...; the
 * difference of two snapshots is the kernel's work between two points the
 * guest chose, whatever the host was doing meanwhile
 * (bench/gem-insns.sh). Counting executions instead of sampling the clock is what
 * makes a difference of ten instructions a frame visible: under -icount a
 * timer-driven profile beats in step with the frame loop and its shares
 * are skewed by whole percents.
 *
 * The plugin API is declared here rather than taken from QEMU's
 * qemu-plugin.h, which Debian does not package; only the calls below are
 * used, and their ABI has been stable since the API's first version.
 *
 *	gcc -O2 -shared -fPIC -fvisibility=hidden -o tb_insns.so tb_insns.c
 *	qemu-system-x86_64 ... -plugin tb_insns.so   (out file: TB_INSNS_OUT)
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
} qemu_info_t;

enum { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    void (*cb)(qemu_plugin_id_t, void *), void *userdata);
enum { QEMU_PLUGIN_CB_NO_REGS };
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  void (*cb)(unsigned int vcpu, void *userdata),
					  int flags, void *userdata);

EXPORT int qemu_plugin_version = 1;

/* Where the kernel's text starts: x86-64's top 2 GB (modules included);
 * on arm64 every address of the upper half.
 */
static uint64_t kernel_start = 0xffffffff80000000ull;
static uint64_t mark_addr;
static unsigned int marks;

struct block {
	uint64_t start, insns, runs;
	struct block *next;
};

static struct block *blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_path = "tb_insns.txt";

static void write_to(const char *path);

/* Runs in the vCPU's thread with the guest stopped at the mark, so the
 * snapshot is exact.
 */
static void on_mark(unsigned int vcpu, void *userdata)
{
	char path[4096];

	(void)vcpu, (void)userdata;
	snprintf(path, sizeof(path), "%s.%u", out_path, ++marks);
	write_to(path);
}

/* A block translated again (after a flush) gets a second record; the
 * reader adds them up by address.
 */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t start = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	(void)id;
	if (mark_addr && start == mark_addr)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
	if (start < kernel_start)
		return;
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	b->start = start;
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&blocks_lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&blocks_lock);
	/* Not atomic: exact with one vCPU, which is how it is meant to run. */
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->runs, 1);
}

static void write_to(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return;
	}
	pthread_mutex_lock(&blocks_lock);
	for (struct block *b = blocks; b; b = b->next)
		if (b->runs)
			fprintf(f, "%llx %llu %llu\n", (unsigned long long)b->start,
				(unsigned long long)b->insns, (unsigned long long)b->runs);
	pthread_mutex_unlock(&blocks_lock);
	fclose(f);
}

static void write_blocks(qemu_plugin_id_t id, void *userdata)
{
	(void)id, (void)userdata;
	write_to(out_path);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	const char *path = getenv("TB_INSNS_OUT");
	const char *mark = getenv("TB_INSNS_MARK");

	(void)argc, (void)argv;
	if (path && *path)
		out_path = path;
	if (mark && *mark)
		mark_addr = strtoull(mark, NULL, 16);
	if (info->target_name && !strcmp(info->target_name, "aarch64"))
		kernel_start = 0xffff000000000000ull;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, write_blocks, NULL);
	return 0;
}
