/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The buddy allocator's side of pre-zeroing: the hooks mm/page_alloc.c
 * calls, inline so that they cost a flag test (or a static branch) where
 * the allocator has the page at hand.
 *
 * A free block whose pages are known to be zero carries PageZeroed() on
 * its head, and its zone's index of zeroed blocks (zeroed.c) records it;
 * __GFP_ZERO allocations of user memory (ALLOC_ZEROED) look zeroed blocks
 * up there. Where a block sits in its free list is upstream's choice,
 * whether pre-zeroing is on or off, but for the remainders of a split
 * zeroed block (zeroed_to_tail()).
 */
#ifndef _MM_HAWKEYE_ZEROED_H
#define _MM_HAWKEYE_ZEROED_H

#include <linux/hawkeye.h>
#include <linux/mmzone.h>
#include <linux/page-isolation.h>
#include <linux/vmstat.h>

#include "../internal.h"

#ifdef CONFIG_HAWKEYE_PREZERO

/*
 * Per order, a ring of zeroed free blocks, newest last: their pfns in
 * units of the order, less @base_pfn's, where the zone started when its
 * first index was made (memory hotplug may move the start either way; an
 * int reaches 8 TB << order with 4 KB pages). An entry goes stale when
 * its block is allocated or merged; it is checked when taken. Every
 * zeroed block on a movable free list has an entry: a full ring forgets
 * its oldest block (clears the mark), and the zeroing thread zeroes no
 * block of an order whose ring is full, nor one out of reach.
 *
 * zone->zeroed_index is read and written under the zone lock, and
 * replaced (the zone grew) under zeroed.c's mutex as well.
 * zone->zeroed_orders, bit n set while ring n has entries, is written
 * under the zone lock and read without it by faults.
 */
struct zeroed_index {
	unsigned long pages;		/* the zone's managed pages it is sized for */
	unsigned long base_pfn;		/* what entries are relative to */
	unsigned long compact;		/* bit n: ring n full, none stale at last look */
	unsigned int size[NR_PAGE_ORDERS];	/* entries of each ring */
	unsigned int start[NR_PAGE_ORDERS];	/* its first in @pfn */
	unsigned int head[NR_PAGE_ORDERS];	/* where the next entry goes */
	unsigned int nr[NR_PAGE_ORDERS];	/* entries in use */
	int pfn[];			/* the rings, one after the other */
};

int zeroed_index_init(void);
int zeroed_index_init_zone(struct zone *zone);
void zeroed_index_compact(struct zone *zone, unsigned int order);
void drop_zeroed_marks(void);
bool zeroed_index_add(struct zone *zone, struct page *page, unsigned int order);
struct page *zeroed_index_take(struct zone *zone, unsigned int order, int mt);
bool __zeroed_page_needs_init(struct page *page, unsigned int order, gfp_t gfp,
			      bool init, bool zeroed);
#ifdef CONFIG_DEBUG_VM
void zeroed_page_check(struct page *page, unsigned int order);
#else
static inline void zeroed_page_check(struct page *page, unsigned int order)
{
}
#endif

/* An entry for the block of @order at @pfn, if an int holds it. */
static inline bool zeroed_index_entry(struct zeroed_index *zi, unsigned long pfn,
				      unsigned int order, int *entry)
{
	long offset = (long)(pfn >> order) - (long)(zi->base_pfn >> order);

	*entry = offset;
	return *entry == offset;
}

/* A block joins a free list: count its pages if it is zeroed. */
static inline void zeroed_block_added(struct zone *zone, struct page *page,
				      unsigned int order)
{
	if (PageZeroed(page))
		__mod_zone_page_state(zone, NR_FREE_ZEROED, 1 << order);
}

/*
 * A block leaves the free lists: whoever takes it may write it. Its entry,
 * if any, goes stale: the ring is worth compacting again.
 */
static inline void zeroed_block_deleted(struct zone *zone, struct page *page,
					unsigned int order)
{
	struct zeroed_index *zi;

	if (!PageZeroed(page))
		return;
	__ClearPageZeroed(page);
	__mod_zone_page_state(zone, NR_FREE_ZEROED, -(1 << order));
	zi = zone->zeroed_index;
	if (zi && test_bit(order, &zi->compact))
		__clear_bit(order, &zi->compact);
}

/* May the zeroing thread add a block of @order? Not to a full ring. */
static inline bool zeroed_index_has_room(struct zone *zone, unsigned int order)
{
	struct zeroed_index *zi = zone->zeroed_index;

	lockdep_assert_held(&zone->lock);
	return zi && zi->nr[order] < zi->size[order];
}

/*
 * A free block moves to another migratetype's list (its pageblock's type
 * changes). Faults look for zeroed blocks on the movable lists: moving
 * there, a zeroed block is recorded (an isolated block's entry may have
 * been dropped meanwhile); moving elsewhere, or not recorded, it is
 * forgotten, so that
 * NR_FREE_ZEROED counts what faults can find. Isolation is brief: an
 * isolated block keeps its mark.
 */
