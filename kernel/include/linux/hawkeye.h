/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HawkEye: huge page management (ASPLOS '19) on top of THP.
 *
 * The hooks the core mm calls, each a no-op when its mechanism is not
 * built (CONFIG_HAWKEYE_<MECHANISM>). Built in but disabled, a hook on the
 * fault path costs a static branch (the allocator's, in
 * mm/hawkeye/zeroed.h, a page flag test too).
 */
#ifndef _LINUX_HAWKEYE_H
#define _LINUX_HAWKEYE_H

#include <linux/gfp.h>
#include <linux/jump_label.h>
#include <linux/minmax.h>
#include <linux/mm_types.h>
#include <linux/page-flags.h>

struct mem_cgroup;
struct file;
struct inode;
struct vm_fault;

#ifdef CONFIG_HAWKEYE_PREZERO

DECLARE_STATIC_KEY_FALSE(hawkeye_prezero_key);

/* Is async pre-zeroing on (sysfs prezero/enabled or hawkeye_prezero=1)? */
static inline bool hawkeye_prezero_enabled(void)
{
	return static_branch_unlikely(&hawkeye_prezero_key);
}

/*
 * Called by free page reporting for each unreported free block. Reporting
 * lets the hypervisor discard a block, so a zeroed one would lose its
 * mark and the zeroing thread would take the memory back from the host,
 * round and round: while pre-zeroing is on, the pool is not reported.
 * Its size is bounded (prezero/target_mb; with a reporting device, a
 * quarter of the node by default), so reporting gets the rest.
 */
static inline bool hawkeye_keep_from_reporting(struct page *page)
{
	return hawkeye_prezero_enabled() && PageZeroed(page);
}

DECLARE_STATIC_KEY_FALSE(hawkeye_fault_clear_key);
bool __hawkeye_folio_zero_user(struct folio *folio, unsigned long addr_hint);

/*
 * Called by folio_zero_user(): clear a huge folio another way than 6.12's
 * (prezero/fault_clear), the baselines pre-zeroing is measured against.
 * Returns false to leave it to 6.12's way.
 */
static inline bool hawkeye_folio_zero_user(struct folio *folio,
					   unsigned long addr_hint)
{
	return static_branch_unlikely(&hawkeye_fault_clear_key) &&
	       __hawkeye_folio_zero_user(folio, addr_hint);
}

#else /* !CONFIG_HAWKEYE_PREZERO */

static inline bool hawkeye_prezero_enabled(void)
{
	return false;
}

static inline bool hawkeye_keep_from_reporting(struct page *page)
{
	return false;
}

static inline bool hawkeye_folio_zero_user(struct folio *folio,
					   unsigned long addr_hint)
{
	return false;
}

#endif /* CONFIG_HAWKEYE_PREZERO */

#ifdef CONFIG_HAWKEYE_DEBLOAT

DECLARE_STATIC_KEY_FALSE(hawkeye_debloat_key);

/* Is bloat recovery on (sysfs debloat/enabled or hawkeye_debloat=1)? */
static inline bool hawkeye_debloat_enabled(void)
{
	return static_branch_unlikely(&hawkeye_debloat_key);
}

unsigned int __hawkeye_max_ptes_none(struct mm_struct *mm, unsigned int charged);
unsigned int __hawkeye_thp_max_ptes_none(struct folio *folio,
					 unsigned int max_ptes_none);
int hawkeye_split_underused(struct folio *folio);

/*
 * The zero-filled subpages above which reclaim's THP shrinker splits
 * @folio (thp_underused()): with bloat recovery on, recovery's bar;
 * otherwise upstream's, khugepaged's @max_ptes_none.
 */
static inline unsigned int hawkeye_thp_max_ptes_none(struct folio *folio,
						     unsigned int max_ptes_none)
{
	if (hawkeye_debloat_enabled())
		return __hawkeye_thp_max_ptes_none(folio, max_ptes_none);
	return max_ptes_none;
}

/*
 * khugepaged's limit on empty or zero-page PTEs in an anonymous range of
 * @mm it collapses. While bloat recovery is on and memory is tight, a
 * range that recovery would split (threshold or more zero-filled subpages)
 * is not collapsed in a process whose huge pages recovery has split; in a
 * memory cgroup near its limit, nor is one whose collapse would take the
 * cgroup's usage past where recovery starts. @charged: pages of the
 * collapse's new huge page already charged (HPAGE_PMD_NR once khugepaged
 * has allocated it, 0 before), which the collapse gives back.
 */
static inline unsigned int hawkeye_max_ptes_none(struct mm_struct *mm,
						 unsigned int max_ptes_none,
						 unsigned int charged)
{
	if (hawkeye_debloat_enabled())
		return min(max_ptes_none, __hawkeye_max_ptes_none(mm, charged));
	return max_ptes_none;
}

#else /* !CONFIG_HAWKEYE_DEBLOAT */

static inline unsigned int hawkeye_max_ptes_none(struct mm_struct *mm,
						 unsigned int max_ptes_none,
						 unsigned int charged)
{
	return max_ptes_none;
}

static inline unsigned int hawkeye_thp_max_ptes_none(struct folio *folio,
						     unsigned int max_ptes_none)
{
	return max_ptes_none;
}

/* Used by the THP shrinker only, after huge_mm.h. */
#define hawkeye_split_underused(folio) split_folio(folio)

#endif /* CONFIG_HAWKEYE_DEBLOAT */

#ifdef CONFIG_HAWKEYE

#ifdef CONFIG_HAWKEYE_PROMOTE
/* Buckets of a process's access_map, by access coverage. */
#define HAWKEYE_NR_BUCKETS	10

/**
 * struct hawkeye_vtime - a cgroup's place in promotion's fair queueing
 * @t: its virtual time in each bucket of access coverage
 * @last: the bucket it was served in last, plus one; 0: none yet
 * @now: the buckets its processes have regions in, at this batch
 * @queued: ... at the batch before
 * @entered: buckets its regions moved into since the batch before, not
 *	in @queued, and not yet settled in this batch
 * @departed: buckets its regions moved out of since the batch before
 */
struct hawkeye_vtime {
	unsigned int t[HAWKEYE_NR_BUCKETS];
	unsigned int last;
	u16 now;
	u16 queued;
	u16 entered;
	u16 departed;
};
#endif

/**
 * struct hawkeye_memcg - HawkEye's state in a memory cgroup
 * @huge_capped: memory.thp.max is not "max": ...
 * @huge_max: ... the most anonymous THP memory of the subtree, in pages
 * @debloat_off: memory.thp.shrink_underused is 0: recovery splits none of the
 *	THPs charged to the cgroup or its descendants
 * @active: a recovery episode runs for the cgroup's limit
 * @bar: ... splitting THPs with at least this many zero-filled subpages
 * @thp: recovery's last look at the cgroup's anonymous THPs, in pages ...
 * @thp_at: ... and when, in jiffies
 * @weight: memory.thp.weight, the cgroup's weight among its siblings
 *	for promotions; 0: 100
 * @vtime: promotion: the cgroup's place in start-time fair queueing
 *
 * Zeroed with the cgroup, which is each file's default.
 */
struct hawkeye_memcg {
	bool huge_capped;
	unsigned long huge_max;
#ifdef CONFIG_HAWKEYE_DEBLOAT
	bool debloat_off;
	bool active;
	unsigned int bar;
	unsigned long thp;
	unsigned long thp_at;
#endif
#ifdef CONFIG_HAWKEYE_PROMOTE
	unsigned int weight;
	struct hawkeye_vtime vtime;
#endif
};

/* When /proc/<pid>/hawkeye is opened and released. */
int hawkeye_proc_open(struct file *file, struct mm_struct *mm);
int hawkeye_proc_release(struct inode *inode, struct file *file);

#endif /* CONFIG_HAWKEYE */

#if defined(CONFIG_HAWKEYE) && defined(CONFIG_MEMCG)
DECLARE_STATIC_KEY_FALSE(hawkeye_huge_cap_key);
bool __hawkeye_huge_capped(struct mm_struct *mm, bool collapse);

/*
 * Would one more anonymous THP in @mm take its cgroup or an ancestor past
 * memory.thp.max? Asked before a THP fault or an anonymous
 * collapse allocates anything: the fault then maps smaller pages, the
 * collapse does not happen. Off the static key, set by the first cap
 * written, nothing is checked.
 */
static inline bool hawkeye_huge_capped(struct mm_struct *mm, bool collapse)
{
	if (static_branch_unlikely(&hawkeye_huge_cap_key))
		return __hawkeye_huge_capped(mm, collapse);
	return false;
}
#else
static inline bool hawkeye_huge_capped(struct mm_struct *mm, bool collapse)
{
	return false;
}
#endif

#ifdef CONFIG_HAWKEYE_PROMOTE

DECLARE_STATIC_KEY_FALSE(hawkeye_promote_key);

/*
 * Is a promotion policy other than linux on? khugepaged then leaves
 * anonymous memory to HawkEye's promotion thread.
 */
static inline bool hawkeye_promote_enabled(void)
{
	return static_branch_unlikely(&hawkeye_promote_key);
}

/*
 * khugepaged's, once per process: out of line, they return after a load
 * or two under policy linux.
 */
void hawkeye_promote_enter(struct mm_struct *mm);
void hawkeye_promote_exit(struct mm_struct *mm);
#else /* !CONFIG_HAWKEYE_PROMOTE */

static inline bool hawkeye_promote_enabled(void)
{
	return false;
}

static inline void hawkeye_promote_enter(struct mm_struct *mm)
{
}

static inline void hawkeye_promote_exit(struct mm_struct *mm)
{
}

#endif /* CONFIG_HAWKEYE_PROMOTE */

#ifdef CONFIG_HAWKEYE_BASELINES
DECLARE_STATIC_KEY_FALSE(hawkeye_policy_fault_key);

/*
 * Does the promotion policy take anonymous faults (ingens, freebsd)? They
 * then map base pages only: no THP, no mTHP, no huge zero page.
 */
static inline bool hawkeye_policy_faults(void)
{
	return static_branch_unlikely(&hawkeye_policy_fault_key);
}

/*
 * An anonymous base page fault, handed to the promotion policy: ingens
 * registers the process for promotion (as a huge page fault would have),
 * freebsd also maps the page from a 2 MB reservation. VM_FAULT_FALLBACK:
 * map a base page as usual.
 */
vm_fault_t hawkeye_policy_fault(struct vm_fault *vmf);
#else /* !CONFIG_HAWKEYE_BASELINES */

static inline bool hawkeye_policy_faults(void)
{
	return false;
}

static inline vm_fault_t hawkeye_policy_fault(struct vm_fault *vmf)
{
	return VM_FAULT_FALLBACK;
}

#endif /* CONFIG_HAWKEYE_BASELINES */
#endif /* _LINUX_HAWKEYE_H */
