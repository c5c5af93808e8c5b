// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A QEMU TCG plugin (QEMU 7.2, plugin API 1): a cache model fed by the
 * guest's own accesses, for what -icount cannot see (issue 19,
 * kernel-patches/tun): cache misses and locked instructions a frame.
 *
 * The model: an L1 data cache and an L1 instruction cache per vCPU and
 * one unified L2 shared by all vCPUs, set-associative, LRU, write-allocate,
 * non-inclusive (an L2 eviction does not remove the line from an L1),
 * physically indexed and tagged. Defaults are a modern x86 core's:
 * 32 KiB 8-way L1d and L1i, 1 MiB 16-way L2, 64-byte lines.
 *
 * - Data: every load and store the guest executes
 *   (qemu_plugin_register_vcpu_mem_cb), at its guest physical address;
 *   an access that crosses a line touches both lines; accesses to MMIO are
 *   counted apart (io_accesses) and not cached. A string instruction
 *   (rep movs) reaches the plugin one element at a time, so it counts as
 *   many accesses, but a line misses once.
 * - Instructions: the line of every instruction, at its host address
 *   (API 1 gives no physical address for an instruction; the guest RAM is
 *   one host mapping, aligned to 2 MiB by QEMU on x86-64 hosts, so a
 *   line's set is the one its guest physical address gives), looked up
 *   once each time the fetch enters a new line: the next instruction in
 *   the same line cannot miss, nothing between the two touches the L1i.
 * - L1 misses of either kind go to the L2.
 * - What is not modelled: prefetchers, write-backs of dirty lines, coherence
 *   between vCPUs (a store on one vCPU does not invalidate the line in
 *   another's L1), TLBs, page walks (their loads are not guest accesses
 *   here), DMA from devices. The access stream is the guest's
 *   architectural one, as TCG executes it.
 *
 * Kernel or user: by the address of the instruction doing the access
 * (upper half: kernel), so the kernel's copies from and to user memory are
 * the kernel's.
 *
 * Locked instructions (kernel only), from the instruction's bytes at
 * translation: a lock prefix (0xf0); a ds prefix (0x3e) in front of an
 * instruction that takes one, which is where a kernel booted on one CPU
 * has patched its LOCK_PREFIX sites (alternatives_smp_unlock) and where an
 * SMP machine executes a lock; and xchg with a memory operand, locked
 * without a prefix.
 *
 * Snapshots: with CACHE_MODEL_MARK=<user address, hex>, each time the
 * guest runs the block at that address (bench/tcg/insns_mark.c, linked at
 * INSNS_MARK_ADDR) the counters are written to <out>.<n>, n = 1, 2, ...
 * The first mark also switches the model on: until then only the mark is
 * watched (boot runs at TCG's speed), after it QEMU's code cache is flushed
 * (qemu_plugin_reset) and every block is translated again with the model's
 * callbacks. Without a mark the model runs from the start and the counters
 * are written at exit to <out>.
 *
 * A snapshot holds "name value" lines for the counters (k_ kernel, u_
 * user), "tb <address> <runs>" for every kernel block that ran, which
 * bench/cache_model.sh turns into a function's entries with the guest's
 * kallsyms (the frames of a point, as in bench/insn_profile.sh), and
 * "lk <address> <kind> <runs>" for every kernel locked instruction that
 * ran (which function they are in). A block or instruction translated
 * again after a flush gets a second line: a reader adds them up.
 *
 * Settings (environment, or plugin arguments of the same names in lower
 * case, e.g. -plugin cache_model.so,l2_size=2097152):
 *	CACHE_MODEL_OUT      output path (default cache_model.txt)
 *	CACHE_MODEL_MARK     mark address, hex
 *	CACHE_LINE           line size, bytes (64)
 *	CACHE_L1D_SIZE, CACHE_L1D_ASSOC   (32768, 8)
 *	CACHE_L1I_SIZE, CACHE_L1I_ASSOC   (32768, 8)
 *	CACHE_L2_SIZE,  CACHE_L2_ASSOC    (1048576, 16)
 *
 * Counters bumped inline (instructions, locked instructions, block runs)
 * are plain adds, exact with one vCPU; the cache counters are per vCPU.
 *
 * The few calls of the plugin API it uses are declared here, as in
 * tb_insns.c: Debian does not package qemu-plugin.h.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus, max_vcpus;
		} system;
	};
} qemu_info_t;

