// SPDX-License-Identifier: GPL-2.0
/*
 * The TLB model (model.h) as a QEMU TCG plugin for x86-64 system guests:
 * every user-mode data access of every vCPU goes through a model core of
 * its own, and the counters are kept per guest address space (per
 * page-table root, CR3). QEMU 10's plugin API gives the plugin the guest's
 * registers and memory: the plugin learns each vCPU's CR3 from the
 * instructions that write it (and its flushes from those and from
 * INVLPG), and reads page-table entries through the guest kernel's direct
 * map. The guest must run with 4-level paging, without KASLR and without
 * page-table isolation ("no5lvl nokaslr nopti"), so that the direct map
 * is at its fixed address and is mapped whatever runs.
 *
 *   -plugin tlbmodel.so,out=FILE[,direct_map=ADDR][,all=on]
 *
 * Only the address spaces a guest program has named are modeled (a
 * workload names its own when its timed part starts: its set-up runs at
 * TCG's speed), every one with all=on.
 *
 * A guest program talks to the plugin with CPUID and a leaf no CPU has
 * (the instruction runs natively as usual):
 *   EAX 0x484b0001, EBX tag, ECX pid: names the current address space (and
 *                                    starts its translations afresh)
 *   EAX 0x484b0002, EBX mark: writes every address space's counters now
 * The counters go to FILE as JSON lines, one per write and one at exit.
 */
#include <glib.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <qemu-plugin.h>

#include "model.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LEAF_NAME	0x484b0001u
#define LEAF_WRITE	0x484b0002u
#define CR3_ROOT	0x000ffffffffff000ULL

/*
 * An address space (a page-table root), what the guest told about it, and
 * its counters on each vCPU (each vCPU writes only its own).
 */
struct space {
	uint64_t root;			/* CR3 & CR3_ROOT */
	uint64_t tag, pid;
	uint16_t asid;
	struct tm_stats *on;		/* [nvcpus] */
	struct space *next;
};

struct vcpu {
	struct tm_core core;
	uint64_t cr3;
	struct space *cur;
	uint64_t insns_at_switch;	/* the vCPU's count when @cur began */
	struct qemu_plugin_register *gpr[16], *rax, *rbx, *rcx;
	GByteArray *buf;
};

static struct vcpu *vcpus;
static int nvcpus;
static struct qemu_plugin_scoreboard *insn_board;
static qemu_plugin_u64 insns;
static uint64_t direct_map = 0xffff888000000000ULL;
static bool model_all;			/* every space, not only the named ones */
static FILE *out;
static struct space *spaces;		/* under @lock */
static uint16_t next_asid = 1;
static uint64_t writes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static bool read_pte(void *ctx, uint64_t pa, uint64_t *val)
{
	struct vcpu *v = ctx;

	if (!qemu_plugin_read_memory_vaddr(direct_map + pa, v->buf, 8) || v->buf->len < 8)
		return false;
	memcpy(val, v->buf->data, 8);
	return true;
}

static uint64_t read_reg(struct vcpu *v, struct qemu_plugin_register *r)
{
	uint64_t val = 0;
	int n;

	if (!r)
		return 0;
	/* It appends; read_pte() leaves a PTE there. */
	g_byte_array_set_size(v->buf, 0);
	n = qemu_plugin_read_register(r, v->buf);
	if (n > 0)
		memcpy(&val, v->buf->data, n < 8 ? n : 8);
	return val;
}

/*
 * Charge the instructions run since the last switch to the current space.
 * Under the lock, as write_counters() reads both halves of the sum.
 */
static void settle_insns(unsigned int i)
{
	struct vcpu *v = &vcpus[i];
	uint64_t now = qemu_plugin_u64_get(insns, i);

	if (v->cur)
		v->cur->on[i].insns += now - v->insns_at_switch;
	v->insns_at_switch = now;
}

/* A fresh ASID; after 65534 of them they are used again (never seen). */
static uint16_t new_asid(void)
{
	uint16_t asid = next_asid;

	next_asid = next_asid == UINT16_MAX - 1 ? 1 : next_asid + 1;
	return asid;
}

/* The space of @root, made on first sight; under the lock. */
static struct space *space_of(uint64_t root)
{
	struct space *sp;