static inline void zeroed_block_moved(struct zone *zone, struct page *page,
				      unsigned int order, int mt)
{
	if (!PageZeroed(page))
		return;
	if (mt == MIGRATE_MOVABLE ? !zeroed_index_add(zone, page, order) :
				    !is_migrate_isolate(mt))
		zeroed_block_deleted(zone, page, order);
}

/*
 * Mark a zeroed free block of @mt, before it joins a list, and record it.
 * Only where faults look (zeroed_block_moved()): a block of another type,
 * or one the index cannot record, keeps no mark, so that NR_FREE_ZEROED
 * counts what faults can find.
 */
static inline void zeroed_block_mark(struct zone *zone, struct page *page,
				     unsigned int order, int mt)
{
	if (mt != MIGRATE_MOVABLE && !is_migrate_isolate(mt))
		return;
	__SetPageZeroed(page);
	if (!zeroed_index_add(zone, page, order))
		__ClearPageZeroed(page);
}

/*
 * The remainders of a split zeroed block go where isolated blocks (the
 * zeroing thread's, free page reporting's) go back, to the tail, away from
 * allocations that need no zeroing; off, to the head as any other.
 */
static inline bool zeroed_to_tail(bool zeroed)
{
	return zeroed && hawkeye_prezero_enabled();
}

/* Test and clear the mark of a page being freed (it may become a tail). */
static inline bool zeroed_mark_take(struct page *page)
{
	if (!PageZeroed(page))
		return false;
	__ClearPageZeroed(page);
	return true;
}

/*
 * post_alloc_hook(): the mark never outlives the free page it describes.
 * Off, the allocator zeroes as upstream's; on, a pre-zeroed page skips
 * @init, and what was zeroed how is counted.
 */
static inline bool zeroed_page_needs_init(struct page *page, unsigned int order,
					  gfp_t gfp, bool init)
{
	bool zeroed = zeroed_mark_take(page);

	if (!hawkeye_prezero_enabled())
		return init;
	return __zeroed_page_needs_init(page, order, gfp, init, zeroed);
}

/*
 * Order-0 __GFP_ZERO user pages have their own pcp list, filled from
 * zeroed blocks first, so that page cache and other allocations that need
 * no zeroing never take them. While it is empty and the index has nothing,
 * they take @list, where freed pages go, as without pre-zeroing.
 */
static inline struct list_head *zeroed_pcp_list(struct zone *zone,
						struct per_cpu_pages *pcp,
						unsigned int order,
						unsigned int alloc_flags,
						struct list_head *list)
{
	struct list_head *zeroed = &pcp->lists[PCP_ZEROED_PINDEX];

	if (order || !(alloc_flags & ALLOC_ZEROED))
		return list;
	if (list_empty(zeroed) && !READ_ONCE(zone->zeroed_orders))
		return list;
	return zeroed;
}

/*
 * Larger __GFP_ZERO user allocations (mTHP, THP) take a zeroed block from
 * the buddy lists while the index may have one: a zone lock per folio, as
 * a pcp refill of that order takes, saves clearing 8 KB to 2 MB; zeroed
 * pages on the shared pcp lists of those orders would go to page cache.
 */
static inline bool zeroed_skip_pcp(struct zone *zone, unsigned int order,
				   unsigned int alloc_flags)
{
	if (!order || !(alloc_flags & ALLOC_ZEROED))
		return false;
	return READ_ONCE(zone->zeroed_orders) >> order;
}

#else /* !CONFIG_HAWKEYE_PREZERO */

static inline void zeroed_block_added(struct zone *zone, struct page *page,
				      unsigned int order) { }

static inline void zeroed_block_deleted(struct zone *zone, struct page *page,
					unsigned int order) { }

static inline void zeroed_block_mark(struct zone *zone, struct page *page,
				     unsigned int order, int mt) { }

static inline bool zeroed_to_tail(bool zeroed) { return false; }

static inline bool zeroed_mark_take(struct page *page) { return false; }

static inline bool zeroed_page_needs_init(struct page *page, unsigned int order,
					  gfp_t gfp, bool init)
{
	return init;
}

static inline void zeroed_block_moved(struct zone *zone, struct page *page,
				      unsigned int order, int mt) { }

static inline struct list_head *zeroed_pcp_list(struct zone *zone,
						struct per_cpu_pages *pcp,
						unsigned int order,
						unsigned int alloc_flags,
						struct list_head *list)
{
	return list;
}

static inline bool zeroed_skip_pcp(struct zone *zone, unsigned int order,
				   unsigned int alloc_flags)
{
	return false;
}

static inline struct page *zeroed_index_take(struct zone *zone, unsigned int order,
					     int mt)
{
	return NULL;
}

#endif /* CONFIG_HAWKEYE_PREZERO */
#endif /* _MM_HAWKEYE_ZEROED_H */
