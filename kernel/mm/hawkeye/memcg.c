// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye in memory cgroups (cgroup v2; on a v1 hierarchy only the
 * machine's rules apply).
 *
 * What bloat recovery asks of a cgroup: how close it is to its limit (the
 * tighter of memory.high and memory.max), whether its tasks stall on
 * memory (PSI), which processes are in it and whether a THP is charged to
 * it; what promotion asks: the cgroup's weight and whether it is at its
 * cap on huge pages; and the cgroup's files memory.thp.*.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/cgroup.h>
#include <linux/hawkeye.h>
#include <linux/memcontrol.h>
#include <linux/huge_mm.h>
#include <linux/oom.h>
#include <linux/page_counter.h>
#include <linux/psi.h>
#include <linux/sched/loadavg.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "hawkeye.h"
#include "promote.h"

DEFINE_STATIC_KEY_FALSE(hawkeye_huge_cap_key);

#ifdef CONFIG_HAWKEYE_DEBLOAT
/**
 * hawkeye_memcg_limit() - the limit a cgroup's usage runs into first
 * @memcg: the cgroup
 *
 * Return: the tighter of memory.high and memory.max, in pages;
 * PAGE_COUNTER_MAX if it has neither (its ancestors' are their own).
 */
unsigned long hawkeye_memcg_limit(struct mem_cgroup *memcg)
{
	return min(READ_ONCE(memcg->memory.max), READ_ONCE(memcg->memory.high));
}

/**
 * hawkeye_memcg_use() - a cgroup's use of memory, as recovery counts it
 * @memcg: the cgroup
 *
 * memory.current less the page cache that reclaim drops without writing
 * it back (the file LRUs less dirty and writeback pages), as
 * si_mem_available() counts the machine's: a cgroup doing file I/O sits
 * near its limit with cache, which costs reclaim nothing to give back.
 * From the cgroup's statistics as last flushed.
 *
 * Return: pages.
 */
unsigned long hawkeye_memcg_use(struct mem_cgroup *memcg)
{
	unsigned long usage = page_counter_read(&memcg->memory);
	unsigned long file = memcg_page_state(memcg, NR_ACTIVE_FILE) +
			     memcg_page_state(memcg, NR_INACTIVE_FILE);
	unsigned long busy = memcg_page_state(memcg, NR_FILE_DIRTY) +
			     memcg_page_state(memcg, NR_WRITEBACK);

	file -= min(file, busy);
	return usage - min(usage, file);
}

/**
 * hawkeye_memcg_psi() - how much a cgroup's tasks stall on memory
 * @memcg: the cgroup; NULL for the whole machine
 *
 * Return: PSI's "some" memory pressure over the last 10 s, in percent.
 */
unsigned int hawkeye_memcg_psi(struct mem_cgroup *memcg)
{
#ifdef CONFIG_PSI
	struct psi_group *psi = memcg ? cgroup_psi(memcg->css.cgroup) :
					&psi_system;

	if (psi)
		return LOAD_INT(READ_ONCE(psi->avg[PSI_MEM_SOME][0]));
#endif
	return 0;
}

/**
 * hawkeye_memcg_recoverable() - may recovery split a THP of a cgroup?
 * @folio: the THP, referenced by the caller
 * @domain: the cgroup whose limit recovery works for; NULL: the machine
 *
 * Return: true if @folio is charged inside @domain, to a cgroup none of
 * whose ancestors turned recovery off (memory.thp.shrink_underused 0).
 */
bool hawkeye_memcg_recoverable(struct folio *folio, struct mem_cgroup *domain)
{
	struct mem_cgroup *memcg;
	bool ok;

	rcu_read_lock();
	memcg = folio_memcg(folio);
	if (domain && (!memcg || !mem_cgroup_is_descendant(memcg, domain)))
		ok = false;
	else
		ok = !hawkeye_memcg_debloat_off(memcg);
	rcu_read_unlock();
	return ok;
}

/**
 * hawkeye_memcg_debloat_off() - did a cgroup turn bloat recovery off?
 * @memcg: the cgroup, referenced or under rcu_read_lock(); NULL: none
 *
 * Return: true if @memcg or one of its ancestors has
 * memory.thp.shrink_underused 0.
 */
