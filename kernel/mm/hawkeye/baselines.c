// SPDX-License-Identifier: GPL-2.0
/*
 * The promotion policies HawkEye is compared with, in the same kernel:
 *
 * - ingens (Kwon et al., OSDI '16): anonymous faults map base pages only;
 *   a 2 MB region is promoted asynchronously once its utilisation (present
 *   base pages out of 512) reaches util_threshold percent, or at the first
 *   opportunity while the free memory fragmentation index (FMFI) is below
 *   fmfi_threshold; the next promotion goes to the process with the lowest
 *   promotion metric (its huge pages, an idle one weighing more by the
 *   idle penalty), each process's regions in address order.
 * - freebsd (Navarro et al., OSDI '02, FreeBSD's vm_reserv): the first fault
 *   in an empty aligned 2 MB region of an anonymous VMA that may have huge
 *   pages reserves a 2 MB physical block (a PMD-order folio, mapped by
 *   nothing) and maps the faulting base page from it; later faults in the
 *   region map the matching base page of the block. Once all 512 are
 *   mapped, the region is promoted in place: the page table is replaced by
 *   a PMD mapping of the same folio, nothing is copied. A reservation is a
 *   partially mapped large folio on the deferred split queue, so memory
 *   pressure (the deferred split shrinker, reclaim) breaks it and frees its
 *   unmapped pages.
 *
 * Both run on promote.c's thread, process list and sample period; their
 * per-process state is a struct hawkeye_base_mm in promote.c's hawkeye_mm.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/hawkeye.h>
#include <linux/huge_mm.h>
#include <linux/khugepaged.h>
#include <linux/kobject.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/memcontrol.h>
#include <linux/mmu_notifier.h>
#include <linux/mmzone.h>
#include <linux/oom.h>
#include <linux/pagewalk.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/sysfs.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>
#include <asm/pgalloc.h>
#include <asm/tlb.h>
#include <asm/tlbflush.h>

#include "../internal.h"
#include "hawkeye.h"

/* ingens or freebsd: anonymous faults map base pages only. */
DEFINE_STATIC_KEY_FALSE(hawkeye_base_fault_key);
/* freebsd: anonymous faults map from 2 MB reservations. */
static DEFINE_STATIC_KEY_FALSE(hawkeye_reserve_key);

struct hawkeye_ingens_params hawkeye_ingens = {
	.util_threshold = 90,		/* Ingens-90% */
	.fmfi_threshold = 50,		/* aggressive below an FMFI of 0.5 */
	.idle_penalty = 50,		/* an idle huge page counts twice */
};

/*
 * Gorman's unusable free space index for @order: the share of free memory
 * that lies in free blocks smaller than 2^@order pages, in percent (0: all
 * of it can serve such an allocation, 100: none). @nr_free[o] is the
 * number of free blocks of order o. No free memory at all counts as 100.
 */
static unsigned int base_fmfi(const unsigned long *nr_free,
			      unsigned int nr_orders, unsigned int order)
{
	u64 total = 0, usable = 0;
	unsigned int o;

	for (o = 0; o < nr_orders; o++) {
		u64 pages = (u64)nr_free[o] << o;

		total += pages;
		if (o >= order)
			usable += pages;
	}
	if (!total)
		return 100;
	return div64_u64((total - usable) * 100, total);
}

/* The FMFI for huge pages (order 9) over all free memory, in percent. */
unsigned int hawkeye_fmfi(void)
{
	unsigned long nr_free[NR_PAGE_ORDERS] = {};
	struct zone *zone;
	unsigned int o;

	/* A snapshot without zone->lock, as /proc/buddyinfo takes one. */
	for_each_populated_zone(zone)
		for (o = 0; o < NR_PAGE_ORDERS; o++)
			nr_free[o] += data_race(zone->free_area[o].nr_free);
	return base_fmfi(nr_free, NR_PAGE_ORDERS, HPAGE_PMD_ORDER);
}

/*
 * Ingens' promotion metric of a process, in hundredths of a huge page:
 * its huge pages, each idle one counting 1 / (1 - @penalty / 100) (the
 * idle memory tax of Waldspurger's ESX, with the tax rate @penalty).
 * Ingens' proportional metric is share / this; with equal shares the
 * process with the lowest value gets the next promotion.
 */
