// SPDX-License-Identifier: GPL-2.0
/*
 * The model on synthetic page tables, for tests/host/test_tlbmodel.py:
 *
 *   modeltest 4k|2m PAGES ROUNDS [STRIDE [BETWEEN]]
 *
 * maps PAGES 4 KB pages of one address space (as 4 KB pages, or as 2 MB
 * pages covering them), touches one byte in every STRIDE-th (default 1)
 * of them, in order, ROUNDS times over, on one Golden Cove core, and
 * prints the counters as one JSON object. BETWEEN the rounds:
 *   flush   tm_flush() (a CR3 reload)
 *   remap   the same addresses mapped by 2 MB pages from then on, every
 *           4 KB page INVLPG'd (a collapse and its TLB flush)
 *   stale   the same remap without the INVLPGs
 *   asid    the next round runs in another address space (ASID) with the
 *           same addresses and tables, switched to by a CR3 write that
 *           keeps translations (bit 63)
 *   switch  the same, by CR3 writes that flush the PCID written
 *   nopcid  the same, by CR3 writes without PCIDs (as under TCG)
 *   nopcid-remap  nopcid, with the addresses mapped by 2 MB pages from
 *           the second round on (no INVLPG: the first ASID's tables
 *           changed while the other ran)
 *   data    nothing, but the data accesses go through the data caches
 *           too (by default only the walks' loads do)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define PHYS_BYTES	(256UL << 20)
#define BASE_VA		0x7f0000000000ULL

static uint8_t *phys;
static uint64_t next_table = 4096;	/* 0 stays unused */

static bool read_pte(void *ctx, uint64_t pa, uint64_t *val)
{
	(void)ctx;
	if (pa + 8 > PHYS_BYTES)
		return false;
	memcpy(val, phys + pa, 8);
	return true;
}

static uint64_t *entry(uint64_t table, uint64_t va, int level)
{
	return (uint64_t *)(phys + table) + ((va >> (12 + 9 * (level - 1))) & 511);
}

static uint64_t new_table(void)
{
	uint64_t t = next_table;

	next_table += 4096;
	if (next_table > PHYS_BYTES / 2) {
		fprintf(stderr, "modeltest: out of page-table memory\n");
		exit(1);
	}
	return t;
}

/* Map @va to @pa with a leaf at @level (1: 4 KB, 2: 2 MB). */
static void map(uint64_t root, uint64_t va, uint64_t pa, int level)
{
	uint64_t table = root;

	for (int l = 4; l > level; l--) {
		uint64_t *e = entry(table, va, l);

		if (!(*e & 1))
			*e = new_table() | 1;
		table = *e & 0x000ffffffffff000ULL;
	}
	*entry(table, va, level) = pa | 1 | (level > 1 ? 1ULL << 7 : 0);
}

int main(int argc, char **argv)
{
	struct tm_stats s = { 0 };
	struct tm_core core;
	unsigned long pages, rounds, stride = 1;
	const char *between = "";
	uint64_t root, root2m = 0;
	uint16_t asid = 1;
	bool huge;

	if (argc < 4 || (strcmp(argv[1], "4k") && strcmp(argv[1], "2m"))) {
		fprintf(stderr, "usage: modeltest 4k|2m PAGES ROUNDS [STRIDE]\n");
		return 2;
	}
	huge = !strcmp(argv[1], "2m");
	pages = strtoul(argv[2], NULL, 0);
	rounds = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		stride = strtoul(argv[4], NULL, 0);
	if (argc > 5)
		between = argv[5];
	phys = calloc(1, PHYS_BYTES);
	if (!phys || !stride || tm_core_init(&core, &tm_golden_cove))
		return 1;
	root = new_table();
	for (unsigned long i = 0; i < pages; i += huge ? 512 : 1)
		map(root, BASE_VA + i * 4096, PHYS_BYTES / 2 + i * 4096, huge ? 2 : 1);
	if (!strcmp(between, "remap") || !strcmp(between, "stale") ||
	    !strcmp(between, "nopcid-remap")) {
		root2m = new_table();
		for (unsigned long i = 0; i < pages; i += 512)
			map(root2m, BASE_VA + i * 4096, PHYS_BYTES / 2 + i * 4096, 2);
	}
	for (unsigned long r = 0; r < rounds; r++) {
		for (unsigned long i = 0; i < pages; i += stride)
			tm_access(&core, &s, root, asid, BASE_VA + i * 4096,
				  strcmp(between, "data") ? 0 : PHYS_BYTES / 2 + i * 4096,
				  read_pte, NULL);
		if (!strcmp(between, "flush"))
			tm_flush(&core, asid);
		if (root2m)
			root = root2m;
		if (!strcmp(between, "remap"))
			for (unsigned long i = 0; i < pages; i++)
				tm_invlpg(&core, asid, BASE_VA + i * 4096);
		if (!strcmp(between, "asid") || !strcmp(between, "switch") ||
		    !strncmp(between, "nopcid", 6)) {
			uint64_t cr3 = root;

			asid = 3 - asid;
			if (strncmp(between, "nopcid", 6))
				cr3 |= asid;	/* the PCID */
			if (!strcmp(between, "asid"))
				cr3 |= 1ULL << 63;
			tm_cr3_write(&core, asid, cr3, false);
		}
	}
	printf("{\"accesses\": %" PRIu64 ", \"l1_misses\": %" PRIu64 ", \"stlb_hits\": %" PRIu64
	       ", \"walks\": %" PRIu64 ", \"walks_4k\": %" PRIu64 ", \"walks_2m\": %" PRIu64
	       ", \"faults\": %" PRIu64 ", \"pwc_hits\": %" PRIu64 ", \"loads\": %" PRIu64
	       ", \"walk_cycles\": %" PRIu64 ", \"stlb_cycles\": %" PRIu64 "}\n",
	       s.accesses, s.l1_misses, s.stlb_hits, s.walks, s.walks_by_size[TM_4K],
	       s.walks_by_size[TM_2M], s.faults, s.pwc_hits,
	       s.loads[TM_L1D] + s.loads[TM_L2] + s.loads[TM_LLC] + s.loads[TM_DRAM],
	       s.walk_cycles, s.stlb_cycles);
	tm_core_free(&core);
	return 0;
}
