// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye's page table primitives, as DAMON's ops-common.c: the accessed
 * bits of a 2 MB region's base pages and of a process's THPs (secondary
 * MMUs' included), and the walks over the 2 MB regions of a process that
 * promotion and recovery sample.
 */
#include <linux/mm.h>
#include <linux/huge_mm.h>
#include <linux/mm_inline.h>
#include <linux/mmu_notifier.h>
#include <linux/pagewalk.h>
#include <linux/sched/mm.h>
#include <asm/tlbflush.h>

#include "../internal.h"
#include "hawkeye.h"

/**
 * hawkeye_walk_ptes - call a function for each present PTE of a range
 * @mm: the address space
 * @pmd: the PMD that maps the page table
 * @addr: the first address
 * @end: the end of the range, inside the same page table
 * @fn: called under the PTE lock with the PTE, its value and its address;
 *	true stops the walk there
 * @arg: for @fn
 *
 * Return: the address the walk stopped at (@end if @fn never stopped it),
 * or 0 if there is no page table.
 */
unsigned long hawkeye_walk_ptes(struct mm_struct *mm, pmd_t *pmd,
				unsigned long addr, unsigned long end,
				hawkeye_pte_fn fn, void *arg)
{
	pte_t *start, *pte;
	spinlock_t *ptl;

	start = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!start)
		return 0;
	for (pte = start; addr < end; pte++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);

		if (pte_present(ptent) && fn(pte, ptent, addr, arg))
			break;
	}
	pte_unmap_unlock(start, ptl);
	return addr;
}

struct thp_count_walk {
	bool (*vma_ok)(struct vm_area_struct *vma);
	struct folio *(*thp)(pmd_t pmdval);
	struct hawkeye_thp_count *count;
	unsigned int walked;		/* PMDs in this mmap_lock hold */
	unsigned long resume;		/* where the next hold starts; 0: done */
};

static int thp_count_test_walk(unsigned long start, unsigned long end,
			       struct mm_walk *walk)
{
	struct thp_count_walk *tw = walk->private;

	return tw->vma_ok(walk->vma) ? 0 : 1;
}

/**
 * hawkeye_thp_lock() - lock a PMD that maps a THP of interest
 * @pmd: the PMD, in a page walk's pmd_entry
 * @vma: its VMA
 * @thp: the THP that @pmd maps if it is of interest, else NULL
 * @folio: set to that THP
 *
 * Reschedules first: a walk over a large process calls it many times.
 *
 * Return: the PMD's lock, held, or NULL (unlocked) if @pmd maps no THP of
 * interest.
 */
spinlock_t *hawkeye_thp_lock(pmd_t *pmd, struct vm_area_struct *vma,
			     struct folio *(*thp)(pmd_t pmdval),
			     struct folio **folio)
{
	spinlock_t *ptl;

	cond_resched();
	ptl = pmd_trans_huge_lock(pmd, vma);
	if (!ptl)
		return NULL;
	*folio = thp(*pmd);
	if (!*folio) {
		spin_unlock(ptl);
		return NULL;
	}
	return ptl;
}

static int thp_count_pmd(pmd_t *pmd, unsigned long addr, unsigned long end,
			 struct mm_walk *walk)
{
	struct thp_count_walk *tw = walk->private;
	struct folio *folio;
	spinlock_t *ptl;

	/* A full hold: the next one starts here. */
	if (tw->walked++ == HAWKEYE_THP_COUNT_BATCH) {
		tw->resume = addr;
		return 1;
	}
	ptl = hawkeye_thp_lock(pmd, walk->vma, tw->thp, &folio);
	tw->count->pmds++;
	if (ptl) {
		tw->count->nr++;
		if (pmdp_clear_young_notify(walk->vma, addr & HPAGE_PMD_MASK,
					    pmd)) {
			tw->count->young++;
			hawkeye_keep_access(folio);
		}
		spin_unlock(ptl);
	}
	return 0;
}

static const struct mm_walk_ops thp_count_ops = {
	.test_walk = thp_count_test_walk,
	.pmd_entry = thp_count_pmd,
	.walk_lock = PGWALK_RDLOCK,
};

