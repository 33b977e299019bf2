// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye's index of zeroed free blocks.
 *
 * The zeroing thread (prezero.c) puts the blocks it zeroed back on the
 * free lists where upstream puts an isolated block back, marked
 * PageZeroed(); the allocator records every marked block it frees, merges
 * or splits off (zeroed.h) in its zone's index, and __GFP_ZERO allocations
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

/**
 * zeroed_index_add - record a zeroed free block
 * @zone: its zone, locked
 * @page: the head of the block, marked PageZeroed()
 * @order: its order
 *
 * Called by the allocator as the block joins a free list. A full ring
 * loses its oldest entry.
 */
void zeroed_index_add(struct zone *zone, struct page *page, unsigned int order)
{
	struct zeroed_index *zi = zone->zeroed_index;

	lockdep_assert_held(&zone->lock);
	if (!zi)
		return;
	zeroed_ring(zi, order)[zi->head[order]] = page_to_pfn(page) - zone->zone_start_pfn;
	zi->head[order] = (zi->head[order] + 1) % zi->size;
	if (zi->nr[order] < zi->size)
		zi->nr[order]++;
	WRITE_ONCE(zi->orders, zi->orders | BIT(order));
}

/* The newest entry of @order, taken off its ring: a block, or NULL if stale. */
static struct page *zeroed_index_pop(struct zone *zone, struct zeroed_index *zi,
				     unsigned int order, int mt)
{
	unsigned long pfn;
	struct page *page;

	zi->head[order] = (zi->head[order] + zi->size - 1) % zi->size;
	if (!--zi->nr[order])
		WRITE_ONCE(zi->orders, zi->orders & ~BIT(order));
	pfn = zone->zone_start_pfn + zeroed_ring(zi, order)[zi->head[order]];

	/* Memory may have gone offline or to another zone since. */
	page = pfn_to_online_page(pfn);
	if (!page || page_zone(page) != zone)
		return NULL;
	if (!PageBuddy(page) || !PageZeroed(page) || buddy_order(page) != order ||
	    get_pageblock_migratetype(page) != mt)
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
 * zeroed_index_init - give every populated zone an index
 *
 * Called as pre-zeroing is turned on; an index, once made, stays. A zone
 * without one (no memory for it, or populated by hotplug since) gets no
 * pre-zeroed blocks handed out: its marks still save the zeroing when a
 * freed or split page happens to carry one.
 *
 * Return: 0, or -ENOMEM if no zone could have one.
 */
int zeroed_index_init(void)
{
	struct zone *zone;
	int made = 0, have = 0;

	for_each_populated_zone(zone) {
		struct zeroed_index *zi;
		unsigned int size;

		if (READ_ONCE(zone->zeroed_index)) {
			have++;
			continue;
		}
		size = clamp_t(unsigned long, zone_managed_pages(zone) >> pageblock_order,
			       ZEROED_RING_MIN, ZEROED_RING_MAX);
		zi = kvzalloc(struct_size(zi, pfn, NR_PAGE_ORDERS * size), GFP_KERNEL);
		if (!zi)
			continue;
		zi->size = size;
		spin_lock_irq(&zone->lock);
		WRITE_ONCE(zone->zeroed_index, zi);
		spin_unlock_irq(&zone->lock);
		made++;
	}
	return made || have ? 0 : -ENOMEM;
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
