// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye fine-grained huge page promotion (HawkEye-G).
 *
 * khugepaged promotes a process's memory from its lowest address up, and
 * processes one after the other. With the hawkeye-g policy, khugepaged
 * leaves anonymous memory alone and a kernel thread, hawkeye_promoted,
 * promotes the 2 MB regions whose base pages are accessed most first:
 *
 * - every scan_period_ms it clears the accessed bits of the base pages of
 *   every eligible 2 MB region (one still mapped by a page table), waits
 *   sample_window_ms and counts the accessed bits set again: the region's
 *   access coverage, 0 to 512. An exponential moving average of it puts
 *   the region in one of HAWKEYE_NR_BUCKETS buckets of its process's
 *   access_map; a region that moves up goes to the head of its new bucket,
 *   one that moves down to the tail.
 * - every sleep_ms it collapses up to `batch` regions, with khugepaged's
 *   own code and limits, from the highest bucket that any process has a
 *   region in, round-robin across the processes that have one there.
 *
 * With the hawkeye-pmu policy the same thread promotes for the process
 * with the highest MMU overhead as measured with performance counters (by
 * tools/hawkeye-pmud, written to promote/measured_overhead), from its
 * highest bucket down, processes within pmu_band of the highest taking
 * turns, and none for a process measured below pmu_threshold. Processes
 * without a measurement are served after them, in the hawkeye-g order.
 *
 * The processes are those khugepaged knows (MMF_VM_HUGEPAGE), and only
 * while the policy is not linux: one is registered with __khugepaged_enter()
 * and, for those that khugepaged knew before the switch or whose
 * registration failed for want of memory, by the thread at each sample
 * pass; it is dropped with __khugepaged_exit() or when the policy goes
 * back to linux. Under linux fork and exit cost HawkEye nothing but a load.
 * Only this thread changes an access_map; the map's mutex serialises it
 * with readers (/proc/<pid>/hawkeye). A map is reference counted: the
 * registry holds one reference and the thread one while it works on it,
 * so it never sees a freed map. The thread holds a process's mm_users only
 * for a bounded piece of work (PROMOTE_CHUNK regions or one collapse),
 * never across a sleep: a process that exits gives its memory back at once.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/freezer.h>
#include <linux/hashtable.h>
#include <linux/hawkeye.h>
#include <linux/huge_mm.h>
#include <linux/khugepaged.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/page_idle.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include <linux/vmstat.h>
#include <linux/xarray.h>
#include <asm/tlbflush.h>

#include "../internal.h"
#include "hawkeye.h"

#define CREATE_TRACE_POINTS
#include <trace/events/hawkeye.h>

/* Access coverage a bucket spans: 0-49 bucket 0, ..., 450-512 bucket 9. */
#define HAWKEYE_BUCKET_WIDTH	50

DEFINE_STATIC_KEY_FALSE(hawkeye_promote_key);

struct hawkeye_promote_params hawkeye_promote = {
	.scan_period_ms = 30000,	/* the paper's: sample every 30 s ... */
	.sample_window_ms = 1000,	/* ... for 1 s */
	.ema_weight = 50,
	.batch = 8,			/* khugepaged's pages_to_scan / 512 */
	.sleep_ms = 10000,		/* khugepaged's scan_sleep_millisecs */
	.pmu_threshold = 200,		/* the paper's 2% */
	.pmu_band = 100,
	.pmu_ttl_ms = 30000,		/* three of hawkeye-pmud's periods */
};

static const char * const promote_policy_names[] = {
	[HAWKEYE_POLICY_LINUX] = "linux",
	[HAWKEYE_POLICY_G] = "hawkeye-g",
	[HAWKEYE_POLICY_PMU] = "hawkeye-pmu",
	[HAWKEYE_POLICY_INGENS] = "ingens",
	[HAWKEYE_POLICY_FREEBSD] = "freebsd",
};

/* A 2 MB region of a process, mapped by a page table when last seen. */
struct hawkeye_region {
	struct list_head node;		/* in its bucket */
	unsigned long addr;
	unsigned int ema;		/* access coverage, 0..HPAGE_PMD_NR */
	unsigned int bucket;
	unsigned long pass;		/* the sample pass that saw it last */
};

/* A process's access_map and statistics. */
struct hawkeye_mm {
	refcount_t ref;			/* the registry's, the thread's */
	struct hlist_node hash;		/* promote_hash, by mm */
	struct list_head node;		/* promote_mms, in registration order */
	struct mm_struct *mm;		/* mmgrab()bed */
	u64 seq;			/* registration order, for round-robin */
	pid_t pid;			/* who registered it, if it was the owner */
	bool armed;			/* accessed bits cleared, window open */
	struct mutex lock;		/* the map and counters, against readers */
	struct xarray regions;		/* by addr >> PMD_SHIFT */
	struct list_head buckets[HAWKEYE_NR_BUCKETS];
	unsigned long nr[HAWKEYE_NR_BUCKETS];
	unsigned long nr_regions;
	unsigned long overhead;		/* sum of the regions' ema */
	unsigned long samples;		/* sample passes over this mm */
	unsigned long promotions;
	unsigned long promote_failed;
	int measured;			/* MMU overhead, 1/100 %; -1: none */
	unsigned long measured_at;	/* jiffies */
	struct hawkeye_base_mm base;	/* ingens, freebsd (baselines.c) */
};

/* A region picked for promotion. */
struct hawkeye_pick {
	struct hawkeye_mm *hm;
	struct hawkeye_region *r;
};

/* Where round-robin goes on: the bucket and the process served last. */
struct hawkeye_rr {
	int bucket;			/* -1: none yet */
	u64 seq;
	u64 pmu_seq;			/* hawkeye-pmu: the process served last */
};

#define PROMOTE_HASH_BITS	10