static u64 ingens_metric(unsigned long huge, unsigned long idle,
			 unsigned int penalty)
{
	idle = min(idle, huge);
	return (u64)(huge - idle) * 100 +
	       div_u64((u64)idle * 100 * 100, 100 - penalty);
}

static u64 base_metric(struct hawkeye_base_mm *b)
{
	return ingens_metric(READ_ONCE(b->nr_huge), READ_ONCE(b->nr_idle),
			     READ_ONCE(hawkeye_ingens.idle_penalty));
}

/*
 * The process of @bs[@nr] that gets the next promotion: the lowest metric
 * among those not exhausted in this round, the first registered among
 * equals. NULL if all are exhausted.
 */
static struct hawkeye_base_mm *ingens_pick(struct hawkeye_base_mm **bs,
					   unsigned int nr)
{
	struct hawkeye_base_mm *best = NULL;
	u64 best_metric = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		u64 m;

		if (bs[i]->exhausted)
			continue;
		m = base_metric(bs[i]);
		if (!best || m < best_metric) {
			best = bs[i];
			best_metric = m;
		}
	}
	return best;
}

/* freebsd: the first process not exhausted in this round, or NULL. */
static struct hawkeye_base_mm *base_first(struct hawkeye_base_mm **bs,
					  unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (!bs[i]->exhausted)
			return bs[i];
	return NULL;
}

/* Is a region with @util present base pages promoted by ingens now? */
static bool ingens_qualifies(unsigned int util, bool aggressive,
			     unsigned int threshold)
{
	return util && (aggressive || util * 100 >= threshold * HPAGE_PMD_NR);
}

/* Anonymous memory that may have huge pages: khugepaged's test. */
static bool base_vma_eligible(struct vm_area_struct *vma)
{
	return vma_is_anonymous(vma) &&
	       thp_vma_allowable_order(vma, vma->vm_flags, TVA_ENFORCE_SYSFS,
				       PMD_ORDER);
}

/*
 * Reservations (freebsd).
 *
 * A reservation has no record of its own: it is found from the page
 * table. The region's reservation is the PMD-order anonymous folio of
 * which every mapped page is mapped in this page table at its own offset
 * (page i of the folio at base page i of the region), and nowhere else:
 * its mapcount equals the number of those mappings. A folio that was
 * shared by fork(), moved by mremap() to another offset, split, swapped
 * or is being migrated is not (or no longer) a reservation.
 */
static bool reserve_vma_ok(struct vm_area_struct *vma, unsigned long haddr)
{
	if (haddr < vma->vm_start || haddr + HPAGE_PMD_SIZE > vma->vm_end)
		return false;
	if (vma->vm_flags & (VM_SHARED | VM_LOCKED | VM_MERGEABLE |
			     VM_DROPPABLE))
		return false;
	if (userfaultfd_armed(vma) || !vma_is_anonymous(vma))
		return false;
	/*
	 * khugepaged's test, but also before the VMA's first fault, which
	 * sets up its anon_vma (TVA_SMAPS: anon_vma not required).
	 */
	return !(vma->vm_flags & VM_NO_KHUGEPAGED) &&
	       thp_vma_allowable_order(vma, vma->vm_flags,
				       TVA_ENFORCE_SYSFS | TVA_SMAPS, PMD_ORDER);
}

/*
 * The reservation of the region at @haddr whose page table is @pte
 * (locked), or NULL; *@present: the entries that are not none, *@mapped:
 * the pages of the reservation mapped.
 */
static struct folio *reserve_find(struct vm_area_struct *vma, pte_t *pte,
				  unsigned long haddr, unsigned int *present,
				  unsigned int *mapped)
{
	struct folio *folio = NULL;
	unsigned int i;

	*present = 0;
	*mapped = 0;
	for (i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t ptent = ptep_get(pte + i);
		struct page *page;

		if (pte_none(ptent))
			continue;
		(*present)++;
		if (!pte_present(ptent))
			continue;
		page = vm_normal_page(vma, haddr + i * PAGE_SIZE, ptent);
		if (!page)
			continue;
		if (!folio) {
			struct folio *f = page_folio(page);

			if (folio_order(f) != HPAGE_PMD_ORDER ||
			    !folio_test_anon(f) || folio_test_ksm(f) ||
			    folio_page_idx(f, page) != i)
				continue;
			folio = f;
		}
		if (page == folio_page(folio, i))
			(*mapped)++;
	}
	if (!folio || folio_test_swapcache(folio) ||
	    folio_mapcount(folio) != *mapped ||
	    folio->index != linear_page_index(vma, haddr) ||
	    folio_anon_vma(folio)->root != vma->anon_vma->root)
		return NULL;
	return folio;
}

