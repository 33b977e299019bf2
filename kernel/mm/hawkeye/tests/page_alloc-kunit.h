/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the allocator's side of pre-zeroing, built into
 * mm/page_alloc.c so that they call its static functions on real pages.
 *
 * The invariant every case checks: a free block marked PageZeroed() holds
 * only zero bytes, and NR_FREE_ZEROED counts exactly the marked pages on
 * the free lists. Beside it, each case checks that a mark that may stay
 * does stay (a lost mark costs a zeroing; a kept wrong one leaks data),
 * that the zone's index finds what it should, and that blocks are placed
 * as upstream places them.
 *
 * Each case takes a free MAX_PAGE_ORDER block off the free lists, so that
 * nobody else uses it, and works on it under the zone lock.
 */
#ifndef _MM_HAWKEYE_PAGE_ALLOC_KUNIT_H
#define _MM_HAWKEYE_PAGE_ALLOC_KUNIT_H

#include "page_alloc-fixtures-kunit.h"

/* Merge: zeroed + zeroed stays zeroed; zeroed + not zeroed does not. */
static void pa_test_merge(struct kunit *test)
{
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	struct page *half = page + (1 << HALF_ORDER);
	struct pa_checks c = { };

	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, HALF_ORDER, true);
	pa_check(&c, pa_test_free_block(page, HALF_ORDER));
	pa_check(&c, PageZeroed(page));
	pa_test_put(half, HALF_ORDER, true);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, PageZeroed(page));
	pa_check(&c, !PageZeroed(half));
	pa_check_marks(&c, zone);
	if (!pa_test_retake(&c, zone, page)) {
		spin_unlock_irq(&zone->lock);
		pa_report(test, &c);
		return;
	}
	spin_unlock_irq(&zone->lock);

	pa_test_fill(half, HALF_ORDER, 0x5a);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, HALF_ORDER, true);
	pa_test_put(half, HALF_ORDER, false);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, !PageZeroed(page));
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
}

/*
 * Expand: taking one page of a zeroed block leaves every remaining part
 * marked on the free lists, recorded in the index, and tells the taker
 * its page is zero; given back, the parts merge into one zeroed block
 * again, recorded too.
 */
static void pa_test_expand(struct kunit *test)
{
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	int mt = get_pageblock_migratetype(page);
	bool was_on = pa_test_key_on();
	struct pa_checks c = { };
	unsigned int order;

	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, TEST_ORDER, true);
	pa_check(&c, zeroed_index_take(zone, TEST_ORDER, mt) == page);
	page_del_and_expand(zone, page, 0, TEST_ORDER, mt);
	pa_check(&c, !PageBuddy(page));
	pa_check(&c, PageZeroed(page));
	for (order = 0; order < TEST_ORDER; order++) {
		struct page *part = page + (1 << order);

		pa_check(&c, pa_test_free_block(part, order));
		pa_check(&c, PageZeroed(part));
		/* Away from allocations that need no zeroing. */
		pa_check(&c, part == list_last_entry(&zone->free_area[order].free_list[mt],
						     struct page, buddy_list));
	}
	pa_check(&c, zeroed_index_take(zone, 0, mt) == page + 1);
	pa_check(&c, zeroed_index_take(zone, HALF_ORDER, mt) == page + (1 << HALF_ORDER));
	pa_check_marks(&c, zone);
	pa_test_put(page, 0, true);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, PageZeroed(page));
	pa_check(&c, zeroed_index_take(zone, TEST_ORDER, mt) == page);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_key_restore(was_on);
	pa_test_end(test, &c, zone, page);
}

/*
 * The index hands out only what is still a free zeroed block of the order
 * recorded, on the free list of the migratetype asked for: an entry whose
 * block was allocated without the index, merged, or isolated is dropped.
 */
static void pa_test_index_stale(struct kunit *test)
{
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	struct page *half = page + (1 << HALF_ORDER);
	int mt = get_pageblock_migratetype(page);
	struct pa_checks c = { };

	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	/* Allocated by an allocation that did not look in the index. */
	pa_test_put(page, HALF_ORDER, true);
	del_page_from_free_list(page, zone, HALF_ORDER, mt);
	pa_check(&c, !PageZeroed(page));
	pa_check(&c, zeroed_index_take(zone, HALF_ORDER, mt) != page);
	/* Merged: the halves' entries are stale, the merged block is found. */
	pa_test_put(page, HALF_ORDER, true);
	pa_test_put(half, HALF_ORDER, true);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, zeroed_index_take(zone, HALF_ORDER, mt) == page);
	pa_test_retake(&c, zone, page);
	/* Another migratetype asked for, or isolated: not handed out. */
	pa_test_put(page, HALF_ORDER, true);
	pa_check(&c, zeroed_index_take(zone, HALF_ORDER, MIGRATE_UNMOVABLE) != page);
#ifdef CONFIG_MEMORY_ISOLATION
	del_page_from_free_list(page, zone, HALF_ORDER, mt);
	pa_test_put(page, HALF_ORDER, true);
	pa_check(&c, move_freepages_block_isolate(zone, page, MIGRATE_ISOLATE));
	pa_check(&c, zeroed_index_take(zone, HALF_ORDER, mt) != page);
	pa_check(&c, move_freepages_block_isolate(zone, page, mt));
	pa_check(&c, PageZeroed(page));
	/* Back on the movable list, it is found again. */
	pa_check(&c, zeroed_index_take(zone, HALF_ORDER, mt) == page);
