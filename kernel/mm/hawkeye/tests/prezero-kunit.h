/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of HawkEye pre-zeroing, built into prezero.c so that they
 * reach its static functions.
 */
#ifndef _MM_HAWKEYE_PREZERO_KUNIT_H
#define _MM_HAWKEYE_PREZERO_KUNIT_H

#include <kunit/test.h>
#include <linux/string.h>

static void prezero_test_zero_block(struct kunit *test, bool nt)
{
	const unsigned int order = 2;
	struct page *page = alloc_pages(GFP_KERNEL, order);
	unsigned long i;

	KUNIT_ASSERT_NOT_NULL(test, page);
	for (i = 0; i < (1UL << order); i++)
		memset(page_address(page + i), 0x5a, PAGE_SIZE);
	zero_block(page, order, nt);
	for (i = 0; i < (1UL << order); i++)
		KUNIT_EXPECT_NULL(test, memchr_inv(page_address(page + i), 0, PAGE_SIZE));
	__free_pages(page, order);
}

static void prezero_test_zero_block_nt(struct kunit *test)
{
	prezero_test_zero_block(test, true);
}

static void prezero_test_zero_block_cached(struct kunit *test)
{
	prezero_test_zero_block(test, false);
}

static void prezero_test_budget(struct kunit *test)
{
	/* The paper's default: 10k pages a second, one 2 MB block. */
	KUNIT_EXPECT_EQ(test, hawkeye_budget_ns(512, 10000), 51200000ULL);
	KUNIT_EXPECT_EQ(test, hawkeye_budget_ns(1024, 1), 1024ULL * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, hawkeye_budget_ns(512, 0), 0ULL);
}

/* A zeroed block is counted as free and zeroed, and stays free memory. */
static void prezero_test_one_block_is_counted(struct kunit *test)
{
	struct page *probe = alloc_page(GFP_HIGHUSER_MOVABLE);
	struct zone *zone;
	unsigned long free, zeroed, done;

	KUNIT_ASSERT_NOT_NULL(test, probe);
	zone = page_zone(probe);
	__free_page(probe);

	/* As the thread does before it zeroes in a zone. */
	KUNIT_ASSERT_EQ(test, zeroed_index_init_zone(zone), 0);
	free = zone_page_state_snapshot(zone, NR_FREE_PAGES);
	zeroed = zone_page_state_snapshot(zone, NR_FREE_ZEROED);
	done = prezero_one_block(zone, true);
	if (!done)
		kunit_skip(test, "no free huge block in %s", zone->name);
	KUNIT_EXPECT_GE(test, done, 1UL << PREZERO_ORDER);
	KUNIT_EXPECT_GE(test, zone_page_state_snapshot(zone, NR_FREE_ZEROED),
			zeroed + done);
	/* Other allocations may come and go; a 2 MB block did not vanish. */
	KUNIT_EXPECT_GT(test, zone_page_state_snapshot(zone, NR_FREE_PAGES) + 256,
			free);
}

/*
 * A zone populated after pre-zeroing was turned on (hotplug) has no index
 * of zeroed blocks: the thread gives it one before it zeroes there, so
 * that a fault can find what it zeroed.
 */
static void prezero_test_zone_without_index(struct kunit *test)
{
	pg_data_t *pgdat = NODE_DATA(numa_node_id());
	struct zeroed_index *own, *made;
	unsigned long orders;
	struct page *found = NULL;
	struct zone *zone;
	unsigned long done;
	int z = MAX_NR_ZONES - 1;

	/* The thread zeroes in the highest zone it can: start with it. */
	while (z > 0 && !populated_zone(&pgdat->node_zones[z]))
		z--;
	zone = &pgdat->node_zones[z];
	/* The thread would race the case for the zone's index. */
	if (hawkeye_prezero_enabled())
		kunit_skip(test, "pre-zeroing is on");
	spin_lock_irq(&zone->lock);
	own = zone->zeroed_index;
	orders = zone->zeroed_orders;
	zone->zeroed_index = NULL;
	WRITE_ONCE(zone->zeroed_orders, 0);
	spin_unlock_irq(&zone->lock);

	done = prezero_node(pgdat);

	spin_lock_irq(&zone->lock);
	made = zone->zeroed_index;
	if (made)
		found = zeroed_index_take(zone, 0, MIGRATE_MOVABLE);
	zone->zeroed_index = own;
	WRITE_ONCE(zone->zeroed_orders, orders);
	spin_unlock_irq(&zone->lock);
	kvfree(made);
	/* The block zeroed is recorded in no index now: unmark it. */
	drop_zeroed_marks();
	if (!done)
		kunit_skip(test, "nothing to zero in node %d", pgdat->node_id);
	KUNIT_EXPECT_NOT_NULL(test, made);
	KUNIT_EXPECT_NOT_NULL(test, found);
}

