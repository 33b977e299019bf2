// SPDX-License-Identifier: GPL-2.0
/*
 * Pre-zeroed marks across hibernation. The memmap (and
 * with it PG_zeroed) is in the image, the free pages are not, and a
 * freshly booted kernel that loads the image back uses free memory as it
 * likes first (its own boot, the pages it stages the image in): a page
 * still marked after resume may hold anything. Fill the pool, hibernate
 * for real (the image is written to swap and the guest powers off), let a
 * second boot resume it, then fault in most of free memory, as THPs and
 * as 4 KB pages, and read every byte.
 *
 * tests/run.py runs it in two boots of its own sharing one swap image:
 *   scripts/vm-run --swap 1G --swap-image IMG -- hibernate   (hibernates)
 *   scripts/vm-run --swap-image IMG --resume -- false        (goes on here)
 * (test_resume, which restores in the same kernel, cannot show the bug: the
 * pages it stages the image in were allocated, and so unmarked, by then.)
 * Devices without a restore callback do not come back: the 9p root
 * filesystem is gone after resume. So the program locks itself in memory
 * first and powers the guest off once the harness has printed its results.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"


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

FIXTURE(hibernate) {
};

FIXTURE_SETUP(hibernate)
{
}

FIXTURE_TEARDOWN(hibernate)
{
	sysfs_write(PREZERO "enabled", "0");
}

TEST_F_TIMEOUT(hibernate, fresh_memory_is_zero_after_hibernation, 500)
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

	/* Dirty half of free memory, free it, let the thread zero it. */
	free_kb = meminfo_kb("MemFree");
	len = (size_t)free_kb / 2 * 1024 / HPAGE_SZ * HPAGE_SZ;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x5a, len);
	munmap(p, len);
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	/*
	 * Until nearly all free memory is marked: loading the image must
	 * stage it in pages the image's memmap calls zeroed.
	 */
	zeroed = 0;
	for (int i = 0; i < 1200 && zeroed < meminfo_kb("MemFree") / 4 * 9 / 10; i++, sleep_ms(100))
		zeroed = vmstat("nr_free_zeroed");
	ASSERT_GE(zeroed, meminfo_kb("MemFree") / 4 * 8 / 10);

	TH_LOG("hibernating with %ld pages marked zeroed", zeroed);
	fflush(stdout);
	ASSERT_EQ(0, sysfs_write("/sys/power/disk", "shutdown"));
	ASSERT_EQ(0, sysfs_write("/sys/power/state", "disk")) TH_LOG("hibernation failed");
	TH_LOG("resumed; %ld pages were marked zeroed before, %ld now",
	       zeroed, vmstat("nr_free_zeroed"));

	/* A third of free memory as THPs, a third as 4 KB pages: all zero. */
	free_kb = meminfo_kb("MemFree");
	len = (size_t)free_kb / 3 * 1024 / HPAGE_SZ * HPAGE_SZ;
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
}

/* After the harness's results (it ends with exit()): nothing left to run. */
static void power_off(void)
{
	printf("### hibernate done\n");
	fflush(stdout);
	reboot(RB_POWER_OFF);
}

int main(int argc, char **argv)
{
	/* Every page of the program and its libraries, for after resume. */
	if (mlockall(MCL_CURRENT))
		perror("mlockall");
	atexit(power_off);
	return test_harness_run(argc, argv);
}
