// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye's sysfs interface: /sys/kernel/mm/hawkeye/.
 *
 * Every store parses its whole input and changes nothing unless it is
 * valid: -EINVAL for bad input.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/hawkeye.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/sysfs.h>

#include "hawkeye.h"

/* "0" or "1", nothing else: a knob is never set by a typo. */
static int parse_bool01(const char *buf, bool *val)
{
	unsigned int v;

	if (kstrtouint(buf, 10, &v) || v > 1)
		return -EINVAL;
	*val = v;
	return 0;
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", hawkeye_prezero_enabled());
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool on;
	int ret = parse_bool01(buf, &on);

	if (!ret)
		ret = hawkeye_prezero_set_enabled(on);
	return ret ? ret : count;
}

static ssize_t rate_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(hawkeye_prezero.rate));
}

static ssize_t rate_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count)
{
	unsigned int rate;
	int ret;

	/* Out of range is bad input too: -EINVAL, not kstrto*'s -ERANGE. */
	if (kstrtouint(buf, 10, &rate))
		return -EINVAL;
	ret = hawkeye_prezero_set_rate(rate);
	return ret ? ret : count;
}

static ssize_t target_mb_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(hawkeye_prezero.target_mb));
}

static ssize_t target_mb_store(struct kobject *kobj, struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	unsigned long mb;
	int ret;

	if (kstrtoul(buf, 10, &mb))
		return -EINVAL;
	ret = hawkeye_prezero_set_target_mb(mb);
	return ret ? ret : count;
}

static ssize_t nontemporal_show(struct kobject *kobj, struct kobj_attribute *attr,
				char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(hawkeye_prezero.nontemporal));
}

static ssize_t nontemporal_store(struct kobject *kobj, struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	bool nt;
	int ret = parse_bool01(buf, &nt);

	if (ret)
		return ret;
	WRITE_ONCE(hawkeye_prezero.nontemporal, nt);
	return count;
}

static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);
static struct kobj_attribute rate_attr = __ATTR_RW(rate);
static struct kobj_attribute target_mb_attr = __ATTR_RW(target_mb);
static struct kobj_attribute nontemporal_attr = __ATTR_RW(nontemporal);

static struct attribute *prezero_attrs[] = {
	&enabled_attr.attr,
	&rate_attr.attr,
	&target_mb_attr.attr,
	&nontemporal_attr.attr,
	NULL,
};

static const struct attribute_group prezero_group = {
	.name = "prezero",
	.attrs = prezero_attrs,
};

static ssize_t debloat_enabled_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", hawkeye_debloat_enabled());
}

static ssize_t debloat_enabled_store(struct kobject *kobj,
				     struct kobj_attribute *attr,
				     const char *buf, size_t count)
{
	bool on;
	int ret = parse_bool01(buf, &on);

	if (!ret)
		ret = hawkeye_debloat_set_enabled(on);
	return ret ? ret : count;
}

/* Most knobs are unsigned numbers, each with its setter. */
static ssize_t store_uint(const char *buf, size_t count,
			  int (*set)(unsigned int))
{
	unsigned int val;
	int ret;

	if (kstrtouint(buf, 10, &val))
		return -EINVAL;
	ret = set(val);
	return ret ? ret : count;
}

