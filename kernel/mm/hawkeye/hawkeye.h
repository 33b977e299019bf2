/* SPDX-License-Identifier: GPL-2.0 */
/* HawkEye's internal interface between its core logic and sysfs. */
#ifndef _MM_HAWKEYE_HAWKEYE_H
#define _MM_HAWKEYE_HAWKEYE_H

#include <linux/mm_types.h>
#include <linux/page_idle.h>
#include <linux/types.h>

struct attribute_group;
struct seq_file;

/* common.c: what several mechanisms share. */
int hawkeye_grab_user_mms(struct mm_struct ***out, int flag);

/*
 * HawkEye tested and cleared an accessed bit that was set: keep the access
 * for reclaim (young) and for idle page tracking (not idle), as if they
 * had seen the bit themselves.
 */
static inline void hawkeye_keep_access(struct folio *folio)
{
	folio_set_young(folio);
	folio_clear_idle(folio);
}

/*
 * Is @mm, on which the caller holds mm_users, still a process's? No once
 * every other user has gone (the process exited) or the OOM reaper has it.
 */
static inline bool hawkeye_mm_alive(struct mm_struct *mm)
{
	return atomic_read(&mm->mm_users) > 1 &&
	       !test_bit(MMF_OOM_SKIP, &mm->flags);
}

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
/* The zero subpages that make a THP worth splitting in this episode. */
unsigned int hawkeye_debloat_current_threshold(void);

/* Promotion policies: /sys/kernel/mm/hawkeye/promote/policy. */
enum hawkeye_policy {
	HAWKEYE_POLICY_LINUX,		/* khugepaged as upstream */
	HAWKEYE_POLICY_G,		/* HawkEye-G: access coverage first */
	HAWKEYE_POLICY_PMU,		/* HawkEye-PMU: measured overhead first */
	HAWKEYE_POLICY_INGENS,		/* Ingens: utilisation, FMFI, fairness */
	HAWKEYE_POLICY_FREEBSD,		/* FreeBSD: reservations, promoted full */
	HAWKEYE_NR_POLICIES,
};

/* Buckets of a process's access_map, by access coverage. */
#define HAWKEYE_NR_BUCKETS	10

/* Promotion knobs; the thread reads them with READ_ONCE(). */
struct hawkeye_promote_params {
	unsigned int scan_period_ms;	/* a sample pass this often ... */
	unsigned int sample_window_ms;	/* ... over this long, < scan_period_ms */
	unsigned int ema_weight;	/* percent of the EMA for a new sample */
	unsigned int batch;		/* regions promoted per round */
	unsigned int sleep_ms;		/* between promotion rounds */
	unsigned int pmu_threshold;	/* hawkeye-pmu: promote above this overhead */
	unsigned int pmu_band;		/* ... sharing with those this close to the top */
	unsigned int pmu_ttl_ms;	/* ... a measurement counts this long */
};

/* Measured MMU overheads are in hundredths of a percent: 0..10000. */
#define HAWKEYE_PMU_MAX			10000U

#define HAWKEYE_PROMOTE_MAX_MS		3600000U	/* an hour */
#define HAWKEYE_PROMOTE_MAX_BATCH	4096U

extern struct hawkeye_promote_params hawkeye_promote;

enum hawkeye_policy hawkeye_promote_get_policy(void);
int hawkeye_promote_set_policy(enum hawkeye_policy policy);
int hawkeye_promote_parse_policy(const char *buf);
ssize_t hawkeye_promote_show_policy(char *buf);
int hawkeye_promote_set_scan_period_ms(unsigned int ms);
int hawkeye_promote_set_sample_window_ms(unsigned int ms);
int hawkeye_promote_set_ema_weight(unsigned int pct);
int hawkeye_promote_set_batch(unsigned int nr);
int hawkeye_promote_set_sleep_ms(unsigned int ms);
int hawkeye_promote_set_pmu_threshold(unsigned int bp);
int hawkeye_promote_set_pmu_band(unsigned int bp);
int hawkeye_promote_set_pmu_ttl_ms(unsigned int ms);
int hawkeye_promote_set_measured(pid_t pid, int overhead);
bool hawkeye_promote_overhead(struct mm_struct *mm, unsigned long *overhead);
int hawkeye_promote_measured(struct mm_struct *mm);

/*
 * The baseline policies (baselines.c) on promote.c's thread: a process's
 * state, part of promote.c's struct hawkeye_mm. Only the thread writes
 * it; readers use READ_ONCE().
 */
struct hawkeye_base_mm {
	struct mm_struct *mm;
	unsigned long cursor;		/* ingens: the next address to look at */
	unsigned long nr_huge;		/* huge pages at the last sample, + promoted */
	unsigned long nr_idle;		/* ... of which not accessed in its window */
	bool armed;			/* sample window open */
	bool exhausted;			/* nothing left to promote this round */
};

/* Ingens knobs, in percent; the thread reads them with READ_ONCE(). */
struct hawkeye_ingens_params {
	unsigned int util_threshold;	/* promote at this utilisation ... */
	unsigned int fmfi_threshold;	/* ... or any while FMFI is below this */
	unsigned int idle_penalty;	/* idle huge pages' tax rate */
};

extern struct hawkeye_ingens_params hawkeye_ingens;
extern const struct attribute_group hawkeye_ingens_group;

static inline bool hawkeye_policy_is_base(enum hawkeye_policy policy)
{
	return policy == HAWKEYE_POLICY_INGENS ||
	       policy == HAWKEYE_POLICY_FREEBSD;
}

int hawkeye_ingens_set_util_threshold(unsigned int pct);
int hawkeye_ingens_set_fmfi_threshold(unsigned int pct);
int hawkeye_ingens_set_idle_penalty(unsigned int pct);
unsigned int hawkeye_fmfi(void);
void hawkeye_base_set_policy(enum hawkeye_policy policy);
void hawkeye_base_open(struct hawkeye_base_mm *b);
void hawkeye_base_close(struct hawkeye_base_mm *b);
void hawkeye_base_batch(enum hawkeye_policy policy,
			struct hawkeye_base_mm **bs, unsigned int nr,
			unsigned int batch);
void hawkeye_base_proc_show(struct seq_file *m, struct hawkeye_base_mm *b);
/* In promote.c: count a baseline's promotion attempt, and trace it. */
void hawkeye_base_account(struct mm_struct *mm, enum hawkeye_policy policy,
			  unsigned long addr, unsigned int util,
			  unsigned int fmfi, u64 metric, int result);

#endif /* _MM_HAWKEYE_HAWKEYE_H */
