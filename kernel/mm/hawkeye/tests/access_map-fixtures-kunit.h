/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Access maps built by hand, without an mm, for the KUnit tests of the
 * access map (access_map.c) and of the promotion order (order.c).
 */
#ifndef _MM_HAWKEYE_ACCESS_MAP_FIXTURES_KUNIT_H
#define _MM_HAWKEYE_ACCESS_MAP_FIXTURES_KUNIT_H

#include <kunit/test.h>

static struct hawkeye_mm *map_test_mm(struct kunit *test, u64 seq)
{
	struct hawkeye_mm *hm = kunit_kzalloc(test, sizeof(*hm), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, hm);
	hm->ops = &hawkeye_g_ops;
	mutex_init(&hm->lock);
	hawkeye_map_mm_init(hm);
	hm->seq = seq;
	return hm;
}

/* Add a region at 2 MB index @idx with access coverage @ema. */
static struct hawkeye_region *map_test_add(struct kunit *test,
					   struct hawkeye_mm *hm,
					       unsigned long idx,
					       unsigned int ema)
{
	struct hawkeye_region *r = kzalloc(sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->addr = idx << PMD_SHIFT;
	INIT_LIST_HEAD(&r->node);
	KUNIT_ASSERT_EQ(test, xa_insert(&hm->map.regions, idx, r, GFP_KERNEL), 0);
	hawkeye_map_place(hm, r, ema, HPAGE_PMD_ORDER, true);
	return r;
}

/* The regions of bucket @b, head to tail, as 2 MB indexes. */
static int __maybe_unused map_test_bucket_list(struct hawkeye_mm *hm, int b,
					       unsigned long *idx, int max)
{
	struct hawkeye_region *r;
	int n = 0;

	list_for_each_entry(r, &hm->map.buckets[b], node)
		if (n < max)
			idx[n++] = r->addr >> PMD_SHIFT;
	return n;
}

static void map_test_free(struct hawkeye_mm *hm)
{
	hawkeye_map_clear(hm);
	xa_destroy(&hm->map.regions);
}

#endif /* _MM_HAWKEYE_ACCESS_MAP_FIXTURES_KUNIT_H */
