// SPDX-License-Identifier: GPL-2.0
/*
 * What the baseline policies, ingens (ingens.c) and freebsd (freebsd.c),
 * share: anonymous faults that map base pages, the sampling of a process's
 * huge pages and idle ones, and the promotion round that serves one
 * process at a time, its regions in address order.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#include <linux/mm.h>
#include <linux/hawkeye.h>
#include <linux/huge_mm.h>
#include <linux/khugepaged.h>
#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "hawkeye.h"
#include "promote.h"

#include <trace/events/hawkeye.h>

/* ingens or freebsd: anonymous faults map base pages only. */
DEFINE_STATIC_KEY_FALSE(hawkeye_policy_fault_key);

/**
 * hawkeye_policy_fault - hand an anonymous base page fault to the policy
 * @vmf: the fault
 *
 * Called by do_anonymous_page() while the policy handles base page faults
 * (hawkeye_policy_faults()).
 *
 * Return: the fault's result, or VM_FAULT_FALLBACK: map a base page as
 * usual.
 */
vm_fault_t hawkeye_policy_fault(struct vm_fault *vmf)
{
	const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();

	return ops->fault ? ops->fault(vmf) : VM_FAULT_FALLBACK;
}

/**
 * hawkeye_baseline_start - anonymous faults map base pages from now on
 *
 * The start hook of ingens and freebsd: turns the fault hook on.
 */
void hawkeye_baseline_start(void)
{
	static_branch_enable(&hawkeye_policy_fault_key);
}

/**
 * hawkeye_baseline_stop - anonymous faults may map huge pages again
 *
 * The stop hook of ingens and freebsd: turns the fault hook off.
 */
void hawkeye_baseline_stop(void)
{
	static_branch_disable(&hawkeye_policy_fault_key);
}

/**
 * hawkeye_baseline_register - register a process at a base page fault
 * @vmf: the anonymous fault, under ingens or freebsd
 *
 * A huge page fault would have registered the process with khugepaged,
 * and so with the promotion thread: do it here (once the VMA has an
 * anon_vma; the MMF_VM_HUGEPAGE test makes it cheap after).
 *
 * Return: VM_FAULT_FALLBACK: the caller maps a base page.
 */
vm_fault_t hawkeye_baseline_register(struct vm_fault *vmf)
{
	khugepaged_enter_vma(vmf->vma, vmf->vma->vm_flags);
	return VM_FAULT_FALLBACK;
}

/* The THPs sampling counts: anonymous, not the huge zero page. */
static struct folio *baseline_thp(pmd_t pmdval)
{
	if (!pmd_present(pmdval) || is_huge_zero_pmd(pmdval) ||
	    !folio_test_anon(pmd_folio(pmdval)))
		return NULL;
	return pmd_folio(pmdval);
}

/**
 * hawkeye_baseline_sample - the sample hook of ingens and freebsd
 * @hm: the process
 * @pass: 0 opens a sample window, any other value closes it
 *
 * Opening clears the accessed bits of the process's huge pages; closing
 * counts them, and those not accessed meanwhile (Ingens' idle pages).
 */
