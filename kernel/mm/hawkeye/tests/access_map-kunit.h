/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the access map and the order hawkeye-g and hawkeye-pmu
 * promote in, built into access_map.c so that they reach its static
 * functions. The access_maps are built by hand, without
 * an mm; the accessed-bit sampler runs on memory of a KUnit mm.
 */
#ifndef _MM_HAWKEYE_ACCESS_MAP_KUNIT_H
#define _MM_HAWKEYE_ACCESS_MAP_KUNIT_H

#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/uaccess.h>

static void promote_test_bucket(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, promote_bucket(0), 0U);
	KUNIT_EXPECT_EQ(test, promote_bucket(49), 0U);
	KUNIT_EXPECT_EQ(test, promote_bucket(50), 1U);
	KUNIT_EXPECT_EQ(test, promote_bucket(99), 1U);
	KUNIT_EXPECT_EQ(test, promote_bucket(100), 2U);
	KUNIT_EXPECT_EQ(test, promote_bucket(449), 8U);
	KUNIT_EXPECT_EQ(test, promote_bucket(450), 9U);
	KUNIT_EXPECT_EQ(test, promote_bucket(511), 9U);
	KUNIT_EXPECT_EQ(test, promote_bucket(HPAGE_PMD_NR), 9U);
}

static void promote_test_ema(struct kunit *test)
{
	unsigned int ema = 0;
	int i;

	KUNIT_EXPECT_EQ(test, promote_ema(0, 512, 50), 256U);
	KUNIT_EXPECT_EQ(test, promote_ema(256, 512, 50), 384U);
	KUNIT_EXPECT_EQ(test, promote_ema(384, 0, 50), 192U);
	KUNIT_EXPECT_EQ(test, promote_ema(100, 300, 100), 300U);
	KUNIT_EXPECT_EQ(test, promote_ema(100, 300, 1), 102U);
	KUNIT_EXPECT_EQ(test, promote_ema(512, 512, 37), 512U);
	/* A steady coverage is approached from below and never exceeded. */
	for (i = 0; i < 20; i++) {
		ema = promote_ema(ema, 400, 50);
		KUNIT_EXPECT_LE(test, ema, 400U);
	}
	KUNIT_EXPECT_GE(test, ema, 399U);
}

static struct hawkeye_mm *promote_test_mm(struct kunit *test, u64 seq)
{
	struct hawkeye_mm *hm = kunit_kzalloc(test, sizeof(*hm), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, hm);
	hm->ops = &hawkeye_g_ops;
	mutex_init(&hm->lock);
	map_mm_init(hm);
	hm->seq = seq;
	return hm;
}

/* Add a region at 2 MB index @idx with access coverage @ema. */
static struct hawkeye_region *promote_test_add(struct kunit *test,
					       struct hawkeye_mm *hm,
					       unsigned long idx,
					       unsigned int ema)
{
	struct hawkeye_region *r = kzalloc(sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->addr = idx << PMD_SHIFT;
	INIT_LIST_HEAD(&r->node);
	KUNIT_ASSERT_EQ(test, xa_insert(&hm->map.regions, idx, r, GFP_KERNEL), 0);
	map_place(hm, r, ema, HPAGE_PMD_ORDER, true);
	return r;
}

/* The regions of bucket @b, head to tail, as 2 MB indexes. */
static int promote_test_bucket_list(struct hawkeye_mm *hm, int b,
				    unsigned long *idx, int max)
{
	struct hawkeye_region *r;
	int n = 0;

	list_for_each_entry(r, &hm->map.buckets[b], node)
		if (n < max)
			idx[n++] = r->addr >> PMD_SHIFT;
	return n;
}

static void promote_test_free(struct hawkeye_mm *hm)
{
	map_clear(hm);
	xa_destroy(&hm->map.regions);
}

static void promote_test_moves(struct kunit *test)
{
	struct hawkeye_mm *hm = promote_test_mm(test, 1);
	struct hawkeye_region *a, *b, *c, *d;
	unsigned long idx[8];

	/* New regions go to the tail, in the order they are sampled. */
	a = promote_test_add(test, hm, 1, 120);		/* bucket 2 */
	b = promote_test_add(test, hm, 2, 130);
	c = promote_test_add(test, hm, 3, 260);		/* bucket 5 */
	d = promote_test_add(test, hm, 4, 10);		/* bucket 0 */
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 4UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 520UL);
	KUNIT_ASSERT_EQ(test, promote_test_bucket_list(hm, 2, idx, 8), 2);
	KUNIT_EXPECT_EQ(test, idx[0], 1UL);
	KUNIT_EXPECT_EQ(test, idx[1], 2UL);

	/* Moving up: the head of the new bucket. */
	map_place(hm, d, 140, HPAGE_PMD_ORDER, false);
	KUNIT_ASSERT_EQ(test, promote_test_bucket_list(hm, 2, idx, 8), 3);
	KUNIT_EXPECT_EQ(test, idx[0], 4UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[0], 0UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[2], 3UL);

	/* Moving down: the tail. */
	map_place(hm, c, 101, HPAGE_PMD_ORDER, false);
	KUNIT_ASSERT_EQ(test, promote_test_bucket_list(hm, 2, idx, 8), 4);
	KUNIT_EXPECT_EQ(test, idx[3], 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[5], 0UL);

	/* Same bucket: stays where it is, whatever its EMA did. */
	map_place(hm, a, 149, HPAGE_PMD_ORDER, false);
	map_place(hm, b, 100, HPAGE_PMD_ORDER, false);
	KUNIT_ASSERT_EQ(test, promote_test_bucket_list(hm, 2, idx, 8), 4);
	KUNIT_EXPECT_EQ(test, idx[0], 4UL);
	KUNIT_EXPECT_EQ(test, idx[1], 1UL);
	KUNIT_EXPECT_EQ(test, idx[2], 2UL);
	KUNIT_EXPECT_EQ(test, idx[3], 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 140UL + 101 + 149 + 100);

	map_remove(hm, d);
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[2], 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 101UL + 149 + 100);
	KUNIT_EXPECT_NULL(test, xa_load(&hm->map.regions, 4));

	promote_test_free(hm);
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 0UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 0UL);
}