#endif
	pa_check_marks(&c, zone);
	/* Merge the halves for pa_test_end(). */
	pa_test_put(half, HALF_ORDER, false);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
}

/*
 * Steal: a zeroed block moved to another migratetype's list is forgotten
 * (faults look on the movable lists only), so that NR_FREE_ZEROED counts
 * only what they can find.
 */
static void pa_test_steal(struct kunit *test)
{
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	struct page *half = page + (1 << HALF_ORDER);
	int mt = get_pageblock_migratetype(page);
	struct pa_checks c = { };
	struct page *pos;
	bool listed = false;

	pa_test_fill(page, HALF_ORDER, 0);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, HALF_ORDER, true);
	pa_check(&c, move_freepages_block(zone, page, mt, MIGRATE_UNMOVABLE) ==
		     1 << HALF_ORDER);
	list_for_each_entry(pos, &zone->free_area[HALF_ORDER].free_list[MIGRATE_UNMOVABLE],
			    buddy_list)
		listed |= pos == page;
	pa_check(&c, listed);
	pa_check(&c, !PageZeroed(page));
	pa_check_marks(&c, zone);
	/* Freed zeroed into the unmovable pageblock: not marked either. */
	del_page_from_free_list(page, zone, HALF_ORDER, MIGRATE_UNMOVABLE);
	pa_test_put(page, HALF_ORDER, true);
	pa_check(&c, !PageZeroed(page));
	pa_check_marks(&c, zone);
	pa_check(&c, move_freepages_block(zone, page, MIGRATE_UNMOVABLE, mt) ==
		     1 << HALF_ORDER);
	pa_check(&c, !PageZeroed(page));
	pa_check(&c, zeroed_index_take(zone, HALF_ORDER, mt) != page);
	pa_check_marks(&c, zone);
	pa_test_put(half, HALF_ORDER, false);
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
}

#define RING_TEST_SIZE	4

/* An index of @size entries per order, to stand in for a zone's. */
static struct zeroed_index *pa_test_index(unsigned int size)
{
	struct zeroed_index *zi;
	unsigned int order;

	zi = kzalloc(struct_size(zi, pfn, NR_PAGE_ORDERS * size), GFP_KERNEL);
	for (order = 0; zi && order < NR_PAGE_ORDERS; order++) {
		zi->size[order] = size;
		zi->start[order] = order * size;
	}
	return zi;
}

/* A zone's index and the orders it has entries of. */
struct pa_index {
	struct zeroed_index *zi;
	unsigned long orders;
};

/*
 * Install @x as @zone's index, with the zone lock held; @x gets the
 * zone's, to be installed back the same way.
 */
static void pa_test_index_swap(struct zone *zone, struct pa_index *x)
{
	struct pa_index was = { zone->zeroed_index, zone->zeroed_orders };

	lockdep_assert_held(&zone->lock);
	zone->zeroed_index = x->zi;
	WRITE_ONCE(zone->zeroed_orders, x->orders);
	*x = was;
}

/*
 * pa_test_start() with the test block filled with zeroes and a private
 * index of @size entries per order installed, the zone lock held; @idx
 * gets the zone's own, for pa_test_index_swap() to put back.
 */
static struct page *pa_test_start_private(struct kunit *test, struct zone **zonep,
					  struct pa_index *idx, unsigned int size)
{
	struct page *page;

	idx->zi = pa_test_index(size);
	idx->orders = 0;
	KUNIT_ASSERT_NOT_NULL(test, idx->zi);
	page = pa_test_start(test, zonep);
	pa_test_fill(page, TEST_ORDER, 0);
	idx->zi->base_pfn = (*zonep)->zone_start_pfn;
	spin_lock_irq(&(*zonep)->lock);
	pa_test_index_swap(*zonep, idx);
	return page;
}

/*
 * Stale entries of a smaller order (16 KB blocks zeroed, then allocated
 * without the index) do not hide a zeroed 2 MB block from a 4 KB
 * allocation.
 */
static void pa_test_take_past_stale(struct kunit *test)
{
	struct pa_checks c = { };
	struct pa_index idx;
	struct zone *zone;
	struct page *page, *half;
	unsigned int i;
	int mt;

	page = pa_test_start_private(test, &zone, &idx, 64);
	half = page + (1 << HALF_ORDER);
	mt = get_pageblock_migratetype(page);
	/* Every other order-2 block of the lower half: no two are buddies. */
	for (i = 0; i < 32; i++) {
		pa_test_put(page + 8 * i, 2, true);
		del_page_from_free_list(page + 8 * i, zone, 2, mt);
	}
	pa_test_put(half, HALF_ORDER, true);
	pa_check(&c, zeroed_index_take(zone, 0, mt) == half);
	pa_check_marks(&c, zone);
	pa_test_index_swap(zone, &idx);
	/* Merge the halves for pa_test_end(). */
	pa_test_put(page, HALF_ORDER, false);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	kvfree(idx.zi);
	pa_test_end(test, &c, zone, page);
}

/*
 * The smallest order's block is taken before a larger one is split, even
 * behind a few stale entries of its order.
 */
