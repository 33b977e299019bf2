// SPDX-License-Identifier: GPL-2.0
/*
 * The translation model of model.h: TLB lookups, page walks through the
 * paging-structure caches, and the data caches that serve the walks'
 * loads. Everything is keyed by 64-bit keys, 0 meaning empty.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

/*
 * Intel's Golden Cove core (Sapphire Rapids and Emerald Rapids Xeons, the
 * CPU of the native runs in results/), as the Intel 64 and IA-32
 * Architectures Optimization Reference Manual describes it: load DTLB 96
 * entries for 4 KB pages (6-way), 32 for 2 MB (4-way), 8 for 1 GB (fully
 * associative); STLB 2048 entries (16-way) for 4 KB and 2 MB pages; L1D
 * 48 KB 12-way, L2 2 MB 16-way. The rest is not documented and is this
 * model's assumption, each a parameter: the paging-structure caches (4
 * PML4E, 4 PDPTE and 32 PDE entries, as measured on earlier Intel cores),
 * one core's share of the LLC (16 MB), and the latencies (STLB hit 8
 * cycles; loads 5, 16, 80 and 250 cycles from L1D, L2, LLC and DRAM).
 * 1 GB translations share the STLB here.
 */
const struct tm_params tm_golden_cove = {
	.l1_entries = { 96, 32, 8 },
	.l1_ways = { 6, 4, 8 },
	.stlb_entries = 2048,
	.stlb_ways = 16,
	.pml4e_entries = 4,
	.pdpte_entries = 4,
	.pde_entries = 32,
	.cache_bytes = { 48 << 10, 2 << 20, 16 << 20 },
	.cache_ways = { 12, 16, 16 },
	.stlb_cycles = 8,
	.load_cycles = { 5, 16, 80, 250 },
	.levels = 4,
};

static int array_init(struct tm_array *a, unsigned int entries, unsigned int ways, bool vals)
{
	if (!ways || entries % ways)
		return -1;
	a->sets = entries / ways;
	a->ways = ways;
	a->clock = 0;
	a->keys = calloc(entries, sizeof(*a->keys));
	a->stamps = calloc(entries, sizeof(*a->stamps));
	a->epochs = calloc(entries, sizeof(*a->epochs));
	a->vals = vals ? calloc(entries, sizeof(*a->vals)) : NULL;
	return a->keys && a->stamps && a->epochs && (a->vals || !vals) ? 0 : -1;
}

static void array_free(struct tm_array *a)
{
	free(a->keys);
	free(a->stamps);
	free(a->vals);
	free(a->epochs);
	a->keys = NULL;
	a->stamps = NULL;
	a->vals = NULL;
	a->epochs = NULL;
}

/* The set of @key: its low bits above the 3 that name a TLB entry's size. */
static unsigned int array_set(const struct tm_array *a, uint64_t key)
{
	return (unsigned int)((key >> 3) % a->sets) * a->ways;
}

/* @key's slot, or -1; a hit makes it the most recently used of its set. */
static int array_find(struct tm_array *a, uint64_t key)
{
	unsigned int i, base = array_set(a, key);

	for (i = base; i < base + a->ways; i++) {
		if (a->keys[i] == key) {
			a->stamps[i] = ++a->clock;
			return (int)i;
		}
	}
	return -1;
}

/* Put @key in, in place of its set's least recently used entry: its slot. */
static int array_insert(struct tm_array *a, uint64_t key)
{
	unsigned int i, base = array_set(a, key), victim = base;

	for (i = base; i < base + a->ways; i++) {
		if (a->keys[i] == key || !a->keys[i]) {
			victim = i;
			break;
		}
		if (a->stamps[i] < a->stamps[victim])
			victim = i;
	}
	a->keys[victim] = key;
	a->stamps[victim] = ++a->clock;
	return (int)victim;
}

/*
 * Drop every entry of @asid (the key's top 16 bits are asid + 1), or with
 * TM_USER_ASIDS of every ASID but 0 (the kernel's half).
 */
