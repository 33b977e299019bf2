/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of when bloat recovery runs, built into limits.c so that
 * they reach its static functions.
 */
#ifndef _MM_HAWKEYE_LIMITS_KUNIT_H
#define _MM_HAWKEYE_LIMITS_KUNIT_H

#include <kunit/test.h>

static void limits_test_hysteresis(struct kunit *test)
{
	/* Idle: start only above the high watermark. */
	KUNIT_EXPECT_FALSE(test, debloat_wanted(700, 1000, false, false, 85, 70));
	KUNIT_EXPECT_FALSE(test, debloat_wanted(800, 1000, false, false, 85, 70));
	KUNIT_EXPECT_FALSE(test, debloat_wanted(850, 1000, false, false, 85, 70));
	KUNIT_EXPECT_TRUE(test, debloat_wanted(851, 1000, false, false, 85, 70));
	/* Running: go on until below the low watermark. */
	KUNIT_EXPECT_TRUE(test, debloat_wanted(851, 1000, true, false, 85, 70));
	KUNIT_EXPECT_TRUE(test, debloat_wanted(800, 1000, true, false, 85, 70));
	KUNIT_EXPECT_TRUE(test, debloat_wanted(700, 1000, true, false, 85, 70));
	KUNIT_EXPECT_FALSE(test, debloat_wanted(699, 1000, true, false, 85, 70));
	/* No overflow with large memory (64 TB of 4 KB pages). */
	KUNIT_EXPECT_TRUE(test, debloat_wanted(1UL << 34, 1UL << 34, false, false, 85, 70));
	KUNIT_EXPECT_FALSE(test, debloat_wanted(1UL << 33, 1UL << 34, false, false, 85, 70));
	/* low 0 never stops, high 100 never starts. */
	KUNIT_EXPECT_TRUE(test, debloat_wanted(0, 1000, true, false, 85, 0));
	KUNIT_EXPECT_FALSE(test, debloat_wanted(1000, 1000, false, false, 100, 70));
	/* Under memory pressure: start at the low watermark already. */
	KUNIT_EXPECT_FALSE(test, debloat_wanted(699, 1000, false, true, 85, 70));
	KUNIT_EXPECT_TRUE(test, debloat_wanted(700, 1000, false, true, 85, 70));
	KUNIT_EXPECT_TRUE(test, debloat_wanted(1000, 1000, false, true, 100, 70));
}

#ifdef CONFIG_MEMCG
/*
 * A cgroup's use foreseen a second ahead as its THPs grow: 100 pages of
 * THPs more in half a second is 200 more in a second; looks sooner than
 * HAWKEYE_DEBLOAT_POLL after the last neither foresee nor count as a
 * look; a look DEBLOAT_AHEAD or more after the last, or with fewer THPs,
 * foresees nothing; use that grows without THPs is not foreseen.
 */
static void limits_test_use_ahead(struct kunit *test)
{
	struct hawkeye_memcg hm = {};
	unsigned long t = jiffies;

	KUNIT_EXPECT_EQ(test, debloat_use_ahead(&hm, 5000, 1000, t), 5000UL);
	KUNIT_EXPECT_EQ(test, debloat_use_ahead(&hm, 5100, 1100, t + HZ / 2),
			5300UL);
	KUNIT_EXPECT_EQ(test, debloat_use_ahead(&hm, 9000, 5000, t + HZ / 2 + 1),
			9000UL);
	KUNIT_EXPECT_EQ(test, hm.thp, 1100UL);
	KUNIT_EXPECT_EQ(test, debloat_use_ahead(&hm, 5000, 1000, t + HZ), 5000UL);
	KUNIT_EXPECT_EQ(test, debloat_use_ahead(&hm, 7000, 1000, t + HZ + HZ / 4),
			7000UL);
	KUNIT_EXPECT_EQ(test, debloat_use_ahead(&hm, 7000, 3000, t + 4 * HZ),
			7000UL);
	KUNIT_EXPECT_EQ(test, debloat_use_ahead(&hm, 7100, 3100,
						t + 4 * HZ + HZ / 2), 7300UL);
}
#endif

static struct kunit_case hawkeye_limits_cases[] = {
	KUNIT_CASE(limits_test_hysteresis),
#ifdef CONFIG_MEMCG
	KUNIT_CASE(limits_test_use_ahead),
#endif
	{}
};

static struct kunit_suite hawkeye_limits_suite = {
	.name = "hawkeye-limits",
	.test_cases = hawkeye_limits_cases,
};
kunit_test_suite(hawkeye_limits_suite);

#endif /* _MM_HAWKEYE_LIMITS_KUNIT_H */