/* Region names: process 'A'..'C' and number, index = 16 * process + number. */
#define PT(p, n)	((unsigned long)((p) - 'A') * 16 + (n))

/* @nr processes A, B, ..., each with regions 0 to @regions - 1 at @ema. */
static void promote_test_mms(struct kunit *test, struct hawkeye_mm **hms,
			     int nr, int regions, unsigned int ema)
{
	int i, j;

	for (i = 0; i < nr; i++) {
		hms[i] = promote_test_mm(test, i + 1);
		for (j = 0; j < regions; j++)
			promote_test_add(test, hms[i], PT('A' + i, j), ema);
	}
}

static void promote_test_free_mms(struct hawkeye_mm **hms, int nr)
{
	while (nr--)
		promote_test_free(hms[nr]);
}

/*
 * Figure 4 of the paper as its promotion order implies it: A1, B1 and C1
 * in bucket 9, C2 in 8, B2 and C3 in 7, C4 in 6, B3 and B4 in 5, A2, A3
 * and C5 in 4. Bucket midpoints as EMAs.
 */
static void promote_test_fig4(struct kunit *test, struct hawkeye_mm **hms)
{
	static const struct { char p; int n; unsigned int bucket; } regions[] = {
		{ 'A', 1, 9 }, { 'A', 2, 4 }, { 'A', 3, 4 },
		{ 'B', 1, 9 }, { 'B', 2, 7 }, { 'B', 3, 5 }, { 'B', 4, 5 },
		{ 'C', 1, 9 }, { 'C', 2, 8 }, { 'C', 3, 7 }, { 'C', 4, 6 },
		{ 'C', 5, 4 },
	};
	int i;

	for (i = 0; i < 3; i++)
		hms[i] = promote_test_mm(test, i + 1);
	for (i = 0; i < ARRAY_SIZE(regions); i++)
		promote_test_add(test, hms[regions[i].p - 'A'],
				 PT(regions[i].p, regions[i].n),
				 regions[i].bucket * 50 + 25);
}

/*
 * Pick @n regions as a promotion round does, each process in a cgroup of
 * its own with the weight @weights[i] (NULL: 100 each) and the virtual
 * times @vtime[i] (NULL: fresh ones), take the picked ones out of the map
 * (promoted) and append their indexes to @seq.
 */
static int promote_test_round_weighted(struct kunit *test,
				       struct hawkeye_mm **hms, unsigned int nr,
				       const unsigned int *weights,
				       struct hawkeye_vtime *vtime,
				       struct hawkeye_rr *rr, unsigned int n,
				       unsigned long *seq)
{
	struct list_head *pos[3][HAWKEYE_NR_BUCKETS];
	struct hawkeye_share share[3];
	struct hawkeye_vtime fresh[3] = {};
	struct hawkeye_pick picks[16];
	unsigned int i, got;

	KUNIT_ASSERT_LE(test, nr, 3U);
	KUNIT_ASSERT_LE(test, n, 16U);
	for (i = 0; i < nr; i++)
		share[i] = (struct hawkeye_share){
			.weight = weights ? weights[i] : 100,
			.vtime = vtime ? &vtime[i] : &fresh[i],
		};
	got = promote_order(hms, nr, share, pos, rr, picks, n);
	for (i = 0; i < got; i++) {
		seq[i] = picks[i].r->addr >> PMD_SHIFT;
		map_remove(picks[i].hm, picks[i].r);
	}
	return got;
}

static int promote_test_round(struct kunit *test, struct hawkeye_mm **hms,
			      unsigned int nr, struct hawkeye_rr *rr,
			      unsigned int n, unsigned long *seq)
{
	return promote_test_round_weighted(test, hms, nr, NULL, NULL, rr, n, seq);
}

/*
 * Two cgroups with weights 1:3 and regions in one bucket: a batch of 8
 * gives them 2 and 6, batch after batch; once the heavier one has none
 * left, the other gets them all, and it builds up no debt meanwhile. A
 * cgroup at its cap (weight 0) gets none.
 */
static void promote_test_order_weights(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 300 }, capped[] = { 0, 300 };
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	struct hawkeye_vtime vtime[2] = {};
	unsigned int done[2];
	unsigned long seq[16];
	int i, j, n;

	promote_test_mms(test, hms, 2, 12, 300);
	promote_test_add(test, hms[0], PT('A', 12), 300);
	promote_test_add(test, hms[0], PT('A', 13), 300);
	for (i = 0; i < 2; i++) {
		n = promote_test_round_weighted(test, hms, 2, weights, vtime, &rr,
						8, seq);
		KUNIT_ASSERT_EQ(test, n, 8);
		done[0] = done[1] = 0;
		for (j = 0; j < n; j++)
			done[seq[j] / 16]++;
		KUNIT_EXPECT_EQ_MSG(test, done[0], 2U, "batch %d", i);
		KUNIT_EXPECT_EQ_MSG(test, done[1], 6U, "batch %d", i);
	}
	/* B has none left: A gets the whole batch. */
	n = promote_test_round_weighted(test, hms, 2, weights, vtime, &rr, 8, seq);
	KUNIT_EXPECT_EQ(test, n, 8);
	for (j = 0; j < n; j++)
		KUNIT_EXPECT_EQ(test, seq[j] / 16, 0UL);
	/* A at its cap: nothing for it, even with nobody else. */
	KUNIT_EXPECT_EQ(test, promote_test_round_weighted(test, hms, 2, capped,
							  vtime, &rr, 8, seq), 0);
	KUNIT_EXPECT_EQ(test, hms[0]->map.nr_regions, 2UL);
	promote_test_free_mms(hms, 2);
}

