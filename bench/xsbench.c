// SPDX-License-Identifier: GPL-2.0
/*
 * An XSBench-like workload (the macroscopic cross-section lookup kernel of
 * OpenMC, nuclide-grid method) for the promotion benchmarks: a large table
 * of per-nuclide energy grids, and random lookups that binary-search each
 * nuclide's grid of a random material for a random energy and interpolate
 * five cross sections.
 *
 *   xsbench [-m MB] [-f HOT_FRACTION] [-d SECONDS] [-n LOOKUPS] [-i INTERVAL]
 *           [-s SEED] [-l LABEL] [-w] [-N]
 *
 * Memory is one mapping of MB (default 256) MiB, 2 MB-aligned, with
 * MADV_HUGEPAGE (unless -N) so that khugepaged or HawkEye may promote it;
 * every page is touched at start-up, so it is faulted as base pages when no
 * huge page can be had. As in the paper (Figure 6) the hot data lies at the
 * high virtual addresses: the top HOT_FRACTION (default 0.125, rounded up
 * to 2 MB) holds the nuclide grids and the material table, which every
 * lookup reads; the low part holds the random samples the grids are built
 * from, written and read once at start-up and never again (cold).
 *
 * Output (stdout, one line each, "key=value" words):
 *   xsbench map start=0x.. end=0x.. mb=.. regions=..
 *   xsbench hot start=0x.. end=0x.. regions=.. fraction=.. nuclides=.. gridpoints=..
 *   xsbench init seconds=..            (faulting and building done)
 *   xsbench ready pid=..               (-w: now waiting for SIGUSR1)
 *   xsbench start mono=..              (the timed part starts)
 *   progress t=.. mono=.. lookups=.. total=..   (every INTERVAL s, default 1)
 *   xsbench done seconds=.. lookups=.. lookups_per_s=.. checksum=..
 * t is seconds since start, mono the CLOCK_MONOTONIC time, lookups the
 * lookups done in the interval. It runs for SECONDS (default 60) or until
 * LOOKUPS lookups are done (-n), whichever comes first (0: no limit).
 */
#include "workload.h"
#define NXS 5
#define NMAT 12

struct gridpoint {
	double energy;
	double xs[NXS];
};

/* XSBench's materials: nuclides per material and lookup probabilities. */
static const int mat_nucs[NMAT] = { 34, 5, 4, 4, 27, 21, 21, 21, 21, 21, 9, 9 };
static const double mat_dist[NMAT] = { 0.140, 0.052, 0.275, 0.134, 0.154, 0.064,
				       0.066, 0.055, 0.008, 0.015, 0.025, 0.013 };

int main(int argc, char **argv)
{
	struct workload_opts o;
	int nnuc = 68;
	char *base;

	if (workload_options(argc, argv, &o, "xsbench", "LOOKUPS", 1.0))
		return 2;

	/* Hot part: the material table at its start, then the grids. */
	size_t mat_bytes = NMAT * 64 * sizeof(int);
	size_t npoints = (o.hot - 4096) / sizeof(struct gridpoint) / nnuc;

	if (mat_bytes > 4096 || npoints < 2) {
		fprintf(stderr, "xsbench: hot part too small\n");
		return 2;
	}
	base = workload_map_hot(&o);
	if (!base)
		return 1;
	printf(" nuclides=%d gridpoints=%zu\n", nnuc, npoints);

	char *hot_start = base + o.len - o.hot;
	int (*mats)[64] = (int (*)[64])hot_start;
	struct gridpoint *grids = (struct gridpoint *)(hot_start + 4096);
	double t_init = now();
	uint64_t s = o.seed;
	/*
	 * Cold part: the raw samples (random energy increments and cross
	 * sections) the grids are built from. Written once, read once.
	 */
	uint64_t *samples = (uint64_t *)base;
	size_t nsamples = (o.len - o.hot) / sizeof(uint64_t);

	for (size_t i = 0; i < nsamples; i++)
		samples[i] = rng(&s);
	/* Build each nuclide's grid: increasing energies in [0, 1). */
	size_t k = 0;

	for (int n = 0; n < nnuc; n++) {
		struct gridpoint *g = grids + (size_t)n * npoints;
		double e = 0;

		for (size_t i = 0; i < npoints; i++) {
			uint64_t a = nsamples ? samples[k++ % nsamples] : rng(&s);

			e += 1.0 + (a >> 11) * (1.0 / 9007199254740992.0);
			g[i].energy = e;
			for (int j = 0; j < NXS; j++)
				g[i].xs[j] = (double)((a >> (8 * j)) & 0xff) / 255.0;
		}
		for (size_t i = 0; i < npoints; i++)
			g[i].energy /= e + 1.0;
	}
	/* Materials: random nuclides (every material draws from all of them). */
	for (int m = 0; m < NMAT; m++)
		for (int j = 0; j < mat_nucs[m]; j++)
			mats[m][j] = rng(&s) % nnuc;
	double cdf[NMAT], acc = 0;

	for (int m = 0; m < NMAT; m++)
		cdf[m] = acc += mat_dist[m];
	struct workload_run run = workload_start(&o, t_init, "lookups");
	unsigned long total = 0;
	double checksum = 0, t;

	do {
		for (int batch = 0; batch < 256; batch++) {
			double energy = rnd01(&s) * 0.999, r = rnd01(&s) * acc, macro[NXS] = { 0 };
			int m = 0;

			while (m < NMAT - 1 && r > cdf[m])
				m++;
			for (int j = 0; j < mat_nucs[m]; j++) {
				const struct gridpoint *g = grids + (size_t)mats[m][j] * npoints;
				size_t lo = 0, hi = npoints - 1;

				while (hi - lo > 1) {	/* g[lo].energy <= energy < g[hi] */
					size_t mid = (lo + hi) / 2;

					if (g[mid].energy > energy)
						hi = mid;
					else
						lo = mid;
				}
				double f = (g[hi].energy - energy) / (g[hi].energy - g[lo].energy);

				for (int x = 0; x < NXS; x++)
					macro[x] += g[hi].xs[x] - f * (g[hi].xs[x] - g[lo].xs[x]);
			}
			checksum += macro[0] + macro[NXS - 1];
		}
		total += 256;
		t = now();
	} while (!workload_progress(&o, &run, t, total, NULL, 0));
	printf("%s done seconds=%.3f lookups=%lu lookups_per_s=%.1f checksum=%.6g\n",
	       o.label, t - run.t0, total, total / (t - run.t0), checksum);
	return 0;
}
