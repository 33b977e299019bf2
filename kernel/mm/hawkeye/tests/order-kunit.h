/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the order hawkeye-g and hawkeye-pmu promote in, built
 * into order.c so that they reach its static functions. The access_maps
 * are built by hand, without an mm.
 */
#ifndef _MM_HAWKEYE_ORDER_KUNIT_H
#define _MM_HAWKEYE_ORDER_KUNIT_H

#include <kunit/test.h>

#include "access_map-fixtures-kunit.h"

/* Region names: process 'A'..'C' and number, index = 16 * process + number. */
#define PT(p, n)	((unsigned long)((p) - 'A') * 16 + (n))

/* @nr processes A, B, ..., each with regions 0 to @regions - 1 at @ema. */
static void order_test_mms(struct kunit *test, struct hawkeye_mm **hms,
			   int nr, int regions, unsigned int ema)
{
	int i, j;

	for (i = 0; i < nr; i++) {
		hms[i] = map_test_mm(test, i + 1);
		for (j = 0; j < regions; j++)
			map_test_add(test, hms[i], PT('A' + i, j), ema);
	}
}

static void order_test_free_mms(struct hawkeye_mm **hms, int nr)
{
	while (nr--)
		map_test_free(hms[nr]);
}

/*
 * Figure 4 of the paper as its promotion order implies it: A1, B1 and C1
 * in bucket 9, C2 in 8, B2 and C3 in 7, C4 in 6, B3 and B4 in 5, A2, A3
 * and C5 in 4. Bucket midpoints as EMAs.
 */
static void order_test_fig4(struct kunit *test, struct hawkeye_mm **hms)
{
	static const struct { char p; int n; unsigned int bucket; } regions[] = {
		{ 'A', 1, 9 }, { 'A', 2, 4 }, { 'A', 3, 4 },
		{ 'B', 1, 9 }, { 'B', 2, 7 }, { 'B', 3, 5 }, { 'B', 4, 5 },
		{ 'C', 1, 9 }, { 'C', 2, 8 }, { 'C', 3, 7 }, { 'C', 4, 6 },
		{ 'C', 5, 4 },
	};
	int i;

	for (i = 0; i < 3; i++)
		hms[i] = map_test_mm(test, i + 1);
	for (i = 0; i < ARRAY_SIZE(regions); i++)
		map_test_add(test, hms[regions[i].p - 'A'],
			     PT(regions[i].p, regions[i].n),
				 regions[i].bucket * 50 + 25);
}

/*
 * Pick @n regions as a promotion round does, each process in a cgroup of
 * its own with the weight @weights[i] (NULL: 100 each) and the virtual
 * times @vtime[i] (NULL: fresh ones), take the picked ones out of the map
 * (promoted) and append their indexes to @seq.
 */
static int order_test_round_weighted(struct kunit *test,
				     struct hawkeye_mm **hms, unsigned int nr,
				       const unsigned int *weights,
				       struct hawkeye_vtime *vtime,
				       struct hawkeye_rr_cursor *rr, unsigned int n,
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
	got = order_g(hms, nr, share, pos, rr, picks, n);
	for (i = 0; i < got; i++) {
		seq[i] = picks[i].r->addr >> PMD_SHIFT;
		hawkeye_map_remove(picks[i].hm, picks[i].r);
	}
	return got;
}

static int order_test_round(struct kunit *test, struct hawkeye_mm **hms,
			    unsigned int nr, struct hawkeye_rr_cursor *rr,
			      unsigned int n, unsigned long *seq)
{
	return order_test_round_weighted(test, hms, nr, NULL, NULL, rr, n, seq);
}

/*
 * Two cgroups with weights 1:3 and regions in one bucket: a batch of 8
 * gives them 2 and 6, batch after batch; once the heavier one has none
 * left, the other gets them all, and it builds up no debt meanwhile. A
 * cgroup at its cap (weight 0) gets none.
 */