/*
 * Weighted fair queueing keeps its virtual time across batches: weights
 * 100 and 101 with a batch of 1 alternate (10 and 10 of 20), where
 * restarting the count every batch gave the heavier one all 20; weights 1
 * and 3 with a batch of 1 come out 5 and 15.
 */
static void promote_test_order_weights_across_batches(struct kunit *test)
{
	static const unsigned int close[] = { 100, 101 }, third[] = { 100, 300 };
	const unsigned int *weights[] = { close, third };
	static const unsigned int want[][2] = { { 10, 10 }, { 5, 15 } };
	struct hawkeye_mm *hms[2];
	unsigned long seq[1];
	int c, i;

	for (c = 0; c < 2; c++) {
		struct hawkeye_rr rr = { .bucket = -1 };
		struct hawkeye_vtime vtime[2] = {};
		unsigned int done[2] = {};

		promote_test_mms(test, hms, 2, 15, 300);
		for (i = 0; i < 20; i++) {
			int got = promote_test_round_weighted(test, hms, 2, weights[c],
							      vtime, &rr, 1, seq);

			KUNIT_ASSERT_EQ(test, got, 1);
			done[seq[0] / 16]++;
		}
		KUNIT_EXPECT_EQ_MSG(test, done[0], want[c][0], "weights %u:%u",
				    weights[c][0], weights[c][1]);
		KUNIT_EXPECT_EQ_MSG(test, done[1], want[c][1], "weights %u:%u",
				    weights[c][0], weights[c][1]);
		promote_test_free_mms(hms, 2);
	}
}

/*
 * A virtual time far from the clock is stale (a cgroup absent or capped
 * for long, or a clock restarted with the thread): it starts at the clock
 * and does not starve the other cgroup, wrapped or not. Weights 100:100,
 * a batch of 8 comes out 4:4.
 */
static void promote_test_order_stale_vtime(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 100 };
	static const unsigned int clock[] = { 0x80000001, 0 };
	static const unsigned int stale[][2] = {
		{ 0, 0x80000001 }, { 0x40000000, 0 },
	};
	const int b = promote_bucket(300);
	struct hawkeye_mm *hms[2];
	unsigned long seq[8];
	int c, j, n;

	for (c = 0; c < 2; c++) {
		struct hawkeye_rr rr = { .bucket = -1 };
		struct hawkeye_vtime vtime[2] = {};
		unsigned int done[2] = {};

		promote_test_mms(test, hms, 2, 9, 300);
		/* A first batch sets the bucket; then the times go stale. */
		KUNIT_ASSERT_EQ(test, promote_test_round_weighted(test, hms, 2,
				weights, vtime, &rr, 2, seq), 2);
		rr.vclock[b] = clock[c];
		vtime[0].t[b] = stale[c][0];
		vtime[1].t[b] = stale[c][1];
		n = promote_test_round_weighted(test, hms, 2, weights, vtime, &rr,
						8, seq);
		KUNIT_ASSERT_EQ(test, n, 8);
		for (j = 0; j < n; j++)
			done[seq[j] / 16]++;
		KUNIT_EXPECT_EQ_MSG(test, done[0], 4U, "case %d", c);
		KUNIT_EXPECT_EQ_MSG(test, done[1], 4U, "case %d", c);
		promote_test_free_mms(hms, 2);
	}
}

/*
 * Weights hold within a bucket however hotter regions of another cgroup
 * interleave: A and B (weights 100 and 300) with regions in bucket 6, and
 * before each batch of 3 a region of C in bucket 9, which C gets first.
 * A and B share the rest 1:3 over the batches (3 and 9 of 12), where
 * starting every cgroup at the clock on each change of bucket gave them
 * 1:1 (one each per batch).
 */
static void promote_test_order_weights_across_buckets(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 300, 100 };
	struct hawkeye_vtime vtime[3] = {};
	unsigned int done[3] = {};
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	unsigned long seq[3];
	int i, j, n;

	promote_test_mms(test, hms, 2, 12, 300);
	hms[2] = promote_test_mm(test, 3);
	for (i = 0; i < 6; i++) {
		promote_test_add(test, hms[2], PT('C', i), 500);
		n = promote_test_round_weighted(test, hms, 3, weights, vtime,
						&rr, 3, seq);
		KUNIT_ASSERT_EQ(test, n, 3);
		KUNIT_EXPECT_EQ_MSG(test, seq[0] / 16, 2UL, "batch %d", i);
		for (j = 1; j < n; j++)
			done[seq[j] / 16]++;
	}
	KUNIT_EXPECT_EQ(test, done[0], 3U);
	KUNIT_EXPECT_EQ(test, done[1], 9U);
	promote_test_free_mms(hms, 3);
}

/*
 * Cgroups whose regions climb the buckets together keep their order by
 * weight: three with weights 100, 75 and 225 and regions moving from
 * bucket 5 to 7, 8 and 9 between batches of 8 share 80 promotions 20:15:45,
 * as in one bucket, whether all regions move at once or the odd ones a
 * batch later. Starting each at the clock of every bucket entered gave
 * the lighter ones a turn in each: 20:17:43.
 */