enum { QEMU_PLUGIN_CB_NO_REGS };
enum { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
enum { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(unsigned int vcpu, void *userdata);
typedef void (*mem_cb)(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
		       void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, udata_cb cb, int flags,
					  void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op, void *ptr,
					      uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, udata_cb cb,
					    int flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, int op,
						void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, mem_cb cb, int flags,
				      int rw, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    void (*cb)(qemu_plugin_id_t, void *), void *userdata);
void qemu_plugin_reset(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

EXPORT int qemu_plugin_version = 1;

/* ---- the caches ---- */

struct cache {
	uint64_t *tag;		/* sets * ways line numbers, ~0 when empty */
	uint64_t *used;		/* when each way was last touched */
	uint64_t clock;
	unsigned int sets, ways;
};

static unsigned int line_shift = 6;

static int cache_init(struct cache *c, uint64_t size, unsigned int ways, const char *name)
{
	uint64_t lines = size >> line_shift;

	if (!ways || !lines || lines % ways || ((lines / ways) & (lines / ways - 1))) {
		fprintf(stderr, "cache_model: %s: %llu bytes, %u ways, %u-byte lines: "
			"the sets must be a power of two\n", name, (unsigned long long)size,
			ways, 1u << line_shift);
		return -1;
	}
	c->sets = lines / ways;
	c->ways = ways;
	c->tag = malloc(lines * sizeof(*c->tag));
	c->used = calloc(lines, sizeof(*c->used));
	if (!c->tag || !c->used)
		return -1;
	memset(c->tag, 0xff, lines * sizeof(*c->tag));
	return 0;
}

/* Looks the line up, fills it on a miss (evicting the least recently
 * used way); true on a hit.
 */
static bool cache_access(struct cache *c, uint64_t line)
{
	unsigned int set = line & (c->sets - 1), victim = 0;
	uint64_t *tag = c->tag + (uint64_t)set * c->ways;
	uint64_t *used = c->used + (uint64_t)set * c->ways;

	c->clock++;
	for (unsigned int w = 0; w < c->ways; w++) {
		if (tag[w] == line) {
			used[w] = c->clock;
			return true;
		}
		if (used[w] < used[victim])
			victim = w;
	}
	tag[victim] = line;
	used[victim] = c->clock;
	return false;
}

/* ---- counters ---- */

enum { DOM_USER, DOM_KERNEL, DOM_NR };
enum {
	C_L1D_ACC, C_L1D_MISS, C_L1D_STORE_MISS, C_L1I_ACC, C_L1I_MISS,
	C_L2D_ACC, C_L2D_MISS, C_L2I_ACC, C_L2I_MISS, C_NR
};
static const char *const cname[C_NR] = {
	"l1d_accesses", "l1d_misses", "l1d_store_misses", "l1i_accesses", "l1i_misses",
	"l2_data_accesses", "l2_data_misses", "l2_insn_accesses", "l2_insn_misses",
};

struct vcpu {
	struct cache l1d, l1i;
	uint64_t n[DOM_NR][C_NR];
	uint64_t io;
} __attribute__((aligned(64)));

static struct vcpu *vcpus;
static unsigned int nvcpus;
static struct cache l2;
static pthread_mutex_t l2_lock = PTHREAD_MUTEX_INITIALIZER;

/* Bumped inline by the translated code: exact with one vCPU. */
enum { I_INSNS, I_LOCK, I_LOCK_DS, I_XCHG, I_NR };
static const char *const iname[I_NR] = {
	"insns", "locked_lock_prefix", "locked_ds_patched", "locked_xchg",
};
static uint64_t inl[DOM_NR][I_NR];

static const char dom_prefix[DOM_NR] = { 'u', 'k' };

static void l2_access(struct vcpu *v, int dom, uint64_t line, bool insn)
{
	bool hit;

	pthread_mutex_lock(&l2_lock);
	hit = cache_access(&l2, line);
	pthread_mutex_unlock(&l2_lock);
	v->n[dom][insn ? C_L2I_ACC : C_L2D_ACC]++;
	if (!hit)
		v->n[dom][insn ? C_L2I_MISS : C_L2D_MISS]++;
}

static void data_line(struct vcpu *v, int dom, uint64_t line, bool store)
{
	v->n[dom][C_L1D_ACC]++;
	if (cache_access(&v->l1d, line))
		return;
	v->n[dom][C_L1D_MISS]++;
	if (store)
		v->n[dom][C_L1D_STORE_MISS]++;
	l2_access(v, dom, line, false);
}

static bool armed;

/* userdata: the instruction's domain. */
static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud)
{
	struct qemu_plugin_hwaddr *hw;
	struct vcpu *v;
	uint64_t pa, first, last;
	int dom = (int)(uintptr_t)ud & 1;
	bool store;

	if (vcpu >= nvcpus)
		return;
	v = &vcpus[vcpu];
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (hw && qemu_plugin_hwaddr_is_io(hw)) {
		v->io++;
		return;
	}
	pa = hw ? qemu_plugin_hwaddr_phys_addr(hw) : vaddr;
	store = qemu_plugin_mem_is_store(info);
	first = pa >> line_shift;
	last = (pa + (1u << qemu_plugin_mem_size_shift(info)) - 1) >> line_shift;
	data_line(v, dom, first, store);
	if (last != first)
		data_line(v, dom, last, store);
}

/* userdata: the line << 1 | the instruction's domain. */
static void on_fetch(unsigned int vcpu, void *ud)
{
	struct vcpu *v;
	uint64_t key = (uintptr_t)ud;
	int dom = key & 1;

	if (vcpu >= nvcpus)
		return;
	v = &vcpus[vcpu];
	v->n[dom][C_L1I_ACC]++;
	if (cache_access(&v->l1i, key >> 1))
		return;
	v->n[dom][C_L1I_MISS]++;
	l2_access(v, dom, key >> 1, true);
}

/* ---- locked instructions ---- */

static bool legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e:
	case 0x26: case 0x64: case 0x65: case 0x66: case 0x67:
		return true;
	}
	return false;
}

