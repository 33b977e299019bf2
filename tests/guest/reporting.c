// SPDX-License-Identifier: GPL-2.0
/*
 * Pre-zeroing beside free page reporting (virtio-balloon,
 * free-page-reporting=on; scripts/vm-run --balloon). Free page
 * reporting gives free 2 MB blocks back to the host and drops their zero
 * mark; a zeroing thread that zeroed them again would take the memory
 * back from the host, and the next report would give it back, round and
 * round. So reporting leaves zeroed blocks alone: the pool stays (up to
 * prezero/target_mb, by default a quarter of memory), the zeroing settles
 * to what the workload frees, faults take the pool, and reporting gives
 * the rest of free memory back.
 */
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"


static bool have_reporting_balloon(void)
{
	DIR *d = opendir("/sys/bus/virtio/drivers/virtio_balloon");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while ((e = readdir(d)))
		found |= !strncmp(e->d_name, "virtio", 6);
	closedir(d);
	return found;
}

/* @secs of a workload that frees 2 MB a second (which reporting sees). */
static void churn(int secs)
{
	for (int i = 0; i < secs * 10; i++) {
		char *p = mmap(NULL, HPAGE_SZ / 10, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED) {
			memset(p, 1, HPAGE_SZ / 10);
			munmap(p, HPAGE_SZ / 10);
		}
		sleep_ms(100);
	}
}

FIXTURE(reporting) {};

static const char *const knobs[] = { PREZERO "rate", PREZERO "target_mb", PREZERO "enabled" };
static const struct knob_set setup_knobs[] = {
	{ PREZERO "rate", "0" }, { PREZERO "enabled", "1" },
};

FIXTURE_SETUP(reporting)
{
	if (access(PREZERO "enabled", W_OK))
		SKIP(return, "not a HawkEye kernel");
	if (!have_reporting_balloon())
		SKIP(return, "no virtio-balloon (scripts/vm-run --balloon)");
	ASSERT_KNOBS_PUSH(knobs, setup_knobs);
}

FIXTURE_TEARDOWN(reporting)
{
	knobs_pop();
}

TEST_F_TIMEOUT(reporting, prezero_settles_beside_free_page_reporting, 180)
{
	long total = meminfo_kb("MemTotal") / 4, before, after;

	churn(30);
	before = hawkeye_stat("prezero_pages");
	churn(30);
	after = hawkeye_stat("prezero_pages");
	TH_LOG("zeroed in 30 s after settling: %ld pages (%ld MB; memory %ld MB), %ld zeroed free now",
	       after - before, (after - before) / 256, total / 256, vmstat("nr_free_zeroed"));
	/* 60 MB were freed by the workload; allow for 4x that. */
	EXPECT_LT(after - before, 4 * 60 * 256);
	/* And the pool is there: reporting did not take it. */
	EXPECT_LE(64L * MB / PAGE_SZ, vmstat("nr_free_zeroed"));
}

/*
 * Found by make test-deb: reporting took the zeroed blocks too, dropping
 * their marks, so the pool emptied within seconds of filling and every
 * fault zeroed synchronously again, the zeroing done for nothing.
 */
TEST_F_TIMEOUT(reporting, reporting_leaves_the_zeroed_pool_alone, 180)
{
	const long want = 64L * MB / PAGE_SZ;
	long filled = 0, later;
	char *p;

	/* Freed memory, zeroed before reporting (2 s after a free) gets to it. */
	for (int i = 0; i < 5 && filled < want; i++) {
		p = mmap(NULL, 256 * MB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, p);
		memset(p, 1, 256 * MB);
		munmap(p, 256 * MB);
		for (int t = 0; t < 50 && filled < want; t++) {
			sleep_ms(100);
			filled = vmstat("nr_free_zeroed");
		}
	}
	ASSERT_LE(want, filled) {
		TH_LOG("the pool never held 64 MB: %ld pages", filled);
	}
	/* Reporting has run several times over by now. */
	sleep_ms(10 * 1000);
	later = vmstat("nr_free_zeroed");
	TH_LOG("pool: %ld pages after filling, %ld 10 s later", filled, later);
	EXPECT_LE(filled * 9 / 10, later);
}

/*
 * Free blocks reported to the host: a reported block is a buddy head with
 * PG_reported (PG_uptodate in /proc/kpageflags), of page_reporting_order
 * (pageblock order, 2 MB) or more.
 */
static long reported_blocks(void)
{
	const uint64_t reported = 1ULL << 10 | 1ULL << 3;	/* KPF_BUDDY, KPF_UPTODATE */
	int fd = open("/proc/kpageflags", O_RDONLY);
	uint64_t flags[4096];
	long heads = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	for (off_t off = 0; (n = pread(fd, flags, sizeof(flags), off)) > 0; off += n)
		for (ssize_t i = 0; i < n / 8; i++)
			heads += (flags[i] & reported) == reported;
	close(fd);
	return heads;
}

/* Pages in free blocks reported to the host, at least (2 MB a block). */
static long reported_pages(void)
{
	return reported_blocks() * (HPAGE_SZ / PAGE_SZ);
}

/*
 * Free blocks of 2 MB or more (/proc/buddyinfo), but ZONE_DMA's: 16 MB,
 * below the free memory reporting wants to leave a zone (64 MB past its
 * low watermark), never reported.
 */