/*
 * Regions sampled per mmap_lock hold: 4096 PTEs, khugepaged's default
 * pages_to_scan. A writer waiting for the lock ends a chunk sooner.
 */
#define PROMOTE_CHUNK		8

/* Protects promote_hash, promote_mms, promote_nr_mms and promote_seq. */
static DEFINE_SPINLOCK(promote_lock);
static DEFINE_HASHTABLE(promote_hash, PROMOTE_HASH_BITS);
static LIST_HEAD(promote_mms);
static unsigned int promote_nr_mms;
static u64 promote_seq;

static DEFINE_MUTEX(promote_mutex);	/* policy, thread, paired knobs */
static struct task_struct *promote_thread;
static enum hawkeye_policy promote_policy = HAWKEYE_POLICY_LINUX;
static bool promote_pmu_told;		/* "no measurements" said once */

/* The bucket of an access coverage (EMA) of 0..HPAGE_PMD_NR. */
static unsigned int promote_bucket(unsigned int ema)
{
	return min(ema / HAWKEYE_BUCKET_WIDTH, HAWKEYE_NR_BUCKETS - 1);
}

/* Exponential moving average, @weight percent to the new @coverage. */
static unsigned int promote_ema(unsigned int old, unsigned int coverage,
				unsigned int weight)
{
	return (weight * coverage + (100 - weight) * old) / 100;
}

static void promote_mm_init(struct hawkeye_mm *hm, struct mm_struct *mm)
{
	int b;

	refcount_set(&hm->ref, 1);
	hm->mm = mm;
	hm->measured = -1;
	hm->base.mm = mm;
	INIT_LIST_HEAD(&hm->node);
	mutex_init(&hm->lock);
	xa_init(&hm->regions);
	for (b = 0; b < HAWKEYE_NR_BUCKETS; b++)
		INIT_LIST_HEAD(&hm->buckets[b]);
}

/*
 * Give @r, new (@fresh) or in the map, the access coverage @ema: a region
 * that moves up goes to the head of its bucket, one that moves down to
 * the tail, one that stays in its bucket keeps its place. A new region
 * goes to the tail, behind those already there.
 */
static void map_place(struct hawkeye_mm *hm, struct hawkeye_region *r,
		      unsigned int ema, bool fresh)
{
	unsigned int b = promote_bucket(ema);

	if (fresh) {
		list_add_tail(&r->node, &hm->buckets[b]);
		hm->nr[b]++;
		hm->nr_regions++;
	} else if (b != r->bucket) {
		if (b > r->bucket)
			list_move(&r->node, &hm->buckets[b]);
		else
			list_move_tail(&r->node, &hm->buckets[b]);
		hm->nr[r->bucket]--;
		hm->nr[b]++;
	}
	hm->overhead += ema;
	if (!fresh)
		hm->overhead -= r->ema;
	r->ema = ema;
	r->bucket = b;
}

/* Take @r out of the map and free it. */
static void map_remove(struct hawkeye_mm *hm, struct hawkeye_region *r)
{
	list_del(&r->node);
	xa_erase(&hm->regions, r->addr >> PMD_SHIFT);
	hm->nr[r->bucket]--;
	hm->nr_regions--;
	hm->overhead -= r->ema;
	kfree(r);
}

static void map_clear(struct hawkeye_mm *hm)
{
	struct hawkeye_region *r;
	unsigned long index;

	xa_for_each(&hm->regions, index, r)
		map_remove(hm, r);
}

/* Point each process's @pos at the head of each of its buckets. */
static void promote_pos_init(struct hawkeye_mm **hms, unsigned int nr,
			     struct list_head *(*pos)[HAWKEYE_NR_BUCKETS])
{
	unsigned int i;
	int b;

	for (i = 0; i < nr; i++)
		for (b = 0; b < HAWKEYE_NR_BUCKETS; b++)
			pos[i][b] = hms[i]->buckets[b].next;
}

/*
 * The hawkeye-g order: up to @n regions of the processes @hms[@nr] (in
 * registration order), from the highest bucket in which any of them has
 * a region. Within that bucket, processes take turns (round-robin), each
 * giving the region at the head of its bucket first. Turns start with the
 * first process whenever the bucket changes, and go on from where @rr left
 * them otherwise, so that a batch ending mid-bucket does not favour anyone.
 * @pos is scratch space for @nr processes. Changes nothing but @rr and
 * @pos. Returns the number of regions put in @out.
 */
static unsigned int promote_order(struct hawkeye_mm **hms, unsigned int nr,
				  struct list_head *(*pos)[HAWKEYE_NR_BUCKETS],
				  struct hawkeye_rr *rr,
				  struct hawkeye_pick *out, unsigned int n)
{
	unsigned int i, k, j;
	int b;

	promote_pos_init(hms, nr, pos);

	for (k = 0; k < n; k++) {
		unsigned int start = 0;

		/* The highest bucket with a region left to pick. */
		for (b = HAWKEYE_NR_BUCKETS - 1; b >= 0; b--) {
			for (i = 0; i < nr; i++)
				if (pos[i][b] != &hms[i]->buckets[b])
					break;
			if (i < nr)
				break;
		}
		if (b < 0)
			break;

		/* The first process after the one served last. */
		if (b == rr->bucket)
			while (start < nr && hms[start]->seq <= rr->seq)
				start++;
		for (j = 0; j < nr; j++) {
			i = (start + j) % nr;
			if (pos[i][b] != &hms[i]->buckets[b])
				break;
		}
		out[k].hm = hms[i];
		out[k].r = list_entry(pos[i][b], struct hawkeye_region, node);
		pos[i][b] = pos[i][b]->next;
		rr->bucket = b;
		rr->seq = hms[i]->seq;
	}
	return k;
}