	for (sp = spaces; sp && sp->root != root; sp = sp->next)
		;
	if (!sp) {
		sp = calloc(1, sizeof(*sp));
		if (!sp || !(sp->on = calloc(nvcpus, sizeof(*sp->on))))
			abort();
		sp->root = root;
		sp->asid = new_asid();
		sp->next = spaces;
		spaces = sp;
	}
	return sp;
}

/*
 * Before a MOV to CR3: the new root is in the source register. Whether it
 * flushes, and what, is the CPU's rule (tm_cr3_write()).
 */
static void cr3_write(unsigned int i, void *udata)
{
	struct vcpu *v = &vcpus[i];
	uint64_t cr3 = read_reg(v, v->gpr[(uintptr_t)udata]);
	uint64_t root = cr3 & CR3_ROOT;
	bool same = v->cur && v->cur->root == root;

	pthread_mutex_lock(&lock);
	settle_insns(i);
	if (!same)
		v->cur = root ? space_of(root) : NULL;
	pthread_mutex_unlock(&lock);
	tm_cr3_write(&v->core, v->cur ? v->cur->asid : 0, cr3, same);
	v->cr3 = cr3;
}

/* Before an INVLPG (%reg): the address is in the register. */
static void invlpg(unsigned int i, void *udata)
{
	struct vcpu *v = &vcpus[i];

	if (v->cur)
		tm_invlpg(&v->core, v->cur->asid, read_reg(v, v->gpr[(uintptr_t)udata]));
}

/*
 * Before an INVPCID (a guest with PCIDs; TCG has none): Linux without
 * page-table isolation issues only the all-contexts kinds (a global
 * flush), so every user translation goes.
 */
static void invpcid(unsigned int i, void *udata)
{
	(void)udata;
	tm_flush(&vcpus[i].core, TM_USER_ASIDS);
	vcpus[i].core.last_page = 0;
}

static void mem_access(unsigned int i, qemu_plugin_meminfo_t info, uint64_t va, void *udata)
{
	struct vcpu *v = &vcpus[i];
	struct qemu_plugin_hwaddr *hw;
	uint64_t pa = 0;

	(void)udata;
	if (!v->cur || (!model_all && !v->cur->tag))
		return;
	hw = qemu_plugin_get_hwaddr(info, va);
	if (hw) {
		if (qemu_plugin_hwaddr_is_io(hw))
			return;
		pa = qemu_plugin_hwaddr_phys_addr(hw);
	}
	tm_access(&v->core, &v->cur->on[i], v->cr3, v->cur->asid, va, pa, read_pte, v);
}

#define STAT(f) " \"" #f "\": %" PRIu64

/*
 * Every space's counters, summed over the vCPUs, as one JSON object: @why
 * "mark" (from the space @from, with @mark) or "exit". Other vCPUs go on
 * counting meanwhile: a write is not a snapshot of them.
 */
