// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye bloat recovery.
 *
 * A THP fault maps 2 MB at once, and much of it may never be written: the
 * memory bloat of huge pages. While more than high_pct of memory is in use,
 * a kernel thread, hawkeye_debloatd, looks for anonymous PMD-mapped THPs of
 * which at least `threshold` 4 KB subpages are zero-filled and splits them,
 * until less than low_pct of memory is in use. The split itself maps the
 * zero-filled subpages to the shared zero page and frees them
 * (RMP_USE_SHARED_ZEROPAGE, as for the underused THPs that the deferred
 * split shrinker splits): it checks each subpage again after unmapping the
 * folio, so what this file counts is only a hint, and a subpage written
 * meanwhile keeps its contents.
 *
 * The bar adapts: each episode of recovery (from above high_pct to below
 * low_pct) starts at `threshold`, so the most bloated THPs go first, and
 * every full pass over all processes that leaves memory still tight halves
 * it, down to threshold / 8: memory allocators leave THPs with a fraction
 * of a huge page unused (a 2 MB object in a 2.5 MB size class).
 *
 * Processes are taken lowest estimated MMU overhead first. With the
 * hawkeye-g promotion policy, a process that promotion has sampled is
 * estimated by its access coverage (hawkeye_promote_overhead()); otherwise the
 * estimate is the share of a process's huge pages accessed (PMD young)
 * during a sampling window before each round.
 *
 * Inside memory cgroups the same runs for each cgroup with a limit (the
 * tighter of memory.high and memory.max) against its own usage, on the
 * THPs charged to it only: the machine may have plenty free while a
 * container runs into its limit. A cgroup's use is counted net of its
 * reclaimable page cache, as si_mem_available() counts the machine's:
 * cache costs reclaim nothing, splitting a THP costs its TLB reach. There,
 * recovery first splits the cgroup's partially mapped THPs, whose unmapped
 * subpages are charged until reclaim's THP shrinker would split them. PSI
 * adapts the start: under memory pressure (psi_pct) recovery starts at
 * low_pct already, for the machine and for a cgroup. khugepaged does not
 * collapse what would take a cgroup past low_pct again
 * (__hawkeye_max_ptes_none()).
 *
 * Where the thread does not keep up, reclaim does the rest: the deferred
 * split shrinker, memcg-aware and run by global and cgroup reclaim alike,
 * splits the THPs that have at least recovery's bar of zero-filled
 * subpages (__hawkeye_thp_max_ptes_none()), where recovery is wanted, and
 * maps those to the zero page. Nothing of recovery runs in the charge path.
 *
 * With debloat/mthp on, recovery knows the mTHP sizes enabled for anonymous
 * memory: it splits a THP to the largest of them, then splits on only the
 * pieces that have their share of the bar zero-filled, size by size, so
 * that dense 64 KB (say) pieces keep their TLB reach and only sparse ones
 * become base pages and zero pages. It examines the mTHPs that PTE tables
 * map the same way.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/freezer.h>
#include <linux/hawkeye.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/oom.h>
#include <linux/page_idle.h>
#include <linux/pagewalk.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>
#include <asm/tlbflush.h>
#include <trace/events/hawkeye.h>

#include "../internal.h"
#include "hawkeye.h"

#define DEBLOAT_POLL		(HZ / 4)	/* idle: look at memory use this often */
#define DEBLOAT_SAMPLE		HZ	/* accesses are sampled this long per round */
#define DEBLOAT_MEMCG_SAMPLE	(HZ / 10)	/* ... in a cgroup nearing its limit */
#define DEBLOAT_AHEAD		HZ	/* a cgroup's use is foreseen this far */
#define DEBLOAT_BATCH		16	/* most THPs examined per mmap_lock hold */
#define DEBLOAT_PMD_BATCH	512	/* most PMDs walked per mmap_lock hold */
#define DEBLOAT_DEFERRED	256	/* most queued THPs looked at per cgroup */

DEFINE_STATIC_KEY_FALSE(hawkeye_debloat_key);

struct hawkeye_debloat_params hawkeye_debloat = {
	.high_pct = 85,			/* the paper's watermarks */
	.low_pct = 70,
	.threshold = HPAGE_PMD_NR / 2,	/* at least 1 MB back per split */
	.rate = 1000,
	.psi_pct = 10,
};

static DEFINE_MUTEX(debloat_mutex);
static struct task_struct *debloat_thread;
/* The zero subpages that make a THP worth splitting now: <= threshold. */
static unsigned int debloat_bar = HPAGE_PMD_NR / 2;
/* An episode runs for the machine's watermarks. */
static bool debloat_active;

/* A process in a round: its mm and its access estimate. */
struct debloat_mm {
	struct mm_struct *mm;
	unsigned int nr_thp;	/* THPs that recovery may split */
	unsigned int nr_young;	/* ... of which were accessed since the last sample */
	bool sampled;		/* promotion's estimate is known: */
	unsigned long overhead;	/* ... hot 4 KB pages not in huge pages */
	int measured;		/* hawkeye-pmu's measurement, -1: none */
};

