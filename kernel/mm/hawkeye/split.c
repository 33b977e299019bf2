// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye bloat recovery's mechanism: which THPs (and mTHPs) have enough
 * zero-filled subpages, and their split. limits.c decides when, debloat.c
 * where and in which order; this file walks a process's page tables for it
 * and splits what is at or past the bar.
 *
 * A THP goes to the highest mTHP order enabled for its VMA below its own
 * (with debloat/mthp on) or to order 0, where the split itself maps the
 * zero-filled subpages to the shared zero page and frees them
 * (RMP_USE_SHARED_ZEROPAGE): it checks each subpage again after unmapping
 * the folio, so what is read here is only a hint, and a subpage written
 * meanwhile keeps its contents. The pieces of a split to an mTHP order
 * are examined in turn against their share of the bar, so that dense
 * pieces keep their TLB reach and only sparse ones become base pages.
 */
#include <linux/hawkeye.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pagewalk.h>
#include <linux/sched/mm.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>
#include <trace/events/hawkeye.h>

#include "../internal.h"
#include "hawkeye.h"

#define DEBLOAT_PMD_BATCH	512	/* most PMDs walked per mmap_lock hold */

/**
 * hawkeye_debloat_vma_suitable - may recovery split huge pages in @vma?
 * @vma: the VMA
 *
 * Only private anonymous memory is recovered. Left alone: mlocked memory
 * (the split would not map the zero page there), shared and file-backed
 * memory, KSM areas (KSM merges pages its own way) and userfaultfd-
 * registered areas (a zero page mapped by the kernel would hide a fault
 * from the monitor).
 *
 * Return: true if it may.
 */
bool hawkeye_debloat_vma_suitable(struct vm_area_struct *vma)
{
	if (!vma_is_anonymous(vma) || userfaultfd_armed(vma))
		return false;
	return !(vma->vm_flags & (VM_LOCKED | VM_SHARED | VM_MERGEABLE));
}

/**
 * hawkeye_debloat_pmd_folio - the THP a PMD maps, if recovery may split it
 * @pmdval: the PMD, read under its lock
 *
 * An anonymous THP mapped by this process only, so that no other process
 * loses its huge mapping.
 *
 * Return: the folio, or NULL.
 */
struct folio *hawkeye_debloat_pmd_folio(pmd_t pmdval)
{
	struct folio *folio;

	if (!pmd_present(pmdval) || !pmd_trans_huge(pmdval) ||
	    is_huge_zero_pmd(pmdval))
		return NULL;
	folio = pmd_folio(pmdval);
	if (!folio_test_anon(folio) || folio_mapcount(folio) != 1)
		return NULL;
	return folio;
}

/*
 * Is the 4 KB page at @addr zero-filled? Reading stops at the first
 * non-zero byte; *@bytes grows by the number of bytes read. Not
 * thp_underused()'s pages_identical(): a page in use costs a byte or a
 * few here, and this counts them. On arm64 with MTE a zero-filled page
 * with tags passes here; the split, which compares as upstream, leaves
 * it mapped.
 */
static bool debloat_page_is_zero(const void *addr, unsigned long *bytes)
{
	/* The page is mapped and may be written meanwhile: a hint. */
	const u8 *nz = data_race(memchr_inv(addr, 0, PAGE_SIZE));

	*bytes += nz ? nz - (const u8 *)addr + 1 : PAGE_SIZE;
	return !nz;
}

/*
 * Has @folio at least @threshold zero-filled subpages? Stops as soon as
 * the answer is known. The folio is mapped and may be written meanwhile:
 * the answer is a hint, the split checks each subpage again.
 */
static bool debloat_worth_splitting(struct folio *folio, unsigned int threshold,
				    unsigned long *bytes)
{
	unsigned int nr = folio_nr_pages(folio), zero = 0, i;

	for (i = 0; i < nr; i++) {
		void *addr = kmap_local_folio(folio, i * PAGE_SIZE);

		if (debloat_page_is_zero(addr, bytes))
			zero++;
		kunmap_local(addr);
		if (zero >= threshold)
			return true;
		/* Too many in use for the rest to reach the threshold. */
		if (i + 1 - zero > nr - threshold)
			return false;
	}
	return false;
}

/* The PTEs from @addr to @end that map the shared zero page. */
static bool debloat_zero_pte(pte_t *pte, pte_t ptent, unsigned long addr,
			     void *nr)
{
	if (is_zero_pfn(pte_pfn(ptent)))
		(*(unsigned int *)nr)++;
	return false;
}