/* <group>/<name>: hawkeye_<group>.<name>, set by hawkeye_<group>_set_<name>(). */
#define UINT_ATTR(group, name)						\
static ssize_t group##_##name##_show(struct kobject *kobj,		\
				     struct kobj_attribute *attr,	\
				     char *buf)				\
{									\
	return sysfs_emit(buf, "%u\n", READ_ONCE(hawkeye_##group.name));	\
}									\
static ssize_t group##_##name##_store(struct kobject *kobj,		\
				      struct kobj_attribute *attr,	\
				      const char *buf, size_t count)	\
{									\
	return store_uint(buf, count, hawkeye_##group##_set_##name);	\
}									\
static struct kobj_attribute group##_##name##_attr =			\
	__ATTR(name, 0644, group##_##name##_show, group##_##name##_store)

UINT_ATTR(debloat, high_pct);
UINT_ATTR(debloat, low_pct);
UINT_ATTR(debloat, threshold);
UINT_ATTR(debloat, rate);

static ssize_t debloat_current_threshold_show(struct kobject *kobj,
					      struct kobj_attribute *attr,
					      char *buf)
{
	return sysfs_emit(buf, "%u\n", hawkeye_debloat_current_threshold());
}

static struct kobj_attribute debloat_enabled_attr =
	__ATTR(enabled, 0644, debloat_enabled_show, debloat_enabled_store);
static struct kobj_attribute debloat_current_threshold_attr =
	__ATTR(current_threshold, 0444, debloat_current_threshold_show, NULL);

static struct attribute *debloat_attrs[] = {
	&debloat_enabled_attr.attr,
	&debloat_high_pct_attr.attr,
	&debloat_low_pct_attr.attr,
	&debloat_threshold_attr.attr,
	&debloat_rate_attr.attr,
	&debloat_current_threshold_attr.attr,
	NULL,
};

static const struct attribute_group debloat_group = {
	.name = "debloat",
	.attrs = debloat_attrs,
};

static ssize_t promote_policy_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	return hawkeye_promote_show_policy(buf);
}

static ssize_t promote_policy_store(struct kobject *kobj,
				    struct kobj_attribute *attr,
				    const char *buf, size_t count)
{
	int policy = hawkeye_promote_parse_policy(buf);
	int ret = policy < 0 ? policy : hawkeye_promote_set_policy(policy);

	return ret ? ret : count;
}

UINT_ATTR(promote, scan_period_ms);
UINT_ATTR(promote, sample_window_ms);
UINT_ATTR(promote, ema_weight);
UINT_ATTR(promote, batch);
UINT_ATTR(promote, sleep_ms);
UINT_ATTR(promote, pmu_threshold);
UINT_ATTR(promote, pmu_band);
UINT_ATTR(promote, pmu_ttl_ms);

/* "PID OVERHEAD": a measurement from hawkeye-pmud, root only. */
static ssize_t promote_measured_overhead_store(struct kobject *kobj,
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

static struct kobj_attribute promote_policy_attr =
	__ATTR(policy, 0644, promote_policy_show, promote_policy_store);
static struct kobj_attribute promote_measured_overhead_attr =
	__ATTR(measured_overhead, 0200, NULL, promote_measured_overhead_store);

static struct attribute *promote_attrs[] = {
	&promote_policy_attr.attr,
	&promote_scan_period_ms_attr.attr,
	&promote_sample_window_ms_attr.attr,
	&promote_ema_weight_attr.attr,
	&promote_batch_attr.attr,
	&promote_sleep_ms_attr.attr,
	&promote_pmu_threshold_attr.attr,
	&promote_pmu_band_attr.attr,
	&promote_pmu_ttl_ms_attr.attr,
	&promote_measured_overhead_attr.attr,
	NULL,
};

static const struct attribute_group promote_group = {
	.name = "promote",
	.attrs = promote_attrs,
};

static int __init hawkeye_sysfs_init(void)
{
	struct kobject *kobj = kobject_create_and_add("hawkeye", mm_kobj);
	int ret;

	if (!kobj)
		return -ENOMEM;
	ret = sysfs_create_group(kobj, &prezero_group);
	if (!ret)
		ret = sysfs_create_group(kobj, &debloat_group);
	if (!ret)
		ret = sysfs_create_group(kobj, &promote_group);
	if (!ret)
		ret = sysfs_create_group(kobj, &hawkeye_ingens_group);
	if (ret) {
		pr_err("cannot create sysfs files: %d\n", ret);
		kobject_put(kobj);
	}
	return ret;
}
subsys_initcall(hawkeye_sysfs_init);
