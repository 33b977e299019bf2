// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye's process registry: the processes the promotion policies work
 * on, each with a record (struct hawkeye_mm) that holds its policy state.
 *
 * The processes are those khugepaged knows (MMF_VM_HUGEPAGE), and only
 * while the policy is not linux: one is registered with __khugepaged_enter()
 * and, for those that khugepaged knew before the switch or whose
 * registration failed for want of memory, by the promotion thread at each
 * sample pass; it is dropped with __khugepaged_exit() or when a switch
 * changes the state policies keep. A record is reference counted: the
 * registry holds one reference and the thread one while it works on it,
 * so it never sees a freed record. The record's mutex serialises the
 * thread's changes to it with readers (/proc/<pid>/hawkeye).
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/hashtable.h>
#include <linux/hawkeye.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmstat.h>

#include "hawkeye.h"
#include "promote.h"

#define REGISTRY_HASH_BITS	10

/* Protects registry_hash, registry_mms, registry_nr and registry_seq. */
static DEFINE_SPINLOCK(registry_lock);
static DEFINE_HASHTABLE(registry_hash, REGISTRY_HASH_BITS);
static LIST_HEAD(registry_mms);
static unsigned int registry_nr;
static u64 registry_seq;

static void registry_mm_init(struct hawkeye_mm *hm, struct mm_struct *mm,
			     const struct hawkeye_policy_ops *ops)
{
	refcount_set(&hm->ref, 1);
	hm->ops = ops;
	mmgrab(mm);
	hm->mm = mm;
	INIT_LIST_HEAD(&hm->node);
	mutex_init(&hm->lock);
	if (ops->mm_init)
		ops->mm_init(hm);
}

/* Caller holds registry_lock; the record lives while it does. */
static struct hawkeye_mm *registry_lookup(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	hash_for_each_possible(registry_hash, hm, hash, (unsigned long)mm)
		if (hm->mm == mm)
			return hm;
	return NULL;
}

/**
 * hawkeye_mm_put() - drop a reference on a registered process's record
 * @hm: the record; the last reference frees it with the policy's state
 */
void hawkeye_mm_put(struct hawkeye_mm *hm)
{
	if (!refcount_dec_and_test(&hm->ref))
		return;
	if (hm->ops->mm_release)
		hm->ops->mm_release(hm);
	mutex_destroy(&hm->lock);
	mmdrop(hm->mm);
	kfree(hm);
}

/**
 * hawkeye_mm_find() - a registered process's record
 * @mm: the process's mm
 *
 * Return: the record with a reference (hawkeye_mm_put() it), or NULL. A
 * policy switch may unregister it meanwhile: mm_users does not keep it.
 */
struct hawkeye_mm *hawkeye_mm_find(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	spin_lock(&registry_lock);
	hm = registry_lookup(mm);
	if (hm)
		refcount_inc(&hm->ref);
	spin_unlock(&registry_lock);
	return hm;
}

/*
 * Register @mm (on which the caller holds mm_users), unless it already is
 * or the policy is linux. Without memory it is registered by the thread's
 * next sample pass.
 */
static void registry_add(struct mm_struct *mm)
{
	const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();
	struct hawkeye_mm *hm;

	/* Policy linux: khugepaged promotes, nothing is registered. */
	if (!ops->state)
		return;
	hm = kzalloc(sizeof(*hm), GFP_KERNEL);
	if (!hm) {
		/* The thread tries again at its next sample pass. */
		hawkeye_stat_inc(HAWKEYE_STAT_PROMOTE_REGISTER_FAILED);
		return;
	}
	registry_mm_init(hm, mm, ops);
	if (current->mm == mm)
		hm->pid = current->tgid;
	spin_lock(&registry_lock);
	/* A switch forgets everyone after it sets the policy. */
	if (hawkeye_promote_policy()->state != ops->state ||
	    registry_lookup(mm)) {
		spin_unlock(&registry_lock);
		hawkeye_mm_put(hm);
		return;
	}
	hm->seq = ++registry_seq;
	hawkeye_promote_registered(hm);
	hash_add(registry_hash, &hm->hash, (unsigned long)mm);
	list_add_tail(&hm->node, &registry_mms);
	WRITE_ONCE(registry_nr, registry_nr + 1);
	spin_unlock(&registry_lock);
}

/**
 * hawkeye_promote_enter - register a process with the promotion policy
 * @mm: the process, on which the caller holds a reference on mm_users
 *
 * Called by __khugepaged_enter() once for each mm that khugepaged will
 * scan. Under policy linux it returns after reading the policy.
 */
void hawkeye_promote_enter(struct mm_struct *mm)
{
	registry_add(mm);
}

/**
 * hawkeye_promote_exit - unregister a process that exits
 * @mm: the process; mm_users is zero
 *
 * Called by __khugepaged_exit() from __mmput(). The record goes with the
 * thread's reference if it holds one. While nothing is registered (policy
 * linux) it returns after reading one counter.
 */
void hawkeye_promote_exit(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	/* Policy linux: nothing is registered, nothing to look up. */
	if (!READ_ONCE(registry_nr))
		return;
	spin_lock(&registry_lock);
	hm = registry_lookup(mm);
	if (hm) {
		hash_del(&hm->hash);
		list_del(&hm->node);
		WRITE_ONCE(registry_nr, registry_nr - 1);
	}
	spin_unlock(&registry_lock);
	if (hm)
		hawkeye_mm_put(hm);
}