/* The highest bucket of a process with a region left at @pos; -1: none. */
static int promote_top(struct hawkeye_mm *hm, struct list_head **pos)
{
	int b;

	for (b = HAWKEYE_NR_BUCKETS - 1; b >= 0; b--)
		if (pos[b] != &hm->buckets[b])
			return b;
	return -1;
}

/*
 * The hawkeye-pmu order: up to @n regions, each from the process with the
 * highest measured overhead (@measured[i], 1/100 %, -1: none) at or above
 * @threshold that has a region left, from its highest bucket down. The
 * processes within @band of the highest take turns, starting after the
 * one @rr served last. @hms are in registration order, @pos is scratch
 * space. Changes nothing but @rr and @pos; returns the number put in @out.
 */
static unsigned int promote_order_pmu(struct hawkeye_mm **hms, unsigned int nr,
				      const int *measured, int threshold,
				      int band,
				      struct list_head *(*pos)[HAWKEYE_NR_BUCKETS],
				      struct hawkeye_rr *rr,
				      struct hawkeye_pick *out, unsigned int n)
{
	unsigned int i, j, k;
	int b;

	promote_pos_init(hms, nr, pos);

	for (k = 0; k < n; k++) {
		unsigned int start = 0;
		int best = -1;

		for (i = 0; i < nr; i++)
			if (measured[i] >= threshold && measured[i] > best &&
			    promote_top(hms[i], pos[i]) >= 0)
				best = measured[i];
		if (best < 0)
			break;

		while (start < nr && hms[start]->seq <= rr->pmu_seq)
			start++;
		for (j = 0; j < nr; j++) {
			i = (start + j) % nr;
			if (measured[i] >= max(threshold, best - band)) {
				b = promote_top(hms[i], pos[i]);
				if (b >= 0)
					break;
			}
		}
		out[k].hm = hms[i];
		out[k].r = list_entry(pos[i][b], struct hawkeye_region, node);
		pos[i][b] = pos[i][b]->next;
		rr->pmu_seq = hms[i]->seq;
	}
	return k;
}

/* @hm's measured MMU overhead if it is recent enough, else -1. */
static int promote_measured(struct hawkeye_mm *hm)
{
	int overhead = READ_ONCE(hm->measured);
	unsigned long ttl = msecs_to_jiffies(READ_ONCE(hawkeye_promote.pmu_ttl_ms));

	if (overhead < 0 || time_after(jiffies, READ_ONCE(hm->measured_at) + ttl))
		return -1;
	return overhead;
}

/* Caller holds promote_lock; the map lives while it does. */
static struct hawkeye_mm *promote_lookup(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	hash_for_each_possible(promote_hash, hm, hash, (unsigned long)mm)
		if (hm->mm == mm)
			return hm;
	return NULL;
}

/* Drop a reference on @hm; the last one frees it. */
static void promote_mm_put(struct hawkeye_mm *hm)
{
	if (!refcount_dec_and_test(&hm->ref))
		return;
	map_clear(hm);
	xa_destroy(&hm->regions);
	mutex_destroy(&hm->lock);
	mmdrop(hm->mm);
	kfree(hm);
}

/*
 * @mm's map with a reference (promote_mm_put() it), or NULL. A policy
 * switch may unregister it meanwhile: mm_users does not keep it.
 */
static struct hawkeye_mm *promote_find(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	spin_lock(&promote_lock);
	hm = promote_lookup(mm);
	if (hm)
		refcount_inc(&hm->ref);
	spin_unlock(&promote_lock);
	return hm;
}

/*
 * Register @mm (on which the caller holds mm_users), unless it already is
 * or the policy is linux. Without memory it is registered by the thread's
 * next sample pass.
 */
static void promote_register(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	if (hawkeye_promote_get_policy() == HAWKEYE_POLICY_LINUX)
		return;
	hm = kzalloc(sizeof(*hm), GFP_KERNEL);
	if (!hm) {
		/* The thread tries again at its next sample pass. */
		count_vm_event(HAWKEYE_PROMOTE_REGISTER_FAILED);
		return;
	}
	promote_mm_init(hm, mm);
	if (current->mm == mm)
		hm->pid = current->tgid;
	spin_lock(&promote_lock);
	/* A switch to linux forgets everyone after it sets the policy. */
	if (hawkeye_promote_get_policy() == HAWKEYE_POLICY_LINUX ||
	    promote_lookup(mm)) {
		spin_unlock(&promote_lock);
		mutex_destroy(&hm->lock);
		kfree(hm);
		return;
	}
	mmgrab(mm);
	hm->seq = ++promote_seq;
	hash_add(promote_hash, &hm->hash, (unsigned long)mm);
	list_add_tail(&hm->node, &promote_mms);
	WRITE_ONCE(promote_nr_mms, promote_nr_mms + 1);
	spin_unlock(&promote_lock);
}

/* Called by __khugepaged_enter() once for each mm that khugepaged will scan. */
void hawkeye_promote_enter(struct mm_struct *mm)
{
	promote_register(mm);
}

/*
 * Called by __khugepaged_exit() from __mmput(): mm_users is zero. The map
 * goes with the thread's reference if it holds one.
 */
void hawkeye_promote_exit(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	/* Policy linux: nothing is registered, nothing to look up. */
	if (!READ_ONCE(promote_nr_mms))
		return;
	spin_lock(&promote_lock);
	hm = promote_lookup(mm);
	if (hm) {
		hash_del(&hm->hash);
		list_del(&hm->node);
		WRITE_ONCE(promote_nr_mms, promote_nr_mms - 1);
	}
	spin_unlock(&promote_lock);
	if (hm)
		promote_mm_put(hm);
}

