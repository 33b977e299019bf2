/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests of the baseline policies, built into ingens.c so that they
 * reach its static functions: FMFI, Ingens' metric and the order in which
 * it serves processes, the utilisation rule, the policy table, which
 * record /proc/<pid>/hawkeye reads for the baselines' lines; and a
 * FreeBSD reservation fault in an address space being torn down.
 */
#ifndef _MM_HAWKEYE_INGENS_KUNIT_H
#define _MM_HAWKEYE_INGENS_KUNIT_H

#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/seq_file.h>

#include "access_map-fixtures-kunit.h"

static void ingens_test_fmfi(struct kunit *test)
{
	struct ingens_fmfi f = {};

	/* No free memory: fully fragmented. */
	KUNIT_EXPECT_EQ(test, ingens_fmfi_value(&f), 100U);
	/* An empty zone, as extfrag_for_order() counts it, changes nothing. */
	ingens_fmfi_add(&f, 0, 0);
	KUNIT_EXPECT_EQ(test, ingens_fmfi_value(&f), 100U);
	/* A zone whose free memory is half in blocks below 2 MB. */
	ingens_fmfi_add(&f, 1024, 50);
	KUNIT_EXPECT_EQ(test, ingens_fmfi_value(&f), 50U);
	/* ... and one three times its size, all in 2 MB blocks. */
	ingens_fmfi_add(&f, 3072, 0);
	KUNIT_EXPECT_EQ(test, ingens_fmfi_value(&f), 12U);
	/* ... and one as large as both, only in 4 KB pages: (512 + 4096) / 8192. */
	ingens_fmfi_add(&f, 4096, 100);
	KUNIT_EXPECT_EQ(test, ingens_fmfi_value(&f), 56U);
	/* The live value is a percentage. */
	KUNIT_EXPECT_LE(test, hawkeye_fmfi(), 100U);
}

static void ingens_test_metric(struct kunit *test)
{
	/* Active huge pages count 1 (100 hundredths) each. */
	KUNIT_EXPECT_EQ(test, ingens_metric(10, 0, 50), 1000ULL);
	/* Idle ones 1 / (1 - 0.5) = 2 each. */
	KUNIT_EXPECT_EQ(test, ingens_metric(10, 10, 50), 2000ULL);
	KUNIT_EXPECT_EQ(test, ingens_metric(10, 5, 50), 1500ULL);
	/* Without a penalty idleness does not matter. */
	KUNIT_EXPECT_EQ(test, ingens_metric(10, 5, 0), 1000ULL);
	/* A 90% tax: an idle huge page counts 10. */
	KUNIT_EXPECT_EQ(test, ingens_metric(2, 1, 90), 1100ULL);
	/* 75%: 4 each. */
	KUNIT_EXPECT_EQ(test, ingens_metric(3, 3, 75), 1200ULL);
	/* No huge pages: the lowest possible. */
	KUNIT_EXPECT_EQ(test, ingens_metric(0, 0, 50), 0ULL);
	/* More idle than huge (a stale sample) is clamped. */
	KUNIT_EXPECT_EQ(test, ingens_metric(2, 5, 50), 400ULL);
}

static void ingens_test_qualifies(struct kunit *test)
{
	/* 90% of 512 is 460.8: 461 present pages are needed. */
	KUNIT_EXPECT_FALSE(test, ingens_qualifies(460, false, 90));
	KUNIT_EXPECT_TRUE(test, ingens_qualifies(461, false, 90));
	KUNIT_EXPECT_TRUE(test, ingens_qualifies(512, false, 90));
	KUNIT_EXPECT_FALSE(test, ingens_qualifies(255, false, 50));
	KUNIT_EXPECT_TRUE(test, ingens_qualifies(256, false, 50));
	KUNIT_EXPECT_FALSE(test, ingens_qualifies(511, false, 100));
	KUNIT_EXPECT_TRUE(test, ingens_qualifies(512, false, 100));
	/* 1% of 512 is 5.12: 6 pages. */
	KUNIT_EXPECT_FALSE(test, ingens_qualifies(5, false, 1));
	KUNIT_EXPECT_TRUE(test, ingens_qualifies(6, false, 1));
	/* Aggressive (FMFI low): any populated region. */
	KUNIT_EXPECT_TRUE(test, ingens_qualifies(1, true, 90));
	KUNIT_EXPECT_FALSE(test, ingens_qualifies(0, true, 90));
	KUNIT_EXPECT_FALSE(test, ingens_qualifies(0, false, 1));
}