static void pa_test_take_smallest(struct kunit *test)
{
	struct pa_checks c = { };
	struct pa_index idx;
	struct zone *zone;
	struct page *page, *half;
	unsigned int i;
	int mt;

	page = pa_test_start_private(test, &zone, &idx, 64);
	half = page + (1 << HALF_ORDER);
	mt = get_pageblock_migratetype(page);
	pa_test_put(page, 0, true);
	/* Two newer entries of order 0, stale: allocated without the index. */
	for (i = 1; i <= 2; i++) {
		pa_test_put(page + 2 * i, 0, true);
		del_page_from_free_list(page + 2 * i, zone, 0, mt);
	}
	pa_test_put(half, HALF_ORDER, true);
	pa_check(&c, zeroed_index_take(zone, 0, mt) == page);
	pa_check_marks(&c, zone);
	pa_test_index_swap(zone, &idx);
	/* Everything back, merged into the test block. */
	for (i = 1; i < (1 << HALF_ORDER); i++)
		pa_test_put(page + i, 0, false);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	kvfree(idx.zi);
	pa_test_end(test, &c, zone, page);
}

/*
 * A full ring forgets its oldest block, mark and count, so that every
 * block NR_FREE_ZEROED counts can be found (blocks it lost stayed counted,
 * and the zeroing thread stopped short of its target); the thread is told
 * there is no room until an entry goes stale and the ring is compacted.
 */
static void pa_test_ring_full(struct kunit *test)
{
	const unsigned int n = RING_TEST_SIZE + 2;
	struct pa_checks c = { };
	struct zeroed_index *zi;
	struct pa_index idx;
	struct zone *zone;
	struct page *page;
	unsigned int i;
	int mt;

	page = pa_test_start_private(test, &zone, &idx, RING_TEST_SIZE);
	zi = zone->zeroed_index;
	mt = get_pageblock_migratetype(page);
	/* Even pages only: no two of them are buddies. */
	for (i = 0; i < n; i++)
		pa_test_put(page + 2 * i, 0, true);
	pa_check(&c, !PageZeroed(page));
	pa_check(&c, !PageZeroed(page + 2));
	for (i = 2; i < n; i++)
		pa_check(&c, PageZeroed(page + 2 * i));
	/*
	 * The oldest allocated and zeroed again: its own entry, the oldest of
	 * the full ring, is renewed, not forgotten (the block is not counted
	 * yet as it is recorded: forgetting it uncounted it twice).
	 */
	del_page_from_free_list(page + 4, zone, 0, mt);
	pa_test_put(page + 4, 0, true);
	pa_check(&c, PageZeroed(page + 4));
	pa_check_marks(&c, zone);
	/* Every entry is a block: no room, compacted or not. */
	pa_check(&c, !zeroed_index_has_room(zone, 0));
	spin_unlock_irq(&zone->lock);
	zeroed_index_compact(zone, 0);
	spin_lock_irq(&zone->lock);
	pa_check(&c, !zeroed_index_has_room(zone, 0));
	pa_check(&c, test_bit(0, &zi->compact));
	/* One taken through the index, as a fault takes it: room. */
	pa_check(&c, zeroed_index_take(zone, 0, mt) == page + 4);
	del_page_from_free_list(page + 4, zone, 0, mt);
	pa_check(&c, !test_bit(0, &zi->compact));
	pa_check(&c, zeroed_index_has_room(zone, 0));
	/*
	 * One allocated without the index and zeroed again: its old entry is
	 * valid again beside the new one, and the ring is full; compacted,
	 * the duplicate goes, the others are kept in order.
	 */
	del_page_from_free_list(page + 6, zone, 0, mt);
	pa_test_put(page + 6, 0, true);
	pa_check(&c, PageZeroed(page + 6));
	pa_check(&c, !zeroed_index_has_room(zone, 0));
	spin_unlock_irq(&zone->lock);
	zeroed_index_compact(zone, 0);
	spin_lock_irq(&zone->lock);
	pa_check(&c, zeroed_index_has_room(zone, 0));
	pa_check(&c, zeroed_index_take(zone, 0, mt) == page + 10);
	pa_check(&c, zeroed_index_take(zone, 0, mt) == page + 8);
	pa_check(&c, zeroed_index_take(zone, 0, mt) == page + 6);
	pa_check(&c, !zeroed_index_take(zone, 0, mt));
	pa_check_marks(&c, zone);
	pa_test_index_swap(zone, &idx);
	/* Everything back, merged into the test block. */
	pa_test_put(page + 4, 0, false);
	for (i = 1; i < (1 << TEST_ORDER); i++)
		if (i % 2 || i >= 2 * n)
			pa_test_put(page + i, 0, false);
	spin_unlock_irq(&zone->lock);
	kfree(zi);
	pa_test_end(test, &c, zone, page);
}

/*
 * A zone that grew since its index was made (memory hotplug) gets a
 * larger one as the zeroing thread comes by, with the old one's entries:
 * a full ring has room again, and every block recorded is still found.
 */
