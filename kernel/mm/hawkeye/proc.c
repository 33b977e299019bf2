// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid>/hawkeye: what HawkEye knows of a process, one part from
 * each mechanism. See Documentation/admin-guide/mm/hawkeye.rst for the
 * fields.
 */
#include <linux/hawkeye.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>

#include "hawkeye.h"
#include "promote.h"

#ifdef CONFIG_HAWKEYE_PROMOTE
/* Promotion's part: the policy's lines, then what the thread did. */
static void proc_show_promote(struct seq_file *m, struct mm_struct *mm)
{
	struct hawkeye_mm *hm = mm ? hawkeye_mm_find(mm) : NULL;
	unsigned long samples = 0, promotions = 0, failed = 0;

	seq_printf(m, "policy %s\n", hawkeye_promote_policy()->name);
	hawkeye_promote_show(m, hm);
	if (hm) {
		mutex_lock(&hm->lock);
		samples = hm->samples;
		promotions = hm->promotions;
		failed = hm->promote_failed;
		mutex_unlock(&hm->lock);
		hawkeye_mm_put(hm);
	}
	seq_printf(m, "samples %lu\n", samples);
	seq_printf(m, "promotions %lu\n", promotions);
	seq_printf(m, "promote_failed %lu\n", failed);
}
#endif

/* Each mechanism's part of the file, in turn. */
static void proc_show_mm(struct seq_file *m, struct mm_struct *mm)
{
#ifdef CONFIG_HAWKEYE_PROMOTE
	proc_show_promote(m, mm);
#endif
#ifdef CONFIG_HAWKEYE_DEBLOAT
	seq_printf(m, "debloat_splits %lu\n",
		   mm ? READ_ONCE(mm->hawkeye_debloat_splits) : 0);
#endif
}

static int proc_show(struct seq_file *m, void *v)
{
	struct mm_struct *mm = m->private;

	if (!mm) {
		/* A kernel thread: the policy, nothing registered. */
		proc_show_mm(m, NULL);
		return 0;
	}
	/* Nothing once the address space has gone (an exec, a setuid one included). */
	if (!mmget_not_zero(mm))
		return 0;
	proc_show_mm(m, mm);
	mmput(mm);
	return 0;
}

/**
 * hawkeye_proc_open - open /proc/<pid>/hawkeye
 * @file: the file
 * @mm: proc_mem_open()'s result: the address space, held by mm_count, the
 *	file shows, NULL for a kernel thread, or an error pointer
 *
 * The reference on @mm passes to the file; hawkeye_proc_release() drops it.
 *
 * Return: 0 or a negative errno.
 */
int hawkeye_proc_open(struct file *file, struct mm_struct *mm)
{
	int ret;

	if (IS_ERR(mm))
		return PTR_ERR(mm);
	ret = single_open(file, proc_show, mm);
	if (ret && mm)
		mmdrop(mm);
	return ret;
}

/**
 * hawkeye_proc_release - release /proc/<pid>/hawkeye
 * @inode: its inode
 * @file: the file hawkeye_proc_open() opened
 *
 * Return: 0.
 */
int hawkeye_proc_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	if (m->private)
		mmdrop(m->private);
	return single_release(inode, file);
}