/* Unregister every process: the policy is linux again. Allocates nothing. */
static void promote_forget_all(void)
{
	struct hawkeye_mm *hm, *tmp;
	LIST_HEAD(gone);

	spin_lock(&promote_lock);
	list_splice_init(&promote_mms, &gone);
	hash_init(promote_hash);
	WRITE_ONCE(promote_nr_mms, 0);
	spin_unlock(&promote_lock);
	list_for_each_entry_safe(hm, tmp, &gone, node)
		promote_mm_put(hm);
}

/*
 * Register the processes khugepaged knows that are not registered yet:
 * those from before the policy left linux, and those whose registration
 * failed.
 */
static void promote_register_all(void)
{
	struct mm_struct **mms;
	int i, nr;

	nr = hawkeye_grab_user_mms(&mms, MMF_VM_HUGEPAGE);
	for (i = 0; i < nr && !kthread_should_stop(); i++) {
		if (mmget_not_zero(mms[i])) {
			promote_register(mms[i]);
			mmput(mms[i]);
		}
		mmdrop(mms[i]);
	}
	for (; i < nr; i++)
		mmdrop(mms[i]);
	kvfree(mms);
}

/*
 * Take a reference on every registered process's map, in registration
 * order. Returns the number taken, the array in *@out (kfree() it after
 * promote_put_mms()). The processes' address spaces are not held: use
 * promote_mm_get() for each piece of work.
 */
static unsigned int promote_get_mms(struct hawkeye_mm ***out)
{
	struct hawkeye_mm **hms, *hm;
	unsigned int max, nr = 0;

	*out = NULL;
	for (;;) {
		max = READ_ONCE(promote_nr_mms) + 8;
		hms = kmalloc_array(max, sizeof(*hms), GFP_KERNEL);
		if (!hms)
			return 0;
		spin_lock(&promote_lock);
		if (promote_nr_mms <= max)
			break;
		spin_unlock(&promote_lock);
		kfree(hms);
	}
	list_for_each_entry(hm, &promote_mms, node) {
		refcount_inc(&hm->ref);
		hms[nr++] = hm;
	}
	spin_unlock(&promote_lock);
	*out = hms;
	return nr;
}

static void promote_put_mms(struct hawkeye_mm **hms, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		promote_mm_put(hms[i]);
	kfree(hms);
}

/*
 * Hold @hm's address space for a piece of work: false if the process has
 * exited or was OOM-reaped. mmput() it after.
 */
static bool promote_mm_get(struct hawkeye_mm *hm)
{
	if (!mmget_not_zero(hm->mm))
		return false;
	if (hawkeye_mm_alive(hm->mm))
		return true;
	mmput(hm->mm);
	return false;
}

static pid_t promote_mm_pid(struct hawkeye_mm *hm)
{
	pid_t pid = 0;
#ifdef CONFIG_MEMCG
	struct task_struct *owner;

	rcu_read_lock();
	owner = rcu_dereference(hm->mm->owner);
	if (owner)
		pid = task_tgid_nr(owner);
	rcu_read_unlock();
#endif
	return pid ? pid : hm->pid;
}

/* Anonymous memory that khugepaged would collapse. */
static bool promote_vma_eligible(struct vm_area_struct *vma)
{
	return vma_is_anonymous(vma) &&
	       thp_vma_allowable_order(vma, vma->vm_flags, TVA_ENFORCE_SYSFS,
				       PMD_ORDER);
}

/* Test and clear the accessed bits of secondary MMUs over [@start, @end). */
static bool promote_secondary_young(struct mm_struct *mm, unsigned long start,
				    unsigned long end)
{
#ifdef CONFIG_MMU_NOTIFIER
	return mmu_notifier_clear_young(mm, start, end);
#else
	return false;	/* no stub for this one in mmu_notifier.h */
#endif
}

/*
 * Test and clear the accessed bits of the base pages mapped at the 2 MB
 * at @addr, secondary MMUs' included. Returns how many were set, or -1
 * if the range is not mapped by a page table (not populated, or huge).
 * The access is kept for reclaim and idle page tracking.
 *
 * Secondary MMUs (KVM) are asked once for the whole range, not once per
 * page (512 calls into KVM, each taking its MMU lock): an access they saw
 * anywhere in it counts for every present page.
 */
static int promote_young_ptes(struct vm_area_struct *vma, unsigned long addr)
{
	struct mm_struct *mm = vma->vm_mm;
	pmd_t *pmd = mm_find_pmd(mm, addr);
	int i, young = 0;
	bool secondary;
	spinlock_t *ptl;
	pte_t *pte;

	if (!pmd)
		return -1;
	pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!pte)
		return -1;
	secondary = promote_secondary_young(mm, addr, addr + HPAGE_PMD_SIZE);
	for (i = 0; i < HPAGE_PMD_NR; i++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte + i);
		struct folio *folio;

		if (!pte_present(ptent) ||
		    (!ptep_test_and_clear_young(vma, addr, pte + i) && !secondary))
			continue;
		young++;
		folio = vm_normal_folio(vma, addr, ptent);
		if (folio)
			hawkeye_keep_access(folio);
	}
	pte_unmap_unlock(pte, ptl);
	return young;
}

/* What a sample pass does with each eligible region it finds. */
typedef void (*promote_region_fn)(struct hawkeye_mm *hm,
				  struct vm_area_struct *vma,
				  unsigned long addr, void *arg);

/*
 * Call @fn for every eligible 2 MB region of @hm's process, in address
 * order, at most PROMOTE_CHUNK regions per mmap_lock hold (fewer while a
 * writer waits) and per reference on the address space, and flush the
 * TLB once at the end if @flush. Returns
 * false if the process went away or the thread was told to stop first.
 */
