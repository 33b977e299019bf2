/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HawkEye's internal interface: what its files share (promotion's own
 * is in promote.h).
 *
 *   common.c      the mechanisms' lifecycle: the processes they work on,
 *                 holding an address space, the rate limit, the threads
 *   walk.c        page table primitives: accessed bits, 2 MB region walks
 *   prezero.c     asynchronous pre-zeroing: the threads
 *   fault.c       ... its side of the fault path; how faults clear
 *   zeroed.c      the index of zeroed free blocks the allocator looks in
 *   debloat.c     bloat recovery, of the machine and inside memory cgroups:
 *                 the thread, where, in which order
 *   split.c       ... its mechanism: zero-filled subpages, the splits
 *   limits.c      ... when it runs, its limits on khugepaged and reclaim's
 *                 THP shrinker
 *   memcg.c       memory cgroups: limits, pressure, memory.thp.*
 *   registry.c    the processes promotion works on, a record each
 *   promote.c     promotion: the policy table and switch, the thread
 *   access_map.c  the access map hawkeye-g and hawkeye-pmu keep per process
 *   order.c       ... and the order those two policies promote in
 *   baseline.c    what the baseline policies share: base page faults,
 *                 sampling, the promotion round
 *   ingens.c      the ingens policy
 *   freebsd.c     the freebsd policy: 2 MB reservations
 *                 (the three with CONFIG_HAWKEYE_BASELINES)
 *   sysfs.c       /sys/kernel/mm/hawkeye/: the knob table, the counters
 *   proc.c        /proc/<pid>/hawkeye, from each mechanism's part
 */
#ifndef _MM_HAWKEYE_HAWKEYE_H
#define _MM_HAWKEYE_HAWKEYE_H

#include <linux/init.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/page_idle.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/xarray.h>

struct seq_file;
struct vm_fault;

/*
 * HawkEye's event counters, /sys/kernel/mm/hawkeye/stats/<name> (the names
 * are in sysfs.c). A counter memory.stat is to report per cgroup is a
 * vm event instead (HAWKEYE_* in vm_event_item.h): memcg counts nothing
 * else.
 */
enum hawkeye_stat_item {
#ifdef CONFIG_HAWKEYE_PREZERO
	HAWKEYE_STAT_PREZERO_PAGES,	/* zeroed by the background thread */
	HAWKEYE_STAT_PREZERO_WASTED,	/* ... taken by allocations not needing it */
	HAWKEYE_STAT_PREZERO_MTHP_PAGES, /* ... in blocks below 2 MB, for mTHPs */
	HAWKEYE_STAT_PREZERO_REPORTED_PAGES, /* ... in blocks free page reporting had reported */
	HAWKEYE_STAT_PREZERO_BACKOFF,	/* ... blocks after which it yielded */
	HAWKEYE_STAT_PREZERO_WOKEN,	/* ... thread woken by a fault */
	HAWKEYE_STAT_FAULT_PREZEROED_4K, /* user pages handed out pre-zeroed */
	HAWKEYE_STAT_FAULT_SYNC_ZERO_4K, /* ... and zeroed at allocation */
	HAWKEYE_STAT_FAULT_PREZEROED_2M,
	HAWKEYE_STAT_FAULT_SYNC_ZERO_2M,
#endif
#ifdef CONFIG_HAWKEYE_DEBLOAT
	HAWKEYE_STAT_DEBLOAT_THP_SCANNED, /* bloat recovery: THPs examined */
	HAWKEYE_STAT_DEBLOAT_BYTES_READ, /* ... bytes read while examining */
	HAWKEYE_STAT_DEBLOAT_PSI_START,	/* ... episodes PSI started early */
	HAWKEYE_STAT_DEBLOAT_MEMCG_AHEAD, /* ... cgroup episodes started by the trend */
	HAWKEYE_STAT_DEBLOAT_MEMCG_EPISODE, /* ... episodes inside a cgroup */
	HAWKEYE_STAT_DEBLOAT_MTHP_SPLIT, /* mTHPs (below 2 MB) split by recovery */
#endif
#ifdef CONFIG_HAWKEYE_PROMOTE
	HAWKEYE_STAT_PROMOTE_SAMPLED,	/* promotion: regions sampled */
	HAWKEYE_STAT_PROMOTE_FAILED,	/* ... not collapsed */
	HAWKEYE_STAT_PROMOTE_REGISTER_FAILED, /* ... process not registered: no memory */
	HAWKEYE_STAT_PROMOTE_SMALLER,	/* ... left out: best size below 2 MB */
#endif
#ifdef CONFIG_HAWKEYE_BASELINES
	HAWKEYE_STAT_INGENS_ROUND_AGGRESSIVE, /* ingens: rounds with low FMFI */
	HAWKEYE_STAT_INGENS_ROUND_CONSERVATIVE, /* ... with high FMFI */
	HAWKEYE_STAT_FREEBSD_RESERVE,	/* freebsd: reservations made */
	HAWKEYE_STAT_FREEBSD_RESERVE_FAILED, /* ... not made: no 2 MB block */
	HAWKEYE_STAT_FREEBSD_RESERVE_PAGES, /* ... base pages mapped from them */
	HAWKEYE_STAT_FREEBSD_PROMOTE_INPLACE, /* ... promoted in place */
#endif
	NR_HAWKEYE_STATS
};