/**
 * hawkeye_count_thps() - count a process's THPs, and those accessed
 * @mm: held by the caller
 * @vma_ok: the VMAs to look at
 * @thp: the folio a PMD maps if it counts, else NULL; under the PMD lock
 * @count: the THPs and those whose accessed bit was set
 *
 * Clears the accessed bits it tests (secondary MMUs' included) and
 * flushes the TLB, so that the next access sets them again: a call opens
 * a sample window that the next call closes. The accesses are kept for
 * reclaim and idle page tracking. mmap_lock is held for at most
 * HAWKEYE_THP_COUNT_BATCH PMDs at a time; a kthread asked to stop stops
 * between holds. The address space may change between holds: the count
 * is an estimate.
 */
void hawkeye_count_thps(struct mm_struct *mm,
			bool (*vma_ok)(struct vm_area_struct *vma),
			struct folio *(*thp)(pmd_t pmdval),
			struct hawkeye_thp_count *count)
{
	struct thp_count_walk tw = { vma_ok, thp, count };
	unsigned long start = 0;

	do {
		tw.walked = 0;
		tw.resume = 0;
		mmap_read_lock(mm);
		walk_page_range(mm, start, ULONG_MAX, &thp_count_ops, &tw);
		mmap_read_unlock(mm);
		count->holds++;
		start = tw.resume;
	} while (start &&
		 !((current->flags & PF_KTHREAD) && kthread_should_stop()));
	if (count->nr)
		flush_tlb_mm(mm);
}

/*
 * Promotion's primitives: the accessed bits of a region's base pages, the
 * regions of a process, the page size a region's use asks for.
 */

/**
 * hawkeye_vma_promotable() - may khugepaged collapse this memory?
 * @vma: an anonymous or other VMA, under mmap_lock
 *
 * Return: true for anonymous memory that may have PMD-sized THPs.
 */
static bool hawkeye_vma_promotable(struct vm_area_struct *vma)
{
	return vma_is_anonymous(vma) &&
	       thp_vma_allowable_order(vma, vma->vm_flags, TVA_ENFORCE_SYSFS,
				       PMD_ORDER);
}

/* Test and clear the accessed bits of secondary MMUs over [@start, @end). */
static bool secondary_young(struct mm_struct *mm, unsigned long start,
			    unsigned long end)
{
#ifdef CONFIG_MMU_NOTIFIER
	return mmu_notifier_clear_young(mm, start, end);
#else
	return false;	/* no stub for this one in mmu_notifier.h */
#endif
}

/* A page table's own accessed bit tells whether its PTEs need reading. */
static bool table_young_ok(struct mm_struct *mm)
{
	return arch_has_hw_nonleaf_pmd_young() && !lru_gen_enabled() &&
	       !mm_has_notifiers(mm);
}

/* What hawkeye_young_ptes() reads of a region, PTE by PTE. */
struct young_walk {
	struct vm_area_struct *vma;
	unsigned long start;		/* the region */
	unsigned long *young;		/* closing: the pages accessed */
	bool clear;			/* test and clear the accessed bits */
	bool ask_pages;			/* ... and each page's secondary MMUs' */
	bool secondary;			/* secondary MMUs saw an access */
	bool range_young;		/* ... in the region, asked at once */
	int nr;				/* pages accessed */
	int mapped;			/* PTEs present */
};

static bool young_pte(pte_t *pte, pte_t ptent, unsigned long addr, void *arg)
{
	struct young_walk *w = arg;
	unsigned int i = (addr - w->start) >> PAGE_SHIFT;
	bool accessed;

	w->mapped++;
	if (!w->clear) {
		if (pte_young(ptent)) {
			w->nr++;
			__set_bit(i, w->young);
		}
		return false;
	}
	accessed = ptep_test_and_clear_young(w->vma, addr, pte);
	if (w->ask_pages && secondary_young(w->vma->vm_mm, addr, addr + PAGE_SIZE))
		w->secondary = accessed = true;
	if (accessed) {
		w->nr++;
		if (w->young)
			__set_bit(i, w->young);
	}
	/*
	 * vm_normal_folio() less its checks for PFN maps, which are not
	 * anonymous: it was half a pass over hot memory. A special PTE here
	 * maps the zero page, which has no LRU.
	 */
	if ((accessed || w->range_young) && !pte_special(ptent))
		hawkeye_keep_access(pfn_folio(pte_pfn(ptent)));
	return false;
}

