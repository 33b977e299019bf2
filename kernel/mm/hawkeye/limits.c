// SPDX-License-Identifier: GPL-2.0
/*
 * Bloat recovery (debloat.c) and memory's limits: when memory is tight
 * enough for recovery, the machine's or a memory cgroup's (the watermarks,
 * PSI, a cgroup's THP growth), and what recovery asks of the rest of mm
 * meanwhile: khugepaged collapses no range that recovery would split
 * again, and reclaim's THP shrinker splits with recovery's bar, to the
 * largest dense mTHP size where debloat/mthp is on.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#include <linux/mm.h>
#include <linux/hawkeye.h>
#include <linux/huge_mm.h>
#include <linux/memcontrol.h>

#include "../internal.h"
#include "hawkeye.h"

#define DEBLOAT_AHEAD	HZ	/* a cgroup's use is foreseen this far */

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

/**
 * hawkeye_debloat_pressure - is a cgroup's memory pressure high enough?
 * @memcg: the cgroup, NULL for the machine
 *
 * Return: true where PSI's memory pressure is at psi_pct or more.
 */
bool hawkeye_debloat_pressure(struct mem_cgroup *memcg)
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
 * looked (@hm), HAWKEYE_DEBLOAT_POLL to DEBLOAT_AHEAD before (sooner
 * tells a burst, not a rate). Huge pages are what bloat comes with, and a round
 * takes time: a container that faults THPs fast would otherwise be at its
 * limit before recovery started at high_pct had caught up. Records this
 * look. The thread's alone.
 */
static unsigned long debloat_use_ahead(struct hawkeye_memcg *hm,
				       unsigned long in_use, unsigned long thp,
				       unsigned long now)
{
	unsigned long since = now - hm->thp_at, ahead = in_use;

	if (since < HAWKEYE_DEBLOAT_POLL)
		return in_use;
	if (thp > hm->thp && since < DEBLOAT_AHEAD)
		ahead += (thp - hm->thp) * DEBLOAT_AHEAD / since;
	hm->thp = thp;
	hm->thp_at = now;
	return ahead;
}
#endif

/**
 * hawkeye_debloat_wanted_in - should recovery run for a limit?
 * @memcg: the cgroup whose limit is asked about, NULL for the machine
 * @active: whether an episode runs there
 *
 * An episode in a cgroup at low_pct or more also starts where its use
 * would exceed high_pct within DEBLOAT_AHEAD as its THPs grow
 * (debloat_use_ahead()). Counts the episodes started that way or by PSI.
 * The recovery thread's alone: it records each look at a cgroup.
 *
 * Return: true if it should.
 */
bool hawkeye_debloat_wanted_in(struct mem_cgroup *memcg, bool active)
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
	pressure = !active && hawkeye_debloat_pressure(memcg);
	if (pressure && debloat_wanted(in_use, total, false, true, high, low)) {
		hawkeye_stat_inc(HAWKEYE_STAT_DEBLOAT_PSI_START);
		return true;
	}
	return false;
}

/**
 * hawkeye_debloat_goes_on - does recovery in a domain go on?
 * @dom: the domain
 *
 * Return: true while its use is above its low watermark.
 */
bool hawkeye_debloat_goes_on(struct debloat_domain *dom)
{
	return hawkeye_debloat_wanted_in(dom->memcg, true);
}

/**
 * hawkeye_debloat_wanted_for - is recovery wanted in reclaim?
 * @memcg: the cgroup whose limit is asked about, NULL for the machine
 * @active: whether an episode runs there
 *
 * Reclaim is memory pressure: from low_pct, as under PSI pressure. Asked
 * for every THP reclaim's shrinker looks at; counts nothing.
 *
 * Return: true if it is.
 */
bool hawkeye_debloat_wanted_for(struct mem_cgroup *memcg, bool active)
{
	unsigned long in_use, total;

	return debloat_usage(memcg, &in_use, &total) &&
	       debloat_wanted(in_use, total, active, true,
			      READ_ONCE(hawkeye_debloat.high_pct),
			      READ_ONCE(hawkeye_debloat.low_pct));
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
		if (hawkeye_debloat_pressure(m) || READ_ONCE(m->hawkeye.active))
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

	if (READ_ONCE(mm->hawkeye_debloat_splits) && hawkeye_debloat_wanted_for(NULL, true))
		max = hawkeye_debloat_current_threshold() - 1;
	return min(max, debloat_memcg_max_ptes_none(mm, charged));
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
	bool active = hawkeye_debloat_active();

	if (hawkeye_debloat_wanted_for(NULL, active))
		bar = active ? hawkeye_debloat_current_threshold() : threshold;
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
		if (hawkeye_debloat_wanted_for(memcg, active))
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
	unsigned int bar;

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
	return hawkeye_debloat_split_pieces(folio, highest_order(orders), bar);
}

#ifdef CONFIG_HAWKEYE_LIMITS_KUNIT_TEST
#include "tests/limits-kunit.h"
#endif
