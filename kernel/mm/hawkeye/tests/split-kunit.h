/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of HawkEye bloat recovery's mechanism, built into split.c so
 * that they reach its static functions.
 */
#ifndef _MM_HAWKEYE_SPLIT_KUNIT_H
#define _MM_HAWKEYE_SPLIT_KUNIT_H

#include <kunit/test.h>
#include <linux/string.h>

static void split_test_page_is_zero(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	unsigned long bytes = 0;
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, page);
	p = page_address(page);

	KUNIT_EXPECT_TRUE(test, debloat_page_is_zero(p, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, PAGE_SIZE);

	/* Reading stops at the first non-zero byte, which is read. */
	p[9] = 0x42;
	bytes = 0;
	KUNIT_EXPECT_FALSE(test, debloat_page_is_zero(p, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, 10UL);

	p[0] = 1;
	bytes = 0;
	KUNIT_EXPECT_FALSE(test, debloat_page_is_zero(p, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, 1UL);

	memset(p, 0, PAGE_SIZE);
	p[PAGE_SIZE - 1] = 0x80;
	bytes = 0;
	KUNIT_EXPECT_FALSE(test, debloat_page_is_zero(p, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, PAGE_SIZE);

	__free_page(page);
}

/* Set byte @off of every subpage i of @folio for which @pick(i) holds. */
static void split_test_fill(struct folio *folio, bool (*pick)(unsigned int),
			    unsigned int off)
{
	unsigned int i;

	for (i = 0; i < folio_nr_pages(folio); i++) {
		u8 *p = kmap_local_folio(folio, i * PAGE_SIZE);

		memset(p, 0, PAGE_SIZE);
		if (pick(i))
			p[off] = 0xa5;
		kunmap_local(p);
	}
}

static bool split_test_none(unsigned int i)
{
	return false;
}

static bool split_test_first_300(unsigned int i)
{
	return i < 300;
}

static bool split_test_even(unsigned int i)
{
	return !(i & 1);
}

static void split_test_worth_splitting(struct kunit *test)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, HPAGE_PMD_ORDER);
	unsigned long bytes;

	if (!folio)
		kunit_skip(test, "no free huge page");

	/* All zero: done once the threshold is reached. */
	split_test_fill(folio, split_test_none, 0);
	bytes = 0;
	KUNIT_EXPECT_TRUE(test, debloat_worth_splitting(folio, 256, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, 256 * PAGE_SIZE);
	bytes = 0;
	KUNIT_EXPECT_TRUE(test, debloat_worth_splitting(folio, HPAGE_PMD_NR, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, HPAGE_PMD_NR * PAGE_SIZE);

	/* 257 subpages in use cannot leave 256 zero ones: one byte each. */
	split_test_fill(folio, split_test_first_300, 0);
	bytes = 0;
	KUNIT_EXPECT_FALSE(test, debloat_worth_splitting(folio, 256, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, 257UL);

	/* Every other subpage in use, first non-zero byte at offset 9. */
	split_test_fill(folio, split_test_even, 9);
	bytes = 0;
	KUNIT_EXPECT_TRUE(test, debloat_worth_splitting(folio, 256, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, 256 * PAGE_SIZE + 256 * 10);
	/* 257 needed: known impossible at the 256th subpage in use (510). */
	bytes = 0;
	KUNIT_EXPECT_FALSE(test, debloat_worth_splitting(folio, 257, &bytes));
	KUNIT_EXPECT_EQ(test, bytes, 255 * PAGE_SIZE + 256 * 10);

	folio_put(folio);
}

/* An mTHP's share of the bar: proportional, rounded up, at least 1. */
static void split_test_piece_bar(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hawkeye_piece_bar(256, 4), 8U);	/* 64 KB */
	KUNIT_EXPECT_EQ(test, hawkeye_piece_bar(256, 2), 2U);	/* 16 KB */
	KUNIT_EXPECT_EQ(test, hawkeye_piece_bar(32, 4), 1U);
	KUNIT_EXPECT_EQ(test, hawkeye_piece_bar(1, 2), 1U);
	KUNIT_EXPECT_EQ(test, hawkeye_piece_bar(100, 4), 4U);	/* 3.125 */
	KUNIT_EXPECT_EQ(test, hawkeye_piece_bar(512, HPAGE_PMD_ORDER), 512U);
}

static struct kunit_case hawkeye_split_cases[] = {
	KUNIT_CASE(split_test_page_is_zero),
	KUNIT_CASE(split_test_worth_splitting),
	KUNIT_CASE(split_test_piece_bar),
	{}
};

static struct kunit_suite hawkeye_split_suite = {
	.name = "hawkeye-split",
	.test_cases = hawkeye_split_cases,
};
kunit_test_suite(hawkeye_split_suite);

#endif /* _MM_HAWKEYE_SPLIT_KUNIT_H */
