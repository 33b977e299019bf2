// SPDX-License-Identifier: GPL-2.0
/*
 * The ingens promotion policy (Kwon et al., OSDI '16), one of the policies
 * HawkEye is compared with in the same kernel, and what it shares with
 * freebsd (freebsd.c): base page faults, the sampling of huge pages and
 * idle ones, the promotion round.
 *
 * Anonymous faults map base pages only; a 2 MB region is promoted
 * asynchronously once its utilisation (present base pages out of 512)
 * reaches util_threshold percent, or at the first opportunity while the
 * free memory fragmentation index (FMFI) is below fmfi_threshold; the next
 * promotion goes to the process with the lowest promotion metric (its huge
 * pages, an idle one weighing more by the idle penalty), each process's
 * regions in address order.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/compaction.h>
#include <linux/hawkeye.h>
#include <linux/huge_mm.h>
#include <linux/khugepaged.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/mmzone.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "hawkeye.h"

#include <trace/events/hawkeye.h>

/* ingens or freebsd: anonymous faults map base pages only. */
DEFINE_STATIC_KEY_FALSE(hawkeye_base_fault_key);

/**
 * hawkeye_base_fault - hand an anonymous base page fault to the policy
 * @vmf: the fault
 *
 * Called by do_anonymous_page() while the policy handles base page faults
 * (hawkeye_base_faults()).
 *
 * Return: the fault's result, or VM_FAULT_FALLBACK: map a base page as
 * usual.
 */
vm_fault_t hawkeye_base_fault(struct vm_fault *vmf)
{
	const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();

	return ops->fault ? ops->fault(vmf) : VM_FAULT_FALLBACK;
}

struct hawkeye_ingens_params hawkeye_ingens = {
	.util_threshold = 90,		/* Ingens-90% */
	.fmfi_threshold = 50,		/* aggressive below an FMFI of 0.5 */
	.idle_penalty = 50,		/* an idle huge page counts twice */
};

/* The per-process state ingens keeps. */
static const struct hawkeye_policy_state ingens_state = { "ingens" };

/* The free memory fragmentation index of several zones, summed up. */
struct base_fmfi {
	u64 free;			/* free pages */
	u64 unusable;			/* ... x percent unusable, summed */
};

/*
 * Add a zone with @free free pages, @extfrag percent of which lie in blocks
 * too small for the order (extfrag_for_order(), Gorman's unusable free
 * space index).
 */
static void base_fmfi_add(struct base_fmfi *f, unsigned long free,
			  unsigned int extfrag)
{
	f->free += free;
	f->unusable += (u64)free * extfrag;
}

/*
 * The share of the zones' free memory, in percent, that cannot serve the
 * order. No free memory at all counts as 100 (extfrag_for_order() counts
 * an empty zone as 0, which weighs nothing here).
 */
static unsigned int base_fmfi_value(const struct base_fmfi *f)
{
	return f->free ? div64_u64(f->unusable, f->free) : 100;
}

/**
 * hawkeye_fmfi() - the free memory fragmentation index for huge pages
 *
 * Return: the share of all free memory, in percent, that cannot serve an
 * order-9 allocation: each zone's extfrag_for_order(), weighted by its
 * free memory. No zone->lock: an estimate, as /proc/buddyinfo's.
 */
unsigned int hawkeye_fmfi(void)
{
	struct base_fmfi f = {};
	struct zone *zone;

	for_each_populated_zone(zone)
		base_fmfi_add(&f, zone_page_state(zone, NR_FREE_PAGES),
			      extfrag_for_order(zone, HPAGE_PMD_ORDER));
	return base_fmfi_value(&f);
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

static u64 base_metric(struct hawkeye_mm *hm)
{
	return ingens_metric(READ_ONCE(hm->base.nr_huge),
			     READ_ONCE(hm->base.nr_idle),
			     READ_ONCE(hawkeye_ingens.idle_penalty));
}

/*
 * The process of @hms[@nr] that gets the next promotion: the lowest metric
 * among those not exhausted in this round, the first registered among
 * equals. NULL if all are exhausted.
 */
static struct hawkeye_mm *ingens_pick(struct hawkeye_mm **hms,
				      unsigned int nr)
{
	struct hawkeye_mm *best = NULL;
	u64 best_metric = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		u64 m;

		if (hms[i]->base.exhausted)
			continue;
		m = base_metric(hms[i]);
		if (!best || m < best_metric) {
			best = hms[i];
			best_metric = m;
		}
	}
	return best;
}

/* Is a region with @util present base pages promoted by ingens now? */
static bool ingens_qualifies(unsigned int util, bool aggressive,
			     unsigned int threshold)
{
	return util && (aggressive || util * 100 >= threshold * HPAGE_PMD_NR);
}

/*
 * The populated base pages of the region at @addr (the shared zero page
 * does not count); false if it is not mapped by a page table, or too few
 * for ingens. Under mmap_lock.
 */
