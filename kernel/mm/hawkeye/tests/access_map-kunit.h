/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the access map, built into access_map.c so that they
 * reach its static functions. The maps are built by hand, without an mm;
 * the accessed-bit sampler runs on memory of a KUnit mm.
 */
#ifndef _MM_HAWKEYE_ACCESS_MAP_KUNIT_H
#define _MM_HAWKEYE_ACCESS_MAP_KUNIT_H

#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/uaccess.h>

#include "access_map-fixtures-kunit.h"

static void map_test_bucket(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, map_bucket(0), 0U);
	KUNIT_EXPECT_EQ(test, map_bucket(49), 0U);
	KUNIT_EXPECT_EQ(test, map_bucket(50), 1U);
	KUNIT_EXPECT_EQ(test, map_bucket(99), 1U);
	KUNIT_EXPECT_EQ(test, map_bucket(100), 2U);
	KUNIT_EXPECT_EQ(test, map_bucket(449), 8U);
	KUNIT_EXPECT_EQ(test, map_bucket(450), 9U);
	KUNIT_EXPECT_EQ(test, map_bucket(511), 9U);
	KUNIT_EXPECT_EQ(test, map_bucket(HPAGE_PMD_NR), 9U);
}

static void map_test_ema(struct kunit *test)
{
	unsigned int ema = 0;
	int i;

	KUNIT_EXPECT_EQ(test, map_ema(0, 512, 50), 256U);
	KUNIT_EXPECT_EQ(test, map_ema(256, 512, 50), 384U);
	KUNIT_EXPECT_EQ(test, map_ema(384, 0, 50), 192U);
	KUNIT_EXPECT_EQ(test, map_ema(100, 300, 100), 300U);
	KUNIT_EXPECT_EQ(test, map_ema(100, 300, 1), 102U);
	KUNIT_EXPECT_EQ(test, map_ema(512, 512, 37), 512U);
	/* A steady coverage is approached from below and never exceeded. */
	for (i = 0; i < 20; i++) {
		ema = map_ema(ema, 400, 50);
		KUNIT_EXPECT_LE(test, ema, 400U);
	}
	KUNIT_EXPECT_GE(test, ema, 399U);
}

static void map_test_moves(struct kunit *test)
{
	struct hawkeye_mm *hm = map_test_mm(test, 1);
	struct hawkeye_region *a, *b, *c, *d;
	unsigned long idx[8];

	/* New regions go to the tail, in the order they are sampled. */
	a = map_test_add(test, hm, 1, 120);		/* bucket 2 */
	b = map_test_add(test, hm, 2, 130);
	c = map_test_add(test, hm, 3, 260);		/* bucket 5 */
	d = map_test_add(test, hm, 4, 10);		/* bucket 0 */
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 4UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 520UL);
	KUNIT_ASSERT_EQ(test, map_test_bucket_list(hm, 2, idx, 8), 2);
	KUNIT_EXPECT_EQ(test, idx[0], 1UL);
	KUNIT_EXPECT_EQ(test, idx[1], 2UL);

	/* Moving up: the head of the new bucket. */
	hawkeye_map_place(hm, d, 140, HPAGE_PMD_ORDER, false);
	KUNIT_ASSERT_EQ(test, map_test_bucket_list(hm, 2, idx, 8), 3);
	KUNIT_EXPECT_EQ(test, idx[0], 4UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[0], 0UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[2], 3UL);

	/* Moving down: the tail. */
	hawkeye_map_place(hm, c, 101, HPAGE_PMD_ORDER, false);
	KUNIT_ASSERT_EQ(test, map_test_bucket_list(hm, 2, idx, 8), 4);
	KUNIT_EXPECT_EQ(test, idx[3], 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[5], 0UL);

	/* Same bucket: stays where it is, whatever its EMA did. */
	hawkeye_map_place(hm, a, 149, HPAGE_PMD_ORDER, false);
	hawkeye_map_place(hm, b, 100, HPAGE_PMD_ORDER, false);
	KUNIT_ASSERT_EQ(test, map_test_bucket_list(hm, 2, idx, 8), 4);
	KUNIT_EXPECT_EQ(test, idx[0], 4UL);
	KUNIT_EXPECT_EQ(test, idx[1], 1UL);
	KUNIT_EXPECT_EQ(test, idx[2], 2UL);
	KUNIT_EXPECT_EQ(test, idx[3], 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 140UL + 101 + 149 + 100);

	hawkeye_map_remove(hm, d);
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.nr[2], 3UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 101UL + 149 + 100);
	KUNIT_EXPECT_NULL(test, xa_load(&hm->map.regions, 4));

	map_test_free(hm);
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 0UL);
	KUNIT_EXPECT_EQ(test, hm->map.overhead, 0UL);
}