static void pa_test_index_grows(struct kunit *test)
{
	/* Rings of 5, 7 blocks: the oldest two forgotten, the ring wrapped. */
	const unsigned int size = 5, n = 7;
	struct pa_checks c = { };
	struct pa_index idx;
	struct zone *zone;
	struct page *page;
	unsigned int i;
	int mt;

	page = pa_test_start_private(test, &zone, &idx, size);
	zone->zeroed_index->pages = 1;	/* made for a zone of one page */
	zone->zeroed_index->base_pfn = page_to_pfn(page + 1);
	mt = get_pageblock_migratetype(page);
	/* Even pages only: no two of them are buddies. */
	for (i = 0; i < n; i++)
		pa_test_put(page + 2 * i, 0, true);
	/* The two forgotten, one of them below the base. */
	pa_check(&c, !PageZeroed(page));
	pa_check(&c, !PageZeroed(page + 2));
	pa_check(&c, !zeroed_index_has_room(zone, 0));
	spin_unlock_irq(&zone->lock);
	/* The small index is freed here: not looked at again. */
	KUNIT_EXPECT_EQ(test, zeroed_index_init_zone(zone), 0);
	spin_lock_irq(&zone->lock);
	pa_check(&c, zone->zeroed_index->pages == zone_managed_pages(zone));
	pa_check(&c, zone->zeroed_index->base_pfn == page_to_pfn(page + 1));
	pa_check(&c, zeroed_index_has_room(zone, 0));
	for (i = n; i > n - size; i--)
		pa_check(&c, zeroed_index_take(zone, 0, mt) == page + 2 * (i - 1));
	pa_check(&c, !zeroed_index_take(zone, 0, mt));
	pa_check_marks(&c, zone);
	pa_test_index_swap(zone, &idx);
	/* Everything back, merged into the test block. */
	for (i = 1; i < (1 << TEST_ORDER); i++)
		if (i % 2 || i >= 2 * n)
			pa_test_put(page + i, 0, false);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	kvfree(idx.zi);
	pa_test_end(test, &c, zone, page);
}

/*
 * Entries are relative to where the zone started when its first index
 * was made, which memory hotplug moves away from: blocks on either side
 * of that base are found. A block out of the index's reach loses its
 * mark.
 */
static void pa_test_index_base(struct kunit *test)
{
	const unsigned int order = HALF_ORDER - 1;
	struct pa_checks c = { };
	struct page *page, *half;
	struct pa_index idx;
	struct zone *zone;
	int mt;

	page = pa_test_start_private(test, &zone, &idx, 4);
	half = page + (1 << HALF_ORDER);
	mt = get_pageblock_migratetype(page);
	/* Made when the zone started at @half: @page's entry is negative. */
	zone->zeroed_index->base_pfn = page_to_pfn(half);
	/* Not buddies: each stays a block of @order. */
	pa_test_put(half, order, true);
	pa_test_put(page, order, true);
	pa_check(&c, zeroed_index_take(zone, order, mt) == page);
	pa_check(&c, zeroed_index_take(zone, order, mt) == half);
	/* 2^31 blocks of the merged order away: out of reach. */
	zone->zeroed_index->base_pfn = page_to_pfn(page) +
				       (((1UL << 31) + 1) << HALF_ORDER);
	pa_test_put(page + (1 << order), order, true);
	pa_check(&c, pa_test_free_block(page, HALF_ORDER));
	pa_check(&c, !PageZeroed(page));
	pa_check(&c, PageZeroed(half));
	pa_check_marks(&c, zone);
	pa_test_index_swap(zone, &idx);
	/* Everything back, merged into the test block. */
	pa_test_put(half + (1 << order), order, false);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	kvfree(idx.zi);
	pa_test_end(test, &c, zone, page);
}

/* An empty test pcp; the test block zeroed and free, marked. Returns the list. */
static struct list_head *pa_test_pcp_start(struct per_cpu_pages *pcp, unsigned int pindex,
					   struct zone *zone, struct page *page)
{
	int i;

	for (i = 0; i < NR_PCP_LISTS; i++)
		INIT_LIST_HEAD(&pcp->lists[i]);
	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, TEST_ORDER, true);
	spin_unlock_irq(&zone->lock);
	return &pcp->lists[pindex];
}

/*
 * pcp fill and drain: a __GFP_ZERO refill (ALLOC_ZEROED) of the zeroed pcp
 * list takes zeroed pages, marked, from the index; drained back, marked
 * pages merge into a marked block, recorded in the index again; a page
 * that lost its mark unmarks the merged block.
 */