static void array_flush(struct tm_array *a, uint16_t asid)
{
	for (unsigned int i = 0; i < a->sets * a->ways; i++)
		if (asid == TM_USER_ASIDS ? a->keys[i] >> 48 > 1 :
		    a->keys[i] >> 48 == (uint64_t)asid + 1)
			a->keys[i] = 0;
}

static void array_remove(struct tm_array *a, uint64_t key)
{
	unsigned int i, base = array_set(a, key);

	for (i = base; i < base + a->ways; i++)
		if (a->keys[i] == key)
			a->keys[i] = 0;
}

int tm_core_init(struct tm_core *c, const struct tm_params *p)
{
	int i, err = 0;

	memset(c, 0, sizeof(*c));
	c->p = p;
	c->entered = calloc(1 << 16, sizeof(*c->entered));
	err |= !c->entered;
	for (i = 0; i < TM_SIZES; i++)
		err |= array_init(&c->l1[i], p->l1_entries[i], p->l1_ways[i], false);
	err |= array_init(&c->stlb, p->stlb_entries, p->stlb_ways, false);
	err |= array_init(&c->pml4e, p->pml4e_entries, p->pml4e_entries, true);
	err |= array_init(&c->pdpte, p->pdpte_entries, p->pdpte_entries, true);
	err |= array_init(&c->pde, p->pde_entries, p->pde_entries, true);
	for (i = 0; i < TM_DRAM; i++)
		err |= array_init(&c->cache[i], p->cache_bytes[i] / 64, p->cache_ways[i], false);
	if (err || (p->levels != 4 && p->levels != 5)) {
		tm_core_free(c);
		return -1;
	}
	return 0;
}

void tm_core_free(struct tm_core *c)
{
	int i;

	for (i = 0; i < TM_SIZES; i++)
		array_free(&c->l1[i]);
	array_free(&c->stlb);
	array_free(&c->pml4e);
	array_free(&c->pdpte);
	array_free(&c->pde);
	for (i = 0; i < TM_DRAM; i++)
		array_free(&c->cache[i]);
	free(c->entered);
	c->entered = NULL;
}

/*
 * A key for address space @asid: the page (or table) number @n of 45 bits,
 * and 3 low bits, the page size for TLB entries. The upper half of the
 * address space (the kernel's, global) is everyone's: asid 0.
 */
static uint64_t key(uint16_t asid, uint64_t va, uint64_t n, unsigned int size)
{
	if (va >> 63)
		asid = 0;
	return (uint64_t)(asid + 1) << 48 | (n & ((1ULL << 45) - 1)) << 3 | size;
}

static const unsigned int size_shift[TM_SIZES] = { 12, 21, 30 };

/* The caches, for one line (physical address @pa): where it was found. */
static enum tm_where cache_access(struct tm_core *c, uint64_t pa)
{
	uint64_t line = (pa >> 6) << 3 | 1;	/* never 0 */
	int i;

	for (i = 0; i < TM_DRAM; i++)
		if (array_find(&c->cache[i], line) >= 0)
			break;
	for (int j = 0; j < i; j++)
		array_insert(&c->cache[j], line);
	return i;
}

#define PTE_PRESENT	1ULL
#define PTE_PS		(1ULL << 7)
#define PTE_ADDR	0x000ffffffffff000ULL

/*
 * The level-@level entry of @va's translation in the tables at @cr3, read
 * at no cost (a check, not a walk): false if a level above maps a page or
 * nothing, or an entry cannot be read.
 */
static bool entry_at(const struct tm_core *c, uint64_t cr3, uint64_t va, unsigned int level,
		     tm_read_fn read, void *ctx, uint64_t *e)
{
	uint64_t table = cr3 & PTE_ADDR;

	for (unsigned int l = c->p->levels;; l--) {
		if (!read(ctx, table + ((va >> (3 + 9 * l)) & 511) * 8, e))
			return false;
		if (l == level)
			return true;
		if (!(*e & PTE_PRESENT) || (*e & PTE_PS))
			return false;
		table = *e & PTE_ADDR;
	}
}