DECLARE_PER_CPU(unsigned long, hawkeye_stats[NR_HAWKEYE_STATS]);

static inline void hawkeye_stat_add(enum hawkeye_stat_item item,
				    unsigned long nr)
{
	this_cpu_add(hawkeye_stats[item], nr);
}

static inline void hawkeye_stat_inc(enum hawkeye_stat_item item)
{
	hawkeye_stat_add(item, 1);
}

/* sysfs.c */
unsigned long hawkeye_stat_read(enum hawkeye_stat_item item);

/* common.c */
int hawkeye_grab_user_mms(struct mm_struct ***out, int flag);
int hawkeye_dedup_mms(struct mm_struct **mms, int nr);
bool hawkeye_mmget_alive(struct mm_struct *mm);
void hawkeye_throttle(ktime_t *next, unsigned long done, unsigned int rate);

/* How long @done units of work may take at @rate a second; 0: no limit. */
static inline u64 hawkeye_budget_ns(unsigned long done, unsigned int rate)
{
	return rate ? div_u64((u64)done * NSEC_PER_SEC, rate) : 0;
}

int hawkeye_thread_start(struct task_struct **thread, int (*fn)(void *data),
			 void *data, int nid, const char *name);
void hawkeye_thread_stop(struct task_struct **thread);

/* walk.c */
/* Called for each present PTE of a hawkeye_walk_ptes(); true stops it. */
typedef bool (*hawkeye_pte_fn)(pte_t *pte, pte_t ptent, unsigned long addr,
			       void *arg);

unsigned long hawkeye_walk_ptes(struct mm_struct *mm, pmd_t *pmd,
				unsigned long addr, unsigned long end,
				hawkeye_pte_fn fn, void *arg);

/* THPs of a process and how many of them were accessed. */
struct hawkeye_thp_count {
	unsigned long nr;
	unsigned long young;
	unsigned long pmds;	/* PMDs walked */
	unsigned long holds;	/* mmap_lock holds taken for them */
};

/*
 * The most PMDs hawkeye_count_thps() walks per mmap_lock hold (those with
 * a page table or a huge page), so that a process whose memory spans up
 * to 2 GiB is counted in one hold
 * (each further hold waits behind the writers of an allocator that maps
 * often, and delays recovery's round), and a writer waits for one such
 * walk at most, however large the process.
 */
#define HAWKEYE_THP_COUNT_BATCH	1024

spinlock_t *hawkeye_thp_lock(pmd_t *pmd, struct vm_area_struct *vma,
			     struct folio *(*thp)(pmd_t pmdval),
			     struct folio **folio);
void hawkeye_count_thps(struct mm_struct *mm,
			bool (*vma_ok)(struct vm_area_struct *vma),
			struct folio *(*thp)(pmd_t pmdval),
			struct hawkeye_thp_count *count);

/* A folio of @order's share of @bar, the zero subpages that split a THP. */
static inline unsigned int hawkeye_piece_bar(unsigned int bar,
					     unsigned int order)
{
	return DIV_ROUND_UP(bar << order, HPAGE_PMD_NR);
}

/* walk.c: promotion's */
int hawkeye_young_ptes(struct vm_area_struct *vma, unsigned long addr,
		       unsigned long *young, unsigned long *skipped,
		       unsigned int *present, bool *per_page);

/* Called for a 2 MB region; false stops the walk there. */
typedef bool (*hawkeye_region_fn)(struct vm_area_struct *vma,
				  unsigned long addr, void *arg);

unsigned long hawkeye_walk_regions(struct mm_struct *mm, unsigned long start,
				   unsigned long end, hawkeye_region_fn fn,
				   void *arg);

/* Called for each 2 MB region of a hawkeye_walk_mm(). */
typedef void (*hawkeye_mm_region_fn)(struct vm_area_struct *vma,
				     unsigned long addr, void *arg);

long hawkeye_walk_mm(struct mm_struct *mm, unsigned int chunk,
		     hawkeye_mm_region_fn fn, void *arg);
unsigned int hawkeye_best_order(const unsigned long *used, unsigned long orders,
				unsigned int bar);

/*
 * hawkeye_<param>= on the command line: kept at boot, handed to @apply
 * (a function of const char *) by a late initcall, once what it switches
 * on can run.
 */
