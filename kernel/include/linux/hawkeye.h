/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HawkEye: huge page management (ASPLOS '19) on top of THP.
 *
 * The hooks the core mm calls. Each is a no-op when CONFIG_HAWKEYE is off
 * and costs one static branch when it is built in but disabled.
 */
#ifndef _LINUX_HAWKEYE_H
#define _LINUX_HAWKEYE_H

#include <linux/gfp.h>
#include <linux/jump_label.h>
#include <linux/mm_types.h>
#include <linux/page-flags.h>

#ifdef CONFIG_HAWKEYE

DECLARE_STATIC_KEY_FALSE(hawkeye_prezero_key);

/* Is async pre-zeroing on (sysfs prezero/enabled or hawkeye_prezero=1)? */
static inline bool hawkeye_prezero_enabled(void)
{
	return static_branch_unlikely(&hawkeye_prezero_key);
}

/*
 * Called by post_alloc_hook() for every page leaving the allocator: the
 * zero mark never outlives the free page it describes. Returns true when
 * the page is known to be zero-filled and pre-zeroing is on, so that the
 * caller may skip zeroing it.
 */
static inline bool hawkeye_take_zeroed(struct page *page)
{
	if (!PageZeroed(page))
		return false;
	__ClearPageZeroed(page);
	return hawkeye_prezero_enabled();
}

void __hawkeye_count_zeroing(unsigned int order, gfp_t gfp, bool prezeroed);

/* Counts an allocation that had to be zeroed: pre-zeroed or not. */
static inline void hawkeye_count_zeroing(unsigned int order, gfp_t gfp,
					 bool prezeroed)
{
	if (hawkeye_prezero_enabled())
		__hawkeye_count_zeroing(order, gfp, prezeroed);
}

#else /* !CONFIG_HAWKEYE */

static inline bool hawkeye_prezero_enabled(void)
{
	return false;
}

static inline bool hawkeye_take_zeroed(struct page *page)
{
	return false;
}

static inline void hawkeye_count_zeroing(unsigned int order, gfp_t gfp,
					 bool prezeroed)
{
}

#endif /* CONFIG_HAWKEYE */
#endif /* _LINUX_HAWKEYE_H */