static bool ingens_region(struct vm_area_struct *vma, unsigned long addr,
			  bool aggressive, unsigned int *util)
{
	struct mm_struct *mm = vma->vm_mm;
	pmd_t *pmd = mm_find_pmd(mm, addr);
	spinlock_t *ptl;
	pte_t *pte;
	int i;

	if (!pmd)
		return false;
	pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!pte)
		return false;
	*util = 0;
	for (i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t ptent = ptep_get(pte + i);

		if (pte_present(ptent) && !is_zero_pfn(pte_pfn(ptent)))
			(*util)++;
	}
	pte_unmap_unlock(pte, ptl);
	return ingens_qualifies(*util, aggressive,
				READ_ONCE(hawkeye_ingens.util_threshold));
}

/**
 * hawkeye_base_start - anonymous faults map base pages from now on
 *
 * The start hook of ingens and freebsd: turns the fault hook on.
 */
void hawkeye_base_start(void)
{
	static_branch_enable(&hawkeye_base_fault_key);
}

/**
 * hawkeye_base_stop - anonymous faults may map huge pages again
 *
 * The stop hook of ingens and freebsd: turns the fault hook off.
 */
void hawkeye_base_stop(void)
{
	static_branch_disable(&hawkeye_base_fault_key);
}

/**
 * hawkeye_base_register - register a process at a base page fault
 * @vmf: the anonymous fault, under ingens or freebsd
 *
 * A huge page fault would have registered the process with khugepaged,
 * and so with the promotion thread: do it here (once the VMA has an
 * anon_vma; the MMF_VM_HUGEPAGE test makes it cheap after).
 *
 * Return: VM_FAULT_FALLBACK: the caller maps a base page.
 */
vm_fault_t hawkeye_base_register(struct vm_fault *vmf)
{
	khugepaged_enter_vma(vmf->vma, vmf->vma->vm_flags);
	return VM_FAULT_FALLBACK;
}

/* The THPs sampling counts: anonymous, not the huge zero page. */
static struct folio *base_thp(pmd_t pmdval)
{
	if (!pmd_present(pmdval) || is_huge_zero_pmd(pmdval) ||
	    !folio_test_anon(pmd_folio(pmdval)))
		return NULL;
	return pmd_folio(pmdval);
}

/**
 * hawkeye_base_sample - the sample hook of ingens and freebsd
 * @hm: the process
 * @pass: 0 opens a sample window, any other value closes it
 *
 * Opening clears the accessed bits of the process's huge pages; closing
 * counts them, and those not accessed meanwhile (Ingens' idle pages).
 */
void hawkeye_base_sample(struct hawkeye_mm *hm, unsigned long pass)
{
	struct hawkeye_base_mm *b = &hm->base;
	struct hawkeye_thp_count count = {};

	if (!hawkeye_mm_get(hm->mm))
		return;
	if (!pass) {
		hawkeye_count_thps(hm->mm, vma_is_anonymous, base_thp, &count);
		b->armed = true;
	} else if (b->armed) {
		b->armed = false;
		hawkeye_count_thps(hm->mm, vma_is_anonymous, base_thp, &count);
		WRITE_ONCE(b->nr_huge, count.nr);
		WRITE_ONCE(b->nr_idle, count.nr - count.young);
	}
	if (pass) {
		mutex_lock(&hm->lock);
		hm->samples++;
		mutex_unlock(&hm->lock);
	}
	mmput(hm->mm);
}

struct base_find {
	const struct hawkeye_base_rules *rules;
	bool aggressive;
	unsigned int util;
};

static bool base_find_region(struct vm_area_struct *vma, unsigned long addr,
			     void *arg)
{
	struct base_find *f = arg;

	cond_resched();
	return !f->rules->qualifies(vma, addr, f->aggressive, &f->util);
}

/*
 * The next region of @hm's process to promote, in address order from its
 * cursor on, wrapping once; its utilisation in f->util.
 */
static bool base_find(struct hawkeye_mm *hm, struct base_find *f,
		      unsigned long *addr)
{
	unsigned long cursor = hm->base.cursor;
	struct mm_struct *mm = hm->mm;
	bool found;

	mmap_read_lock(mm);
	*addr = hawkeye_walk_regions(mm, cursor, ULONG_MAX, base_find_region, f);
	found = *addr != ULONG_MAX;
	if (!found && cursor) {
		*addr = hawkeye_walk_regions(mm, 0, cursor, base_find_region, f);
		found = *addr != cursor;
	}
	mmap_read_unlock(mm);
	return found;
}

/**
 * hawkeye_base_account() - count a promotion attempt of ingens or freebsd
 * @mm: the process's mm, held by the caller
 * @policy: the policy's name, for the trace event
 * @addr: the region
 * @util: its base pages in use
 * @fmfi: the fragmentation index at the time
 * @metric: the process's Ingens metric before it
 * @result: 0 (promoted) or a negative errno
 */
