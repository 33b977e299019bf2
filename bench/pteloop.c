// SPDX-License-Identifier: GPL-2.0
/*
 * How much slower QEMU's software emulation (TCG) runs a sample pass's
 * inner loop than the host CPU does: the same loop, timed in a guest and
 * natively, gives the factor by which the scaling run's CPU figures
 * (results/sampling.json, measured under TCG) overstate the hardware's.
 *
 * Over GIB GiB worth of 8-byte page table entries, all present and young
 * (the worst case: every page accessed), and a 64-byte "struct page" per
 * entry, as hawkeye_young_ptes() does for each entry:
 *   open:  read the entry; locked test-and-clear of its accessed bit; read
 *          the page's flags; the bits set again after (the next window)
 *   count: read the entry; test its accessed bit; set a bit in a bitmap
 * Prints one JSON line: nanoseconds per entry for each loop (the fastest
 * round), and WHERE it ran ("host" or "guest").
 *
 *   pteloop GIB ROUNDS WHERE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PRESENT	(1UL << 0)
#define YOUNG_BIT	5

struct page { uint64_t flags; uint64_t rest[7]; };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t gib, n, i;
	uint64_t *pte, *bitmap;
	struct page *pages;
	double open_s = 1e9, count_s = 1e9, t;
	unsigned long nr = 0;
	int rounds;

	if (argc != 4)
		return 2;
	gib = strtoul(argv[1], NULL, 0);
	rounds = atoi(argv[2]);
	n = gib << 18;		/* 4 KB pages */
	pte = malloc(n * sizeof(*pte));
	pages = calloc(n, sizeof(*pages));
	bitmap = calloc(n / 64 + 1, sizeof(*bitmap));
	if (!pte || !pages || !bitmap || !n || rounds < 1)
		return 1;
	for (i = 0; i < n; i++)
		pte[i] = (i << 12) | PRESENT | (1UL << YOUNG_BIT);
	for (int r = 0; r < rounds; r++) {
		t = now();
		for (i = 0; i < n; i++) {
			unsigned char was;

			if (!(pte[i] & PRESENT))
				continue;
			asm volatile("lock btrq %2, %0\n\tsetc %1"
				     : "+m"(pte[i]), "=q"(was) : "Ir"((long)YOUNG_BIT) : "cc", "memory");
			if (was && !(pages[pte[i] >> 12].flags & 1))
				nr++;
		}
		t = now() - t;
		open_s = t < open_s ? t : open_s;
		for (i = 0; i < n; i++)
			pte[i] |= 1UL << YOUNG_BIT;
		t = now();
		for (i = 0; i < n; i++)
			if ((pte[i] & PRESENT) && (pte[i] & (1UL << YOUNG_BIT)))
				bitmap[i / 64] |= 1UL << (i % 64), nr++;
		t = now() - t;
		count_s = t < count_s ? t : count_s;
		memset(bitmap, 0, (n / 64 + 1) * sizeof(*bitmap));
	}
	printf("{\"type\": \"pteloop\", \"where\": \"%s\", \"entries\": %zu, \"rounds\": %d, "
	       "\"open_ns_per_entry\": %.2f, \"count_ns_per_entry\": %.2f, \"nr\": %lu}\n",
	       argv[3], n, rounds, open_s * 1e9 / n, count_s * 1e9 / n, nr);
	return 0;
}
