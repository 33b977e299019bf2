// SPDX-License-Identifier: GPL-2.0
/*
 * The access_map: the per-process state of HawkEye's own promotion
 * policies, hawkeye-g and hawkeye-pmu (order.c), which promote regions in
 * the order of their processes' maps.
 *
 * At each sample pass the promotion thread clears the accessed bits of
 * the base pages of every eligible 2 MB region (one still mapped by a page
 * table), waits sample_window_ms and counts the accessed bits set again:
 * the region's access coverage, 0 to 512. An exponential moving average
 * of it puts the region in one of HAWKEYE_NR_BUCKETS buckets of its
 * process's access_map; a region that moves up goes to the head of its
 * new bucket, one that moves down to the tail. A region promoted (with
 * khugepaged's own code and limits) leaves the map.
 *
 * Both policies keep the same state, so a switch between them keeps every
 * map.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/bsearch.h>
#include <linux/hawkeye.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/swap.h>
#include <linux/vmstat.h>
#include <linux/xarray.h>
#include <asm/tlbflush.h>

#include "../internal.h"
#include "hawkeye.h"
#include "promote.h"

#include <trace/events/hawkeye.h>

/*
 * Regions sampled per mmap_lock hold: 4096 PTEs, khugepaged's default
 * pages_to_scan. A writer waiting for the lock ends a chunk sooner.
 */
#define MAP_CHUNK		8

/* The per-process state hawkeye-g and hawkeye-pmu keeps. */
const struct hawkeye_policy_state hawkeye_access_map_state = { "access_map" };

/* The bucket of an access coverage (EMA) of 0..HPAGE_PMD_NR. */
static unsigned int map_bucket(unsigned int ema)
{
	return min(ema / HAWKEYE_BUCKET_WIDTH, HAWKEYE_NR_BUCKETS - 1);
}

/* Exponential moving average, @weight percent to the new @coverage. */
static unsigned int map_ema(unsigned int old, unsigned int coverage,
			    unsigned int weight)
{
	return (weight * coverage + (100 - weight) * old) / 100;
}

/**
 * hawkeye_map_place - place a region of a process's access map
 * @hm: the process
 * @r: the region, new (@fresh, its node an empty list) or in the map
 * @ema: its access coverage, 0..HPAGE_PMD_NR
 * @best: the best order for it (hawkeye_best_order())
 * @fresh: @r is new
 *
 * A region that moves up goes to
 * the head of its bucket, one that moves down to the tail, one that stays
 * in its bucket keeps its place. A new region, or one back from the
 * smaller list, goes to the tail, behind those already there. With
 * promote/best_size on, a region best at a size below 2 MB goes to the
 * smaller list instead, which promotion does not look at: a collapse
 * would make it huge where its use asks for less.
 */
void hawkeye_map_place(struct hawkeye_mm *hm, struct hawkeye_region *r,
		       unsigned int ema, unsigned int best, bool fresh)
{
	bool smaller = READ_ONCE(hawkeye_promote.best_size) &&
		       best < HPAGE_PMD_ORDER;
	unsigned int b = map_bucket(ema);

	if (fresh) {
		hm->map.nr_regions++;
	} else {
		hm->map.nr[r->bucket]--;
		hm->map.nr_best[r->best_order]--;
		hm->map.overhead -= r->ema;
	}
	if (!fresh && !r->smaller && !smaller && b != r->bucket) {
		hm->map.arrived |= BIT(b);
		hm->map.departed |= BIT(r->bucket);
	}
	if (smaller)
		list_move_tail(&r->node, &hm->map.smaller);
	else if (!fresh && !r->smaller && b > r->bucket)
		list_move(&r->node, &hm->map.buckets[b]);
	else if (fresh || r->smaller || b < r->bucket)
		list_move_tail(&r->node, &hm->map.buckets[b]);
	hm->map.nr[b]++;
	hm->map.nr_best[best]++;
	hm->map.overhead += ema;
	r->ema = ema;
	r->bucket = b;
	r->best_order = best;
	r->smaller = smaller;
}

/*
 * A region new to @hm's map, not yet placed: it has no sample until a
 * window closes on it. NULL without memory: it waits for the next pass.
 */
