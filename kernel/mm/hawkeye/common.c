// SPDX-License-Identifier: GPL-2.0
/*
 * What HawkEye's mechanisms share of their lifecycle: the processes they
 * work on, holding an address space for a piece of work, their rate limit
 * and their threads.
 */
#include <linux/mm.h>
#include <linux/freezer.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/oom.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "../internal.h"
#include "hawkeye.h"

#define CREATE_TRACE_POINTS
#include <trace/events/hawkeye.h>

static int hawkeye_cmp_mm(const void *a, const void *b)
{
	const struct mm_struct *x = *(const struct mm_struct * const *)a;
	const struct mm_struct *y = *(const struct mm_struct * const *)b;

	if (x == y)
		return 0;
	return x < y ? -1 : 1;
}

/**
 * hawkeye_grab_user_mms() - the address spaces of user processes
 * @out: the array of them, kvfree() it
 * @flag: an MMF_* bit the mm must have, or -1 for every one
 *
 * Each mm is mmgrab()bed once, however many processes share it: the
 * struct stays, the address space may go. Work on one holds it with
 * hawkeye_mmget_alive() for the work only, so that nothing keeps the memory of
 * a process that exits alive.
 *
 * Return: the number of mms in *@out.
 */
int hawkeye_grab_user_mms(struct mm_struct ***out, int flag)
{
	int max = nr_processes() + 16, nr = 0;
	struct mm_struct **mms;
	struct task_struct *p;

	*out = mms = kvcalloc(max, sizeof(*mms), GFP_KERNEL);
	if (!mms)
		return 0;
	rcu_read_lock();
	for_each_process(p) {
		struct task_struct *t;

		if (nr == max)
			break;
		if (p->flags & PF_KTHREAD)
			continue;
		t = find_lock_task_mm(p);
		if (!t)
			continue;
		if (flag < 0 || test_bit(flag, &t->mm->flags)) {
			mmgrab(t->mm);
			mms[nr++] = t->mm;
		}
		task_unlock(t);
	}
	rcu_read_unlock();
	return hawkeye_dedup_mms(mms, nr);
}

/**
 * hawkeye_dedup_mms() - keep one of the processes that share an mm
 * @mms: @nr mmgrab()bed mms, sorted in place
 * @nr: how many
 *
 * Drops the extra references of mms that appear more than once (CLONE_VM).
 *
 * Return: the number of distinct mms left at the start of @mms.
 */
int hawkeye_dedup_mms(struct mm_struct **mms, int nr)
{
	int i, n;

	sort(mms, nr, sizeof(*mms), hawkeye_cmp_mm, NULL);
	for (i = 0, n = 0; i < nr; i++) {
		if (n && mms[n - 1] == mms[i])
			mmdrop(mms[i]);
		else
			mms[n++] = mms[i];
	}
	return n;
}

/**
 * hawkeye_mmget_alive() - hold an address space for a piece of work
 * @mm: mmgrab()bed by the caller
 *
 * Return: false if the process has exited or is being OOM-reaped;
 * otherwise mm_users is held: mmput() it after the work.
 */
bool hawkeye_mmget_alive(struct mm_struct *mm)
{
	if (!mmget_not_zero(mm))
		return false;
	if (hawkeye_mm_alive(mm))
		return true;
	mmput(mm);
	return false;
}

/**
 * hawkeye_throttle() - keep a thread to its rate: a token bucket
 * @next: when the thread may go on; start it at ktime_get()
 * @done: the units of work just done
 * @rate: units a second, 0: no limit
 *
 * Pays for @done and sleeps (freezable) until @next when that is ahead;
 * idle time is never banked. The caller must hold nothing that suspend
 * needs: it may be frozen here.
 */
void hawkeye_throttle(ktime_t *next, unsigned long done, unsigned int rate)
{
	ktime_t now = ktime_get();

	*next = ktime_add_ns(ktime_after(*next, now) ? *next : now,
			     hawkeye_budget_ns(done, rate));
	if (ktime_after(*next, now)) {
		set_current_state(TASK_INTERRUPTIBLE);
		schedule_hrtimeout_range(next, NSEC_PER_MSEC, HRTIMER_MODE_ABS);
		try_to_freeze();
	} else {
		cond_resched();
	}
}

/**
 * hawkeye_thread_start() - start a mechanism's kernel thread
 * @thread: where it goes; NULL until then
 * @fn: the thread function
 * @data: its argument
 * @nid: the node whose CPUs and memory it works with (bound to them, as
 *	 kswapd), or NUMA_NO_NODE
 * @name: its name, with a %d for @nid where there is one
 *
 * Return: 0 or the error of kthread_create_on_node().
 */
int hawkeye_thread_start(struct task_struct **thread, int (*fn)(void *data),
			 void *data, int nid, const char *name)
{
	struct task_struct *t;

	t = kthread_create_on_node(fn, data, nid, name, nid);
	if (IS_ERR(t))
		return PTR_ERR(t);
	if (nid != NUMA_NO_NODE && !cpumask_empty(cpumask_of_node(nid)))
		set_cpus_allowed_ptr(t, cpumask_of_node(nid));
	*thread = t;
	wake_up_process(t);
	return 0;
}

/**
 * hawkeye_thread_stop() - stop a thread hawkeye_thread_start() started
 * @thread: the thread, or NULL; NULL after
 */
void hawkeye_thread_stop(struct task_struct **thread)
{
	if (*thread) {
		kthread_stop(*thread);
		*thread = NULL;
	}
}