static bool promote_walk(struct hawkeye_mm *hm, promote_region_fn fn,
			 void *arg, bool flush)
{
	struct mm_struct *mm = hm->mm;
	unsigned long next = 0;
	bool more = true, seen = false;

	while (more) {
		struct vm_area_struct *vma;
		struct vma_iterator vmi;
		unsigned int done = 0;

		if (kthread_should_stop() || !promote_mm_get(hm))
			return false;
		more = false;
		mmap_read_lock(mm);
		vma_iter_init(&vmi, mm, next);
		for_each_vma(vmi, vma) {
			unsigned long addr = round_up(max(vma->vm_start, next),
						      HPAGE_PMD_SIZE);
			unsigned long end = round_down(vma->vm_end, HPAGE_PMD_SIZE);

			if (!promote_vma_eligible(vma))
				continue;
			for (; addr < end; addr += HPAGE_PMD_SIZE) {
				if (done && (done == PROMOTE_CHUNK ||
					     mmap_lock_is_contended(mm))) {
					next = addr;
					more = true;
					goto unlock;
				}
				fn(hm, vma, addr, arg);
				done++;
			}
		}
unlock:
		mmap_read_unlock(mm);
		mmput(mm);
		if (done)
			seen = true;
		cond_resched();
	}
	if (flush && seen && promote_mm_get(hm)) {
		flush_tlb_mm(mm);
		mmput(mm);
	}
	return true;
}

static void promote_clear_region(struct hawkeye_mm *hm,
				 struct vm_area_struct *vma,
				 unsigned long addr, void *arg)
{
	promote_young_ptes(vma, addr);
}

/*
 * Open a sample window on @hm: clear the accessed bits of its eligible
 * regions, and flush its TLB entries so that the next access sets them.
 * The flush is needed even where no bit was set: the last count cleared
 * bits without one, and a cached translation would not set them again.
 */
static void promote_clear_mm(struct hawkeye_mm *hm)
{
	if (promote_walk(hm, promote_clear_region, NULL, true))
		hm->armed = true;
}

/* Record a coverage sample of the region at @addr; false without memory. */
static bool promote_sample_region(struct hawkeye_mm *hm, unsigned long addr,
				  unsigned int coverage, unsigned long pass,
				  unsigned int weight, pid_t pid)
{
	struct hawkeye_region *r = xa_load(&hm->regions, addr >> PMD_SHIFT);
	bool fresh = !r;
	unsigned int ema;

	if (fresh) {
		r = kzalloc(sizeof(*r), GFP_KERNEL);
		if (!r)
			return false;
		r->addr = addr;
		if (xa_insert(&hm->regions, addr >> PMD_SHIFT, r, GFP_KERNEL)) {
			kfree(r);
			return false;
		}
	}
	ema = promote_ema(fresh ? 0 : r->ema, coverage, weight);
	mutex_lock(&hm->lock);
	map_place(hm, r, ema, fresh);
	r->pass = pass;
	mutex_unlock(&hm->lock);
	count_vm_event(HAWKEYE_PROMOTE_SAMPLED);
	trace_hawkeye_sample(pid, addr, coverage, ema, r->bucket);
	return true;
}

struct promote_count {
	unsigned long pass;
	unsigned int weight;
	pid_t pid;
};

static void promote_count_region(struct hawkeye_mm *hm,
				 struct vm_area_struct *vma,
				 unsigned long addr, void *arg)
{
	struct promote_count *pc = arg;
	int coverage = promote_young_ptes(vma, addr);

	if (coverage >= 0)
		promote_sample_region(hm, addr, coverage, pc->pass, pc->weight,
				      pc->pid);
}

/*
 * Close @hm's sample window: count the accessed bits of every eligible
 * region, update the access_map, and forget the regions that were not
 * seen (huge now, unmapped, or no longer eligible).
 */
static void promote_count_mm(struct hawkeye_mm *hm, unsigned long pass)
{
	struct promote_count pc = {
		.pass = pass,
		.weight = READ_ONCE(hawkeye_promote.ema_weight),
		.pid = promote_mm_pid(hm),
	};
	struct hawkeye_region *r;
	unsigned long index;

	if (!hm->armed)
		return;
	hm->armed = false;
	if (!promote_walk(hm, promote_count_region, &pc, false))
		return;

	mutex_lock(&hm->lock);
	xa_for_each(&hm->regions, index, r)
		if (r->pass != pass)
			map_remove(hm, r);
	hm->samples++;
	mutex_unlock(&hm->lock);
}

static void promote_sample(bool open, unsigned long pass)
{
	bool base = hawkeye_policy_is_base(hawkeye_promote_get_policy());
	struct hawkeye_mm **hms;
	unsigned int i, nr;

	if (open)
		promote_register_all();
	nr = promote_get_mms(&hms);
	for (i = 0; i < nr && !kthread_should_stop(); i++) {
		if (base) {
			/* ingens, freebsd: huge pages and idle ones. */
			if (!promote_mm_get(hms[i]))
				continue;
			if (open) {
				hawkeye_base_open(&hms[i]->base);
			} else {
				hawkeye_base_close(&hms[i]->base);
				mutex_lock(&hms[i]->lock);
				hms[i]->samples++;
				mutex_unlock(&hms[i]->lock);
			}
			mmput(hms[i]->mm);
		} else if (open)
			promote_clear_mm(hms[i]);
		else
			promote_count_mm(hms[i], pass);
	}
	promote_put_mms(hms, nr);
}

/* Collapse @r as khugepaged would; false if the batch should stop. */
static bool promote_region(struct hawkeye_mm *hm, struct hawkeye_region *r)
{
	int ret = hawkeye_collapse_anon_pmd(hm->mm, r->addr);

	trace_hawkeye_promote(promote_mm_pid(hm), r->addr, r->bucket, r->ema,
			      promote_measured(hm), ret);
	mutex_lock(&hm->lock);
	if (!ret) {
		count_vm_event(HAWKEYE_PROMOTE_SUCCESS);
		hm->promotions++;
	} else {
		count_vm_event(HAWKEYE_PROMOTE_FAILED);
		hm->promote_failed++;
	}
	switch (ret) {
	case 0:
	case -EEXIST:		/* made huge by someone else */
	case -EINVAL:		/* unmapped or no longer eligible */
		map_remove(hm, r);
		break;
	default:
		/* Let the others have their turn before it is tried again. */
		list_move_tail(&r->node, &hm->buckets[r->bucket]);
		break;
	}
	mutex_unlock(&hm->lock);
	return ret != -ENOMEM;
}

