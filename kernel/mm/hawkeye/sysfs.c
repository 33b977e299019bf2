// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye's sysfs interface: /sys/kernel/mm/hawkeye/, its knobs and, in
 * stats/, its event counters.
 *
 * Every numeric knob is a row of a table: its value, its bounds and, where
 * setting it does more than store a bounded value, the mechanism's setter.
 * One show and one store serve them all. A store parses its whole input
 * and changes nothing unless it is valid: -EINVAL for bad input,
 * out-of-range values included.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/hawkeye.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/vmstat.h>

#include "hawkeye.h"
#include "promote.h"

/**
 * struct hawkeye_knob - a numeric knob
 * @attr:	its sysfs file
 * @value:	what it shows and, without @set, what a store writes
 * @min:	the smallest value it takes
 * @max:	the largest
 * @set:	called instead of storing: locks, checks against other knobs,
 *		wakes a thread; 0 or a negative errno
 * @on:		an on/off switch: its state, shown instead of *@value
 * @turn:	... and what turns it on or off instead of storing
 */
struct hawkeye_knob {
	struct kobj_attribute attr;
	unsigned int *value;
	unsigned int min;
	unsigned int max;
	int (*set)(unsigned int val);
	bool (*on)(void);
	int (*turn)(bool on);
};

/* Unused only in a kernel with none of the mechanisms that have knobs. */
static ssize_t __maybe_unused knob_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	struct hawkeye_knob *k = container_of(attr, struct hawkeye_knob, attr);

	return sysfs_emit(buf, "%u\n", k->on ? k->on() : READ_ONCE(*k->value));
}

static ssize_t __maybe_unused knob_store(struct kobject *kobj,
					 struct kobj_attribute *attr,
					 const char *buf, size_t count)
{
	struct hawkeye_knob *k = container_of(attr, struct hawkeye_knob, attr);
	unsigned int val;
	int ret = 0;

	/* Out of range is bad input too: -EINVAL, not kstrto*'s -ERANGE. */
	if (kstrtouint(buf, 10, &val) || val < k->min || val > k->max)
		return -EINVAL;
	if (k->turn)
		ret = k->turn(val);
	else if (k->set)
		ret = k->set(val);
	else
		WRITE_ONCE(*k->value, val);
	return ret ? ret : count;
}

#define KNOB(_name, _value, _min, _max, ...)				\
	{ .attr = __ATTR(_name, 0644, knob_show, knob_store),		\
	  .value = _value, .min = _min, .max = _max, __VA_ARGS__ }

/* The `enabled` file of a mechanism: 0 or 1. */
#define SWITCH(_on, _turn)	KNOB(enabled, NULL, 0, 1, .on = _on, .turn = _turn)

#ifdef CONFIG_HAWKEYE_PREZERO
static struct hawkeye_knob prezero_knobs[] = {
	SWITCH(hawkeye_prezero_enabled, hawkeye_prezero_set_enabled),
	KNOB(rate, &hawkeye_prezero.rate, 0, HAWKEYE_PREZERO_MAX_RATE,
	     .set = hawkeye_prezero_set_rate),
	KNOB(target_mb, &hawkeye_prezero.target_mb, 0, UINT_MAX,
	     .set = hawkeye_prezero_set_target_mb),
	KNOB(nontemporal, &hawkeye_prezero.nontemporal, 0, 1),
	KNOB(paced, &hawkeye_prezero.paced, 0, 1, .set = hawkeye_prezero_set_paced),
	KNOB(idle_rate, &hawkeye_prezero.idle_rate, 0, HAWKEYE_PREZERO_MAX_RATE,
	     .set = hawkeye_prezero_set_idle_rate),
	KNOB(fault_clear, &hawkeye_prezero.fault_clear, 0, NR_FAULT_CLEAR - 1,
	     .set = hawkeye_prezero_set_fault_clear),
};
#endif

#ifdef CONFIG_HAWKEYE_DEBLOAT
static struct hawkeye_knob debloat_knobs[] = {
	SWITCH(hawkeye_debloat_enabled, hawkeye_debloat_set_enabled),
	KNOB(high_pct, &hawkeye_debloat.high_pct, 1, 100,
	     .set = hawkeye_debloat_set_high_pct),
	KNOB(low_pct, &hawkeye_debloat.low_pct, 0, 99,
	     .set = hawkeye_debloat_set_low_pct),
	KNOB(threshold, &hawkeye_debloat.threshold, 1, HPAGE_PMD_NR,
	     .set = hawkeye_debloat_set_threshold),
	KNOB(rate, &hawkeye_debloat.rate, 0, HAWKEYE_DEBLOAT_MAX_RATE),
	KNOB(psi_pct, &hawkeye_debloat.psi_pct, 0, 100),
	KNOB(mthp, &hawkeye_debloat.mthp, 0, 1),
};