struct reserve_work {
	struct work_struct work;
	struct mm_struct *mm;
	unsigned long addr;
};

static int reserve_promote(struct mm_struct *mm, unsigned long haddr);

static void reserve_work_fn(struct work_struct *work)
{
	struct reserve_work *rw = container_of(work, struct reserve_work, work);
	int ret;

	if (hawkeye_promote_get_policy() == HAWKEYE_POLICY_FREEBSD &&
	    hawkeye_mm_alive(rw->mm)) {
		ret = reserve_promote(rw->mm, rw->addr);
		hawkeye_base_account(rw->mm, HAWKEYE_POLICY_FREEBSD, rw->addr,
				     HPAGE_PMD_NR, hawkeye_fmfi(), 0, ret);
	}
	mmput(rw->mm);
	kfree(rw);
}

/* The fault that mapped the last page of a reservation: promote it soon. */
static void reserve_queue_promote(struct mm_struct *mm, unsigned long haddr)
{
	struct reserve_work *rw = kmalloc(sizeof(*rw), GFP_KERNEL);

	/* Without memory, the next round of the thread promotes it. */
	if (!rw)
		return;
	INIT_WORK(&rw->work, reserve_work_fn);
	mmget(mm);
	rw->mm = mm;
	rw->addr = haddr;
	queue_work(system_unbound_wq, &rw->work);
}

static pte_t reserve_mk_pte(struct vm_area_struct *vma, struct page *page)
{
	pte_t entry = mk_pte(page, vma->vm_page_prot);

	entry = pte_sw_mkyoung(entry);
	if (vma->vm_flags & VM_WRITE)
		entry = pte_mkwrite(pte_mkdirty(entry), vma);
	return entry;
}

/*
 * Map the base page at vmf->address from the reservation of its region,
 * making the reservation if the region is empty. Read faults too take a
 * page of the reservation, as in FreeBSD (no shared zero page). Returns
 * VM_FAULT_FALLBACK where the region has no usable reservation and none
 * can be made: the fault then maps a base page as usual.
 */
