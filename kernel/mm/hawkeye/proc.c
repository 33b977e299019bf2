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

/* /proc/<pid>/hawkeye of a process whose mm is @mm (NULL: none). */
void hawkeye_proc_show(struct seq_file *m, struct mm_struct *mm)
{
	struct hawkeye_mm *hm = mm ? hawkeye_mm_find(mm) : NULL;

	seq_printf(m, "policy %s\n", hawkeye_promote_policy()->name);
	hawkeye_access_map_show(m, hm);
	hawkeye_promote_show(m, hm);
	hawkeye_base_show(m, hm);
	seq_printf(m, "debloat_splits %lu\n",
		   mm ? READ_ONCE(mm->hawkeye_debloat_splits) : 0);
	if (hm)
		hawkeye_mm_put(hm);
}
