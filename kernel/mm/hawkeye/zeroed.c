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

#include <linux/highmem.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../internal.h"
#include "zeroed.h"

/*
 * Entries looked at per take: stale ones are dropped on the way. Most at
 * the smallest order with entries, whose blocks a take splits least; a
 * few at each larger one, so that a ring of stale entries (mTHP-sized
 * blocks left from when that size was in use) hides no other order.
 */
#define ZEROED_LOOKUP_FIRST	16
#define ZEROED_LOOKUP		2
/* The fewest and the most entries of a ring (4 MB). */
#define ZEROED_RING_MIN		64
#define ZEROED_RING_MAX		(1UL << 20)
/* The index is an optimisation: under memory pressure, none. */
#define ZEROED_GFP		(GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN)
/* The smallest mTHP order: the zeroing thread zeroes no smaller block. */
#define ZEROED_THREAD_MIN_ORDER	2

/* Serialises making and replacing indexes. */
static DEFINE_MUTEX(zeroed_index_mutex);

#ifdef CONFIG_DEBUG_VM
/**
 * zeroed_page_check - check a page handed out as pre-zeroed
 * @page: the first page of the allocation
 * @order: its order
 *
 * A pre-zeroed page that is not zero is a lost write or a stale mark: warn
 * once and zero it. The first and last cache line of each subpage only:
 * cheap enough for every fault of a debug kernel, and what was written
 * over a zeroed page (a hibernation image, a stray store) shows there too.
 */
void zeroed_page_check(struct page *page, unsigned int order)
{
	unsigned long i;

	for (i = 0; i < (1UL << order); i++) {
		u8 *addr = kmap_local_page(page + i);
		bool zero = !memchr_inv(addr, 0, L1_CACHE_BYTES) &&
			    !memchr_inv(addr + PAGE_SIZE - L1_CACHE_BYTES, 0,
					L1_CACHE_BYTES);

		kunmap_local(addr);
		if (!zero) {
			VM_WARN_ONCE(1, "hawkeye: pre-zeroed pfn %#lx is not zero\n",
				     page_to_pfn(page + i));
			clear_highpage(page + i);
		}
	}
}
#endif

static int *zeroed_ring(struct zeroed_index *zi, unsigned int order)
{
	return &zi->pfn[zi->start[order]];
}

/*
 * Entries for the blocks of @order a zone of @pages can have free at
 * once: free buddies below pageblock_order merge, so at most every other
 * block. Orders the thread never zeroes get only split remainders, about
 * one per pageblock. About a byte per page in all.
 */
static unsigned long zeroed_ring_size(unsigned long pages, unsigned int order)
{
	unsigned long n;

	if (order < ZEROED_THREAD_MIN_ORDER)
		n = pages >> pageblock_order;
	else if (order < pageblock_order)
		n = pages >> (order + 1);
	else
		n = pages >> order;
	return clamp(n, ZEROED_RING_MIN, ZEROED_RING_MAX);
}

/* The block of an entry if it still is a free zeroed block of @order. */
static struct page *zeroed_entry_block(struct zone *zone, struct zeroed_index *zi,
				       int entry, unsigned int order)
{
	/* Memory may have gone offline or to another zone since. */
	struct page *page = pfn_to_online_page(((zi->base_pfn >> order) + entry) << order);

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
 *
 * Return: false if the block is out of the index's reach (a zone grown
 * by memory hotplug 8 TB << @order away from where it started): the
 * caller drops the mark.
 */
