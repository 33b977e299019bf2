// SPDX-License-Identifier: GPL-2.0
/*
 * The freebsd promotion policy (Navarro et al., OSDI '02, FreeBSD's
 * vm_reserv), one of the policies HawkEye is compared with in the same
 * kernel: 2 MB reservations.
 *
 * The first fault in an empty aligned 2 MB region of an anonymous VMA that
 * may have huge pages reserves a 2 MB physical block (a PMD-order folio,
 * mapped by nothing) and maps the faulting base page from it; later faults
 * in the region map the matching base page of the block. Once all 512 are
 * mapped, the region is promoted in place: the page table is replaced by
 * a PMD mapping of the same folio, nothing is copied. A reservation is a
 * partially mapped large folio on the deferred split queue, so memory
 * pressure (the deferred split shrinker, reclaim) breaks it and frees its
 * unmapped pages. Sampling and the promotion round are shared with ingens (baseline.c).
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/hawkeye.h>
#include <linux/huge_mm.h>
#include <linux/khugepaged.h>
#include <linux/memcontrol.h>
#include <linux/oom.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/userfaultfd_k.h>
#include <linux/workqueue.h>

#include "../internal.h"
#include "hawkeye.h"
#include "promote.h"

/* The per-process state freebsd keeps. */
static const struct hawkeye_policy_state freebsd_state = { "freebsd" };

/* Between start and stop: a queued in-place promotion may run. */
static bool freebsd_on;

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

	if (READ_ONCE(freebsd_on) && hawkeye_mm_alive(rw->mm)) {
		ret = reserve_promote(rw->mm, rw->addr);
		hawkeye_baseline_account(rw->mm, "freebsd", rw->addr, HPAGE_PMD_NR,
					 hawkeye_fmfi(), 0, ret);
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
		folio_get(folio);
		map_anon_folio_page(vmf, folio, page, pte + idx);
		folio_unlock(folio);
		pte_unmap_unlock(pte, vmf->ptl);
		hawkeye_stat_inc(HAWKEYE_STAT_FREEBSD_RESERVE_PAGES);
		if (mapped + 1 == HPAGE_PMD_NR)
			reserve_queue_promote(mm, haddr);
		return 0;
	}
	pte_unmap_unlock(pte, vmf->ptl);
	/* Populated without a usable reservation: base pages, as FreeBSD. */
	if (present)
		return VM_FAULT_FALLBACK;

	/* No reservation that could never be promoted. */
	if (hawkeye_huge_capped(mm, false))
		return VM_FAULT_FALLBACK;
	gfp = vma_thp_gfp_mask(vma);
	folio = vma_alloc_folio(gfp, HPAGE_PMD_ORDER, vma, haddr, true);
	if (!folio) {
		hawkeye_stat_inc(HAWKEYE_STAT_FREEBSD_RESERVE_FAILED);
		return VM_FAULT_FALLBACK;
	}
	if (mem_cgroup_charge(folio, mm, gfp)) {
		folio_put(folio);
		hawkeye_stat_inc(HAWKEYE_STAT_FREEBSD_RESERVE_FAILED);
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
	folio_prepare_new_anon(folio, vma, haddr);
	map_anon_folio_page(vmf, folio, page, pte + idx);
	folio_add_lru_vma(folio, vma);
	/* Partially mapped: memory pressure splits it, freeing the rest. */
	deferred_split_folio(folio, true);
	pte_unmap_unlock(pte, vmf->ptl);
	hawkeye_stat_inc(HAWKEYE_STAT_FREEBSD_RESERVE);
	hawkeye_stat_inc(HAWKEYE_STAT_FREEBSD_RESERVE_PAGES);
	return 0;
}

/*
 * An anonymous base page fault under freebsd: registers the process for
 * promotion, as under ingens, and maps the page from its region's
 * reservation.
 */
static vm_fault_t freebsd_fault(struct vm_fault *vmf)
{
	hawkeye_baseline_register(vmf);
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
 * same folio, nothing is copied or allocated.
 *
 * Return: 0, -EEXIST if the region is huge already, -EINVAL if it is no
 * longer an eligible region, -EBUSY if the memory cgroup's cap forbids it,
 * -EAGAIN if it is not a full reservation (or the folio is busy).
 */
static int reserve_promote(struct mm_struct *mm, unsigned long haddr)
{
	unsigned int present, mapped;
	struct vm_area_struct *vma;
	struct folio *folio;
	spinlock_t *ptl;
	int ret = -EINVAL;
	pmd_t *pmd;
	pte_t *pte;

	mmap_write_lock(mm);
	vma = vma_lookup(mm, haddr);
	if (!vma || !reserve_vma_ok(vma, haddr) || !vma->anon_vma)
		goto out;
	pmd = mm_find_pmd(mm, haddr);
	if (!pmd)
		goto out;
	if (pmd_trans_huge(pmdp_get_lockless(pmd))) {
		ret = -EEXIST;
		goto out;
	}
	ret = -EBUSY;
	if (hawkeye_huge_capped(mm, true))
		goto out;
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

	ret = collapse_anon_folio_in_place(vma, haddr, pmd, folio);
	if (!ret)
		hawkeye_stat_inc(HAWKEYE_STAT_FREEBSD_PROMOTE_INPLACE);
	folio_unlock(folio);
	folio_put(folio);
out:
	mmap_write_unlock(mm);
	return ret;
}

/* The first process not exhausted in this round, or NULL. */
static struct hawkeye_mm *freebsd_pick(struct hawkeye_mm **hms,
				       unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (!hms[i]->baseline.exhausted)
			return hms[i];
	return NULL;
}

/* Is the region at @addr a full reservation? Under mmap_lock. */
static bool freebsd_region(struct vm_area_struct *vma, unsigned long addr,
			   bool aggressive, unsigned int *util)
{
	pmd_t *pmd = mm_find_pmd(vma->vm_mm, addr);

	*util = HPAGE_PMD_NR;
	return pmd && reserve_vma_ok(vma, addr) && reserve_full(vma, pmd, addr);
}

static const struct hawkeye_baseline_rules freebsd_rules = {
	.name = "freebsd",
	.pick = freebsd_pick,
	.qualifies = freebsd_region,
	.promote = reserve_promote,
};

/*
 * A round promotes the full reservations whose last fault did not get
 * them promoted (no memory for the work item).
 */
static void freebsd_batch(struct hawkeye_mm **hms, unsigned int nr,
			  unsigned int batch, struct hawkeye_rr_cursor *rr)
{
	hawkeye_baseline_round(&freebsd_rules, hms, nr, batch, hawkeye_fmfi());
}

static void freebsd_start(void)
{
	WRITE_ONCE(freebsd_on, true);
	hawkeye_baseline_start();
}

static void freebsd_stop(void)
{
	hawkeye_baseline_stop();
	WRITE_ONCE(freebsd_on, false);
}

const struct hawkeye_policy_ops hawkeye_freebsd_ops = {
	.name = "freebsd",
	.state = &freebsd_state,
	.start = freebsd_start,
	.stop = freebsd_stop,
	.sample = hawkeye_baseline_sample,
	.batch = freebsd_batch,
	.fault = freebsd_fault,
	.show = hawkeye_baseline_show,
};