static void pa_test_pcp(struct kunit *test)
{
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	int mt = get_pageblock_migratetype(page);
	struct per_cpu_pages pcp = { };
	unsigned int pindex = PCP_ZEROED_PINDEX;
	struct list_head *list = pa_test_pcp_start(&pcp, pindex, zone, page);
	struct page *pos, *written = NULL;
	bool was_on = pa_test_key_on();
	struct pa_checks c = { };
	int from_block = 0;

	KUNIT_EXPECT_EQ(test, pindex_to_order(pindex), 0);
	/* The index has a block: __GFP_ZERO user pages take the zeroed list. */
	KUNIT_EXPECT_PTR_EQ(test, zeroed_pcp_list(zone, &pcp, 0, ALLOC_ZEROED, NULL), list);
	KUNIT_EXPECT_NULL(test, zeroed_pcp_list(zone, &pcp, 0, 0, NULL));
	KUNIT_EXPECT_NULL(test, zeroed_pcp_list(zone, &pcp, 1, ALLOC_ZEROED, NULL));
	pcp.count = rmqueue_bulk(zone, 0, 16, list, mt, ALLOC_ZEROED);
	KUNIT_EXPECT_EQ(test, pcp.count, 16);
	list_for_each_entry(pos, list, pcp_list) {
		if (pos < page || pos >= page + (1 << TEST_ORDER))
			continue;
		from_block++;
		KUNIT_EXPECT_TRUE(test, PageZeroed(pos));
		KUNIT_EXPECT_TRUE(test, pa_test_is_zero(pos, 0));
	}
	/* Ours is the newest block in the index. */
	KUNIT_EXPECT_EQ(test, from_block, 16);

	free_pcppages_bulk(zone, pcp.count, &pcp, pindex);
	KUNIT_EXPECT_EQ(test, pcp.count, 0);
	spin_lock_irq(&zone->lock);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, PageZeroed(page));
	pa_check(&c, zeroed_index_take(zone, TEST_ORDER, mt) == page);
	pa_check_marks(&c, zone);
	/* Recorded again for the next refill. */
	zeroed_index_add(zone, page, TEST_ORDER);
	spin_unlock_irq(&zone->lock);
	pa_report(test, &c);

	/* Again, with one page of the block written and unmarked. */
	pcp.count = rmqueue_bulk(zone, 0, 16, list, mt, ALLOC_ZEROED);
	list_for_each_entry(pos, list, pcp_list)
		if (pos >= page && pos < page + (1 << TEST_ORDER))
			written = pos;
	KUNIT_EXPECT_NOT_NULL(test, written);
	if (written) {
		__ClearPageZeroed(written);
		pa_test_fill(written, 0, 0x5a);
	}
	free_pcppages_bulk(zone, pcp.count, &pcp, pindex);
	spin_lock_irq(&zone->lock);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, !written || !PageZeroed(page));
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_key_restore(was_on);
	pa_test_end(test, &c, zone, page);
}

/* Order-0 allocations of @n pages from a private pcp: how many refills. */
static int pa_test_refills(struct zone *zone, int mt, unsigned int alloc_flags, int n)
{
	struct per_cpu_pages pcp = { .high = 64, .high_min = 64, .high_max = 64, .batch = 8 };
	struct list_head *list;
	int i, refills = 0;
	unsigned int pindex;
	LIST_HEAD(taken);

	for (i = 0; i < NR_PCP_LISTS; i++)
		INIT_LIST_HEAD(&pcp.lists[i]);
	list = zeroed_pcp_list(zone, &pcp, 0, alloc_flags, &pcp.lists[order_to_pindex(mt, 0)]);
	pindex = list - pcp.lists;
	for (i = 0; i < n; i++) {
		int before = pcp.count;
		struct page *page = __rmqueue_pcplist(zone, 0, mt, alloc_flags, &pcp, list);

		if (!page)
			break;
		refills += pcp.count > before - 1;
		list_add(&page->pcp_list, &taken);
	}
	list_splice(&taken, list);
	pcp.count += i;
	free_pcppages_bulk(zone, pcp.count, &pcp, pindex);
	return refills;
}

/*
 * A stranded zeroed block (marked, but not in the index) costs the 4 KB
 * faults nothing: their __GFP_ZERO allocations refill
 * their pcp list, under the zone lock, no more often than allocations
 * without pre-zeroing refill theirs.
 */
static void pa_test_pcp_refills(struct kunit *test)
{
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	int mt = get_pageblock_migratetype(page);
	struct pa_checks c = { };
	int off, on = 0;
	bool was_on;

	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, TEST_ORDER, true);
	/* Out of the index: found by nobody, still counted in NR_FREE_ZEROED. */
	pa_check(&c, zeroed_index_take(zone, TEST_ORDER, mt) == page);
	spin_unlock_irq(&zone->lock);
	off = pa_test_refills(zone, mt, ALLOC_WMARK_LOW, 64);
	was_on = pa_test_key_on();
	if (!was_on)
		on = pa_test_refills(zone, mt, ALLOC_WMARK_LOW | ALLOC_ZEROED, 64);
	pa_test_key_restore(was_on);
	if (!was_on) {
		kunit_info(test, "refills for 64 pages: %d off, %d on", off, on);
		KUNIT_EXPECT_GT(test, off, 0);
		KUNIT_EXPECT_LE(test, on, 2 * off);
	}
	spin_lock_irq(&zone->lock);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
}

/*
 * With the zeroed pcp list empty and nothing in the index, __GFP_ZERO user
 * pages come from the list freed pages go to, as without pre-zeroing: a
 * fault/free loop recycles its page instead of refilling the zeroed list
 * from the buddy lists.
 */
