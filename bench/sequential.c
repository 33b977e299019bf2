// SPDX-License-Identifier: GPL-2.0
/*
 * A sequential workload for the HawkEye-PMU benchmark (promotion.sh -x pmu,
 * the paper's Table 9 in miniature): it reads its whole hot part in address
 * order, one 8-byte word after the other, over and over. Every 4 KB page is
 * accessed in every sweep, so HawkEye-G's access coverage rates it as high
 * as a random reader of the same size, yet on hardware its TLB misses are
 * few and prefetched: its MMU overhead is low (the paper's Table 3).
 *
 *   sequential [-m MB] [-f HOT_FRACTION] [-d SECONDS] [-n MIB] [-i INTERVAL]
 *              [-s SEED] [-l LABEL] [-w] [-N]
 *
 * Memory is one mapping of MB (default 256) MiB, 2 MB-aligned, with
 * MADV_HUGEPAGE (unless -N), every page written at start-up (random words),
 * so it is faulted as base pages when no huge page can be had. The sweeps
 * read the top HOT_FRACTION (rounded up to 2 MB; -f 1.0: all of it, as
 * promotion.sh runs it); the rest is written once and not read again.
 *
 * Output (stdout, one line each, "key=value" words):
 *   sequential map start=0x.. end=0x.. mb=.. regions=..
 *   sequential hot start=0x.. end=0x.. regions=.. fraction=..
 *   sequential init seconds=..
 *   sequential ready pid=..            (-w: now waiting for SIGUSR1)
 *   sequential start mono=..
 *   progress t=.. mono=.. mib=.. total=..   (every INTERVAL s, default 1)
 *   sequential done seconds=.. mib=.. mib_per_s=.. sweeps=.. checksum=..
 * mib are the MiB read (in the interval for progress lines), counted in
 * 2 MB steps. It runs for SECONDS (default 60) or until MIB MiB were read
 * (-n), whichever comes first (0: no limit).
 */
#include "workload.h"

int main(int argc, char **argv)
{
	struct workload_opts o;
	char *base;

	if (workload_options(argc, argv, &o, "sequential", "MIB", 1.0))
		return 2;
	base = workload_map_hot(&o);
	if (!base)
		return 1;
	printf("\n");

	double t_init = now();
	uint64_t s = o.seed, *words = (uint64_t *)base;

	for (size_t i = 0; i < o.len / sizeof(uint64_t); i++)
		words[i] = rng(&s);

	const size_t step = HPAGE / sizeof(uint64_t);	/* words per 2 MB */
	const uint64_t *hw = (const uint64_t *)(base + o.len - o.hot);
	size_t nw = o.hot / sizeof(uint64_t), pos = 0;
	struct workload_run r = workload_start(&o, t_init, "mib");
	unsigned long total = 0, sweeps = 0;	/* MiB */
	uint64_t sum = 0;
	double t;

	do {
		for (size_t i = pos; i < pos + step; i++)
			sum += hw[i];
		pos += step;
		if (pos >= nw) {
			pos = 0;
			sweeps++;
		}
		total += HPAGE >> 20;
		t = now();
	} while (!workload_progress(&o, &r, t, total, NULL, 0));
	printf("%s done seconds=%.3f mib=%lu mib_per_s=%.1f sweeps=%lu checksum=%llu\n",
	       o.label, t - r.t0, total, total / (t - r.t0), sweeps, (unsigned long long)sum);
	return 0;
}
