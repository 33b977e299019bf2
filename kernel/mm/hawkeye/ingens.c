// SPDX-License-Identifier: GPL-2.0
/*
 * The ingens promotion policy (Kwon et al., OSDI '16), one of the policies
 * HawkEye is compared with in the same kernel. What it shares with freebsd
 * (freebsd.c) is in baseline.c.
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
#include "promote.h"

#include <trace/events/hawkeye.h>

struct hawkeye_ingens_params hawkeye_ingens = {
	.util_threshold = 90,		/* Ingens-90% */
	.fmfi_threshold = 50,		/* aggressive below an FMFI of 0.5 */
	.idle_penalty = 50,		/* an idle huge page counts twice */
};

/* The per-process state ingens keeps. */
static const struct hawkeye_policy_state ingens_state = { "ingens" };

/* The free memory fragmentation index of several zones, summed up. */
struct ingens_fmfi {
	u64 free;			/* free pages */
	u64 unusable;			/* ... x percent unusable, summed */
};

/*
 * Add a zone with @free free pages, @extfrag percent of which lie in blocks
 * too small for the order (extfrag_for_order(), Gorman's unusable free
 * space index).
 */
static void ingens_fmfi_add(struct ingens_fmfi *f, unsigned long free,
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
static unsigned int ingens_fmfi_value(const struct ingens_fmfi *f)
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
	struct ingens_fmfi f = {};
	struct zone *zone;

	for_each_populated_zone(zone)
		ingens_fmfi_add(&f, zone_page_state(zone, NR_FREE_PAGES),
				extfrag_for_order(zone, HPAGE_PMD_ORDER));
	return ingens_fmfi_value(&f);
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

/**
 * hawkeye_ingens_metric - Ingens' metric of a process
 * @huge: its huge pages at the last sample
 * @idle: how many of them were idle
 *
 * Return: ingens_metric() with the idle_penalty knob.
 */
u64 hawkeye_ingens_metric(unsigned long huge, unsigned long idle)
{
	return ingens_metric(huge, idle, READ_ONCE(hawkeye_ingens.idle_penalty));
}

static u64 ingens_mm_metric(struct hawkeye_mm *hm)
{
	return hawkeye_ingens_metric(READ_ONCE(hm->baseline.nr_huge),
				     READ_ONCE(hm->baseline.nr_idle));
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

		if (hms[i]->baseline.exhausted)
			continue;
		m = ingens_mm_metric(hms[i]);
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

static bool ingens_used_pte(pte_t *pte, pte_t ptent, unsigned long addr,
			    void *util)
{
	if (!is_zero_pfn(pte_pfn(ptent)))
		(*(unsigned int *)util)++;
	return false;
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

	*util = 0;
	if (!pmd || !hawkeye_walk_ptes(mm, pmd, addr, addr + HPAGE_PMD_SIZE,
				       ingens_used_pte, util))
		return false;
	return ingens_qualifies(*util, aggressive,
				READ_ONCE(hawkeye_ingens.util_threshold));
}

static int ingens_promote(struct mm_struct *mm, unsigned long addr)
{
	return hpage_collapse_anon_pmd(mm, addr);
}

static const struct hawkeye_baseline_rules ingens_rules = {
	.name = "ingens",
	.pick = ingens_pick,
	.qualifies = ingens_region,
	.promote = ingens_promote,
};

static void ingens_batch(struct hawkeye_mm **hms, unsigned int nr,
			 unsigned int batch, struct hawkeye_rr_cursor *rr)
{
	unsigned int fmfi = hawkeye_fmfi();

	hawkeye_stat_inc(fmfi < READ_ONCE(hawkeye_ingens.fmfi_threshold) ?
			 HAWKEYE_STAT_INGENS_ROUND_AGGRESSIVE :
			 HAWKEYE_STAT_INGENS_ROUND_CONSERVATIVE);
	hawkeye_baseline_round(&ingens_rules, hms, nr, batch, fmfi);
}

const struct hawkeye_policy_ops hawkeye_ingens_ops = {
	.name = "ingens",
	.state = &ingens_state,
	.start = hawkeye_baseline_start,
	.stop = hawkeye_baseline_stop,
	.sample = hawkeye_baseline_sample,
	.batch = ingens_batch,
	.fault = hawkeye_baseline_register,
	.show = hawkeye_baseline_show,
};

#ifdef CONFIG_HAWKEYE_BASELINES_KUNIT_TEST
#include "tests/ingens-kunit.h"
#endif