/*
 * Where recovery works: the whole machine, or a memory cgroup (and its
 * descendants) nearing its limit.
 */
struct debloat_domain {
	struct mem_cgroup *memcg;	/* NULL: the machine */
	unsigned int bar;		/* zero subpages worth a split */
	bool split;			/* the round split a THP */
};

/* The state of a scan of a process's THPs (and mTHPs). */
struct debloat_walk {
	struct debloat_domain *dom;
	unsigned int budget;	/* THPs left to examine in this batch */
	unsigned int pmds;	/* PMDs walked in this batch */
	unsigned long next;	/* where the next batch starts */
	/* In the 2 MB range examined: */
	unsigned long bytes;	/* bytes read */
	bool split;		/* a folio was split */
};

/* Memory in use: all of RAM but what is available without swapping. */
static unsigned long debloat_in_use(void)
{
	unsigned long total = totalram_pages();
	unsigned long avail = max(si_mem_available(), 0L);

	return total > avail ? total - avail : 0;
}

/*
 * Watermark hysteresis: recovery starts once more than @high percent of
 * @total pages are in use, or @low percent under memory pressure, and
 * goes on (@active) until less than @low are.
 */
static bool debloat_wanted(unsigned long in_use, unsigned long total,
			   bool active, bool pressure, unsigned int high,
			   unsigned int low)
{
	if (active || pressure)
		return (u64)in_use * 100 >= (u64)low * total;
	return (u64)in_use * 100 > (u64)high * total;
}

/* Is PSI's memory pressure of @memcg (NULL: the machine) high enough? */
static bool debloat_pressure(struct mem_cgroup *memcg)
{
	unsigned int pct = READ_ONCE(hawkeye_debloat.psi_pct);

	return pct && hawkeye_memcg_psi(memcg) >= pct;
}

/*
 * @memcg's use and limit (NULL: the machine's); false if it has none. A
 * cgroup's use is net of its reclaimable page cache (hawkeye_memcg_use()).
 */
static bool debloat_usage(struct mem_cgroup *memcg, unsigned long *in_use,
			  unsigned long *total)
{
#ifdef CONFIG_MEMCG
	if (memcg) {
		*total = hawkeye_memcg_limit(memcg);
		if (*total >= PAGE_COUNTER_MAX)
			return false;
		*in_use = hawkeye_memcg_use(memcg);
		return true;
	}
#endif
	*total = totalram_pages();
	*in_use = debloat_in_use();
	return true;
}

#ifdef CONFIG_MEMCG
/*
 * A cgroup's use @in_use at @now, DEBLOAT_AHEAD from then if its THPs
 * (@thp pages) go on growing at the rate they grew since the thread last
 * looked (@hm), DEBLOAT_POLL to DEBLOAT_AHEAD before (sooner tells a
 * burst, not a rate). Huge pages are what bloat comes with, and a round
 * takes time: a container that faults THPs fast would otherwise be at its
 * limit before recovery started at high_pct had caught up. Records this
 * look. The thread's alone.
 */
static unsigned long debloat_use_ahead(struct hawkeye_memcg *hm,
				       unsigned long in_use, unsigned long thp,
				       unsigned long now)
{
	unsigned long since = now - hm->thp_at, ahead = in_use;

	if (since < DEBLOAT_POLL)
		return in_use;
	if (thp > hm->thp && since < DEBLOAT_AHEAD)
		ahead += (thp - hm->thp) * DEBLOAT_AHEAD / since;
	hm->thp = thp;
	hm->thp_at = now;
	return ahead;
}
#endif

/*
 * Should recovery run for @memcg's limit, or the machine's (NULL)? An
 * episode in a cgroup at low_pct or more also starts where its use would
 * exceed high_pct within DEBLOAT_AHEAD as its THPs grow
 * (debloat_use_ahead()).
 */
static bool debloat_wanted_in(struct mem_cgroup *memcg, bool active)
{
	unsigned int high = READ_ONCE(hawkeye_debloat.high_pct);
	unsigned int low = READ_ONCE(hawkeye_debloat.low_pct);
	unsigned long in_use, total;
	bool pressure;

	if (!debloat_usage(memcg, &in_use, &total))
		return false;
	if (debloat_wanted(in_use, total, active, false, high, low))
		return true;
#ifdef CONFIG_MEMCG
	if (memcg && !active &&
	    debloat_wanted(in_use, total, false, true, high, low) &&
	    debloat_wanted(debloat_use_ahead(&memcg->hawkeye, in_use,
					     memcg_page_state(memcg, NR_ANON_THPS),
					     jiffies),
			   total, false, false, high, low)) {
		hawkeye_stat_inc(HAWKEYE_STAT_DEBLOAT_MEMCG_AHEAD);
		return true;
	}
#endif
	pressure = !active && debloat_pressure(memcg);
	if (pressure && debloat_wanted(in_use, total, false, true, high, low)) {
		hawkeye_stat_inc(HAWKEYE_STAT_DEBLOAT_PSI_START);
		return true;
	}
	return false;
}