/* Can the instruction at p (prefixes skipped) take a lock prefix, and
 * does it write memory? The x86 list: add/or/adc/sbb/and/sub/xor r/m,r;
 * group 1 but cmp; xchg; not/neg; inc/dec; cmpxchg, xadd, cmpxchg8b/16b,
 * bts/btr/btc. Sets *xchg for xchg, which is locked without a prefix.
 */
static bool lockable(const uint8_t *p, size_t n, bool *xchg)
{
	size_t i = 0;
	uint8_t op, modrm, reg;

	*xchg = false;
	if (i < n && (p[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i + 1 >= n)
		return false;
	op = p[i];
	if (op == 0x0f) {
		if (i + 2 >= n)
			return false;
		op = p[i + 1];
		modrm = p[i + 2];
		reg = (modrm >> 3) & 7;
		if (modrm >> 6 == 3)
			return false;
		return op == 0xb0 || op == 0xb1 || op == 0xc0 || op == 0xc1 || op == 0xab ||
		       op == 0xb3 || op == 0xbb || (op == 0xc7 && reg == 1) ||
		       (op == 0xba && reg >= 5);
	}
	modrm = p[i + 1];
	reg = (modrm >> 3) & 7;
	if (modrm >> 6 == 3)
		return false;
	if (op <= 0x31 && (op & 7) <= 1)
		return true;
	if (op == 0x80 || op == 0x81 || op == 0x83)
		return reg != 7;
	if (op == 0x86 || op == 0x87)
		return *xchg = true;
	if (op == 0xf6 || op == 0xf7)
		return reg == 2 || reg == 3;
	if (op == 0xfe || op == 0xff)
		return reg <= 1;
	return false;
}

/* I_LOCK, I_LOCK_DS, I_XCHG or -1 */
static int locked_kind(const uint8_t *p, size_t n)
{
	size_t i = 0;
	bool lock = false, xchg;

	while (i < n && legacy_prefix(p[i]))
		lock |= p[i++] == 0xf0;
	if (lock)
		return I_LOCK;
	if (!lockable(p + i, n - i, &xchg))
		return -1;
	if (n && p[0] == 0x3e)
		return I_LOCK_DS;
	return xchg ? I_XCHG : -1;
}

/* ---- kernel blocks, for a function's entries ---- */

struct block {
	uint64_t start, runs;
	struct block *next;
};

static struct block *blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;

/* Each kernel locked instruction's own count, so that a reader can say
 * which functions they are in (kallsyms).
 */
struct locked {
	uint64_t addr, runs;
	int kind;
	struct locked *next;
};

static struct locked *lockeds;

/* ---- snapshots ---- */

static const char *out_path = "cache_model.txt";
static uint64_t mark_addr;
static unsigned int marks;
static qemu_plugin_id_t plugin_id;
static struct {
	uint64_t l1d_size, l1d_ways, l1i_size, l1i_ways, l2_size, l2_ways, line;
} cfg = { 32768, 8, 32768, 8, 1048576, 16, 64 };

static void write_to(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return;
	}
	fprintf(f, "armed %d\nvcpus %u\nline %llu\nl1d %llu %llu\nl1i %llu %llu\nl2 %llu %llu\n",
		armed, nvcpus, (unsigned long long)cfg.line,
		(unsigned long long)cfg.l1d_size, (unsigned long long)cfg.l1d_ways,
		(unsigned long long)cfg.l1i_size, (unsigned long long)cfg.l1i_ways,
		(unsigned long long)cfg.l2_size, (unsigned long long)cfg.l2_ways);
	for (int d = 0; d < DOM_NR; d++) {
		for (int c = 0; c < C_NR; c++) {
			uint64_t sum = 0;

			for (unsigned int v = 0; v < nvcpus; v++)
				sum += vcpus[v].n[d][c];
			fprintf(f, "%c_%s %llu\n", dom_prefix[d], cname[c], (unsigned long long)sum);
		}
		for (int i = 0; i < I_NR; i++)
			fprintf(f, "%c_%s %llu\n", dom_prefix[d], iname[i],
				(unsigned long long)inl[d][i]);
	}
	{
		uint64_t io = 0;

		for (unsigned int v = 0; v < nvcpus; v++)
			io += vcpus[v].io;
		fprintf(f, "io_accesses %llu\n", (unsigned long long)io);
	}
	pthread_mutex_lock(&blocks_lock);
	for (struct block *b = blocks; b; b = b->next)
		if (b->runs)
			fprintf(f, "tb %llx %llu\n", (unsigned long long)b->start,
				(unsigned long long)b->runs);
	for (struct locked *l = lockeds; l; l = l->next)
		if (l->runs)
			fprintf(f, "lk %llx %s %llu\n", (unsigned long long)l->addr,
				iname[l->kind], (unsigned long long)l->runs);
	pthread_mutex_unlock(&blocks_lock);
	fclose(f);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

static void on_exit_write(qemu_plugin_id_t id, void *userdata)
{
	(void)id, (void)userdata;
	if (!mark_addr)
		write_to(out_path);
}

/* After the flush: every block is translated again, with the model. */
static void on_reset(qemu_plugin_id_t id)
{
	armed = true;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_write, NULL);
}

/* Runs in the vCPU's thread with the guest stopped at the mark. */
static void on_mark(unsigned int vcpu, void *userdata)
{
	char path[4096];

	(void)vcpu, (void)userdata;
	snprintf(path, sizeof(path), "%s.%u", out_path, ++marks);
	write_to(path);
	if (marks == 1 && !armed)
		qemu_plugin_reset(plugin_id, on_reset);
}

static bool is_kernel(uint64_t vaddr)
{
	return vaddr >> 63;
}

/* Before the first mark: only the mark. */
static void on_translate_idle(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	if (qemu_plugin_tb_vaddr(tb) == mark_addr)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t start = qemu_plugin_tb_vaddr(tb), prev = ~0ull;
	size_t n = qemu_plugin_tb_n_insns(tb);
	int dom = is_kernel(start) ? DOM_KERNEL : DOM_USER;

	(void)id;
	if (mark_addr && start == mark_addr)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &inl[dom][I_INSNS], n);
	if (dom == DOM_KERNEL) {
		struct block *b = calloc(1, sizeof(*b));

		if (b) {
			b->start = start;
			pthread_mutex_lock(&blocks_lock);
			b->next = blocks;
			blocks = b;
			pthread_mutex_unlock(&blocks_lock);
			qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
								 &b->runs, 1);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t addr = (uintptr_t)qemu_plugin_insn_haddr(insn);
		size_t size = qemu_plugin_insn_size(insn);
		uint64_t first, last;

		if (!addr)
			addr = qemu_plugin_insn_vaddr(insn);
		first = addr >> line_shift;
		last = (addr + (size ? size : 1) - 1) >> line_shift;
		if (first != prev)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_fetch, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)(first << 1 | dom));
		if (last != first)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_fetch, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)(last << 1 | dom));
		prev = last;
		qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, (void *)(uintptr_t)dom);
		if (dom == DOM_KERNEL) {
			int k = locked_kind(qemu_plugin_insn_data(insn), size);

			struct locked *l;

			if (k < 0)
				continue;
			qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
								   &inl[dom][k], 1);
			l = calloc(1, sizeof(*l));
			if (!l)
				continue;
			l->addr = qemu_plugin_insn_vaddr(insn);
			l->kind = k;
			pthread_mutex_lock(&blocks_lock);
			l->next = lockeds;
			lockeds = l;
			pthread_mutex_unlock(&blocks_lock);
			qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
								   &l->runs, 1);
		}
	}
}