static unsigned int debloat_zero_ptes(struct mm_struct *mm, pmd_t *pmd,
				      unsigned long addr, unsigned long end)
{
	unsigned int nr = 0;

	hawkeye_walk_ptes(mm, pmd, addr, end, debloat_zero_pte, &nr);
	return nr;
}

/*
 * Count the subpages from @addr to @end, of @folio (referenced) just split
 * to order 0, that the split mapped to the zero page: freed.
 */
static unsigned int debloat_count_freed(struct mm_walk *walk, pmd_t *pmd,
					struct folio *folio, unsigned long addr,
					unsigned long end)
{
	unsigned int zero = debloat_zero_ptes(walk->mm, pmd, addr, end);

	/* The head page stays charged to the cgroup the folio was. */
	count_memcg_folio_events(folio, HAWKEYE_DEBLOAT_ZERO_PAGES_FREED, zero);
	count_vm_events(HAWKEYE_DEBLOAT_ZERO_PAGES_FREED, zero);
	return zero;
}

/*
 * The orders recovery splits to in @vma, highest first: with debloat/mthp
 * on, the mTHP sizes enabled for it below 2 MB; and 0, where the split
 * maps zero-filled subpages to the zero page.
 */
static unsigned long debloat_split_orders(struct vm_area_struct *vma)
{
	unsigned long orders = 0;

	if (READ_ONCE(hawkeye_debloat.mthp))
		orders = thp_vma_allowable_orders(vma, vma->vm_flags,
						  TVA_ENFORCE_SYSFS,
						  THP_ORDERS_ALL_ANON &
						  (BIT(HPAGE_PMD_ORDER) - 1));
	return orders | BIT(0);
}

/*
 * Split @folio (referenced and locked by the caller) to the highest of
 * @orders below its own, as split_huge_page() requires: not pinned by
 * anyone else. A split to order 0 maps the subpages that are zero-filled
 * then to the zero page and frees them. Returns the order split to, or -1.
 */
static int debloat_split(struct mm_walk *walk, struct folio *folio,
			 unsigned long orders)
{
	unsigned int from = folio_order(folio);
	int order = highest_order(orders & (BIT(from) - 1));

	/*
	 * A partially mapped folio goes to order 0, as the deferred split
	 * shrinker splits it: a large piece would leave the queue with its
	 * unmapped subpages still allocated.
	 */
	if (folio_test_partially_mapped(folio))
		order = 0;
	if (split_huge_page_to_list_to_order(&folio->page, NULL, order))
		return -1;
	/* A hint for khugepaged, which reads it locklessly. */
	WRITE_ONCE(walk->mm->hawkeye_debloat_splits,
		   walk->mm->hawkeye_debloat_splits + 1);
	/* The head page stays charged to the cgroup the folio was. */
	if (from == HPAGE_PMD_ORDER) {
		count_memcg_folio_events(folio, HAWKEYE_DEBLOAT_THP_SPLIT, 1);
		count_vm_event(HAWKEYE_DEBLOAT_THP_SPLIT);
	} else {
		hawkeye_stat_inc(HAWKEYE_STAT_DEBLOAT_MTHP_SPLIT);
	}
	return order;
}

/*
 * Examine @folio (referenced), which @pmd maps from @addr: split it to the
 * highest of @orders below its own if at least @bar of its subpages are
 * zero-filled, counting what a split to order 0 freed. Returns the order
 * split to, or -1.
 */
static int debloat_examine(struct mm_walk *walk, pmd_t *pmd,
			   struct folio *folio, unsigned long addr,
			   unsigned int bar, unsigned long orders)
{
	struct debloat_walk *dw = walk->private;
	unsigned int from = folio_order(folio), freed = 0;
	int to = -1;

	/*
	 * Locked while it is read, not only referenced: the other walker
	 * (the thread, or direct recovery in a cgroup) skips it rather than
	 * make its split fail. In step, they failed each other's splits
	 * (thp_split_page_failed) and a charge went to reclaim.
	 */
	if (!folio_trylock(folio))
		return -1;
	/* Split or freed by someone else since it was looked up? */
	if (folio_test_large(folio) && folio_test_anon(folio) &&
	    folio_order(folio) == from &&
	    !folio_contain_hwpoisoned_page(folio) &&
	    hawkeye_memcg_recoverable(folio, dw->dom->memcg) &&
	    debloat_worth_splitting(folio, bar, &dw->bytes))
		to = debloat_split(walk, folio, orders);
	folio_unlock(folio);
	if (to < 0)
		return to;
	dw->split = true;
	dw->dom->split = true;
	if (!to)
		freed = debloat_count_freed(walk, pmd, folio, addr,
					    addr + (PAGE_SIZE << from));
	trace_hawkeye_debloat_split(walk->mm, addr, from, to, freed);
	return to;
}