static void promote_test_order_weights_climbing(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 75, 225 };
	static const unsigned int climb[] = { 5, 7, 8, 9 };
	struct hawkeye_region *r;
	struct hawkeye_mm *hms[3];
	unsigned long seq[8], idx;
	int c, i, j, n, step;

	for (c = 0; c < 2; c++) {
		struct hawkeye_vtime vtime[3] = {};
		struct hawkeye_rr rr = { .bucket = -1 };
		unsigned int done[3] = {};

		for (i = 0; i < 3; i++) {
			hms[i] = promote_test_mm(test, i + 1);
			for (j = 0; j < 60; j++)
				promote_test_add(test, hms[i], i * 64 + j,
						 climb[0] * HAWKEYE_BUCKET_WIDTH);
		}
		for (i = 0; i < 10; i++) {
			for (j = 0; j < 3; j++)
				xa_for_each(&hms[j]->map.regions, idx, r) {
					step = clamp_t(int, i - (c && (idx & 1)), 0,
						       ARRAY_SIZE(climb) - 1);
					map_place(hms[j], r,
						  climb[step] * HAWKEYE_BUCKET_WIDTH,
						  HPAGE_PMD_ORDER, false);
				}
			n = promote_test_round_weighted(test, hms, 3, weights,
							vtime, &rr, 8, seq);
			KUNIT_ASSERT_EQ(test, n, 8);
			for (j = 0; j < n; j++)
				done[seq[j] / 64]++;
		}
		KUNIT_EXPECT_EQ_MSG(test, done[0], 20U, "staggered %d", c);
		KUNIT_EXPECT_EQ_MSG(test, done[1], 15U, "staggered %d", c);
		KUNIT_EXPECT_EQ_MSG(test, done[2], 45U, "staggered %d", c);
		promote_test_free_mms(hms, 3);
	}
}

/*
 * A cgroup's own hotter regions do not cost it its place in a bucket: A
 * and B (weights 100 each) with regions in bucket 6, and before each
 * batch of 2 a region of B in bucket 9, which B gets first. A and B
 * share bucket 6 evenly, 3 and 3 of 6; charging B's region in bucket 9
 * to its time in bucket 6 again at every batch gave 6 and 0.
 */
static void promote_test_order_own_hotter(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 100 };
	struct hawkeye_vtime vtime[2] = {};
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	unsigned int done[2] = {};
	unsigned long seq[2];
	int i, n;

	promote_test_mms(test, hms, 2, 8, 300);
	for (i = 0; i < 6; i++) {
		promote_test_add(test, hms[1], PT('B', 8 + i), 500);
		n = promote_test_round_weighted(test, hms, 2, weights, vtime,
						&rr, 2, seq);
		KUNIT_ASSERT_EQ(test, n, 2);
		KUNIT_EXPECT_EQ_MSG(test, seq[0], PT('B', 8 + i), "batch %d", i);
		done[seq[1] / 16]++;
	}
	KUNIT_EXPECT_EQ(test, done[0], 3U);
	KUNIT_EXPECT_EQ(test, done[1], 3U);
	promote_test_free_mms(hms, 2);
}

/*
 * promote/fresh_ms: a fresh process's bucket 0 waits, its other buckets
 * and a process past its fresh_ms are served as usual; with fresh_ms 0
 * no process is fresh.
 */
static void promote_test_order_fresh(struct kunit *test)
{
	unsigned int fresh_ms = hawkeye_promote.fresh_ms;
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	unsigned long seq[16];
	int i;

	for (i = 0; i < 2; i++) {
		hms[i] = promote_test_mm(test, i + 1);
		promote_test_add(test, hms[i], PT('A' + i, 1), 10);
		promote_test_add(test, hms[i], PT('A' + i, 2), 10);
	}
	promote_test_add(test, hms[0], PT('A', 3), 160);
	hawkeye_promote.fresh_ms = 10000;
	hms[0]->registered = jiffies;
	hms[1]->registered = jiffies - msecs_to_jiffies(10000) - 1;
	for (i = 0; i < 2; i++)
		hms[i]->fresh_from = hms[i]->registered;
	KUNIT_EXPECT_TRUE(test, hawkeye_promote_fresh(hms[0]));
	KUNIT_EXPECT_FALSE(test, hawkeye_promote_fresh(hms[1]));
	/* A's bucket 3, then B's bucket 0; A's bucket 0 is not picked. */
	KUNIT_EXPECT_EQ(test, promote_test_round(test, hms, 2, &rr, 8, seq), 3);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 3));
	KUNIT_EXPECT_EQ(test, seq[1], PT('B', 1));
	KUNIT_EXPECT_EQ(test, seq[2], PT('B', 2));
	KUNIT_EXPECT_EQ(test, promote_test_round(test, hms, 2, &rr, 8, seq), 0);
	KUNIT_EXPECT_EQ(test, hms[0]->map.nr[0], 2UL);
	/* Knob at 0: nobody is fresh, A's bucket 0 goes. */
	hawkeye_promote.fresh_ms = 0;
	KUNIT_EXPECT_FALSE(test, hawkeye_promote_fresh(hms[0]));
	KUNIT_EXPECT_EQ(test, promote_test_round(test, hms, 2, &rr, 8, seq), 2);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 1));
	KUNIT_EXPECT_EQ(test, seq[1], PT('A', 2));
	hawkeye_promote.fresh_ms = fresh_ms;
	promote_test_free_mms(hms, 2);
}

/*
 * A fresh process that maps memory stays fresh fresh_ms from then, up to
 * PROMOTE_FRESH_MAX times fresh_ms after its registration; one no longer
 * fresh does not become fresh again.
 */
static void promote_test_fresh_populated(struct kunit *test)
{
	unsigned int fresh_ms = hawkeye_promote.fresh_ms;
	struct hawkeye_mm *hm = promote_test_mm(test, 1);
	unsigned long s = msecs_to_jiffies(1000);

	hawkeye_promote.fresh_ms = 10000;
	hm->registered = jiffies - 8 * s;
	hm->fresh_from = hm->registered;
	KUNIT_EXPECT_TRUE(test, hawkeye_promote_fresh(hm));
	hawkeye_promote_populated(hm);
	KUNIT_EXPECT_TRUE(test, time_after_eq(hm->fresh_from, jiffies - s));
	/* 18 s after registration, 10 s after it last mapped memory. */
	hm->registered -= 10 * s;
	hm->fresh_from -= 10 * s;
	KUNIT_EXPECT_FALSE(test, hawkeye_promote_fresh(hm));
	hawkeye_promote_populated(hm);
	KUNIT_EXPECT_FALSE(test, hawkeye_promote_fresh(hm));
	/* 39 s after registration, mapping memory all along; then 41 s. */
	hm->registered = jiffies - 39 * s;
	hm->fresh_from = jiffies - s;
	KUNIT_EXPECT_TRUE(test, hawkeye_promote_fresh(hm));
	hm->registered -= 2 * s;
	KUNIT_EXPECT_FALSE(test, hawkeye_promote_fresh(hm));
	hawkeye_promote.fresh_ms = fresh_ms;
	promote_test_free(hm);
}

