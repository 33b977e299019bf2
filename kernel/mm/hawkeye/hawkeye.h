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

/* Bloat recovery knobs; the thread reads them with READ_ONCE(). */
struct hawkeye_debloat_params {
	unsigned int high_pct;		/* start above this % of memory in use */
	unsigned int low_pct;		/* ... and stop below this, < high_pct */
	unsigned int threshold;		/* zero subpages that make a THP worth splitting */
	unsigned int rate;		/* THPs examined per second, 0: no limit */
};

#define HAWKEYE_DEBLOAT_MAX_RATE	(1U << 20)

extern struct hawkeye_debloat_params hawkeye_debloat;

int hawkeye_debloat_set_enabled(bool on);
int hawkeye_debloat_set_high_pct(unsigned int pct);
int hawkeye_debloat_set_low_pct(unsigned int pct);
int hawkeye_debloat_set_threshold(unsigned int nr);
int hawkeye_debloat_set_rate(unsigned int rate);

#endif /* _MM_HAWKEYE_HAWKEYE_H */