static bool debloat_wanted_now(bool active)
{
	return debloat_wanted_in(NULL, active);
}

/* Does recovery in @dom go on? */
static bool debloat_goes_on(struct debloat_domain *dom)
{
	return debloat_wanted_in(dom->memcg, true);
}

/*
 * Only private anonymous memory is recovered. Left alone: mlocked memory
 * (the split would not map the zero page there), shared and file-backed
 * memory, KSM areas (KSM merges pages its own way) and userfaultfd-
 * registered areas (a zero page mapped by the kernel would hide a fault
 * from the monitor).
 */
static bool debloat_vma_suitable(struct vm_area_struct *vma)
{
	if (!vma_is_anonymous(vma) || userfaultfd_armed(vma))
		return false;
	return !(vma->vm_flags & (VM_LOCKED | VM_SHARED | VM_MERGEABLE));
}

/*
 * The anonymous THP that @pmdval maps, if it is one recovery may split:
 * mapped by this process only, so that no other process loses its huge
 * mapping. Called under the PMD lock.
 */
static struct folio *debloat_pmd_folio(pmd_t pmdval)
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
 * Measure the share of @dm's THPs accessed since the last call and start
 * a new window: young bits cleared, and the TLB flushed so that the next
 * access sets them again.
 */
static void debloat_sample_mm(struct debloat_mm *dm)
{
	struct hawkeye_thp_count count = {};

	if (!mmget_not_zero(dm->mm)) {
		dm->nr_thp = 0;
		return;
	}
	hawkeye_count_thps(dm->mm, debloat_vma_suitable, debloat_pmd_folio,
			   &count);
	dm->nr_thp = count.nr;
	dm->nr_young = count.young;
	/* What promotion knows of it, while it is held. */
	dm->sampled = hawkeye_promote_overhead(dm->mm, &dm->overhead);
	dm->measured = hawkeye_promote_measured(dm->mm);
	mmput(dm->mm);
}

/*
 * Is the 4 KB page at @addr zero-filled? Reading stops at the first
 * non-zero byte; *@bytes grows by the number of bytes read.
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
static unsigned int debloat_zero_ptes(struct mm_struct *mm, pmd_t *pmd,
				      unsigned long addr, unsigned long end)
{
	unsigned int nr = 0;
	spinlock_t *ptl;
	pte_t *start, *pte;

	pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
	start = pte;
	if (!pte)
		return 0;
	for (; addr < end; pte++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);

		if (pte_present(ptent) && is_zero_pfn(pte_pfn(ptent)))
			nr++;
	}
	pte_unmap_unlock(start, ptl);
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

/* A folio of @order's share of @bar, the zero subpages that split a THP. */
static unsigned int debloat_piece_bar(unsigned int bar, unsigned int order)
{
	return DIV_ROUND_UP(bar << order, HPAGE_PMD_NR);
}

/**
 * hawkeye_best_order() - the page size a 2 MB region's use asks for
 * @used: a bit for each of its HPAGE_PMD_NR pages that is in use (accessed
 *	  in a sample window)
 * @orders: the orders allowed, order 0 among them
 *
 * Recovery's judgement, with pages not used in place of zero-filled ones:
 * the highest of @orders at which the pieces that hold used pages would,
 * as folios of that order, on average stay below their share of the split
 * threshold in unused pages (debloat_piece_bar()). 2 MB where coverage is
 * dense, a smaller mTHP size where used pages cluster in dense pieces.
 *
 * Return: that order; 0 when no page is used or no large order fits.
 */
unsigned int hawkeye_best_order(const unsigned long *used, unsigned long orders)
{
	unsigned int threshold = READ_ONCE(hawkeye_debloat.threshold);

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
		if (pieces && unused < pieces * debloat_piece_bar(threshold, order))
			return order;
	}
	return 0;
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
static struct folio *debloat_pte_folio(struct mm_walk *walk, pmd_t *pmd,
				       unsigned long *addr, unsigned long end)
{
	struct folio *folio = NULL;
	spinlock_t *ptl;
	pte_t *start, *pte;

	pte = pte_offset_map_lock(walk->mm, pmd, *addr, &ptl);
	start = pte;
	if (!pte)
		return NULL;
	for (; *addr < end; pte++, *addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);
		struct page *page;
		struct folio *f;

		if (!pte_present(ptent))
			continue;
		page = vm_normal_page(walk->vma, *addr, ptent);
		if (!page)
			continue;
		f = page_folio(page);
		if (!folio_test_large(f) || !folio_test_anon(f) ||
		    page != &f->page || *addr + folio_size(f) > end ||
		    folio_likely_mapped_shared(f))
			continue;
		folio = f;
		folio_get(folio);
		break;
	}
	pte_unmap_unlock(start, ptl);
	return folio;
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
		unsigned int bar = debloat_piece_bar(dw->dom->bar, order);
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
	ptl = hawkeye_thp_lock(pmd, walk->vma, debloat_pmd_folio, &folio);
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
	return dw->split && !debloat_goes_on(dw->dom);
}