static ssize_t current_threshold_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", hawkeye_debloat_current_threshold());
}

static struct kobj_attribute current_threshold_attr = __ATTR_RO(current_threshold);
#endif

#ifdef CONFIG_HAWKEYE_PROMOTE
static int promote_set_scan_period_ms(unsigned int ms)
{
	return hawkeye_promote_set_ms(&hawkeye_promote.scan_period_ms, ms);
}

static int promote_set_sample_window_ms(unsigned int ms)
{
	return hawkeye_promote_set_ms(&hawkeye_promote.sample_window_ms, ms);
}

static int promote_set_sleep_ms(unsigned int ms)
{
	return hawkeye_promote_set_ms(&hawkeye_promote.sleep_ms, ms);
}

static int promote_set_fresh_ms(unsigned int ms)
{
	return hawkeye_promote_set_ms(&hawkeye_promote.fresh_ms, ms);
}

static struct hawkeye_knob promote_knobs[] = {
	KNOB(scan_period_ms, &hawkeye_promote.scan_period_ms, 1,
	     HAWKEYE_PROMOTE_MAX_MS, .set = promote_set_scan_period_ms),
	KNOB(sample_window_ms, &hawkeye_promote.sample_window_ms, 1,
	     HAWKEYE_PROMOTE_MAX_MS, .set = promote_set_sample_window_ms),
	KNOB(ema_weight, &hawkeye_promote.ema_weight, 1, 100),
	KNOB(batch, &hawkeye_promote.batch, 1, HAWKEYE_PROMOTE_MAX_BATCH),
	KNOB(sleep_ms, &hawkeye_promote.sleep_ms, 1, HAWKEYE_PROMOTE_MAX_MS,
	     .set = promote_set_sleep_ms),
	KNOB(pmu_threshold, &hawkeye_promote.pmu_threshold, 0, HAWKEYE_PMU_MAX),
	KNOB(pmu_band, &hawkeye_promote.pmu_band, 0, HAWKEYE_PMU_MAX),
	KNOB(pmu_ttl_ms, &hawkeye_promote.pmu_ttl_ms, 1, HAWKEYE_PROMOTE_MAX_MS),
	KNOB(best_size, &hawkeye_promote.best_size, 0, 1),
	KNOB(fresh_ms, &hawkeye_promote.fresh_ms, 0, HAWKEYE_PROMOTE_MAX_MS,
	     .set = promote_set_fresh_ms),
};

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return hawkeye_promote_show_policy(buf);
}

static ssize_t policy_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	int policy = hawkeye_promote_parse_policy(buf);
	int ret = policy < 0 ? policy : hawkeye_promote_set_policy(policy);

	return ret ? ret : count;
}

static struct kobj_attribute policy_attr = __ATTR_RW(policy);

