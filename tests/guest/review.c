// SPDX-License-Identifier: GPL-2.0
/*
 * The findings of the mm review (November 2026), one test each: every test
 * here failed on the kernel the review read and passes on the fixed one.
 *
 * - A2: a freebsd reservation never hands out a subpage that something
 *   else still references (a pipe after vmsplice, a pinned io_uring
 *   buffer): the holder keeps the old data, the process gets a new page.
 * - A3: /proc/<pid>/hawkeye pins the mm at open, as smaps does: a
 *   descriptor kept across exec reads nothing of the new image.
 * - B1: a process killed while bloat recovery works gives its memory back
 *   at once, not when the recovery round ends.
 * - B2: the freezer freezes the recovery thread in the middle of a round.
 * - C1: page-table allocations (__GFP_ZERO, not user memory) take the
 *   zone lock no more often with pre-zeroing on than off.
 * - C3: a sample pass does not hold one process's mmap_lock for the whole
 *   address space: no hold of 10 ms over 1 GB of base pages.
 * - C2: with the policy linux, fork/exit allocate nothing for HawkEye; a
 *   process that started under linux is still sampled after a switch.
 * - B3: a process whose registration failed at fork (failslab) is
 *   registered and sampled at the thread's next pass.
 * - B4: a switch to linux forgets every process although allocations on
 *   its way fail (failslab).
 * - C5: page cache allocations do not take the pre-zeroed pages a fault
 *   refilled its CPU's list with (refuted: they never did; now counted).
 * - (d): a new pre-zeroing rate takes effect at once; idle page tracking
 *   still sees the accesses whose accessed bits HawkEye cleared.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/io_uring.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

/* Every knob a test here changes; the fixture puts them back. */
static const char *const knob_paths[] = {
	THP_SYSFS "enabled", THP_SYSFS "defrag",
	KHUGEPAGED "scan_sleep_millisecs", KHUGEPAGED "pages_to_scan",
	PROMOTE "policy", PROMOTE "scan_period_ms", PROMOTE "sample_window_ms",
	PROMOTE "sleep_ms",
	DEBLOAT "enabled", DEBLOAT "low_pct", DEBLOAT "high_pct",
	DEBLOAT "threshold", DEBLOAT "rate",
	PREZERO "enabled", PREZERO "rate", PREZERO "target_mb", PREZERO "paced",
};

FIXTURE(review) {};

FIXTURE_SETUP(review)
{
	if (access(PROMOTE "policy", F_OK))
		SKIP(return, "not a HawkEye kernel");
	ASSERT_EQ(0, knobs_push(knob_paths, NR(knob_paths)));
}

FIXTURE_TEARDOWN(review)
{
	sysfs_write(DEBLOAT "enabled", "0");
	sysfs_write(PREZERO "enabled", "0");
	sysfs_write("/sys/kernel/debug/failslab/probability", "0");
	knobs_pop();
}

static bool all_bytes(const char *buf, char c, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != c)
			return false;
	return true;
}

/* Policy freebsd and @regions 2 MB regions that may take reservations. */
static char *map_freebsd(int regions)
{
	if (sysfs_write(THP_SYSFS "enabled", "madvise") ||
	    sysfs_write(PROMOTE "policy", "freebsd"))
		return NULL;
	return map_hugepage(regions * HPAGE_SZ);
}

/* Page 1 of a region of a freebsd mapping. */
struct page1 {
	char *addr;
	uint64_t pfn;
	bool reserved;	/* the reservation's page 1 (next to page 0) */
};

/* Region @r of @p reserved (page 0 written) and page 1 filled with 'A'. */
static struct page1 reserve_page1(char *p, int r)
{
	struct page1 pg = { p + r * HPAGE_SZ + PAGE_SZ };

	p[r * HPAGE_SZ] = 1;		/* makes the reservation */
	memset(pg.addr, 'A', PAGE_SZ);
	pg.pfn = pfn_of(0, (unsigned long)pg.addr);
	pg.reserved = pg.pfn == pfn_of(0, (unsigned long)p + r * HPAGE_SZ) + 1;
	return pg;
}

/* Page 1 dropped (MADV_DONTNEED) and its address written again, 'B's: 0, or -1. */
static int drop_and_rewrite(struct page1 *pg)
{
	if (madvise(pg->addr, PAGE_SZ, MADV_DONTNEED))
		return -1;
	memset(pg->addr, 'B', PAGE_SZ);
	return 0;
}

/*
 * A2, a pipe: page 1 of a reserved region, spliced into a pipe and then
 * dropped with MADV_DONTNEED, is still the pipe's: the process writing the
 * same address again must get another page, and the pipe the old data.
 */