/*
 * promote/best_size: a region whose best size is below 2 MB leaves its
 * bucket for the smaller list, which a round does not pick from, and is
 * still counted in its bucket and best size; back at 2 MB (or with the
 * knob off) it rejoins its bucket at the tail.
 */
static void promote_test_smaller(struct kunit *test)
{
	unsigned int knob = hawkeye_promote.best_size;
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hm = promote_test_mm(test, 1);
	struct hawkeye_region *a;
	unsigned long idx[4];

	a = promote_test_add(test, hm, 1, 300);
	promote_test_add(test, hm, 2, 300);
	WRITE_ONCE(hawkeye_promote.best_size, 0);
	map_place(hm, a, 300, 4, false);
	KUNIT_EXPECT_FALSE(test, a->smaller);
	KUNIT_EXPECT_EQ(test, promote_test_bucket_list(hm, 6, idx, 4), 2);

	WRITE_ONCE(hawkeye_promote.best_size, 1);
	map_place(hm, a, 310, 4, false);
	KUNIT_EXPECT_TRUE(test, a->smaller);
	KUNIT_ASSERT_EQ(test, promote_test_bucket_list(hm, 6, idx, 4), 1);
	KUNIT_EXPECT_EQ(test, idx[0], 2UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[6], 2UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr_best[4], 1UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr_best[HPAGE_PMD_ORDER], 1UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 610UL);

	/* Dense again: back to its bucket, behind b. */
	map_place(hm, a, 300, HPAGE_PMD_ORDER, false);
	KUNIT_EXPECT_FALSE(test, a->smaller);
	KUNIT_ASSERT_EQ(test, promote_test_bucket_list(hm, 6, idx, 4), 2);
	KUNIT_EXPECT_EQ(test, idx[0], 2UL);
	KUNIT_EXPECT_EQ(test, idx[1], 1UL);

	/* Only b is picked while a is best at 64 KB. */
	map_place(hm, a, 300, 4, false);
	KUNIT_EXPECT_EQ(test, promote_test_round(test, &hm, 1, &rr, 4, idx), 1);
	KUNIT_EXPECT_EQ(test, idx[0], 2UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 1UL);
	map_remove(hm, a);
	KUNIT_EXPECT_TRUE(test, list_empty(&hm->map.smaller));
	KUNIT_EXPECT_EQ(test, hm->map.nr_best[4], 0UL);
	WRITE_ONCE(hawkeye_promote.best_size, knob);
	promote_test_free(hm);
}

static const unsigned long promote_test_fig4_order[] = {
	PT('A', 1), PT('B', 1), PT('C', 1), PT('C', 2), PT('B', 2), PT('C', 3),
	PT('C', 4), PT('B', 3), PT('B', 4), PT('A', 2), PT('C', 5), PT('A', 3),
};

/* The paper's example (section 3.4), in one go. */
static void promote_test_order_paper(struct kunit *test)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	unsigned long seq[16];
	int i, n;

	promote_test_fig4(test, hms);
	n = promote_test_round(test, hms, 3, &rr, 16, seq);
	KUNIT_ASSERT_EQ(test, n, (int)ARRAY_SIZE(promote_test_fig4_order));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, seq[i], promote_test_fig4_order[i],
				    "promotion %d", i);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, hms[i]->map.nr_regions, 0UL);
		promote_test_free(hms[i]);
	}
}

/* The same in batches: a batch ending mid-bucket changes nothing. */
static void promote_test_order_batches(struct kunit *test)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	unsigned long seq[16];
	int i, n = 0, got;

	promote_test_fig4(test, hms);
	do {
		got = promote_test_round(test, hms, 3, &rr, 2, seq + n);
		n += got;
	} while (got);
	KUNIT_ASSERT_EQ(test, n, (int)ARRAY_SIZE(promote_test_fig4_order));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, seq[i], promote_test_fig4_order[i],
				    "promotion %d", i);
	promote_test_free_mms(hms, 3);
}

/*
 * Three equal processes, one bucket: batches of 8 serve them in turn, so
 * that their promoted counts never differ by more than one; a process that
 * exits (leaves the snapshot) is skipped, and one that registers later
 * joins the turns.
 */
static void promote_test_order_fair(struct kunit *test)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *all[3], *hms[3];
	unsigned long seq[16];
	unsigned int done[3] = {};
	int i, j, n;

	promote_test_mms(test, all, 3, 10, 300);
	memcpy(hms, all, sizeof(all));
	for (;;) {
		n = promote_test_round(test, hms, 3, &rr, 8, seq);
		if (!n)
			break;
		for (j = 0; j < n; j++)
			done[seq[j] / 16]++;
		KUNIT_EXPECT_LE(test, max3(done[0], done[1], done[2]) -
				min3(done[0], done[1], done[2]), 1U);
	}
	KUNIT_EXPECT_EQ(test, done[0] + done[1] + done[2], 30U);

	/* B gone: A and C alternate, starting after the last served. */
	for (i = 0; i < 3; i++)
		for (j = 0; j < 2; j++)
			promote_test_add(test, all[i], PT('A' + i, j), 300);
	hms[1] = all[2];
	n = promote_test_round(test, hms, 2, &rr, 4, seq);
	KUNIT_ASSERT_EQ(test, n, 4);
	for (j = 0; j < 4; j++)
		KUNIT_EXPECT_NE(test, seq[j] / 16, 1UL);
	KUNIT_EXPECT_NE(test, seq[0] / 16, seq[1] / 16);
	KUNIT_EXPECT_NE(test, seq[1] / 16, seq[2] / 16);

	/* A region higher up goes first, whoever's turn it was. */
	promote_test_add(test, hms[0], PT('A', 9), 480);
	promote_test_add(test, hms[1], PT('C', 9), 20);
	n = promote_test_round(test, hms, 2, &rr, 16, seq);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 9));
	KUNIT_EXPECT_EQ(test, seq[1], PT('C', 9));
	promote_test_free_mms(all, 3);
}