/**
 * hawkeye_young_ptes() - the accessed bits of a 2 MB region
 * @vma: a VMA of hawkeye_walk_regions() (anonymous), under mmap_lock
 * @addr: the region's start
 * @young: NULL when a sample window opens; else the window closes, see below
 * @skipped: counts the calls that read no PTE (see below)
 * @present: if not NULL and the PTEs were read, gets how many are present
 * @per_page: if not NULL, whether to ask secondary MMUs page by page; gets
 *	whether they saw an access in the region
 *
 * A window opens (@young NULL): the accessed bits of the base pages mapped
 * there are tested and cleared, secondary MMUs' included, and the access
 * is kept for reclaim and idle page tracking; the caller flushes the TLB
 * after. Secondary MMUs (KVM) are asked once for the whole range, which
 * clears their bits there but tells no page: on a yes every page present
 * keeps the access for reclaim (none is counted), and the caller asks
 * page by page (*@per_page) when the next windows close, 512 calls into
 * KVM each taking its MMU lock, while they keep seeing accesses in the
 * region. An access they saw in a window is so counted for the page it
 * was to. Openings always ask for the range: they count nothing.
 *
 * A window closes: the bits are only read. They stay set for reclaim and
 * idle page tracking to find, and the next window's opening clears them,
 * so a hot page costs one locked write per pass, not two. Where secondary
 * MMUs are registered they are tested and cleared as at an opening: only
 * a clear asks them for a range at once.
 *
 * When a window opens the page table's own accessed bit is cleared too.
 * Where the CPU sets that bit when it walks the table (x86), a region
 * whose table is still old was not accessed since: its PTEs are not read
 * at all (counted in @skipped), which makes a pass over cold memory cost a
 * PMD per 2 MB. Not with secondary MMUs, whose accesses the CPU's tables
 * do not show, nor with MGLRU, which clears these bits and leaves the
 * PTEs'. A PTE made young by the kernel alone (get_user_pages() filling a
 * table that exists) can so stay set for a window longer than it would.
 *
 * Return: how many were set, or -1 if the range is not mapped by a page
 * table (not populated, or huge). @young, if not NULL, gets a bit set for
 * each of the HPAGE_PMD_NR pages that was (and no other).
 */
int hawkeye_young_ptes(struct vm_area_struct *vma, unsigned long addr,
		       unsigned long *young, unsigned long *skipped,
		       unsigned int *present, bool *per_page)
{
	struct mm_struct *mm = vma->vm_mm;
	pmd_t *pmd = mm_find_pmd(mm, addr);
	bool notifiers = mm_has_notifiers(mm);
	struct young_walk w = {
		.vma = vma,
		.start = addr,
		.young = young,
		.clear = !young || notifiers,
		.ask_pages = notifiers && young && per_page && *per_page,
	};
	bool table_young;
	pmd_t pmdval;

	if (!pmd)
		return -1;
	/* No page table (hawkeye_walk_ptes() finds out again, under its lock). */
	pmdval = pmdp_get_lockless(pmd);
	if (!pmd_present(pmdval) || pmd_leaf(pmdval))
		return -1;
	if (young)
		bitmap_zero(young, HPAGE_PMD_NR);
	table_young = table_young_ok(mm);
	if (table_young && !pmd_young(pmdval)) {
		WRITE_ONCE(*skipped, *skipped + 1);	/* one writer */
		return 0;
	}
	/*
	 * Before the PTEs: an access while they are cleared sets it again.
	 * Atomic on the PMD, and the secondary MMUs take their own locks.
	 */
	if (table_young && !young)
		pmdp_test_and_clear_young(vma, addr, pmd);
	if (notifiers && !w.ask_pages)
		w.secondary = w.range_young =
			secondary_young(mm, addr, addr + HPAGE_PMD_SIZE);
	if (!hawkeye_walk_ptes(mm, pmd, addr, addr + HPAGE_PMD_SIZE, young_pte, &w))
		return -1;
	if (present)
		*present = w.mapped;
	/* A closing decides how the next one asks; an opening can only start it. */
	if (per_page)
		*per_page = young ? w.secondary : *per_page || w.secondary;
	return w.nr;
}

/**
 * hawkeye_walk_regions() - the 2 MB regions that promotion may collapse
 * @mm: held by the caller, mmap_lock held for reading
 * @start: the first address to look at
 * @end: the end of the range
 * @fn: called for each region of a promotable VMA in [@start, @end), in
 *	address order; returning false stops the walk at that region
 * @arg: passed to @fn
 *
 * Return: the address of the region where @fn stopped the walk, or @end.
 */