void hawkeye_base_account(struct mm_struct *mm, const char *policy,
			  unsigned long addr, unsigned int util,
			  unsigned int fmfi, u64 metric, int result)
{
	struct hawkeye_mm *hm = hawkeye_mm_find(mm);

	if (!hm) {
		if (result)
			hawkeye_stat_inc(HAWKEYE_STAT_PROMOTE_FAILED);
		else
			count_vm_event(HAWKEYE_PROMOTE_SUCCESS);
		return;
	}
	trace_hawkeye_base_promote(hawkeye_mm_pid(hm), policy, addr, util,
				   fmfi, metric, result);
	hawkeye_mm_account(hm, result);
	hawkeye_mm_put(hm);
}

/**
 * hawkeye_base_round() - a promotion round of ingens or freebsd
 * @rules: what the policy promotes, and how
 * @hms: the registered processes, in registration order
 * @nr: how many
 * @batch: the most regions to promote
 * @fmfi: the fragmentation index at the start of the round
 *
 * Serves the process @rules->pick() names, its regions in address order
 * from where it stopped, until @batch regions are promoted or no process
 * has one left. The processes' address spaces are held for the round.
 */
void hawkeye_base_round(const struct hawkeye_base_rules *rules,
			struct hawkeye_mm **hms, unsigned int nr,
			unsigned int batch, unsigned int fmfi)
{
	struct base_find f = {
		.rules = rules,
		.aggressive = fmfi < READ_ONCE(hawkeye_ingens.fmfi_threshold),
	};
	struct hawkeye_mm **held, *hm;
	unsigned int i, n = 0, k = 0;
	unsigned long addr;
	u64 metric;
	int ret;

	held = kmalloc_array(nr, sizeof(*held), GFP_KERNEL);
	if (!held)
		return;
	/* For the round only: a batch of collapses, no sleep. */
	for (i = 0; i < nr; i++) {
		if (hawkeye_mm_get(hms[i]->mm)) {
			hms[i]->base.exhausted = false;
			held[n++] = hms[i];
		}
	}
	while (k < batch && !kthread_should_stop()) {
		hm = rules->pick(held, n);
		if (!hm)
			break;
		if (!base_find(hm, &f, &addr)) {
			hm->base.exhausted = true;
			continue;
		}
		k++;
		hm->base.cursor = addr + HPAGE_PMD_SIZE;
		metric = base_metric(hm);
		ret = rules->promote(hm->mm, addr);
		if (!ret)
			WRITE_ONCE(hm->base.nr_huge, hm->base.nr_huge + 1);
		hawkeye_base_account(hm->mm, rules->name, addr, f.util, fmfi,
				     metric, ret);
		if (ret == -ENOMEM)
			break;
		/* Its cgroup refused (limit or cap): not again this round. */
		if (ret == -EBUSY)
			hm->base.exhausted = true;
		cond_resched();
	}
	for (i = 0; i < n; i++)
		mmput(held[i]->mm);
	kfree(held);
}

/**
 * hawkeye_base_show() - ingens's lines of /proc/<pid>/hawkeye
 * @m: the file
 * @hm: the process's record, or NULL: zeros
 */
void hawkeye_base_show(struct seq_file *m, struct hawkeye_mm *hm)
{
	unsigned long huge = hm ? READ_ONCE(hm->base.nr_huge) : 0;
	unsigned long idle = hm ? READ_ONCE(hm->base.nr_idle) : 0;

	seq_printf(m, "huge %lu\n", huge);
	seq_printf(m, "idle_huge %lu\n", idle);
	seq_printf(m, "ingens_metric %llu\n",
		   ingens_metric(huge, idle,
				 READ_ONCE(hawkeye_ingens.idle_penalty)));
}

static int ingens_promote(struct mm_struct *mm, unsigned long addr)
{
	return hpage_collapse_anon_pmd(mm, addr);
}

static const struct hawkeye_base_rules ingens_rules = {
	.name = "ingens",
	.pick = ingens_pick,
	.qualifies = ingens_region,
	.promote = ingens_promote,
};

static void ingens_batch(struct hawkeye_mm **hms, unsigned int nr,
			 unsigned int batch, struct hawkeye_rr *rr)
{
	unsigned int fmfi = hawkeye_fmfi();

	hawkeye_stat_inc(fmfi < READ_ONCE(hawkeye_ingens.fmfi_threshold) ?
			 HAWKEYE_STAT_INGENS_ROUND_AGGRESSIVE :
			 HAWKEYE_STAT_INGENS_ROUND_CONSERVATIVE);
	hawkeye_base_round(&ingens_rules, hms, nr, batch, fmfi);
}

const struct hawkeye_policy_ops hawkeye_ingens_ops = {
	.name = "ingens",
	.state = &ingens_state,
	.start = hawkeye_base_start,
	.stop = hawkeye_base_stop,
	.sample = hawkeye_base_sample,
	.batch = ingens_batch,
	.fault = hawkeye_base_register,
	.show = hawkeye_base_show,
};

#ifdef CONFIG_HAWKEYE_BASELINES_KUNIT_TEST
#include "tests/ingens-kunit.h"
#endif