bool hawkeye_memcg_debloat_off(struct mem_cgroup *memcg)
{
	for (; memcg; memcg = parent_mem_cgroup(memcg))
		if (READ_ONCE(memcg->hawkeye.debloat_off))
			return true;
	return false;
}

/* What mem_cgroup_scan_tasks() collects: the mms of a cgroup's processes. */
struct memcg_mms {
	struct mm_struct **mms;
	int nr, max;
};

static int memcg_count_task(struct task_struct *task, void *arg)
{
	((struct memcg_mms *)arg)->max++;
	return 0;
}

static int memcg_grab_mm(struct task_struct *task, void *arg)
{
	struct memcg_mms *m = arg;
	struct task_struct *t;

	if (m->nr == m->max)
		return 1;
	if (task->flags & PF_KTHREAD)
		return 0;
	t = find_lock_task_mm(task);
	if (!t)
		return 0;
	mmgrab(t->mm);
	m->mms[m->nr++] = t->mm;
	task_unlock(t);
	return 0;
}

/**
 * hawkeye_memcg_grab_mms() - the address spaces of a cgroup's processes
 * @memcg: the cgroup, not the root; its descendants' processes count
 * @out: the array of them, kvfree() it
 *
 * As hawkeye_grab_user_mms(): each mm mmgrab()bed once.
 *
 * Return: the number of mms in *@out.
 */
int hawkeye_memcg_grab_mms(struct mem_cgroup *memcg, struct mm_struct ***out)
{
	struct memcg_mms m = {};

	*out = NULL;
	mem_cgroup_scan_tasks(memcg, memcg_count_task, &m);
	if (!m.max)
		return 0;
	m.max += 16;		/* processes that join meanwhile */
	m.mms = kvcalloc(m.max, sizeof(*m.mms), GFP_KERNEL);
	if (!m.mms)
		return 0;
	mem_cgroup_scan_tasks(memcg, memcg_grab_mm, &m);
	*out = m.mms;
	return hawkeye_dedup_mms(m.mms, m.nr);
}
#endif /* CONFIG_HAWKEYE_DEBLOAT */

/**
 * hawkeye_memcg_huge_full() - would one more THP take a cgroup past its cap?
 * @memcg: the cgroup; NULL: none
 *
 * The PMD-mapped anonymous THPs of @memcg's subtree, or of an ancestor's
 * with a cap (memory.stat anon_thp), and one more must fit under the cap.
 * The counts are flushed first, which costs only once memcg statistics
 * have moved by their batch (64 pages a CPU): the cap holds to that
 * batch, and callers running at once may each see the others' THPs not
 * counted yet. Callers may sleep.
 *
 * Return: true if a 2 MB page is over a cap.
 */
bool hawkeye_memcg_huge_full(struct mem_cgroup *memcg)
{
	for (; memcg && !mem_cgroup_is_root(memcg); memcg = parent_mem_cgroup(memcg)) {
		if (!READ_ONCE(memcg->hawkeye.huge_capped))
			continue;
		mem_cgroup_flush_stats(memcg);
		if (memcg_page_state(memcg, NR_ANON_THPS) + HPAGE_PMD_NR >
		    READ_ONCE(memcg->hawkeye.huge_max))
			return true;
	}
	return false;
}

/* The THP fault's and the collapse's question, each answer "yes" counted. */
bool __hawkeye_huge_capped(struct mm_struct *mm, bool collapse)
{
	enum vm_event_item event = collapse ? HAWKEYE_MEMCG_COLLAPSE_CAPPED :
					      HAWKEYE_MEMCG_HUGE_CAPPED;
	struct mem_cgroup *memcg = get_mem_cgroup_from_mm(mm);
	bool full = hawkeye_memcg_huge_full(memcg);

	if (full) {
		count_vm_event(event);
		count_memcg_events(memcg, event, 1);
		/* As every THP fault that maps smaller pages counts. */
		if (!collapse) {
			count_vm_event(THP_FAULT_FALLBACK);
			count_mthp_stat(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_FALLBACK);
		}
	}
	mem_cgroup_put(memcg);
	return full;
}

