// SPDX-License-Identifier: GPL-2.0
/*
 * The THP behaviour hawkeye builds on, checked in our own kernel: huge
 * pages at fault when THP is "always", none when "never", MADV_COLLAPSE
 * and PMD splits keep every byte.
 */
#include "kselftest_harness.h"
#include "hawkeye_test.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define LEN (4 * HPAGE_SZ)

FIXTURE(thp)
{
	char enabled[32];
	char *mem;
};

FIXTURE_SETUP(thp)
{
	ASSERT_EQ(0, read_choice(THP_SYSFS "enabled", self->enabled, sizeof(self->enabled)));
	self->mem = map_aligned(LEN);
	ASSERT_NE(NULL, self->mem);
}

FIXTURE_TEARDOWN(thp)
{
	munmap(self->mem, LEN);
	write_file(THP_SYSFS "enabled", self->enabled);
}

static void fill(char *mem, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		mem[i] = pattern(i, seed);
}

/* The first offset in [from, to) that does not hold fill()'s byte, or to. */
static size_t first_mismatch(const char *mem, size_t from, size_t to, unsigned int seed)
{
	for (size_t i = from; i < to; i++)
		if ((unsigned char)mem[i] != pattern(i, seed))
			return i;
	return to;
}

TEST_F(thp, always_faults_huge)
{
	long before = vmstat("thp_fault_alloc");

	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "always"));
	fill(self->mem, LEN, 1);
	EXPECT_EQ((long)(LEN / 1024), smaps_kb(self->mem, "AnonHugePages"));
	EXPECT_GE(vmstat("thp_fault_alloc") - before, (long)(LEN / HPAGE_SZ));
	EXPECT_EQ(LEN, first_mismatch(self->mem, 0, LEN, 1));
}

TEST_F(thp, never_faults_base_pages)
{
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "never"));
	fill(self->mem, LEN, 2);
	EXPECT_EQ(0, smaps_kb(self->mem, "AnonHugePages"));
	EXPECT_EQ((long)(LEN / 1024), smaps_kb(self->mem, "Rss"));
}

TEST_F(thp, collapse_keeps_data)
{
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "never"));
	fill(self->mem, LEN, 3);
	ASSERT_EQ(0, smaps_kb(self->mem, "AnonHugePages"));
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "madvise"));
	ASSERT_EQ(0, madvise(self->mem, LEN, MADV_HUGEPAGE));
	ASSERT_EQ(0, madvise(self->mem, LEN, MADV_COLLAPSE));
	EXPECT_EQ((long)(LEN / 1024), smaps_kb(self->mem, "AnonHugePages"));
	EXPECT_EQ(LEN, first_mismatch(self->mem, 0, LEN, 3));
}

TEST_F(thp, split_keeps_data)
{
	size_t hole = HPAGE_SZ + 7 * PAGE_SZ;

	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "always"));
	fill(self->mem, LEN, 4);
	ASSERT_EQ((long)(LEN / 1024), smaps_kb(self->mem, "AnonHugePages"));
	/* Zapping one subpage splits that PMD; the rest must survive. */
	ASSERT_EQ(0, madvise(self->mem + hole, PAGE_SZ, MADV_DONTNEED));
	EXPECT_EQ((long)((LEN - HPAGE_SZ) / 1024), smaps_kb(self->mem, "AnonHugePages"));
	EXPECT_EQ(hole, first_mismatch(self->mem, 0, hole, 4));
	for (size_t i = 0; i < PAGE_SZ; i++)
		ASSERT_EQ(0, self->mem[hole + i]);
	EXPECT_EQ(LEN, first_mismatch(self->mem, hole + PAGE_SZ, LEN, 4));
}

TEST_HARNESS_MAIN
