// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye's index of zeroed free blocks.
 *
 * The zeroing thread (prezero.c) puts the blocks it zeroed back on the
 * free lists where upstream puts an isolated block back, marked
 * PageZeroed(); the allocator records every marked block it frees, merges,
 * splits off or moves to a movable list (zeroed.h) in its zone's index,
 * and __GFP_ZERO allocations
 * of user memory take the newest recorded block that is still free,
 * zeroed and of the order recorded. Nothing here decides where a block
 * sits in its free list. Everything is under the zone lock but the
 * lockless look at which orders have entries (zeroed_skip_pcp()).
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/slab.h>

#include "../internal.h"
#include "hawkeye.h"
#include "zeroed.h"

/* Entries looked at per take: stale ones are dropped on the way. */
#define ZEROED_LOOKUP		16
/* Entries per order and zone: a 2 MB block each, within bounds. */
#define ZEROED_RING_MIN		64
#define ZEROED_RING_MAX		8192

static unsigned int *zeroed_ring(struct zeroed_index *zi, unsigned int order)
{
	return &zi->pfn[order * zi->size];
}

/* The block of an entry if it still is a free zeroed block of @order. */
static struct page *zeroed_entry_block(struct zone *zone, unsigned int pfn,
				       unsigned int order)
{
	/* Memory may have gone offline or to another zone since. */
	struct page *page = pfn_to_online_page(zone->zone_start_pfn + pfn);

	if (!page || page_zone(page) != zone)
		return NULL;
	if (!PageBuddy(page) || !PageZeroed(page) || buddy_order(page) != order)
		return NULL;
	return page;
}

/**
 * zeroed_index_add - record a zeroed free block
 * @zone: its zone, locked
 * @page: the head of the block, marked PageZeroed()
 * @order: its order
 *
 * Called by the allocator as the block joins a free list, or moves to the
 * movable one. A full ring forgets its oldest block: the mark is cleared,
 * so that NR_FREE_ZEROED, which the zeroing thread fills up to its
 * target, counts only blocks a fault can find.
 */
void zeroed_index_add(struct zone *zone, struct page *page, unsigned int order)
{
	struct zeroed_index *zi = zone->zeroed_index;
	unsigned int *entry;

	lockdep_assert_held(&zone->lock);
	if (!zi)
		return;
	entry = &zeroed_ring(zi, order)[zi->head[order]];
	if (zi->nr[order] == zi->size) {
		struct page *oldest = zeroed_entry_block(zone, *entry, order);

		if (oldest)
			zeroed_block_deleted(zone, oldest, order);
	} else {
		zi->nr[order]++;
	}
	*entry = page_to_pfn(page) - zone->zone_start_pfn;
	zi->head[order] = (zi->head[order] + 1) % zi->size;
	WRITE_ONCE(zi->orders, zi->orders | BIT(order));
}

/*
 * The newest entry of @order, taken off its ring: a block, or NULL if
 * stale or on another migratetype's list (an isolated block is recorded
 * again when it moves back).
 */
static struct page *zeroed_index_pop(struct zone *zone, struct zeroed_index *zi,
				     unsigned int order, int mt)
{
	struct page *page;

	zi->head[order] = (zi->head[order] + zi->size - 1) % zi->size;
	if (!--zi->nr[order])
		WRITE_ONCE(zi->orders, zi->orders & ~BIT(order));
	page = zeroed_entry_block(zone, zeroed_ring(zi, order)[zi->head[order]], order);
	if (page && get_pageblock_migratetype(page) != mt)
		return NULL;
	return page;
}

/**
 * zeroed_index_take - find a zeroed free block for an allocation
 * @zone: the zone, locked
 * @order: the allocation's order
 * @mt: its migratetype: only a block on that type's free list is taken
 *
 * The smallest order first, the newest block of each. The block stays on
 * its free list; the caller takes it off and splits it, which marks and
 * records the remainders.
 *
 * Return: the head of a free zeroed block of at least @order, or NULL.
 */
struct page *zeroed_index_take(struct zone *zone, unsigned int order, int mt)
{
	struct zeroed_index *zi = zone->zeroed_index;
	int budget = ZEROED_LOOKUP;
	unsigned long orders;

	lockdep_assert_held(&zone->lock);
	if (!zi)
		return NULL;
	while (budget > 0 && (orders = zi->orders >> order)) {
		unsigned int o = order + __ffs(orders);

		for (; budget > 0 && zi->nr[o]; budget--) {
			struct page *page = zeroed_index_pop(zone, zi, o, mt);

			if (page)
				return page;
		}
	}
	return NULL;
}