/*
 * hawkeye-pmu: up to @n regions for the processes measured above the
 * threshold, then for those without a measurement in the hawkeye-g
 * order. Reorders @hms: the unmeasured ones first.
 */
static unsigned int promote_pick_pmu(struct hawkeye_mm **hms, unsigned int nr,
				     struct list_head *(*pos)[HAWKEYE_NR_BUCKETS],
				     struct hawkeye_rr *rr,
				     struct hawkeye_pick *picks, unsigned int n)
{
	int *measured = kmalloc_array(nr, sizeof(*measured), GFP_KERNEL);
	unsigned int i, got, nr_none = 0;

	if (!measured)
		return 0;
	for (i = 0; i < nr; i++)
		measured[i] = promote_measured(hms[i]);
	got = promote_order_pmu(hms, nr, measured,
				READ_ONCE(hawkeye_promote.pmu_threshold),
				READ_ONCE(hawkeye_promote.pmu_band),
				pos, rr, picks, n);
	/* Stable: the unmeasured keep their registration order. */
	for (i = 0; i < nr; i++) {
		if (measured[i] < 0) {
			swap(hms[nr_none], hms[i]);
			nr_none++;
		}
	}
	kfree(measured);
	if (nr_none == nr && !promote_pmu_told) {
		promote_pmu_told = true;
		pr_notice("hawkeye-pmu: no MMU overhead measurements (is tools/hawkeye-pmud running?); promoting by the HawkEye-G estimate\n");
	}
	if (got < n && nr_none)
		got += promote_order(hms, nr_none, pos, rr, picks + got, n - got);
	return got;
}


/* The ingens or freebsd policy's round (baselines.c). */
static void promote_base_batch(struct hawkeye_mm **hms, unsigned int nr,
			       unsigned int batch)
{
	struct hawkeye_base_mm **bs;
	unsigned int i, n = 0;

	bs = kmalloc_array(nr, sizeof(*bs), GFP_KERNEL);
	if (!bs)
		return;
	/* For the round only: a batch of collapses, no sleep. */
	for (i = 0; i < nr; i++)
		if (promote_mm_get(hms[i]))
			bs[n++] = &hms[i]->base;
	hawkeye_base_batch(hawkeye_promote_get_policy(), bs, n, batch);
	for (i = 0; i < n; i++)
		mmput(bs[i]->mm);
	kfree(bs);
}

/*
 * Count a baseline policy's promotion attempt of the region at @addr of
 * @mm (on which the caller holds a reference), as promote_region() does.
 */
void hawkeye_base_account(struct mm_struct *mm, enum hawkeye_policy policy,
			  unsigned long addr, unsigned int util,
			  unsigned int fmfi, u64 metric, int result)
{
	struct hawkeye_mm *hm;

	count_vm_event(result ? HAWKEYE_PROMOTE_FAILED :
			HAWKEYE_PROMOTE_SUCCESS);
	hm = promote_find(mm);
	if (!hm)
		return;
	trace_hawkeye_base_promote(promote_mm_pid(hm), policy, addr, util,
				   fmfi, metric, result);
	mutex_lock(&hm->lock);
	if (result)
		hm->promote_failed++;
	else
		hm->promotions++;
	mutex_unlock(&hm->lock);
	promote_mm_put(hm);
}

/* Promote up to `batch` regions in the order of the policy. */
static void promote_batch(struct hawkeye_rr *rr)
{
	unsigned int batch = READ_ONCE(hawkeye_promote.batch);
	struct list_head *(*pos)[HAWKEYE_NR_BUCKETS] = NULL;
	struct hawkeye_pick *picks = NULL;
	struct hawkeye_mm **hms;
	unsigned int i, nr, n;

	nr = promote_get_mms(&hms);
	if (!nr)
		goto out;
	if (hawkeye_policy_is_base(hawkeye_promote_get_policy())) {
		promote_base_batch(hms, nr, batch);
		goto out;
	}
	pos = kmalloc_array(nr, sizeof(*pos), GFP_KERNEL);
	picks = kmalloc_array(batch, sizeof(*picks), GFP_KERNEL);
	if (!pos || !picks)
		goto out;
	if (hawkeye_promote_get_policy() == HAWKEYE_POLICY_PMU)
		n = promote_pick_pmu(hms, nr, pos, rr, picks, batch);
	else
		n = promote_order(hms, nr, pos, rr, picks, batch);
	if (n)
		lru_add_drain_all();
	for (i = 0; i < n && !kthread_should_stop(); i++) {
		bool go_on;

		if (!promote_mm_get(picks[i].hm))
			continue;
		go_on = promote_region(picks[i].hm, picks[i].r);
		mmput(picks[i].hm->mm);
		if (!go_on)
			break;
		cond_resched();
	}
out:
	kfree(picks);
	kfree(pos);
	promote_put_mms(hms, nr);
}

