// SPDX-License-Identifier: GPL-2.0
/*
 * Review finding A1: pre-zeroed marks across hibernation. The memmap (and
 * with it PG_zeroed) is in the image, the free pages are not, and the
 * image is staged in free pages when it is loaded back: a page still
 * marked after resume may hold anything. Hibernate with test_resume (the
 * image is written to swap, read back and restored, no power-off), then
 * fault in most of free memory, as THPs and as 4 KB pages, and read
 * every byte.
 *
 * Runs last in its boot (tests/run.py): devices without a restore
 * callback (the 9p root filesystem's) may not come back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

#define PREZERO "/sys/kernel/mm/hawkeye/prezero/"

/* Bytes of [p, p + len) that are not zero, page by page: pages not zero. */
static long nonzero_pages(const char *p, size_t len)
{
	long bad = 0;

	for (size_t i = 0; i < len; i += PAGE_SZ) {
		const unsigned long *w = (const unsigned long *)(p + i);

		for (size_t k = 0; k < PAGE_SZ / sizeof(*w); k++)
			if (w[k]) {
				bad++;
				break;
			}
	}
	return bad;
}

TEST(fresh_memory_is_zero_after_hibernation)
{
	long free_kb, zeroed, bad_thp, bad_4k;
	char dev[32], buf[256];
	size_t len;
	struct stat st;
	char *p, *q;

	if (access(PREZERO "enabled", W_OK))
		SKIP(return, "not a HawkEye kernel");
	if (access("/sys/power/disk", W_OK) || read_file("/sys/power/state", buf, sizeof(buf)) ||
	    !strstr(buf, "disk"))
		SKIP(return, "no hibernation in this kernel (CONFIG_HIBERNATION)");
	if (stat("/dev/vda", &st) || read_file("/proc/swaps", buf, sizeof(buf)) ||
	    !strstr(buf, "/dev/vda"))
		SKIP(return, "no swap on /dev/vda (scripts/vm-run --swap)");
	snprintf(dev, sizeof(dev), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	ASSERT_EQ(0, sysfs_write("/sys/power/resume", dev));

	/* Dirty most of free memory, free it, let the thread zero it all. */
	free_kb = meminfo_kb("MemFree");
	len = (size_t)(free_kb - 128 * 1024) * 1024 / HPAGE_SZ * HPAGE_SZ;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x5a, len);
	munmap(p, len);
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	zeroed = 0;
	for (int i = 0; i < 600 && zeroed < (long)(len / PAGE_SZ) / 2; i++, sleep_ms(100))
		zeroed = vmstat("nr_free_zeroed");
	ASSERT_GE(zeroed, (long)(len / PAGE_SZ) / 2);

	ASSERT_EQ(0, sysfs_write("/sys/power/disk", "test_resume"));
	ASSERT_EQ(0, sysfs_write("/sys/power/state", "disk")) TH_LOG("hibernation failed");
	TH_LOG("resumed; %ld pages were marked zeroed before, %ld now",
	       zeroed, vmstat("nr_free_zeroed"));

	/* Half of free memory as THPs, half as 4 KB pages: all must be zero. */
	free_kb = meminfo_kb("MemFree");
	len = (size_t)(free_kb - 96 * 1024) * 1024 / 2 / HPAGE_SZ * HPAGE_SZ;
	p = map_aligned(len);
	q = map_aligned(len);
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, q);
	madvise(p, len, MADV_HUGEPAGE);
	madvise(q, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < len; i += PAGE_SZ) {
		p[i + 8] = 0;	/* write faults: real pages, not the zero page */
		q[i + 8] = 0;
	}
	bad_thp = nonzero_pages(p, len);
	bad_4k = nonzero_pages(q, len);
	TH_LOG("%zu MB as THP (%ld kB huge), %zu MB as 4 KB pages", len / MB,
	       smaps_kb(p, "AnonHugePages"), len / MB);
	EXPECT_EQ(0, bad_thp) TH_LOG("%ld THP subpages not zero", bad_thp);
	EXPECT_EQ(0, bad_4k) TH_LOG("%ld 4 KB pages not zero", bad_4k);
	sysfs_write(PREZERO "enabled", "0");
}

TEST_HARNESS_MAIN