bool zeroed_index_add(struct zone *zone, struct page *page, unsigned int order)
{
	struct zeroed_index *zi = zone->zeroed_index;
	int new, *entry;

	lockdep_assert_held(&zone->lock);
	if (!zi)
		return true;
	if (!zeroed_index_entry(zi, page_to_pfn(page), order, &new))
		return false;
	entry = &zeroed_ring(zi, order)[zi->head[order]];
	if (zi->nr[order] == zi->size[order]) {
		struct page *oldest = zeroed_entry_block(zone, zi, *entry, order);

		/* Not @page itself: its entry is only renewed. */
		if (oldest && oldest != page)
			zeroed_block_deleted(zone, oldest, order);
	} else {
		zi->nr[order]++;
	}
	*entry = new;
	zi->head[order] = (zi->head[order] + 1) % zi->size[order];
	/* Written only when it changes: faults read it without the lock. */
	if (!(zone->zeroed_orders & BIT(order)))
		WRITE_ONCE(zone->zeroed_orders, zone->zeroed_orders | BIT(order));
	return true;
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

	zi->head[order] = (zi->head[order] + zi->size[order] - 1) % zi->size[order];
	if (!--zi->nr[order])
		WRITE_ONCE(zone->zeroed_orders, zone->zeroed_orders & ~BIT(order));
	page = zeroed_entry_block(zone, zi, zeroed_ring(zi, order)[zi->head[order]],
				  order);
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
 * The smallest order with entries first, its newest ZEROED_LOOKUP_FIRST
 * entries, then the newest ZEROED_LOOKUP of each larger order. The block
 * stays on its free list; the caller takes it off and splits it, which
 * marks and records the remainders.
 *
 * Return: the head of a free zeroed block of at least @order, or NULL.
 */
struct page *zeroed_index_take(struct zone *zone, unsigned int order, int mt)
{
	struct zeroed_index *zi = zone->zeroed_index;
	unsigned long orders = zone->zeroed_orders >> order;
	unsigned int lookup = ZEROED_LOOKUP_FIRST, bit, n;

	lockdep_assert_held(&zone->lock);
	if (!zi)
		return NULL;
	for_each_set_bit(bit, &orders, NR_PAGE_ORDERS - order) {
		unsigned int o = order + bit;

		for (n = 0; n < lookup && zi->nr[o]; n++) {
			struct page *page = zeroed_index_pop(zone, zi, o, mt);

			if (page)
				return page;
		}
		lookup = ZEROED_LOOKUP;
	}
	return NULL;
}

/* Entries looked at per zone lock hold as a ring is compacted. */
#define ZEROED_COMPACT_BATCH	64

/**
 * zeroed_index_compact - drop the stale entries of a full ring
 * @zone: the zone, not locked
 * @order: the ring's order
 *
 * A full ring forgets a zeroed block for each one added, so the zeroing
 * thread zeroes no block of an order whose ring is full
 * (zeroed_index_has_room()); before it gives up on one, it calls this.
 * Every entry is looked at once, oldest first, a batch per zone lock
 * hold: a stale one is dropped, and so is a duplicate (a block allocated
 * and zeroed again makes its old entry valid again); the others are kept
 * in order. A ring found without such an entry is not looked at again
 * until a zeroed block of its order leaves the free lists
 * (zeroed_block_deleted()).
 */
void zeroed_index_compact(struct zone *zone, unsigned int order)
{
	unsigned long *found, nbits, start;
	unsigned int seen, todo, size;
	struct zeroed_index *zi;
	bool full;
	int *ring;

	spin_lock_irq(&zone->lock);
	zi = zone->zeroed_index;
	full = zi && zi->nr[order] == zi->size[order] && !test_bit(order, &zi->compact);
	spin_unlock_irq(&zone->lock);
	if (!full)
		return;
	mutex_lock(&zeroed_index_mutex);	/* the index stays */
	zi = zone->zeroed_index;
	/* The blocks seen, by zone-relative pfn; without it, no duplicate is found. */
	start = zone->zone_start_pfn;
	nbits = (zone->spanned_pages >> order) + 1;
	found = kvcalloc(BITS_TO_LONGS(nbits), sizeof(long), ZEROED_GFP);
	size = zi->size[order];
	ring = zeroed_ring(zi, order);
	spin_lock_irq(&zone->lock);
	todo = zi->nr[order];
	for (seen = 0; seen < todo && zi->nr[order]; seen++) {
		unsigned int oldest = (zi->head[order] + size - zi->nr[order]) % size;
		struct page *page = zeroed_entry_block(zone, zi, ring[oldest], order);
		unsigned long bit = page ? (page_to_pfn(page) - start) >> order : 0;

		/* A zone that grew or moved since the bitmap was sized: no check. */
		if (!page || (found && bit < nbits && __test_and_set_bit(bit, found))) {
			zi->nr[order]--;
		} else {
			ring[zi->head[order]] = ring[oldest];
			zi->head[order] = (zi->head[order] + 1) % size;
		}
		if (seen % ZEROED_COMPACT_BATCH == ZEROED_COMPACT_BATCH - 1) {
			spin_unlock_irq(&zone->lock);
			cond_resched();
			spin_lock_irq(&zone->lock);
		}
	}
	if (!zi->nr[order])
		WRITE_ONCE(zone->zeroed_orders, zone->zeroed_orders & ~BIT(order));
	if (zi->nr[order] == size && found)
		__set_bit(order, &zi->compact);
	spin_unlock_irq(&zone->lock);
	mutex_unlock(&zeroed_index_mutex);
	kvfree(found);
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
	WRITE_ONCE(zone->zeroed_orders, 0);
}

/*
 * Move @old's entries, oldest first, to @zi, whose rings are no smaller.
 * All in one zone lock hold: with every ring full, 17 MB on a 128 GB zone,
 * 44 MB on a zone of 4 TB or more (milliseconds), once per growth by an
 * eighth.
 */
static void zeroed_index_copy(struct zeroed_index *zi, struct zeroed_index *old)
{
	unsigned int order, nr, size, oldest, first;
	int *ring;

	for (order = 0; old && order < NR_PAGE_ORDERS; order++) {
		nr = old->nr[order];
		size = old->size[order];
		oldest = (old->head[order] + size - nr) % size;
		first = min(nr, size - oldest);
		ring = zeroed_ring(zi, order);
		memcpy(ring, zeroed_ring(old, order) + oldest, first * sizeof(*ring));
		memcpy(ring + first, zeroed_ring(old, order), (nr - first) * sizeof(*ring));
		zi->nr[order] = nr;
		zi->head[order] = nr % zi->size[order];
	}
}

/* Is @zone's index made for about its size? It grows by an eighth or more. */
static bool zeroed_index_sized(struct zone *zone, unsigned long pages)
{
	struct zeroed_index *zi;
	bool sized;

	spin_lock_irq(&zone->lock);
	zi = zone->zeroed_index;
	sized = zi && pages <= zi->pages + zi->pages / 8;
	spin_unlock_irq(&zone->lock);
	return sized;
}

/**
 * zeroed_index_init_zone - give a populated zone an index of its size
 * @zone: the zone
 *
 * Sized for the zone's managed pages (zeroed_ring_size()); a zone that
 * has grown by an eighth since its index was made (memory hotplug) gets a
 * larger one, with the entries of the old. Entries are relative to where
 * the zone started when its first index was made. Called as pre-zeroing
 * is turned on, and by the zeroing thread before it zeroes in a zone.
 *
 * Return: 0, or -ENOMEM if the zone has no index.
 */
int zeroed_index_init_zone(struct zone *zone)
{
	unsigned long pages = zone_managed_pages(zone), entries = 0;
	unsigned int size[NR_PAGE_ORDERS], order;
	struct zeroed_index *zi, *old;
	int ret = 0;

	if (zeroed_index_sized(zone, pages))
		return 0;
	mutex_lock(&zeroed_index_mutex);
	old = zone->zeroed_index;
	if (zeroed_index_sized(zone, pages))
		goto out;
	ret = old ? 0 : -ENOMEM;
	/* Emptied by memory hotplug: nothing to size for, no start to take. */
	if (!pages)
		goto out;
	for (order = 0; order < NR_PAGE_ORDERS; order++) {
		size[order] = zeroed_ring_size(pages, order);
		if (old)
			size[order] = max(size[order], old->size[order]);
		entries += size[order];
	}
	zi = kvzalloc(struct_size(zi, pfn, entries), ZEROED_GFP);
	if (!zi)
		goto out;
	zi->pages = pages;
	for (order = 0, entries = 0; order < NR_PAGE_ORDERS; order++) {
		zi->size[order] = size[order];
		zi->start[order] = entries;
		entries += size[order];
	}
	spin_lock_irq(&zone->lock);
	if (!old && !zone->spanned_pages) {	/* emptied meanwhile */
		spin_unlock_irq(&zone->lock);
		kvfree(zi);
		goto out;
	}
	zi->base_pfn = old ? old->base_pfn : zone->zone_start_pfn;
	zeroed_index_copy(zi, old);
	zone->zeroed_index = zi;
	spin_unlock_irq(&zone->lock);
	mutex_unlock(&zeroed_index_mutex);
	kvfree(old);
	return 0;
out:
	mutex_unlock(&zeroed_index_mutex);
	return ret;
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
