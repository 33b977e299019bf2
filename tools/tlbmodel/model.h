/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model of a CPU core's data address translation: L1 data TLBs per page
 * size, a second-level TLB (STLB) that holds every size, the paging-
 * structure caches (PML4E, PDPTE and PDE entries), and the data caches the
 * walker's loads go through. It is fed one data access at a time with the
 * address space it belongs to; on a miss in both TLB levels it walks the
 * address space's own page tables (through a callback that reads physical
 * memory), so the page size of every translation is the one the tables
 * map, and it charges the walk the latency of each page-table load that
 * the paging-structure caches did not spare.
 *
 * What it leaves out: the store DTLB (stores use the load DTLB here), the
 * 1 GB STLB (1 GB entries share the STLB), and any overlap of a walk with
 * other work or other walks (walk cycles add up serially; the CPI that
 * bench/modeled_tlb.py calibrates absorbs part of it).
 *
 * tools/tlbmodel/plugin.c runs it inside QEMU (TCG); tools/tlbmodel/
 * modeltest.c drives it with synthetic page tables for the host tests.
 */
#ifndef TLBMODEL_MODEL_H
#define TLBMODEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* Page sizes, by the level of their leaf entry. */
enum tm_size { TM_4K, TM_2M, TM_1G, TM_SIZES };

/* Where a page-table load found its line. */
enum tm_where { TM_L1D, TM_L2, TM_LLC, TM_DRAM, TM_WHERE };

/* A set-associative array of 64-bit keys with LRU replacement. */
struct tm_array {
	unsigned int sets, ways;
	uint64_t *keys;		/* sets * ways; 0: empty */
	uint64_t *stamps;	/* last use, per entry */
	uint64_t *vals;		/* paging-structure caches: the next table's address */
	uint32_t *epochs;	/* TLBs and paging-structure caches: see tm_cr3_write() */
	uint64_t clock;
};

/* The shape of one core: sizes in entries (TLBs) or bytes (caches). */
struct tm_params {
	unsigned int l1_entries[TM_SIZES], l1_ways[TM_SIZES];
	unsigned int stlb_entries, stlb_ways;
	unsigned int pml4e_entries, pdpte_entries, pde_entries;	/* fully associative */
	unsigned int cache_bytes[TM_DRAM], cache_ways[TM_DRAM];
	/* cycles: an STLB hit; a page-table load served from each place */
	unsigned int stlb_cycles, load_cycles[TM_WHERE];
	unsigned int levels;	/* paging levels: 4 or 5 */
};

/* Counters of one address space (or of a whole run). */
struct tm_stats {
	uint64_t insns, accesses;
	uint64_t l1_misses, stlb_hits, walks, faults, unreadable;
	uint64_t walks_by_size[TM_SIZES];	/* walks that ended in a page of each size */
	uint64_t pwc_hits;		/* walks a paging-structure cache shortened */
	uint64_t loads[TM_WHERE];	/* page-table loads, by where they were served */
	uint64_t stlb_cycles, walk_cycles;
};

/* One core. */
struct tm_core {
	const struct tm_params *p;
	struct tm_array l1[TM_SIZES], stlb, pml4e, pdpte, pde;
	struct tm_array cache[TM_DRAM];
	uint64_t last_page, last_line;	/* the previous access's, for a fast path */
	uint32_t epoch;			/* switches between address spaces so far */
	uint32_t *entered;		/* per ASID: the epoch it was last switched to */
};

/*
 * Read the 8-byte page-table entry at physical address @pa into @val;
 * false if it cannot be read.
 */
typedef bool (*tm_read_fn)(void *ctx, uint64_t pa, uint64_t *val);

extern const struct tm_params tm_golden_cove;

int tm_core_init(struct tm_core *c, const struct tm_params *p);
void tm_core_free(struct tm_core *c);
void tm_access(struct tm_core *c, struct tm_stats *s, uint64_t cr3, uint16_t asid,
	       uint64_t va, uint64_t pa, tm_read_fn read, void *ctx);
/* tm_flush()'s ASID for every address space's but the kernel half's. */
#define TM_USER_ASIDS	0xffffu

void tm_flush(struct tm_core *c, uint16_t asid);
void tm_cr3_write(struct tm_core *c, uint16_t asid, uint64_t cr3, bool same_root);
void tm_invlpg(struct tm_core *c, uint16_t asid, uint64_t va);

#endif