static void write_counters(const char *why, uint64_t from, uint64_t mark)
{
	struct timespec ts;
	bool first = true;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&lock);
	if (!out) {
		pthread_mutex_unlock(&lock);
		return;
	}
	fprintf(out, "{\"type\": \"%s\", \"seq\": %" PRIu64 ", \"from\": %" PRIu64
		", \"mark\": %" PRIu64 ", \"host_s\": %.3f, \"spaces\": [", why, ++writes, from,
		mark, ts.tv_sec + ts.tv_nsec / 1e9);
	for (struct space *sp = spaces; sp; sp = sp->next) {
		struct tm_stats t = { 0 };
		uint64_t *sum = (uint64_t *)&t;

		for (int j = 0; j < nvcpus; j++) {
			const uint64_t *a = (const uint64_t *)&sp->on[j];

			for (size_t k = 0; k < sizeof(t) / sizeof(*sum); k++)
				sum[k] += a[k];
			/* What vCPU j has run in it since its last switch. */
			if (vcpus[j].cur == sp)
				t.insns += qemu_plugin_u64_get(insns, j) - vcpus[j].insns_at_switch;
		}
		/* Named ones always: a workload's first write is at its start. */
		if (!t.accesses && !sp->tag)
			continue;
		fprintf(out, "%s{\"root\": %" PRIu64 ", \"tag\": %" PRIu64 ", \"pid\": %" PRIu64 ","
			STAT(insns) "," STAT(accesses) "," STAT(l1_misses) "," STAT(stlb_hits) ","
			STAT(walks) "," STAT(faults) "," STAT(unreadable) ", \"walks_4k\": %" PRIu64
			", \"walks_2m\": %" PRIu64 ", \"walks_1g\": %" PRIu64 "," STAT(pwc_hits)
			", \"loads_l1d\": %" PRIu64 ", \"loads_l2\": %" PRIu64
			", \"loads_llc\": %" PRIu64 ", \"loads_dram\": %" PRIu64 ","
			STAT(stlb_cycles) "," STAT(walk_cycles) "}",
			first ? "" : ", ", sp->root, sp->tag, sp->pid,
			t.insns, t.accesses, t.l1_misses, t.stlb_hits, t.walks, t.faults, t.unreadable,
			t.walks_by_size[TM_4K], t.walks_by_size[TM_2M], t.walks_by_size[TM_1G],
			t.pwc_hits, t.loads[TM_L1D], t.loads[TM_L2], t.loads[TM_LLC],
			t.loads[TM_DRAM], t.stlb_cycles, t.walk_cycles);
		first = false;
	}
	fprintf(out, "]}\n");
	fflush(out);
	pthread_mutex_unlock(&lock);
}

/* Before a CPUID: one of ours? */
static void cpuid(unsigned int i, void *udata)
{
	struct vcpu *v = &vcpus[i];
	uint32_t leaf = (uint32_t)read_reg(v, v->rax);

	(void)udata;
	if (leaf == LEAF_WRITE) {
		pthread_mutex_lock(&lock);
		settle_insns(i);
		pthread_mutex_unlock(&lock);
		write_counters("mark", v->cur ? v->cur->root : 0, read_reg(v, v->rbx));
	} else if (leaf == LEAF_NAME && v->cur) {
		uint64_t tag = read_reg(v, v->rbx), pid = read_reg(v, v->rcx);

		/*
		 * A named space starts afresh: its root may be a page that an
		 * earlier process's tables had, whose translations its ASID kept.
		 */
		pthread_mutex_lock(&lock);
		v->cur->tag = tag;
		v->cur->pid = pid;
		v->cur->asid = new_asid();
		pthread_mutex_unlock(&lock);
		v->core.last_page = 0;
	}
}

/*
 * Instruction 0F @op with ModRM mod @mod and reg @reg, whose r/m is a
 * register (mod 3) or an address in a register without SIB or
 * displacement (mod 0, r/m not 4 or 5): that register's number (REX.B
 * extends it), or -1. MOV to CR3 is 0F 22 mod 3 reg 3; INVLPG is 0F 01
 * mod 0 reg 7, the form Linux's invlpg (%reg) has.
 */
static int reg_operand(const uint8_t *b, size_t len, uint8_t op, int mod, int reg)
{
	size_t k = 0;
	int rex_b = 0, rm;

	while (k < len && (b[k] == 0x66 || b[k] == 0x67 || b[k] == 0xf2 || b[k] == 0xf3))
		k++;
	if (k < len && (b[k] & 0xf0) == 0x40)
		rex_b = b[k++] & 1;
	if (k + 3 > len || b[k] != 0x0f || b[k + 1] != op)
		return -1;
	rm = b[k + 2] & 7;
	if ((b[k + 2] >> 6) != mod || ((b[k + 2] >> 3) & 7) != reg ||
	    (mod == 0 && (rm == 4 || rm == 5)))
		return -1;
	return rm | rex_b << 3;
}

/*
 * Before an INVLPG whose address the plugin does not decode (not the
 * "invlpg (%reg)" form Linux has): the current address space's
 * translations all go, which is never too few.
 */
static void invlpg_any(unsigned int i, void *udata)
{
	struct vcpu *v = &vcpus[i];

	(void)udata;
	if (v->cur)
		tm_flush(&v->core, v->cur->asid);
}