static void order_test_order_weights(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 300 }, capped[] = { 0, 300 };
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	struct hawkeye_vtime vtime[2] = {};
	unsigned int done[2];
	unsigned long seq[16];
	int i, j, n;

	order_test_mms(test, hms, 2, 12, 300);
	map_test_add(test, hms[0], PT('A', 12), 300);
	map_test_add(test, hms[0], PT('A', 13), 300);
	for (i = 0; i < 2; i++) {
		n = order_test_round_weighted(test, hms, 2, weights, vtime, &rr,
					      8, seq);
		KUNIT_ASSERT_EQ(test, n, 8);
		done[0] = done[1] = 0;
		for (j = 0; j < n; j++)
			done[seq[j] / 16]++;
		KUNIT_EXPECT_EQ_MSG(test, done[0], 2U, "batch %d", i);
		KUNIT_EXPECT_EQ_MSG(test, done[1], 6U, "batch %d", i);
	}
	/* B has none left: A gets the whole batch. */
	n = order_test_round_weighted(test, hms, 2, weights, vtime, &rr, 8, seq);
	KUNIT_EXPECT_EQ(test, n, 8);
	for (j = 0; j < n; j++)
		KUNIT_EXPECT_EQ(test, seq[j] / 16, 0UL);
	/* A at its cap: nothing for it, even with nobody else. */
	KUNIT_EXPECT_EQ(test, order_test_round_weighted(test, hms, 2, capped,
							vtime, &rr, 8, seq), 0);
	KUNIT_EXPECT_EQ(test, hms[0]->map.nr_regions, 2UL);
	order_test_free_mms(hms, 2);
}

/*
 * Weighted fair queueing keeps its virtual time across batches: weights
 * 100 and 101 with a batch of 1 alternate (10 and 10 of 20), where
 * restarting the count every batch gave the heavier one all 20; weights 1
 * and 3 with a batch of 1 come out 5 and 15.
 */
static void order_test_order_weights_across_batches(struct kunit *test)
{
	static const unsigned int close[] = { 100, 101 }, third[] = { 100, 300 };
	const unsigned int *weights[] = { close, third };
	static const unsigned int want[][2] = { { 10, 10 }, { 5, 15 } };
	struct hawkeye_mm *hms[2];
	unsigned long seq[1];
	int c, i;

	for (c = 0; c < 2; c++) {
		struct hawkeye_rr_cursor rr = { .bucket = -1 };
		struct hawkeye_vtime vtime[2] = {};
		unsigned int done[2] = {};

		order_test_mms(test, hms, 2, 15, 300);
		for (i = 0; i < 20; i++) {
			int got = order_test_round_weighted(test, hms, 2, weights[c],
							      vtime, &rr, 1, seq);

			KUNIT_ASSERT_EQ(test, got, 1);
			done[seq[0] / 16]++;
		}
		KUNIT_EXPECT_EQ_MSG(test, done[0], want[c][0], "weights %u:%u",
				    weights[c][0], weights[c][1]);
		KUNIT_EXPECT_EQ_MSG(test, done[1], want[c][1], "weights %u:%u",
				    weights[c][0], weights[c][1]);
		order_test_free_mms(hms, 2);
	}
}

/*
 * A virtual time far from the clock is stale (a cgroup absent or capped
 * for long, or a clock restarted with the thread): it starts at the clock
 * and does not starve the other cgroup, wrapped or not. Weights 100:100,
 * a batch of 8 comes out 4:4.
 */