static void pa_test_pcp_recycles(struct kunit *test)
{
	struct per_cpu_pages pcp = { .high = 64, .high_min = 64, .high_max = 64, .batch = 8 };
	const int mt = MIGRATE_MOVABLE;
	struct list_head *plain = &pcp.lists[order_to_pindex(mt, 0)], *list;
	struct pa_index idx = { };
	struct page *page, *got;
	struct zone *zone;
	int i;

	if (hawkeye_prezero_enabled())
		kunit_skip(test, "pre-zeroing is on");
	zone = pa_test_zone(test);
	idx.zi = pa_test_index(1);
	KUNIT_ASSERT_NOT_NULL(test, idx.zi);
	idx.zi->base_pfn = zone->zone_start_pfn;
	for (i = 0; i < NR_PCP_LISTS; i++)
		INIT_LIST_HEAD(&pcp.lists[i]);
	spin_lock_irq(&zone->lock);
	pa_test_index_swap(zone, &idx);
	/* A page freed to the pcp list. */
	page = __rmqueue_smallest(zone, 0, mt);
	if (page) {
		list_add(&page->pcp_list, plain);
		pcp.count = 1;
	}
	spin_unlock_irq(&zone->lock);
	KUNIT_ASSERT_NOT_NULL(test, page);
	list = zeroed_pcp_list(zone, &pcp, 0, ALLOC_ZEROED, plain);
	got = __rmqueue_pcplist(zone, 0, mt, ALLOC_ZEROED, &pcp, list);
	KUNIT_EXPECT_PTR_EQ(test, list, plain);
	KUNIT_EXPECT_PTR_EQ(test, got, page);
	if (got) {
		list_add(&got->pcp_list, list);
		pcp.count++;
	}
	free_pcppages_bulk(zone, pcp.count, &pcp, 0);
	spin_lock_irq(&zone->lock);
	pa_test_index_swap(zone, &idx);
	spin_unlock_irq(&zone->lock);
	kvfree(idx.zi);
}

/*
 * Free page reporting's blocks are not reused first:
 * with pre-zeroing on, a reported block put back goes to the tail, as
 * upstream puts it, and a block freed before it is taken first.
 */
static void pa_test_reported(struct kunit *test)
{
	const unsigned int order = HALF_ORDER - 1;
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	struct page *other = page + (2 << order);	/* not page's buddy */
	int mt = get_pageblock_migratetype(page);
	bool was_on = pa_test_key_on();
	struct pa_checks c = { };
	struct page *got;

	spin_lock_irq(&zone->lock);
	__free_one_page(other, page_to_pfn(other), zone, order, mt, FPI_NONE);
	/* As page_reporting_drain() gives a reported block back. */
	__putback_isolated_page(page, order, mt);
	__SetPageReported(page);
	pa_check(&c, page == list_last_entry(&zone->free_area[order].free_list[mt],
					     struct page, buddy_list));
	got = __rmqueue_smallest(zone, order, mt);
	pa_check(&c, got == other);
	if (got && got != other)
		__free_one_page(got, page_to_pfn(got), zone, order, mt, FPI_NONE);
	if (got != other)
		del_page_from_free_list(other, zone, order, mt);
	if (pa_test_free_block(page, order))
		del_page_from_free_list(page, zone, order, mt);
	/* Without a reporting device the allocator leaves the flag alone. */
	__ClearPageReported(page);
	/* The whole test block is off the lists again: give it back. */
	pa_test_put(page, TEST_ORDER, false);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_key_restore(was_on);
	pa_test_end(test, &c, zone, page);
}

/*
 * Off means upstream: while pre-zeroing is off, a marked block freed or
 * left over from a split goes to the head of its list as any other (not
 * to the tail): marks stay, but nothing is placed by them.
 */
static void pa_test_off(struct kunit *test)
{
	struct pa_checks c = { };
	struct free_area *area;
	struct zone *zone;
	struct page *page;
	int mt;

	if (hawkeye_prezero_enabled())
		kunit_skip(test, "pre-zeroing is on");
	page = pa_test_start(test, &zone);
	mt = get_pageblock_migratetype(page);
	area = zone->free_area;
	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	/* Freed as a drained pcp page is (pa_test_put() frees to the tail). */
	__SetPageZeroed(page);
	__free_one_page(page, page_to_pfn(page), zone, TEST_ORDER, mt, FPI_NONE);
	pa_check(&c, page == list_first_entry(&area[TEST_ORDER].free_list[mt],
					      struct page, buddy_list));
	page_del_and_expand(zone, page, HALF_ORDER, TEST_ORDER, mt);
	pa_check(&c, page + (1 << HALF_ORDER) ==
		 list_first_entry(&area[HALF_ORDER].free_list[mt], struct page, buddy_list));
	__free_one_page(page, page_to_pfn(page), zone, HALF_ORDER, mt, FPI_NONE);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, PageZeroed(page));
	pa_check(&c, page == list_first_entry(&area[TEST_ORDER].free_list[mt],
					      struct page, buddy_list));
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
}

/*
 * Compaction capture: a zeroed block freed while a direct compactor waits
 * for one of its order goes to the compactor unmarked (the page is about
 * to be allocated), and is not counted free.
 */
static void pa_test_capture(struct kunit *test)
{
#ifdef CONFIG_COMPACTION
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	struct compact_control cc = {
		.zone = zone,
		.order = HALF_ORDER,
		.migratetype = MIGRATE_MOVABLE,
	};
	struct capture_control capc = { .cc = &cc };
	struct pa_checks c = { };
	unsigned long zeroed;

	pa_test_fill(page, HALF_ORDER, 0);
	spin_lock_irq(&zone->lock);
	zeroed = zone_page_state_snapshot(zone, NR_FREE_ZEROED);
	/*
	 * Capture serves user tasks in direct compaction; KUnit runs cases in
	 * a kernel thread, which pretends not to be one for this one free
	 * (interrupts off: nothing looks at it meanwhile).
	 */
	current->capture_control = &capc;
	current->flags &= ~PF_KTHREAD;
	pa_test_put(page, HALF_ORDER, true);
	current->flags |= PF_KTHREAD;
	current->capture_control = NULL;
	pa_check(&c, capc.page == page);
	pa_check(&c, !PageBuddy(page));
	pa_check(&c, !PageZeroed(page));
	pa_check(&c, zone_page_state_snapshot(zone, NR_FREE_ZEROED) == zeroed);
	pa_check_marks(&c, zone);
	pa_test_put(page, HALF_ORDER, false);
	pa_test_put(page + (1 << HALF_ORDER), HALF_ORDER, false);
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
#else
	kunit_skip(test, "CONFIG_COMPACTION is off");
#endif
}

