/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of HawkEye bloat recovery's policy, built into debloat.c so
 * that they reach its static functions.
 */
#ifndef _MM_HAWKEYE_DEBLOAT_KUNIT_H
#define _MM_HAWKEYE_DEBLOAT_KUNIT_H

#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/* Bounds are the knob table's (sysfs.c); the pair's rule is the setters'. */
static void debloat_test_bad_knobs_change_nothing(struct kunit *test)
{
	struct hawkeye_debloat_params old = hawkeye_debloat;

	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_high_pct(old.low_pct), -EINVAL);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_low_pct(old.high_pct), -EINVAL);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat.high_pct, old.high_pct);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat.low_pct, old.low_pct);

	/* Lowering both: low first, then high. */
	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_low_pct(10), 0);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_high_pct(20), 0);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat.low_pct, 10U);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat.high_pct, 20U);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_threshold(1), 0);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat_current_threshold(), 1U);

	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_high_pct(old.high_pct), 0);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_low_pct(old.low_pct), 0);
	KUNIT_EXPECT_EQ(test, hawkeye_debloat_set_threshold(old.threshold), 0);
}

static void debloat_test_order(struct kunit *test)
{
	struct debloat_mm mms[] = {
		{ .nr_thp = 10, .nr_young = 5 },	/* 50% accessed */
		{ .nr_thp = 100, .nr_young = 10 },	/* 10% */
		{ .nr_thp = 4, .nr_young = 0 },		/* none */
		{ .nr_thp = 8, .nr_young = 0 },		/* none, more THPs */
	};

	sort(mms, ARRAY_SIZE(mms), sizeof(mms[0]), debloat_cmp_overhead, NULL);
	KUNIT_EXPECT_EQ(test, mms[0].nr_thp, 8U);
	KUNIT_EXPECT_EQ(test, mms[1].nr_thp, 4U);
	KUNIT_EXPECT_EQ(test, mms[2].nr_thp, 100U);
	KUNIT_EXPECT_EQ(test, mms[3].nr_thp, 10U);
}

/* Promotion's access-coverage estimate, where known, goes first. */
static void debloat_test_order_coverage(struct kunit *test)
{
	struct debloat_mm mms[] = {
		{ .nr_thp = 10, .nr_young = 0 },
		{ .nr_thp = 20, .nr_young = 20, .sampled = true, .overhead = 900 },
		{ .nr_thp = 30, .nr_young = 0, .sampled = true, .overhead = 1000 },
		{ .nr_thp = 40, .nr_young = 40, .sampled = true, .overhead = 50 },
		{ .nr_thp = 50, .nr_young = 1, .sampled = true, .overhead = 50 },
	};

	sort(mms, ARRAY_SIZE(mms), sizeof(mms[0]), debloat_cmp_overhead, NULL);
	KUNIT_EXPECT_EQ(test, mms[0].nr_thp, 50U);	/* 50, fewer young */
	KUNIT_EXPECT_EQ(test, mms[1].nr_thp, 40U);
	KUNIT_EXPECT_EQ(test, mms[2].nr_thp, 20U);
	KUNIT_EXPECT_EQ(test, mms[3].nr_thp, 30U);
	KUNIT_EXPECT_EQ(test, mms[4].nr_thp, 10U);	/* not sampled: last */
}


static void debloat_test_lower_bar(struct kunit *test)
{
	/* Halved after each pass that leaves memory tight ... */
	KUNIT_EXPECT_EQ(test, debloat_lower_bar(256, 256), 128U);
	KUNIT_EXPECT_EQ(test, debloat_lower_bar(128, 256), 64U);
	KUNIT_EXPECT_EQ(test, debloat_lower_bar(64, 256), 32U);
	/* ... down to threshold / 8, where it stays. */
	KUNIT_EXPECT_EQ(test, debloat_lower_bar(32, 256), 32U);
	KUNIT_EXPECT_EQ(test, debloat_lower_bar(100, 512), 64U);
	/* Never below one zero subpage. */
	KUNIT_EXPECT_EQ(test, debloat_lower_bar(1, 1), 1U);
	KUNIT_EXPECT_EQ(test, debloat_lower_bar(3, 7), 1U);
}

