/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the knob table, built into sysfs.c so that they reach
 * its store function: every knob refuses bad input and changes nothing,
 * takes its bounds, and the setters keep the rules between knobs; and of
 * the counters' files.
 */
#ifndef _MM_HAWKEYE_SYSFS_KUNIT_H
#define _MM_HAWKEYE_SYSFS_KUNIT_H

#include <kunit/test.h>

static unsigned int knob_test_value(struct hawkeye_knob *k)
{
	return k->on ? k->on() : READ_ONCE(*k->value);
}

static ssize_t knob_test_store(struct hawkeye_knob *k, const char *buf)
{
	return knob_store(NULL, &k->attr, buf, strlen(buf));
}

static void knob_test_bad_input(struct kunit *test)
{
	static const char *const bad[] = {
		"", "\n", "x", "1x", "-1", " 1", "1.5", "99999999999999999999",
	};
	unsigned int d, i, b;
	char buf[16];

	for (d = 0; d < ARRAY_SIZE(knob_dirs); d++) {
		for (i = 0; i < knob_dirs[d].nr; i++) {
			struct hawkeye_knob *k = &knob_dirs[d].knobs[i];
			unsigned int before = knob_test_value(k);

			for (b = 0; b < ARRAY_SIZE(bad); b++)
				KUNIT_EXPECT_EQ_MSG(test, knob_test_store(k, bad[b]),
						    -EINVAL, "%s/%s <- '%s'",
						    knob_dirs[d].name,
						    k->attr.attr.name, bad[b]);
			if (k->max < UINT_MAX) {
				snprintf(buf, sizeof(buf), "%u", k->max + 1);
				KUNIT_EXPECT_EQ_MSG(test, knob_test_store(k, buf),
						    -EINVAL, "%s/%s <- %s",
						    knob_dirs[d].name,
						    k->attr.attr.name, buf);
			}
			if (k->min > 0) {
				snprintf(buf, sizeof(buf), "%u", k->min - 1);
				KUNIT_EXPECT_EQ_MSG(test, knob_test_store(k, buf),
						    -EINVAL, "%s/%s <- %s",
						    knob_dirs[d].name,
						    k->attr.attr.name, buf);
			}
			KUNIT_EXPECT_EQ_MSG(test, knob_test_value(k), before,
					    "%s/%s changed", knob_dirs[d].name,
					    k->attr.attr.name);
		}
	}
}

/* A plain knob takes both of its bounds, and a trailing newline. */
static void knob_test_bounds(struct kunit *test)
{
	unsigned int d, i;
	char buf[16];

	for (d = 0; d < ARRAY_SIZE(knob_dirs); d++) {
		for (i = 0; i < knob_dirs[d].nr; i++) {
			struct hawkeye_knob *k = &knob_dirs[d].knobs[i];
			unsigned int before = knob_test_value(k);

			if (k->set || k->turn)
				continue;
			snprintf(buf, sizeof(buf), "%u\n", k->min);
			KUNIT_EXPECT_EQ(test, knob_test_store(k, buf),
					(ssize_t)strlen(buf));
			KUNIT_EXPECT_EQ(test, knob_test_value(k), k->min);
			snprintf(buf, sizeof(buf), "%u", k->max);
			KUNIT_EXPECT_EQ(test, knob_test_store(k, buf),
					(ssize_t)strlen(buf));
			KUNIT_EXPECT_EQ(test, knob_test_value(k), k->max);
			WRITE_ONCE(*k->value, before);
		}
	}
}

/* Unused only without the mechanisms whose rules are tested below. */
static __maybe_unused struct hawkeye_knob *
knob_test_find(struct kunit *test, const char *dir, const char *name)
{
	unsigned int d, i;

	for (d = 0; d < ARRAY_SIZE(knob_dirs); d++)
		for (i = 0; i < knob_dirs[d].nr; i++)
			if (!strcmp(knob_dirs[d].name, dir) &&
			    !strcmp(knob_dirs[d].knobs[i].attr.attr.name, name))
				return &knob_dirs[d].knobs[i];
	KUNIT_FAIL(test, "no knob %s/%s", dir, name);
	return NULL;
}

/*
 * The rules between knobs: storing @val in @dir/@name, which would break
 * one, is refused with -EINVAL, and *@value, the knob's, stays as it was.
 */