static struct hawkeye_region *map_add(struct hawkeye_mm *hm, unsigned long addr)
{
	struct hawkeye_region *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	r->addr = addr;
	INIT_LIST_HEAD(&r->node);
	if (xa_insert(&hm->map.regions, addr >> PMD_SHIFT, r, GFP_KERNEL)) {
		kfree(r);
		return NULL;
	}
	return r;
}

/**
 * hawkeye_map_remove - take a region out of a process's access map
 * @hm: the process, its lock held
 * @r: the region, freed
 */
void hawkeye_map_remove(struct hawkeye_mm *hm, struct hawkeye_region *r)
{
	xa_erase(&hm->map.regions, r->addr >> PMD_SHIFT);
	if (!list_empty(&r->node)) {	/* placed */
		list_del(&r->node);
		hm->map.nr[r->bucket]--;
		hm->map.nr_best[r->best_order]--;
		hm->map.nr_regions--;
		hm->map.overhead -= r->ema;
	}
	kfree(r);
}

/**
 * hawkeye_map_clear - empty a process's access map
 * @hm: the process
 */
void hawkeye_map_clear(struct hawkeye_mm *hm)
{
	struct hawkeye_region *r;
	unsigned long index;

	/* A region per 2 MB mapped: a large process has millions. */
	xa_for_each(&hm->map.regions, index, r) {
		hawkeye_map_remove(hm, r);
		cond_resched();
	}
}

/**
 * hawkeye_map_measured - a process's measured MMU overhead
 * @hm: the process
 *
 * Return: its measurement (1/100 %) if it is recent enough (pmu_ttl_ms),
 * else -1.
 */
int hawkeye_map_measured(struct hawkeye_mm *hm)
{
	int overhead = READ_ONCE(hm->map.measured);
	unsigned long ttl = msecs_to_jiffies(READ_ONCE(hawkeye_promote.pmu_ttl_ms));

	if (overhead < 0 || time_after(jiffies, READ_ONCE(hm->map.measured_at) + ttl))
		return -1;
	return overhead;
}

/* A counting pass over a process's regions. */
struct map_walk {
	struct hawkeye_mm *hm;
	unsigned long pass;
	unsigned int weight;		/* of the new sample in the EMA */
	pid_t pid;			/* who, for the trace */
	unsigned long populated;	/* pages mapped during the window */
};

/*
 * Read the accessed bits of the region at @addr (hawkeye_young_ptes()) and
 * find its entry in @hm's map, adding one if it is new. Returns the entry;
 * NULL if the region has no page table or no entry could be added. *@nr
 * gets the bits set, *@present the PTEs present (the entry's last count
 * where no PTE was read).
 */
static struct hawkeye_region *map_young(struct hawkeye_mm *hm,
					struct vm_area_struct *vma,
					unsigned long addr, unsigned long *young,
					int *nr, unsigned int *present)
{
	struct hawkeye_region *r = xa_load(&hm->map.regions, addr >> PMD_SHIFT);
	bool per_page = r && r->per_page;

	*present = r ? r->present : 0;
	*nr = hawkeye_young_ptes(vma, addr, young, &hm->map.skipped, present,
				 &per_page);
	if (*nr < 0)
		return NULL;
	if (!r)
		r = map_add(hm, addr);
	if (r)
		r->per_page = per_page;
	return r;
}

/*
 * Open a window on the region at @addr: clear its accessed bits, and note
 * how many pages are mapped, for the count to tell population from use.
 */
static void map_clear_region(struct vm_area_struct *vma, unsigned long addr,
			     void *arg)
{
	unsigned int present;
	int nr;
	struct hawkeye_region *r = map_young(arg, vma, addr, NULL, &nr,
					     &present);

	if (r)
		r->present = present;
}

/*
 * Open a sample window on @hm: clear the accessed bits of its eligible
 * regions, and flush its TLB entries so that the next access sets them.
 * The flush is needed even where no bit was set: a count where secondary
 * MMUs are registered clears bits without one, and a cached translation
 * would not set them again.
 */