/* "PID OVERHEAD": a measurement from hawkeye-pmud, root only. */
static ssize_t measured_overhead_store(struct kobject *kobj,
				       struct kobj_attribute *attr,
				       const char *buf, size_t count)
{
	char *copy, *pid_str, *val_str;
	int pid, val, ret = -EINVAL;

	copy = kstrndup(buf, count, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	val_str = strim(copy);
	pid_str = strsep(&val_str, " ");
	if (val_str && !kstrtoint(pid_str, 10, &pid) &&
	    !kstrtoint(val_str, 10, &val))
		ret = hawkeye_promote_set_measured(pid, val);
	kfree(copy);
	return ret ? ret : count;
}

static struct kobj_attribute measured_overhead_attr =
	__ATTR(measured_overhead, 0200, NULL, measured_overhead_store);
#endif

DEFINE_PER_CPU(unsigned long, hawkeye_stats[NR_HAWKEYE_STATS]);

static const char * const stat_names[NR_HAWKEYE_STATS] = {
#ifdef CONFIG_HAWKEYE_PREZERO
	[HAWKEYE_STAT_PREZERO_PAGES] = "prezero_pages",
	[HAWKEYE_STAT_PREZERO_WASTED] = "prezero_wasted",
	[HAWKEYE_STAT_PREZERO_MTHP_PAGES] = "prezero_mthp_pages",
	[HAWKEYE_STAT_PREZERO_REPORTED_PAGES] = "prezero_reported_pages",
	[HAWKEYE_STAT_PREZERO_BACKOFF] = "prezero_backoff",
	[HAWKEYE_STAT_PREZERO_WOKEN] = "prezero_woken",
	[HAWKEYE_STAT_FAULT_PREZEROED_4K] = "fault_prezeroed_4k",
	[HAWKEYE_STAT_FAULT_SYNC_ZERO_4K] = "fault_sync_zero_4k",
	[HAWKEYE_STAT_FAULT_PREZEROED_2M] = "fault_prezeroed_2m",
	[HAWKEYE_STAT_FAULT_SYNC_ZERO_2M] = "fault_sync_zero_2m",
#endif
#ifdef CONFIG_HAWKEYE_DEBLOAT
	[HAWKEYE_STAT_DEBLOAT_THP_SCANNED] = "debloat_thp_scanned",
	[HAWKEYE_STAT_DEBLOAT_BYTES_READ] = "debloat_bytes_read",
	[HAWKEYE_STAT_DEBLOAT_PSI_START] = "debloat_psi_start",
	[HAWKEYE_STAT_DEBLOAT_MEMCG_AHEAD] = "debloat_memcg_ahead",
	[HAWKEYE_STAT_DEBLOAT_MEMCG_EPISODE] = "debloat_memcg_episode",
	[HAWKEYE_STAT_DEBLOAT_MTHP_SPLIT] = "debloat_mthp_split",
#endif
#ifdef CONFIG_HAWKEYE_PROMOTE
	[HAWKEYE_STAT_PROMOTE_SAMPLED] = "promote_sampled",
	[HAWKEYE_STAT_PROMOTE_FAILED] = "promote_failed",
	[HAWKEYE_STAT_PROMOTE_REGISTER_FAILED] = "promote_register_failed",
	[HAWKEYE_STAT_PROMOTE_SMALLER] = "promote_smaller",
#endif
#ifdef CONFIG_HAWKEYE_BASELINES
	[HAWKEYE_STAT_INGENS_ROUND_AGGRESSIVE] = "ingens_round_aggressive",
	[HAWKEYE_STAT_INGENS_ROUND_CONSERVATIVE] = "ingens_round_conservative",
	[HAWKEYE_STAT_FREEBSD_RESERVE] = "freebsd_reserve",
	[HAWKEYE_STAT_FREEBSD_RESERVE_FAILED] = "freebsd_reserve_failed",
	[HAWKEYE_STAT_FREEBSD_RESERVE_PAGES] = "freebsd_reserve_pages",
	[HAWKEYE_STAT_FREEBSD_PROMOTE_INPLACE] = "freebsd_promote_inplace",
#endif
};

/* HawkEye's vm events, those memory.stat shows: in stats/ too. */
static const struct {
	enum vm_event_item item;
	const char *name;
} stat_vm_events[] = {
#ifdef CONFIG_HAWKEYE_DEBLOAT
	{ HAWKEYE_DEBLOAT_THP_SPLIT, "debloat_thp_split" },
	{ HAWKEYE_DEBLOAT_ZERO_PAGES_FREED, "debloat_zero_pages_freed" },
	{ HAWKEYE_DEBLOAT_DEFERRED_SPLIT, "debloat_deferred_split" },
	{ HAWKEYE_DEBLOAT_ROUND, "debloat_round" },
#endif
#ifdef CONFIG_MEMCG
	{ HAWKEYE_MEMCG_HUGE_CAPPED, "memcg_huge_capped" },
	{ HAWKEYE_MEMCG_COLLAPSE_CAPPED, "memcg_collapse_capped" },
#endif
#ifdef CONFIG_HAWKEYE_PROMOTE
	{ HAWKEYE_PROMOTE_SUCCESS, "promote_success" },
#endif
};

#define NR_STAT_FILES	(NR_HAWKEYE_STATS + ARRAY_SIZE(stat_vm_events))

/**
 * hawkeye_stat_read - the value of one of HawkEye's event counters
 * @item: the counter
 *
 * Return: its sum over all CPUs.
 */
unsigned long hawkeye_stat_read(enum hawkeye_stat_item item)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(hawkeye_stats[item], cpu);
	return sum;
}

/* One vm event's count: all_vm_events()'s, without its array of them all. */
static unsigned long stat_vm_event(enum vm_event_item item)
{
	unsigned long sum = 0;
#ifdef CONFIG_VM_EVENT_COUNTERS
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(vm_event_states.event[item], cpu);
#endif
	return sum;
}