/*
 * Serve @n promotions as hawkeye_baseline_round() does (each promotion adds an
 * active huge page to the process served), writing who got each in @who.
 */
static void ingens_test_serve(struct hawkeye_mm **bs, unsigned int nr,
			      char *who, unsigned int n)
{
	unsigned int k, i;

	for (k = 0; k < n; k++) {
		struct hawkeye_mm *b = ingens_pick(bs, nr);

		if (!b) {
			who[k] = '-';
			continue;
		}
		for (i = 0; bs[i] != b; i++)
			;
		who[k] = 'A' + i;
		b->baseline.nr_huge++;
	}
	who[n] = '\0';
}

static void ingens_test_pick(struct kunit *test)
{
	unsigned int penalty = hawkeye_ingens.idle_penalty;
	struct hawkeye_mm *m = kunit_kcalloc(test, 3, sizeof(*m), GFP_KERNEL);
	struct hawkeye_mm *bs[3];
	char who[16];

	KUNIT_ASSERT_NOT_NULL(test, m);
	bs[0] = &m[0];
	bs[1] = &m[1];
	bs[2] = &m[2];

	hawkeye_ingens.idle_penalty = 50;

	/* Nobody has huge pages: served in turns, in registration order. */
	ingens_test_serve(bs, 3, who, 6);
	KUNIT_EXPECT_STREQ(test, who, "ABCABC");

	/*
	 * A: 4 huge pages, all in use (400); B: 3, all idle (600); C: none.
	 * C catches up with A first, then B's idle pages make it wait until
	 * the others hold 6 each.
	 */
	memset(m, 0, 3 * sizeof(*m));
	m[0].baseline.nr_huge = 4;
	m[1].baseline.nr_huge = 3;
	m[1].baseline.nr_idle = 3;
	ingens_test_serve(bs, 3, who, 8);
	KUNIT_EXPECT_STREQ(test, who, "CCCCACAC");
	KUNIT_EXPECT_EQ(test, ingens_mm_metric(&m[0]), 600ULL);
	KUNIT_EXPECT_EQ(test, ingens_mm_metric(&m[2]), 600ULL);
	ingens_test_serve(bs, 3, who, 3);
	KUNIT_EXPECT_STREQ(test, who, "ABC");

	/* Without a penalty B counts its 3 huge pages only. */
	hawkeye_ingens.idle_penalty = 0;
	memset(m, 0, 3 * sizeof(*m));
	m[0].baseline.nr_huge = 4;
	m[1].baseline.nr_huge = 3;
	m[1].baseline.nr_idle = 3;
	ingens_test_serve(bs, 3, who, 5);
	KUNIT_EXPECT_STREQ(test, who, "CCCBC");

	/* An exhausted process is passed over; none left: NULL. */
	hawkeye_ingens.idle_penalty = 50;
	memset(m, 0, 3 * sizeof(*m));
	m[0].baseline.exhausted = true;
	ingens_test_serve(bs, 3, who, 4);
	KUNIT_EXPECT_STREQ(test, who, "BCBC");
	m[1].baseline.exhausted = true;
	m[2].baseline.exhausted = true;
	KUNIT_EXPECT_NULL(test, ingens_pick(bs, 3));

	hawkeye_ingens.idle_penalty = penalty;
}

/* What /proc/<pid>/hawkeye shows of @hm, in @buf (a page). */
static void ingens_test_show_into(struct hawkeye_mm *hm, char *buf)
{
	struct seq_file m = { .buf = buf, .size = PAGE_SIZE };

	memset(buf, 0, PAGE_SIZE);
	hawkeye_promote_show(&m, hm);
}

/*
 * A record holds one policy's state (a union): the lines of a policy that
 * keeps another state read zeros, not the other state's bytes.
 */