static int promote_thread_fn(void *unused)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	unsigned long last_sample, last_promote, pass = 0;
	bool window = false;

	set_freezable();
	/* The first sample at once; promotion has nothing to do before. */
	last_sample = jiffies -
		msecs_to_jiffies(READ_ONCE(hawkeye_promote.scan_period_ms));
	last_promote = jiffies;
	while (!kthread_should_stop()) {
		unsigned long now = jiffies, due_sample, due_promote;

		try_to_freeze();
		due_sample = last_sample + msecs_to_jiffies(window ?
			READ_ONCE(hawkeye_promote.sample_window_ms) :
			READ_ONCE(hawkeye_promote.scan_period_ms));
		due_promote = last_promote +
			msecs_to_jiffies(READ_ONCE(hawkeye_promote.sleep_ms));
		if (time_after_eq(now, due_sample)) {
			if (!window)
				promote_sample(true, 0);
			else
				promote_sample(false, ++pass);
			window = !window;
			last_sample = jiffies;
		} else if (time_after_eq(now, due_promote)) {
			promote_batch(&rr);
			last_promote = jiffies;
		} else {
			schedule_timeout_interruptible(
				time_before(due_sample, due_promote) ?
				due_sample - now : due_promote - now);
		}
	}
	return 0;
}

enum hawkeye_policy hawkeye_promote_get_policy(void)
{
	return READ_ONCE(promote_policy);
}

/* HawkEye's own policies, which sample into access_maps. */
static bool promote_uses_access_map(enum hawkeye_policy policy)
{
	return policy == HAWKEYE_POLICY_G || policy == HAWKEYE_POLICY_PMU;
}

int hawkeye_promote_set_policy(enum hawkeye_policy policy)
{
	struct task_struct *t;
	int ret = 0;

	if (policy >= HAWKEYE_NR_POLICIES)
		return -EINVAL;
	mutex_lock(&promote_mutex);
	if (policy == promote_policy)
		goto out;
	promote_pmu_told = false;
	/* Between HawkEye-G and HawkEye-PMU: same thread, same maps. */
	if (promote_uses_access_map(policy) &&
	    promote_uses_access_map(promote_policy)) {
		WRITE_ONCE(promote_policy, policy);
		goto out;
	}
	/* Otherwise the old policy's thread goes, and every registration. */
	if (promote_thread) {
		kthread_stop(promote_thread);
		promote_thread = NULL;
	}
	WRITE_ONCE(promote_policy, policy);
	promote_forget_all();
	hawkeye_base_set_policy(policy);
	if (policy == HAWKEYE_POLICY_LINUX) {
		static_branch_disable(&hawkeye_promote_key);
		goto out;
	}
	t = kthread_run(promote_thread_fn, NULL, "hawkeye_promoted");
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		WRITE_ONCE(promote_policy, HAWKEYE_POLICY_LINUX);
		promote_forget_all();
		hawkeye_base_set_policy(HAWKEYE_POLICY_LINUX);
		static_branch_disable(&hawkeye_promote_key);
		goto out;
	}
	promote_thread = t;
	static_branch_enable(&hawkeye_promote_key);
out:
	mutex_unlock(&promote_mutex);
	return ret;
}

/* The policy named @buf (a trailing newline allowed), or -EINVAL. */
int hawkeye_promote_parse_policy(const char *buf)
{
	int i;

	for (i = 0; i < HAWKEYE_NR_POLICIES; i++)
		if (sysfs_streq(buf, promote_policy_names[i]))
			return i;
	return -EINVAL;
}

/* "[linux] hawkeye-g": every policy, the current one in brackets. */
ssize_t hawkeye_promote_show_policy(char *buf)
{
	enum hawkeye_policy cur = hawkeye_promote_get_policy();
	int i, len = 0;

	for (i = 0; i < HAWKEYE_NR_POLICIES; i++)
		len += sysfs_emit_at(buf, len, i == cur ? "%s[%s]" : "%s%s",
				     i ? " " : "", promote_policy_names[i]);
	return len + sysfs_emit_at(buf, len, "\n");
}

/* The thread sleeps until a deadline computed from the knobs: recompute. */
static void promote_knobs_changed(void)
{
	mutex_lock(&promote_mutex);
	if (promote_thread)
		wake_up_process(promote_thread);
	mutex_unlock(&promote_mutex);
}

static int promote_set_ms(unsigned int *knob, unsigned int ms)
{
	struct hawkeye_promote_params *p = &hawkeye_promote;
	unsigned int period = knob == &p->scan_period_ms ? ms : p->scan_period_ms;
	unsigned int window = knob == &p->sample_window_ms ? ms : p->sample_window_ms;
	int ret = -EINVAL;

	mutex_lock(&promote_mutex);
	if (ms >= 1 && ms <= HAWKEYE_PROMOTE_MAX_MS && window < period) {
		WRITE_ONCE(*knob, ms);
		ret = 0;
	}
	mutex_unlock(&promote_mutex);
	if (!ret)
		promote_knobs_changed();
	return ret;
}

int hawkeye_promote_set_scan_period_ms(unsigned int ms)
{
	return promote_set_ms(&hawkeye_promote.scan_period_ms, ms);
}

int hawkeye_promote_set_sample_window_ms(unsigned int ms)
{
	return promote_set_ms(&hawkeye_promote.sample_window_ms, ms);
}

int hawkeye_promote_set_sleep_ms(unsigned int ms)
{
	return promote_set_ms(&hawkeye_promote.sleep_ms, ms);
}

int hawkeye_promote_set_ema_weight(unsigned int pct)
{
	if (pct < 1 || pct > 100)
		return -EINVAL;
	WRITE_ONCE(hawkeye_promote.ema_weight, pct);
	return 0;
}

int hawkeye_promote_set_batch(unsigned int nr)
{
	if (nr < 1 || nr > HAWKEYE_PROMOTE_MAX_BATCH)
		return -EINVAL;
	WRITE_ONCE(hawkeye_promote.batch, nr);
	return 0;
}

int hawkeye_promote_set_pmu_threshold(unsigned int bp)
{
	if (bp > HAWKEYE_PMU_MAX)
		return -EINVAL;
	WRITE_ONCE(hawkeye_promote.pmu_threshold, bp);
	return 0;
}