#define HAWKEYE_BOOT_PARAM(param, apply)				\
static char *param##_at_boot __initdata;				\
static int __init param##_setup(char *s)				\
{									\
	param##_at_boot = s;						\
	return 1;							\
}									\
__setup(#param "=", param##_setup);					\
static int __init param##_init(void)					\
{									\
	if (param##_at_boot)						\
		apply(param##_at_boot);					\
	return 0;							\
}									\
late_initcall(param##_init)

/* hawkeye_<param>=1 on the command line: @set_enabled(true) at boot. */
#define HAWKEYE_BOOT_SWITCH(param, set_enabled)				\
static int __init param##_switch(const char *s)				\
{									\
	bool on;							\
									\
	if (kstrtobool(s, &on)) {					\
		pr_warn(#param "=%s: not a boolean\n", s);		\
		return -EINVAL;						\
	}								\
	return on ? set_enabled(true) : 0;				\
}									\
HAWKEYE_BOOT_PARAM(param, param##_switch)

/*
 * HawkEye tested and cleared an accessed bit that was set: keep the access
 * for reclaim (young) and for idle page tracking (not idle), as if they
 * had seen the bit themselves. Tested first: a sample pass finds most
 * folios already so, and a locked write per page per pass is most of the
 * pass's cost. A reclaim or idle-page write racing with the test is as if
 * it had come just after the access.
 */
static inline void hawkeye_keep_access(struct folio *folio)
{
	if (!folio_test_young(folio))
		folio_set_young(folio);
	if (folio_test_idle(folio))
		folio_clear_idle(folio);
}

/*
 * Is @mm, on which the caller holds mm_users, still a process's? No once
 * every other user has gone (the process exited) or the OOM reaper has it.
 */
static inline bool hawkeye_mm_alive(struct mm_struct *mm)
{
	return atomic_read(&mm->mm_users) > 1 &&
	       !test_bit(MMF_OOM_SKIP, &mm->flags);
}

/* debloat/threshold's default: at least 1 MB back per split. */
#define HAWKEYE_DEBLOAT_THRESHOLD	(HPAGE_PMD_NR / 2)

#ifdef CONFIG_HAWKEYE_PREZERO
/* Pre-zeroing knobs; the threads read them with READ_ONCE(). */
struct hawkeye_prezero_params {
	unsigned int rate;		/* 4 KB pages per second per node, 0: no limit */
	unsigned int idle_rate;		/* ... paced, while the CPU is otherwise idle */
	unsigned int target_mb;		/* zeroed free memory per node, 0: automatic */
	unsigned int nontemporal;	/* non-temporal stores where the CPU has them */
	unsigned int paced;		/* rate only while the CPU has other work */
	unsigned int fault_clear;	/* how a THP fault clears: enum fault_clear */
};

/* How folio_zero_user() clears a huge folio (prezero/fault_clear). */
enum fault_clear {
	FAULT_CLEAR_UPSTREAM,		/* 6.12's: 4 KB at a time, toward the fault */
	FAULT_CLEAR_SEQUENTIAL,		/* 7.0's: whole contiguous ranges */
	FAULT_CLEAR_NONTEMPORAL,	/* sequential, non-temporal stores */
	NR_FAULT_CLEAR,
};

#define HAWKEYE_PREZERO_MAX_RATE	(1U << 24)

extern struct hawkeye_prezero_params hawkeye_prezero;

int hawkeye_prezero_set_enabled(bool on);
int hawkeye_prezero_set_rate(unsigned int rate);
int hawkeye_prezero_set_paced(unsigned int paced);
int hawkeye_prezero_set_target_mb(unsigned int mb);
int hawkeye_prezero_set_idle_rate(unsigned int rate);
int hawkeye_prezero_set_fault_clear(unsigned int mode);
void hawkeye_prezero_wake(int nid);
#endif /* CONFIG_HAWKEYE_PREZERO */

#ifdef CONFIG_HAWKEYE_DEBLOAT
/*
 * In code, bloat recovery is "debloat" (the admin guide's name for it is
 * the long one), and a THP's "bar" is the number of zero-filled subpages
 * that make it worth splitting (debloat/threshold, lowered while memory
 * stays tight: debloat/current_threshold).
 */

/* Bloat recovery knobs; the thread reads them with READ_ONCE(). */
struct hawkeye_debloat_params {
	unsigned int high_pct;		/* start above this % of memory in use */
	unsigned int low_pct;		/* ... and stop below this, < high_pct */
	unsigned int threshold;		/* zero subpages that make a THP worth splitting */
	unsigned int rate;		/* THPs examined per second, 0: no limit */
	unsigned int psi_pct;		/* ... start at low_pct under this PSI, 0: never */
	unsigned int mthp;		/* split to, and split, mTHP sizes */
};

#define HAWKEYE_DEBLOAT_MAX_RATE	(1U << 20)
/* Idle, the recovery thread looks at memory use this often. */
#define HAWKEYE_DEBLOAT_POLL	(HZ / 4)

extern struct hawkeye_debloat_params hawkeye_debloat;

/* The zero-filled subpages that make a THP worth splitting (the knob). */
static inline unsigned int hawkeye_debloat_threshold(void)
{
	return READ_ONCE(hawkeye_debloat.threshold);
}

int hawkeye_debloat_set_enabled(bool on);
int hawkeye_debloat_set_high_pct(unsigned int pct);
int hawkeye_debloat_set_low_pct(unsigned int pct);
int hawkeye_debloat_set_threshold(unsigned int nr);
unsigned int hawkeye_debloat_current_threshold(void);
/*
 * Where recovery works: the whole machine, or a memory cgroup (and its
 * descendants) nearing its limit.
 */
struct debloat_domain {
	struct mem_cgroup *memcg;	/* NULL: the machine */
	unsigned int bar;		/* zero subpages worth a split */
	bool split;			/* the round split a THP */
};

/* The state of a scan of a process's THPs (and mTHPs). */
struct debloat_walk {
	struct debloat_domain *dom;
	unsigned int budget;	/* THPs left to examine in this batch */
	unsigned int pmds;	/* PMDs walked in this batch */
	unsigned long next;	/* where the next batch starts */
	/* In the 2 MB range examined: */
	unsigned long bytes;	/* bytes read */
	bool split;		/* a folio was split */
};

bool hawkeye_debloat_active(void);

/* limits.c: when recovery runs, and what it asks of the rest of mm */
bool hawkeye_debloat_goes_on(struct debloat_domain *dom);
bool hawkeye_debloat_wanted_in(struct mem_cgroup *memcg, bool active);
bool hawkeye_debloat_wanted_for(struct mem_cgroup *memcg, bool active);
bool hawkeye_debloat_pressure(struct mem_cgroup *memcg);

/* split.c: recovery's mechanism */
bool hawkeye_debloat_vma_suitable(struct vm_area_struct *vma);
struct folio *hawkeye_debloat_pmd_folio(pmd_t pmdval);
int hawkeye_debloat_walk(struct debloat_walk *dw, struct mm_struct *mm);
int hawkeye_debloat_split_pieces(struct folio *folio, unsigned int order,
				 unsigned int bar);

/* memcg.c: recovery's questions to a cgroup */
#ifdef CONFIG_MEMCG
unsigned long hawkeye_memcg_limit(struct mem_cgroup *memcg);
unsigned long hawkeye_memcg_use(struct mem_cgroup *memcg);
unsigned int hawkeye_memcg_psi(struct mem_cgroup *memcg);
bool hawkeye_memcg_recoverable(struct folio *folio, struct mem_cgroup *domain);
bool hawkeye_memcg_debloat_off(struct mem_cgroup *memcg);
int hawkeye_memcg_grab_mms(struct mem_cgroup *memcg, struct mm_struct ***out);
#else
static inline unsigned int hawkeye_memcg_psi(struct mem_cgroup *memcg)
{
	return 0;
}

static inline bool hawkeye_memcg_recoverable(struct folio *folio,
					     struct mem_cgroup *domain)
{
	return true;
}

static inline int hawkeye_memcg_grab_mms(struct mem_cgroup *memcg,
					 struct mm_struct ***out)
{
	*out = NULL;
	return 0;
}
#endif
#else /* !CONFIG_HAWKEYE_DEBLOAT */

static inline unsigned int hawkeye_debloat_threshold(void)
{
	return HAWKEYE_DEBLOAT_THRESHOLD;
}
#endif /* CONFIG_HAWKEYE_DEBLOAT */

/* memcg.c: memory.thp.max */
#ifdef CONFIG_MEMCG
bool hawkeye_memcg_huge_full(struct mem_cgroup *memcg);
#else
static inline bool hawkeye_memcg_huge_full(struct mem_cgroup *memcg)
{
	return false;
}
#endif

/*
 * promote.c: what recovery asks of promotion. The rest of promotion's
 * interface is in promote.h.
 */
#ifdef CONFIG_HAWKEYE_PROMOTE
bool hawkeye_promote_overhead(struct mm_struct *mm, unsigned long *overhead);
int hawkeye_promote_measured(struct mm_struct *mm);
#else
/* Recovery's estimate of a process's MMU overhead: none without promotion. */
static inline bool hawkeye_promote_overhead(struct mm_struct *mm,
					    unsigned long *overhead)
{
	return false;
}

static inline int hawkeye_promote_measured(struct mm_struct *mm)
{
	return -1;
}
#endif /* CONFIG_HAWKEYE_PROMOTE */

#endif /* _MM_HAWKEYE_HAWKEYE_H */
