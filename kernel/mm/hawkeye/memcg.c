// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye in memory cgroups (cgroup v2).
 *
 * What bloat recovery asks of a cgroup: how close it is to its limit (the
 * tighter of memory.high and memory.max), whether its tasks stall on
 * memory (PSI), which processes are in it and whether a THP is charged to
 * it; and the cgroup's file memory.hawkeye.debloat.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/cgroup.h>
#include <linux/hawkeye.h>
#include <linux/memcontrol.h>
#include <linux/oom.h>
#include <linux/page_counter.h>
#include <linux/psi.h>
#include <linux/sched/loadavg.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "hawkeye.h"

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
 * hawkeye_memcg_margin() - what a cgroup may still charge before memory.max
 * @memcg: the cgroup
 *
 * Return: pages.
 */
unsigned long hawkeye_memcg_margin(struct mem_cgroup *memcg)
{
	unsigned long usage = page_counter_read(&memcg->memory);
	unsigned long max = READ_ONCE(memcg->memory.max);

	return usage < max ? max - usage : 0;
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
 * whose ancestors turned recovery off (memory.hawkeye.debloat 0).
 */
bool hawkeye_memcg_recoverable(struct folio *folio, struct mem_cgroup *domain)
{
	struct mem_cgroup *memcg;
	bool ok = true;

	rcu_read_lock();
	memcg = folio_memcg(folio);
	if (domain && (!memcg || !mem_cgroup_is_descendant(memcg, domain)))
		ok = false;
	for (; ok && memcg; memcg = parent_mem_cgroup(memcg))
		ok = !READ_ONCE(memcg->hawkeye.debloat_off);
	rcu_read_unlock();
	return ok;
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

static struct cftype hawkeye_memcg_files[] = {
	{
		.name = "hawkeye.debloat",
		.flags = CFTYPE_NOT_ON_ROOT,
		.read_u64 = debloat_read,
		.write_u64 = debloat_write,
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