int hawkeye_promote_set_pmu_band(unsigned int bp)
{
	if (bp > HAWKEYE_PMU_MAX)
		return -EINVAL;
	WRITE_ONCE(hawkeye_promote.pmu_band, bp);
	return 0;
}

int hawkeye_promote_set_pmu_ttl_ms(unsigned int ms)
{
	if (ms < 1 || ms > HAWKEYE_PROMOTE_MAX_MS)
		return -EINVAL;
	WRITE_ONCE(hawkeye_promote.pmu_ttl_ms, ms);
	return 0;
}

/*
 * Record the MMU overhead measured for process @pid: @overhead in 1/100 %,
 * or -1 to forget it. -ESRCH: no such process (or it has exited); -ENOENT:
 * it has no memory that promotion manages.
 */
int hawkeye_promote_set_measured(pid_t pid, int overhead)
{
	struct task_struct *task;
	struct hawkeye_mm *hm;
	struct mm_struct *mm;

	if (overhead < -1 || overhead > (int)HAWKEYE_PMU_MAX || pid <= 0)
		return -EINVAL;
	task = find_get_task_by_vpid(pid);
	if (!task)
		return -ESRCH;
	mm = get_task_mm(task);
	put_task_struct(task);
	if (!mm)
		return -ESRCH;
	spin_lock(&promote_lock);
	hm = promote_lookup(mm);
	if (hm) {
		WRITE_ONCE(hm->measured_at, jiffies);
		WRITE_ONCE(hm->measured, overhead);
	}
	spin_unlock(&promote_lock);
	mmput(mm);
	return hm ? 0 : -ENOENT;
}

/*
 * HawkEye-G's estimate of @mm's MMU overhead: the sum over its regions
 * still mapped by base pages of their access coverage (EMA), i.e. the hot
 * 4 KB pages that need a TLB entry each. 0 for an mm never sampled. The
 * caller holds a reference on mm_users.
 */
unsigned long hawkeye_mm_overhead(struct mm_struct *mm)
{
	unsigned long overhead = 0;

	hawkeye_promote_overhead(mm, &overhead);
	return overhead;
}

/*
 * The same, if it is known: the policy is hawkeye-g or hawkeye-pmu and @mm
 * has been sampled. The caller holds a reference on mm_users.
 */
bool hawkeye_promote_overhead(struct mm_struct *mm, unsigned long *overhead)
{
	struct hawkeye_mm *hm;
	bool known = false;

	if (!promote_uses_access_map(hawkeye_promote_get_policy()))
		return false;
	spin_lock(&promote_lock);
	hm = promote_lookup(mm);
	if (hm && READ_ONCE(hm->samples)) {
		*overhead = READ_ONCE(hm->overhead);
		known = true;
	}
	spin_unlock(&promote_lock);
	return known;
}

/*
 * Under hawkeye-pmu, @mm's measured MMU overhead (1/100 %) if it is
 * recent, else -1. The caller holds a reference on mm_users.
 */
int hawkeye_promote_measured(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;
	int measured = -1;

	if (hawkeye_promote_get_policy() != HAWKEYE_POLICY_PMU)
		return -1;
	spin_lock(&promote_lock);
	hm = promote_lookup(mm);
	if (hm)
		measured = promote_measured(hm);
	spin_unlock(&promote_lock);
	return measured;
}

/* /proc/<pid>/hawkeye of a process whose mm is @mm (NULL: none). */
void hawkeye_proc_show(struct seq_file *m, struct mm_struct *mm)
{
	unsigned long nr[HAWKEYE_NR_BUCKETS] = {}, regions = 0, overhead = 0;
	unsigned long samples = 0, promotions = 0, failed = 0;
	struct hawkeye_mm *hm = NULL;
	int b, measured = -1;

	if (mm)
		hm = promote_find(mm);
	if (hm) {
		mutex_lock(&hm->lock);
		memcpy(nr, hm->nr, sizeof(nr));
		regions = hm->nr_regions;
		overhead = hm->overhead;
		samples = hm->samples;
		promotions = hm->promotions;
		failed = hm->promote_failed;
		mutex_unlock(&hm->lock);
		measured = promote_measured(hm);
	}
	seq_printf(m, "policy %s\n",
		   promote_policy_names[hawkeye_promote_get_policy()]);
	seq_printf(m, "regions %lu\n", regions);
	for (b = 0; b < HAWKEYE_NR_BUCKETS; b++)
		seq_printf(m, "bucket%d %lu\n", b, nr[b]);
	seq_printf(m, "overhead %lu\n", overhead);
	if (measured >= 0)
		seq_printf(m, "measured_overhead %d.%02d%%\n", measured / 100,
			   measured % 100);
	else
		seq_puts(m, "measured_overhead none\n");
	seq_printf(m, "samples %lu\n", samples);
	seq_printf(m, "promotions %lu\n", promotions);
	seq_printf(m, "promote_failed %lu\n", failed);
	hawkeye_base_proc_show(m, hm ? &hm->base : NULL);
	seq_printf(m, "debloat_splits %lu\n",
		   mm ? READ_ONCE(mm->hawkeye_debloat_splits) : 0);
	if (hm)
		promote_mm_put(hm);
}

static int promote_at_boot __initdata = -1;

static int __init setup_hawkeye_promote(char *s)
{
	promote_at_boot = hawkeye_promote_parse_policy(s);
	if (promote_at_boot < 0)
		pr_warn("unknown promotion policy '%s'\n", s);
	return 1;
}
__setup("hawkeye_promote=", setup_hawkeye_promote);

static int __init hawkeye_promote_init(void)
{
	if (promote_at_boot > 0)
		hawkeye_promote_set_policy(promote_at_boot);
	return 0;
}
late_initcall(hawkeye_promote_init);

#ifdef CONFIG_HAWKEYE_KUNIT_TEST
#include "tests/promote-kunit.h"
#endif