static vm_fault_t reserve_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	unsigned long addr = vmf->address & PAGE_MASK;
	unsigned long haddr = addr & HPAGE_PMD_MASK;
	unsigned int idx = (addr - haddr) >> PAGE_SHIFT;
	unsigned int present, mapped;
	struct folio *folio;
	struct page *page;
	vm_fault_t ret;
	pte_t *pte;
	gfp_t gfp;

	if (!reserve_vma_ok(vma, haddr))
		return VM_FAULT_FALLBACK;
	ret = vmf_anon_prepare(vmf);
	if (ret)
		return ret;
	/* Now that it has an anon_vma: promotion must know the process. */
	khugepaged_enter_vma(vma, vma->vm_flags);

	pte = pte_offset_map_lock(mm, vmf->pmd, haddr, &vmf->ptl);
	if (!pte)
		return 0;
	/* Being OOM-reaped: SIGBUS, not a fresh page. */
	ret = check_stable_address_space(mm);
	if (ret || !pte_none(ptep_get(pte + idx))) {
		/* Or someone else mapped it meanwhile: done. */
		pte_unmap_unlock(pte, vmf->ptl);
		return ret;
	}
	folio = reserve_find(vma, pte, haddr, &present, &mapped);
	if (folio) {
		/* Locked against split, migration and reclaim. */
		if (!folio_trylock(folio)) {
			pte_unmap_unlock(pte, vmf->ptl);
			return VM_FAULT_FALLBACK;
		}
		/*
		 * Each mapping holds one reference. Any other is a page of
		 * the reservation that was mapped before and is still in use
		 * (a pipe, a pin, a TLB flush to come): none of its pages
		 * can be told free, so none is reused. Nothing can take a
		 * new reference to an unmapped page but speculative lookups,
		 * which find it not theirs.
		 */
		if (folio_mapcount(folio) != mapped ||
		    folio_ref_count(folio) != mapped) {
			folio_unlock(folio);
			pte_unmap_unlock(pte, vmf->ptl);
			return VM_FAULT_FALLBACK;
		}
		page = folio_page(folio, idx);
		clear_user_highpage(page, addr);
		/* The zeroes before the PTE, as __folio_mark_uptodate(). */
		smp_wmb();
		folio_get(folio);
		folio_add_anon_rmap_ptes(folio, page, 1, vma, addr,
					 RMAP_EXCLUSIVE);
		folio_unlock(folio);
		add_mm_counter(mm, MM_ANONPAGES, 1);
		set_pte_at(mm, addr, pte + idx, reserve_mk_pte(vma, page));
		update_mmu_cache_range(vmf, vma, addr, pte + idx, 1);
		pte_unmap_unlock(pte, vmf->ptl);
		count_vm_event(HAWKEYE_FREEBSD_RESERVE_PAGES);
		if (mapped + 1 == HPAGE_PMD_NR)
			reserve_queue_promote(mm, haddr);
		return 0;
	}
	pte_unmap_unlock(pte, vmf->ptl);
	/* Populated without a usable reservation: base pages, as FreeBSD. */
	if (present)
		return VM_FAULT_FALLBACK;

	gfp = vma_thp_gfp_mask(vma);
	folio = vma_alloc_folio(gfp, HPAGE_PMD_ORDER, vma, haddr, true);
	if (!folio) {
		count_vm_event(HAWKEYE_FREEBSD_RESERVE_FAILED);
		return VM_FAULT_FALLBACK;
	}
	if (mem_cgroup_charge(folio, mm, gfp)) {
		folio_put(folio);
		count_vm_event(HAWKEYE_FREEBSD_RESERVE_FAILED);
		return VM_FAULT_FALLBACK;
	}
	folio_throttle_swaprate(folio, gfp);
	page = folio_page(folio, idx);
	/* Only the page mapped is zeroed; the others when they are mapped. */
	clear_user_highpage(page, addr);
	__folio_mark_uptodate(folio);

	pte = pte_offset_map_lock(mm, vmf->pmd, haddr, &vmf->ptl);
	if (!pte) {
		folio_put(folio);
		return 0;
	}
	ret = check_stable_address_space(mm);
	if (ret || !pte_none(ptep_get(pte + idx))) {
		pte_unmap_unlock(pte, vmf->ptl);
		folio_put(folio);
		return ret;
	}
	reserve_find(vma, pte, haddr, &present, &mapped);
	if (present) {
		/* Another fault populated the region meanwhile: retry. */
		pte_unmap_unlock(pte, vmf->ptl);
		folio_put(folio);
		return 0;
	}
	/* The allocation's reference is the first mapping's. */
	hawkeye_folio_prepare_anon(folio, vma, haddr);
	folio_add_anon_rmap_ptes(folio, page, 1, vma, addr, RMAP_EXCLUSIVE);
	folio_add_lru_vma(folio, vma);
	/* Partially mapped: memory pressure splits it, freeing the rest. */
	deferred_split_folio(folio, true);
	add_mm_counter(mm, MM_ANONPAGES, 1);
	set_pte_at(mm, addr, pte + idx, reserve_mk_pte(vma, page));
	update_mmu_cache_range(vmf, vma, addr, pte + idx, 1);
	pte_unmap_unlock(pte, vmf->ptl);
	count_vm_event(HAWKEYE_FREEBSD_RESERVE);
	count_vm_event(HAWKEYE_FREEBSD_RESERVE_PAGES);
	return 0;
}

/*
 * Called by do_anonymous_page() after pte_alloc() while the policy is
 * ingens or freebsd. A huge page fault would have registered the process
 * with khugepaged, and so with the promotion thread: do it here (once the
 * VMA has an anon_vma; the MMF_VM_HUGEPAGE test makes it cheap after).
 */
vm_fault_t hawkeye_base_fault(struct vm_fault *vmf)
{
	khugepaged_enter_vma(vmf->vma, vmf->vma->vm_flags);
	if (!static_branch_unlikely(&hawkeye_reserve_key))
		return VM_FAULT_FALLBACK;
	return reserve_fault(vmf);
}