TEST_F_TIMEOUT(review, freebsd_reuses_no_page_a_pipe_holds, 120)
{
	const int regions = 32;
	char *p, buf[PAGE_SZ];
	int r, kept = 0, reserved = 0;

	if (!HAS_BASELINES())
		SKIP(return, NO_BASELINES);

	p = map_freebsd(regions);
	ASSERT_NE(NULL, p);
	for (r = 0; r < regions; r++) {
		struct page1 pg = reserve_page1(p, r);
		struct iovec iov = { pg.addr, PAGE_SZ };
		int fds[2];

		reserved += pg.reserved;
		ASSERT_EQ(0, pipe(fds));
		ASSERT_EQ(PAGE_SZ, vmsplice(fds[1], &iov, 1, 0));
		ASSERT_EQ(0, drop_and_rewrite(&pg));
		ASSERT_EQ(PAGE_SZ, read(fds[0], buf, PAGE_SZ));
		kept += all_bytes(buf, 'A', PAGE_SZ);
		EXPECT_EQ('B', pg.addr[0]);
		close(fds[0]);
		close(fds[1]);
	}
	/* Without reservations the test would prove nothing. */
	EXPECT_EQ(regions, reserved);
	EXPECT_EQ(regions, kept) TH_LOG("the pipe got the new data for %d of %d regions",
					 regions - kept, regions);
	munmap(p, regions * HPAGE_SZ);
}

/*
 * A2, a pin (io_uring fixed buffer: pin_user_pages(FOLL_LONGTERM), as
 * O_DIRECT's pin_user_pages()): the pinned page is not mapped again.
 */
TEST_F(review, freebsd_reuses_no_pinned_page)
{
	struct io_uring_params params = {};
	const int regions = 8;
	int r, ring, reused = 0;
	char *p;

	if (!HAS_BASELINES())
		SKIP(return, NO_BASELINES);

	ring = syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0 && errno == ENOSYS)
		SKIP(return, "no io_uring in this kernel");
	ASSERT_LE(0, ring);
	p = map_freebsd(regions);
	ASSERT_NE(NULL, p);
	for (r = 0; r < regions; r++) {
		struct page1 pg = reserve_page1(p, r);
		struct iovec iov = { pg.addr, PAGE_SZ };

		ASSERT_TRUE(pg.reserved);
		ASSERT_EQ(0, syscall(__NR_io_uring_register, ring,
				     IORING_REGISTER_BUFFERS, &iov, 1));
		ASSERT_EQ(0, drop_and_rewrite(&pg));
		reused += pfn_of(0, (unsigned long)pg.addr) == pg.pfn;
		ASSERT_EQ(0, syscall(__NR_io_uring_register, ring,
				     IORING_UNREGISTER_BUFFERS, NULL, 0));
	}
	EXPECT_EQ(0, reused) TH_LOG("%d of %d pinned pages mapped again", reused, regions);
	close(ring);
	munmap(p, regions * HPAGE_SZ);
}

/* The disk vm-run --slow-disk gives the guest, as "vdX" in @name. */
static bool slow_disk(char *name, size_t len)
{
	char path[64], serial[32];
	int i;

	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "/sys/block/vd%c/serial", 'a' + i);
		if (!read_file(path, serial, sizeof(serial)) &&
		    !strncmp(serial, "hawkeye-slow", 12)) {
			snprintf(name, len, "vd%c", 'a' + i);
			return true;
		}
	}
	return false;
}

/* Reads the block device @name has in flight. */
static int reads_in_flight(const char *name)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/sys/block/%s/inflight", name);
	return read_file(path, buf, sizeof(buf)) ? -1 : atoi(buf);
}

struct direct_read {
	int fd;
	char *buf;
	ssize_t got;
};

static void *direct_read(void *arg)
{
	struct direct_read *d = arg;

	d->got = pread(d->fd, d->buf, PAGE_SZ, 0);
	return NULL;
}

/*
 * A2, O_DIRECT: page 1 of a reservation is the target of a read from a
 * disk QEMU throttles to 4 KB/s, so the read is still in flight when the
 * page is dropped and the address written again. The disk's data must land
 * in the old page, not in the new data (the disk holds 'D's).
 */