/* Pick @n regions in the hawkeye-pmu order; as promote_test_round(). */
static int promote_test_round_pmu(struct kunit *test, struct hawkeye_mm **hms,
				  unsigned int nr, const int *measured,
				  struct hawkeye_rr *rr, unsigned int n,
				  unsigned long *seq)
{
	struct list_head *pos[3][HAWKEYE_NR_BUCKETS];
	struct hawkeye_pick picks[16];
	unsigned int i, got;

	KUNIT_ASSERT_LE(test, nr, 3U);
	KUNIT_ASSERT_LE(test, n, 16U);
	got = promote_order_pmu(hms, nr, measured, 200, 100, pos, rr, picks, n);
	for (i = 0; i < got; i++) {
		seq[i] = picks[i].r->addr >> PMD_SHIFT;
		map_remove(picks[i].hm, picks[i].r);
	}
	return got;
}

/*
 * Table 9 of the paper: two processes with the same high access coverage,
 * A measured at 60% MMU overhead and B at 0.5%. Every promotion goes to
 * A, highest bucket first; none to B, which is under the 2% threshold,
 * also once A has nothing left; and none to A once it is under it too.
 */
static void promote_test_pmu_table9(struct kunit *test)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	int measured[2] = { 6000, 50 };
	unsigned long seq[16];
	int i, n;

	for (i = 0; i < 2; i++) {
		hms[i] = promote_test_mm(test, i + 1);
		promote_test_add(test, hms[i], PT('A' + i, 0), 100);
		promote_test_add(test, hms[i], PT('A' + i, 1), 480);
		promote_test_add(test, hms[i], PT('A' + i, 2), 480);
	}
	n = promote_test_round_pmu(test, hms, 2, measured, &rr, 2, seq);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 1));
	KUNIT_EXPECT_EQ(test, seq[1], PT('A', 2));
	n = promote_test_round_pmu(test, hms, 2, measured, &rr, 8, seq);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 0));
	KUNIT_EXPECT_EQ(test, hms[1]->map.nr_regions, 3UL);

	/* A promoted down to 1.5%: nobody is worth a promotion. */
	promote_test_add(test, hms[0], PT('A', 3), 480);
	measured[0] = 150;
	KUNIT_EXPECT_EQ(test, promote_test_round_pmu(test, hms, 2, measured,
						     &rr, 8, seq), 0);
	/* At the threshold counts. */
	measured[1] = 200;
	n = promote_test_round_pmu(test, hms, 2, measured, &rr, 1, seq);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, seq[0] / 16, 1UL);
	promote_test_free_mms(hms, 2);
}

/*
 * Ties and near-ties (within pmu_band, 1%) take turns; a process further
 * down waits until the ones above have nothing left. A process that
 * exits (leaves the snapshot) is skipped.
 */
static void promote_test_pmu_band(struct kunit *test)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	int measured[3] = { 3000, 2950, 2800 };
	unsigned long seq[16];
	int i, j, n;

	promote_test_mms(test, hms, 3, 3, 300);
	n = promote_test_round_pmu(test, hms, 3, measured, &rr, 8, seq);
	KUNIT_ASSERT_EQ(test, n, 8);
	for (j = 0; j < 6; j++)
		KUNIT_EXPECT_EQ_MSG(test, seq[j] / 16, (unsigned long)(j % 2),
				    "promotion %d", j);
	KUNIT_EXPECT_EQ(test, seq[6] / 16, 2UL);
	KUNIT_EXPECT_EQ(test, seq[7] / 16, 2UL);

	/* A exited: B and C, now tied, take turns starting with B. */
	for (i = 1; i < 3; i++)
		for (j = 4; j < 6; j++)
			promote_test_add(test, hms[i], PT('A' + i, j), 300);
	measured[1] = measured[2] = 2800;
	n = promote_test_round_pmu(test, hms + 1, 2, measured + 1, &rr, 4, seq);
	KUNIT_ASSERT_EQ(test, n, 4);
	KUNIT_EXPECT_NE(test, seq[0] / 16, seq[1] / 16);
	KUNIT_EXPECT_NE(test, seq[1] / 16, seq[2] / 16);
	KUNIT_EXPECT_NE(test, seq[2] / 16, seq[3] / 16);
	promote_test_free_mms(hms, 3);
}

/*
 * promote_pick_pmu(): measured processes first; processes without a
 * measurement (or with one older than pmu_ttl_ms) after them in the
 * hawkeye-g order; none for one measured under the threshold.
 */
static void promote_test_pmu_fallback(struct kunit *test)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	struct list_head *pos[3][HAWKEYE_NR_BUCKETS];
	struct hawkeye_pick picks[16];
	struct hawkeye_mm *all[3], *hms[3];
	struct hawkeye_share share[3];
	struct hawkeye_vtime vtime = {};
	unsigned int done[3] = {};
	int i, n;

	promote_test_mms(test, all, 3, 3, 300);
	memcpy(hms, all, sizeof(all));
	for (i = 0; i < 3; i++)
		share[i] = (struct hawkeye_share){ .weight = 100, .vtime = &vtime };
	all[0]->map.measured = 50;			/* A: measured, low */
	all[0]->map.measured_at = jiffies;
	all[2]->map.measured = 6000;		/* C: measured, high */
	all[2]->map.measured_at = jiffies;
	n = promote_pick_pmu(hms, 3, share, pos, &rr, picks, 16);
	KUNIT_ASSERT_EQ(test, n, 6);
	for (i = 0; i < n; i++) {
		done[(picks[i].r->addr >> PMD_SHIFT) / 16]++;
		KUNIT_EXPECT_EQ_MSG(test, (picks[i].r->addr >> PMD_SHIFT) / 16,
				    i < 3 ? 2UL : 1UL, "promotion %d", i);
	}
	KUNIT_EXPECT_EQ(test, done[0], 0U);

	/* A stale measurement is none: A is served as under hawkeye-g. */
	all[0]->map.measured_at = jiffies -
		msecs_to_jiffies(hawkeye_promote.pmu_ttl_ms) - 1;
	KUNIT_EXPECT_EQ(test, promote_measured(all[0]), -1);
	KUNIT_EXPECT_EQ(test, promote_measured(all[2]), 6000);
	promote_test_free_mms(all, 3);
}