/* Is the region at @haddr a fully populated reservation? Under mmap_lock. */
static bool reserve_full(struct vm_area_struct *vma, pmd_t *pmd,
			 unsigned long haddr)
{
	unsigned int present, mapped;
	struct folio *folio;
	spinlock_t *ptl;
	pte_t *pte;

	pte = pte_offset_map_lock(vma->vm_mm, pmd, haddr, &ptl);
	if (!pte)
		return false;
	folio = reserve_find(vma, pte, haddr, &present, &mapped);
	pte_unmap_unlock(pte, ptl);
	return folio && mapped == HPAGE_PMD_NR;
}

/*
 * Promote the fully populated reservation at @haddr in place: the 512
 * PTEs that map the folio's pages in order become one PMD mapping of the
 * same folio. Nothing is copied or allocated. Locking as khugepaged's
 * collapse_huge_page(): mmap_lock for writing and the VMA write-locked
 * against faults, the anon_vma lock and the folio lock against rmap
 * walkers, split, migration and reclaim, the PMD cleared and the TLB
 * flushed against GUP-fast and hardware walkers.
 *
 * Return: 0, -EEXIST if the region is huge already, -EINVAL if it is no
 * longer an eligible region, -EAGAIN if it is not a full reservation (or
 * the folio is busy).
 */
static int reserve_promote(struct mm_struct *mm, unsigned long haddr)
{
	bool write = true, dirty = false, young = false;
	struct mmu_notifier_range range;
	struct vm_area_struct *vma;
	spinlock_t *pmd_ptl, *ptl;
	unsigned int present, mapped, i;
	struct folio *folio;
	pmd_t *pmd, _pmd, entry;
	pte_t *pte;
	int ret = -EINVAL;

	mmap_write_lock(mm);
	vma = vma_lookup(mm, haddr);
	if (!vma || !reserve_vma_ok(vma, haddr) || !vma->anon_vma)
		goto out;
	pmd = mm_find_pmd(mm, haddr);
	if (!pmd)
		goto out;
	_pmd = pmdp_get_lockless(pmd);
	if (pmd_trans_huge(_pmd)) {
		ret = -EEXIST;
		goto out;
	}
	ret = -EAGAIN;
	pte = pte_offset_map_lock(mm, pmd, haddr, &ptl);
	if (!pte)
		goto out;
	folio = reserve_find(vma, pte, haddr, &present, &mapped);
	if (!folio || mapped != HPAGE_PMD_NR || !folio_trylock(folio)) {
		pte_unmap_unlock(pte, ptl);
		goto out;
	}
	folio_get(folio);
	pte_unmap_unlock(pte, ptl);

	vma_start_write(vma);
	anon_vma_lock_write(vma->anon_vma);
	mmu_notifier_range_init(&range, MMU_NOTIFY_CLEAR, 0, mm, haddr,
				haddr + HPAGE_PMD_SIZE);
	mmu_notifier_invalidate_range_start(&range);
	pmd_ptl = pmd_lock(mm, pmd);
	_pmd = pmdp_collapse_flush(vma, haddr, pmd);
	spin_unlock(pmd_ptl);
	mmu_notifier_invalidate_range_end(&range);
	tlb_remove_table_sync_one();

	pte = pte_offset_map_lock(mm, &_pmd, haddr, &ptl);
	if (!pte)
		goto restore;
	if (reserve_find(vma, pte, haddr, &present, &mapped) != folio ||
	    mapped != HPAGE_PMD_NR)
		goto restore_unmap;
	for (i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t ptent = ptep_get(pte + i);

		if (!PageAnonExclusive(folio_page(folio, i)) ||
		    pte_uffd_wp(ptent))
			goto restore_unmap;
		write &= pte_write(ptent);
		dirty |= pte_dirty(ptent);
		young |= pte_young(ptent);
	}
	for (i = 0; i < HPAGE_PMD_NR; i++)
		ptep_clear(mm, haddr + i * PAGE_SIZE, pte + i);
	/* 512 PTE mappings and references become one PMD mapping. */
	folio_remove_rmap_ptes(folio, folio_page(folio, 0), HPAGE_PMD_NR, vma);
	for (i = 1; i < HPAGE_PMD_NR; i++)
		ClearPageAnonExclusive(folio_page(folio, i));
	pte_unmap_unlock(pte, ptl);

	entry = mk_huge_pmd(&folio->page, vma->vm_page_prot);
	if (write)
		entry = maybe_pmd_mkwrite(pmd_mkdirty(entry), vma);
	else if (dirty)
		entry = pmd_mkdirty(entry);
	if (young)
		entry = pmd_mkyoung(entry);

	spin_lock(pmd_ptl);
	folio_add_anon_rmap_pmd(folio, &folio->page, vma, haddr,
				RMAP_EXCLUSIVE);
	folio_ref_sub(folio, HPAGE_PMD_NR - 1);
	pgtable_trans_huge_deposit(mm, pmd, pmd_pgtable(_pmd));
	set_pmd_at(mm, haddr, pmd, entry);
	update_mmu_cache_pmd(vma, haddr, pmd);
	spin_unlock(pmd_ptl);
	hawkeye_folio_fully_mapped(folio);
	count_vm_event(HAWKEYE_FREEBSD_PROMOTE_INPLACE);
	ret = 0;
	goto unlock;

restore_unmap:
	pte_unmap_unlock(pte, ptl);
restore:
	spin_lock(pmd_ptl);
	pmd_populate(mm, pmd, pmd_pgtable(_pmd));
	spin_unlock(pmd_ptl);
unlock:
	anon_vma_unlock_write(vma->anon_vma);
	folio_unlock(folio);
	folio_put(folio);
out:
	mmap_write_unlock(mm);
	return ret;
}