static void __maybe_unused knob_test_rule(struct kunit *test, const char *dir,
					  const char *name, unsigned long val,
					  const unsigned int *value)
{
	struct hawkeye_knob *k = knob_test_find(test, dir, name);
	unsigned int before = *value;
	char buf[24];

	KUNIT_ASSERT_NOT_NULL(test, k);
	snprintf(buf, sizeof(buf), "%lu", val);
	KUNIT_EXPECT_EQ(test, knob_test_store(k, buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, *value, before);
}

#ifdef CONFIG_HAWKEYE_DEBLOAT
/* high_pct stays above low_pct ... */
static void knob_test_watermarks(struct kunit *test)
{
	knob_test_rule(test, "debloat", "high_pct", hawkeye_debloat.low_pct,
		       &hawkeye_debloat.high_pct);
}
#endif

#ifdef CONFIG_HAWKEYE_PROMOTE
/* ... the sample window is shorter than the scan period ... */
static void knob_test_window(struct kunit *test)
{
	knob_test_rule(test, "promote", "sample_window_ms",
		       hawkeye_promote.scan_period_ms,
		       &hawkeye_promote.sample_window_ms);
}
#endif

#ifdef CONFIG_HAWKEYE_PREZERO
/* ... and the zeroed pool fits in memory. */
static void knob_test_target(struct kunit *test)
{
	knob_test_rule(test, "prezero", "target_mb",
		       (totalram_pages() >> (20 - PAGE_SHIFT)) + 1,
		       &hawkeye_prezero.target_mb);
}
#endif

/* A file of stats/ read as sysfs reads it: into a page of its own. */
static unsigned long stat_test_read(struct kunit *test, unsigned int i,
				    char *page)
{
	unsigned long val;

	KUNIT_ASSERT_GT(test, stat_show(NULL, &stat_attrs[i], page), 0);
	KUNIT_ASSERT_EQ(test, kstrtoul(page, 10, &val), 0);
	return val;
}

/*
 * Each stats/ file reads its own counter: what is added to a counter shows
 * in its file and in no other. Every mechanism is off while KUnit runs.
 */
static void stat_test_files(struct kunit *test)
{
	unsigned long *before;
	unsigned int i, j;
	char *page;

	before = kunit_kcalloc(test, NR_STAT_FILES, sizeof(*before), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, before);
	/* sysfs_emit() writes only to the start of a page. */
	page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_TRUE(test, PAGE_ALIGNED(page));
	for (i = 0; i < NR_STAT_FILES; i++) {
		KUNIT_EXPECT_NOT_NULL(test, stat_attrs[i].attr.name);
		for (j = 0; j < NR_STAT_FILES; j++)
			before[j] = stat_test_read(test, j, page);
		if (i < NR_HAWKEYE_STATS)
			hawkeye_stat_add(i, i + 1);
		else if (IS_ENABLED(CONFIG_VM_EVENT_COUNTERS))
			count_vm_events(stat_vm_events[i - NR_HAWKEYE_STATS].item, i + 1);
		else
			continue;
		for (j = 0; j < NR_STAT_FILES; j++)
			KUNIT_EXPECT_EQ_MSG(test, stat_test_read(test, j, page) - before[j],
					    j == i ? i + 1UL : 0UL,
					    "stats/%s after %u was added to stats/%s",
					    stat_attrs[j].attr.name, i + 1,
					    stat_attrs[i].attr.name);
	}
}

static struct kunit_case knob_test_cases[] = {
	KUNIT_CASE(knob_test_bad_input),
	KUNIT_CASE(knob_test_bounds),
#ifdef CONFIG_HAWKEYE_DEBLOAT
	KUNIT_CASE(knob_test_watermarks),
#endif
#ifdef CONFIG_HAWKEYE_PROMOTE
	KUNIT_CASE(knob_test_window),
#endif
#ifdef CONFIG_HAWKEYE_PREZERO
	KUNIT_CASE(knob_test_target),
#endif
	KUNIT_CASE(stat_test_files),
	{}
};

static struct kunit_suite knob_test_suite = {
	.name = "hawkeye-sysfs",
	.test_cases = knob_test_cases,
};

kunit_test_suite(knob_test_suite);

#endif /* _MM_HAWKEYE_SYSFS_KUNIT_H */