static void order_test_order_stale_vtime(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 100 };
	static const unsigned int clock[] = { 0x80000001, 0 };
	static const unsigned int stale[][2] = {
		{ 0, 0x80000001 }, { 0x40000000, 0 },
	};
	const int b = 300 / HAWKEYE_BUCKET_WIDTH;
	struct hawkeye_mm *hms[2];
	unsigned long seq[8];
	int c, j, n;

	for (c = 0; c < 2; c++) {
		struct hawkeye_rr_cursor rr = { .bucket = -1 };
		struct hawkeye_vtime vtime[2] = {};
		unsigned int done[2] = {};

		order_test_mms(test, hms, 2, 9, 300);
		/* A first batch sets the bucket; then the times go stale. */
		KUNIT_ASSERT_EQ(test, order_test_round_weighted(test, hms, 2,
								weights, vtime, &rr, 2, seq), 2);
		rr.vclock[b] = clock[c];
		vtime[0].t[b] = stale[c][0];
		vtime[1].t[b] = stale[c][1];
		n = order_test_round_weighted(test, hms, 2, weights, vtime, &rr,
					      8, seq);
		KUNIT_ASSERT_EQ(test, n, 8);
		for (j = 0; j < n; j++)
			done[seq[j] / 16]++;
		KUNIT_EXPECT_EQ_MSG(test, done[0], 4U, "case %d", c);
		KUNIT_EXPECT_EQ_MSG(test, done[1], 4U, "case %d", c);
		order_test_free_mms(hms, 2);
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
static void order_test_order_weights_across_buckets(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 300, 100 };
	struct hawkeye_vtime vtime[3] = {};
	unsigned int done[3] = {};
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	unsigned long seq[3];
	int i, j, n;

	order_test_mms(test, hms, 2, 12, 300);
	hms[2] = map_test_mm(test, 3);
	for (i = 0; i < 6; i++) {
		map_test_add(test, hms[2], PT('C', i), 500);
		n = order_test_round_weighted(test, hms, 3, weights, vtime,
					      &rr, 3, seq);
		KUNIT_ASSERT_EQ(test, n, 3);
		KUNIT_EXPECT_EQ_MSG(test, seq[0] / 16, 2UL, "batch %d", i);
		for (j = 1; j < n; j++)
			done[seq[j] / 16]++;
	}
	KUNIT_EXPECT_EQ(test, done[0], 3U);
	KUNIT_EXPECT_EQ(test, done[1], 9U);
	order_test_free_mms(hms, 3);
}

/*
 * Cgroups whose regions climb the buckets together keep their order by
 * weight: three with weights 100, 75 and 225 and regions moving from
 * bucket 5 to 7, 8 and 9 between batches of 8 share 80 promotions 20:15:45,
 * as in one bucket, whether all regions move at once or the odd ones a
 * batch later. Starting each at the clock of every bucket entered gave
 * the lighter ones a turn in each: 20:17:43.
 */
static void order_test_order_weights_climbing(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 75, 225 };
	static const unsigned int climb[] = { 5, 7, 8, 9 };
	struct hawkeye_region *r;
	struct hawkeye_mm *hms[3];
	unsigned long seq[8], idx;
	int c, i, j, n, step;

	for (c = 0; c < 2; c++) {
		struct hawkeye_vtime vtime[3] = {};
		struct hawkeye_rr_cursor rr = { .bucket = -1 };
		unsigned int done[3] = {};

		for (i = 0; i < 3; i++) {
			hms[i] = map_test_mm(test, i + 1);
			for (j = 0; j < 60; j++)
				map_test_add(test, hms[i], i * 64 + j,
					     climb[0] * HAWKEYE_BUCKET_WIDTH);
		}
		for (i = 0; i < 10; i++) {
			for (j = 0; j < 3; j++)
				xa_for_each(&hms[j]->map.regions, idx, r) {
					step = clamp_t(int, i - (c && (idx & 1)), 0,
						       ARRAY_SIZE(climb) - 1);
					hawkeye_map_place(hms[j], r,
							  climb[step] * HAWKEYE_BUCKET_WIDTH,
						  HPAGE_PMD_ORDER, false);
				}
			n = order_test_round_weighted(test, hms, 3, weights,
						      vtime, &rr, 8, seq);
			KUNIT_ASSERT_EQ(test, n, 8);
			for (j = 0; j < n; j++)
				done[seq[j] / 64]++;
		}
		KUNIT_EXPECT_EQ_MSG(test, done[0], 20U, "staggered %d", c);
		KUNIT_EXPECT_EQ_MSG(test, done[1], 15U, "staggered %d", c);
		KUNIT_EXPECT_EQ_MSG(test, done[2], 45U, "staggered %d", c);
		order_test_free_mms(hms, 3);
	}
}

/*
 * A cgroup's own hotter regions do not cost it its place in a bucket: A
 * and B (weights 100 each) with regions in bucket 6, and before each
 * batch of 2 a region of B in bucket 9, which B gets first. A and B
 * share bucket 6 evenly, 3 and 3 of 6; charging B's region in bucket 9
 * to its time in bucket 6 again at every batch gave 6 and 0.
 */