static void promote_test_policy_names(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("linux"),
			HAWKEYE_POLICY_LINUX);
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("hawkeye-g\n"),
			HAWKEYE_POLICY_G);
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("hawkeye-pmu"),
			HAWKEYE_POLICY_PMU);
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("hawkeye"), -EINVAL);
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy(""), -EINVAL);
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("[linux]"), -EINVAL);
}

/* Touch pages @from..@to - 1 of the 2 MB region at @addr. */
static void promote_test_touch(struct kunit *test, unsigned long addr,
			       int from, int to)
{
	for (; from < to; from++)
		KUNIT_ASSERT_EQ(test, put_user(1, (char __user *)addr + from * PAGE_SIZE), 0);
}

/* Open (@pass 0) or close window @pass on the regions at @addr[@nr]. */
static void promote_test_window(struct hawkeye_mm *hm, unsigned long *addr,
				int nr, unsigned long pass)
{
	struct map_walk w = { .hm = hm, .pass = pass, .weight = 50 };
	struct vm_area_struct *vma;
	int i;

	mmap_read_lock(current->mm);
	for (i = 0; i < nr; i++) {
		vma = vma_lookup(current->mm, addr[i]);
		if (!vma)
			continue;
		if (pass)
			map_count_region(vma, addr[i], &w);
		else
			map_clear_region(vma, addr[i], hm);
	}
	mmap_read_unlock(current->mm);
	if (!pass)
		flush_tlb_mm(current->mm);
}

/*
 * Pages mapped during a window are young from the faults that mapped
 * them: coverage counts pages used again, not pages populated. A region
 * used (half of it) keeps its coverage; one that had a page and got the
 * rest, and one populated whole within the window, count one page and
 * none.
 */
static void promote_test_population(struct kunit *test)
{
	struct hawkeye_mm *hm = promote_test_mm(test, 1);
	struct hawkeye_region *r;
	unsigned long uaddr, addr[3];
	unsigned int want[3] = { 128, 0, 0 };	/* EMAs of 256, 1, 0 at 50 % */
	int i;

	uaddr = kunit_vm_mmap(test, NULL, 0, 4 * HPAGE_PMD_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(uaddr));
	for (i = 0; i < 3; i++)
		addr[i] = ALIGN(uaddr, HPAGE_PMD_SIZE) + i * HPAGE_PMD_SIZE;
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr[0], 3 * HPAGE_PMD_SIZE,
					 MADV_NOHUGEPAGE), 0);
	promote_test_touch(test, addr[0], 0, HPAGE_PMD_NR);
	promote_test_touch(test, addr[1], 0, 1);

	promote_test_window(hm, addr, 3, 0);
	promote_test_touch(test, addr[0], 0, HPAGE_PMD_NR / 2);
	promote_test_touch(test, addr[1], 0, HPAGE_PMD_NR);
	promote_test_touch(test, addr[2], 0, HPAGE_PMD_NR);
	promote_test_window(hm, addr, 3, 1);

	for (i = 0; i < 3; i++) {
		r = xa_load(&hm->map.regions, addr[i] >> PMD_SHIFT);
		KUNIT_ASSERT_NOT_NULL(test, r);
		KUNIT_EXPECT_EQ_MSG(test, r->ema, want[i], "region %d", i);
	}
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 3UL);
	promote_test_free(hm);
}

#ifdef CONFIG_MMU_NOTIFIER
/*
 * A secondary MMU that counts its clear_young calls and saw an access to
 * one page, @hot, which it reports (and forgets) when asked about a range
 * that holds it.
 */
struct promote_test_mmu {
	struct mmu_notifier mn;
	int calls;
	unsigned long start, end;
	unsigned long hot;
};

static int promote_test_clear_young(struct mmu_notifier *mn, struct mm_struct *mm,
				    unsigned long start, unsigned long end)
{
	struct promote_test_mmu *t = container_of(mn, struct promote_test_mmu, mn);
	bool young = t->hot >= start && t->hot < end;

	t->calls++;
	t->start = start;
	t->end = end;
	if (young)
		t->hot = 0;
	return young;
}

static const struct mmu_notifier_ops promote_test_mmu_ops = {
	.clear_young = promote_test_clear_young,
};

/*
 * A window opened on @addr's region as promote_clear_mm() opens one, or
 * closed (@young not NULL) as promote_count_mm() closes one.
 */
static int promote_test_young(unsigned long addr, unsigned long *young,
			      unsigned long *skipped, bool *per_page)
{
	struct vm_area_struct *vma;
	int nr = -1;

	mmap_read_lock(current->mm);
	vma = vma_lookup(current->mm, addr);
	if (vma)
		nr = hawkeye_young_ptes(vma, addr, young, skipped, NULL, per_page);
	mmap_read_unlock(current->mm);
	if (!young)
		flush_tlb_mm(current->mm);
	return nr;
}

/*
 * Coverage counts the pages accessed, once: an opening clears the bits, a
 * closing reads them and leaves them for reclaim. A region whose page
 * table was not accessed since is skipped where the CPU marks tables
 * accessed, and one access is seen again. A secondary MMU is asked once
 * per 2 MB region (review finding C3) where it saw no access.
 */