/* Touch pages @from..@to - 1 of the 2 MB region at @addr. */
static void map_test_touch(struct kunit *test, unsigned long addr,
			   int from, int to)
{
	for (; from < to; from++)
		KUNIT_ASSERT_EQ(test, put_user(1, (char __user *)addr + from * PAGE_SIZE), 0);
}

/* Open (@pass 0) or close window @pass on the regions at @addr[@nr]. */
static void map_test_window(struct hawkeye_mm *hm, unsigned long *addr,
			    int nr, unsigned long pass)
{
	struct map_walk w = { .hm = hm, .pass = pass, .weight = 50 };
	struct vm_area_struct *vma;
	int i;

	mmap_read_lock(current->mm);
	for (i = 0; i < nr; i++) {
		vma = vma_lookup(current->mm, addr[i]);
		if (!vma)
			continue;
		if (pass)
			map_count_region(vma, addr[i], &w);
		else
			map_clear_region(vma, addr[i], hm);
	}
	mmap_read_unlock(current->mm);
	if (!pass)
		flush_tlb_mm(current->mm);
}

/*
 * Pages mapped during a window are young from the faults that mapped
 * them: coverage counts pages used again, not pages populated. A region
 * used (half of it) keeps its coverage; one that had a page and got the
 * rest, and one populated whole within the window, count one page and
 * none.
 */
static void map_test_population(struct kunit *test)
{
	struct hawkeye_mm *hm = map_test_mm(test, 1);
	struct hawkeye_region *r;
	unsigned long uaddr, addr[3];
	unsigned int want[3] = { 128, 0, 0 };	/* EMAs of 256, 1, 0 at 50 % */
	int i;

	uaddr = kunit_vm_mmap(test, NULL, 0, 4 * HPAGE_PMD_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(uaddr));
	for (i = 0; i < 3; i++)
		addr[i] = ALIGN(uaddr, HPAGE_PMD_SIZE) + i * HPAGE_PMD_SIZE;
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr[0], 3 * HPAGE_PMD_SIZE,
					 MADV_NOHUGEPAGE), 0);
	map_test_touch(test, addr[0], 0, HPAGE_PMD_NR);
	map_test_touch(test, addr[1], 0, 1);

	map_test_window(hm, addr, 3, 0);
	map_test_touch(test, addr[0], 0, HPAGE_PMD_NR / 2);
	map_test_touch(test, addr[1], 0, HPAGE_PMD_NR);
	map_test_touch(test, addr[2], 0, HPAGE_PMD_NR);
	map_test_window(hm, addr, 3, 1);

	for (i = 0; i < 3; i++) {
		r = xa_load(&hm->map.regions, addr[i] >> PMD_SHIFT);
		KUNIT_ASSERT_NOT_NULL(test, r);
		KUNIT_EXPECT_EQ_MSG(test, r->ema, want[i], "region %d", i);
	}
	KUNIT_EXPECT_EQ(test, hm->map.nr_regions, 3UL);
	map_test_free(hm);
}

#ifdef CONFIG_MMU_NOTIFIER
/*
 * A secondary MMU that counts its clear_young calls and saw an access to
 * one page, @hot, which it reports (and forgets) when asked about a range
 * that holds it.
 */
struct map_test_mmu {
	struct mmu_notifier mn;
	int calls;
	unsigned long start, end;
	unsigned long hot;
};

static int map_test_clear_young(struct mmu_notifier *mn, struct mm_struct *mm,
				unsigned long start, unsigned long end)
{
	struct map_test_mmu *t = container_of(mn, struct map_test_mmu, mn);
	bool young = t->hot >= start && t->hot < end;

	t->calls++;
	t->start = start;
	t->end = end;
	if (young)
		t->hot = 0;
	return young;
}

static const struct mmu_notifier_ops map_test_mmu_ops = {
	.clear_young = map_test_clear_young,
};