static int debloat_test_walk(unsigned long start, unsigned long end,
			     struct mm_walk *walk)
{
	return debloat_vma_suitable(walk->vma) ? 0 : 1;
}

static const struct mm_walk_ops debloat_scan_ops = {
	.test_walk = debloat_test_walk,
	.pmd_entry = debloat_scan_pmd,
	.walk_lock = PGWALK_RDLOCK,
};

/*
 * Examine all THPs of @mm, in batches of at most DEBLOAT_BATCH under
 * mmap_lock, at the configured rate. Returns false once recovery should
 * stop: memory use fell below the low watermark, or the thread is told to.
 */
static bool debloat_scan_mm(struct debloat_domain *dom, struct mm_struct *mm,
			    ktime_t *next)
{
	struct debloat_walk dw = { .dom = dom };
	int ret;

	do {
		unsigned int rate = READ_ONCE(hawkeye_debloat.rate);
		unsigned int batch = DEBLOAT_BATCH;

		if (kthread_should_stop() || !debloat_goes_on(dom))
			return false;
		/* Held for one batch: an exiting process frees its memory. */
		if (!hawkeye_mm_get(mm))
			return true;
		/* About a tenth of a second's worth at a time. */
		if (rate)
			batch = clamp(rate / 10, 1U, batch);
		dw.budget = batch;
		dw.pmds = 0;
		mmap_read_lock(mm);
		ret = walk_page_range(mm, dw.next, ULONG_MAX, &debloat_scan_ops, &dw);
		mmap_read_unlock(mm);
		mmput(mm);
		/* No address space is held here: suspend may freeze us. */
		hawkeye_throttle(next, batch - dw.budget, rate);
	} while (ret > 0);
	return true;
}

/*
 * Lowest MMU overhead first. Under hawkeye-pmu, processes with a measured
 * overhead come first, lowest first. Then those that promotion sampled,
 * lowest access-coverage estimate first; then, and among equals, the
 * lowest share of THPs accessed in the sample window. Ties: more THPs
 * first.
 */
static int debloat_cmp_overhead(const void *a, const void *b)
{
	const struct debloat_mm *x = a, *y = b;
	u64 xs = (u64)x->nr_young * y->nr_thp, ys = (u64)y->nr_young * x->nr_thp;

	if ((x->measured < 0) != (y->measured < 0))
		return x->measured >= 0 ? -1 : 1;
	if (x->measured != y->measured)
		return x->measured < y->measured ? -1 : 1;

	if (x->sampled != y->sampled)
		return x->sampled ? -1 : 1;
	if (x->sampled && x->overhead != y->overhead)
		return x->overhead < y->overhead ? -1 : 1;
	if (xs != ys)
		return xs < ys ? -1 : 1;
	if (x->nr_thp != y->nr_thp)
		return x->nr_thp > y->nr_thp ? -1 : 1;
	return 0;
}

/*
 * Drop the processes that have no THP to recover (their mTHPs are not
 * counted: with debloat/mthp on, none is dropped).
 */
static int debloat_drop_idle(struct debloat_mm *mms, int nr)
{
	bool mthp = READ_ONCE(hawkeye_debloat.mthp);
	int i, n = 0;

	for (i = 0; i < nr; i++) {
		if (mms[i].nr_thp || mthp)
			mms[n++] = mms[i];
		else
			mmdrop(mms[i].mm);
	}
	return n;
}

/*
 * The mm of every user process in @dom (mmgrab()bed: the address space is
 * not held), in the array *@out (kvfree() it). Returns how many.
 */
static int debloat_get_mms(struct debloat_domain *dom, struct debloat_mm **out)
{
	struct mm_struct **mms;
	int i, nr;

	*out = NULL;
	if (dom->memcg)
		nr = hawkeye_memcg_grab_mms(dom->memcg, &mms);
	else
		nr = hawkeye_grab_user_mms(&mms, -1);
	/* No process (a cgroup's may all have exited): the array goes too. */
	if (!nr) {
		kvfree(mms);
		return 0;
	}
	*out = kvcalloc(nr, sizeof(**out), GFP_KERNEL);
	for (i = 0; i < nr; i++) {
		if (*out)
			(*out)[i].mm = mms[i];
		else
			mmdrop(mms[i]);
	}
	kvfree(mms);
	return *out ? nr : 0;
}

/*
 * In a cgroup, first the partially mapped THPs of it and its descendants
 * (part of each unmapped: MADV_DONTNEED, munmap): their unmapped subpages
 * stay charged until the THP is split, which reclaim's THP shrinker would
 * do once the cgroup is at its limit. Split them now, without reclaim,
 * from the deferred split queues (no page table walk), one at a time until
 * recovery's goal is met. The queues' other THPs are left to the walk's
 * order, lowest MMU overhead first. Returns whether recovery goes on.
 */
