/* SPDX-License-Identifier: GPL-2.0 */
/* HawkEye's internal interface between its core logic and sysfs. */
#ifndef _MM_HAWKEYE_HAWKEYE_H
#define _MM_HAWKEYE_HAWKEYE_H

#include <linux/types.h>

/* Pre-zeroing knobs; the threads read them with READ_ONCE(). */
struct hawkeye_prezero_params {
	unsigned int rate;		/* 4 KB pages per second per node, 0: no limit */
	unsigned long target_mb;	/* zeroed free memory per node, 0: all of it */
	bool nontemporal;		/* non-temporal stores where the CPU has them */
};

#define HAWKEYE_PREZERO_MAX_RATE	(1U << 24)

extern struct hawkeye_prezero_params hawkeye_prezero;

int hawkeye_prezero_set_enabled(bool on);
int hawkeye_prezero_set_rate(unsigned int rate);
int hawkeye_prezero_set_target_mb(unsigned long mb);

#endif /* _MM_HAWKEYE_HAWKEYE_H */