static void order_test_order_own_hotter(struct kunit *test)
{
	static const unsigned int weights[] = { 100, 100 };
	struct hawkeye_vtime vtime[2] = {};
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	unsigned int done[2] = {};
	unsigned long seq[2];
	int i, n;

	order_test_mms(test, hms, 2, 8, 300);
	for (i = 0; i < 6; i++) {
		map_test_add(test, hms[1], PT('B', 8 + i), 500);
		n = order_test_round_weighted(test, hms, 2, weights, vtime,
					      &rr, 2, seq);
		KUNIT_ASSERT_EQ(test, n, 2);
		KUNIT_EXPECT_EQ_MSG(test, seq[0], PT('B', 8 + i), "batch %d", i);
		done[seq[1] / 16]++;
	}
	KUNIT_EXPECT_EQ(test, done[0], 3U);
	KUNIT_EXPECT_EQ(test, done[1], 3U);
	order_test_free_mms(hms, 2);
}

/*
 * promote/fresh_ms: a fresh process's bucket 0 waits, its other buckets
 * and a process past its fresh_ms are served as usual; with fresh_ms 0
 * no process is fresh.
 */
static void order_test_order_fresh(struct kunit *test)
{
	unsigned int fresh_ms = hawkeye_promote.fresh_ms;
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	unsigned long seq[16];
	int i;

	for (i = 0; i < 2; i++) {
		hms[i] = map_test_mm(test, i + 1);
		map_test_add(test, hms[i], PT('A' + i, 1), 10);
		map_test_add(test, hms[i], PT('A' + i, 2), 10);
	}
	map_test_add(test, hms[0], PT('A', 3), 160);
	hawkeye_promote.fresh_ms = 10000;
	hms[0]->registered = jiffies;
	hms[1]->registered = jiffies - msecs_to_jiffies(10000) - 1;
	for (i = 0; i < 2; i++)
		hms[i]->fresh_from = hms[i]->registered;
	KUNIT_EXPECT_TRUE(test, hawkeye_promote_fresh(hms[0]));
	KUNIT_EXPECT_FALSE(test, hawkeye_promote_fresh(hms[1]));
	/* A's bucket 3, then B's bucket 0; A's bucket 0 is not picked. */
	KUNIT_EXPECT_EQ(test, order_test_round(test, hms, 2, &rr, 8, seq), 3);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 3));
	KUNIT_EXPECT_EQ(test, seq[1], PT('B', 1));
	KUNIT_EXPECT_EQ(test, seq[2], PT('B', 2));
	KUNIT_EXPECT_EQ(test, order_test_round(test, hms, 2, &rr, 8, seq), 0);
	KUNIT_EXPECT_EQ(test, hms[0]->map.nr[0], 2UL);
	/* Knob at 0: nobody is fresh, A's bucket 0 goes. */
	hawkeye_promote.fresh_ms = 0;
	KUNIT_EXPECT_FALSE(test, hawkeye_promote_fresh(hms[0]));
	KUNIT_EXPECT_EQ(test, order_test_round(test, hms, 2, &rr, 8, seq), 2);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 1));
	KUNIT_EXPECT_EQ(test, seq[1], PT('A', 2));
	hawkeye_promote.fresh_ms = fresh_ms;
	order_test_free_mms(hms, 2);
}

/*
 * A fresh process that maps memory stays fresh fresh_ms from then, up to
 * PROMOTE_FRESH_MAX times fresh_ms after its registration; one no longer
 * fresh does not become fresh again.
 */
static void order_test_fresh_populated(struct kunit *test)
{
	unsigned int fresh_ms = hawkeye_promote.fresh_ms;
	struct hawkeye_mm *hm = map_test_mm(test, 1);
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
	map_test_free(hm);
}

/*
 * promote/best_size: a region whose best size is below 2 MB leaves its
 * bucket for the smaller list, which a round does not pick from, and is
 * still counted in its bucket and best size; back at 2 MB (or with the
 * knob off) it rejoins its bucket at the tail.
 */