/*
 * The next anonymous large folio that the PTEs at or after *@addr, below
 * @end, map whole, starting with its first page, and that only this
 * process maps (likely): referenced, with *@addr set to where it starts.
 */
struct pte_folio {
	struct vm_area_struct *vma;
	unsigned long end;
	struct folio *folio;		/* found, referenced */
};

static bool debloat_folio_pte(pte_t *pte, pte_t ptent, unsigned long addr,
			      void *arg)
{
	struct pte_folio *pf = arg;
	struct page *page = vm_normal_page(pf->vma, addr, ptent);
	struct folio *folio;

	if (!page)
		return false;
	folio = page_folio(page);
	if (!folio_test_large(folio) || !folio_test_anon(folio) ||
	    page != &folio->page || addr + folio_size(folio) > pf->end ||
	    folio_likely_mapped_shared(folio))
		return false;
	folio_get(folio);
	pf->folio = folio;
	return true;
}

static struct folio *debloat_pte_folio(struct mm_walk *walk, pmd_t *pmd,
				       unsigned long *addr, unsigned long end)
{
	struct pte_folio pf = { .vma = walk->vma, .end = end };
	unsigned long at;

	at = hawkeye_walk_ptes(walk->mm, pmd, *addr, end, debloat_folio_pte, &pf);
	if (at)
		*addr = at;
	return pf.folio;
}

/*
 * Break down the large folios that the PTEs from @addr to @end map: each
 * with at least its share of the bar zero-filled is split to the next
 * lower of @orders, and its pieces are examined in turn, so that the dense
 * ones stay large folios of the highest order that has them whole and only
 * the sparse ones reach order 0, whose zero-filled subpages are freed.
 * Returns the folios examined.
 */
static unsigned int debloat_break_down(struct mm_walk *walk, pmd_t *pmd,
				       unsigned long addr, unsigned long end,
				       unsigned long orders)
{
	struct debloat_walk *dw = walk->private;
	unsigned int examined = 0;
	struct folio *folio;

	while ((folio = debloat_pte_folio(walk, pmd, &addr, end))) {
		unsigned int order = folio_order(folio);
		unsigned int bar = hawkeye_piece_bar(dw->dom->bar, order);
		unsigned long size = PAGE_SIZE << order;
		int to;

		examined++;
		to = debloat_examine(walk, pmd, folio, addr, bar, orders);
		folio_put(folio);
		/* Split to a large order: its pieces are examined next. */
		if (to <= 0)
			addr += size;
		cond_resched();
	}
	return examined;
}

/*
 * Scanning: examine THPs, split those with enough zero-filled subpages;
 * with debloat/mthp on, also the mTHPs that PTE tables map.
 */
static int debloat_scan_pmd(pmd_t *pmd, unsigned long addr,
			    unsigned long end, struct mm_walk *walk)
{
	unsigned long orders = debloat_split_orders(walk->vma);
	struct debloat_walk *dw = walk->private;
	struct folio *folio;
	spinlock_t *ptl;
	int to = -1;

	/*
	 * Every PMD walked counts, a THP or not: a batch ends after
	 * DEBLOAT_PMD_BATCH, or sooner for a writer waiting on mmap_lock.
	 */
	if (dw->pmds++ && (dw->pmds > DEBLOAT_PMD_BATCH ||
			   mmap_lock_is_contended(walk->mm))) {
		dw->next = addr;
		return 1;
	}
	dw->bytes = 0;
	dw->split = false;
	ptl = hawkeye_thp_lock(pmd, walk->vma, hawkeye_debloat_pmd_folio, &folio);
	if (ptl) {
		folio_get(folio);
		spin_unlock(ptl);
		addr &= HPAGE_PMD_MASK;
		end = addr + HPAGE_PMD_SIZE;
		to = debloat_examine(walk, pmd, folio, addr, dw->dom->bar,
				     orders);
		folio_put(folio);
		hawkeye_stat_inc(HAWKEYE_STAT_DEBLOAT_THP_SCANNED);
		/* Split to mTHPs: their turn, the caller's reference dropped. */
		if (to > 0)
			debloat_break_down(walk, pmd, addr, end, orders);
	} else if (orders == BIT(0) || pmd_trans_huge(pmdp_get_lockless(pmd)) ||
		   !debloat_break_down(walk, pmd, addr, end, orders)) {
		/* No THP, and no mTHP examined. */
		return 0;
	}
	hawkeye_stat_add(HAWKEYE_STAT_DEBLOAT_BYTES_READ, dw->bytes);

	dw->next = end;
	/* Batch done: the caller drops mmap_lock and keeps to the rate. */
	if (!--dw->budget)
		return 1;
	/* No more split than the goal needs: low_pct. */
	return dw->split && !hawkeye_debloat_goes_on(dw->dom);
}