/* name=value from the plugin's arguments, else the environment. */
static const char *setting(int argc, char **argv, const char *env)
{
	size_t len = strlen(env);

	for (int i = 0; i < argc; i++)
		if (!strncasecmp(argv[i], env, len) && argv[i][len] == '=')
			return argv[i] + len + 1;
	return getenv(env);
}

static int size_setting(int argc, char **argv, const char *env, uint64_t *v)
{
	const char *s = setting(argc, argv, env);
	char *end;

	if (!s || !*s)
		return 0;
	*v = strtoull(s, &end, 0);
	if (*end == 'k' || *end == 'K')
		*v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		*v <<= 20, end++;
	if (*end || !*v) {
		fprintf(stderr, "cache_model: %s=%s: expected a positive number (K, M allowed)\n",
			env, s);
		return -1;
	}
	return 0;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	const char *path = setting(argc, argv, "CACHE_MODEL_OUT");
	const char *mark = setting(argc, argv, "CACHE_MODEL_MARK");

	plugin_id = id;
	if (path && *path)
		out_path = path;
	if (mark && *mark)
		mark_addr = strtoull(mark, NULL, 16);
	if (size_setting(argc, argv, "CACHE_LINE", &cfg.line) ||
	    size_setting(argc, argv, "CACHE_L1D_SIZE", &cfg.l1d_size) ||
	    size_setting(argc, argv, "CACHE_L1D_ASSOC", &cfg.l1d_ways) ||
	    size_setting(argc, argv, "CACHE_L1I_SIZE", &cfg.l1i_size) ||
	    size_setting(argc, argv, "CACHE_L1I_ASSOC", &cfg.l1i_ways) ||
	    size_setting(argc, argv, "CACHE_L2_SIZE", &cfg.l2_size) ||
	    size_setting(argc, argv, "CACHE_L2_ASSOC", &cfg.l2_ways))
		return -1;
	if (cfg.line < 4 || (cfg.line & (cfg.line - 1))) {
		fprintf(stderr, "cache_model: CACHE_LINE=%llu: a power of two, 4 or more\n",
			(unsigned long long)cfg.line);
		return -1;
	}
	line_shift = __builtin_ctzll(cfg.line);
	nvcpus = info->system_emulation && info->system.max_vcpus > 0 ?
		 (unsigned int)info->system.max_vcpus : 1;
	vcpus = aligned_alloc(64, nvcpus * sizeof(*vcpus));
	if (!vcpus)
		return -1;
	memset(vcpus, 0, nvcpus * sizeof(*vcpus));
	for (unsigned int v = 0; v < nvcpus; v++)
		if (cache_init(&vcpus[v].l1d, cfg.l1d_size, cfg.l1d_ways, "L1d") ||
		    cache_init(&vcpus[v].l1i, cfg.l1i_size, cfg.l1i_ways, "L1i"))
			return -1;
	if (cache_init(&l2, cfg.l2_size, cfg.l2_ways, "L2"))
		return -1;
	if (mark_addr) {
		qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate_idle);
	} else {
		armed = true;
		qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
		qemu_plugin_register_atexit_cb(id, on_exit_write, NULL);
	}
	return 0;
}