static void order_test_smaller(struct kunit *test)
{
	unsigned int knob = hawkeye_promote.best_size;
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hm = map_test_mm(test, 1);
	struct hawkeye_region *a;
	unsigned long idx[4];

	a = map_test_add(test, hm, 1, 300);
	map_test_add(test, hm, 2, 300);
	WRITE_ONCE(hawkeye_promote.best_size, 0);
	hawkeye_map_place(hm, a, 300, 4, false);
	KUNIT_EXPECT_FALSE(test, a->smaller);
	KUNIT_EXPECT_EQ(test, map_test_bucket_list(hm, 6, idx, 4), 2);

	WRITE_ONCE(hawkeye_promote.best_size, 1);
	hawkeye_map_place(hm, a, 310, 4, false);
	KUNIT_EXPECT_TRUE(test, a->smaller);
	KUNIT_ASSERT_EQ(test, map_test_bucket_list(hm, 6, idx, 4), 1);
	KUNIT_EXPECT_EQ(test, idx[0], 2UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[6], 2UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr_best[4], 1UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr_best[HPAGE_PMD_ORDER], 1UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 610UL);

	/* Dense again: back to its bucket, behind b. */
	hawkeye_map_place(hm, a, 300, HPAGE_PMD_ORDER, false);
	KUNIT_EXPECT_FALSE(test, a->smaller);
	KUNIT_ASSERT_EQ(test, map_test_bucket_list(hm, 6, idx, 4), 2);
	KUNIT_EXPECT_EQ(test, idx[0], 2UL);
	KUNIT_EXPECT_EQ(test, idx[1], 1UL);

	/* Only b is picked while a is best at 64 KB. */
	hawkeye_map_place(hm, a, 300, 4, false);
	KUNIT_EXPECT_EQ(test, order_test_round(test, &hm, 1, &rr, 4, idx), 1);
	KUNIT_EXPECT_EQ(test, idx[0], 2UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 1UL);
	hawkeye_map_remove(hm, a);
	KUNIT_EXPECT_TRUE(test, list_empty(&hm->map.smaller));
	KUNIT_EXPECT_EQ(test, hm->map.nr_best[4], 0UL);
	WRITE_ONCE(hawkeye_promote.best_size, knob);
	map_test_free(hm);
}

static const unsigned long order_test_fig4_order[] = {
	PT('A', 1), PT('B', 1), PT('C', 1), PT('C', 2), PT('B', 2), PT('C', 3),
	PT('C', 4), PT('B', 3), PT('B', 4), PT('A', 2), PT('C', 5), PT('A', 3),
};

/* The paper's example (section 3.4), in one go. */
static void order_test_order_paper(struct kunit *test)
{
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	unsigned long seq[16];
	int i, n;

	order_test_fig4(test, hms);
	n = order_test_round(test, hms, 3, &rr, 16, seq);
	KUNIT_ASSERT_EQ(test, n, (int)ARRAY_SIZE(order_test_fig4_order));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, seq[i], order_test_fig4_order[i],
				    "promotion %d", i);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, hms[i]->map.nr_regions, 0UL);
		map_test_free(hms[i]);
	}
}

/* The same in batches: a batch ending mid-bucket changes nothing. */
static void order_test_order_batches(struct kunit *test)
{
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	unsigned long seq[16];
	int i, n = 0, got;

	order_test_fig4(test, hms);
	do {
		got = order_test_round(test, hms, 3, &rr, 2, seq + n);
		n += got;
	} while (got);
	KUNIT_ASSERT_EQ(test, n, (int)ARRAY_SIZE(order_test_fig4_order));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, seq[i], order_test_fig4_order[i],
				    "promotion %d", i);
	order_test_free_mms(hms, 3);
}

/*
 * Three equal processes, one bucket: batches of 8 serve them in turn, so
 * that their promoted counts never differ by more than one; a process that
 * exits (leaves the snapshot) is skipped, and one that registers later
 * joins the turns.
 */