/**
 * hawkeye_mm_forget_all() - unregister every process
 *
 * Allocates nothing. Records the thread still holds go with its reference.
 */
void hawkeye_mm_forget_all(void)
{
	struct hawkeye_mm *hm, *tmp;
	LIST_HEAD(gone);

	spin_lock(&registry_lock);
	list_splice_init(&registry_mms, &gone);
	hash_init(registry_hash);
	WRITE_ONCE(registry_nr, 0);
	spin_unlock(&registry_lock);
	list_for_each_entry_safe(hm, tmp, &gone, node)
		hawkeye_mm_put(hm);
}

/**
 * hawkeye_mm_register_all() - register the processes khugepaged knows
 *
 * Those that are not registered yet: from before the policy left linux,
 * and those whose registration failed. Stops early if the thread is told
 * to stop.
 */
void hawkeye_mm_register_all(void)
{
	struct mm_struct **mms;
	int i, nr;

	nr = hawkeye_grab_user_mms(&mms, MMF_VM_HUGEPAGE);
	for (i = 0; i < nr && !kthread_should_stop(); i++) {
		if (mmget_not_zero(mms[i])) {
			registry_add(mms[i]);
			mmput(mms[i]);
		}
		mmdrop(mms[i]);
	}
	for (; i < nr; i++)
		mmdrop(mms[i]);
	kvfree(mms);
}

/**
 * hawkeye_mm_get_all() - every registered process's record
 * @out: the array of records, in registration order
 *
 * Takes a reference on each; give them back with hawkeye_mm_put_all().
 * The processes' address spaces are not held: use hawkeye_mmget_alive() for
 * each piece of work.
 *
 * Return: the number of records in *@out (none without memory).
 */
unsigned int hawkeye_mm_get_all(struct hawkeye_mm ***out)
{
	struct hawkeye_mm **hms, *hm;
	unsigned int max, nr = 0;

	*out = NULL;
	for (;;) {
		max = READ_ONCE(registry_nr) + 8;
		hms = kmalloc_array(max, sizeof(*hms), GFP_KERNEL);
		if (!hms)
			return 0;
		spin_lock(&registry_lock);
		if (registry_nr <= max)
			break;
		spin_unlock(&registry_lock);
		kfree(hms);
	}
	list_for_each_entry(hm, &registry_mms, node) {
		refcount_inc(&hm->ref);
		hms[nr++] = hm;
	}
	spin_unlock(&registry_lock);
	*out = hms;
	return nr;
}

/**
 * hawkeye_mm_put_all() - give back what hawkeye_mm_get_all() took
 * @hms: the array
 * @nr: the number of records in it
 */
void hawkeye_mm_put_all(struct hawkeye_mm **hms, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		hawkeye_mm_put(hms[i]);
	kfree(hms);
}

/**
 * hawkeye_mm_pid() - the process a record is for, for trace events
 * @hm: the record
 *
 * Return: the tgid of the mm's owner, or of who registered it.
 */
pid_t hawkeye_mm_pid(struct hawkeye_mm *hm)
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

/**
 * hawkeye_mm_account() - count a promotion attempt in a process
 * @hm: the process's record
 * @result: 0 (promoted) or a negative errno
 */
void hawkeye_mm_account(struct hawkeye_mm *hm, int result)
{
	if (result) {
		hawkeye_stat_inc(HAWKEYE_STAT_PROMOTE_FAILED);
	} else {
		count_vm_event(HAWKEYE_PROMOTE_SUCCESS);
		count_memcg_event_mm(hm->mm, HAWKEYE_PROMOTE_SUCCESS);
	}
	mutex_lock(&hm->lock);
	if (result)
		hm->promote_failed++;
	else
		hm->promotions++;
	mutex_unlock(&hm->lock);
}

/**
 * hawkeye_promote_set_measured() - record a process's measured MMU overhead
 * @pid: the process
 * @overhead: in 1/100 %, or -1 to forget it
 *
 * Kept by the policies that keep measurements (@set_measured) whichever
 * of them runs, for a switch to one that uses them.
 *
 * Return: 0; -EINVAL for a bad value, -ESRCH for no such process (or one
 * that has exited), -ENOENT if promotion manages none of its memory or
 * its record is kept by a policy that keeps no measurements.
 */
int hawkeye_promote_set_measured(pid_t pid, int overhead)
{
	struct task_struct *task;
	struct hawkeye_mm *hm;
	struct mm_struct *mm;
	int ret = -ENOENT;

	if (overhead < -1 || overhead > (int)HAWKEYE_PMU_MAX || pid <= 0)
		return -EINVAL;
	task = find_get_task_by_vpid(pid);
	if (!task)
		return -ESRCH;
	mm = get_task_mm(task);
	put_task_struct(task);
	if (!mm)
		return -ESRCH;
	hm = hawkeye_mm_find(mm);
	mmput(mm);
	if (!hm)
		return -ENOENT;
	if (hm->ops->set_measured) {
		hm->ops->set_measured(hm, overhead);
		ret = 0;
	}
	hawkeye_mm_put(hm);
	return ret;
}
