// SPDX-License-Identifier: GPL-2.0
/*
 * A working set for measuring HawkEye-G's sampling cost: maps MIB MiB,
 * faults it, asks for huge pages (MADV_HUGEPAGE: the range becomes
 * eligible for promotion, so it is sampled), then writes one byte in
 * random 4 KB pages of its first HOT_PCT percent (default 100: all of
 * it; the rest stays cold) until SECS seconds have passed. Prints "ready"
 * once faulted. With THP in `madvise` mode the faults get base pages: the
 * hint comes after them.
 *
 *   sampling MIB SECS [HOT_PCT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	size_t len, pages, hot;
	unsigned long x = 88172645463325252UL;
	struct timespec ts;
	time_t end;
	char *p;

	if (argc != 3 && argc != 4)
		return 2;
	len = strtoul(argv[1], NULL, 0) << 20;
	pages = len / 4096;
	hot = argc == 4 ? pages * strtoul(argv[3], NULL, 0) / 100 : pages;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || !hot || hot > pages)
		return 1;
	for (size_t i = 0; i < pages; i++)
		p[i * 4096] = 1;
	madvise(p, len, MADV_HUGEPAGE);
	printf("ready\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + strtol(argv[2], NULL, 0);
	do {
		for (int k = 0; k < 4096; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			p[x % hot * 4096]++;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while (ts.tv_sec < end);
	return 0;
}
