// SPDX-License-Identifier: GPL-2.0
/*
 * Pre-zeroing's side of the fault path. A page that leaves the allocator
 * pre-zeroed skips zeroing: it is counted (and, with CONFIG_DEBUG_VM,
 * checked); one that does not is zeroed as upstream does, and wakes its
 * node's paced zeroing thread. folio_zero_user() (hugetlb, and anonymous
 * huge faults with pre-zeroing off) clears a huge folio as
 * prezero/fault_clear says: the baselines pre-zeroing is measured against.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#include <linux/hawkeye.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/mm.h>
#include <linux/mutex.h>

#include "hawkeye.h"
#include "zeroed.h"

DEFINE_STATIC_KEY_FALSE(hawkeye_fault_clear_key);

/* Pages on each side of the fault's cleared last, as 7.0 does. */
#define FAULT_CLEAR_WIDTH	2

/* Clear pages [@start, @end) of @folio, 2 MB per string operation at most. */
static void fault_clear_range(struct folio *folio, long start, long end, bool nt)
{
	while (start < end) {
		unsigned int i, n = min_t(long, end - start, HPAGE_PMD_NR);
		void *addr = folio_address(folio) + start * PAGE_SIZE;

		if (nt)
			for (i = 0; i < n; i++)
				clear_page_nt(addr + i * PAGE_SIZE);
		else
			clear_pages(addr, n);
		start += n;
		cond_resched();
	}
}

/**
 * __hawkeye_folio_zero_user - clear a huge folio as prezero/fault_clear says
 * @folio: the huge folio to clear
 * @addr_hint: the faulting address
 *
 * 1 is Linux 7.0's folio_zero_user(): three contiguous ranges, each with
 * one string operation, the fault's neighbourhood last so that it is still
 * cached when the fault returns; 6.12 clears 4 KB at a time from both ends
 * toward the fault. 2 is the same order with non-temporal stores.
 *
 * Return: true if the folio was cleared, false to leave it to 6.12's way
 * (fault_clear 0, highmem, gigantic folios).
 */
bool __hawkeye_folio_zero_user(struct folio *folio, unsigned long addr_hint)
{
	unsigned int mode = READ_ONCE(hawkeye_prezero.fault_clear);
	long nr = folio_nr_pages(folio);
	long fault = (addr_hint - ALIGN_DOWN(addr_hint, folio_size(folio))) >> PAGE_SHIFT;
	long lo = clamp_t(long, fault - FAULT_CLEAR_WIDTH, 0, nr);
	long hi = clamp_t(long, fault + FAULT_CLEAR_WIDTH + 1, 0, nr);
	bool nt = mode == FAULT_CLEAR_NONTEMPORAL;

	if (mode == FAULT_CLEAR_UPSTREAM || folio_test_highmem(folio) ||
	    nr > MAX_ORDER_NR_PAGES)
		return false;
	fault_clear_range(folio, 0, lo, nt);
	fault_clear_range(folio, hi, nr, nt);
	fault_clear_range(folio, lo, hi, nt);
	if (nt)
		wmb();	/* as clear_page()'s stores are, before the folio is mapped */
	return true;
}

/**
 * hawkeye_prezero_set_fault_clear - choose how folio_zero_user() clears
 * @mode: an enum fault_clear; sysfs checked its bounds
 *
 * Return: 0.
 */
int hawkeye_prezero_set_fault_clear(unsigned int mode)
{
	static DEFINE_MUTEX(fault_clear_mutex);

	mutex_lock(&fault_clear_mutex);
	WRITE_ONCE(hawkeye_prezero.fault_clear, mode);
	if (mode == FAULT_CLEAR_UPSTREAM)
		static_branch_disable(&hawkeye_fault_clear_key);
	else
		static_branch_enable(&hawkeye_fault_clear_key);
	mutex_unlock(&fault_clear_mutex);
	return 0;
}

/*
 * The fault_{prezeroed,sync_zero}_{4k,2m} counters, and per size
 * (mTHP and 2 MB) the hawkeye_fault_{prezeroed,sync_zero} files in
 * /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/. Paced,
 * one that was not pre-zeroed wakes the thread of the page's node if that
 * one sleeps with nothing to zero (prezero_woken).
 */
static void prezero_count_zeroing(struct page *page, unsigned int order,
				  bool prezeroed)
{
	if (!prezeroed && READ_ONCE(hawkeye_prezero.paced))
		hawkeye_prezero_wake(page_to_nid(page));
	if (order == 0)
		hawkeye_stat_inc(prezeroed ? HAWKEYE_STAT_FAULT_PREZEROED_4K :
				 HAWKEYE_STAT_FAULT_SYNC_ZERO_4K);
	else if (order == HPAGE_PMD_ORDER)
		hawkeye_stat_inc(prezeroed ? HAWKEYE_STAT_FAULT_PREZEROED_2M :
				 HAWKEYE_STAT_FAULT_SYNC_ZERO_2M);
	count_mthp_stat(order, prezeroed ? MTHP_STAT_HAWKEYE_FAULT_PREZEROED :
			MTHP_STAT_HAWKEYE_FAULT_SYNC_ZERO);
}

/**
 * __zeroed_page_needs_init - a page leaves the allocator, pre-zeroing on
 * @page: the first page of the allocation
 * @order: its order
 * @gfp: its flags
 * @init: whether the allocator would zero it
 * @zeroed: whether it was pre-zeroed (its mark, now cleared)
 *
 * Counts, for user (movable) memory that must be zero, whether it was
 * pre-zeroed or must be zeroed now; and, as prezero_wasted,
 * pre-zeroed pages taken by an allocation that did not need them.
 *
 * Return: whether the allocator must still zero the page.
 */
bool __zeroed_page_needs_init(struct page *page, unsigned int order, gfp_t gfp,
			      bool init, bool zeroed)
{
	if (!init) {
		if (zeroed)
			hawkeye_stat_add(HAWKEYE_STAT_PREZERO_WASTED, 1 << order);
		return false;
	}
	/* Page tables and the like are not counted. */
	if (gfp & __GFP_MOVABLE)
		prezero_count_zeroing(page, order, zeroed);
	if (zeroed)
		zeroed_page_check(page, order);
	return !zeroed;
}