/*
 * Isolation: a zeroed pageblock moved to MIGRATE_ISOLATE and back keeps
 * its mark; one cut out of a larger zeroed block loses the marks of both
 * parts (split_large_buddy() frees the parts anew), which costs only a
 * zeroing.
 */
static void pa_test_isolation(struct kunit *test)
{
#ifdef CONFIG_MEMORY_ISOLATION
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	struct page *half = page + (1 << HALF_ORDER);
	int mt = get_pageblock_migratetype(page);
	struct pa_checks c = { };

	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, HALF_ORDER, true);
	pa_check(&c, move_freepages_block_isolate(zone, page, MIGRATE_ISOLATE));
	pa_check(&c, get_pageblock_migratetype(page) == MIGRATE_ISOLATE);
	pa_check(&c, pa_test_free_block(page, HALF_ORDER));
	pa_check(&c, PageZeroed(page));
	pa_check_marks(&c, zone);
	pa_check(&c, move_freepages_block_isolate(zone, page, mt));
	pa_check(&c, PageZeroed(page));
	pa_check_marks(&c, zone);

	pa_test_put(half, HALF_ORDER, true);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, PageZeroed(page));
	pa_check(&c, move_freepages_block_isolate(zone, half, MIGRATE_ISOLATE));
	pa_check(&c, pa_test_free_block(page, HALF_ORDER));
	pa_check(&c, pa_test_free_block(half, HALF_ORDER));
	pa_check_marks(&c, zone);
	pa_check(&c, move_freepages_block_isolate(zone, half, mt));
	pa_check_marks(&c, zone);
	/* Moving does not merge: merge the halves for pa_test_end(). */
	if (pa_test_free_block(page, HALF_ORDER) && pa_test_free_block(half, HALF_ORDER)) {
		del_page_from_free_list(page, zone, HALF_ORDER, mt);
		del_page_from_free_list(half, zone, HALF_ORDER, mt);
		pa_test_put(page, HALF_ORDER, false);
		pa_test_put(half, HALF_ORDER, false);
	}
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
#else
	kunit_skip(test, "CONFIG_MEMORY_ISOLATION is off");
#endif
}

/*
 * Memory onlining (and memblock) frees fresh blocks as __free_pages_core()
 * does, to the tail (FPI_TO_TAIL, past the pcp lists): with pre-zeroing
 * on too, an unzeroed block goes there.
 */
static void pa_test_online(struct kunit *test)
{
	struct pa_checks c = { };
	struct list_head *list;
	struct zone *zone;
	struct page *page;
	bool was_on;

	page = pa_test_start(test, &zone);
	list = &zone->free_area[TEST_ORDER].free_list[get_pageblock_migratetype(page)];
	was_on = pa_test_key_on();
	__free_pages_ok(page, TEST_ORDER, FPI_TO_TAIL);
	spin_lock_irq(&zone->lock);
	pa_check(&c, pa_test_free_block(page, TEST_ORDER));
	pa_check(&c, !PageZeroed(page));
	pa_check(&c, page == list_last_entry(list, struct page, buddy_list));
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_test_key_restore(was_on);
	pa_test_end(test, &c, zone, page);
}

/*
 * Placement is upstream's, pre-zeroing on or off: a block put back after
 * isolation (free page reporting's, the zeroing thread's) goes to the
 * tail, zeroed or not, and a freed one to the head, zeroed or not.
 */
static void pa_test_putback(struct kunit *test)
{
	struct pa_checks c = { };
	struct list_head *list;
	struct zone *zone;
	struct page *page;
	int on;

	page = pa_test_start(test, &zone);
	list = &zone->free_area[TEST_ORDER].free_list[get_pageblock_migratetype(page)];
	pa_test_fill(page, TEST_ORDER, 0);
	for (on = 0; on < 2; on++) {
		bool was_on = on ? pa_test_key_on() : hawkeye_prezero_enabled();

		if (!on && was_on)
			continue;	/* pre-zeroing is on: not to be turned off here */
		spin_lock_irq(&zone->lock);
		pa_test_put(page, TEST_ORDER, true);
		pa_check(&c, page == list_last_entry(list, struct page, buddy_list));
		if (pa_test_retake(&c, zone, page)) {
			pa_test_put(page, TEST_ORDER, false);
			pa_check(&c, page == list_last_entry(list, struct page, buddy_list));
		}
		if (pa_test_retake(&c, zone, page)) {
			__SetPageZeroed(page);
			__free_one_page(page, page_to_pfn(page), zone, TEST_ORDER,
					get_pageblock_migratetype(page), FPI_NONE);
			pa_check(&c, page == list_first_entry(list, struct page, buddy_list));
			pa_check(&c, PageZeroed(page));
		}
		if (pa_test_retake(&c, zone, page)) {
			__free_one_page(page, page_to_pfn(page), zone, TEST_ORDER,
					get_pageblock_migratetype(page), FPI_NONE);
			pa_check(&c, page == list_first_entry(list, struct page, buddy_list));
		}
		pa_check_marks(&c, zone);
		pa_check(&c, pa_test_retake(&c, zone, page));
		spin_unlock_irq(&zone->lock);
		if (on)
			pa_test_key_restore(was_on);
	}
	spin_lock_irq(&zone->lock);
	pa_test_put(page, TEST_ORDER, false);
	spin_unlock_irq(&zone->lock);
	pa_test_end(test, &c, zone, page);
}