static void promote_test_young_ptes(struct kunit *test)
{
	struct promote_test_mmu t = { .mn.ops = &promote_test_mmu_ops };
	unsigned long uaddr, addr, i, skipped = 0;
	unsigned long hw = arch_has_hw_nonleaf_pmd_young() && !lru_gen_enabled();
	DECLARE_BITMAP(young, HPAGE_PMD_NR);
	bool per_page = false;
	struct folio *folio;
	struct page *page;

	uaddr = kunit_vm_mmap(test, NULL, 0, 2 * HPAGE_PMD_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(uaddr));
	addr = ALIGN(uaddr, HPAGE_PMD_SIZE);
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr, HPAGE_PMD_SIZE, MADV_NOHUGEPAGE), 0);
	for (i = 0; i < HPAGE_PMD_NR; i++)
		KUNIT_ASSERT_EQ(test, put_user(1, (char __user *)addr + i * PAGE_SIZE), 0);

	KUNIT_EXPECT_EQ(test, promote_test_young(addr, NULL, &skipped, NULL), HPAGE_PMD_NR);
	KUNIT_EXPECT_EQ(test, skipped, 0);
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, NULL, &skipped, NULL), 0);
	KUNIT_EXPECT_EQ(test, skipped, hw);
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, young, &skipped, NULL), 0);
	KUNIT_EXPECT_EQ(test, skipped, 2 * hw);

	KUNIT_ASSERT_EQ(test, put_user(2, (char __user *)addr + 7 * PAGE_SIZE), 0);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, promote_test_young(addr, young, &skipped, NULL), 1);
		KUNIT_EXPECT_EQ(test, find_first_bit(young, HPAGE_PMD_NR), 7);
		KUNIT_EXPECT_EQ(test, bitmap_weight(young, HPAGE_PMD_NR), 1);
	}
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, NULL, &skipped, NULL), 1);
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, young, &skipped, NULL), 0);
	KUNIT_EXPECT_EQ(test, skipped, 3 * hw);

	/*
	 * A secondary MMU saw one page accessed (review finding C6): its
	 * range answer marks no page young, it makes the next windows ask
	 * page by page, and then only that page counts. The CPU's bits are
	 * old (the windows above cleared them).
	 */
	KUNIT_ASSERT_EQ(test, get_user_pages_fast(addr + 3 * PAGE_SIZE, 1, 0, &page), 1);
	folio = page_folio(page);
	KUNIT_ASSERT_EQ(test, mmu_notifier_register(&t.mn, current->mm), 0);
	t.hot = addr + 7 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, NULL, &skipped, &per_page), 0);
	KUNIT_EXPECT_TRUE(test, per_page);
	KUNIT_EXPECT_EQ(test, t.calls, 1);
	KUNIT_EXPECT_EQ(test, t.start, addr);
	KUNIT_EXPECT_EQ(test, t.end, addr + HPAGE_PMD_SIZE);
	t.hot = addr + 7 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, young, &skipped, &per_page), 1);
	KUNIT_EXPECT_EQ(test, find_first_bit(young, HPAGE_PMD_NR), 7);
	KUNIT_EXPECT_TRUE(test, per_page);
	KUNIT_EXPECT_EQ(test, t.calls, 1 + HPAGE_PMD_NR);
	/*
	 * An opening counts nothing: one range ask clears the bits, not 512
	 * page asks, and a yes keeps the access of every page for reclaim,
	 * which the range answer cleared.
	 */
	folio_test_clear_young(folio);
	t.hot = addr;
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, NULL, &skipped, &per_page), 0);
	KUNIT_EXPECT_TRUE(test, per_page);
	KUNIT_EXPECT_EQ(test, t.calls, 2 + HPAGE_PMD_NR);
	KUNIT_EXPECT_TRUE(test, folio_test_young(folio));
	/* No access since: page by page once more, then a range again. */
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, young, &skipped, &per_page), 0);
	KUNIT_EXPECT_FALSE(test, per_page);
	KUNIT_EXPECT_EQ(test, promote_test_young(addr, young, &skipped, &per_page), 0);
	KUNIT_EXPECT_EQ(test, t.calls, 3 + 2 * HPAGE_PMD_NR);
	mmu_notifier_unregister(&t.mn, current->mm);
	folio_put(folio);
	KUNIT_EXPECT_EQ(test, skipped, 3 * hw);
}
#endif

static struct kunit_case promote_test_cases[] = {
	KUNIT_CASE(promote_test_bucket),
	KUNIT_CASE(promote_test_ema),
	KUNIT_CASE(promote_test_moves),
	KUNIT_CASE(promote_test_smaller),
	KUNIT_CASE(promote_test_order_paper),
	KUNIT_CASE(promote_test_order_batches),
	KUNIT_CASE(promote_test_order_fair),
	KUNIT_CASE(promote_test_order_weights),
	KUNIT_CASE(promote_test_order_weights_across_batches),
	KUNIT_CASE(promote_test_order_stale_vtime),
	KUNIT_CASE(promote_test_order_weights_across_buckets),
	KUNIT_CASE(promote_test_order_weights_climbing),
	KUNIT_CASE(promote_test_order_own_hotter),
	KUNIT_CASE(promote_test_order_fresh),
	KUNIT_CASE(promote_test_fresh_populated),
	KUNIT_CASE(promote_test_pmu_table9),
	KUNIT_CASE(promote_test_pmu_band),
	KUNIT_CASE(promote_test_pmu_fallback),
	KUNIT_CASE(promote_test_policy_names),
	KUNIT_CASE(promote_test_population),
#ifdef CONFIG_MMU_NOTIFIER
	KUNIT_CASE(promote_test_young_ptes),
#endif
	{}
};

static struct kunit_suite promote_test_suite = {
	.name = "hawkeye-access-map",
	.test_cases = promote_test_cases,
};
kunit_test_suite(promote_test_suite);

#endif /* _MM_HAWKEYE_ACCESS_MAP_KUNIT_H */