static void map_clear_mm(struct hawkeye_mm *hm)
{
	long seen = hawkeye_walk_mm(hm->mm, MAP_CHUNK, map_clear_region,
				    hm);

	if (seen < 0)
		return;
	if (seen && hawkeye_mmget_alive(hm->mm)) {
		flush_tlb_mm(hm->mm);
		mmput(hm->mm);
	}
	hm->map.armed = true;
}

/* Record a coverage sample of the region at @addr. */
static void map_count_region(struct vm_area_struct *vma, unsigned long addr,
			     void *arg)
{
	struct map_walk *w = arg;
	struct hawkeye_mm *hm = w->hm;
	DECLARE_BITMAP(young, HPAGE_PMD_NR);
	unsigned int ema, best, populated, present;
	struct hawkeye_region *r;
	int coverage;
	bool fresh;

	/* New if the region was not mapped when the window opened. */
	r = map_young(hm, vma, addr, young, &coverage, &present);
	if (!r)
		return;
	best = hawkeye_best_order(young, BIT(0) |
				  thp_vma_allowable_orders(vma, vma->vm_flags,
							   TVA_ENFORCE_SYSFS,
							   THP_ORDERS_ALL_ANON),
				  hawkeye_debloat_threshold());
	/*
	 * A page mapped during the window is young from the fault that mapped
	 * it: that is population, not use. A process writing its memory once
	 * (initialising it) would otherwise rank every region it wrote as hot.
	 * The order above is chosen from every young page, populated ones
	 * included: they hold data that a folio of any size has to map.
	 */
	populated = present - min(present, r->present);
	w->populated += populated;
	populated = min_t(unsigned int, populated, coverage);
	coverage -= populated;
	r->present = present;
	fresh = list_empty(&r->node);
	ema = map_ema(fresh ? 0 : r->ema, coverage, w->weight);
	mutex_lock(&hm->lock);
	hawkeye_map_place(hm, r, ema, best, fresh);
	r->pass = w->pass;
	if (r->smaller)
		hawkeye_stat_inc(HAWKEYE_STAT_PROMOTE_SMALLER);
	mutex_unlock(&hm->lock);
	hawkeye_stat_inc(HAWKEYE_STAT_PROMOTE_SAMPLED);
	trace_hawkeye_sample(w->pid, addr, coverage, populated, ema, r->bucket);
}

/*
 * Close @hm's sample window: count the accessed bits of every eligible
 * region, update the access_map, and forget the regions that were not
 * seen (huge now, unmapped, or no longer eligible). A process that mapped
 * 2 MB or more during the window is still starting: it stays fresh.
 */
static void map_count_mm(struct hawkeye_mm *hm, unsigned long pass)
{
	struct map_walk w = {
		.hm = hm,
		.pass = pass,
		.weight = READ_ONCE(hawkeye_promote.ema_weight),
		.pid = hawkeye_mm_pid(hm),
	};
	struct hawkeye_region *r;
	unsigned long index;

	if (!hm->map.armed)
		return;
	hm->map.armed = false;
	if (hawkeye_walk_mm(hm->mm, MAP_CHUNK, map_count_region, &w) < 0)
		return;
	if (w.populated >= HPAGE_PMD_NR)
		hawkeye_promote_populated(hm);

	mutex_lock(&hm->lock);
	xa_for_each(&hm->map.regions, index, r)
		if (r->pass != pass)
			hawkeye_map_remove(hm, r);
	hm->samples++;
	mutex_unlock(&hm->lock);
}

/**
 * hawkeye_map_sample - open or close a sample window on a process
 * @hm: the process
 * @pass: 0 to open one, else the pass that closes it
 */
void hawkeye_map_sample(struct hawkeye_mm *hm, unsigned long pass)
{
	if (pass)
		map_count_mm(hm, pass);
	else
		map_clear_mm(hm);
}

/**
 * hawkeye_map_promote - collapse a region of the map as khugepaged would
 * @hm: the process, its mm held by the caller
 * @r: the region; taken out of the map unless it is to be tried again
 *
 * Return: false if the batch should stop (no huge page to be had).
 */