/*
 * Sampling (both policies): the huge pages of a process and how many of
 * them were not accessed during the sample window (Ingens' idle pages).
 */
struct base_walk {
	unsigned long nr_huge;
	unsigned long nr_young;
};

static int base_test_walk(unsigned long start, unsigned long end,
			  struct mm_walk *walk)
{
	return vma_is_anonymous(walk->vma) ? 0 : 1;
}

static int base_sample_pmd(pmd_t *pmd, unsigned long addr, unsigned long end,
			   struct mm_walk *walk)
{
	struct base_walk *bw = walk->private;
	spinlock_t *ptl;
	pmd_t pmdval;

	cond_resched();
	ptl = pmd_trans_huge_lock(pmd, walk->vma);
	if (!ptl)
		return 0;
	pmdval = *pmd;
	if (pmd_present(pmdval) && !is_huge_zero_pmd(pmdval) &&
	    folio_test_anon(pmd_folio(pmdval))) {
		bw->nr_huge++;
		if (pmdp_clear_young_notify(walk->vma, addr & HPAGE_PMD_MASK,
					    pmd)) {
			bw->nr_young++;
			hawkeye_keep_access(pmd_folio(pmdval));
		}
	}
	spin_unlock(ptl);
	return 0;
}

static const struct mm_walk_ops base_sample_ops = {
	.test_walk = base_test_walk,
	.pmd_entry = base_sample_pmd,
	.walk_lock = PGWALK_RDLOCK,
};

static void base_sample(struct hawkeye_base_mm *b, struct base_walk *bw)
{
	struct mm_struct *mm = b->mm;

	mmap_read_lock(mm);
	walk_page_range(mm, 0, ULONG_MAX, &base_sample_ops, bw);
	mmap_read_unlock(mm);
	/* The next access must set the young bits again. */
	if (bw->nr_huge)
		flush_tlb_mm(mm);
}

/* Open a sample window: clear the young bits of the process's huge pages. */
void hawkeye_base_open(struct hawkeye_base_mm *b)
{
	struct base_walk bw = {};

	if (!hawkeye_mm_alive(b->mm))
		return;
	base_sample(b, &bw);
	b->armed = true;
}

/* Close it: count the huge pages, and those not accessed meanwhile. */
void hawkeye_base_close(struct hawkeye_base_mm *b)
{
	struct base_walk bw = {};

	if (!b->armed || !hawkeye_mm_alive(b->mm))
		return;
	b->armed = false;
	base_sample(b, &bw);
	WRITE_ONCE(b->nr_huge, bw.nr_huge);
	WRITE_ONCE(b->nr_idle, bw.nr_huge - bw.nr_young);
}

/*
 * Populated base pages of the region at @addr (the shared zero page does
 * not count), or -1 if it is not mapped by a page table. For freebsd:
 * HPAGE_PMD_NR for a full reservation, 0 otherwise. Under mmap_lock.
 */
static int base_region_util(struct vm_area_struct *vma, unsigned long addr,
			    enum hawkeye_policy policy)
{
	struct mm_struct *mm = vma->vm_mm;
	pmd_t *pmd = mm_find_pmd(mm, addr);
	int i, util = 0;
	spinlock_t *ptl;
	pte_t *pte;