static bool debloat_split_deferred(struct debloat_domain *dom)
{
#ifdef CONFIG_MEMCG
	struct mem_cgroup *m;

	for (m = mem_cgroup_iter(dom->memcg, NULL, NULL); m;
	     m = mem_cgroup_iter(dom->memcg, m, NULL)) {
		unsigned long split = 0, looked, queued;
		bool more = true;

		if (hawkeye_memcg_debloat_off(m))
			continue;
		/* Each THP once: the ones not split go to the queue's tail. */
		queued = min_t(unsigned long, DEBLOAT_DEFERRED,
			       READ_ONCE(m->deferred_split_queue.split_queue_len));
		for (looked = 0; looked < queued && more; looked++) {
			split += memcg_split_deferred(m, 1);
			more = debloat_goes_on(dom);
			cond_resched();
		}
		if (split) {
			dom->split = true;
			count_vm_events(HAWKEYE_DEBLOAT_DEFERRED_SPLIT, split);
			count_memcg_events(m, HAWKEYE_DEBLOAT_DEFERRED_SPLIT, split);
		}
		if (!more) {
			mem_cgroup_iter_break(dom->memcg, m);
			return false;
		}
	}
#endif
	return true;
}

/*
 * One round in @dom: sample every process's accesses for a window, then
 * examine their THPs, lowest estimated overhead first. A single process
 * has no order to find: its THPs are examined at once, and the window
 * follows a round that split nothing, to keep the pace. Returns whether
 * recovery is still wanted.
 */
static bool debloat_round(struct debloat_domain *dom)
{
	long window = dom->memcg ? DEBLOAT_MEMCG_SAMPLE : DEBLOAT_SAMPLE;
	ktime_t next = ktime_get();
	struct debloat_mm *mms;
	bool more = true;
	int i, nr;

	if (dom->memcg && !debloat_split_deferred(dom))
		return false;
	nr = debloat_get_mms(dom, &mms);
	for (i = 0; i < nr; i++)
		debloat_sample_mm(&mms[i]);
	nr = debloat_drop_idle(mms, nr);
	if (nr > 1) {
		schedule_timeout_interruptible(window);
		try_to_freeze();
		for (i = 0; i < nr; i++)
			debloat_sample_mm(&mms[i]);
		nr = debloat_drop_idle(mms, nr);
		sort(mms, nr, sizeof(*mms), debloat_cmp_overhead, NULL);
	}
	for (i = 0; i < nr && more; i++)
		more = debloat_scan_mm(dom, mms[i].mm, &next);

	for (i = 0; i < nr; i++)
		mmdrop(mms[i].mm);
	kvfree(mms);
	if (nr <= 1 && !dom->split) {
		schedule_timeout_interruptible(window);
		try_to_freeze();
	}
	return more && debloat_goes_on(dom);
}

/* The bar after a full pass that left memory tight: half, >= @threshold / 8. */
static unsigned int debloat_lower_bar(unsigned int bar, unsigned int threshold)
{
	return max3(bar / 2, threshold / 8, 1U);
}

/*
 * One round of an episode of recovery in @dom, started (*@active) if it is
 * wanted now; *@bar is the episode's. Returns whether a round ran.
 */
static bool debloat_episode(struct mem_cgroup *memcg, bool *active,
			    unsigned int *bar)
{
	unsigned int threshold = READ_ONCE(hawkeye_debloat.threshold);
	struct debloat_domain dom = { .memcg = memcg };
	bool more;

	if (!READ_ONCE(*active)) {
		if (!debloat_wanted_in(memcg, false))
			return false;
		/* A new episode: the most bloated THPs first. */
		WRITE_ONCE(*bar, threshold);
		WRITE_ONCE(*active, true);
		if (memcg)
			hawkeye_stat_inc(HAWKEYE_STAT_DEBLOAT_MEMCG_EPISODE);
	}
	dom.bar = READ_ONCE(*bar);
	more = debloat_round(&dom);
	if (more)
		WRITE_ONCE(*bar, debloat_lower_bar(dom.bar, threshold));
	WRITE_ONCE(*active, more);
	/* A cgroup's bar is its own, not current_threshold. */
	if (memcg)
		count_memcg_events(memcg, HAWKEYE_DEBLOAT_ROUND, 1);
	else
		count_vm_event(HAWKEYE_DEBLOAT_ROUND);
	return true;
}

