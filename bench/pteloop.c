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
 * And the byte work of the other two threads, over BUF_MIB of memory:
 *   zero:  hawkeye_zerod's clear_page_nt(), a 4 KB page zeroed with
 *          non-temporal 8-byte stores, and a fence
 *   scan:  hawkeye_debloatd's memchr_inv() over a zero-filled 4 KB page,
 *          8 bytes at a time (all of it: the page is zero)
 * Prints one JSON line: nanoseconds per entry for each loop of the pass
 * and per 4 KB page for the other two (the fastest round), and WHERE it
 * ran ("host" or "guest").
 *
 *   pteloop GIB ROUNDS WHERE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>

#define PRESENT	(1UL << 0)
#define YOUNG_BIT	5

#define BUF_MIB	256UL	/* beyond the caches */
#define PAGE_WORDS	512

struct page { uint64_t flags; uint64_t rest[7]; };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The fastest of ROUNDS zeroing passes over @buf, in ns per 4 KB page. */
static double zero_ns(long long *buf, size_t pages, int rounds)
{
	double best = 1e9;

	for (int r = 0; r < rounds; r++) {
		double t = now();

		for (size_t i = 0; i < pages * PAGE_WORDS; i++)
			_mm_stream_si64(&buf[i], 0);
		_mm_sfence();
		t = now() - t;
		best = t < best ? t : best;
	}
	return best * 1e9 / pages;
}

/* The same for reading each page for a non-zero word; *@nz counts them. */
static double scan_ns(const uint64_t *buf, size_t pages, int rounds,
		      unsigned long *nz)
{
	double best = 1e9;

	for (int r = 0; r < rounds; r++) {
		double t = now();

		for (size_t p = 0; p < pages; p++) {
			for (size_t i = 0; i < PAGE_WORDS; i++) {
				if (buf[p * PAGE_WORDS + i]) {
					(*nz)++;
					break;
				}
			}
		}
		t = now() - t;
		best = t < best ? t : best;
	}
	return best * 1e9 / pages;
}

int main(int argc, char **argv)
{
	size_t gib, n, i;
	uint64_t *pte, *bitmap, *buf;
	double zero_s, scan_s;
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
	free(pte);
	free(pages);
	free(bitmap);
	buf = malloc(BUF_MIB << 20);
	if (!buf)
		return 1;
	zero_s = zero_ns((long long *)buf, BUF_MIB << 8, rounds);
	scan_s = scan_ns(buf, BUF_MIB << 8, rounds, &nr);
	printf("{\"type\": \"pteloop\", \"where\": \"%s\", \"entries\": %zu, \"rounds\": %d, "
	       "\"open_ns_per_entry\": %.2f, \"count_ns_per_entry\": %.2f, "
	       "\"zero_ns_per_page\": %.1f, \"scan_ns_per_page\": %.1f, \"nr\": %lu}\n",
	       argv[3], n, rounds, open_s * 1e9 / n, count_s * 1e9 / n, zero_s, scan_s, nr);
	return 0;
}