static void order_test_order_fair(struct kunit *test)
{
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *all[3], *hms[3];
	unsigned long seq[16];
	unsigned int done[3] = {};
	int i, j, n;

	order_test_mms(test, all, 3, 10, 300);
	memcpy(hms, all, sizeof(all));
	for (;;) {
		n = order_test_round(test, hms, 3, &rr, 8, seq);
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
			map_test_add(test, all[i], PT('A' + i, j), 300);
	hms[1] = all[2];
	n = order_test_round(test, hms, 2, &rr, 4, seq);
	KUNIT_ASSERT_EQ(test, n, 4);
	for (j = 0; j < 4; j++)
		KUNIT_EXPECT_NE(test, seq[j] / 16, 1UL);
	KUNIT_EXPECT_NE(test, seq[0] / 16, seq[1] / 16);
	KUNIT_EXPECT_NE(test, seq[1] / 16, seq[2] / 16);

	/* A region higher up goes first, whoever's turn it was. */
	map_test_add(test, hms[0], PT('A', 9), 480);
	map_test_add(test, hms[1], PT('C', 9), 20);
	n = order_test_round(test, hms, 2, &rr, 16, seq);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 9));
	KUNIT_EXPECT_EQ(test, seq[1], PT('C', 9));
	order_test_free_mms(all, 3);
}

/* Pick @n regions in the hawkeye-pmu order; as order_test_round(). */
static int order_test_round_pmu(struct kunit *test, struct hawkeye_mm **hms,
				unsigned int nr, const int *measured,
				  struct hawkeye_rr_cursor *rr, unsigned int n,
				  unsigned long *seq)
{
	struct list_head *pos[3][HAWKEYE_NR_BUCKETS];
	struct hawkeye_pick picks[16];
	unsigned int i, got;

	KUNIT_ASSERT_LE(test, nr, 3U);
	KUNIT_ASSERT_LE(test, n, 16U);
	got = order_pmu(hms, nr, measured, 200, 100, pos, rr, picks, n);
	for (i = 0; i < got; i++) {
		seq[i] = picks[i].r->addr >> PMD_SHIFT;
		hawkeye_map_remove(picks[i].hm, picks[i].r);
	}
	return got;
}

/*
 * Table 9 of the paper: two processes with the same high access coverage,
 * A measured at 60% MMU overhead and B at 0.5%. Every promotion goes to
 * A, highest bucket first; none to B, which is under the 2% threshold,
 * also once A has nothing left; and none to A once it is under it too.
 */
static void order_test_pmu_table9(struct kunit *test)
{
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[2];
	int measured[2] = { 6000, 50 };
	unsigned long seq[16];
	int i, n;

	for (i = 0; i < 2; i++) {
		hms[i] = map_test_mm(test, i + 1);
		map_test_add(test, hms[i], PT('A' + i, 0), 100);
		map_test_add(test, hms[i], PT('A' + i, 1), 480);
		map_test_add(test, hms[i], PT('A' + i, 2), 480);
	}
	n = order_test_round_pmu(test, hms, 2, measured, &rr, 2, seq);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 1));
	KUNIT_EXPECT_EQ(test, seq[1], PT('A', 2));
	n = order_test_round_pmu(test, hms, 2, measured, &rr, 8, seq);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, seq[0], PT('A', 0));
	KUNIT_EXPECT_EQ(test, hms[1]->map.nr_regions, 3UL);

	/* A promoted down to 1.5%: nobody is worth a promotion. */
	map_test_add(test, hms[0], PT('A', 3), 480);
	measured[0] = 150;
	KUNIT_EXPECT_EQ(test, order_test_round_pmu(test, hms, 2, measured,
						   &rr, 8, seq), 0);
	/* At the threshold counts. */
	measured[1] = 200;
	n = order_test_round_pmu(test, hms, 2, measured, &rr, 1, seq);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, seq[0] / 16, 1UL);
	order_test_free_mms(hms, 2);
}

/*
 * Ties and near-ties (within pmu_band, 1%) take turns; a process further
 * down waits until the ones above have nothing left. A process that
 * exits (leaves the snapshot) is skipped.
 */