static void ingens_test_show(struct kunit *test)
{
	struct hawkeye_mm *g = map_test_mm(test, 1);
	struct hawkeye_mm *ingens = kunit_kzalloc(test, sizeof(*ingens),
						  GFP_KERNEL);
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ingens);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	map_test_add(test, g, 1, 300);
	ingens_test_show_into(g, buf);
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "regions 1\n"));
	KUNIT_EXPECT_NOT_NULL_MSG(test,
		strstr(buf, "\nhuge 0\nidle_huge 0\ningens_metric 0\n"),
		"%s", buf);
	map_test_free(g);

	ingens->ops = &hawkeye_ingens_ops;
	ingens->baseline.nr_huge = 3;
	ingens_test_show_into(ingens, buf);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "regions 0\n"), "%s", buf);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "\nhuge 3\n"), "%s", buf);

	/* freebsd's lines are ingens' (shown once): its record reaches them. */
	ingens->ops = &hawkeye_freebsd_ops;
	ingens_test_show_into(ingens, buf);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "regions 0\n"), "%s", buf);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "\nhuge 3\n"), "%s", buf);
}

static void ingens_test_policy_names(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("ingens"),
			HAWKEYE_POLICY_INGENS);
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("freebsd\n"),
			HAWKEYE_POLICY_FREEBSD);
	KUNIT_EXPECT_EQ(test, hawkeye_promote_parse_policy("Ingens"), -EINVAL);
	/* Both take base page faults, in their own state each. */
	KUNIT_EXPECT_TRUE(test, hawkeye_ingens_ops.fault == hawkeye_baseline_register);
	KUNIT_EXPECT_NOT_NULL(test, hawkeye_freebsd_ops.fault);
	KUNIT_EXPECT_NULL(test, hawkeye_g_ops.fault);
	KUNIT_EXPECT_PTR_NE(test, hawkeye_ingens_ops.state, hawkeye_freebsd_ops.state);
	KUNIT_EXPECT_PTR_EQ(test, hawkeye_g_ops.state, hawkeye_pmu_ops.state);
}

/* The FreeBSD reservation's pages mapped so far. */
static unsigned long ingens_test_reserve_pages(struct kunit *test)
{
	return hawkeye_stat_read(HAWKEYE_STAT_FREEBSD_RESERVE_PAGES);
}

/*
 * A reservation maps none of its pages into an address space the OOM
 * reaper has begun to tear down (MMF_UNSTABLE): the fault is SIGBUS, as
 * do_anonymous_page()'s.
 */
static void ingens_test_reserve_unstable(struct kunit *test)
{
	int old = hawkeye_promote_parse_policy(hawkeye_promote_policy()->name);
	unsigned long uaddr, addr, pages;
	struct mm_struct *mm;
	int err;

	/* THP "never": no reservation is made, nothing to test. */
	if (!hugepage_global_enabled())
		kunit_skip(test, "transparent_hugepage/enabled is never");
	uaddr = kunit_vm_mmap(test, NULL, 0, 2 * HPAGE_PMD_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(uaddr));
	mm = current->mm;
	addr = ALIGN(uaddr, HPAGE_PMD_SIZE);
	KUNIT_ASSERT_EQ(test, do_madvise(mm, addr, HPAGE_PMD_SIZE, MADV_HUGEPAGE), 0);
	KUNIT_ASSERT_EQ(test, hawkeye_promote_set_policy(HAWKEYE_POLICY_FREEBSD), 0);

	/* The reservation, then a page of it: both from the reservation. */
	pages = ingens_test_reserve_pages(test);
	KUNIT_EXPECT_EQ(test, put_user(1, (char __user *)addr), 0);
	KUNIT_EXPECT_EQ(test, put_user(1, (char __user *)addr + PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, ingens_test_reserve_pages(test), pages + 2);

	set_bit(MMF_UNSTABLE, &mm->flags);
	err = put_user(1, (char __user *)addr + 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, err, -EFAULT);
	KUNIT_EXPECT_EQ(test, ingens_test_reserve_pages(test), pages + 2);
	clear_bit(MMF_UNSTABLE, &mm->flags);

	hawkeye_promote_set_policy(old);
}

static struct kunit_case ingens_test_cases[] = {
	KUNIT_CASE(ingens_test_fmfi),
	KUNIT_CASE(ingens_test_metric),
	KUNIT_CASE(ingens_test_qualifies),
	KUNIT_CASE(ingens_test_pick),
	KUNIT_CASE(ingens_test_show),
	KUNIT_CASE(ingens_test_policy_names),
	KUNIT_CASE(ingens_test_reserve_unstable),
	{}
};

static struct kunit_suite ingens_test_suite = {
	.name = "hawkeye-ingens",
	.test_cases = ingens_test_cases,
};
kunit_test_suite(ingens_test_suite);

#endif /* _MM_HAWKEYE_INGENS_KUNIT_H */