/*
 * Whether the entry in @slot of @a (a TLB entry for a page whose leaf is
 * at @level, or a paging-structure cache entry from a level-@level entry)
 * may be used. One kept from before @asid was last switched to
 * (tm_cr3_write()) is checked against the tables first: if they still say
 * the same, it stands until the next switch; if not, they changed while
 * @asid ran elsewhere, and every entry of @asid goes, as Linux flushes a
 * PCID whose address space changed meanwhile.
 */
static bool usable(struct tm_core *c, struct tm_array *a, int slot, uint16_t asid,
		   uint64_t cr3, uint64_t va, unsigned int level, tm_read_fn read, void *ctx)
{
	uint64_t e;
	bool ok;

	if (a->epochs[slot] >= c->entered[asid])
		return true;
	ok = entry_at(c, cr3, va, level, read, ctx, &e) && (e & PTE_PRESENT);
	if (ok && a->vals)
		ok = !(e & PTE_PS) && (e & PTE_ADDR) == a->vals[slot];
	else if (ok)
		ok = level == 1 || (e & PTE_PS);
	if (ok) {
		a->epochs[slot] = c->epoch;
		return true;
	}
	tm_flush(c, asid);
	return false;
}

/* array_insert() of an entry that is current now. */
static int insert(struct tm_core *c, struct tm_array *a, uint64_t key)
{
	int slot = array_insert(a, key);

	a->epochs[slot] = c->epoch;
	return slot;
}

/*
 * Walk @va's translation in the tables at @cr3: returns the size of the
 * page it maps, TM_SIZES if it maps none, or -1 if an entry cannot be read
 * (the tables are not where the reader looks: early boot). As the
 * hardware's, the walk starts below the longest prefix the paging-
 * structure caches hold (they keep the next table's address) and charges
 * each load what the data caches say; the caches keep the non-leaf
 * entries it used.
 */
static int walk(struct tm_core *c, struct tm_stats *s, uint64_t cr3, uint16_t asid,
		uint64_t va, tm_read_fn read, void *ctx)
{
	const struct tm_params *p = c->p;
	/* The cache of level-L entries, keyed by the address bits above them. */
	struct tm_array *pwc[5] = { NULL, NULL, &c->pde, &c->pdpte, &c->pml4e };
	uint64_t table = cr3 & PTE_ADDR, e;
	unsigned int level = p->levels;
	int slot;

	for (unsigned int l = 2; l <= 4; l++) {
		slot = array_find(pwc[l], key(asid, va, va >> (3 + 9 * l), 0));
		if (slot >= 0 && usable(c, pwc[l], slot, asid, cr3, va, l, read, ctx)) {
			table = pwc[l]->vals[slot];
			level = l - 1;
			s->pwc_hits++;
			break;
		}
	}
	for (; level >= 1; level--) {
		uint64_t pa = table + ((va >> (3 + 9 * level)) & 511) * 8;
		enum tm_where w;

		if (!read(ctx, pa, &e))
			return -1;
		w = cache_access(c, pa);
		s->loads[w]++;
		s->walk_cycles += p->load_cycles[w];
		if (!(e & PTE_PRESENT))
			return TM_SIZES;
		if (level == 1 || ((level == 2 || level == 3) && (e & PTE_PS)))
			return level - 1;
		table = e & PTE_ADDR;
		if (level <= 4) {
			slot = insert(c, pwc[level], key(asid, va, va >> (3 + 9 * level), 0));
			pwc[level]->vals[slot] = table;
		}
	}
	return TM_SIZES;
}

/**
 * tm_access() - one data access
 * @c: the core it runs on
 * @s: the counters of its address space
 * @cr3: the address space's page-table root (CR3)
 * @asid: a small number naming the address space in the TLBs (as a PCID)
 * @va: the virtual address
 * @pa: its physical address, for the data caches the walks' loads share
 *	(0: not known, the caches see the walks' loads only)
 * @read: reads a page-table entry by physical address
 * @ctx: @read's argument
 */