TEST_F_TIMEOUT(review, freebsd_reuses_no_page_under_direct_io, 120)
{
	const int regions = 4;
	int r, fd, reused = 0, overwritten = 0, raced = 0;
	char dev[16], path[32], *p, *prime;

	if (!HAS_BASELINES())
		SKIP(return, NO_BASELINES);

	/* A failure, not a skip: make test always gives the disk. */
	ASSERT_TRUE(slow_disk(dev, sizeof(dev)))
		TH_LOG("no throttled disk: run under vm-run --slow-disk");
	snprintf(path, sizeof(path), "/dev/%s", dev);
	fd = open(path, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	prime = aligned_alloc(PAGE_SZ, 2 * PAGE_SZ);
	ASSERT_NE(NULL, prime);
	p = map_freebsd(regions);
	ASSERT_NE(NULL, p);
	for (r = 0; r < regions; r++) {
		struct page1 pg = reserve_page1(p, r);
		struct direct_read d = { fd, pg.addr };
		pthread_t thread;
		int ms;

		ASSERT_TRUE(pg.reserved);
		/* Empties the throttle's bucket: the next read waits ~2 s. */
		ASSERT_EQ(2 * PAGE_SZ, pread(fd, prime, 2 * PAGE_SZ, PAGE_SZ));
		ASSERT_EQ(0, pthread_create(&thread, NULL, direct_read, &d));
		for (ms = 0; ms < 1000 && reads_in_flight(dev) < 1; ms++)
			sleep_ms(1);
		ASSERT_EQ(1, reads_in_flight(dev));
		ASSERT_EQ(0, drop_and_rewrite(&pg));
		reused += pfn_of(0, (unsigned long)pg.addr) == pg.pfn;
		/* Still in flight after the write: the test proved something. */
		raced += reads_in_flight(dev) == 1;
		ASSERT_EQ(0, pthread_join(thread, NULL));
		ASSERT_EQ(PAGE_SZ, d.got);
		overwritten += !all_bytes(d.buf, 'B', PAGE_SZ);
	}
	EXPECT_EQ(regions, raced);
	EXPECT_EQ(0, reused) TH_LOG("%d of %d pages under O_DIRECT mapped again", reused, regions);
	EXPECT_EQ(0, overwritten) TH_LOG("the read overwrote the new data in %d of %d regions",
					 overwritten, regions);
	munmap(p, regions * HPAGE_SZ);
	free(prime);
	close(fd);
}

/* The output of sh -c cmd run with fd as its descriptor 3, in out. */
static ssize_t run_with_fd3(int fd, const char *cmd, char *out, size_t len)
{
	int up[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(up))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(up[1], 1);
		dup2(fd, 3);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(up[1]);
	while ((n = read(up[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = '\0';
	close(up[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? got : -1;
}

/*
 * A3: a descriptor of /proc/<pid>/hawkeye belongs to the address space it
 * was opened on. The child opens its own, then execs: what it reads
 * through the old descriptor is nothing, not the new image's state.
 */
TEST_F(review, proc_hawkeye_fd_reads_nothing_after_exec)
{
	char out[4096];
	int up[2], status;
	ssize_t got = 0, n;
	pid_t pid;

	ASSERT_EQ(0, pipe(up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open("/proc/self/hawkeye", O_RDONLY);

		if (fd < 0)
			_exit(2);
		dup2(up[1], 1);
		dup2(fd, 3);
		execl("/bin/sh", "sh", "-c", "cat <&3", (char *)NULL);
		_exit(127);
	}
	close(up[1]);
	while ((n = read(up[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	out[got] = '\0';
	close(up[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, got) TH_LOG("read after exec: %s", out);

	/* Opened and read by the same image: the whole view. */
	got = run_with_fd3(0, "cat /proc/self/hawkeye", out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "policy ")) TH_LOG("%zd bytes: %s", got, out);
}

/*
 * A3: another user cannot open it, nor the owner once the process is not
 * dumpable (ptrace's read access, as smaps).
 */
TEST_F(review, proc_hawkeye_needs_ptrace_read_access)
{
	char path[64];
	int up[2], down[2], status;
	pid_t target, reader;
	char c;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	target = fork();
	ASSERT_LE(0, target);
	if (!target) {
		if (setgid(65534) || setuid(65534))
			_exit(1);
		prctl(PR_SET_DUMPABLE, 0);
		if (write(up[1], "r", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	snprintf(path, sizeof(path), "/proc/%d/hawkeye", target);
	reader = fork();
	ASSERT_LE(0, reader);
	if (!reader) {
		char other[64];
		int fd;

		snprintf(other, sizeof(other), "/proc/%d/hawkeye", getppid());
		if (setgid(65534) || setuid(65534))
			_exit(1);
		/* root's process: another user's. */
		fd = open(other, O_RDONLY);
		if (fd >= 0 || errno != EACCES)
			_exit(2);
		/* Our own user's, but not dumpable. */
		fd = open(path, O_RDONLY);
		if (fd >= 0 || errno != EACCES)
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(reader, waitpid(reader, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("2: read another user's, 3: a non-dumpable one's");
	ASSERT_EQ(1, write(down[1], "g", 1));
	waitpid(target, &status, 0);
}

/* THPs of len bytes that recovery will never split: byte 0 of each set. */
static char *map_dense_thp(size_t len)
{
	char *p = map_hugepage(len);

	if (p)
		for (size_t i = 0; i < len; i += PAGE_SZ)
			p[i] = 1;
	return p;
}

/* A child holding len bytes of dense THPs; reports once it has them. */
static pid_t start_holder(size_t len)
{
	int up[2];
	pid_t pid;
	char c;

	if (pipe(up))
		return -1;
	pid = fork();
	if (!pid) {
		if (!map_dense_thp(len) || write(up[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(up[1]);
	if (pid < 0 || read(up[0], &c, 1) != 1)
		pid = -1;
	close(up[0]);
	return pid;
}

/*
 * Recovery always active (watermarks 1/0 %), slow (5 THPs a second: 40 s
 * for 400 MB), splitting nothing dense.
 */
static int debloat_slow_round(void)
{
	if (sysfs_write(DEBLOAT "low_pct", "0") || sysfs_write(DEBLOAT "high_pct", "1") ||
	    sysfs_write(DEBLOAT "threshold", "512") || sysfs_write(DEBLOAT "rate", "5"))
		return -1;
	return sysfs_write(DEBLOAT "enabled", "1");
}

/* Wait until recovery has examined @n more THPs than @from; false at 30 s. */
static bool debloat_scanning(long from, long n)
{
	for (int i = 0; i < 300; i++) {
		if (hawkeye_stat("debloat_thp_scanned") >= from + n)
			return true;
		sleep_ms(100);
	}
	return false;
}

/*
 * B1: recovery at 5 THPs a second over 400 MB of this process (40 s) and
 * 300 MB of a child's (more THPs first: this process's first); the child,
 * killed early in the round, has its memory back within 2 s.
 */
TEST_F_TIMEOUT(review, debloat_keeps_no_killed_process_alive, 180)
{
	long before, after = 0, scanned0;
	size_t a_len = 400 * MB, b_len = 300 * MB;
	double t0, t = 0;
	int status;
	pid_t b;
	char *a;

	ASSERT_EQ(0, sysfs_write(THP_SYSFS "enabled", "madvise"));
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "defrag", "always"));
	/* The child first: THPs shared by fork() are not recovery's. */
	b = start_holder(b_len);
	ASSERT_LT(0, b);
	a = map_dense_thp(a_len);
	ASSERT_NE(NULL, a);
	EXPECT_GT(smaps_kb(a, "AnonHugePages"), (long)(a_len / 1024 / 2));
	scanned0 = hawkeye_stat("debloat_thp_scanned");
	ASSERT_EQ(0, debloat_slow_round());
	/* Mid-round: the round took its processes a while ago. */
	ASSERT_TRUE(debloat_scanning(scanned0, 20));

	before = meminfo_kb("MemFree");
	ASSERT_EQ(0, kill(b, SIGKILL));
	ASSERT_EQ(b, waitpid(b, &status, 0));
	for (t0 = now_s(); now_s() - t0 < 2.0; sleep_ms(50)) {
		after = meminfo_kb("MemFree");
		t = now_s() - t0;
		if (after - before > (long)(b_len / 1024) * 3 / 4)
			break;
	}
	EXPECT_GT(after - before, (long)(b_len / 1024) * 3 / 4)
		TH_LOG("only %ld kB freed %.1f s after the kill of a %zu MB process",
		       after - before, t, b_len / MB);
	TH_LOG("%ld kB back after %.2f s", after - before, t);
	sysfs_write(DEBLOAT "enabled", "0");
	munmap(a, a_len);
}

/* The last "elapsed" time the freezer logged for kernel threads, or -1. */
static double kthread_freeze_secs(void)
{
	const char *what = "Freezing remaining freezable tasks completed (elapsed ";
	int len = klogctl(10, NULL, 0);		/* SYSLOG_ACTION_SIZE_BUFFER */
	double secs = -1;
	char *buf, *p;

	if (len <= 0 || !(buf = malloc(len + 1)))
		return -1;
	len = klogctl(3, buf, len);		/* SYSLOG_ACTION_READ_ALL */
	buf[len > 0 ? len : 0] = '\0';
	for (p = strstr(buf, what); p; p = strstr(p + 1, what))
		secs = atof(p + strlen(what));
	free(buf);
	return secs;
}

/*
 * B2: the freezer (pm_test) while recovery is mid-round. Each freeze
 * attempt wakes the thread from its throttling sleep; it must freeze
 * there, not run the rest of its round first (1.4 s for 400 MB here, a
 * round's worth of work on a large machine, where the freezer gives up
 * after 20 s).
 */
TEST_F_TIMEOUT(review, freezer_freezes_recovery_mid_round, 180)
{
	size_t len = 400 * MB;
	long scanned0;
	double secs;
	char *a;
	int ret;

	if (access("/sys/power/pm_test", W_OK) || access("/sys/power/state", W_OK))
		SKIP(return, "no /sys/power/pm_test (CONFIG_PM_DEBUG, CONFIG_SUSPEND)");
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "enabled", "madvise"));
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "defrag", "always"));
	a = map_dense_thp(len);
	ASSERT_NE(NULL, a);
	scanned0 = hawkeye_stat("debloat_thp_scanned");
	ASSERT_EQ(0, debloat_slow_round());
	ASSERT_TRUE(debloat_scanning(scanned0, 20));

	ASSERT_EQ(0, sysfs_write("/sys/power/pm_test", "freezer"));
	/* Freezes every task, waits 5 s, thaws: EBUSY if one refused. */
	ret = sysfs_write("/sys/power/state", "freeze");
	sysfs_write("/sys/power/pm_test", "none");
	EXPECT_EQ(0, ret) TH_LOG("freezing failed: %s", strerror(ret));
	secs = kthread_freeze_secs();
	TH_LOG("kernel threads froze in %.3f s", secs);
	EXPECT_LE(0, secs);
	EXPECT_LT(secs, 0.5);
	sysfs_write(DEBLOAT "enabled", "0");
	munmap(a, len);
}

/* Lines of the trace buffer that hold @what. */
static long trace_count(const char *what)
{
	char line[512];
	long n = 0;
	FILE *f = fopen(TRACING "trace", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/* Zone-lock acquisitions of the allocator while page tables churn. */
static long pgtable_churn_zone_locked(void)
{
	long n;

	write_file(TRACING "trace", "");
	write_file(TRACING "events/kmem/mm_page_alloc_zone_locked/enable", "1");
	for (int i = 0; i < 2000; i++) {
		volatile char *p = mmap(NULL, 4 * MB, PROT_READ,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		/* Read faults: a page table each, the shared zero page. */
		(void)p[0];
		(void)p[2 * MB];
		munmap((void *)p, 4 * MB);
	}
	write_file(TRACING "events/kmem/mm_page_alloc_zone_locked/enable", "0");
	n = trace_count("mm_page_alloc_zone_locked");
	write_file(TRACING "trace", "");
	return n;
}

/*
 * C1: page tables are __GFP_ZERO kernel allocations; pre-zeroing (for
 * user memory) must not send them to the zone lock more often.
 */
TEST_F_TIMEOUT(review, prezero_leaves_kernel_zero_allocations_alone, 240)
{
	long off, on, zeroed = 0;

	if (access(TRACING "events/kmem/mm_page_alloc_zone_locked", F_OK))
		SKIP(return, "no kmem tracepoints");
	off = pgtable_churn_zone_locked();
	ASSERT_LE(0, off);
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	for (int i = 0; i < 100 && zeroed < 25600; i++, sleep_ms(100))
		zeroed = vmstat("nr_free_zeroed");
	ASSERT_GE(zeroed, 25600) TH_LOG("only %ld pages pre-zeroed", zeroed);
	on = pgtable_churn_zone_locked();
	TH_LOG("zone lock taken for page-table churn: %ld off, %ld on", off, on);
	EXPECT_LE(on, 2 * off + 20);
}

/*
 * C2: policy linux: 100 fork()s of a process khugepaged knows, and their
 * exits, allocate nothing for HawkEye (kmalloc's call sites).
 */
TEST_F(review, linux_policy_fork_exit_allocate_nothing)
{
	long n;
	char *p;

	if (access(TRACING "events/kmem/kmalloc", F_OK))
		SKIP(return, "no kmem tracepoints");
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "enabled", "madvise"));
	ASSERT_EQ(0, sysfs_write(PROMOTE "policy", "linux"));
	p = map_hugepage(4 * MB);
	ASSERT_NE(NULL, p);
	p[0] = 1;	/* khugepaged registers this process */
	write_file(TRACING "trace", "");
	ASSERT_EQ(0, write_file(TRACING "events/kmem/kmalloc/enable", "1"));
	for (int i = 0; i < 100; i++) {
		pid_t pid = fork();

		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	write_file(TRACING "events/kmem/kmalloc/enable", "0");
	n = trace_count("hawkeye");
	EXPECT_EQ(0, n) TH_LOG("%ld HawkEye allocations in 100 fork/exit", n);
	/* fork() allocates mostly from its own caches: a few kmalloc()s. */
	EXPECT_LT(20, trace_count("kmalloc")) TH_LOG("the tracepoint saw nothing");
	write_file(TRACING "trace", "");
	munmap(p, 4 * MB);
}

/*
 * C2: a process that khugepaged registered while the policy was linux is
 * sampled once the policy is hawkeye-g.
 */
TEST_F_TIMEOUT(review, switch_finds_processes_started_under_linux, 120)
{
	long samples = 0, regions = 0;
	int up[2], down[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(0, sysfs_write(PROMOTE "policy", "linux"));
	/* khugepaged must not collapse them first. */
	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "3600000"));
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "enabled", "never"));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char *p = map_aligned(16 * MB);

		for (size_t i = 0; p && i < 16 * MB; i += PAGE_SZ)
			p[i] = 1;
		if (!p || write(up[1], "f", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(1);
		/* THP is madvise now: this registers the process with khugepaged. */
		if (madvise(p, 16 * MB, MADV_HUGEPAGE) || write(up[1], "m", 1) != 1)
			_exit(1);
		for (;;)
			for (size_t i = 0; i < 16 * MB; i += PAGE_SZ)
				p[i]++;
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "enabled", "madvise"));
	ASSERT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ(0, sysfs_write(PROMOTE "sleep_ms", "3600000"));
	ASSERT_EQ(0, sysfs_write(PROMOTE "sample_window_ms", "100"));
	ASSERT_EQ(0, sysfs_write(PROMOTE "scan_period_ms", "500"));
	ASSERT_EQ(0, sysfs_write(PROMOTE "policy", "hawkeye-g"));
	for (int i = 0; i < 200 && (samples < 1 || regions < 8); i++, sleep_ms(100)) {
		samples = proc_hawkeye(pid, "samples");
		regions = proc_hawkeye(pid, "regions");
	}
	EXPECT_GE(samples, 1);
	/* khugepaged may have collapsed some as it registered the process. */
	EXPECT_GE(regions, 1);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/*
 * len bytes of base pages in memory khugepaged may collapse (it is told to
 * wait an hour), sampled by hawkeye-g every 0.5 s, never promoted.
 */
static char *map_sampled(size_t len)
{
	char *p;

	if (sysfs_write(PROMOTE "policy", "linux") ||
	    sysfs_write(THP_SYSFS "enabled", "never"))
		return NULL;
	p = map_aligned(len);
	if (!p)
		return NULL;
	for (size_t i = 0; i < len; i += PAGE_SZ)
		p[i] = 1;
	if (sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "3600000") ||
	    sysfs_write(THP_SYSFS "enabled", "madvise") ||
	    madvise(p, len, MADV_HUGEPAGE) ||
	    sysfs_write(PROMOTE "sleep_ms", "3600000") ||
	    sysfs_write(PROMOTE "sample_window_ms", "100") ||
	    sysfs_write(PROMOTE "scan_period_ms", "500") ||
	    sysfs_write(PROMOTE "policy", "hawkeye-g")) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The mmap_lock holds (read) in the trace buffer of the one task traced,
 * acquire_returned to released, in seconds: how many, the longest and the
 * 99th percentile.
 */
static long read_holds(double *longest, double *p99)
{
	char line[512], ev[64];
	double ts, since = -1, *holds = NULL;
	long n = 0, max = 0;
	FILE *f = fopen(TRACING "trace", "r");

	*longest = *p99 = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, "write=false"))
			continue;
		if (sscanf(line, " %*s [%*d] %*s %lf: %63s", &ts, ev) != 2)
			continue;
		if (!strcmp(ev, "mmap_lock_acquire_returned:")) {
			since = ts;
		} else if (!strcmp(ev, "mmap_lock_released:") && since >= 0) {
			if (n == max) {
				max = max ? 2 * max : 1024;
				holds = realloc(holds, max * sizeof(*holds));
				if (!holds)
					break;
			}
			holds[n++] = ts - since;
			since = -1;
		}
	}
	fclose(f);
	if (n > 0 && holds) {
		qsort(holds, n, sizeof(*holds), cmp_double);
		*longest = holds[n - 1];
		*p99 = holds[n * 99 / 100];
	}
	free(holds);
	return n;
}

/*
 * C3: 1 GB of base pages in eligible memory, sampled by hawkeye-g every
 * 0.5 s (nothing promoted): hawkeye_promoted takes this process's
 * mmap_lock many times per pass, not once, and holds it under 10 ms (it
 * held it for a whole pass: 40 ms here, a second for 8 GB on hardware),
 * as the mmap_lock tracepoints show. The 99th percentile: under TCG a
 * vCPU is now and then preempted by the host for milliseconds, whatever
 * it holds.
 */
TEST_F_TIMEOUT(review, sample_pass_holds_mmap_lock_briefly, 600)
{
	/* HAWKEYE_C3_MB=8192 in a 10 GB guest: the review's 8 GB. */
	const char *mb = getenv("HAWKEYE_C3_MB");
	size_t len = (mb ? atol(mb) : 1024) * MB;
	char filter[64];
	double longest, p99;
	long samples, holds;
	int pid;
	char *p;

	if (access(TRACING "events/mmap_lock/mmap_lock_released", F_OK))
		SKIP(return, "no mmap_lock tracepoints");
	p = map_sampled(len);
	ASSERT_NE(NULL, p);
	pid = kthread_pid("hawkeye_promoted");
	ASSERT_LT(0, pid);
	snprintf(filter, sizeof(filter), "common_pid == %d", pid);
	write_file(TRACING "trace", "");
	ASSERT_EQ(0, write_file(TRACING "events/mmap_lock/filter", filter));
	ASSERT_EQ(0, write_file(TRACING "events/mmap_lock/enable", "1"));
	sleep_ms(8000);
	write_file(TRACING "events/mmap_lock/enable", "0");
	write_file(TRACING "events/mmap_lock/filter", "0");
	holds = read_holds(&longest, &p99);
	write_file(TRACING "trace", "");
	samples = proc_hawkeye(getpid(), "samples");
	TH_LOG("hawkeye_promoted: %ld mmap_lock holds in %ld sample windows over %zu MB: 99%% under %.2f ms, the longest %.2f ms",
	       holds, samples, len / MB, p99 * 1e3, longest * 1e3);
	EXPECT_GE(samples, 3);
	/* Two passes per window, len / 2 MB regions each, 8 per hold at most. */
	EXPECT_GE(holds, samples * 2 * (long)(len / HPAGE_SZ) / 8 / 2);
	EXPECT_LT(p99, 0.010);
	sysfs_write(PROMOTE "policy", "linux");
	munmap(p, len);
}

#define PAGE_IDLE "/sys/kernel/mm/page_idle/bitmap"

/* Idle page tracking: is @pfn idle (-1: unreadable)? */
static int pfn_idle(uint64_t pfn)
{
	uint64_t word;
	int fd = open(PAGE_IDLE, O_RDONLY), ret = -1;

	if (fd >= 0 && pread(fd, &word, 8, pfn / 64 * 8) == 8)
		ret = (word >> (pfn % 64)) & 1;
	if (fd >= 0)
		close(fd);
	return ret;
}

static int set_pfn_idle(uint64_t pfn)
{
	uint64_t word = 1ULL << (pfn % 64);
	int fd = open(PAGE_IDLE, O_WRONLY), ret = -1;

	if (fd >= 0 && pwrite(fd, &word, 8, pfn / 64 * 8) == 8)
		ret = 0;
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * (d): a page marked idle through /sys/kernel/mm/page_idle and then
 * accessed is not idle, even after hawkeye-g's sampling tested and cleared
 * its accessed bit before idle page tracking looked.
 */
TEST_F_TIMEOUT(review, page_idle_sees_accesses_hawkeye_sampled, 120)
{
	size_t len = 8 * MB;
	uint64_t pfn[64];
	char *page[64];
	int nr = 0, idle_after = 0;
	long samples = 0, start;
	char *p;

	if (access(PAGE_IDLE, W_OK))
		SKIP(return, "no idle page tracking");
	p = map_sampled(len);
	ASSERT_NE(NULL, p);
	for (int i = 0; i < 100 && samples < 1; i++, sleep_ms(100))
		samples = proc_hawkeye(getpid(), "samples");
	ASSERT_GE(samples, 1);

	/*
	 * Mark pages idle; keep those that read back idle (idle tracking
	 * sees only pages on the LRU, not those in a per-cpu batch).
	 */
	for (int i = 0; i < 64; i++) {
		char *q = p + i * 32 * PAGE_SZ;
		uint64_t f = pfn_of(0, (unsigned long)q);

		if (f && !set_pfn_idle(f) && pfn_idle(f) == 1) {
			pfn[nr] = f;
			page[nr++] = q;
		}
	}
	ASSERT_GE(nr, 8) TH_LOG("only %d pages could be marked idle", nr);
	for (int i = 0; i < nr; i++)
		*page[i] = 2;
	/* Two more sample windows: HawkEye has tested and cleared the bits. */
	start = proc_hawkeye(getpid(), "samples");
	for (int i = 0; i < 100 && samples < start + 2; i++, sleep_ms(100))
		samples = proc_hawkeye(getpid(), "samples");
	ASSERT_GE(samples, start + 2);
	for (int i = 0; i < nr; i++)
		idle_after += pfn_idle(pfn[i]) == 1;
	EXPECT_EQ(0, idle_after) TH_LOG("%d of %d accessed pages read as idle", idle_after, nr);
	sysfs_write(PROMOTE "policy", "linux");
	munmap(p, len);
}

/*
 * HawkEye's counters are read-only files of stats/. Those memory.stat
 * reports per cgroup are vm events too, with the same count; the others
 * are not in /proc/vmstat.
 */
TEST_F(review, counters_are_stats_files_memcg_ones_vm_events_too)
{
	static const char *const vm_events[] = {
		"debloat_thp_split", "debloat_zero_pages_freed", "debloat_deferred_split",
		"debloat_round", "promote_success", "memcg_huge_capped", "memcg_collapse_capped",
	};
	static const char *const own[] = {
		"prezero_pages", "prezero_wasted", "fault_prezeroed_2m", "fault_sync_zero_4k",
		"debloat_thp_scanned", "debloat_mthp_split", "promote_sampled", "promote_failed",
	};
	char name[64];

	for (size_t i = 0; i < sizeof(vm_events) / sizeof(vm_events[0]); i++) {
		long before, stat, after;

		snprintf(name, sizeof(name), "hawkeye_%s", vm_events[i]);
		before = vmstat(name);
		stat = hawkeye_stat(vm_events[i]);
		after = vmstat(name);
		ASSERT_LE(0, before) TH_LOG("%s not in /proc/vmstat", name);
		EXPECT_LE(before, stat) TH_LOG("%s: %ld in stats/, %ld in /proc/vmstat", name, stat, before);
		EXPECT_LE(stat, after) TH_LOG("%s: %ld in stats/, %ld in /proc/vmstat", name, stat, after);
	}
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		char path[128];

		snprintf(name, sizeof(name), "hawkeye_%s", own[i]);
		snprintf(path, sizeof(path), "/sys/kernel/mm/hawkeye/stats/%s", own[i]);
		EXPECT_LE(0, hawkeye_stat(own[i])) TH_LOG("no stats/%s", own[i]);
		EXPECT_EQ(-1, vmstat(name)) TH_LOG("%s is in /proc/vmstat", name);
		EXPECT_NE(0, write_file(path, "0")) TH_LOG("stats/%s took a write", own[i]);
	}
}

/*
 * (d): at rate 1 the zeroing thread owes 512 s for its first 2 MB block;
 * rate 0 (no limit) must take effect at once, not after that sleep.
 */
TEST_F_TIMEOUT(review, prezero_rate_change_wakes_the_thread, 60)
{
	long start, now = 0;

	dirty_and_free_on(-1, 256 * MB);
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "1"));
	ASSERT_EQ(0, sysfs_write(PREZERO "paced", "0"));	/* idle CPUs would lift rate 1 */
	start = hawkeye_stat("prezero_pages");
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	for (int i = 0; i < 50 && now < start + 512; i++, sleep_ms(100))
		now = hawkeye_stat("prezero_pages");
	ASSERT_GE(now, start + 512);
	sleep_ms(500);
	start = hawkeye_stat("prezero_pages");
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "0"));
	for (int i = 0; i < 30 && now < start + 4096; i++, sleep_ms(100))
		now = hawkeye_stat("prezero_pages");
	EXPECT_GE(now, start + 4096) TH_LOG("%ld pages zeroed in 3 s at rate 0",
					     now - start);
}

/*
 * C5: a pre-zeroed 4 KB fault refills its CPU's per-cpu list with a batch
 * of pre-zeroed pages; page cache allocations on that CPU, which need no
 * zeroed memory, must leave them to the faults while unzeroed memory is
 * free (the pool is capped at 128 MB). In a one-node guest they did
 * (prezero_wasted stayed 0: they take the heads of the lists,
 * where unzeroed pages are); in the two-node guest, with larger per-cpu
 * lists, they ate the batches once its unzeroed head was gone (2247 of
 * 4096), until such an allocation learnt to refill the list instead.
 */
TEST_F_TIMEOUT(review, page_cache_leaves_prezeroed_pages_alone, 180)
{
	const long pages = 4096;
	long wasted, pre, zeroed = 0;
	char buf[PAGE_SZ];
	cpu_set_t cpus;
	char *anon;
	int fd;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	/* Our faults take our node's pool (target_mb is each node's). */
	dirty_and_free_on(0, 256 * MB);
	ASSERT_EQ(0, sysfs_write(PREZERO "target_mb", "128"));
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	for (int i = 0; i < 300 && zeroed < 100 * MB / PAGE_SZ; i++, sleep_ms(100))
		zeroed = node_zeroed(0);
	ASSERT_GE(zeroed, 100 * MB / PAGE_SZ);

	fd = memfd_create("cache", 0);
	ASSERT_LE(0, fd);
	anon = mmap(NULL, pages * PAGE_SZ, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, anon);
	ASSERT_EQ(0, madvise(anon, pages * PAGE_SZ, MADV_NOHUGEPAGE));
	memset(buf, 1, sizeof(buf));
	wasted = hawkeye_stat("prezero_wasted");
	ASSERT_LE(0, wasted) TH_LOG("no prezero_wasted in /proc/vmstat");
	pre = hawkeye_stat("fault_prezeroed_4k");
	/* One fault, then more page cache than the fault's refill brought. */
	for (long i = 0; i < pages; i++) {
		if (i % 8 == 0)
			anon[i / 8 * PAGE_SZ] = 1;
		ASSERT_EQ(PAGE_SZ, pwrite(fd, buf, PAGE_SZ, i * PAGE_SZ));
	}
	wasted = hawkeye_stat("prezero_wasted") - wasted;
	pre = hawkeye_stat("fault_prezeroed_4k") - pre;
	TH_LOG("%ld of %ld faults pre-zeroed; %ld of %ld page cache pages were pre-zeroed ones",
	       pre, pages / 8, wasted, pages);
	EXPECT_GT(pre, pages / 8 / 2);
	EXPECT_LT(wasted, pages / 10);
	close(fd);
	munmap(anon, pages * PAGE_SZ);
}

/* Samples of process @pid within @secs, or the last count seen. */
static long wait_samples(pid_t pid, int secs)
{
	long samples = 0;

	for (int i = 0; i < secs * 10 && samples < 1; i++, sleep_ms(100))
		samples = proc_hawkeye(pid, "samples");
	return samples;
}

TEST_F_TIMEOUT(review, registration_failed_at_fork_is_retried, 120)
{
	char *p = map_sampled(4 * MB);
	long failed;
	int status;
	pid_t pid;

	ASSERT_NE(NULL, p);
	if (access(FAILSLAB "require-start", W_OK))
		SKIP(return, "no failslab stack filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)");
	/*
	 * This process has a huge page VMA: fork registers its child with
	 * khugepaged and HawkEye (__khugepaged_enter()), and fails to.
	 */
	ASSERT_EQ(0, failslab_aim("__khugepaged_enter"));
	failed = hawkeye_stat("promote_register_failed");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		for (;;)
			for (size_t i = 0; i < 4 * MB; i += PAGE_SZ)
				p[i]++;
	EXPECT_GT(hawkeye_stat("promote_register_failed"), failed);
	/* The thread's own registration is not aimed at: it takes the child. */
	EXPECT_GE(wait_samples(pid, 10), 1);
	failslab_aim(NULL);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	munmap(p, 4 * MB);
}

TEST_F_TIMEOUT(review, switch_to_linux_forgets_all_without_memory, 120)
{
	char *p = map_sampled(4 * MB);

	ASSERT_NE(NULL, p);
	if (access(FAILSLAB "require-start", W_OK))
		SKIP(return, "no failslab stack filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)");
	ASSERT_GE(wait_samples(getpid(), 10), 1);
	ASSERT_EQ(0, failslab_aim("hawkeye_promote_set_policy"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "policy", "linux"));
	failslab_aim(NULL);
	/* Forgotten: an unknown process shows zeros. */
	EXPECT_EQ(0, proc_hawkeye(getpid(), "samples"));
	EXPECT_EQ(0, proc_hawkeye(getpid(), "regions"));
	/* And found again after the next switch. */
	ASSERT_EQ(0, sysfs_write(PROMOTE "policy", "hawkeye-g"));
	EXPECT_GE(wait_samples(getpid(), 10), 1);
	munmap(p, 4 * MB);
}

TEST_HARNESS_MAIN