/* INVLPG in any form: [prefixes] [REX] 0F 01, ModRM reg 7, mod not 3. */
static bool is_invlpg(const uint8_t *b, size_t len)
{
	size_t k = 0;

	while (k < len && (b[k] == 0x66 || b[k] == 0x67 || b[k] == 0xf2 || b[k] == 0xf3))
		k++;
	if (k < len && (b[k] & 0xf0) == 0x40)
		k++;
	return k + 3 <= len && b[k] == 0x0f && b[k + 1] == 0x01 &&
	       ((b[k + 2] >> 3) & 7) == 7 && (b[k + 2] >> 6) != 3;
}

/* INVPCID: 66 [REX] 0F 38 82 /r. */
static bool is_invpcid(const uint8_t *b, size_t len)
{
	size_t k = len && b[0] == 0x66 ? 1 : len;

	if (k < len && (b[k] & 0xf0) == 0x40)
		k++;
	return k + 3 <= len && b[k] == 0x0f && b[k + 1] == 0x38 && b[k + 2] == 0x82;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	bool user;

	(void)id;
	/*
	 * User mode only: the guest's clock ticks in host time, so under TCG
	 * its kernel runs 50 to 100 times more timer work per unit of user
	 * work than natively; modeled, those accesses would crowd the TLBs.
	 */
	user = !(qemu_plugin_tb_vaddr(tb) >> 63);
	if (user)
		qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64,
								  insns, n);
	for (size_t k = 0; k < n; k++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);
		uint8_t b[16];
		size_t len = qemu_plugin_insn_data(insn, b, sizeof(b));
		int src = reg_operand(b, len, 0x22, 3, 3);
		int addr = reg_operand(b, len, 0x01, 0, 7);

		if (src >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, cr3_write, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)src);
		else if (addr >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, invlpg, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)addr);
		else if (is_invlpg(b, len))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, invlpg_any, QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
		else if (is_invpcid(b, len))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, invpcid, QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
		else if (len >= 2 && b[0] == 0x0f && b[1] == 0xa2)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, cpuid, QEMU_PLUGIN_CB_R_REGS,
							       NULL);
		if (user)
			qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, NULL);
	}
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int i)
{
	static const char *const gprs[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi",
		"rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	struct vcpu *v = &vcpus[i];
	GArray *regs = qemu_plugin_get_registers();

	(void)id;
	if (tm_core_init(&v->core, &tm_golden_cove))
		abort();
	v->buf = g_byte_array_new();
	for (guint r = 0; r < regs->len; r++) {
		qemu_plugin_reg_descriptor *d = &g_array_index(regs, qemu_plugin_reg_descriptor, r);

		for (int g = 0; g < 16; g++)
			if (!strcmp(d->name, gprs[g]))
				v->gpr[g] = d->handle;
	}
	g_array_free(regs, true);
	v->rax = v->gpr[0];
	v->rcx = v->gpr[1];
	v->rbx = v->gpr[3];
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	for (int i = 0; i < nvcpus; i++)
		settle_insns(i);
	write_counters("exit", 0, 0);
	pthread_mutex_lock(&lock);
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;

	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "tlbmodel: x86_64 system emulation only\n");
		return -1;
	}
	for (int k = 0; k < argc; k++) {
		if (!strncmp(argv[k], "out=", 4)) {
			path = argv[k] + 4;
		} else if (!strncmp(argv[k], "direct_map=", 11)) {
			direct_map = strtoull(argv[k] + 11, NULL, 0);
		} else if (!strcmp(argv[k], "all=on") || !strcmp(argv[k], "all=off")) {
			model_all = !strcmp(argv[k], "all=on");
		} else {
			fprintf(stderr, "tlbmodel: unknown argument %s\n", argv[k]);
			return -1;
		}
	}
	out = path ? fopen(path, "w") : NULL;
	if (!out) {
		fprintf(stderr, "tlbmodel: out=FILE is needed and must be writable\n");
		return -1;
	}
	nvcpus = info->system.max_vcpus;
	vcpus = calloc(nvcpus, sizeof(*vcpus));
	if (!vcpus)
		return -1;
	insn_board = qemu_plugin_scoreboard_new(sizeof(uint64_t));
	insns = qemu_plugin_scoreboard_u64(insn_board);
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