/* A round in each memory cgroup that recovery is wanted in. */
static bool debloat_memcgs(void)
{
	bool ran = false;
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg;

	/* cgroup v1 has no memory.thp.* files: the machine's rule only. */
	if (!cgroup_subsys_on_dfl(memory_cgrp_subsys))
		return false;
	for (memcg = mem_cgroup_iter(NULL, NULL, NULL); memcg;
	     memcg = mem_cgroup_iter(NULL, memcg, NULL)) {
		if (kthread_should_stop()) {
			mem_cgroup_iter_break(NULL, memcg);
			break;
		}
		if (mem_cgroup_is_root(memcg))
			continue;
		if (hawkeye_memcg_debloat_off(memcg) ||
		    hawkeye_memcg_limit(memcg) >= PAGE_COUNTER_MAX) {
			WRITE_ONCE(memcg->hawkeye.active, false);
			continue;
		}
		/* Its page cache, counted out of its use, up to date. */
		mem_cgroup_flush_stats(memcg);
		ran |= debloat_episode(memcg, &memcg->hawkeye.active,
				       &memcg->hawkeye.bar);
	}
#endif
	return ran;
}

static int debloat_thread_fn(void *unused)
{
	set_freezable();
	while (!kthread_should_stop()) {
		bool ran;

		try_to_freeze();
		ran = debloat_episode(NULL, &debloat_active, &debloat_bar);
		ran |= debloat_memcgs();
		if (!ran)
			schedule_timeout_interruptible(DEBLOAT_POLL);
	}
	return 0;
}

/*
 * Recovery off ends every episode, the machine's and the cgroups': on
 * again, each starts afresh above its high watermark. The thread stopped
 * between rounds leaves its episode marked running otherwise.
 */
static void debloat_end_episodes(void)
{
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg;

	for (memcg = mem_cgroup_iter(NULL, NULL, NULL); memcg;
	     memcg = mem_cgroup_iter(NULL, memcg, NULL)) {
		WRITE_ONCE(memcg->hawkeye.active, false);
		cond_resched();
	}
#endif
	WRITE_ONCE(debloat_active, false);
}

/**
 * hawkeye_debloat_set_enabled - turn bloat recovery on or off
 * @on: the new state
 *
 * Starts the recovery thread and then enables the static key, or disables
 * the key, stops the thread and ends every episode (debloat_end_episodes()).
 * Called by sysfs (debloat/enabled) and by the hawkeye_debloat= boot
 * parameter.
 *
 * Return: 0, or the error of starting the thread (the state is unchanged).
 */
int hawkeye_debloat_set_enabled(bool on)
{
	int ret = 0;

	mutex_lock(&debloat_mutex);
	if (on == hawkeye_debloat_enabled())
		goto out;
	if (!on) {
		static_branch_disable(&hawkeye_debloat_key);
		hawkeye_thread_stop(&debloat_thread);
		debloat_end_episodes();
		goto out;
	}
	ret = hawkeye_thread_start(&debloat_thread, debloat_thread_fn, NULL,
				   NUMA_NO_NODE, "hawkeye_debloatd");
	if (!ret)
		static_branch_enable(&hawkeye_debloat_key);
out:
	mutex_unlock(&debloat_mutex);
	return ret;
}

/*
 * In memory cgroups, a collapse grows the usage by the empty and zero-page
 * PTEs it fills: it may take no cgroup with a limit (@mm's and its
 * ancestors) to low_pct of that limit, where recovery stops (and starts
 * under pressure). Were it allowed up to high_pct, collapses would refill
 * what recovery freed, and the cgroup would meet its next growth at the
 * start of recovery instead of below it. While an episode of recovery
 * runs in one or it is under pressure, the collapse may not have as many
 * as the episode's bar either, which would be split again. The @charged
 * pages of the collapse's own huge page are not counted: the collapse
 * frees as many as it adds beyond its empty PTEs. Use is as recovery
 * counts it (hawkeye_memcg_use()). Not limited under a cgroup with
 * recovery off (here or above), nor on cgroup v1.
 */
static unsigned int debloat_memcg_max_ptes_none(struct mm_struct *mm,
						unsigned int charged)
{
	unsigned long max = HPAGE_PMD_NR - 1;
#ifdef CONFIG_MEMCG
	unsigned int low = READ_ONCE(hawkeye_debloat.low_pct);
	struct mem_cgroup *memcg, *m;

	if (!cgroup_subsys_on_dfl(memory_cgrp_subsys))
		return max;
	memcg = get_mem_cgroup_from_mm(mm);
	/* Recovery off here or above: khugepaged as upstream's. */
	if (hawkeye_memcg_debloat_off(memcg))
		m = NULL;
	else
		m = memcg;
	for (; m && !mem_cgroup_is_root(m); m = parent_mem_cgroup(m)) {
		unsigned long limit = hawkeye_memcg_limit(m), ceil, usage;

		if (limit >= PAGE_COUNTER_MAX)
			continue;
		/* Just below low_pct: under pressure, recovery starts there. */
		ceil = div_u64((u64)limit * low, 100);
		ceil -= min(ceil, 1UL);
		usage = hawkeye_memcg_use(m);
		usage -= min_t(unsigned long, usage, charged);
		max = min(max, ceil > usage ? ceil - usage : 0);
		if (debloat_pressure(m) || READ_ONCE(m->hawkeye.active))
			max = min(max, max(READ_ONCE(m->hawkeye.bar), 1U) - 1UL);
	}
	mem_cgroup_put(memcg);
#endif
	return max;
}

