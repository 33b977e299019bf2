// SPDX-License-Identifier: GPL-2.0
/*
 * A Graph500-like workload for the promotion benchmarks: generates a random
 * Kronecker (R-MAT, A=0.57 B=0.19 C=0.19) graph of 2^SCALE vertices as an
 * edge list, builds its CSR form, and runs breadth-first searches from
 * random roots over and over.
 *
 *   graph500 [-m MB] [-f HOT_FRACTION] [-d SECONDS] [-n EDGES] [-i INTERVAL]
 *            [-s SEED] [-l LABEL] [-w] [-N]
 *
 * Memory is one mapping of MB (default 256) MiB, 2 MB-aligned, with
 * MADV_HUGEPAGE (unless -N) so that khugepaged or HawkEye may promote it;
 * every page is touched at start-up, so it is faulted as base pages when no
 * huge page can be had. As in the paper (Figure 6) the hot data lies at the
 * high virtual addresses: the top HOT_FRACTION (default 0.125, rounded up
 * to 2 MB) holds what every BFS reads and writes (CSR offsets and
 * adjacency, parent array, queue, visited bitmap); SCALE and the edge factor
 * are chosen so that these fill it. The low part holds the edge list, which
 * only the CSR build reads, and the rest of the application's start-up
 * memory (written once): cold.
 *
 * Output (stdout, one line each, "key=value" words):
 *   graph500 map start=0x.. end=0x.. mb=.. regions=..
 *   graph500 hot start=0x.. end=0x.. regions=.. fraction=.. scale=.. edgefactor=..
 *   graph500 init seconds=..            (generation and CSR build done)
 *   graph500 ready pid=..               (-w: now waiting for SIGUSR1)
 *   graph500 start mono=..              (the timed part starts)
 *   progress t=.. mono=.. edges=.. total=.. bfs=..   (every INTERVAL s, default 1)
 *   graph500 done seconds=.. edges=.. edges_per_s=.. bfs=..
 * edges are the adjacency entries the searches examined (in the interval
 * for progress lines). It runs for SECONDS (default 60) or until EDGES
 * edges were examined (-n), whichever comes first (0: no limit).
 */
#include "workload.h"

/* Bytes of the hot structures for 2^scale vertices and ef edges per vertex. */
static size_t hot_bytes(int scale, size_t ef)
{
	size_t n = 1UL << scale, m = ef * n;

	return 4096 + 4 * (n + 1) + 8 * m + 4 * n + 4 * n + n / 8 + 64;
}