static struct kobj_attribute stat_attrs[NR_STAT_FILES];
static struct attribute *stat_files[NR_STAT_FILES + 1];
static const struct attribute_group stat_group = {
	.name = "stats",
	.attrs = stat_files,
};

static ssize_t stat_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	unsigned int i = attr - stat_attrs;

	if (i < NR_HAWKEYE_STATS)
		return sysfs_emit(buf, "%lu\n", hawkeye_stat_read(i));
	return sysfs_emit(buf, "%lu\n",
			  stat_vm_event(stat_vm_events[i - NR_HAWKEYE_STATS].item));
}

static int __init stat_files_create(struct kobject *parent)
{
	unsigned int i;

	for (i = 0; i < NR_STAT_FILES; i++) {
		const char *name = i < NR_HAWKEYE_STATS ? stat_names[i] :
				   stat_vm_events[i - NR_HAWKEYE_STATS].name;

		/* A counter added to the enum without a name here. */
		if (WARN_ON(!name))
			return -EINVAL;
		sysfs_attr_init(&stat_attrs[i].attr);
		stat_attrs[i].attr.name = name;
		stat_attrs[i].attr.mode = 0444;
		stat_attrs[i].show = stat_show;
		stat_files[i] = &stat_attrs[i].attr;
	}
	return sysfs_create_group(parent, &stat_group);
}

#ifdef CONFIG_HAWKEYE_BASELINES
static struct hawkeye_knob ingens_knobs[] = {
	KNOB(util_threshold, &hawkeye_ingens.util_threshold, 1, 100),
	KNOB(fmfi_threshold, &hawkeye_ingens.fmfi_threshold, 0, 101),
	KNOB(idle_penalty, &hawkeye_ingens.idle_penalty, 0, 99),
};

static ssize_t fmfi_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", hawkeye_fmfi());
}

static struct kobj_attribute fmfi_attr = __ATTR_RO(fmfi);
#endif

/* Room for the files of the largest directory and a NULL. */
#define KNOB_DIR_FILES	16

/*
 * A directory: its knobs, then its other files (NULL-terminated). @attrs
 * and @group are filled in at boot; they stay with the files for as long
 * as the kernel runs.
 */
struct knob_dir {
	const char *name;
	struct hawkeye_knob *knobs;
	unsigned int nr;
	struct kobj_attribute *other[3];
	struct attribute *attrs[KNOB_DIR_FILES];
	struct attribute_group group;
};

static struct knob_dir knob_dirs[] = {
#ifdef CONFIG_HAWKEYE_PREZERO
	{ "prezero", prezero_knobs, ARRAY_SIZE(prezero_knobs) },
#endif
#ifdef CONFIG_HAWKEYE_DEBLOAT
	{ "debloat", debloat_knobs, ARRAY_SIZE(debloat_knobs),
	  { &current_threshold_attr } },
#endif
#ifdef CONFIG_HAWKEYE_PROMOTE
	{ "promote", promote_knobs, ARRAY_SIZE(promote_knobs),
	  { &policy_attr, &measured_overhead_attr } },
#endif
#ifdef CONFIG_HAWKEYE_BASELINES
	{ "ingens", ingens_knobs, ARRAY_SIZE(ingens_knobs), { &fmfi_attr } },
#endif
};

static int __init knob_dir_create(struct kobject *parent, struct knob_dir *d)
{
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(d->other) && d->other[i]; i++)
		d->attrs[n++] = &d->other[i]->attr;
	if (WARN_ON(n + d->nr >= KNOB_DIR_FILES))
		return -E2BIG;
	for (i = 0; i < d->nr; i++)
		d->attrs[n++] = &d->knobs[i].attr.attr;
	d->group.name = d->name;
	d->group.attrs = d->attrs;
	return sysfs_create_group(parent, &d->group);
}

static int __init hawkeye_sysfs_init(void)
{
	struct kobject *kobj = kobject_create_and_add("hawkeye", mm_kobj);
	unsigned int i;
	int ret = 0;

	if (!kobj)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(knob_dirs) && !ret; i++)
		ret = knob_dir_create(kobj, &knob_dirs[i]);
	if (!ret)
		ret = stat_files_create(kobj);
	if (ret) {
		pr_err("cannot create sysfs files: %d\n", ret);
		kobject_put(kobj);
	}
	return ret;
}
subsys_initcall(hawkeye_sysfs_init);

#ifdef CONFIG_HAWKEYE_SYSFS_KUNIT_TEST
#include "tests/sysfs-kunit.h"
#endif