/*
 * A block out of the zone index's reach would lose its mark once zeroed,
 * go back to the tail and be found again: the walk passes over it to the
 * block behind it. All under the zone lock: nobody else sees the blocks.
 */
static void prezero_test_skips_out_of_reach(struct kunit *test)
{
	const unsigned int order = 2;
	struct page *page = alloc_pages(GFP_HIGHUSER_MOVABLE, order + 2);
	struct page *inside = page + (2 << order), *found;
	struct zeroed_index zi = { };
	struct list_head *list;
	struct zone *zone;
	bool taken;
	int mt;

	KUNIT_ASSERT_NOT_NULL(test, page);
	/* @page is 2^31 + 1 blocks below the base, @inside 2^31 - 1. */
	zi.base_pfn = page_to_pfn(page) + (((1UL << 31) + 1) << order);
	zone = page_zone(page);
	mt = get_pageblock_migratetype(page);
	list = &zone->free_area[order].free_list[mt];
	/* Free, as the allocator hands them over: no reference, not buddies. */
	set_page_count(page, 0);
	spin_lock_irq(&zone->lock);
	__putback_isolated_page(inside, order, mt);
	__putback_isolated_page(page, order, mt);	/* last, at the tail */
	found = prezero_find_block(list, order, false, &zi);
	taken = __isolate_free_page(page, order) && __isolate_free_page(inside, order);
	spin_unlock_irq(&zone->lock);
	KUNIT_EXPECT_PTR_EQ(test, found, inside);
	/* Below the watermark (not at boot): leave what may still be listed. */
	KUNIT_ASSERT_TRUE(test, taken);
	set_page_count(page, 1);
	__free_pages(page, order + 2);
}

/*
 * A page in use never carries the mark; were one to (a stray bit), it
 * must not survive the free and make a written page "zeroed".
 */
static void prezero_test_free_drops_stray_mark(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL);
	bool marked;

	KUNIT_ASSERT_NOT_NULL(test, page);
	memset(page_address(page), 0x5a, PAGE_SIZE);
	__SetPageZeroed(page);
	/* On this CPU's pcp list until we look: nobody else takes it. */
	preempt_disable();
	__free_page(page);
	marked = PageZeroed(page);
	preempt_enable();
	KUNIT_EXPECT_FALSE(test, marked);
}

/* Real pages on a private list, for prezero_find_block(). */
struct find_test {
	struct list_head list;
	int nr;
	struct page *pages[];
};

static void find_test_free(void *data)
{
	struct find_test *ft = data;
	int i;

	for (i = 0; i < ft->nr; i++) {
		__ClearPageZeroed(ft->pages[i]);
		__ClearPageReported(ft->pages[i]);
		__free_page(ft->pages[i]);
	}
}

/* @nr pages, in this order, all marked zeroed but the one at @want. */
static struct find_test *find_test_make(struct kunit *test, int nr, int want)
{
	struct find_test *ft = kunit_kzalloc(test, struct_size(ft, pages, nr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ft);
	INIT_LIST_HEAD(&ft->list);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, find_test_free, ft));
	for (; ft->nr < nr; ft->nr++) {
		struct page *page = alloc_page(GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, page);
		if (ft->nr != want)
			__SetPageZeroed(page);
		list_add_tail(&page->buddy_list, &ft->list);
		ft->pages[ft->nr] = page;
	}
	return ft;
}