unsigned long hawkeye_walk_regions(struct mm_struct *mm, unsigned long start,
				   unsigned long end, hawkeye_region_fn fn,
				   void *arg)
{
	VMA_ITERATOR(vmi, mm, start);
	struct vm_area_struct *vma;

	for_each_vma(vmi, vma) {
		unsigned long addr = round_up(max(vma->vm_start, start),
					      HPAGE_PMD_SIZE);
		unsigned long vend = round_down(vma->vm_end, HPAGE_PMD_SIZE);

		if (vma->vm_start >= end)
			break;
		if (!hawkeye_vma_promotable(vma))
			continue;
		for (; addr < vend && addr < end; addr += HPAGE_PMD_SIZE)
			if (!fn(vma, addr, arg))
				return addr;
	}
	return end;
}

/* A hawkeye_walk_mm() in progress. */
struct mm_chunk_walk {
	hawkeye_mm_region_fn fn;
	void *arg;
	unsigned int chunk;
	unsigned int done;		/* regions in this chunk */
};

static bool mm_chunk_region(struct vm_area_struct *vma, unsigned long addr,
			    void *arg)
{
	struct mm_chunk_walk *w = arg;

	if (w->done && (w->done == w->chunk ||
			mmap_lock_is_contended(vma->vm_mm)))
		return false;
	w->fn(vma, addr, w->arg);
	w->done++;
	return true;
}

/**
 * hawkeye_walk_mm() - every promotable 2 MB region of a process, in chunks
 * @mm: the process's mm, mmgrab()bed by the caller
 * @chunk: the most regions per mmap_lock hold (fewer while a writer waits)
 * @fn: called for each region in address order, mmap_lock held for reading
 * @arg: passed to @fn
 *
 * For a kernel thread: the address space is held for one chunk at a time,
 * and the walk stops when the thread is told to stop.
 *
 * Return: the number of regions walked, or -ESRCH if the process went
 * away or the thread was told to stop before the walk ended.
 */
long hawkeye_walk_mm(struct mm_struct *mm, unsigned int chunk,
		     hawkeye_mm_region_fn fn, void *arg)
{
	struct mm_chunk_walk w = { .fn = fn, .arg = arg, .chunk = chunk };
	unsigned long next = 0;
	long seen = 0;

	do {
		if (kthread_should_stop() || !hawkeye_mmget_alive(mm))
			return -ESRCH;
		w.done = 0;
		mmap_read_lock(mm);
		next = hawkeye_walk_regions(mm, next, ULONG_MAX,
					    mm_chunk_region, &w);
		mmap_read_unlock(mm);
		mmput(mm);
		seen += w.done;
		cond_resched();
	} while (next != ULONG_MAX);
	return seen;
}

/**
 * hawkeye_best_order() - the page size a 2 MB region's use asks for
 * @used: a bit for each of its HPAGE_PMD_NR pages that is in use (accessed
 *	  in a sample window)
 * @orders: the orders allowed, order 0 among them
 * @bar: the zero-filled subpages that make a THP worth splitting
 *
 * Recovery's judgement, with pages not used in place of zero-filled ones:
 * the highest of @orders at which the pieces that hold used pages would,
 * as folios of that order, on average stay below their share of the split
 * threshold in unused pages (hawkeye_piece_bar()). 2 MB where coverage is
 * dense, a smaller mTHP size where used pages cluster in dense pieces.
 *
 * Return: that order; 0 when no page is used or no large order fits.
 */
unsigned int hawkeye_best_order(const unsigned long *used, unsigned long orders,
				unsigned int bar)
{
	orders &= GENMASK(HPAGE_PMD_ORDER, 1);
	while (orders) {
		unsigned int order = __fls(orders), nr = 1U << order;
		unsigned int i, w, pieces = 0, unused = 0;

		orders &= ~BIT(order);
		/* A word at a time: this runs for every region sampled. */
		for (i = 0; i < HPAGE_PMD_NR; i += nr) {
			w = nr > BITS_PER_LONG ?
			    bitmap_weight(used + i / BITS_PER_LONG, nr) :
			    hweight_long(bitmap_read(used, i, nr));
			if (w) {
				pieces++;
				unused += nr - w;
			}
		}
		if (pieces && unused < pieces * hawkeye_piece_bar(bar, order))
			return order;
	}
	return 0;
}