/*
 * With pre-zeroing on: a movable __GFP_ZERO page comes from a zeroed
 * block and reads zero; kernel __GFP_ZERO allocations (get_zeroed_page(),
 * vzalloc()) and bulk allocations do not look for zeroed pages, read
 * zero, and a bulk allocation is never short.
 */
static void pa_test_zeroed_allocations(struct kunit *test)
{
	bool was_on;
	struct page *pages[32] = { };
	struct pa_checks c = { };
	struct zone *zone;
	struct page *page = pa_test_start(test, &zone);
	unsigned long addr, i, nr;
	struct page *user;
	u8 *v;

	pa_test_fill(page, TEST_ORDER, 0);
	spin_lock_irq(&zone->lock);
	pa_test_put(page, TEST_ORDER, true);
	spin_unlock_irq(&zone->lock);
	was_on = pa_test_key_on();

	user = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_ZERO, 0);
	KUNIT_EXPECT_NOT_NULL(test, user);
	if (user) {
		KUNIT_EXPECT_TRUE(test, pa_test_is_zero(user, 0));
		KUNIT_EXPECT_FALSE(test, PageZeroed(user));
		if (!was_on)
			KUNIT_EXPECT_TRUE(test, user >= page && user < page + (1 << TEST_ORDER));
		__free_page(user);
	}

	/* Larger ones from the buddy lists, past the shared pcp lists. */
	user = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_ZERO, 2);
	KUNIT_EXPECT_NOT_NULL(test, user);
	if (user) {
		KUNIT_EXPECT_TRUE(test, pa_test_is_zero(user, 2));
		KUNIT_EXPECT_FALSE(test, PageZeroed(user));
		if (!was_on)
			KUNIT_EXPECT_TRUE(test, user >= page && user < page + (1 << TEST_ORDER));
		__free_pages(user, 2);
	}

	addr = get_zeroed_page(GFP_KERNEL);
	KUNIT_EXPECT_NE(test, addr, 0UL);
	if (addr) {
		KUNIT_EXPECT_NULL(test, memchr_inv((void *)addr, 0, PAGE_SIZE));
		free_page(addr);
	}

	v = vzalloc(SZ_1M);
	KUNIT_EXPECT_NOT_NULL(test, v);
	if (v) {
		KUNIT_EXPECT_NULL(test, memchr_inv(v, 0, SZ_1M));
		vfree(v);
	}

	nr = alloc_pages_bulk_array(GFP_HIGHUSER_MOVABLE | __GFP_ZERO, ARRAY_SIZE(pages), pages);
	KUNIT_EXPECT_EQ(test, nr, ARRAY_SIZE(pages));
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_TRUE(test, pa_test_is_zero(pages[i], 0));
		KUNIT_EXPECT_FALSE(test, PageZeroed(pages[i]));
		__free_page(pages[i]);
	}

	pa_test_key_restore(was_on);
	/* As turning pre-zeroing off does: no page waits on a zeroed pcp list. */
	if (!was_on)
		drain_all_pages(zone);
	/* The block stays free memory, partly on pcp lists: not retaken. */
	spin_lock_irq(&zone->lock);
	pa_check_marks(&c, zone);
	spin_unlock_irq(&zone->lock);
	pa_report(test, &c);
}

static struct kunit_case hawkeye_page_alloc_cases[] = {
	KUNIT_CASE(pa_test_merge),
	KUNIT_CASE(pa_test_expand),
	KUNIT_CASE(pa_test_index_stale),
	KUNIT_CASE(pa_test_take_past_stale),
	KUNIT_CASE(pa_test_take_smallest),
	KUNIT_CASE(pa_test_steal),
	KUNIT_CASE(pa_test_ring_full),
	KUNIT_CASE(pa_test_index_grows),
	KUNIT_CASE(pa_test_index_base),
	KUNIT_CASE(pa_test_pcp),
	KUNIT_CASE(pa_test_pcp_refills),
	KUNIT_CASE(pa_test_pcp_recycles),
	KUNIT_CASE(pa_test_reported),
	KUNIT_CASE(pa_test_off),
	KUNIT_CASE(pa_test_capture),
	KUNIT_CASE(pa_test_isolation),
	KUNIT_CASE(pa_test_putback),
	KUNIT_CASE(pa_test_online),
	KUNIT_CASE(pa_test_zeroed_allocations),
	{}
};

static struct kunit_suite hawkeye_page_alloc_suite = {
	.name = "hawkeye-page-alloc",
	.test_cases = hawkeye_page_alloc_cases,
};
kunit_test_suite(hawkeye_page_alloc_suite);

#endif /* _MM_HAWKEYE_PAGE_ALLOC_KUNIT_H */