/*
 * A window opened on @addr's region as map_clear_mm() opens one, or
 * closed (@young not NULL) as map_count_mm() closes one.
 */
static int map_test_young(unsigned long addr, unsigned long *young,
			  unsigned long *skipped, bool *per_page)
{
	struct vm_area_struct *vma;
	int nr = -1;

	mmap_read_lock(current->mm);
	vma = vma_lookup(current->mm, addr);
	if (vma)
		nr = hawkeye_young_ptes(vma, addr, young, skipped, NULL, per_page);
	mmap_read_unlock(current->mm);
	if (!young)
		flush_tlb_mm(current->mm);
	return nr;
}

/*
 * Coverage counts the pages accessed, once: an opening clears the bits, a
 * closing reads them and leaves them for reclaim. A region whose page
 * table was not accessed since is skipped where the CPU marks tables
 * accessed, and one access is seen again. A secondary MMU is asked once
 * per 2 MB region where it saw no access.
 */
static void map_test_young_ptes(struct kunit *test)
{
	struct map_test_mmu t = { .mn.ops = &map_test_mmu_ops };
	unsigned long uaddr, addr, i, skipped = 0;
	unsigned long hw = arch_has_hw_nonleaf_pmd_young() && !lru_gen_enabled();
	DECLARE_BITMAP(young, HPAGE_PMD_NR);
	bool per_page = false;
	struct folio *folio;
	struct page *page;

	uaddr = kunit_vm_mmap(test, NULL, 0, 2 * HPAGE_PMD_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(uaddr));
	addr = ALIGN(uaddr, HPAGE_PMD_SIZE);
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr, HPAGE_PMD_SIZE, MADV_NOHUGEPAGE), 0);
	for (i = 0; i < HPAGE_PMD_NR; i++)
		KUNIT_ASSERT_EQ(test, put_user(1, (char __user *)addr + i * PAGE_SIZE), 0);

	KUNIT_EXPECT_EQ(test, map_test_young(addr, NULL, &skipped, NULL), HPAGE_PMD_NR);
	KUNIT_EXPECT_EQ(test, skipped, 0);
	KUNIT_EXPECT_EQ(test, map_test_young(addr, NULL, &skipped, NULL), 0);
	KUNIT_EXPECT_EQ(test, skipped, hw);
	KUNIT_EXPECT_EQ(test, map_test_young(addr, young, &skipped, NULL), 0);
	KUNIT_EXPECT_EQ(test, skipped, 2 * hw);

	KUNIT_ASSERT_EQ(test, put_user(2, (char __user *)addr + 7 * PAGE_SIZE), 0);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, map_test_young(addr, young, &skipped, NULL), 1);
		KUNIT_EXPECT_EQ(test, find_first_bit(young, HPAGE_PMD_NR), 7);
		KUNIT_EXPECT_EQ(test, bitmap_weight(young, HPAGE_PMD_NR), 1);
	}
	KUNIT_EXPECT_EQ(test, map_test_young(addr, NULL, &skipped, NULL), 1);
	KUNIT_EXPECT_EQ(test, map_test_young(addr, young, &skipped, NULL), 0);
	KUNIT_EXPECT_EQ(test, skipped, 3 * hw);

	/*
	 * A secondary MMU saw one page accessed: its
	 * range answer marks no page young, it makes the next windows ask
	 * page by page, and then only that page counts. The CPU's bits are
	 * old (the windows above cleared them).
	 */
	KUNIT_ASSERT_EQ(test, get_user_pages_fast(addr + 3 * PAGE_SIZE, 1, 0, &page), 1);
	folio = page_folio(page);
	KUNIT_ASSERT_EQ(test, mmu_notifier_register(&t.mn, current->mm), 0);
	t.hot = addr + 7 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, map_test_young(addr, NULL, &skipped, &per_page), 0);
	KUNIT_EXPECT_TRUE(test, per_page);
	KUNIT_EXPECT_EQ(test, t.calls, 1);
	KUNIT_EXPECT_EQ(test, t.start, addr);
	KUNIT_EXPECT_EQ(test, t.end, addr + HPAGE_PMD_SIZE);
	t.hot = addr + 7 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, map_test_young(addr, young, &skipped, &per_page), 1);
	KUNIT_EXPECT_EQ(test, find_first_bit(young, HPAGE_PMD_NR), 7);
	KUNIT_EXPECT_TRUE(test, per_page);
	KUNIT_EXPECT_EQ(test, t.calls, 1 + HPAGE_PMD_NR);
	/*
	 * An opening counts nothing: one range ask clears the bits, not 512
	 * page asks, and a yes keeps the access of every page for reclaim,
	 * which the range answer cleared.
	 */
	folio_test_clear_young(folio);
	t.hot = addr;
	KUNIT_EXPECT_EQ(test, map_test_young(addr, NULL, &skipped, &per_page), 0);
	KUNIT_EXPECT_TRUE(test, per_page);
	KUNIT_EXPECT_EQ(test, t.calls, 2 + HPAGE_PMD_NR);
	KUNIT_EXPECT_TRUE(test, folio_test_young(folio));
	/* No access since: page by page once more, then a range again. */
	KUNIT_EXPECT_EQ(test, map_test_young(addr, young, &skipped, &per_page), 0);
	KUNIT_EXPECT_FALSE(test, per_page);
	KUNIT_EXPECT_EQ(test, map_test_young(addr, young, &skipped, &per_page), 0);
	KUNIT_EXPECT_EQ(test, t.calls, 3 + 2 * HPAGE_PMD_NR);
	mmu_notifier_unregister(&t.mn, current->mm);
	folio_put(folio);
	KUNIT_EXPECT_EQ(test, skipped, 3 * hw);
}
#endif