int main(int argc, char **argv)
{
	struct workload_opts o;

	if (workload_options(argc, argv, &o, "graph500", "EDGES", 0.5))
		return 2;
	/* The largest graph (edge factor 16) whose structures fit the hot part,
	 * then the edge factor that fills it. */
	int scale = 10;
	size_t ef;

	while (hot_bytes(scale + 1, 16) <= o.hot)
		scale++;
	for (ef = 16; hot_bytes(scale, ef + 1) <= o.hot; ef++)
		;
	size_t n = 1UL << scale, m = ef * n;

	if (hot_bytes(scale, ef) > o.hot || 8 * m > o.len - o.hot) {
		fprintf(stderr, "graph500: footprint too small for a graph\n");
		return 2;
	}
	char *base = workload_map_hot(&o);

	if (!base)
		return 1;
	printf(" scale=%d edgefactor=%zu\n", scale, ef);

	char *hot_start = base + o.len - o.hot;
	/* Hot part, from its start: offsets, adjacency, parent, queue, bitmap. */
	uint32_t *xoff = (uint32_t *)hot_start;
	uint32_t *adj = xoff + n + 1;
	int32_t *parent = (int32_t *)(adj + 2 * m);
	uint32_t *queue = (uint32_t *)(parent + n);
	uint64_t *visited = (uint64_t *)(queue + n);
	/* Cold part: the edge list, then the rest of start-up memory. */
	uint32_t *edges = (uint32_t *)base;

	double t_init = now();
	uint64_t s = o.seed;
	/* Vertex labels are scrambled by a bijection, as Graph500 does. */
	uint32_t mul = (uint32_t)(rng(&s) | 1), add = (uint32_t)rng(&s);

	/*
	 * R-MAT: each level picks a quadrant with 8 random bits (A 146/256,
	 * B 49/256, C 49/256, D 12/256: 0.57, 0.19, 0.19, 0.05); a table
	 * does two levels per 16 bits.
	 */
	static uint8_t two[65536];

	for (uint32_t x = 0; x < 65536; x++) {
		uint8_t q[2];

		for (int l = 0; l < 2; l++) {
			uint32_t b = x >> (8 * l) & 0xff;

			q[l] = b < 146 ? 0 : b < 195 ? 1 : b < 244 ? 2 : 3;	/* bit0 v, bit1 u */
		}
		two[x] = (q[0] >> 1) << 3 | (q[1] >> 1) << 2 | (q[0] & 1) << 1 | (q[1] & 1);
	}
	for (size_t e = 0; e < m; e++) {
		uint32_t u = 0, v = 0;
		uint64_t r = 0;
		int b;

		for (b = 0; b + 2 <= scale; b += 2) {
			if (!(b & 7))
				r = rng(&s);
			uint8_t t2 = two[r & 0xffff];

			r >>= 16;
			u = u << 2 | t2 >> 2;
			v = v << 2 | (t2 & 3);
		}
		if (b < scale) {	/* odd scale: one more level */
			uint8_t t2 = two[rng(&s) & 0xffff];

			u = u << 1 | t2 >> 3;
			v = v << 1 | (t2 >> 1 & 1);
		}
		edges[2 * e] = (u * mul + add) & (n - 1);
		edges[2 * e + 1] = (v * mul + add) & (n - 1);
	}
	/* The rest of the cold part: other start-up data, written once. */
	for (uint64_t *p = (uint64_t *)(edges + 2 * m); (char *)p < hot_start; p += 512)
		*p = rng(&s);
	/* CSR, both directions of every edge (self-loops dropped). */
	memset(xoff, 0, 4 * (n + 1));
	for (size_t e = 0; e < m; e++) {
		uint32_t u = edges[2 * e], v = edges[2 * e + 1];

		if (u != v) {
			xoff[u + 1]++;
			xoff[v + 1]++;
		}
	}
	for (size_t i = 0; i < n; i++)
		xoff[i + 1] += xoff[i];
	uint32_t *cursor = (uint32_t *)parent;	/* borrowed until the first BFS */

	memcpy(cursor, xoff, 4 * n);
	for (size_t e = 0; e < m; e++) {
		uint32_t u = edges[2 * e], v = edges[2 * e + 1];

		if (u != v) {
			adj[cursor[u]++] = v;
			adj[cursor[v]++] = u;
		}
	}
	/* Touch the rest of the hot part (the unused tail past the bitmap). */
	for (char *p = (char *)(visited + n / 64 + 1); p < base + o.len; p += 4096)
		*p = 0;
	memset(queue, 0, 4 * n);

	struct workload_run run = workload_start(&o, t_init, "edges");
	double t = run.t0;
	unsigned long total = 0, bfs = 0, since_check = 0;
	int stop = 0;

	while (!stop) {
		uint32_t root;

		do
			root = rng(&s) & (n - 1);
		while (xoff[root + 1] == xoff[root]);
		memset(visited, 0, n / 8 + 8);
		memset(parent, 0xff, 4 * n);
		size_t head = 0, tail = 0;

		queue[tail++] = root;
		parent[root] = root;
		visited[root / 64] |= 1ULL << (root % 64);
		while (head < tail && !stop) {
			uint32_t u = queue[head++];

			for (uint32_t k = xoff[u]; k < xoff[u + 1]; k++) {
				uint32_t v = adj[k];

				if (!(visited[v / 64] & 1ULL << (v % 64))) {
					visited[v / 64] |= 1ULL << (v % 64);
					parent[v] = u;
					queue[tail++] = v;
				}
			}
			since_check += xoff[u + 1] - xoff[u] + 1;
			if (since_check < 4096)
				continue;
			total += since_check;
			since_check = 0;
			t = now();
			stop = workload_progress(&o, &run, t, total, "bfs", bfs);
		}
		if (head >= tail)
			bfs++;
	}
	printf("%s done seconds=%.3f edges=%lu edges_per_s=%.1f bfs=%lu\n",
	       o.label, t - run.t0, total, total / (t - run.t0), bfs);
	return 0;
}