/**
 * zeroed_index_has_room - may the zeroing thread add a block of @order?
 * @zone: the zone, locked
 * @order: the order of the block it would zero
 *
 * A full ring would forget a zeroed block for each one added, and the
 * thread would zero the forgotten ones again. A full ring's oldest entries
 * are looked at, a few per call: stale, one is dropped; still a block,
 * it becomes the newest, so that successive calls go round the ring.
 *
 * Return: whether the ring of @order has a free entry.
 */
bool zeroed_index_has_room(struct zone *zone, unsigned int order)
{
	struct zeroed_index *zi = zone->zeroed_index;
	int budget = ZEROED_LOOKUP;

	lockdep_assert_held(&zone->lock);
	if (!zi)
		return false;
	/* Full, the oldest entry is the one at head. */
	for (; zi->nr[order] == zi->size && budget > 0; budget--) {
		unsigned int *oldest = &zeroed_ring(zi, order)[zi->head[order]];

		if (!zeroed_entry_block(zone, *oldest, order))
			zi->nr[order]--;
		else
			zi->head[order] = (zi->head[order] + 1) % zi->size;
	}
	return zi->nr[order] < zi->size;
}

/* Forget every entry; the marks are the caller's. */
static void zeroed_index_clear(struct zone *zone)
{
	struct zeroed_index *zi = zone->zeroed_index;
	unsigned int order;

	lockdep_assert_held(&zone->lock);
	if (!zi)
		return;
	for (order = 0; order < NR_PAGE_ORDERS; order++)
		zi->nr[order] = 0;
	WRITE_ONCE(zi->orders, 0);
}

/**
 * zeroed_index_init_zone - give a populated zone its index
 * @zone: the zone
 *
 * Sized for the zone's memory at the time, one entry per pageblock and
 * order: a zone that grows later forgets more of its zeroed blocks. An
 * index, once made, stays. Called as pre-zeroing is turned on, and by the
 * zeroing thread before it zeroes in a zone populated since (hotplug).
 *
 * Return: 0, or -ENOMEM.
 */
int zeroed_index_init_zone(struct zone *zone)
{
	struct zeroed_index *zi;
	unsigned int size;

	if (READ_ONCE(zone->zeroed_index))
		return 0;
	size = clamp_t(unsigned long, zone_managed_pages(zone) >> pageblock_order,
		       ZEROED_RING_MIN, ZEROED_RING_MAX);
	zi = kvzalloc(struct_size(zi, pfn, NR_PAGE_ORDERS * size), GFP_KERNEL);
	if (!zi)
		return -ENOMEM;
	zi->size = size;
	spin_lock_irq(&zone->lock);
	if (!zone->zeroed_index) {
		WRITE_ONCE(zone->zeroed_index, zi);
		zi = NULL;
	}
	spin_unlock_irq(&zone->lock);
	kvfree(zi);	/* another caller made one first */
	return 0;
}

/**
 * zeroed_index_init - give every populated zone an index
 *
 * A zone without one gets no pre-zeroed blocks handed out, and the zeroing
 * thread leaves it alone.
 *
 * Return: 0, or -ENOMEM if no zone could have one.
 */
int zeroed_index_init(void)
{
	struct zone *zone;
	int have = 0;

	for_each_populated_zone(zone)
		have += !zeroed_index_init_zone(zone);
	return have ? 0 : -ENOMEM;
}

/**
 * drop_zeroed_marks - forget every PageZeroed() mark
 *
 * In the free lists, the pcp lists and the indexes: what the pages hold
 * is no longer known (hibernation restored a memmap but not the free
 * pages it describes). Cheap enough for a rare event.
 */
void drop_zeroed_marks(void)
{
	struct page *page;
	struct zone *zone;
	unsigned long flags;
	unsigned int order;
	int mt, cpu, i;

	for_each_populated_zone(zone) {
		spin_lock_irqsave(&zone->lock, flags);
		for (order = 0; order < NR_PAGE_ORDERS; order++)
			for (mt = 0; mt < MIGRATE_TYPES; mt++)
				list_for_each_entry(page, &zone->free_area[order].free_list[mt],
						    buddy_list)
					zeroed_block_deleted(zone, page, order);
		zeroed_index_clear(zone);
		spin_unlock_irqrestore(&zone->lock, flags);

		for_each_online_cpu(cpu) {
			struct per_cpu_pages *pcp =
				per_cpu_ptr(zone->per_cpu_pageset, cpu);

			spin_lock_irqsave(&pcp->lock, flags);
			for (i = 0; i < NR_PCP_LISTS; i++)
				list_for_each_entry(page, &pcp->lists[i], pcp_list)
					__ClearPageZeroed(page);
			spin_unlock_irqrestore(&pcp->lock, flags);
		}
	}
}