void tm_access(struct tm_core *c, struct tm_stats *s, uint64_t cr3, uint16_t asid,
	       uint64_t va, uint64_t pa, tm_read_fn read, void *ctx)
{
	uint64_t page = key(asid, va, va >> 12, TM_4K);
	int i, size, slot;

	s->accesses++;
	if (pa && pa >> 6 != c->last_line) {
		cache_access(c, pa);
		c->last_line = pa >> 6;
	}
	if (page == c->last_page)
		return;
	for (i = 0; i < TM_SIZES; i++) {
		slot = array_find(&c->l1[i], key(asid, va, va >> size_shift[i], i));
		if (slot >= 0 && usable(c, &c->l1[i], slot, asid, cr3, va, i + 1, read, ctx))
			goto hit;
	}
	s->l1_misses++;
	for (i = 0; i < TM_SIZES; i++) {
		slot = array_find(&c->stlb, key(asid, va, va >> size_shift[i], i));
		if (slot >= 0 && usable(c, &c->stlb, slot, asid, cr3, va, i + 1, read, ctx)) {
			s->stlb_hits++;
			s->stlb_cycles += c->p->stlb_cycles;
			insert(c, &c->l1[i], key(asid, va, va >> size_shift[i], i));
			goto hit;
		}
	}
	s->walks++;
	size = walk(c, s, cr3, asid, va, read, ctx);
	if (size < 0 || size == TM_SIZES) {
		if (size < 0)
			s->unreadable++;
		else
			s->faults++;
		c->last_page = 0;
		return;
	}
	s->walks_by_size[size]++;
	insert(c, &c->stlb, key(asid, va, va >> size_shift[size], size));
	insert(c, &c->l1[size], key(asid, va, va >> size_shift[size], size));
hit:
	c->last_page = page;
}

/* Drop every translation of @asid (a CR3 reload, a new address space). */
void tm_flush(struct tm_core *c, uint16_t asid)
{
	for (int i = 0; i < TM_SIZES; i++)
		array_flush(&c->l1[i], asid);
	array_flush(&c->stlb, asid);
	array_flush(&c->pml4e, asid);
	array_flush(&c->pdpte, asid);
	array_flush(&c->pde, asid);
	c->last_page = 0;
}

/**
 * tm_cr3_write() - a MOV to CR3 loading the address space of @asid
 * @c: the core
 * @asid: the model's ASID of the root written
 * @cr3: the value written
 * @same_root: whether the root was already loaded (a reload, not a switch)
 *
 * The modeled core has PCIDs, as the native machine has and TCG has not.
 * A guest with PCIDs says what to keep: bit 63 keeps every translation,
 * else the PCID written (the low 12 bits) loses its own; Linux clears bit
 * 63 when the address space changed while it ran elsewhere, or the PCID is
 * reused. A reload of the same root flushes it. A guest without PCIDs (TCG)
 * flushes everything at every switch, which the modeled core would not:
 * there, @asid's translations are kept, and each is checked against the
 * tables at its first use after the switch (usable()).
 */
void tm_cr3_write(struct tm_core *c, uint16_t asid, uint64_t cr3, bool same_root)
{
	c->last_page = 0;
	if (cr3 >> 63)
		return;
	if ((cr3 & 0xfff) || same_root)
		tm_flush(c, asid);
	else
		c->entered[asid] = ++c->epoch;
}

/*
 * INVLPG: drop @va's translation, of any size, and (as Intel's INVLPG
 * does) every paging-structure cache entry of @asid.
 */
void tm_invlpg(struct tm_core *c, uint16_t asid, uint64_t va)
{
	for (int i = 0; i < TM_SIZES; i++) {
		array_remove(&c->l1[i], key(asid, va, va >> size_shift[i], i));
		array_remove(&c->stlb, key(asid, va, va >> size_shift[i], i));
	}
	array_flush(&c->pml4e, asid);
	array_flush(&c->pdpte, asid);
	array_flush(&c->pde, asid);
	c->last_page = 0;
}