/**
 * __hawkeye_max_ptes_none - khugepaged's max_ptes_none for one process
 * @mm: the process khugepaged scans
 * @charged: pages of the collapse's huge page charged already
 *
 * While memory is tight (low_pct or more in use), a range with as many
 * empty or zero-page PTEs as the bar of the last recovery episode would be
 * split again: khugepaged leaves it, in a process whose huge pages
 * recovery has split. Other processes have no recovered ranges to protect,
 * and the sparse ranges they make themselves (MADV_DONTNEED, munmap) are
 * collapsed as without HawkEye; should that bloat memory, recovery splits
 * them and they are protected from then on. While memory is free, bloat
 * costs nothing and khugepaged follows its own knobs, as HawkEye is
 * aggressive with huge pages until memory gets tight. The flip side is
 * bounded: recovery stops just below low_pct, and collapses stop again as
 * soon as they bring memory use back to low_pct. In memory cgroups with a
 * limit, the cgroups' own rule applies too (debloat_memcg_max_ptes_none()).
 *
 * Return: the most empty or zero-page PTEs a collapse may have, before
 * khugepaged's own knob (the caller takes the smaller).
 */
unsigned int __hawkeye_max_ptes_none(struct mm_struct *mm, unsigned int charged)
{
	unsigned int max = HPAGE_PMD_NR - 1;

	if (READ_ONCE(mm->hawkeye_debloat_splits) && debloat_wanted_now(true))
		max = READ_ONCE(debloat_bar) - 1;
	return min(max, debloat_memcg_max_ptes_none(mm, charged));
}

/*
 * Is recovery wanted in reclaim for the machine, or for @memcg's limit?
 * Reclaim is memory pressure: from low_pct, as under PSI pressure. Asked
 * for every THP reclaim's shrinker looks at; counts nothing.
 */
static bool debloat_wanted_for(struct mem_cgroup *memcg, bool active)
{
	unsigned long in_use, total;

	return debloat_usage(memcg, &in_use, &total) &&
	       debloat_wanted(in_use, total, active, true,
			      READ_ONCE(hawkeye_debloat.high_pct),
			      READ_ONCE(hawkeye_debloat.low_pct));
}

/*
 * Recovery's bar for @folio in reclaim's THP shrinker (see
 * __hawkeye_thp_max_ptes_none()): the zero-filled subpages that split it,
 * or UINT_MAX where upstream's bar applies.
 */
static unsigned int debloat_shrinker_bar(struct folio *folio)
{
	unsigned int threshold = READ_ONCE(hawkeye_debloat.threshold);
	unsigned int bar = UINT_MAX;
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg;
#endif
	bool active = READ_ONCE(debloat_active);

	if (debloat_wanted_for(NULL, active))
		bar = active ? READ_ONCE(debloat_bar) : threshold;
#ifdef CONFIG_MEMCG
	rcu_read_lock();
	memcg = folio_memcg(folio);
	if (memcg && hawkeye_memcg_debloat_off(memcg)) {
		rcu_read_unlock();
		return UINT_MAX;
	}
	for (; memcg && cgroup_subsys_on_dfl(memory_cgrp_subsys) &&
	       !mem_cgroup_is_root(memcg); memcg = parent_mem_cgroup(memcg)) {
		active = READ_ONCE(memcg->hawkeye.active);
		if (debloat_wanted_for(memcg, active))
			bar = min(bar, active ? READ_ONCE(memcg->hawkeye.bar) :
						threshold);
	}
	rcu_read_unlock();
#endif
	return bar;
}

/**
 * __hawkeye_thp_max_ptes_none - recovery's bar in reclaim's THP shrinker
 * @folio: a THP on the deferred split queue, referenced
 * @max_ptes_none: khugepaged's max_ptes_none, upstream's bar
 *
 * thp_underused() splits a THP with more than @max_ptes_none zero-filled
 * subpages. Where recovery is wanted, for the machine or for the limit of
 * a cgroup (v2) that @folio is charged inside (use at low_pct or more:
 * reclaim is pressure), the bar is recovery's, not khugepaged's (which
 * says what to collapse, not what to split): that episode's, or the
 * threshold if none runs yet. Elsewhere, and for a THP
 * charged inside a cgroup with recovery off (memory.thp.shrink_underused 0
 * there or above), it stays upstream's: reclaim on a machine and in
 * cgroups that are not tight splits what it splits without HawkEye.
 *
 * Return: the most zero-filled subpages @folio may have and stay whole.
 */
unsigned int __hawkeye_thp_max_ptes_none(struct folio *folio,
					 unsigned int max_ptes_none)
{
	unsigned int bar = debloat_shrinker_bar(folio);

	if (bar == UINT_MAX)
		return max_ptes_none;
	return max(bar, 1U) - 1;
}

