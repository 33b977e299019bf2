// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye async pre-zeroing.
 *
 * A kernel thread per node takes free buddy blocks of at least huge page
 * size off the free lists, zeroes them with non-temporal stores, and puts
 * them back as upstream puts an isolated block back, marked PageZeroed()
 * and recorded in the zone's index (zeroed.c). The blocks stay free
 * memory: any allocation may take them, and the allocator hands them
 * first to __GFP_ZERO allocations of user memory (anonymous faults),
 * which then skip zeroing. The thread runs at the lowest priority, holds
 * to a rate, a higher one while its CPU is otherwise idle when paced (the
 * node's memory bandwidth is shared), and leaves zones alone while they
 * are short of free memory.
 *
 * fault.c has the fault's side: pre-zeroed pages handed out and counted,
 * and how folio_zero_user() clears a huge folio (fault_clear).
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/freezer.h>
#include <linux/hawkeye.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/kasan.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/suspend.h>
#include <linux/syscore_ops.h>
#include <linux/vmstat.h>
#include <linux/wait.h>
#include <uapi/linux/sched/types.h>

#include "../internal.h"
#include "../page_reporting.h"
#include "hawkeye.h"
#include "zeroed.h"

/*
 * Smaller free blocks are left alone while a larger one is left: they are
 * reused or merged soon, and a merge with an unzeroed buddy loses the
 * zeroing. See prezero_min_order().
 */
#define PREZERO_ORDER	HPAGE_PMD_ORDER
/* Free blocks looked at per list, from its head and from its tail. */
#define PREZERO_LOOKUP	32
/* With a free page reporting device, target_mb 0 keeps this much zeroed. */
#define PREZERO_REPORTING_SHARE	4	/* a quarter of the node */

DEFINE_STATIC_KEY_FALSE(hawkeye_prezero_key);

struct hawkeye_prezero_params hawkeye_prezero = {
	.rate = 10000,		/* the paper's: at most ~10k pages a second */
	.idle_rate = 262144,	/* 1 GiB/s, a few % of a node's bandwidth */
	.target_mb = 0,
	.nontemporal = 1,
	.paced = 1,
};

static DEFINE_MUTEX(prezero_mutex);
static struct task_struct *prezero_threads[MAX_NUMNODES];

/*
 * The nodes whose thread sleeps with nothing to zero; a fault that had to
 * zero clears its node's bit and wakes the thread (paced only).
 */
static DECLARE_BITMAP(prezero_idle, MAX_NUMNODES);
static DECLARE_WAIT_QUEUE_HEAD(prezero_wait);

static void zero_block(struct page *page, unsigned int order, bool nt)
{
	unsigned long i;

	for (i = 0; i < (1UL << order); i++) {
		void *addr = kmap_local_page(page + i);

		if (nt)
			clear_page_nt(addr);
		else
			clear_page(addr);
		kunmap_local(addr);
		if ((i & 63) == 63)
			cond_resched();
	}
	if (nt)
		wmb();	/* non-temporal stores land before the page is marked zeroed */
}

/*
 * Not zeroed; unless @reported, not given back to the hypervisor by free
 * page reporting (zeroing it takes the memory back from the host; a free
 * page carries PG_reported, PG_uptodate, for no other reason); and within
 * reach of the zone's index @zi, which would otherwise drop its mark.
 */
static bool prezero_wanted(struct page *page, unsigned int order, bool reported,
			   struct zeroed_index *zi)
{
	int entry;

	return !PageZeroed(page) && (reported || !PageReported(page)) &&
	       (!zi || zeroed_index_entry(zi, page_to_pfn(page), order, &entry));
}

/*
 * A block of @list to zero. Frees go to the head of a list, zeroed and
 * reported blocks back to the tail; but a free can go to the tail too
 * (buddy_merge_likely(), FPI_TO_TAIL, a block moved from another list)
 * and blocks zeroed later then cover it. A few blocks from each end are
 * looked at, and, as page_reporting_cycle() does, the list is rotated so
 * that the walk from the head starts next time where it stopped: the
 * blocks it passed go behind the rest, and the walks go round the list.
 */
static struct page *prezero_find_block(struct list_head *list, unsigned int order,
				       bool reported, struct zeroed_index *zi)
{
	struct page *page;
	int seen = 0;

	list_for_each_entry_reverse(page, list, buddy_list) {
		if (prezero_wanted(page, order, reported, zi))
			return page;
		if (++seen == PREZERO_LOOKUP)
			break;
	}
	seen = 0;
	list_for_each_entry(page, list, buddy_list) {
		if (prezero_wanted(page, order, reported, zi))
			break;
		if (++seen == PREZERO_LOOKUP) {
			page = list_next_entry(page, buddy_list);
			break;
		}
	}
	if (list_entry_is_head(page, list, buddy_list))
		return NULL;
	if (!list_is_first(&page->buddy_list, list))
		list_rotate_to_front(&page->buddy_list, list);
	return prezero_wanted(page, order, reported, zi) ? page : NULL;
}

/*
 * The smallest block worth zeroing: huge page size, or the smallest mTHP
 * size that anonymous faults may take (hugepages-<size>kB/enabled), so
 * that memory too fragmented for 2 MB blocks still serves the sizes in
 * use. Larger blocks go first: they serve every size.
 */
static unsigned int prezero_min_order(void)
{
	unsigned long orders = READ_ONCE(huge_anon_orders_always) |
			       READ_ONCE(huge_anon_orders_madvise);

	if (hugepage_global_enabled())
		orders |= READ_ONCE(huge_anon_orders_inherit);
	orders &= BIT(PREZERO_ORDER) - 1;
	return orders ? __ffs(orders) : PREZERO_ORDER;
}

/* Has a free page reporting device (a balloon) registered? */
static bool prezero_beside_reporting(void)
{
#ifdef CONFIG_PAGE_REPORTING
	return static_key_enabled(&page_reporting_enabled);
#else
	return false;
#endif
}

/*
 * An unzeroed free block of @order taken off @zone's movable list, or
 * NULL. One zone lock hold per order, as compaction's free page scanner
 * takes: a walk of each end of one list. Sets *@full if the ring of
 * @order had no room.
 */
static struct page *prezero_isolate_block(struct zone *zone, unsigned int order,
					  bool reported, bool *full)
{
	struct list_head *list = &zone->free_area[order].free_list[MIGRATE_MOVABLE];
	struct page *page = NULL;
	bool was_reported;

	*full = false;
	spin_lock_irq(&zone->lock);
	/* Leave memory alone while reclaim may need it. */
	if (zone_watermark_ok(zone, 0, high_wmark_pages(zone) + MAX_ORDER_NR_PAGES,
			      zone_idx(zone), 0)) {
		*full = !zeroed_index_has_room(zone, order);
		if (!*full)
			page = prezero_find_block(list, order, reported, zone->zeroed_index);
	}
	/* Isolation clears the mark: count what the host gets to back again. */
	was_reported = page && PageReported(page);
	if (page && !__isolate_free_page(page, order))
		page = NULL;
	if (page && was_reported)
		hawkeye_stat_add(HAWKEYE_STAT_PREZERO_REPORTED_PAGES, 1UL << order);
	spin_unlock_irq(&zone->lock);
	return page;
}

/* The largest block to zero, taken off its list, and its order; or NULL. */
static struct page *prezero_isolate_largest(struct zone *zone, bool reported,
					    int *orderp)
{
	int order, min_order = prezero_min_order();
	struct page *page;
	bool full = false;

	for (order = MAX_PAGE_ORDER; order >= min_order; order--) {
		page = prezero_isolate_block(zone, order, reported, &full);
		/* A full ring may hold stale entries: drop them, look again. */
		if (full) {
			zeroed_index_compact(zone, order);
			page = prezero_isolate_block(zone, order, reported, &full);
		}
		if (page) {
			*orderp = order;
			return page;
		}
	}
	return NULL;
}

/*
 * Zero one free block of @zone. Returns the number of pages zeroed, 0 when
 * the zone has no unzeroed block or is short of free memory. Blocks the
 * host still backs go first. Beside free page reporting, once none is
 * left, a reported one: the pool is bounded then (prezero_target()), and
 * a thread slower than reporting, which takes each free 2 s after it
 * happens, would otherwise never fill it. The zone decides before the
 * kind of block: faults look in the highest zone first, and the host gets
 * back all but the bounded pool either way.
 */
static unsigned long prezero_one_block(struct zone *zone, bool nt)
{
	struct page *page;
	int order;

	page = prezero_isolate_largest(zone, false, &order);
	if (!page && prezero_beside_reporting())
		page = prezero_isolate_largest(zone, true, &order);
	if (!page)
		return 0;

	zero_block(page, order, nt);

	spin_lock_irq(&zone->lock);
	__SetPageZeroed(page);	/* the allocator records it in the index */
	__putback_isolated_page(page, order, get_pageblock_migratetype(page));
	spin_unlock_irq(&zone->lock);

	hawkeye_stat_add(HAWKEYE_STAT_PREZERO_PAGES, 1UL << order);
	if (order < PREZERO_ORDER)
		hawkeye_stat_add(HAWKEYE_STAT_PREZERO_MTHP_PAGES, 1UL << order);
	return 1UL << order;
}

static unsigned long node_free_zeroed(pg_data_t *pgdat)
{
	unsigned long nr = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		nr += zone_page_state_snapshot(&pgdat->node_zones[z], NR_FREE_ZEROED);
	return nr;
}

/*
 * target_mb in pages; 0 is all free memory, but with a free page reporting
 * device a share of the node's memory, so that reporting gets the rest
 * back: of its managed pages, which a balloon's inflation lowers.
 */
static unsigned long prezero_target(pg_data_t *pgdat)
{
	unsigned long mb = READ_ONCE(hawkeye_prezero.target_mb), pages = 0;
	int z;

	if (mb)
		return mb << (20 - PAGE_SHIFT);
	if (!prezero_beside_reporting())
		return 0;
	for (z = 0; z < MAX_NR_ZONES; z++)
		pages += zone_managed_pages(&pgdat->node_zones[z]);
	return pages / PREZERO_REPORTING_SHARE ?: 1;	/* 0 would be no bound */
}

static unsigned long prezero_node(pg_data_t *pgdat)
{
	unsigned long target = prezero_target(pgdat);
	bool nt = READ_ONCE(hawkeye_prezero.nontemporal);
	unsigned long done;
	int z;

	if (target && node_free_zeroed(pgdat) >= target)
		return 0;
	for (z = MAX_NR_ZONES - 1; z >= 0; z--) {
		struct zone *zone = &pgdat->node_zones[z];

		/* A zone populated or grown since: hotplug. */
		if (!populated_zone(zone) || zeroed_index_init_zone(zone))
			continue;
		done = prezero_one_block(zone, nt);
		if (done)
			return done;
	}
	return 0;
}

/*
 * Paced, the thread is SCHED_IDLE, so that any runnable task preempts it;
 * otherwise it runs at nice 19, as in the paper.
 */
static void prezero_set_policy(bool paced)
{
	struct sched_attr attr = {
		.sched_policy = paced ? SCHED_IDLE : SCHED_NORMAL,
		.sched_nice = MAX_NICE,
	};

	WARN_ON_ONCE(sched_setattr_nocheck(current, &attr));
}

/* Nothing to zero: sleep a second, or until a fault had to zero. */
static void prezero_idle_wait(int nid)
{
	set_bit(nid, prezero_idle);
	wait_event_freezable_timeout(prezero_wait, kthread_should_stop() ||
				     !test_bit(nid, prezero_idle), HZ);
	clear_bit(nid, prezero_idle);
}

static int prezero_thread(void *data)
{
	unsigned int rate = READ_ONCE(hawkeye_prezero.rate);
	unsigned int idle_rate = READ_ONCE(hawkeye_prezero.idle_rate);
	bool paced = READ_ONCE(hawkeye_prezero.paced);
	pg_data_t *pgdat = data;
	ktime_t next = ktime_get();

	set_freezable();
	prezero_set_policy(paced);

	while (!kthread_should_stop()) {
		unsigned long done = prezero_node(pgdat);

		try_to_freeze();
		/* A new rate (which wakes us) cancels what the old one owed. */
		if (rate != READ_ONCE(hawkeye_prezero.rate) ||
		    idle_rate != READ_ONCE(hawkeye_prezero.idle_rate)) {
			rate = READ_ONCE(hawkeye_prezero.rate);
			idle_rate = READ_ONCE(hawkeye_prezero.idle_rate);
			next = ktime_get();
		}
		if (paced != READ_ONCE(hawkeye_prezero.paced)) {
			paced = !paced;
			prezero_set_policy(paced);
		}
		if (!done) {
			prezero_idle_wait(pgdat->node_id);
			next = ktime_get();
			continue;
		}
		/*
		 * Paced, the rate is a cap for when the CPU has other work;
		 * alone on it, the thread uses idle time up to idle_rate: the
		 * memory bandwidth it takes is the node's, not its CPU's.
		 */
		if (paced && single_task_running()) {
			hawkeye_throttle(&next, done, idle_rate);
			continue;
		}
		if (paced)
			hawkeye_stat_inc(HAWKEYE_STAT_PREZERO_BACKOFF);
		hawkeye_throttle(&next, done, rate);
	}
	return 0;
}

/* Debug options that write or unmap free pages rule pre-zeroing out. */
static const char *prezero_unsupported(void)
{
	if (want_init_on_free())
		return "init_on_free already zeroes pages as they are freed";
	if (page_poisoning_enabled_static())
		return "page poisoning writes free pages";
	if (debug_pagealloc_enabled_static())
		return "debug_pagealloc unmaps free pages";
	if (kasan_hw_tags_enabled())
		return "hardware tag-based KASAN zeroes pages as it tags them";
	return NULL;
}

static void prezero_stop_threads(void)
{
	int nid;

	for_each_node(nid)
		hawkeye_thread_stop(&prezero_threads[nid]);
}

/**
 * hawkeye_prezero_set_enabled - turn pre-zeroing on or off
 * @on: the new state
 *
 * On gives each zone an index of zeroed blocks, starts one zeroing thread
 * per node with memory and enables the static key; off disables the key,
 * stops the threads and drains the pcp lists (the marks stay, unused:
 * the allocator is upstream's). Called
 * by sysfs (prezero/enabled) and by the hawkeye_prezero= boot parameter.
 *
 * Return: 0, -EOPNOTSUPP where pre-zeroing cannot be correct (the reason
 * is logged), or the error of starting a thread; the state is unchanged.
 */
int hawkeye_prezero_set_enabled(bool on)
{
	const char *why;
	int nid, ret = 0;

	mutex_lock(&prezero_mutex);
	if (on == hawkeye_prezero_enabled())
		goto out;
	if (!on) {
		static_branch_disable(&hawkeye_prezero_key);
		prezero_stop_threads();
		/* Off is upstream's: no page waits on the zeroed pcp lists. */
		drain_all_pages(NULL);
		goto out;
	}
	why = prezero_unsupported();
	if (why) {
		pr_warn("pre-zeroing not enabled: %s\n", why);
		ret = -EOPNOTSUPP;
		goto out;
	}
	ret = zeroed_index_init();
	if (ret)
		goto out;
	for_each_node_state(nid, N_MEMORY) {
		/* On the node it zeroes: local stores, that node's CPU time. */
		ret = hawkeye_thread_start(&prezero_threads[nid], prezero_thread,
					   NODE_DATA(nid), nid, "hawkeye_zerod%d");
		if (ret) {
			prezero_stop_threads();
			goto out;
		}
	}
	static_branch_enable(&hawkeye_prezero_key);
out:
	mutex_unlock(&prezero_mutex);
	return ret;
}

/* Set a knob the threads read as they go, and wake them to read it now. */
static int prezero_set_and_wake(unsigned int *knob, unsigned int val)
{
	int nid;

	mutex_lock(&prezero_mutex);
	WRITE_ONCE(*knob, val);
	/* At rate 1 a thread may be asleep for 512 s: it recomputes. */
	for_each_node(nid)
		if (prezero_threads[nid])
			wake_up_process(prezero_threads[nid]);
	mutex_unlock(&prezero_mutex);
	return 0;
}

/**
 * hawkeye_prezero_set_rate - set the zeroing threads' rate
 * @rate: pages per second and node, 0 for no limit; sysfs checked its bounds
 *
 * Wakes the threads: at a low rate one may be asleep for minutes.
 *
 * Return: 0.
 */
int hawkeye_prezero_set_rate(unsigned int rate)
{
	return prezero_set_and_wake(&hawkeye_prezero.rate, rate);
}

/**
 * hawkeye_prezero_set_paced - pace the zeroing threads to demand, or not
 * @paced: 1: SCHED_IDLE, the rate only while a task is runnable beside the
 *	   thread, and woken by faults that had to zero; 0: the fixed rate
 *
 * Wakes the threads, which switch at once.
 *
 * Return: 0.
 */
int hawkeye_prezero_set_paced(unsigned int paced)
{
	return prezero_set_and_wake(&hawkeye_prezero.paced, paced);
}

/**
 * hawkeye_prezero_set_idle_rate - set the paced threads' rate on idle CPUs
 * @rate: pages per second and node, 0 for no limit; sysfs checked its bounds
 *
 * Return: 0.
 */
int hawkeye_prezero_set_idle_rate(unsigned int rate)
{
	return prezero_set_and_wake(&hawkeye_prezero.idle_rate, rate);
}

/**
 * hawkeye_prezero_set_target_mb - set how much free memory to keep zeroed
 * @mb: megabytes per node
 *
 * Return: 0, or -EINVAL (nothing changed) for more than all of memory,
 * a bound the knob table cannot know.
 */
int hawkeye_prezero_set_target_mb(unsigned int mb)
{
	if (mb > (totalram_pages() >> (20 - PAGE_SHIFT)))
		return -EINVAL;
	WRITE_ONCE(hawkeye_prezero.target_mb, mb);
	return 0;
}

/**
 * hawkeye_prezero_wake - a fault on a node had to zero
 * @nid: the node
 *
 * Wakes the node's paced thread if it sleeps with nothing to zero.
 */
void hawkeye_prezero_wake(int nid)
{
	if (test_bit(nid, prezero_idle) && test_and_clear_bit(nid, prezero_idle)) {
		hawkeye_stat_inc(HAWKEYE_STAT_PREZERO_WOKEN);
		wake_up(&prezero_wait);
	}
}

#ifdef CONFIG_HIBERNATION
/*
 * Hibernation saves the memmap, marks included, but not what free pages
 * hold, and restoring an image stages it in free pages: after resume a
 * marked page may hold anything. Every mark is dropped once the image is
 * made or restored, with one CPU up and interrupts off (syscore resume),
 * before anything can allocate; the threads zero again after the thaw.
 */
static bool prezero_hibernating;

static int prezero_pm_notify(struct notifier_block *nb, unsigned long action,
			     void *unused)
{
	switch (action) {
	case PM_HIBERNATION_PREPARE:
	case PM_RESTORE_PREPARE:
		WRITE_ONCE(prezero_hibernating, true);
		break;
	case PM_POST_HIBERNATION:
	case PM_POST_RESTORE:
		WRITE_ONCE(prezero_hibernating, false);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block prezero_pm_nb = {
	.notifier_call = prezero_pm_notify,
};

static void prezero_syscore_resume(void *unused)
{
	if (READ_ONCE(prezero_hibernating))
		drop_zeroed_marks();
}

static const struct syscore_ops prezero_syscore_ops = {
	.resume = prezero_syscore_resume,
};

static struct syscore prezero_syscore = {
	.ops = &prezero_syscore_ops,
};

static int __init prezero_pm_init(void)
{
	register_pm_notifier(&prezero_pm_nb);
	register_syscore(&prezero_syscore);
	return 0;
}
late_initcall(prezero_pm_init);	/* before hawkeye_prezero= */
#endif

HAWKEYE_BOOT_SWITCH(hawkeye_prezero, hawkeye_prezero_set_enabled);

#ifdef CONFIG_HAWKEYE_PREZERO_KUNIT_TEST
#include "tests/prezero-kunit.h"
#endif
