// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid>/hawkeye: what HawkEye knows of a process, one part from
 * each mechanism. See Documentation/admin-guide/mm/hawkeye.rst for the
 * fields.
 */
#include <linux/hawkeye.h>
#include <linux/mm.h>
#include <linux/seq_file.h>

#include "hawkeye.h"

/* The registry's part: what the promotion thread did for the process. */
static void proc_show_promote(struct seq_file *m, struct hawkeye_mm *hm)
{
	unsigned long samples = 0, promotions = 0, failed = 0;

	if (hm) {
		mutex_lock(&hm->lock);
		samples = hm->samples;
		promotions = hm->promotions;
		failed = hm->promote_failed;
		mutex_unlock(&hm->lock);
	}
	seq_printf(m, "samples %lu\n", samples);
	seq_printf(m, "promotions %lu\n", promotions);
	seq_printf(m, "promote_failed %lu\n", failed);
}

/**
 * hawkeye_proc_show - /proc/<pid>/hawkeye
 * @m: the seq_file
 * @mm: the process's mm, on which the caller holds a reference, or NULL
 *
 * Each mechanism's part of the file, in turn.
 */
void hawkeye_proc_show(struct seq_file *m, struct mm_struct *mm)
{
	struct hawkeye_mm *hm = mm ? hawkeye_mm_find(mm) : NULL;

	seq_printf(m, "policy %s\n", hawkeye_promote_policy()->name);
	hawkeye_access_map_show(m, hm);
	proc_show_promote(m, hm);
	hawkeye_base_show(m, hm);
	seq_printf(m, "debloat_splits %lu\n",
		   mm ? READ_ONCE(mm->hawkeye_debloat_splits) : 0);
	if (hm)
		hawkeye_mm_put(hm);
}