/* hawkeye-pmu: measured processes first, lowest measured overhead first. */
static void debloat_test_order_measured(struct kunit *test)
{
	struct debloat_mm mms[] = {
		{ .nr_thp = 10, .measured = -1, .sampled = true },
		{ .nr_thp = 20, .measured = 6000 },
		{ .nr_thp = 30, .measured = 50 },
		{ .nr_thp = 40, .measured = -1 },
	};

	sort(mms, ARRAY_SIZE(mms), sizeof(mms[0]), debloat_cmp_overhead, NULL);
	KUNIT_EXPECT_EQ(test, mms[0].nr_thp, 30U);
	KUNIT_EXPECT_EQ(test, mms[1].nr_thp, 20U);
	KUNIT_EXPECT_EQ(test, mms[2].nr_thp, 10U);	/* sampled */
	KUNIT_EXPECT_EQ(test, mms[3].nr_thp, 40U);
}

/*
 * Counting a process's THPs holds mmap_lock for a batch of PMDs at a time,
 * not for the whole process: page tables for 1024 2 MB regions (a base
 * page in each) take one hold, for 1112 two; each PMD is walked once, and
 * no THP is counted.
 */
static void debloat_test_count_batches(struct kunit *test)
{
	unsigned long nr = HAWKEYE_THP_COUNT_BATCH + 88, uaddr, addr, i;
	struct hawkeye_thp_count count = {};

	/* 2.2 GB of address space, 4 MB of it touched: not reserved. */
	uaddr = kunit_vm_mmap(test, NULL, 0, (nr + 1) * HPAGE_PMD_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(uaddr));
	addr = ALIGN(uaddr, HPAGE_PMD_SIZE);
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr, nr * HPAGE_PMD_SIZE,
					 MADV_NOHUGEPAGE), 0);
	for (i = 0; i < HAWKEYE_THP_COUNT_BATCH; i++)
		KUNIT_ASSERT_EQ(test, put_user(1, (char __user *)addr +
						  i * HPAGE_PMD_SIZE), 0);
	hawkeye_count_thps(current->mm, vma_is_anonymous, hawkeye_debloat_pmd_folio,
			   &count);
	KUNIT_EXPECT_EQ(test, count.pmds, (unsigned long)HAWKEYE_THP_COUNT_BATCH);
	KUNIT_EXPECT_EQ(test, count.holds, 1UL);

	for (; i < nr; i++)
		KUNIT_ASSERT_EQ(test, put_user(1, (char __user *)addr +
						  i * HPAGE_PMD_SIZE), 0);
	count = (struct hawkeye_thp_count){};
	hawkeye_count_thps(current->mm, vma_is_anonymous, hawkeye_debloat_pmd_folio,
			   &count);
	KUNIT_EXPECT_EQ(test, count.nr, 0UL);
	KUNIT_EXPECT_EQ(test, count.pmds, nr);
	KUNIT_EXPECT_EQ(test, count.holds, 2UL);
}

static struct kunit_case hawkeye_debloat_cases[] = {
	KUNIT_CASE(debloat_test_bad_knobs_change_nothing),
	KUNIT_CASE(debloat_test_order),
	KUNIT_CASE(debloat_test_order_coverage),
	KUNIT_CASE(debloat_test_order_measured),
	KUNIT_CASE(debloat_test_lower_bar),
	KUNIT_CASE(debloat_test_count_batches),
	{}
};

static struct kunit_suite hawkeye_debloat_suite = {
	.name = "hawkeye-debloat",
	.test_cases = hawkeye_debloat_cases,
};
kunit_test_suite(hawkeye_debloat_suite);

#endif /* _MM_HAWKEYE_DEBLOAT_KUNIT_H */