	if (!pmd)
		return -1;
	if (policy == HAWKEYE_POLICY_FREEBSD) {
		if (!reserve_vma_ok(vma, addr))
			return 0;
		return reserve_full(vma, pmd, addr) ? HPAGE_PMD_NR : 0;
	}
	pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!pte)
		return -1;
	for (i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t ptent = ptep_get(pte + i);

		if (pte_present(ptent) && !is_zero_pfn(pte_pfn(ptent)))
			util++;
	}
	pte_unmap_unlock(pte, ptl);
	return util;
}

/*
 * The first region of @b at or above @from and below @to that the policy
 * promotes now, in address order; its utilisation in *@util.
 */
static bool base_find_range(struct hawkeye_base_mm *b,
			    enum hawkeye_policy policy, bool aggressive,
			    unsigned int threshold, unsigned long from,
			    unsigned long to, unsigned long *addr,
			    unsigned int *util)
{
	struct mm_struct *mm = b->mm;
	struct vm_area_struct *vma;
	struct vma_iterator vmi;
	bool found = false;

	mmap_read_lock(mm);
	vma_iter_init(&vmi, mm, from);
	for_each_vma(vmi, vma) {
		unsigned long a = round_up(max(vma->vm_start, from),
					   HPAGE_PMD_SIZE);
		unsigned long end = round_down(vma->vm_end, HPAGE_PMD_SIZE);

		if (vma->vm_start >= to)
			break;
		if (!base_vma_eligible(vma))
			continue;
		for (; a < end && a < to; a += HPAGE_PMD_SIZE) {
			int u = base_region_util(vma, a, policy);

			cond_resched();
			if (u < 0)
				continue;
			if (policy == HAWKEYE_POLICY_FREEBSD ?
			    u == HPAGE_PMD_NR :
			    ingens_qualifies(u, aggressive, threshold)) {
				*addr = a;
				*util = u;
				found = true;
				goto out;
			}
		}
	}
out:
	mmap_read_unlock(mm);
	return found;
}

/* The next region of @b to promote, from its cursor on, wrapping once. */
static bool base_find(struct hawkeye_base_mm *b, enum hawkeye_policy policy,
		      bool aggressive, unsigned int threshold,
		      unsigned long *addr, unsigned int *util)
{
	unsigned long cursor = b->cursor;

	if (base_find_range(b, policy, aggressive, threshold, cursor,
			    ULONG_MAX, addr, util))
		return true;
	return cursor && base_find_range(b, policy, aggressive, threshold, 0,
					 cursor, addr, util);
}

/*
 * A promotion round of the ingens or freebsd policy over the processes
 * @bs[@nr] (registration order): up to @batch regions. ingens serves the
 * process with the lowest metric first, each process's regions in address
 * order from where it stopped; freebsd promotes full reservations that
 * their last fault did not get promoted (no memory for the work item).
 */
void hawkeye_base_batch(enum hawkeye_policy policy,
			struct hawkeye_base_mm **bs, unsigned int nr,
			unsigned int batch)
{
	unsigned int threshold = READ_ONCE(hawkeye_ingens.util_threshold);
	unsigned int fmfi = hawkeye_fmfi(), i, k = 0, util;
	bool aggressive = fmfi < READ_ONCE(hawkeye_ingens.fmfi_threshold);
	struct hawkeye_base_mm *b;
	unsigned long addr;
	u64 metric;
	int ret;

	if (policy == HAWKEYE_POLICY_INGENS)
		count_vm_event(aggressive ? HAWKEYE_INGENS_ROUND_AGGRESSIVE :
				HAWKEYE_INGENS_ROUND_CONSERVATIVE);
	for (i = 0; i < nr; i++)
		bs[i]->exhausted = !hawkeye_mm_alive(bs[i]->mm);
	while (k < batch) {
		if (policy == HAWKEYE_POLICY_INGENS)
			b = ingens_pick(bs, nr);
		else
			b = base_first(bs, nr);
		if (!b || kthread_should_stop())
			break;
		if (!base_find(b, policy, aggressive, threshold, &addr, &util)) {
			b->exhausted = true;
			continue;
		}
		k++;
		b->cursor = addr + HPAGE_PMD_SIZE;
		metric = base_metric(b);
		if (policy == HAWKEYE_POLICY_INGENS)
			ret = hawkeye_collapse_anon_pmd(b->mm, addr);
		else
			ret = reserve_promote(b->mm, addr);
		if (!ret)
			WRITE_ONCE(b->nr_huge, b->nr_huge + 1);
		hawkeye_base_account(b->mm, policy, addr, util, fmfi, metric,
				     ret);
		if (ret == -ENOMEM)
			break;
		cond_resched();
	}
}