static long free_huge_blocks(void)
{
	FILE *f = fopen("/proc/buddyinfo", "r");
	char line[512];
	long blocks = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int orders = 0, used = 0;
		char *p = line, zone[16];
		long n[16];

		/* "Node 0, zone   Normal  61504  28785 ...": order 0 first. */
		if (sscanf(line, "Node %*d, zone %15s%n", zone, &used) < 1 || !strcmp(zone, "DMA"))
			continue;
		p += used;
		while (orders < 16 && sscanf(p, "%ld%n", &n[orders], &used) == 1) {
			p += used;
			orders++;
		}
		for (int o = __builtin_ctzl(HPAGE_SZ / PAGE_SZ); o < orders; o++)
			blocks += n[o];
	}
	fclose(f);
	return blocks;
}

/*
 * With the default target_mb and a reporting device, the pool is a
 * quarter of memory, and reporting gives back the rest of a large free:
 * the thread zeroes reported blocks only to fill that quarter (were the
 * pool all free memory, the host would get nothing back).
 */
TEST_F_TIMEOUT(reporting, the_default_pool_leaves_memory_to_the_host, 300)
{
	long quarter = meminfo_kb("MemTotal") / 4 / 4, reported = 0, pool;
	size_t len = (size_t)meminfo_kb("MemFree") * 1024 / 10 * 7 / HPAGE_SZ * HPAGE_SZ;
	char *p;

	ASSERT_EQ(0, sysfs_write(PREZERO "target_mb", "0"));
	p = map_aligned(len);
	ASSERT_NE(NULL, p);
	memset(p, 0xa5, len);
	munmap(p, len);
	/* Reporting runs 2 s after a free, and on each later one. */
	for (double end = now_s() + 120; reported < quarter && now_s() < end;) {
		sleep_ms(100);
		reported = reported_pages();
	}
	pool = vmstat("nr_free_zeroed");
	TH_LOG("freed %zu MB: %ld MB reported, a pool of %ld MB (a quarter of memory: %ld MB)",
	       len / MB, reported * PAGE_SZ / MB, pool * PAGE_SZ / MB, quarter * PAGE_SZ / MB);
	EXPECT_LE(quarter, reported);
	/*
	 * The pool stays within its quarter of MemTotal (the pages the node
	 * manages), but for a few blocks: the thread stops after the block
	 * that reaches it, and zeroed pages come back from the pcp lists.
	 */
	EXPECT_GE(quarter * 9 / 8, pool);
}

/*
 * Reporting takes each free block 2 s after the free, sooner than a busy
 * or slow zeroing thread gets to it: once no unreported block is left,
 * the thread fills its pool from reported ones, up to its target (a
 * quarter of the memory the node manages, MemTotal here, one node).
 */
TEST_F_TIMEOUT(reporting, the_pool_fills_from_reported_blocks, 420)
{
	long quarter = meminfo_kb("MemTotal") / 4 / 4, pool = 0, taken = 0, zeroed = 0;
	size_t len = (size_t)meminfo_kb("MemFree") * 1024 / 2 / HPAGE_SZ * HPAGE_SZ;
	long taken0, zeroed0, pool0, unreported;
	bool all_reported = false;
	char *p;

	ASSERT_LE(0, reported_blocks());
	ASSERT_LE(0, free_huge_blocks());

	/* Off, reporting takes the pool too (its marks go). */
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "target_mb", "0"));
	p = map_aligned(len);
	ASSERT_NE(NULL, p);
	memset(p, 0x5a, len);
	munmap(p, len);
	/* Every free block of 2 MB or more reported (but a few new frees). */
	for (double end = now_s() + 120; !all_reported && now_s() < end;) {
		sleep_ms(100);
		all_reported = vmstat("nr_free_zeroed") < quarter / 10 &&
			       reported_blocks() + 4 >= free_huge_blocks();
	}
	ASSERT_TRUE(all_reported) {
		TH_LOG("freed %zu MB: %ld of %ld free 2 MB+ blocks reported, %ld pages zeroed",
		       len / MB, reported_blocks(), free_huge_blocks(), vmstat("nr_free_zeroed"));
	}
	/* At most 4 MB a block. */
	unreported = (free_huge_blocks() - reported_blocks()) * (2 * HPAGE_SZ / PAGE_SZ);
	pool0 = vmstat("nr_free_zeroed");
	taken0 = hawkeye_stat("prezero_reported_pages");
	zeroed0 = hawkeye_stat("prezero_pages");
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	for (double end = now_s() + 240; (pool < quarter * 9 / 10 || !taken) && now_s() < end;) {
		sleep_ms(100);
		pool = vmstat("nr_free_zeroed");
		taken = hawkeye_stat("prezero_reported_pages") - taken0;
		zeroed = hawkeye_stat("prezero_pages") - zeroed0;
	}
	TH_LOG("freed %zu MB, all but %ld MB reported: a pool of %ld MB, %ld MB of it reported (target %ld MB)",
	       len / MB, unreported * PAGE_SZ / MB, pool * PAGE_SZ / MB, taken * PAGE_SZ / MB,
	       quarter * PAGE_SZ / MB);
	EXPECT_LE(quarter * 9 / 10, pool);
	/* The pool grew from reported blocks but the few unreported ones. */
	EXPECT_LT(0, taken);
	EXPECT_LE(pool - pool0 - unreported - 8 * (long)(HPAGE_SZ / PAGE_SZ), taken);
	/* Of the pages zeroed, the counter counts only those. */
	EXPECT_GE(zeroed, taken);
}

TEST_HARNESS_MAIN