/* The page size a region's use asks for: recovery's judgement of it. */
static void map_test_best_order(struct kunit *test)
{
	unsigned long orders = BIT(HPAGE_PMD_ORDER) | BIT(4) | BIT(0);
	unsigned int bar = HPAGE_PMD_NR / 2;
	DECLARE_BITMAP(used, HPAGE_PMD_NR);
	unsigned int i;

	bitmap_zero(used, HPAGE_PMD_NR);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, orders, bar), 0U);

	bitmap_set(used, 0, 300);		/* dense: 212 unused < 256 */
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, orders, bar), HPAGE_PMD_ORDER);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, BIT(4) | BIT(0), bar), 4U);

	/* Every other 64 KB piece whole: 64 KB, not 2 MB (256 unused). */
	bitmap_zero(used, HPAGE_PMD_NR);
	for (i = 0; i < HPAGE_PMD_NR; i += 32)
		bitmap_set(used, i, 16);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, orders, bar), 4U);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, BIT(HPAGE_PMD_ORDER) | BIT(0), bar), 0U);

	/* Every other page: no large size is dense enough. */
	bitmap_zero(used, HPAGE_PMD_NR);
	for (i = 0; i < HPAGE_PMD_NR; i += 2)
		__set_bit(i, used);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, orders | BIT(2), bar), 0U);

	/* 9 of 16 pages of every other 64 KB piece: 7 unused < a bar of 8. */
	bitmap_zero(used, HPAGE_PMD_NR);
	for (i = 0; i < HPAGE_PMD_NR; i += 32)
		bitmap_set(used, i, 9);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, orders, bar), 4U);

	/*
	 * Pages 100-299, across words and pieces of every size: 256 pages
	 * leave 312 unused >= 2 * 128, 128 pages 184 < 3 * 64, 64 pages
	 * 56 < 4 * 32, 32 pages 24 < 7 * 16.
	 */
	bitmap_zero(used, HPAGE_PMD_NR);
	bitmap_set(used, 100, 200);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, BIT(8) | BIT(0), bar), 0U);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, GENMASK(8, 6) | BIT(0), bar), 7U);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, BIT(6) | BIT(0), bar), 6U);
	KUNIT_EXPECT_EQ(test, hawkeye_best_order(used, BIT(5) | BIT(0), bar), 5U);
}

static struct kunit_case access_map_test_cases[] = {
	KUNIT_CASE(map_test_best_order),
	KUNIT_CASE(map_test_bucket),
	KUNIT_CASE(map_test_ema),
	KUNIT_CASE(map_test_moves),
	KUNIT_CASE(map_test_population),
#ifdef CONFIG_MMU_NOTIFIER
	KUNIT_CASE(map_test_young_ptes),
#endif
	{}
};

static struct kunit_suite access_map_test_suite = {
	.name = "hawkeye-access-map",
	.test_cases = access_map_test_cases,
};
kunit_test_suite(access_map_test_suite);

#endif /* _MM_HAWKEYE_ACCESS_MAP_KUNIT_H */