void hawkeye_baseline_sample(struct hawkeye_mm *hm, unsigned long pass)
{
	struct hawkeye_baseline_mm *b = &hm->baseline;
	struct hawkeye_thp_count count = {};

	if (!hawkeye_mmget_alive(hm->mm))
		return;
	if (!pass) {
		hawkeye_count_thps(hm->mm, vma_is_anonymous, baseline_thp, &count);
		b->armed = true;
	} else if (b->armed) {
		b->armed = false;
		hawkeye_count_thps(hm->mm, vma_is_anonymous, baseline_thp, &count);
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

struct baseline_find {
	const struct hawkeye_baseline_rules *rules;
	bool aggressive;
	unsigned int util;
};

static bool baseline_find_region(struct vm_area_struct *vma, unsigned long addr,
				 void *arg)
{
	struct baseline_find *f = arg;

	cond_resched();
	return !f->rules->qualifies(vma, addr, f->aggressive, &f->util);
}

/*
 * The next region of @hm's process to promote, in address order from its
 * cursor on, wrapping once; its utilisation in f->util.
 */
static bool baseline_find(struct hawkeye_mm *hm, struct baseline_find *f,
			  unsigned long *addr)
{
	unsigned long cursor = hm->baseline.cursor;
	struct mm_struct *mm = hm->mm;
	bool found;

	mmap_read_lock(mm);
	*addr = hawkeye_walk_regions(mm, cursor, ULONG_MAX, baseline_find_region, f);
	found = *addr != ULONG_MAX;
	if (!found && cursor) {
		*addr = hawkeye_walk_regions(mm, 0, cursor, baseline_find_region, f);
		found = *addr != cursor;
	}
	mmap_read_unlock(mm);
	return found;
}

/**
 * hawkeye_baseline_account() - count a promotion attempt of ingens or freebsd
 * @mm: the process's mm, held by the caller
 * @policy: the policy's name, for the trace event
 * @addr: the region
 * @util: its base pages in use
 * @fmfi: the fragmentation index at the time
 * @metric: the process's Ingens metric before it
 * @result: 0 (promoted) or a negative errno
 */
void hawkeye_baseline_account(struct mm_struct *mm, const char *policy,
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
	trace_hawkeye_baseline_promote(hawkeye_mm_pid(hm), policy, addr, util,
				       fmfi, metric, result);
	hawkeye_mm_account(hm, result);
	hawkeye_mm_put(hm);
}

/**
 * hawkeye_baseline_round() - a promotion round of ingens or freebsd
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
void hawkeye_baseline_round(const struct hawkeye_baseline_rules *rules,
			    struct hawkeye_mm **hms, unsigned int nr,
			unsigned int batch, unsigned int fmfi)
{
	struct baseline_find f = {
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
		if (hawkeye_mmget_alive(hms[i]->mm)) {
			hms[i]->baseline.exhausted = false;
			held[n++] = hms[i];
		}
	}
	while (k < batch && !kthread_should_stop()) {
		hm = rules->pick(held, n);
		if (!hm)
			break;
		if (!baseline_find(hm, &f, &addr)) {
			hm->baseline.exhausted = true;
			continue;
		}
		k++;
		hm->baseline.cursor = addr + HPAGE_PMD_SIZE;
		metric = hawkeye_ingens_metric(READ_ONCE(hm->baseline.nr_huge),
					       READ_ONCE(hm->baseline.nr_idle));
		ret = rules->promote(hm->mm, addr);
		if (!ret)
			WRITE_ONCE(hm->baseline.nr_huge, hm->baseline.nr_huge + 1);
		hawkeye_baseline_account(hm->mm, rules->name, addr, f.util, fmfi,
					 metric, ret);
		if (ret == -ENOMEM)
			break;
		/* Its cgroup refused (limit or cap): not again this round. */
		if (ret == -EBUSY)
			hm->baseline.exhausted = true;
		cond_resched();
	}
	for (i = 0; i < n; i++)
		mmput(held[i]->mm);
	kfree(held);
}

/**
 * hawkeye_baseline_show() - the baselines' lines of /proc/<pid>/hawkeye
 * @m: the file
 * @hm: the process's record, or NULL: zeros
 */
void hawkeye_baseline_show(struct seq_file *m, struct hawkeye_mm *hm)
{
	unsigned long huge = hm ? READ_ONCE(hm->baseline.nr_huge) : 0;
	unsigned long idle = hm ? READ_ONCE(hm->baseline.nr_idle) : 0;

	seq_printf(m, "huge %lu\n", huge);
	seq_printf(m, "idle_huge %lu\n", idle);
	seq_printf(m, "ingens_metric %llu\n", hawkeye_ingens_metric(huge, idle));
}
