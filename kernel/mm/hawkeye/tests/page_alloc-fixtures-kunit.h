/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the cases of page_alloc-kunit.h share: a free MAX_PAGE_ORDER block
 * of a zone taken off the free lists and given back, its pages filled and
 * read, and the checks of the marks, gathered and reported once per case.
 */
#ifndef _MM_HAWKEYE_PAGE_ALLOC_FIXTURES_KUNIT_H
#define _MM_HAWKEYE_PAGE_ALLOC_FIXTURES_KUNIT_H

#include <kunit/test.h>
#include <linux/kasan.h>
#include <linux/page-isolation.h>
#include <linux/vmalloc.h>

#define TEST_ORDER	MAX_PAGE_ORDER
#define HALF_ORDER	(MAX_PAGE_ORDER - 1)

static struct zone *pa_test_zone(struct kunit *test)
{
	struct page *probe = alloc_page(GFP_HIGHUSER_MOVABLE);

	KUNIT_ASSERT_NOT_NULL(test, probe);
	__free_page(probe);
	return page_zone(probe);
}

/* A free block of TEST_ORDER taken off @zone's free lists, or NULL. */
static struct page *pa_test_take_block(struct zone *zone)
{
	struct page *page;

	spin_lock_irq(&zone->lock);
	page = list_first_entry_or_null(&zone->free_area[TEST_ORDER].free_list[MIGRATE_MOVABLE],
					struct page, buddy_list);
	if (page && !__isolate_free_page(page, TEST_ORDER))
		page = NULL;
	spin_unlock_irq(&zone->lock);
	return page;
}

static void pa_test_fill(struct page *page, unsigned int order, int c)
{
	unsigned long i;

	for (i = 0; i < (1UL << order); i++) {
		void *addr = kmap_local_page(page + i);

		memset(addr, c, PAGE_SIZE);
		kunmap_local(addr);
	}
}

/* Reads free pages on purpose: KASAN, which poisons them, looks away. */
static bool pa_test_is_zero(struct page *page, unsigned int order)
{
	bool zero = true;
	unsigned long i;

	kasan_disable_current();
	for (i = 0; zero && i < (1UL << order); i++) {
		void *addr = kmap_local_page(page + i);

		zero = !memchr_inv(addr, 0, PAGE_SIZE);
		kunmap_local(addr);
	}
	kasan_enable_current();
	return zero;
}

/* Is @page the head of a free block of @order? */
static bool pa_test_free_block(struct page *page, unsigned int order)
{
	return PageBuddy(page) && buddy_order(page) == order;
}

/*
 * Checks made with the zone lock held, reported once it is dropped (a
 * failed expectation allocates): up to PA_CHECKS per case.
 */
#define PA_CHECKS	16

struct pa_checks {
	int n;
	struct {
		int line;
		const char *what;
	} failed[PA_CHECKS];
};

#define pa_check(c, cond) __pa_check(c, cond, __LINE__, #cond)

static void __pa_check(struct pa_checks *c, bool ok, int line, const char *what)
{
	if (!ok && c->n < PA_CHECKS) {
		c->failed[c->n].line = line;
		c->failed[c->n].what = what;
		c->n++;
	}
}

static void pa_report(struct kunit *test, struct pa_checks *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		KUNIT_FAIL(test, "line %d: %s", c->failed[i].line, c->failed[i].what);
	c->n = 0;
}

/*
 * The invariant, with @zone->lock held: every marked free block reads
 * zero, and NR_FREE_ZEROED is their size.
 */
static void pa_check_marks(struct pa_checks *c, struct zone *zone)
{
	unsigned long marked = 0, dirty = 0;
	unsigned int order;
	struct page *page;
	int mt;

	lockdep_assert_held(&zone->lock);
	for (order = 0; order < NR_PAGE_ORDERS; order++)
		for (mt = 0; mt < MIGRATE_TYPES; mt++)
			list_for_each_entry(page, &zone->free_area[order].free_list[mt],
					    buddy_list) {
				if (!PageZeroed(page))
					continue;
				marked += 1UL << order;
				if (!pa_test_is_zero(page, order))
					dirty++;
			}
	pa_check(c, dirty == 0);
	pa_check(c, marked == zone_page_state_snapshot(zone, NR_FREE_ZEROED));
}

/* Put @page of @order back on the free lists, marked zeroed or not. */
static void pa_test_put(struct page *page, unsigned int order, bool zeroed)
{
	if (zeroed)
		__SetPageZeroed(page);
	__putback_isolated_page(page, order, get_pageblock_migratetype(page));
}

/* Take the whole test block back off the free lists (it is free, merged). */
static bool pa_test_retake(struct pa_checks *c, struct zone *zone, struct page *page)
{
	bool free = pa_test_free_block(page, TEST_ORDER);

	pa_check(c, free);
	if (free)
		del_page_from_free_list(page, zone, TEST_ORDER,
					get_pageblock_migratetype(page));
	return free;
}

static struct page *pa_test_start(struct kunit *test, struct zone **zonep)
{
	struct zone *zone = pa_test_zone(test);
	struct page *page;

	/* The halves of a test block are pageblocks. */
	if (pageblock_order != HALF_ORDER)
		kunit_skip(test, "pageblock order %d", pageblock_order);
	/* The zeroing threads would race the cases' index and marks. */
	if (hawkeye_prezero_enabled())
		kunit_skip(test, "pre-zeroing is on");
	/* As turning pre-zeroing on does. */
	KUNIT_ASSERT_EQ(test, zeroed_index_init(), 0);
	page = pa_test_take_block(zone);
	if (!page)
		kunit_skip(test, "no free order-%d block in %s", TEST_ORDER, zone->name);
	*zonep = zone;
	return page;
}

/* Give the block back, unmarked; report what failed. */
static void pa_test_end(struct kunit *test, struct pa_checks *c, struct zone *zone,
			struct page *page)
{
	spin_lock_irq(&zone->lock);
	if (pa_test_retake(c, zone, page))
		pa_test_put(page, TEST_ORDER, false);
	spin_unlock_irq(&zone->lock);
	pa_report(test, c);
}

/*
 * The allocator uses the marks only while pre-zeroing is on: its key, with
 * no zeroing thread, for the cases that test those paths. Returns whether
 * it was on already, for pa_test_key_restore().
 */
static bool pa_test_key_on(void)
{
	bool was_on = hawkeye_prezero_enabled();

	if (!was_on)
		static_branch_enable(&hawkeye_prezero_key);
	return was_on;
}

static void pa_test_key_restore(bool was_on)
{
	if (!was_on)
		static_branch_disable(&hawkeye_prezero_key);
}

#endif /* _MM_HAWKEYE_PAGE_ALLOC_FIXTURES_KUNIT_H */