static bool find_test_first(struct find_test *ft, int i)
{
	return list_is_first(&ft->pages[i]->buddy_list, &ft->list);
}

static bool find_test_last(struct find_test *ft, int i)
{
	return list_is_last(&ft->pages[i]->buddy_list, &ft->list);
}

/*
 * An unzeroed block with more zeroed blocks on either side than one walk
 * looks at (a free put at the tail, then blocks zeroed after it) is found
 * by the walks that follow.
 */
static void prezero_test_find_behind_zeroed(struct kunit *test)
{
	const int nr = 4 * PREZERO_LOOKUP + 1, want = 2 * PREZERO_LOOKUP;
	struct find_test *ft = find_test_make(test, nr, want);
	struct page *found = NULL;
	int walks;

	for (walks = 0; walks < nr && !found; walks++)
		found = prezero_find_block(&ft->list, 0, false, NULL);
	KUNIT_EXPECT_PTR_EQ(test, found, ft->pages[want]);
	KUNIT_EXPECT_TRUE(test, find_test_first(ft, want));
}

/* A block found from the head: the zeroed ones before it go behind the rest. */
static void prezero_test_find_near_head(struct kunit *test)
{
	const int nr = 4 * PREZERO_LOOKUP + 1, want = 5;
	struct find_test *ft = find_test_make(test, nr, want);

	KUNIT_EXPECT_PTR_EQ(test, prezero_find_block(&ft->list, 0, false, NULL), ft->pages[want]);
	KUNIT_EXPECT_TRUE(test, find_test_first(ft, want));
	KUNIT_EXPECT_TRUE(test, find_test_last(ft, want - 1));
}

/* Nothing to zero in an empty list, or in one a walk covers: no rotation. */
static void prezero_test_find_nothing(struct kunit *test)
{
	struct find_test *ft = find_test_make(test, 0, -1);

	KUNIT_EXPECT_NULL(test, prezero_find_block(&ft->list, 0, false, NULL));
	KUNIT_EXPECT_TRUE(test, list_empty(&ft->list));

	ft = find_test_make(test, PREZERO_LOOKUP, -1);
	KUNIT_EXPECT_NULL(test, prezero_find_block(&ft->list, 0, false, NULL));
	KUNIT_EXPECT_TRUE(test, find_test_first(ft, 0));
	KUNIT_EXPECT_TRUE(test, find_test_last(ft, PREZERO_LOOKUP - 1));
}

/*
 * A block free page reporting gave back to the host is left alone while
 * the thread looks for others, and found when it looks for reported ones.
 */
static void prezero_test_find_reported(struct kunit *test)
{
	struct find_test *ft = find_test_make(test, 3, 1);

	__SetPageReported(ft->pages[1]);
	KUNIT_EXPECT_NULL(test, prezero_find_block(&ft->list, 0, false, NULL));
	KUNIT_EXPECT_PTR_EQ(test, prezero_find_block(&ft->list, 0, true, NULL), ft->pages[1]);
}

static struct kunit_case hawkeye_prezero_cases[] = {
	KUNIT_CASE(prezero_test_zero_block_nt),
	KUNIT_CASE(prezero_test_zero_block_cached),
	KUNIT_CASE(prezero_test_budget),
	KUNIT_CASE(prezero_test_one_block_is_counted),
	KUNIT_CASE(prezero_test_zone_without_index),
	KUNIT_CASE(prezero_test_free_drops_stray_mark),
	KUNIT_CASE(prezero_test_find_behind_zeroed),
	KUNIT_CASE(prezero_test_find_near_head),
	KUNIT_CASE(prezero_test_find_nothing),
	KUNIT_CASE(prezero_test_find_reported),
	KUNIT_CASE(prezero_test_skips_out_of_reach),
	{}
};

static struct kunit_suite hawkeye_prezero_suite = {
	.name = "hawkeye-prezero",
	.test_cases = hawkeye_prezero_cases,
};
kunit_test_suite(hawkeye_prezero_suite);

#endif /* _MM_HAWKEYE_PREZERO_KUNIT_H */
