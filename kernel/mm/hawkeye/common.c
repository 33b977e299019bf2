// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye: what several mechanisms share.
 */
#include <linux/mm.h>
#include <linux/oom.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "hawkeye.h"

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
 * mmget_not_zero() for the work only, so that nothing keeps the memory of
 * a process that exits alive.
 *
 * Return: the number of mms in *@out.
 */
int hawkeye_grab_user_mms(struct mm_struct ***out, int flag)
{
	int max = nr_processes() + 16, nr = 0, i, n;
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

	/* Processes sharing an mm (CLONE_VM): keep one. */
	sort(mms, nr, sizeof(*mms), hawkeye_cmp_mm, NULL);
	for (i = 0, n = 0; i < nr; i++) {
		if (n && mms[n - 1] == mms[i])
			mmdrop(mms[i]);
		else
			mms[n++] = mms[i];
	}
	return n;
}
