// SPDX-License-Identifier: GPL-2.0
/*
 * Review finding C4: pre-zeroing and free page reporting (virtio-balloon,
 * free-page-reporting=on; scripts/vm-run --balloon). Reporting gives free
 * 2 MB blocks back to the host and drops their zero mark; a zeroing thread
 * that zeroes them again takes the memory back from the host, and the
 * next report gives it back again, round and round. With both on, the
 * zeroed count settles: after a settling time it grows by little more
 * than what the workload frees, not by free memory over and over.
 */
#include <stdbool.h>
#include <dirent.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

#define PREZERO "/sys/kernel/mm/hawkeye/prezero/"

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

FIXTURE(reporting) {
};

FIXTURE_SETUP(reporting)
{
}

FIXTURE_TEARDOWN(reporting)
{
	sysfs_write(PREZERO "enabled", "0");
}

TEST_F_TIMEOUT(reporting, prezero_settles_beside_free_page_reporting, 180)
{
	long total = meminfo_kb("MemTotal") / 4, before, after;

	if (access(PREZERO "enabled", W_OK))
		SKIP(return, "not a HawkEye kernel");
	if (!have_reporting_balloon())
		SKIP(return, "no virtio-balloon (scripts/vm-run --balloon)");
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	churn(30);
	before = vmstat("hawkeye_prezero_pages");
	churn(30);
	after = vmstat("hawkeye_prezero_pages");
	TH_LOG("zeroed in 30 s after settling: %ld pages (%ld MB; memory %ld MB), %ld zeroed free now",
	       after - before, (after - before) / 256, total / 256, vmstat("nr_free_zeroed"));
	/* 60 MB were freed by the workload; allow for 4x that. */
	EXPECT_LT(after - before, 4 * 60 * 256);
}

TEST_HARNESS_MAIN