static int debloat_test_walk(unsigned long start, unsigned long end,
			     struct mm_walk *walk)
{
	return hawkeye_debloat_vma_suitable(walk->vma) ? 0 : 1;
}

static const struct mm_walk_ops debloat_scan_ops = {
	.test_walk = debloat_test_walk,
	.pmd_entry = debloat_scan_pmd,
	.walk_lock = PGWALK_RDLOCK,
};

/* Is @folio still an anonymous large folio on the LRU that starts at @page? */
static bool debloat_is_piece(struct folio *folio, struct page *page)
{
	return folio_test_lru(folio) && folio_test_anon(folio) &&
	       folio_test_large(folio) && &folio->page == page;
}

/*
 * Split the piece of a split THP that starts at @page on to base pages if
 * at least its share of @bar of its subpages are zero-filled (those then
 * map the zero page and are freed). @locked: the caller holds the piece
 * referenced and locked (the THP's first piece).
 */
static void debloat_split_piece(struct page *page, unsigned int bar,
				bool locked)
{
	struct folio *folio = page_folio(page);
	unsigned long bytes = 0;

	if (!locked) {
		if (!folio_try_get(folio))
			return;
		/*
		 * Freed and reused since the split? As compaction does: what
		 * it is before its lock is taken, and again under it.
		 */
		if (page_folio(page) != folio || !debloat_is_piece(folio, page) ||
		    !folio_trylock(folio)) {
			folio_put(folio);
			return;
		}
	}
	if (debloat_is_piece(folio, page) &&
	    !folio_contain_hwpoisoned_page(folio) &&
	    debloat_worth_splitting(folio, hawkeye_piece_bar(bar,
							     folio_order(folio)),
				    &bytes))
		split_folio(folio);
	hawkeye_stat_add(HAWKEYE_STAT_DEBLOAT_BYTES_READ, bytes);
	if (!locked) {
		folio_unlock(folio);
		folio_put(folio);
	}
}

/**
 * hawkeye_debloat_walk - examine a batch of a process's THPs (and mTHPs)
 * @dw: the walk: its domain, its batch, and where it starts (@dw->next)
 * @mm: the process, held by the caller
 *
 * Splits those with at least the domain's bar of zero-filled subpages,
 * under mmap_lock held for reading for the batch.
 *
 * Return: > 0 if the walk stopped before the end of the address space
 * (@dw->next is where the next batch starts), 0 at its end.
 */
int hawkeye_debloat_walk(struct debloat_walk *dw, struct mm_struct *mm)
{
	int ret;

	mmap_read_lock(mm);
	ret = walk_page_range(mm, dw->next, ULONG_MAX, &debloat_scan_ops, dw);
	mmap_read_unlock(mm);
	return ret;
}

/**
 * hawkeye_debloat_split_pieces - split a THP to mTHPs, the sparse ones on
 * @folio: an anonymous THP, referenced and locked
 * @order: the mTHP order to split it to
 * @bar: the zero-filled subpages that make a THP worth splitting; a piece
 *	is split on to base pages with its share of it
 *
 * Return: 0 if @folio was split, as split_folio().
 */
int hawkeye_debloat_split_pieces(struct folio *folio, unsigned int order,
				 unsigned int bar)
{
	struct page *head = &folio->page;
	unsigned int i, nr = 1U << order;
	int err;

	err = split_huge_page_to_list_to_order(head, NULL, order);
	if (err)
		return err;
	/* The first piece is @folio, still locked; the others are not. */
	for (i = 0; i < HPAGE_PMD_NR; i += nr) {
		debloat_split_piece(nth_page(head, i), bar, !i);
		cond_resched();
	}
	return 0;
}

#ifdef CONFIG_HAWKEYE_SPLIT_KUNIT_TEST
#include "tests/split-kunit.h"
#endif