/* The fault-time behaviour of @policy. Under promote.c's policy mutex. */
void hawkeye_base_set_policy(enum hawkeye_policy policy)
{
	bool base = policy == HAWKEYE_POLICY_INGENS ||
		    policy == HAWKEYE_POLICY_FREEBSD;

	if (policy == HAWKEYE_POLICY_FREEBSD)
		static_branch_enable(&hawkeye_reserve_key);
	else
		static_branch_disable(&hawkeye_reserve_key);
	if (base)
		static_branch_enable(&hawkeye_base_fault_key);
	else
		static_branch_disable(&hawkeye_base_fault_key);
}

/* The baselines' lines of /proc/<pid>/hawkeye (@b NULL: zeros). */
void hawkeye_base_proc_show(struct seq_file *m, struct hawkeye_base_mm *b)
{
	unsigned long huge = b ? READ_ONCE(b->nr_huge) : 0;
	unsigned long idle = b ? READ_ONCE(b->nr_idle) : 0;

	seq_printf(m, "huge %lu\n", huge);
	seq_printf(m, "idle_huge %lu\n", idle);
	seq_printf(m, "ingens_metric %llu\n",
		   ingens_metric(huge, idle,
				 READ_ONCE(hawkeye_ingens.idle_penalty)));
}

/* Knobs: /sys/kernel/mm/hawkeye/ingens/. */
static int ingens_set(unsigned int *knob, unsigned int val, unsigned int min,
		      unsigned int max)
{
	if (val < min || val > max)
		return -EINVAL;
	WRITE_ONCE(*knob, val);
	return 0;
}

int hawkeye_ingens_set_util_threshold(unsigned int pct)
{
	return ingens_set(&hawkeye_ingens.util_threshold, pct, 1, 100);
}

int hawkeye_ingens_set_fmfi_threshold(unsigned int pct)
{
	return ingens_set(&hawkeye_ingens.fmfi_threshold, pct, 0, 101);
}

int hawkeye_ingens_set_idle_penalty(unsigned int pct)
{
	return ingens_set(&hawkeye_ingens.idle_penalty, pct, 0, 99);
}

#define INGENS_ATTR(name)						\
static ssize_t ingens_##name##_show(struct kobject *kobj,		\
				    struct kobj_attribute *attr,	\
				    char *buf)				\
{									\
	return sysfs_emit(buf, "%u\n", READ_ONCE(hawkeye_ingens.name));	\
}									\
static ssize_t ingens_##name##_store(struct kobject *kobj,		\
				     struct kobj_attribute *attr,	\
				     const char *buf, size_t count)	\
{									\
	unsigned int val;						\
	int ret;							\
									\
	if (kstrtouint(buf, 10, &val))					\
		return -EINVAL;						\
	ret = hawkeye_ingens_set_##name(val);				\
	return ret ? ret : count;					\
}									\
static struct kobj_attribute ingens_##name##_attr =			\
	__ATTR(name, 0644, ingens_##name##_show, ingens_##name##_store)

INGENS_ATTR(util_threshold);
INGENS_ATTR(fmfi_threshold);
INGENS_ATTR(idle_penalty);

static ssize_t fmfi_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", hawkeye_fmfi());
}

static struct kobj_attribute ingens_fmfi_attr = __ATTR_RO(fmfi);

static struct attribute *ingens_attrs[] = {
	&ingens_util_threshold_attr.attr,
	&ingens_fmfi_threshold_attr.attr,
	&ingens_idle_penalty_attr.attr,
	&ingens_fmfi_attr.attr,
	NULL,
};

const struct attribute_group hawkeye_ingens_group = {
	.name = "ingens",
	.attrs = ingens_attrs,
};

#ifdef CONFIG_HAWKEYE_KUNIT_TEST
#include "tests/baselines-kunit.h"
#endif