/*
 * The anonymous mTHP orders below the PMD's enabled for any VMA ("always",
 * or "inherit" under THP "always"): the shrinker has a folio, not its VMA.
 */
static unsigned long debloat_anon_orders(void)
{
	unsigned long orders = READ_ONCE(huge_anon_orders_always);

	if (hugepage_global_always())
		orders |= READ_ONCE(huge_anon_orders_inherit);
	return orders & THP_ORDERS_ALL_ANON & (BIT(HPAGE_PMD_ORDER) - 1);
}

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
	    debloat_worth_splitting(folio, debloat_piece_bar(bar,
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
 * hawkeye_split_underused() - split a THP for reclaim's THP shrinker
 * @folio: an anonymous THP that thp_underused() found at or past the bar,
 *	referenced and locked
 *
 * With bloat recovery and debloat/mthp on, where recovery's bar applies to
 * @folio, as recovery splits: to the largest anonymous mTHP size enabled,
 * then each piece with at least its share of the bar zero-filled on to
 * base pages, whose zero-filled subpages map the zero page and are freed;
 * the dense pieces keep their TLB reach. Otherwise split_folio(), as
 * upstream.
 *
 * Return: 0 if @folio was split, as split_folio().
 */
int hawkeye_split_underused(struct folio *folio)
{
	unsigned long orders;
	unsigned int bar, i, nr;
	struct page *head = &folio->page;
	int order, err;

	/*
	 * In the swap cache a folio splits to order 0 only; one partially
	 * mapped since thp_underused() goes there too, so that its unmapped
	 * subpages are freed.
	 */
	if (!hawkeye_debloat_enabled() || !READ_ONCE(hawkeye_debloat.mthp) ||
	    folio_test_swapcache(folio) || folio_test_partially_mapped(folio))
		return split_folio(folio);
	orders = debloat_anon_orders();
	bar = debloat_shrinker_bar(folio);
	if (!orders || bar == UINT_MAX)
		return split_folio(folio);
	order = highest_order(orders);
	err = split_huge_page_to_list_to_order(head, NULL, order);
	if (err)
		return err;
	/* The first piece is @folio, still locked; the others are not. */
	nr = 1U << order;
	for (i = 0; i < HPAGE_PMD_NR; i += nr) {
		debloat_split_piece(nth_page(head, i), bar, !i);
		cond_resched();
	}
	return 0;
}

/* The knob table (sysfs.c) checked the bounds: low < high remains. */
static bool debloat_watermarks_valid(unsigned int high, unsigned int low)
{
	return low < high;
}

/**
 * hawkeye_debloat_set_high_pct - set the watermark that starts recovery
 * @pct: memory in use, in percent of MemTotal; sysfs checked its bounds
 *
 * Return: 0, or -EINVAL (nothing changed) unless it stays above low_pct.
 */
int hawkeye_debloat_set_high_pct(unsigned int pct)
{
	int ret = -EINVAL;

	mutex_lock(&debloat_mutex);
	if (debloat_watermarks_valid(pct, hawkeye_debloat.low_pct)) {
		WRITE_ONCE(hawkeye_debloat.high_pct, pct);
		ret = 0;
	}
	mutex_unlock(&debloat_mutex);
	return ret;
}

/**
 * hawkeye_debloat_set_low_pct - set the watermark that ends recovery
 * @pct: memory in use, in percent of MemTotal; sysfs checked its bounds
 *
 * Return: 0, or -EINVAL (nothing changed) unless it stays below high_pct.
 */
int hawkeye_debloat_set_low_pct(unsigned int pct)
{
	int ret = -EINVAL;

	mutex_lock(&debloat_mutex);
	if (debloat_watermarks_valid(hawkeye_debloat.high_pct, pct)) {
		WRITE_ONCE(hawkeye_debloat.low_pct, pct);
		ret = 0;
	}
	mutex_unlock(&debloat_mutex);
	return ret;
}

/**
 * hawkeye_debloat_set_threshold - set the zero-page bar of a new episode
 * @nr: zero-filled base pages out of 512; sysfs checked its bounds
 *
 * The new threshold is also the bar at once, in a running episode too.
 *
 * Return: 0.
 */
int hawkeye_debloat_set_threshold(unsigned int nr)
{
	WRITE_ONCE(hawkeye_debloat.threshold, nr);
	WRITE_ONCE(debloat_bar, nr);
	return 0;
}

/**
 * hawkeye_debloat_current_threshold - the bar recovery splits at now
 *
 * Return: zero-filled base pages out of 512 that a THP needs to be split;
 * lower than the threshold knob while an episode lasts.
 */
unsigned int hawkeye_debloat_current_threshold(void)
{
	return READ_ONCE(debloat_bar);
}

HAWKEYE_BOOT_SWITCH(hawkeye_debloat, hawkeye_debloat_set_enabled);

#ifdef CONFIG_HAWKEYE_DEBLOAT_KUNIT_TEST
#include "tests/debloat-kunit.h"
#endif
