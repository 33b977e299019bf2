// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye bloat recovery.
 *
 * A THP fault maps 2 MB at once, and much of it may never be written: the
 * memory bloat of huge pages. While more than high_pct of memory is in use,
 * a kernel thread, hawkeye_debloatd, looks for anonymous PMD-mapped THPs of
 * which at least `threshold` 4 KB subpages are zero-filled and splits them,
 * until less than low_pct of memory is in use. This file runs the thread
 * and decides where and in which order; limits.c decides when; split.c
 * examines the THPs and splits them, the zero-filled subpages going to the
 * shared zero page.
 *
 * The bar adapts: each episode of recovery (from above high_pct to below
 * low_pct) starts at `threshold`, so the most bloated THPs go first, and
 * every full pass over all processes that leaves memory still tight halves
 * it, down to threshold / 8: memory allocators leave THPs with a fraction
 * of a huge page unused (a 2 MB object in a 2.5 MB size class).
 *
 * Processes are taken lowest estimated MMU overhead first: a process that
 * promotion has sampled by its access coverage, or measured
 * (hawkeye_promote_overhead()); otherwise the estimate is the share of a
 * process's huge pages accessed (PMD young) during a sampling window
 * before each round.
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
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmstat.h>
#include <asm/tlbflush.h>

#include "../internal.h"
#include "hawkeye.h"

#define DEBLOAT_SAMPLE		HZ	/* accesses are sampled this long per round */
#define DEBLOAT_MEMCG_SAMPLE	(HZ / 10)	/* ... in a cgroup nearing its limit */
#define DEBLOAT_BATCH		16	/* most THPs examined per mmap_lock hold */
#define DEBLOAT_DEFERRED	256	/* most queued THPs looked at per cgroup */

DEFINE_STATIC_KEY_FALSE(hawkeye_debloat_key);

struct hawkeye_debloat_params hawkeye_debloat = {
	.high_pct = 85,			/* the paper's watermarks */
	.low_pct = 70,
	.threshold = HAWKEYE_DEBLOAT_THRESHOLD,
	.rate = 1000,
	.psi_pct = 10,
};

static DEFINE_MUTEX(debloat_mutex);
static struct task_struct *debloat_thread;
/* The zero subpages that make a THP worth splitting now: <= threshold. */
static unsigned int debloat_current_threshold = HAWKEYE_DEBLOAT_THRESHOLD;
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

/**
 * hawkeye_debloat_active - does an episode run for the machine?
 *
 * Return: true while one does.
 */
bool hawkeye_debloat_active(void)
{
	return READ_ONCE(debloat_active);
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
	hawkeye_count_thps(dm->mm, hawkeye_debloat_vma_suitable, hawkeye_debloat_pmd_folio,
			   &count);
	dm->nr_thp = count.nr;
	dm->nr_young = count.young;
	/* What promotion knows of it, while it is held. */
	dm->sampled = hawkeye_promote_overhead(dm->mm, &dm->overhead);
	dm->measured = hawkeye_promote_measured(dm->mm);
	mmput(dm->mm);
}

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

		if (kthread_should_stop() || !hawkeye_debloat_goes_on(dom))
			return false;
		/* Held for one batch: an exiting process frees its memory. */
		if (!hawkeye_mmget_alive(mm))
			return true;
		/* About a tenth of a second's worth at a time. */
		if (rate)
			batch = clamp(rate / 10, 1U, batch);
		dw.budget = batch;
		dw.pmds = 0;
		ret = hawkeye_debloat_walk(&dw, mm);
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
			more = hawkeye_debloat_goes_on(dom);
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
	return more && hawkeye_debloat_goes_on(dom);
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
		if (!hawkeye_debloat_wanted_in(memcg, false))
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
		ran = debloat_episode(NULL, &debloat_active, &debloat_current_threshold);
		ran |= debloat_memcgs();
		if (!ran)
			schedule_timeout_interruptible(HAWKEYE_DEBLOAT_POLL);
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
	WRITE_ONCE(debloat_current_threshold, nr);
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
	return READ_ONCE(debloat_current_threshold);
}

HAWKEYE_BOOT_SWITCH(hawkeye_debloat, hawkeye_debloat_set_enabled);

#ifdef CONFIG_HAWKEYE_DEBLOAT_KUNIT_TEST
#include "tests/debloat-kunit.h"
#endif