bool hawkeye_map_promote(struct hawkeye_mm *hm, struct hawkeye_region *r)
{
	int ret = hpage_collapse_anon_pmd(hm->mm, r->addr);

	trace_hawkeye_promote(hawkeye_mm_pid(hm), r->addr, r->bucket, r->ema,
			      hawkeye_map_measured(hm), ret);
	hawkeye_mm_account(hm, ret);
	mutex_lock(&hm->lock);
	switch (ret) {
	case 0:
	case -EEXIST:		/* made huge by someone else */
	case -EINVAL:		/* unmapped or no longer eligible */
		hawkeye_map_remove(hm, r);
		break;
	default:
		/* Let the others have their turn before it is tried again. */
		list_move_tail(&r->node, &hm->map.buckets[r->bucket]);
		break;
	}
	mutex_unlock(&hm->lock);
	return ret != -ENOMEM;
}

/**
 * hawkeye_map_mm_init - an empty access map for a registered process
 * @hm: the process
 */
void hawkeye_map_mm_init(struct hawkeye_mm *hm)
{
	int b;

	hm->map.measured = -1;
	xa_init(&hm->map.regions);
	INIT_LIST_HEAD(&hm->map.smaller);
	for (b = 0; b < HAWKEYE_NR_BUCKETS; b++)
		INIT_LIST_HEAD(&hm->map.buckets[b]);
}

/**
 * hawkeye_map_mm_release - free a process's access map
 * @hm: the process, unregistered and unused
 */
void hawkeye_map_mm_release(struct hawkeye_mm *hm)
{
	hawkeye_map_clear(hm);
	xa_destroy(&hm->map.regions);
}

/**
 * hawkeye_map_overhead - a process's MMU overhead, as its map estimates it
 * @hm: the process
 * @overhead: the sum of its regions' access coverage
 *
 * Return: false if the process has not been sampled yet.
 */
bool hawkeye_map_overhead(struct hawkeye_mm *hm, unsigned long *overhead)
{
	if (!READ_ONCE(hm->samples))
		return false;
	*overhead = READ_ONCE(hm->map.overhead);
	return true;
}

/**
 * hawkeye_map_set_measured - record a process's measured MMU overhead
 * @hm: the process
 * @overhead: 1/100 %, -1 to forget it
 */
void hawkeye_map_set_measured(struct hawkeye_mm *hm, int overhead)
{
	WRITE_ONCE(hm->map.measured_at, jiffies);
	WRITE_ONCE(hm->map.measured, overhead);
}

/**
 * hawkeye_access_map_show() - the access_map's lines of /proc/<pid>/hawkeye
 * @m: the file
 * @hm: the process's record, or NULL: zeros, as for one without a map
 */
void hawkeye_access_map_show(struct seq_file *m, struct hawkeye_mm *hm)
{
	unsigned long nr[HAWKEYE_NR_BUCKETS] = {}, regions = 0, overhead = 0;
	unsigned long skipped = 0;
	unsigned long best[HPAGE_PMD_ORDER + 1] = {};
	int b, measured = -1;

	if (hm) {
		mutex_lock(&hm->lock);
		memcpy(nr, hm->map.nr, sizeof(nr));
		memcpy(best, hm->map.nr_best, sizeof(best));
		regions = hm->map.nr_regions;
		overhead = hm->map.overhead;
		mutex_unlock(&hm->lock);
		skipped = READ_ONCE(hm->map.skipped);
		measured = hawkeye_map_measured(hm);
	}
	seq_printf(m, "regions %lu\n", regions);
	for (b = 0; b < HAWKEYE_NR_BUCKETS; b++)
		seq_printf(m, "bucket%d %lu\n", b, nr[b]);
	seq_printf(m, "overhead %lu\n", overhead);
	seq_printf(m, "skipped_cold %lu\n", skipped);
	seq_puts(m, "best_size");
	for (b = HPAGE_PMD_ORDER; b >= 0; b--)
		if (best[b])
			seq_printf(m, " %lukB:%lu", PAGE_SIZE << b >> 10, best[b]);
	seq_putc(m, '\n');
	if (measured >= 0)
		seq_printf(m, "measured_overhead %d.%02d%%\n", measured / 100,
			   measured % 100);
	else
		seq_puts(m, "measured_overhead none\n");
}

#ifdef CONFIG_HAWKEYE_ACCESS_MAP_KUNIT_TEST
#include "tests/access_map-kunit.h"
#endif