static void order_test_pmu_band(struct kunit *test)
{
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct hawkeye_mm *hms[3];
	int measured[3] = { 3000, 2950, 2800 };
	unsigned long seq[16];
	int i, j, n;

	order_test_mms(test, hms, 3, 3, 300);
	n = order_test_round_pmu(test, hms, 3, measured, &rr, 8, seq);
	KUNIT_ASSERT_EQ(test, n, 8);
	for (j = 0; j < 6; j++)
		KUNIT_EXPECT_EQ_MSG(test, seq[j] / 16, (unsigned long)(j % 2),
				    "promotion %d", j);
	KUNIT_EXPECT_EQ(test, seq[6] / 16, 2UL);
	KUNIT_EXPECT_EQ(test, seq[7] / 16, 2UL);

	/* A exited: B and C, now tied, take turns starting with B. */
	for (i = 1; i < 3; i++)
		for (j = 4; j < 6; j++)
			map_test_add(test, hms[i], PT('A' + i, j), 300);
	measured[1] = measured[2] = 2800;
	n = order_test_round_pmu(test, hms + 1, 2, measured + 1, &rr, 4, seq);
	KUNIT_ASSERT_EQ(test, n, 4);
	KUNIT_EXPECT_NE(test, seq[0] / 16, seq[1] / 16);
	KUNIT_EXPECT_NE(test, seq[1] / 16, seq[2] / 16);
	KUNIT_EXPECT_NE(test, seq[2] / 16, seq[3] / 16);
	order_test_free_mms(hms, 3);
}

/*
 * order_pick_pmu(): measured processes first; processes without a
 * measurement (or with one older than pmu_ttl_ms) after them in the
 * hawkeye-g order; none for one measured under the threshold.
 */
static void order_test_pmu_fallback(struct kunit *test)
{
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	struct list_head *pos[3][HAWKEYE_NR_BUCKETS];
	struct hawkeye_pick picks[16];
	struct hawkeye_mm *all[3], *hms[3];
	struct hawkeye_share share[3];
	struct hawkeye_vtime vtime = {};
	unsigned int done[3] = {};
	int i, n;

	order_test_mms(test, all, 3, 3, 300);
	memcpy(hms, all, sizeof(all));
	for (i = 0; i < 3; i++)
		share[i] = (struct hawkeye_share){ .weight = 100, .vtime = &vtime };
	all[0]->map.measured = 50;			/* A: measured, low */
	all[0]->map.measured_at = jiffies;
	all[2]->map.measured = 6000;		/* C: measured, high */
	all[2]->map.measured_at = jiffies;
	n = order_pick_pmu(hms, 3, share, pos, &rr, picks, 16);
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
	KUNIT_EXPECT_EQ(test, hawkeye_map_measured(all[0]), -1);
	KUNIT_EXPECT_EQ(test, hawkeye_map_measured(all[2]), 6000);
	order_test_free_mms(all, 3);
}

static void order_test_policy_names(struct kunit *test)
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

static struct kunit_case order_test_cases[] = {
	KUNIT_CASE(order_test_smaller),
	KUNIT_CASE(order_test_order_paper),
	KUNIT_CASE(order_test_order_batches),
	KUNIT_CASE(order_test_order_fair),
	KUNIT_CASE(order_test_order_weights),
	KUNIT_CASE(order_test_order_weights_across_batches),
	KUNIT_CASE(order_test_order_stale_vtime),
	KUNIT_CASE(order_test_order_weights_across_buckets),
	KUNIT_CASE(order_test_order_weights_climbing),
	KUNIT_CASE(order_test_order_own_hotter),
	KUNIT_CASE(order_test_order_fresh),
	KUNIT_CASE(order_test_fresh_populated),
	KUNIT_CASE(order_test_pmu_table9),
	KUNIT_CASE(order_test_pmu_band),
	KUNIT_CASE(order_test_pmu_fallback),
	KUNIT_CASE(order_test_policy_names),
	{}
};

static struct kunit_suite order_test_suite = {
	.name = "hawkeye-order",
	.test_cases = order_test_cases,
};
kunit_test_suite(order_test_suite);

#endif /* _MM_HAWKEYE_ORDER_KUNIT_H */