#ifdef CONFIG_HAWKEYE_DEBLOAT
static u64 debloat_read(struct cgroup_subsys_state *css, struct cftype *cft)
{
	return !READ_ONCE(mem_cgroup_from_css(css)->hawkeye.debloat_off);
}

static int debloat_write(struct cgroup_subsys_state *css, struct cftype *cft,
			 u64 val)
{
	if (val > 1)
		return -EINVAL;
	WRITE_ONCE(mem_cgroup_from_css(css)->hawkeye.debloat_off, !val);
	return 0;
}
#endif

#ifdef CONFIG_HAWKEYE_PROMOTE
#define MEMCG_WEIGHT_DEFAULT	100
#define MEMCG_WEIGHT_MAX	10000

/**
 * hawkeye_memcg_weight() - a cgroup's share of promotions
 * @memcg: the cgroup; NULL: none (memory cgroups are off)
 *
 * Return: memory.thp.weight, 1 to 10000; 100 by default.
 */
unsigned int hawkeye_memcg_weight(struct mem_cgroup *memcg)
{
	unsigned int weight = memcg ? READ_ONCE(memcg->hawkeye.weight) : 0;

	return weight ?: MEMCG_WEIGHT_DEFAULT;
}

static u64 weight_read(struct cgroup_subsys_state *css, struct cftype *cft)
{
	return hawkeye_memcg_weight(mem_cgroup_from_css(css));
}

static int weight_write(struct cgroup_subsys_state *css, struct cftype *cft,
			u64 val)
{
	if (!val || val > MEMCG_WEIGHT_MAX)
		return -EINVAL;
	WRITE_ONCE(mem_cgroup_from_css(css)->hawkeye.weight, val);
	return 0;
}
#endif

static int huge_max_show(struct seq_file *m, void *v)
{
	struct hawkeye_memcg *hm = &mem_cgroup_from_seq(m)->hawkeye;

	if (!READ_ONCE(hm->huge_capped))
		seq_puts(m, "max\n");
	else
		seq_printf(m, "%llu\n", (u64)READ_ONCE(hm->huge_max) * PAGE_SIZE);
	return 0;
}

/* Bytes or "max"; a cap is a number of 2 MB pages, rounded down. */
static ssize_t huge_max_write(struct kernfs_open_file *of, char *buf,
			      size_t nbytes, loff_t off)
{
	struct hawkeye_memcg *hm = &mem_cgroup_from_css(of_css(of))->hawkeye;
	unsigned long max;
	int err;

	err = page_counter_memparse(strstrip(buf), "max", &max);
	if (err)
		return err;
	if (max == PAGE_COUNTER_MAX) {
		WRITE_ONCE(hm->huge_capped, false);
		return nbytes;
	}
	WRITE_ONCE(hm->huge_max, round_down(max, HPAGE_PMD_NR));
	WRITE_ONCE(hm->huge_capped, true);
	/* On for good: no cgroup pays for the check before a first cap. */
	static_branch_enable(&hawkeye_huge_cap_key);
	return nbytes;
}

static struct cftype hawkeye_memcg_files[] = {
#ifdef CONFIG_HAWKEYE_DEBLOAT
	{
		.name = "thp.shrink_underused",
		.flags = CFTYPE_NOT_ON_ROOT,
		.read_u64 = debloat_read,
		.write_u64 = debloat_write,
	},
#endif
#ifdef CONFIG_HAWKEYE_PROMOTE
	{
		.name = "thp.weight",
		.flags = CFTYPE_NOT_ON_ROOT,
		.read_u64 = weight_read,
		.write_u64 = weight_write,
	},
#endif
	{
		.name = "thp.max",
		.flags = CFTYPE_NOT_ON_ROOT,
		.seq_show = huge_max_show,
		.write = huge_max_write,
	},
	{ }	/* terminate */
};

static int __init hawkeye_memcg_init(void)
{
	if (mem_cgroup_disabled())
		return 0;
	return cgroup_add_dfl_cftypes(&memory_cgrp_subsys, hawkeye_memcg_files);
}
subsys_initcall(hawkeye_memcg_init);
