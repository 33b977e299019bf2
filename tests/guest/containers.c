// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye bloat recovery inside memory cgroups (cgroup v2), observed from
 * user space: a process whose huge pages bloat it past high_pct of its
 * cgroup's limit, while the machine has plenty free, is recovered before
 * it reaches memory.max (no reclaim, nothing swapped) and reads back every
 * byte it wrote; reclaim's THP shrinker splits at recovery's bar (none
 * with recovery off for the cgroup); charges
 * of a whole huge page (hugetlb, MADV_COLLAPSE) reclaim as upstream's;
 * page cache does not count as use; a partially mapped THP split by
 * recovery frees its holes; only the pressured cgroup's THPs are split,
 * a neighbour's are not; khugepaged does not collapse what would take a
 * cgroup past low_pct of its limit; moving the process between cgroups
 * and removing cgroups meanwhile loses nothing; memory pressure (PSI)
 * starts recovery below the watermark, and khugepaged does not collapse
 * back what it split (no split, collapse, split); partially unmapped THPs
 * are freed before reclaim would; the per-cgroup counters of memory.stat
 * count it; recovery off ends a cgroup's episode; promotion shares huge
 * pages between cgroups by memory.thp.weight, over the hierarchy, and
 * stops a cgroup at memory.thp.max, where THP faults and collapses stop
 * before allocating; the memory.thp.* files refuse bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

#define CGROOT "/sys/fs/cgroup/"
#define CG_A CGROOT "hawkeye-a/"
#define CG_B CGROOT "hawkeye-b/"
#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define SHM_DIR "/dev/hawkeye-shm"
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static const char *const knobs[] = {
	DEBLOAT "enabled", DEBLOAT "high_pct", DEBLOAT "low_pct",
	DEBLOAT "threshold", DEBLOAT "psi_pct", THP_SYSFS "enabled", THP_SYSFS "defrag",
	KHUGEPAGED "scan_sleep_millisecs", KHUGEPAGED "alloc_sleep_millisecs",
	KHUGEPAGED "max_ptes_none", PROMOTE "policy", PROMOTE "batch",
	PROMOTE "sleep_ms", PROMOTE "sample_window_ms", PROMOTE "scan_period_ms",
	DEBLOAT "mthp", THP_SYSFS "hugepages-64kB/enabled", NR_HUGEPAGES,
	PREZERO "enabled",
};

/* What the fixture sets, in this order: the machine's own watermarks stay. */
static const struct knob_set setup_knobs[] = {
	{ THP_SYSFS "enabled", "madvise" }, { THP_SYSFS "defrag", "madvise" },
	{ DEBLOAT "threshold", "256" }, { DEBLOAT "enabled", "1" },
	{ KHUGEPAGED "max_ptes_none", "511" },
	/* khugepaged's defaults, whatever a test before this one set. */
	{ KHUGEPAGED "scan_sleep_millisecs", "10000" },
	{ KHUGEPAGED "alloc_sleep_millisecs", "60000" },
};

/* A number in a cgroup file: a flat value or a "key value" line; -1: none. */
static long cg_long(const char *cg, const char *file, const char *key)
{
	char path[128], buf[64];

	snprintf(path, sizeof(path), "%s%s", cg, file);
	if (key)
		return keyed_value(path, key, ' ');
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

static int cg_write(const char *cg, const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s%s", cg, file);
	return sysfs_write(path, val);
}

/* A fresh cgroup: removed with whatever it held, made again. */
static int cg_make(const char *cg)
{
	rmdir(cg);
	return mkdir(cg, 0755);
}

/*
 * THPs that recovery split in @cg and its descendants: partially mapped
 * ones from the deferred split queues, and those its walk found bloated.
 */
static long cg_split(const char *cg)
{
	return cg_long(cg, "memory.stat", "hawkeye_debloat_thp_split") +
	       cg_long(cg, "memory.stat", "hawkeye_debloat_deferred_split");
}

/* Fork a child that moves itself into @cg and runs @fn(arg); its pid. */
static pid_t cg_run(const char *cg, int (*fn)(long), long arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		char me[16];

		snprintf(me, sizeof(me), "%d", getpid());
		if (cg_write(cg, "cgroup.procs", me))
			_exit(3);
		_exit(fn(arg));
	}
	return pid;
}

/* cgroup2's options, put back in the teardown once a test remounted it. */
static char cg2_remount_opts[256];
static bool cg2_remounted;

/* A child's pipes: it says 'r' on ready_fd and waits for a byte on go_fd. */
static int ready_fd = -1, go_fd = -1;

/* The pipes of the children a test starts (@ready, @go): 0 if made. */
static int child_pipes_open(int ready[2], int go[2])
{
	if (pipe(ready))
		return -1;
	if (pipe(go)) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	ready_fd = ready[1];
	go_fd = go[0];
	return 0;
}

static void child_pipes_close(int ready[2], int go[2])
{
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(go[i]);
	}
}

/* The byte a test writes at offset @i of its mappings. */
static unsigned char byte_at(size_t i)
{
	return pattern(i / PAGE_SZ, 7);
}

/* One byte written in each 2 MB of @s (@slen), every 64th byte of @d. */
static void write_sparse_dense(unsigned char *s, size_t slen, unsigned char *d,
			       size_t dlen)
{
	size_t i;

	for (i = 0; i < slen; i += HPAGE_SZ)
		s[i + 100] = byte_at(i);
	for (i = 0; i < dlen; i += 64)
		d[i] = byte_at(i);
}

/* 0 if all write_sparse_dense() wrote reads back, and the rest is 0; 2 if not. */
static int check_sparse_dense(const unsigned char *s, size_t slen,
			      const unsigned char *d, size_t dlen)
{
	size_t i;

	for (i = 0; i < slen; i++)
		if (s[i] != (i % HPAGE_SZ == 100 ? byte_at(i - 100) : 0))
			return 2;
	for (i = 0; i < dlen; i++)
		if (d[i] != (i % 64 ? 0 : byte_at(i)))
			return 2;
	return 0;
}

/*
 * The workload: @sparse_mb of huge-page memory with one byte written in
 * each 2 MB (a THP each at fault), then 120 MB written densely; then every
 * byte is read back. Exit 0 if all is as written, 2 if not.
 */
#define DENSE_MB 120
static int bloat_then_grow(long sparse_mb)
{
	size_t slen = sparse_mb * MB, dlen = DENSE_MB * MB;
	unsigned char *s, *d;

	s = (unsigned char *)map_aligned(slen);
	d = (unsigned char *)map_aligned(dlen);
	if (!s || !d)
		return 4;
	madvise(s, slen, MADV_HUGEPAGE);
	madvise(d, dlen, MADV_HUGEPAGE);
	write_sparse_dense(s, slen, d, dlen);
	return check_sparse_dense(s, slen, d, dlen);
}

/* A neighbour: @mb of THPs, one byte written in each, then it waits. */
static int sparse_and_wait(long mb)
{
	size_t len = mb * MB;
	char *p = map_aligned(len);

	if (!p)
		return 4;
	madvise(p, len, MADV_HUGEPAGE);
	for (size_t i = 0; i < len; i += HPAGE_SZ)
		p[i] = 1;
	pause();
	return 0;
}

/* Wait for @pid: its exit status, or 128 + the signal that killed it. */
static int wait_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

FIXTURE(containers) {
	int unused;
};

FIXTURE_SETUP(containers)
{
	char buf[256] = "";

	if (access(CGROOT "cgroup.controllers", F_OK))
		mount("none", CGROOT, "cgroup2", 0, NULL);
	if (read_file(CGROOT "cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		SKIP(return, "no cgroup v2 memory controller");
	ASSERT_EQ(0, write_file(CGROOT "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, cg_make(CG_A));
	ASSERT_EQ(0, cg_make(CG_B));
	if (access(CG_A "memory.thp.shrink_underused", F_OK))
		SKIP(return, "no memory.thp.shrink_underused in this kernel");
	ASSERT_KNOBS_PUSH(knobs, setup_knobs);
}

/*
 * Kill what a failed test left running in @cg and its descendants (its
 * children wait on their pipes), so that the next test's cgroups can be
 * made: until cgroup.events says it is empty, for at most 10 s.
 */
static void cg_kill(const char *cg)
{
	char path[128], buf[256];

	snprintf(path, sizeof(path), "%scgroup.kill", cg);
	if (write_file(path, "1"))
		return;
	snprintf(path, sizeof(path), "%scgroup.events", cg);
	for (int i = 0; i < 200; i++) {
		if (read_file(path, buf, sizeof(buf)) || strstr(buf, "populated 0"))
			return;
		sleep_ms(50);
	}
}

FIXTURE_TEARDOWN(containers)
{
	if (cg2_remounted)
		mount("none", CGROOT, NULL, MS_REMOUNT, cg2_remount_opts);
	knobs_pop();
	/* What a failed test left mounted: it is charged to A. */
	umount2(SHM_DIR, MNT_DETACH);
	cg_kill(CG_A);
	cg_kill(CG_B);
	rmdir(CG_A "x");
	rmdir(CG_A "y");
	rmdir(CG_A);
	rmdir(CG_B);
}

/*
 * @sparse_mb of huge-page memory with one byte written in each 2 MB (a
 * THP each at fault); says 'r' on ready_fd and waits for a byte on go_fd;
 * then 120 MB written densely, and every byte read back. Exit 0 if all is
 * as written, 2 if not.
 */
static int bloat_wait_grow(long sparse_mb)
{
	size_t slen = sparse_mb * MB, dlen = DENSE_MB * MB, i;
	unsigned char *s, *d;
	char c;

	s = (unsigned char *)map_aligned(slen);
	d = (unsigned char *)map_aligned(dlen);
	if (!s || !d)
		return 4;
	madvise(s, slen, MADV_HUGEPAGE);
	madvise(d, dlen, MADV_HUGEPAGE);
	write_sparse_dense(s, slen, d, 0);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < dlen; i += 64)
		d[i] = byte_at(i);
	return check_sparse_dense(s, slen, d, dlen);
}

/*
 * The workload of the reclaim case below, growing in two steps: 140 MB of
 * sparse THPs take the cgroup past high_pct of its memory.max (160 MB),
 * and recovery's episode in the cgroup splits them (low_pct 10 %, so all
 * of them) before the workload writes its 120 MB: it never meets the
 * limit, so reclaim never runs and nothing is swapped. All data back,
 * the zero-filled subpages freed, counted in memory.stat. The sparse THPs
 * of a neighbour cgroup with no limit stay.
 */
TEST_F_TIMEOUT(containers, recovery_saves_a_bloated_container, 300)
{
	long split0 = hawkeye_stat("debloat_thp_split") +
		      hawkeye_stat("debloat_deferred_split");
	long failed0 = vmstat("thp_split_page_failed");
	int ready[2], go[2], st;
	pid_t a, b;
	double end;
	char c;

	ASSERT_EQ(0, sysfs_write(DEBLOAT "low_pct", "10"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "160M"));
	b = cg_run(CG_B, sparse_and_wait, 40);
	ASSERT_LT(0, b);
	for (int t = 0; t < 100 && rollup_kb(b, "AnonHugePages") < 40960; t++)
		sleep_ms(50);
	ASSERT_EQ(40960, rollup_kb(b, "AnonHugePages"));

	ASSERT_EQ(0, child_pipes_open(ready, go));
	a = cg_run(CG_A, bloat_wait_grow, 140);
	ASSERT_LT(0, a);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* The episode ends below low_pct: 16 MB. */
	for (end = now_s() + 120; now_s() < end; sleep_ms(100))
		if (cg_long(CG_A, "memory.current", NULL) < 16 * MB)
			break;
	ASSERT_GT(16 * MB, cg_long(CG_A, "memory.current", NULL));
	ASSERT_EQ(1, write(go[1], "g", 1));
	st = wait_status(a);
	TH_LOG("status %d, peak %ld kB of 163840, THPs split %ld (splits failed %ld), "
	       "zero pages freed %ld, pgscan %ld, oom_kill %ld, swap %ld kB", st,
	       cg_long(CG_A, "memory.peak", NULL) / 1024,
	       cg_split(CG_A),
	       vmstat("thp_split_page_failed") - failed0,
	       cg_long(CG_A, "memory.stat", "hawkeye_debloat_zero_pages_freed"),
	       cg_long(CG_A, "memory.stat", "pgscan"),
	       cg_long(CG_A, "memory.events", "oom_kill"),
	       cg_long(CG_A, "memory.swap.peak", NULL) / 1024);
	EXPECT_EQ(0, st);
	EXPECT_EQ(0, cg_long(CG_A, "memory.events", "oom_kill"));
	/* Below 16 MB of 140 in 2 MB THPs: at least 62 of the 70 split. */
	EXPECT_LE(62, cg_split(CG_A));
	/* Recovered before the limit: never at memory.max, nothing swapped. */
	EXPECT_EQ(0, cg_long(CG_A, "memory.events", "max"));
	EXPECT_EQ(0, cg_long(CG_A, "memory.swap.peak", NULL));

	/* The neighbour: no limit, nothing split, though as sparse. */
	EXPECT_EQ(40960, rollup_kb(b, "AnonHugePages"));
	EXPECT_EQ(0, cg_split(CG_B));
	EXPECT_LE(split0 + cg_split(CG_A), hawkeye_stat("debloat_thp_split") +
		  hawkeye_stat("debloat_deferred_split"));
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	child_pipes_close(ready, go);
}

/*
 * khugepaged in a cgroup near its limit: a range whose collapse fits below
 * low_pct of the limit (where recovery stops) is collapsed, one that would
 * cross it is not. The process sets its cgroup's memory.max so that 200
 * pages are left below low_pct, then asks for huge pages on a range with 500 of 512 pages in
 * use and one with 100. Exit 0 if only the first was collapsed; +10 if it
 * was not, +20 if the second was.
 */
static int near_the_limit(long low_pct)
{
	size_t dense = 60 * MB, i;
	char *d, *r, max[32];
	long usage;

	d = map_aligned(dense);
	r = map_aligned(2 * HPAGE_SZ);
	if (!d || !r)
		return 4;
	madvise(d, dense, MADV_NOHUGEPAGE);
	madvise(r, 2 * HPAGE_SZ, MADV_NOHUGEPAGE);
	for (i = 0; i < dense; i += PAGE_SZ)
		d[i] = 1;
	for (i = 0; i < 500; i++)
		r[i * PAGE_SZ] = 1;
	for (i = 0; i < 100; i++)
		r[HPAGE_SZ + i * PAGE_SZ] = 1;
	usage = cg_long(CG_A, "memory.current", NULL);
	snprintf(max, sizeof(max), "%ld",
		 (usage + 200 * (long)PAGE_SZ) * 100 / low_pct / PAGE_SZ * PAGE_SZ);
	if (usage <= 0 || cg_write(CG_A, "memory.max", max))
		return 5;
	madvise(r, 2 * HPAGE_SZ, MADV_HUGEPAGE);
	for (int t = 0; t < 400 && !is_thp(0, (unsigned long)r); t++)
		sleep_ms(50);
	sleep_ms(3000);		/* khugepaged passes the second range again */
	return (is_thp(0, (unsigned long)r) ? 0 : 10) +
	       (is_thp(0, (unsigned long)r + HPAGE_SZ) ? 20 : 0);
}

TEST_F_TIMEOUT(containers, no_collapse_past_the_start, 120)
{
	long alloc0 = vmstat("thp_collapse_alloc");
	long none0 = vmstat("thp_scan_exceed_none_pte");
	pid_t a;
	int st;

	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "100"));
	a = cg_run(CG_A, near_the_limit, sysfs_read_long(DEBLOAT "low_pct"));
	ASSERT_LT(0, a);
	st = wait_status(a);
	TH_LOG("status %d (10: the 500-page range stayed small, 20: the 100-page "
	       "one was collapsed), memory.max %ld kB; collapses +%ld, refused for "
	       "empty PTEs +%ld", st, cg_long(CG_A, "memory.max", NULL) / 1024,
	       vmstat("thp_collapse_alloc") - alloc0,
	       vmstat("thp_scan_exceed_none_pte") - none0);
	EXPECT_EQ(0, st);
}

/*
 * Recovery and promotion racing cgroup changes: the limit is on a parent,
 * the workload runs three times in a child cgroup while it is moved
 * between two children every few milliseconds and a third child is made
 * and removed. Nothing is lost (it reads back every byte), nobody is
 * OOM-killed; KASAN and kmemleak (debug kernel) watch the rest.
 */
static int bloat_three_times(long sparse_mb)
{
	for (int i = 0; i < 3; i++) {
		int ret = bloat_then_grow(sparse_mb);

		if (ret)
			return ret;
	}
	return 0;
}

TEST_F_TIMEOUT(containers, races_with_migration_and_removal, 300)
{
	static const char *const kids[] = { CG_A "x/", CG_A "y/" };
	long moves = 0, made = 0;
	char pid[16];
	pid_t a;
	int st;

	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "160M"));
	ASSERT_EQ(0, cg_write(CG_A, "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, mkdir(kids[0], 0755));
	ASSERT_EQ(0, mkdir(kids[1], 0755));
	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "10"));
	a = cg_run(kids[0], bloat_three_times, 140);
	ASSERT_LT(0, a);
	snprintf(pid, sizeof(pid), "%d", a);
	while (waitpid(a, &st, WNOHANG) == 0) {
		if (!cg_write(kids[++moves % 2], "cgroup.procs", pid) &&
		    !mkdir(CG_A "z", 0755))
			made += !rmdir(CG_A "z");
		sleep_ms(5);
	}
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	TH_LOG("status %d after %ld moves, %ld cgroups made and removed; THPs split %ld, "
	       "oom_kill %ld", st, moves, made,
	       cg_split(CG_A),
	       cg_long(CG_A, "memory.events", "oom_kill"));
	EXPECT_EQ(0, st);
	EXPECT_LT(0, made);
	EXPECT_EQ(0, cg_long(CG_A, "memory.events", "oom_kill"));
	EXPECT_LT(0, cg_split(CG_A));
	rmdir(kids[0]);
	rmdir(kids[1]);
}

/* PSI's "some avg10" of @cg's memory, in percent; -1: none. */
static double cg_psi10(const char *cg)
{
	char path[128], buf[256];
	double avg;

	snprintf(path, sizeof(path), "%smemory.pressure", cg);
	if (read_file(path, buf, sizeof(buf)) ||
	    sscanf(buf, "some avg10=%lf", &avg) != 1)
		return -1;
	return avg;
}


/*
 * @sparse_mb of THPs with one byte written in each 2 MB, then 52 MB of
 * base pages written densely; says 'r' on ready_fd, waits for a byte on
 * go_fd, then reads every byte back: exit 0 if all is as written, 2 if not.
 */
#define STEADY_DENSE_MB 52
static int bloated_and_steady(long sparse_mb)
{
	size_t slen = sparse_mb * MB, dlen = STEADY_DENSE_MB * MB;
	unsigned char *s = (unsigned char *)map_aligned(slen);
	unsigned char *d = (unsigned char *)map_aligned(dlen);
	char c;

	if (!s || !d)
		return 4;
	madvise(s, slen, MADV_HUGEPAGE);
	madvise(d, dlen, MADV_NOHUGEPAGE);
	write_sparse_dense(s, slen, d, dlen);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	return check_sparse_dense(s, slen, d, dlen);
}

/* Pressure: @mb of base pages written over and over (in a small cgroup). */
static int thrash(long mb)
{
	size_t len = mb * MB;
	char *p = map_aligned(len);

	if (!p)
		return 4;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (unsigned char n = 0;; n++)
		for (size_t i = 0; i < len; i += PAGE_SZ)
			p[i] = n;
	return 0;
}

/*
 * Memory pressure as the start. A's memory.max is 160 MB; in its child x
 * a process holds 64 MB of sparse THPs and 52 MB of base pages: about 73 %
 * of the limit, between low_pct (70) and high_pct (85), so no watermark
 * starts recovery, and it stays off. Then a neighbour in the child y,
 * memory.max 8 MB, thrashes through swap: A's PSI rises past psi_pct and
 * recovery starts in A at low_pct, before A is anywhere near memory.max
 * (x neither reclaimed nor swapped), splits x's sparse THPs until A is
 * just below low_pct and stops (not all of them split). Then, for 30 s with
 * the pressure on and khugepaged scanning every 100 ms, nothing is
 * collapsed in x and nothing split again: collapsing the split ranges
 * back would take A past low_pct under pressure, where recovery splits
 * them again. Every byte x wrote reads back.
 */
TEST_F_TIMEOUT(containers, pressure_starts_recovery_without_oscillation, 360)
{
	static const char *const x = CG_A "x/", *const y = CG_A "y/";
	long psi0 = hawkeye_stat("debloat_psi_start");
	long high = sysfs_read_long(DEBLOAT "high_pct");
	long low = sysfs_read_long(DEBLOAT "low_pct");
	long limit = 160 * MB, split, split1, coll1, usage;
	double end, psi = 0, t0;
	int ready[2], go[2];
	pid_t px, py;
	char c;

	ASSERT_EQ(0, sysfs_write(DEBLOAT "psi_pct", "10"));
	ASSERT_EQ(0, cg_write(CG_A, "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, mkdir(x, 0755));
	ASSERT_EQ(0, mkdir(y, 0755));
	ASSERT_EQ(0, cg_write(y, "memory.max", "8M"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	px = cg_run(x, bloated_and_steady, 64);
	ASSERT_LT(0, px);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/*
	 * The limit once x has filled: a fill this fast toward high_pct
	 * would start an episode (recovery foresees a growing cgroup's use).
	 */
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "160M"));

	/* No pressure, between the watermarks: recovery stays off. */
	sleep_ms(5000);
	usage = cg_long(CG_A, "memory.current", NULL);
	TH_LOG("before the pressure: A uses %ld kB (%ld %% of memory.max), "
	       "x's THPs %ld kB, PSI %.2f %%", usage / 1024, usage * 100 / limit,
	       rollup_kb(px, "AnonHugePages"), cg_psi10(CG_A));
	ASSERT_LT(usage * 100, high * limit);
	ASSERT_LE(low * limit, usage * 100);
	EXPECT_EQ(0, cg_split(x));
	EXPECT_EQ(65536, rollup_kb(px, "AnonHugePages"));

	/* The pressure: recovery starts, splits some and stops. */
	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "100"));
	py = cg_run(y, thrash, 32);
	ASSERT_LT(0, py);
	t0 = now_s();
	split = 0;
	for (end = t0 + 120; !split && now_s() < end; sleep_ms(100))
		split = cg_split(x);
	psi = cg_psi10(CG_A);
	TH_LOG("first split after %.1f s at PSI %.2f %%, A at %ld kB; x swapped %ld kB, "
	       "reclaim scanned %ld pages", now_s() - t0, psi,
	       cg_long(CG_A, "memory.current", NULL) / 1024,
	       cg_long(x, "memory.swap.current", NULL) / 1024,
	       cg_long(x, "memory.stat", "pgscan"));
	ASSERT_LT(0, split) TH_LOG("no split under pressure");
	/* Settled: below low_pct, no split for 3 s. */
	for (end = now_s() + 60; now_s() < end;) {
		split = cg_split(x);
		sleep_ms(3000);
		if (split == cg_split(x))
			break;
	}
	usage = cg_long(CG_A, "memory.current", NULL);
	EXPECT_LT(psi0, hawkeye_stat("debloat_psi_start"));
	/* Stopped just below low_pct: not 16 MB further (a batch of THPs). */
	EXPECT_LT(usage * 100, low * limit);
	EXPECT_LE((low - 10) * limit, usage * 100);
	EXPECT_LT(split, 32);
	EXPECT_EQ(0, cg_long(x, "memory.swap.current", NULL));
	EXPECT_EQ(0, cg_long(x, "memory.stat", "pgscan"));

	/* A long window under pressure: count splits and collapses. */
	split1 = cg_split(x);
	coll1 = cg_long(x, "memory.stat", "thp_collapse_alloc");
	sleep_ms(30000);
	psi = cg_psi10(CG_A);
	split = cg_split(x);
	TH_LOG("recovery stopped at %ld kB (%ld %%) after %ld splits; in the next 30 s "
	       "at PSI %.2f %%: %ld splits, %ld collapses; A at %ld kB, y swapped %ld kB",
	       usage / 1024, usage * 100 / limit, split1, psi, split - split1,
	       cg_long(x, "memory.stat", "thp_collapse_alloc") - coll1,
	       cg_long(CG_A, "memory.current", NULL) / 1024,
	       cg_long(y, "memory.swap.current", NULL) / 1024);
	EXPECT_LE(10, psi) TH_LOG("the pressure did not last");
	EXPECT_EQ(coll1, cg_long(x, "memory.stat", "thp_collapse_alloc"));
	EXPECT_EQ(split1, split);

	kill(py, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_status(py));
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(px));
	EXPECT_EQ(0, cg_long(CG_A, "memory.events", "oom_kill"));
	child_pipes_close(ready, go);
	rmdir(x);
	rmdir(y);
}

/*
 * @mb of THPs written densely, then 3/4 of each 2 MB given back with
 * MADV_DONTNEED, as a memory allocator does: partially mapped THPs whose
 * unmapped subpages stay charged until the THP is split. Says 'r' on
 * ready_fd, waits for a byte on go_fd, then reads everything back: exit 0
 * if what it kept is as written and the rest zero, 2 if not.
 */
static int dense_then_dontneed(long mb)
{
	size_t len = mb * MB, keep = HPAGE_SZ / 4, i;
	unsigned char *p = (unsigned char *)map_aligned(len);
	char c;

	if (!p)
		return 4;
	madvise(p, len, MADV_HUGEPAGE);
	for (i = 0; i < len; i += 64)
		p[i] = byte_at(i);
	for (i = 0; i < len; i += HPAGE_SZ)
		madvise(p + i + keep, HPAGE_SZ - keep, MADV_DONTNEED);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < len; i++)
		if (p[i] != (i % HPAGE_SZ < keep && i % 64 == 0 ? byte_at(i) : 0))
			return 2;
	return 0;
}

/*
 * Two cgroups with memory.max 100 MB, each with a process that wrote 88
 * MB of THPs and gave 3/4 of each back (MADV_DONTNEED): 22 MB mapped, 88
 * MB charged, past high_pct. With recovery on, the cgroup's partially
 * mapped THPs are split and their unmapped subpages freed without reclaim
 * (what reclaim's THP shrinker would do at the limit) until the cgroup is
 * below low_pct of its limit, where its episode ends; with recovery off in
 * the other cgroup, they stay charged. Not all 44 need be split: a split
 * that fails for the moment (an extra reference) is not retried once the
 * episode has ended (a fresh-clone run split 30 and stopped at 44 MB). Each
 * split gives back 1.5 MB, so from 88 MB at least 12 are needed. khugepaged
 * is kept asleep, so that it does not collapse the ranges back meanwhile.
 */
TEST_F_TIMEOUT(containers, partly_unmapped_huge_pages_freed_before_reclaim, 180)
{
	/* low_pct of the 100 MB limit */
	long on, off, split, low = sysfs_read_long(DEBLOAT "low_pct") * MB;
	int ready[2], go[2];
	pid_t pa, pb;
	double end;
	char c;

	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "600000"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "100M"));
	ASSERT_EQ(0, cg_write(CG_B, "memory.max", "100M"));
	ASSERT_EQ(0, cg_write(CG_B, "memory.thp.shrink_underused", "0"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	pa = cg_run(CG_A, dense_then_dontneed, 88);
	pb = cg_run(CG_B, dense_then_dontneed, 88);
	ASSERT_LT(0, pa);
	ASSERT_LT(0, pb);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));
	for (end = now_s() + 60; now_s() < end; sleep_ms(200))
		if (cg_long(CG_A, "memory.current", NULL) < low)
			break;
	sleep_ms(2000);		/* the rest of the round */
	on = cg_long(CG_A, "memory.current", NULL);
	off = cg_long(CG_B, "memory.current", NULL);
	split = cg_long(CG_A, "memory.stat", "hawkeye_debloat_deferred_split");
	TH_LOG("recovery on: %ld kB charged after %ld THPs split (RSS %ld kB), pgscan %ld; "
	       "off: %ld kB charged (RSS %ld kB)", on / 1024, split, rollup_kb(pa, "Rss"),
	       cg_long(CG_A, "memory.stat", "pgscan"), off / 1024, rollup_kb(pb, "Rss"));
	EXPECT_GT(low, on);
	EXPECT_LE(12, split);
	EXPECT_EQ(0, cg_long(CG_A, "memory.stat", "pgscan"));
	EXPECT_EQ(0, cg_long(CG_A, "memory.swap.current", NULL));
	EXPECT_LE(80 * MB, off);
	EXPECT_EQ(0, cg_long(CG_B, "memory.stat", "hawkeye_debloat_deferred_split"));
	EXPECT_LE(split, hawkeye_stat("debloat_deferred_split"));

	ASSERT_EQ(2, write(go[1], "gg", 2));
	EXPECT_EQ(0, wait_status(pa));
	EXPECT_EQ(0, wait_status(pb));
	child_pipes_close(ready, go);
}

/*
 * A cgroup at memory.max, full of 4 KB pages that reclaim can swap out,
 * then charges of a whole huge page each: hugetlb faults (charged with
 * cgroup2's memory_hugetlb_accounting) and a MADV_COLLAPSE. Both reclaim
 * and succeed, as upstream: no charge fails for its size. Exit 0 if all
 * did and every byte reads back; 10 if the collapse failed, 11 if it left
 * no THP; 20, 21, 22 if a byte of the collapsed range, the hugetlb pages
 * or the rest differs; SIGALRM if a fault never completed (a hugetlb fault
 * whose charge fails is retried for ever).
 */
static int fill_then_charge_huge(long mb)
{
	size_t len = mb * MB, hlen = 4 * HPAGE_SZ, i;
	unsigned char *p = (unsigned char *)map_aligned(len);
	unsigned char *c = (unsigned char *)map_aligned(HPAGE_SZ);
	unsigned char *h = mmap(NULL, hlen, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

	if (!p || !c || h == MAP_FAILED)
		return 4;
	alarm(120);
	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len; i += PAGE_SZ)
		p[i] = byte_at(i);
	for (i = 0; i < HPAGE_SZ; i += PAGE_SZ)
		c[i] = byte_at(i);
	for (i = 0; i < hlen; i += HPAGE_SZ)
		h[i] = byte_at(i);
	if (madvise(c, HPAGE_SZ, MADV_COLLAPSE))
		return 10;
	/*
	 * Before the reads below: they swap the rest back in, and the
	 * reclaim that makes room for it may swap the new THP out in turn.
	 */
	if (!is_thp(0, (unsigned long)c))
		return 11;
	for (i = 0; i < HPAGE_SZ; i += PAGE_SZ)
		if (c[i] != byte_at(i))
			return 20;
	for (i = 0; i < hlen; i += HPAGE_SZ)
		if (h[i] != byte_at(i))
			return 21;
	for (i = 0; i < len; i += PAGE_SZ)
		if (p[i] != byte_at(i))
			return 22;
	return 0;
}

/*
 * cgroup2's own options at CGROOT (nsdelegate, memory_recursiveprot, ...:
 * those a remount sets), comma-separated in @opts; 0 if it is mounted.
 */
static int cg2_options(char *opts, size_t len)
{
	static const char *const own[] = {
		"nsdelegate", "favordynmods", "memory_localevents",
		"memory_recursiveprot", "memory_hugetlb_accounting",
	};
	char dev[64], dir[256], type[64], o[256];
	FILE *f = fopen("/proc/self/mounts", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %255s %63s %255s %*d %*d", dev, dir, type, o) == 4) {
		if (strcmp(type, "cgroup2") || strcmp(dir, "/sys/fs/cgroup"))
			continue;
		opts[0] = '\0';
		for (char *t = strtok(o, ","); t; t = strtok(NULL, ","))
			for (size_t i = 0; i < NR(own); i++)
				if (!strcmp(t, own[i]))
					snprintf(opts + strlen(opts), len - strlen(opts),
						 "%s%s", opts[0] ? "," : "", t);
		ret = 0;
	}
	fclose(f);
	return ret;
}

TEST_F_TIMEOUT(containers, huge_charges_at_the_limit_reclaim, 240)
{
	char *opts = cg2_remount_opts, with[300];
	pid_t a;
	int st;

	ASSERT_EQ(0, sysfs_write(NR_HUGEPAGES, "4"));
	if (sysfs_read_long(NR_HUGEPAGES) != 4)
		SKIP(return, "no 4 hugetlb pages");
	ASSERT_EQ(0, cg2_options(opts, sizeof(cg2_remount_opts)));
	snprintf(with, sizeof(with), "%s%smemory_hugetlb_accounting", opts,
		 opts[0] ? "," : "");
	ASSERT_EQ(0, mount("none", CGROOT, NULL, MS_REMOUNT, with));
	cg2_remounted = true;
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "64M"));
	a = cg_run(CG_A, fill_then_charge_huge, 60);
	ASSERT_LT(0, a);
	st = wait_status(a);
	TH_LOG("status %d, peak %ld kB of 65536, swap %ld kB, oom_kill %ld, hugetlb %ld kB",
	       st, cg_long(CG_A, "memory.peak", NULL) / 1024,
	       cg_long(CG_A, "memory.swap.peak", NULL) / 1024,
	       cg_long(CG_A, "memory.events", "oom_kill"),
	       cg_long(CG_A, "memory.stat", "hugetlb") / 1024);
	EXPECT_EQ(0, st);
	EXPECT_EQ(0, cg_long(CG_A, "memory.events", "oom_kill"));
}

/*
 * @mb of huge-page memory with one byte written in each 2 MB; says 'r'
 * on ready_fd, waits for a byte on go_fd, then reads every byte back:
 * exit 0 if all is as written, 2 if not.
 */
static int sparse_wait_check(long mb)
{
	size_t len = mb * MB;
	unsigned char *s = (unsigned char *)map_aligned(len);
	char c;

	if (!s)
		return 4;
	madvise(s, len, MADV_HUGEPAGE);
	write_sparse_dense(s, len, NULL, 0);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	return check_sparse_dense(s, len, NULL, 0);
}

/*
 * Reclaim splits at recovery's bar: 64 MB of THPs with one byte written in
 * each, in a cgroup of 80 MB without swap, past low_pct of its limit but
 * below high_pct (no episode: PSI's start is off), and memory.reclaim
 * asks for memory. Reclaim is pressure: its THP shrinker splits them at
 * recovery's bar (khugepaged's max_ptes_none is 511: upstream's bar would
 * split none) until the cgroup is below low_pct, and the data reads back.
 * With recovery off for the cgroup, none is split.
 */
TEST_F_TIMEOUT(containers, reclaim_splits_at_recoverys_bar, 240)
{
	for (int off = 0; off < 2; off++) {
		long underused0 = vmstat("thp_underused_split_page");
		long episodes0 = hawkeye_stat("debloat_memcg_episode");
		long low = 70 * 80 * MB / 100;
		long thp0, thp1, underused;
		int ready[2], go[2];
		pid_t a;
		char c;

		ASSERT_EQ(0, sysfs_write(DEBLOAT "psi_pct", "0"));
		ASSERT_EQ(0, sysfs_write(DEBLOAT "low_pct", "70"));
		ASSERT_EQ(0, sysfs_write(DEBLOAT "high_pct", "85"));
		/* khugepaged does not collapse split ranges back meanwhile. */
		ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "600000"));
		ASSERT_EQ(0, cg_make(CG_A));
		ASSERT_EQ(0, cg_write(CG_A, "memory.swap.max", "0"));
		ASSERT_EQ(0, cg_write(CG_A, "memory.thp.shrink_underused", off ? "0" : "1"));
		ASSERT_EQ(0, child_pipes_open(ready, go));
		a = cg_run(CG_A, sparse_wait_check, 64);
		ASSERT_LT(0, a);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		/* The limit once filled: a fast fill would start an episode. */
		ASSERT_EQ(0, cg_write(CG_A, "memory.max", "80M"));
		thp0 = cg_long(CG_A, "memory.stat", "anon_thp");
		ASSERT_LE(low, cg_long(CG_A, "memory.current", NULL))
			TH_LOG("the THPs did not take the cgroup past low_pct");
		/*
		 * Splits free no LRU page, so each write ends in "too little
		 * reclaimed" after reclaim's retries; its shrinker scans a few
		 * queued THPs at each. Asked again until below low_pct (56 MB),
		 * or 10 times.
		 */
		for (int t = 0; t < 10 && cg_long(CG_A, "memory.current", NULL) >= low; t++)
			cg_write(CG_A, "memory.reclaim", "16M");
		thp1 = cg_long(CG_A, "memory.stat", "anon_thp");
		underused = vmstat("thp_underused_split_page") - underused0;
		TH_LOG("recovery %s: anon_thp %ld -> %ld kB, underused THPs split %ld, "
		       "episodes %ld", off ? "off" : "on", thp0 / 1024, thp1 / 1024,
		       underused, hawkeye_stat("debloat_memcg_episode") - episodes0);
		EXPECT_EQ(0, hawkeye_stat("debloat_memcg_episode") - episodes0);
		EXPECT_EQ(0, cg_split(CG_A));
		if (off) {
			EXPECT_EQ(thp0, thp1);
		} else {
			EXPECT_GT(thp0, thp1);
			EXPECT_GT(low, cg_long(CG_A, "memory.current", NULL));
		}
		ASSERT_EQ(1, write(go[1], "g", 1));
		EXPECT_EQ(0, wait_status(a));
		child_pipes_close(ready, go);
	}
}

/* @mb written to a file in SHM_DIR (tmpfs): charged to the writer's cgroup. */
static int fill_shm(long mb)
{
	static char buf[1 << 20];
	int fd = open(SHM_DIR "/f", O_CREAT | O_WRONLY | O_TRUNC, 0600);

	if (fd < 0)
		return 4;
	memset(buf, 0x5a, sizeof(buf));
	for (long i = 0; i < mb; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return 4;
	return close(fd) ? 4 : 0;
}

/* The CPU time a thread has used, in clock ticks (utime + stime); -1. */
static long thread_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	long utime, stime;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	p = strrchr(buf, ')');
	/* After the name: state and 10 more fields, then utime and stime. */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld",
			 &utime, &stime) != 2)
		return -1;
	return utime + stime;
}

/*
 * An episode in a cgroup without processes keeps its pace: 58 MB of tmpfs
 * written by a process that then exits, in a cgroup of 64 MB without swap,
 * is past high_pct, and the episode has nobody's THPs to split. Its
 * rounds wait as sampling rounds do (0.1 s each): over 3 s the recovery
 * thread uses under 0.5 s of CPU (a round that skipped the wait spun).
 */
TEST_F_TIMEOUT(containers, empty_episode_keeps_its_pace, 120)
{
	long episodes0 = hawkeye_stat("debloat_memcg_episode"), ticks;
	pid_t thread = kthread_pid("hawkeye_debloatd"), w;
	double end;

	ASSERT_LT(0, thread);
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "64M"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.swap.max", "0"));
	mkdir(SHM_DIR, 0700);
	ASSERT_EQ(0, mount("none", SHM_DIR, "tmpfs", 0, "size=96m"));
	w = cg_run(CG_A, fill_shm, 58);
	ASSERT_LT(0, w);
	EXPECT_EQ(0, wait_status(w));
	for (end = now_s() + 60; now_s() < end; sleep_ms(100))
		if (hawkeye_stat("debloat_memcg_episode") > episodes0)
			break;
	ASSERT_LT(episodes0, hawkeye_stat("debloat_memcg_episode"))
		TH_LOG("no episode at %ld kB", cg_long(CG_A, "memory.current", NULL) / 1024);
	ticks = thread_ticks(thread);
	sleep_ms(3000);
	ticks = thread_ticks(thread) - ticks;
	TH_LOG("the recovery thread used %ld ms of CPU in 3 s, A at %ld kB",
	       ticks * 1000 / sysconf(_SC_CLK_TCK),
	       cg_long(CG_A, "memory.current", NULL) / 1024);
	EXPECT_GT(sysconf(_SC_CLK_TCK) / 2, ticks);
	unlink(SHM_DIR "/f");
	umount(SHM_DIR);
}

/*
 * @mb of THPs: in the first third, three 4 KB pages in four written (a
 * byte each: 128 of each THP's 512 subpages zero-filled), in the rest a
 * byte in each THP. Sends the mapping's address on ready_fd, waits for a
 * byte on go_fd, reads everything back: exit 0 if all is as written and
 * the rest zero, 2 if not.
 */
static bool quarter_zero_written(size_t i)
{
	return i % PAGE_SZ == 7 && i / PAGE_SZ % 4;
}

static int quarter_zero_then_sparse(long mb)
{
	size_t len = mb * MB, q = len / 3, i;
	unsigned char *p = (unsigned char *)map_hugepage(len);
	char c;

	if (!p)
		return 4;
	for (i = 0; i < q; i += PAGE_SZ)
		if (quarter_zero_written(i + 7))
			p[i + 7] = byte_at(i);
	for (i = q; i < len; i += HPAGE_SZ)
		p[i + 100] = byte_at(i);
	if (write(ready_fd, &p, sizeof(p)) != sizeof(p) || read(go_fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < len; i++) {
		bool written = i < q ? quarter_zero_written(i) : i % HPAGE_SZ == 100;

		if (p[i] != (written ? byte_at(i - i % PAGE_SZ) : 0))
			return 2;
	}
	return 0;
}

/*
 * Recovery off ends a cgroup's episode too. A's episode (58 MB of tmpfs
 * in 64 MB, low_pct 0: it never ends by itself) has lowered its bar to
 * the floor in three rounds when recovery goes off. Then a process in A
 * maps 16 MB of THPs with a quarter of each zero-filled (below the
 * threshold, above its floor), followed by 32 MB of THPs with a byte
 * each, and recovery goes on again at watermarks 70/50. A new episode
 * starts at the threshold: its first round passes over the quarter-zero
 * THPs, splits sparse ones until A is below 50 % and ends. An episode
 * that survived would have split the quarter-zero ones first, at its
 * floor bar: once a sparse one is split (the machine's exact counter;
 * memory.stat's are flushed lazily), the quarter-zero ones are judged.
 */
TEST_F_TIMEOUT(containers, off_ends_the_episode_in_a_cgroup, 180)
{
	long episodes, rounds, split;
	int ready[2], go[2], i, whole;
	char *p = NULL;
	double end;
	pid_t w, a;

	ASSERT_EQ(0, sysfs_write(DEBLOAT "psi_pct", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "low_pct", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "high_pct", "85"));
	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "600000"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "64M"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.swap.max", "0"));
	mkdir(SHM_DIR, 0700);
	ASSERT_EQ(0, mount("none", SHM_DIR, "tmpfs", 0, "size=96m"));
	episodes = hawkeye_stat("debloat_memcg_episode");
	rounds = cg_long(CG_A, "memory.stat", "hawkeye_debloat_round");
	w = cg_run(CG_A, fill_shm, 58);
	ASSERT_LT(0, w);
	EXPECT_EQ(0, wait_status(w));
	/* From the threshold, a round halves the bar: 256, 128, 64, 32. */
	for (end = now_s() + 60; now_s() < end; sleep_ms(100))
		if (cg_long(CG_A, "memory.stat", "hawkeye_debloat_round") >= rounds + 3)
			break;
	ASSERT_LE(rounds + 3, cg_long(CG_A, "memory.stat", "hawkeye_debloat_round"));
	ASSERT_LT(episodes, hawkeye_stat("debloat_memcg_episode"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));
	unlink(SHM_DIR "/f");
	umount(SHM_DIR);

	ASSERT_EQ(0, sysfs_write(DEBLOAT "high_pct", "70"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "low_pct", "50"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	a = cg_run(CG_A, quarter_zero_then_sparse, 48);
	ASSERT_LT(0, a);
	ASSERT_EQ(sizeof(p), read(ready[0], &p, sizeof(p)));
	for (i = 0; i < 8; i++)
		ASSERT_TRUE(is_thp(a, (unsigned long)p + i * HPAGE_SZ));
	ASSERT_LE(48 * MB, cg_long(CG_A, "memory.stat", "anon_thp"));
	episodes = hawkeye_stat("debloat_memcg_episode");
	split = hawkeye_stat("debloat_thp_split");
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "1"));
	for (end = now_s() + 60; now_s() < end; sleep_ms(100))
		if (hawkeye_stat("debloat_thp_split") > split)
			break;
	TH_LOG("episodes %ld, THPs split %ld, A at %ld kB",
	       hawkeye_stat("debloat_memcg_episode") - episodes,
	       hawkeye_stat("debloat_thp_split") - split,
	       cg_long(CG_A, "memory.current", NULL) / 1024);
	ASSERT_LT(split, hawkeye_stat("debloat_thp_split"));
	/* A new episode, at the threshold. */
	EXPECT_LT(episodes, hawkeye_stat("debloat_memcg_episode"));
	for (i = 0, whole = 0; i < 8; i++)
		whole += is_thp(a, (unsigned long)p + i * HPAGE_SZ);
	EXPECT_EQ(8, whole);
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(a));
	child_pipes_close(ready, go);
}

/*
 * @mb of THPs, each with its first quarter written (a byte in each 4 KB
 * page: eight dense 64 KB pieces) and the rest zero-filled. Says 'r' on
 * ready_fd, waits for a byte on go_fd, reads everything back: exit 0 if
 * all is as written and the rest zero, 2 if not.
 */
static int dense_quarter_wait_check(long mb)
{
	size_t len = mb * MB, i;
	unsigned char *p = (unsigned char *)map_aligned(len);
	char c;

	if (!p)
		return 4;
	madvise(p, len, MADV_HUGEPAGE);
	for (i = 0; i < len; i += PAGE_SZ)
		p[i + 7] = i % HPAGE_SZ < HPAGE_SZ / 4 ? byte_at(i) : 0;
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < len; i++) {
		bool written = i % HPAGE_SZ < HPAGE_SZ / 4 && i % PAGE_SZ == 7;

		if (p[i] != (written ? byte_at(i - 7) : 0))
			return 2;
	}
	return 0;
}

/*
 * Reclaim's THP shrinker splits as recovery does: with debloat/mthp and
 * 64 KB mTHPs on, 32 THPs each with a dense first quarter, in a cgroup of
 * 80 MB without swap past low_pct, and memory.reclaim asks for memory.
 * The shrinker splits each THP (3/4 zero-filled: past recovery's bar) to
 * 64 KB pieces and only the 24 all-zero ones on to base pages, freed: the
 * eight dense pieces of each stay 64 KB mTHPs (splitting to base pages
 * kept none), and the data reads back. Counted by upstream's per-size
 * split statistics (mTHPs mapped, machine-wide, are only logged).
 */
TEST_F_TIMEOUT(containers, reclaim_splits_to_dense_mthp, 240)
{
	const char *nr_anon = THP_SYSFS "hugepages-64kB/stats/nr_anon";
	const char *split64 = THP_SYSFS "hugepages-64kB/stats/split";
	const char *split2m = THP_SYSFS "hugepages-2048kB/stats/split";
	long low = 70 * 80 * MB / 100, mthp0, s64, s2m;
	int ready[2], go[2];
	pid_t a;
	char c;

	if (access(nr_anon, F_OK))
		SKIP(return, "no mTHP statistics in this kernel");
	ASSERT_EQ(0, sysfs_write(DEBLOAT "psi_pct", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "low_pct", "70"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "high_pct", "85"));
	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "600000"));
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "hugepages-64kB/enabled", "always"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "mthp", "1"));
	ASSERT_EQ(0, cg_make(CG_A));
	ASSERT_EQ(0, cg_write(CG_A, "memory.swap.max", "0"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	a = cg_run(CG_A, dense_quarter_wait_check, 64);
	ASSERT_LT(0, a);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* The limit once filled: a fast fill would start an episode. */
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "80M"));
	ASSERT_LE(60 * MB, cg_long(CG_A, "memory.stat", "anon_thp"))
		TH_LOG("the workload did not get its THPs");
	mthp0 = sysfs_read_long(nr_anon);
	s64 = sysfs_read_long(split64);
	s2m = sysfs_read_long(split2m);
	/* As in reclaim_splits_at_recoverys_bar: until below low_pct. */
	for (int t = 0; t < 10 && cg_long(CG_A, "memory.current", NULL) >= low; t++)
		cg_write(CG_A, "memory.reclaim", "16M");
	s2m = sysfs_read_long(split2m) - s2m;
	s64 = sysfs_read_long(split64) - s64;
	TH_LOG("THPs split %ld, 64 KB pieces split %ld, 64 KB mTHPs %+ld, charged %ld kB",
	       s2m, s64, sysfs_read_long(nr_anon) - mthp0,
	       cg_long(CG_A, "memory.current", NULL) / 1024);
	EXPECT_LT(0, s2m);
	/* Each THP in 32 pieces of 64 KB, the 24 all-zero ones split on. */
	EXPECT_EQ(24 * s2m, s64);
	EXPECT_GT(low, cg_long(CG_A, "memory.current", NULL));
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(a));
	child_pipes_close(ready, go);
}

/*
 * @mb of THPs, each with its first half zero-filled (never written) and,
 * in its second half, every 64 KB with 8 pages written and 8 more written
 * and then given back with MADV_DONTNEED: partially mapped THPs. Says 'r'
 * on ready_fd, waits for a byte on go_fd, reads everything back: exit 0
 * if all is as written and the rest zero, 2 if not.
 */
static int half_zero_half_holes(long mb)
{
	size_t len = mb * MB, i;
	unsigned char *p = (unsigned char *)map_aligned(len);
	char c;

	if (!p)
		return 4;
	madvise(p, len, MADV_HUGEPAGE);
	for (i = 0; i < len; i += HPAGE_SZ)
		p[i] = 0;	/* a THP each, at fault */
	for (i = 0; i < len; i += PAGE_SZ)
		if (i % HPAGE_SZ >= HPAGE_SZ / 2)
			p[i + 5] = byte_at(i);
	for (i = HPAGE_SZ / 2; i < len; i += 16 * PAGE_SZ) {
		if (i % HPAGE_SZ < HPAGE_SZ / 2)
			i += HPAGE_SZ / 2;
		madvise(p + i + 8 * PAGE_SZ, 8 * PAGE_SZ, MADV_DONTNEED);
	}
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < len; i++) {
		bool kept = i % HPAGE_SZ >= HPAGE_SZ / 2 && i % (16 * PAGE_SZ) < 8 * PAGE_SZ;

		if (p[i] != (kept && i % PAGE_SZ == 5 ? byte_at(i - 5) : 0))
			return 2;
	}
	return 0;
}

/*
 * Recovery with debloat/mthp and 64 KB mTHPs enabled, forced on for the
 * machine (watermarks 1 % and 0 %), on 32 partially mapped THPs that are
 * each worth splitting: a partially mapped folio is split to base pages,
 * as the deferred split shrinker does, so its unmapped subpages are freed
 * and not left in a dense 64 KB piece that no queue holds. The cgroup
 * (no limit) then holds about the 16 MB written: 32 MB if the 64 KB
 * pieces kept their holes.
 */
TEST_F_TIMEOUT(containers, partly_mapped_pieces_free_their_holes, 240)
{
	long split0 = hawkeye_stat("debloat_thp_split"), charged;
	long high = sysfs_read_long(DEBLOAT "high_pct");
	long low = sysfs_read_long(DEBLOAT "low_pct");
	int ready[2], go[2];
	double end;
	pid_t pb;
	char c;

	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "600000"));
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "hugepages-64kB/enabled", "always"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "mthp", "1"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	pb = cg_run(CG_B, half_zero_half_holes, 64);
	ASSERT_LT(0, pb);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "low_pct", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "high_pct", "1"));
	for (end = now_s() + 120; now_s() < end; sleep_ms(200))
		if (cg_long(CG_B, "memory.stat", "hawkeye_debloat_thp_split") >= 32)
			break;
	ASSERT_EQ(0, sysfs_write_long(DEBLOAT "high_pct", high));
	ASSERT_EQ(0, sysfs_write_long(DEBLOAT "low_pct", low));
	ASSERT_EQ(0, write_file("/proc/sys/vm/drop_caches", "2"));
	charged = cg_long(CG_B, "memory.current", NULL);
	TH_LOG("THPs split %ld, charged %ld kB (16384 written)",
	       cg_long(CG_B, "memory.stat", "hawkeye_debloat_thp_split"), charged / 1024);
	EXPECT_LE(32, cg_long(CG_B, "memory.stat", "hawkeye_debloat_thp_split"));
	EXPECT_LE(32, hawkeye_stat("debloat_thp_split") - split0);
	EXPECT_GT(20 * MB, charged);

	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(pb));
	child_pipes_close(ready, go);
}

/*
 * The largest virtio block device of at least @mb (the guest's swap disk):
 * its path in @path; 0, or -1 if there is none. Read through the block
 * device's own page cache, it fills a cgroup with clean file pages
 * without a file system (the host's, virtio-fs or 9p, is not cached in
 * the guest).
 */
static int scratch_disk(char *path, size_t len, long mb)
{
	long best = 0;

	for (char d = 'a'; d <= 'z'; d++) {
		char f[64];
		long sectors;

		snprintf(f, sizeof(f), "/sys/block/vd%c/size", d);
		sectors = sysfs_read_long(f);
		if (sectors > best && sectors >= mb * 2048) {
			best = sectors;
			snprintf(path, len, "/dev/vd%c", d);
		}
	}
	return best ? 0 : -1;
}

static char cache_path[64];

/* Read @mb of cache_path through: page cache charged to this cgroup. */
static int read_through(long mb)
{
	static char buf[1 << 20];
	int fd = open(cache_path, O_RDONLY);

	if (fd < 0)
		return 4;
	for (long i = 0; i < mb; i++)
		if (read(fd, buf, sizeof(buf)) != sizeof(buf))
			return 5;
	close(fd);
	return 0;
}

/*
 * @mb of THPs with 448 of each one's 512 subpages written (64 zero-filled:
 * worth a split only once an episode lowers its bar to 64); says 'r' on
 * ready_fd, waits for a byte on go_fd, checks every byte: 0 if all is as
 * written.
 */
static int dense_thps(long mb)
{
	size_t len = mb * MB, i;
	unsigned char *p = (unsigned char *)map_aligned(len);
	char c;

	if (!p)
		return 4;
	madvise(p, len, MADV_HUGEPAGE);
	for (i = 0; i < len; i += PAGE_SZ)
		p[i] = i % HPAGE_SZ < 448 * PAGE_SZ ? byte_at(i) : 0;
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < len; i += PAGE_SZ)
		if (p[i] != (i % HPAGE_SZ < 448 * PAGE_SZ ? byte_at(i) : 0))
			return 2;
	return 0;
}

/*
 * A container whose page cache fills it to memory.max: 64 MB of THPs and
 * 320 MB of a block device read through, in a cgroup of 256 MB without
 * swap. Clean
 * cache costs reclaim nothing, so the cgroup's use as recovery counts it
 * stays at its THPs: no episode starts, no THP is split, anon_thp stays
 * 64 MB (reclaim drops the cache instead).
 */
TEST_F_TIMEOUT(containers, page_cache_does_not_split_huge_pages, 300)
{
	long episodes0 = hawkeye_stat("debloat_memcg_episode");
	int ready[2], go[2];
	pid_t p, r;
	char c;

	if (scratch_disk(cache_path, sizeof(cache_path), 320))
		SKIP(return, "no block device of 320 MB to read");
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "256M"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.swap.max", "0"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	p = cg_run(CG_A, dense_thps, 64);
	ASSERT_LT(0, p);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(64 * MB, cg_long(CG_A, "memory.stat", "anon_thp"));
	r = cg_run(CG_A, read_through, 320);
	ASSERT_LT(0, r);
	EXPECT_EQ(0, wait_status(r));
	/* The thread polls every 0.25 s: it has seen the cgroup full. */
	sleep_ms(2000);
	TH_LOG("file %ld kB, anon_thp %ld kB, peak %ld kB of 262144, episodes %ld, "
	       "THPs split %ld", cg_long(CG_A, "memory.stat", "file") / 1024,
	       cg_long(CG_A, "memory.stat", "anon_thp") / 1024,
	       cg_long(CG_A, "memory.peak", NULL) / 1024,
	       hawkeye_stat("debloat_memcg_episode") - episodes0,
	       cg_split(CG_A));
	EXPECT_LT(200 * MB, cg_long(CG_A, "memory.peak", NULL));
	EXPECT_EQ(64 * MB, cg_long(CG_A, "memory.stat", "anon_thp"));
	EXPECT_EQ(0, cg_split(CG_A));
	EXPECT_EQ(0, hawkeye_stat("debloat_memcg_episode") - episodes0);
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(p));
	child_pipes_close(ready, go);
}

/*
 * @mb of base pages (MADV_NOHUGEPAGE), every page written; says 'r' on
 * ready_fd, waits for a byte on go_fd, checks every page: 0 if all is as
 * written.
 */
static int base_pages_wait(long mb)
{
	size_t len = mb * MB, i;
	unsigned char *p = (unsigned char *)map_aligned(len);
	char c;

	if (!p || madvise(p, len, MADV_NOHUGEPAGE))
		return 4;
	for (i = 0; i < len; i += PAGE_SZ)
		p[i] = byte_at(i);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < len; i += PAGE_SZ)
		if (p[i] != byte_at(i))
			return 2;
	return 0;
}

/*
 * File streaming at memory.max beside a large process of base pages:
 * 320 MB of a block device read through a cgroup of 96 MB without swap
 * that holds 64 MB of anonymous 4 KB pages. Charges at the limit reclaim
 * cache as upstream's do; recovery walks no page table for them (no
 * episode, nothing scanned or read), and the process's memory is intact.
 */
TEST_F_TIMEOUT(containers, streaming_at_the_limit_walks_nothing, 300)
{
	long episodes0 = hawkeye_stat("debloat_memcg_episode");
	long scanned0 = hawkeye_stat("debloat_thp_scanned");
	long read0 = hawkeye_stat("debloat_bytes_read");
	int ready[2], go[2];
	pid_t p, r;
	char c;

	if (scratch_disk(cache_path, sizeof(cache_path), 320))
		SKIP(return, "no block device of 320 MB to read");
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "96M"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.swap.max", "0"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	p = cg_run(CG_A, base_pages_wait, 64);
	ASSERT_LT(0, p);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	r = cg_run(CG_A, read_through, 320);
	ASSERT_LT(0, r);
	EXPECT_EQ(0, wait_status(r));
	TH_LOG("file %ld kB, anon %ld kB, peak %ld kB of 98304, episodes %ld, "
	       "THPs scanned %ld, bytes read %ld",
	       cg_long(CG_A, "memory.stat", "file") / 1024,
	       cg_long(CG_A, "memory.stat", "anon") / 1024,
	       cg_long(CG_A, "memory.peak", NULL) / 1024,
	       hawkeye_stat("debloat_memcg_episode") - episodes0,
	       hawkeye_stat("debloat_thp_scanned") - scanned0,
	       hawkeye_stat("debloat_bytes_read") - read0);
	EXPECT_LT(90 * MB, cg_long(CG_A, "memory.peak", NULL));
	EXPECT_EQ(0, hawkeye_stat("debloat_memcg_episode") - episodes0);
	EXPECT_EQ(0, hawkeye_stat("debloat_thp_scanned") - scanned0);
	EXPECT_EQ(0, hawkeye_stat("debloat_bytes_read") - read0);
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(p));
	child_pipes_close(ready, go);
}

/*
 * Processes killed while recovery works on them: five processes with
 * 28 MB of sparse THPs each take a cgroup of 160 MB past high_pct; as
 * soon as the episode starts they are killed. The thread's references
 * to their address spaces must not keep them (or their charges) alive:
 * every one is reaped and the cgroup's memory goes back to almost
 * nothing. Three rounds (an episode may run on from one round into the
 * next, so a round waits for splits, not for a new episode); under lockdep (the debug boot) any lock taken
 * in the wrong context by a last mmput() shows on the console.
 */
TEST_F_TIMEOUT(containers, processes_exit_during_recovery, 300)
{
	int ready[2], go[2];
	char c;

	ASSERT_EQ(0, sysfs_write(DEBLOAT "low_pct", "10"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.max", "160M"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	for (int round = 0; round < 3; round++) {
		long split0 = hawkeye_stat("debloat_thp_split");
		pid_t pids[5];
		double end;

		for (int i = 0; i < 5; i++) {
			pids[i] = cg_run(CG_A, sparse_wait_check, 28);
			ASSERT_LT(0, pids[i]);
		}
		/* Each has faulted its THPs and waits. */
		for (int i = 0; i < 5; i++)
			ASSERT_EQ(1, read(ready[0], &c, 1));
		/* An episode (this round's, or the last one going on) splits. */
		for (end = now_s() + 120; now_s() < end; sleep_ms(10))
			if (hawkeye_stat("debloat_thp_split") > split0)
				break;
		ASSERT_LT(split0, hawkeye_stat("debloat_thp_split"));
		for (int i = 0; i < 5; i++)
			kill(pids[i], SIGKILL);
		for (int i = 0; i < 5; i++)
			EXPECT_EQ(128 + SIGKILL, wait_status(pids[i]));
		for (end = now_s() + 60; now_s() < end; sleep_ms(100))
			if (cg_long(CG_A, "memory.current", NULL) < 4 * MB)
				break;
		TH_LOG("round %d: THPs split %ld, memory.current %ld kB after the exits",
		       round, hawkeye_stat("debloat_thp_split") - split0,
		       cg_long(CG_A, "memory.current", NULL) / 1024);
		ASSERT_GT(4 * MB, cg_long(CG_A, "memory.current", NULL));
	}
	child_pipes_close(ready, go);
}

/* A hot process: @mb of promotable memory, every page written, forever. */
static int touch_forever(long mb)
{
	size_t len = mb * MB;
	char *p = map_promotable(len);

	for (unsigned char n = 0; p; n++)
		for (size_t i = 0; i < len; i += PAGE_SZ)
			p[i] = n;
	return 4;
}

/* Promotion policy hawkeye-g in batches of @batch, a batch every @sleep_ms. */
static int promote_every(const char *batch, const char *sleep_ms)
{
	return sysfs_write(PROMOTE "sample_window_ms", "500") ||
	       sysfs_write(PROMOTE "scan_period_ms", "1000") ||
	       sysfs_write(PROMOTE "batch", batch) ||
	       sysfs_write(PROMOTE "sleep_ms", sleep_ms) ||
	       sysfs_write(PROMOTE "policy", "hawkeye-g");
}

/* The bucket that holds all of @pid's regions (sampled twice); -1: none. */
static int one_bucket(pid_t pid)
{
	long regions = proc_hawkeye(pid, "regions");
	char key[16];

	if (proc_hawkeye(pid, "samples") < 2 || regions <= 0)
		return -1;
	for (int b = 0; b < 10; b++) {
		snprintf(key, sizeof(key), "bucket%d", b);
		if (proc_hawkeye(pid, key) == regions)
			return b;
	}
	return -1;
}

/*
 * Two cgroups with weights 1:3, an equally hot process in each: once
 * both processes' regions are in one bucket, a batch of 8 promotions goes
 * 1:3 to them.
 */
TEST_F_TIMEOUT(containers, promotions_follow_weights, 240)
{
	long a = 0, b = 0;
	int bucket = -1;
	pid_t pa, pb;
	double end;

	ASSERT_EQ(0, cg_write(CG_A, "memory.thp.weight", "100"));
	ASSERT_EQ(0, cg_write(CG_B, "memory.thp.weight", "300"));
	pa = cg_run(CG_A, touch_forever, 16);
	pb = cg_run(CG_B, touch_forever, 16);
	ASSERT_LT(0, pa);
	ASSERT_LT(0, pb);
	/* Sampled, not promoted, until both are in the same bucket. */
	ASSERT_EQ(0, promote_every("8", "600000"));
	for (end = now_s() + 90; now_s() < end; sleep_ms(200)) {
		bucket = one_bucket(pa);
		if (bucket >= 0 && bucket == one_bucket(pb))
			break;
		bucket = -1;
	}
	ASSERT_LE(0, bucket) TH_LOG("the two processes never shared a bucket");
	/* The first batch at once, the next 5 s later. */
	ASSERT_EQ(0, sysfs_write(PROMOTE "sleep_ms", "5000"));
	for (end = now_s() + 60; a + b < 8 && now_s() < end; sleep_ms(100)) {
		a = cg_long(CG_A, "memory.stat", "hawkeye_promote_success");
		b = cg_long(CG_B, "memory.stat", "hawkeye_promote_success");
	}
	sysfs_write(PROMOTE "policy", "linux");
	TH_LOG("first batch from bucket %d: %ld promotions in the cgroup of weight 100, "
	       "%ld in that of 300", bucket, a, b);
	kill(pa, SIGKILL);
	kill(pb, SIGKILL);
	wait_status(pa);
	wait_status(pb);
	EXPECT_LE(8, a + b);
	EXPECT_LE(1, a);
	EXPECT_LE(2 * a, b);
}

/*
 * Weights divide a parent's share: /A (300) with children x (100) and y
 * (10000, as a delegatee might set to take more), each with an equally
 * hot process, against /B (100). Once the three share a bucket, two
 * batches of 8 go 3:1 to A's subtree and B (12 and 4): y's weight divides
 * A's share with x, it does not take B's.
 */
TEST_F_TIMEOUT(containers, nested_weights_divide_the_parents_share, 240)
{
	pid_t pid[3];
	long a = 0, b = 0;
	int i, bucket = -1;
	double end;

	ASSERT_EQ(0, cg_write(CG_A, "memory.thp.weight", "300"));
	ASSERT_EQ(0, cg_write(CG_B, "memory.thp.weight", "100"));
	ASSERT_EQ(0, cg_write(CG_A, "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, mkdir(CG_A "x", 0755));
	ASSERT_EQ(0, mkdir(CG_A "y", 0755));
	ASSERT_EQ(0, cg_write(CG_A "x/", "memory.thp.weight", "100"));
	ASSERT_EQ(0, cg_write(CG_A "y/", "memory.thp.weight", "10000"));
	pid[0] = cg_run(CG_A "x/", touch_forever, 32);
	pid[1] = cg_run(CG_A "y/", touch_forever, 32);
	pid[2] = cg_run(CG_B, touch_forever, 32);
	for (i = 0; i < 3; i++)
		ASSERT_LT(0, pid[i]);
	/* Sampled, not promoted, until all three are in the same bucket. */
	ASSERT_EQ(0, promote_every("8", "600000"));
	for (end = now_s() + 90; now_s() < end; sleep_ms(200)) {
		bucket = one_bucket(pid[0]);
		if (bucket >= 0 && bucket == one_bucket(pid[1]) &&
		    bucket == one_bucket(pid[2]))
			break;
		bucket = -1;
	}
	ASSERT_LE(0, bucket) TH_LOG("the three processes never shared a bucket");
	/* The first batch at once, the next 5 s later. */
	ASSERT_EQ(0, sysfs_write(PROMOTE "sleep_ms", "5000"));
	for (end = now_s() + 90; a + b < 16 && now_s() < end; sleep_ms(100)) {
		a = cg_long(CG_A, "memory.stat", "hawkeye_promote_success");
		b = cg_long(CG_B, "memory.stat", "hawkeye_promote_success");
	}
	sysfs_write(PROMOTE "policy", "linux");
	TH_LOG("two batches from bucket %d: %ld promotions under /A (300; x %ld, y %ld), "
	       "%ld in /B (100)", bucket, a,
	       cg_long(CG_A "x/", "memory.stat", "hawkeye_promote_success"),
	       cg_long(CG_A "y/", "memory.stat", "hawkeye_promote_success"), b);
	for (i = 0; i < 3; i++) {
		kill(pid[i], SIGKILL);
		wait_status(pid[i]);
	}
	EXPECT_LE(16, a + b);
	EXPECT_LE(3, b);
	EXPECT_LE(2 * b, a);
}

/*
 * @mb of THP memory written densely (faults want huge pages), every byte
 * read back, then @mb of promotable base pages, written until SIGKILL.
 * Says 'r' on ready_fd once all is in place; 'x' (and exit 2) if a byte
 * differs.
 */
static int huge_then_promotable(long mb)
{
	size_t len = mb * MB;
	unsigned char *h = (unsigned char *)map_aligned(len);
	char *p;

	if (!h)
		return 4;
	madvise(h, len, MADV_HUGEPAGE);
	for (size_t i = 0; i < len; i += 64)
		h[i] = byte_at(i);
	for (size_t i = 0; i < len; i++)
		if (h[i] != (i % 64 ? 0 : byte_at(i)))
			return write(ready_fd, "x", 1) == 1 ? 2 : 4;
	p = map_promotable(len);
	if (!p || write(ready_fd, "r", 1) != 1)
		return 4;
	for (unsigned char n = 0;; n++)
		for (size_t i = 0; i < len; i += PAGE_SZ)
			p[i] = n;
	return 0;
}

/*
 * memory.thp.max = 8 MB: a process in the cgroup faulting 32 MB
 * of THP memory gets at most 4 THPs, the rest in base pages, every byte
 * intact;
 * promotion then gives it none, while it promotes the same process's
 * memory in a neighbour without a cap.
 */
TEST_F_TIMEOUT(containers, huge_cap_stops_faults_and_promotion, 240)
{
	long capped0 = hawkeye_stat("memcg_huge_capped");
	long thp_a, thp_b, prom_a = 0, prom_b = 0;
	int fds[2];
	pid_t pa, pb;
	double end;
	char c;

	ASSERT_EQ(0, cg_write(CG_A, "memory.thp.max", "8M"));
	ASSERT_EQ(8 * MB, cg_long(CG_A, "memory.thp.max", NULL));
	ASSERT_EQ(0, pipe(fds));
	ready_fd = fds[1];
	pa = cg_run(CG_A, huge_then_promotable, 32);
	pb = cg_run(CG_B, huge_then_promotable, 32);
	ASSERT_LT(0, pa);
	ASSERT_LT(0, pb);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(1, read(fds[0], &c, 1));
		ASSERT_EQ('r', c) TH_LOG("a byte written differs");
	}
	thp_a = cg_long(CG_A, "memory.stat", "anon_thp");
	thp_b = cg_long(CG_B, "memory.stat", "anon_thp");
	TH_LOG("after the faults: anon_thp %ld MB capped at 8, %ld MB without a cap; "
	       "THP faults capped %ld", thp_a / MB, thp_b / MB,
	       hawkeye_stat("memcg_huge_capped") - capped0);
	EXPECT_GE(8 * MB, thp_a);
	EXPECT_LT(0, thp_a);
	EXPECT_LT(8 * MB, thp_b);
	EXPECT_LT(capped0, hawkeye_stat("memcg_huge_capped"));

	ASSERT_EQ(0, promote_every("8", "500"));
	for (end = now_s() + 120; prom_b < 8 && now_s() < end; sleep_ms(200))
		prom_b = cg_long(CG_B, "memory.stat", "hawkeye_promote_success");
	prom_a = cg_long(CG_A, "memory.stat", "hawkeye_promote_success");
	thp_a = cg_long(CG_A, "memory.stat", "anon_thp");
	sysfs_write(PROMOTE "policy", "linux");
	TH_LOG("promoted: %ld in the capped cgroup (anon_thp %ld MB), %ld without a cap",
	       prom_a, thp_a / MB, prom_b);
	EXPECT_LE(8, prom_b);
	EXPECT_EQ(0, prom_a);
	EXPECT_GE(8 * MB, thp_a);

	kill(pa, SIGKILL);
	kill(pb, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_status(pa));
	EXPECT_EQ(128 + SIGKILL, wait_status(pb));
	close(fds[0]);
	close(fds[1]);
}

/*
 * @mb of memory, one byte written in each 4 KB page in order and read
 * back, without MADV_HUGEPAGE: says 'f' on ready_fd (or 'x' if a byte
 * differs) and waits for a byte on go_fd; then MADV_COLLAPSE of its last
 * 2 MB: says 'r' if that failed as a refused charge does (EBUSY), 'c' if
 * not, and waits for a byte on go_fd.
 */
static int fault_then_collapse(long mb)
{
	size_t len = mb * MB, i;
	unsigned char *p = (unsigned char *)map_aligned(len);
	char c = 'f';

	if (!p)
		return 4;
	for (i = 0; i < len; i += PAGE_SZ)
		p[i] = byte_at(i);
	for (i = 0; i < len; i++)
		if (p[i] != (i % PAGE_SZ ? 0 : byte_at(i)))
			c = 'x';
	if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	c = !madvise(p + len - HPAGE_SZ, HPAGE_SZ, MADV_COLLAPSE) || errno != EBUSY ?
	    'c' : 'r';
	if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1)
		return 4;
	return 0;
}

/*
 * The cap holds before anything is allocated: with THP "always" and no
 * madvise (the light allocation), pre-zeroing on, a process in a cgroup
 * capped at 8 MB faults 256 MB. Each of the 128 first touches of a 2 MB
 * range either gets a THP (at most 4) or falls back (thp_fault_fallback),
 * those refused by the cap counted once more each, in
 * hawkeye_memcg_huge_capped; no 2 MB page is taken for a refused fault
 * (hawkeye_fault_{prezeroed,sync_zero}_2m). At the cap, MADV_COLLAPSE
 * fails as a refused charge does and is counted
 * (hawkeye_memcg_collapse_capped). khugepaged sleeps meanwhile: a
 * collapse of its own would add a THP that no fault counted.
 */
TEST_F_TIMEOUT(containers, huge_cap_holds_before_allocation, 180)
{
	long huge0, fallback0, capped0, collapse0, thps, capped, huge, fallback;
	int ready[2], go[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, sysfs_write(KHUGEPAGED "scan_sleep_millisecs", "600000"));
	ASSERT_EQ(0, sysfs_write(THP_SYSFS "enabled", "always"));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.thp.max", "8M"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	huge0 = hawkeye_stat("fault_prezeroed_2m") + hawkeye_stat("fault_sync_zero_2m");
	fallback0 = vmstat("thp_fault_fallback");
	/* The machine's events: memory.stat's may lag by rstat's batch. */
	capped0 = hawkeye_stat("memcg_huge_capped");
	collapse0 = hawkeye_stat("memcg_collapse_capped");
	pid = cg_run(CG_A, fault_then_collapse, 256);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ('f', c) TH_LOG("a byte differs");
	thps = cg_long(CG_A, "memory.stat", "anon_thp") / HPAGE_SZ;
	capped = hawkeye_stat("memcg_huge_capped") - capped0;
	huge = hawkeye_stat("fault_prezeroed_2m") + hawkeye_stat("fault_sync_zero_2m") - huge0;
	fallback = vmstat("thp_fault_fallback") - fallback0;
	TH_LOG("THPs %ld, faults capped %ld, fallbacks %ld, 2 MB pages allocated at fault %ld",
	       thps, capped, fallback, huge);
	EXPECT_LT(0, thps);
	EXPECT_GE(4, thps);
	EXPECT_EQ(128, thps + fallback);
	EXPECT_LE(1, capped);
	EXPECT_GE(fallback, capped);
	EXPECT_GE(4, huge);

	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	TH_LOG("MADV_COLLAPSE: '%c', collapses capped %ld", c,
	       hawkeye_stat("memcg_collapse_capped") - collapse0);
	if (thps == 4) {
		EXPECT_EQ('r', c) TH_LOG("MADV_COLLAPSE at the cap did not fail with EBUSY");
		EXPECT_LE(1, hawkeye_stat("memcg_collapse_capped") - collapse0);
	}
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(pid));
	/* Counted for the cgroup too, once its statistics are flushed. */
	EXPECT_LE(capped, cg_long(CG_A, "memory.stat", "hawkeye_memcg_huge_capped"));
	child_pipes_close(ready, go);
}

/*
 * Under the freebsd policy a cgroup capped at 0 gets no reservation (a
 * 2 MB page that would only wait to be promoted): 16 MB faulted there in
 * base pages, no reservation made, no THP, each range's first fault
 * counted as capped; MADV_COLLAPSE fails with EBUSY.
 */
TEST_F_TIMEOUT(containers, huge_cap_holds_under_freebsd, 120)
{
	long reserve0 = hawkeye_stat("freebsd_reserve");

	if (!HAS_BASELINES())
		SKIP(return, NO_BASELINES);
	long capped0 = hawkeye_stat("memcg_huge_capped");
	int ready[2], go[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, sysfs_write(THP_SYSFS "enabled", "always"));
	ASSERT_EQ(0, sysfs_write(PROMOTE "policy", "freebsd"));
	ASSERT_EQ(0, cg_write(CG_A, "memory.thp.max", "0"));
	ASSERT_EQ(0, child_pipes_open(ready, go));
	pid = cg_run(CG_A, fault_then_collapse, 16);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ('f', c) TH_LOG("a byte differs");
	TH_LOG("reservations %ld, anon_thp %ld kB, faults capped %ld",
	       hawkeye_stat("freebsd_reserve") - reserve0,
	       cg_long(CG_A, "memory.stat", "anon_thp") / 1024,
	       hawkeye_stat("memcg_huge_capped") - capped0);
	EXPECT_EQ(0, hawkeye_stat("freebsd_reserve") - reserve0);
	EXPECT_EQ(0, cg_long(CG_A, "memory.stat", "anon_thp"));
	EXPECT_EQ(8, hawkeye_stat("memcg_huge_capped") - capped0);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ('r', c) TH_LOG("MADV_COLLAPSE at the cap did not fail with EBUSY");
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, wait_status(pid));
	sysfs_write(PROMOTE "policy", "linux");
	child_pipes_close(ready, go);
}

#define CRUN "/usr/bin/crun"
#define OCI_DIR "/tmp/hawkeye-oci/"

/*
 * An OCI bundle in OCI_DIR: a root of empty directories with the host's
 * /usr bound read-only (Debian's /bin and /lib are links into it), whose
 * process prints its cgroup's files; the cgroup's memory.* files set
 * through the OCI "unified" map to @unified (JSON members). 0 if written.
 */
static int oci_bundle(const char *unified)
{
	static const char *const dirs[] = {
		OCI_DIR, OCI_DIR "rootfs", OCI_DIR "rootfs/usr", OCI_DIR "rootfs/proc",
		OCI_DIR "rootfs/sys", OCI_DIR "rootfs/dev", OCI_DIR "rootfs/tmp",
		OCI_DIR "state",
	};
	static const char *const links[][2] = {
		{ "usr/bin", OCI_DIR "rootfs/bin" }, { "usr/lib", OCI_DIR "rootfs/lib" },
		{ "usr/lib64", OCI_DIR "rootfs/lib64" }, { "usr/sbin", OCI_DIR "rootfs/sbin" },
	};
	FILE *f;

	for (size_t i = 0; i < NR(dirs); i++)
		if (mkdir(dirs[i], 0755) && errno != EEXIST)
			return -1;
	for (size_t i = 0; i < NR(links); i++)
		if (symlink(links[i][0], links[i][1]) && errno != EEXIST)
			return -1;
	f = fopen(OCI_DIR "config.json", "w");
	if (!f)
		return -1;
	fprintf(f,
		"{ \"ociVersion\": \"1.0.2\",\n"
		"  \"process\": { \"terminal\": false, \"user\": { \"uid\": 0, \"gid\": 0 },\n"
		"    \"cwd\": \"/\", \"env\": [ \"PATH=/usr/bin:/bin\" ],\n"
		"    \"args\": [ \"/bin/sh\", \"-c\", \"cd /sys/fs/cgroup && "
		"echo weight $(cat memory.thp.weight) shrink_underused $(cat memory.thp.shrink_underused) "
		"thp.max $(cat memory.thp.max) max $(cat memory.max)\" ] },\n"
		"  \"root\": { \"path\": \"rootfs\", \"readonly\": true },\n"
		"  \"mounts\": [\n"
		"    { \"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\" },\n"
		"    { \"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\" },\n"
		"    { \"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\",\n"
		"      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"ro\" ] },\n"
		"    { \"destination\": \"/sys/fs/cgroup\", \"type\": \"cgroup\", \"source\": \"cgroup\",\n"
		"      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"relatime\", \"ro\" ] },\n"
		"    { \"destination\": \"/usr\", \"type\": \"bind\", \"source\": \"/usr\",\n"
		"      \"options\": [ \"rbind\", \"ro\" ] } ],\n"
		"  \"linux\": {\n"
		"    \"cgroupsPath\": \"/hawkeye-oci\",\n"
		"    \"resources\": { \"unified\": { %s } },\n"
		"    \"namespaces\": [ { \"type\": \"pid\" }, { \"type\": \"ipc\" }, { \"type\": \"uts\" },\n"
		"      { \"type\": \"mount\" }, { \"type\": \"cgroup\" } ] } }\n", unified);
	return fclose(f);
}

/* Run crun on OCI_DIR's bundle; its output in @out, its exit status. */
static int oci_run(char *out, size_t len)
{
	char cmd[256];
	size_t n = 0;
	FILE *p;

	/* A container of that name left by an earlier run would be refused. */
	if (system(CRUN " --root " OCI_DIR "state delete --force hawkeye-oci"
		   " >/dev/null 2>&1") < 0)
		return -1;
	rmdir(CGROOT "hawkeye-oci");
	snprintf(cmd, sizeof(cmd), CRUN " --root " OCI_DIR "state run --bundle "
		 OCI_DIR " hawkeye-oci 2>&1");
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < len && fgets(out + n, len - n, p))
		n += strlen(out + n);
	out[n] = '\0';
	return WEXITSTATUS(pclose(p));
}

/*
 * A real OCI runtime (crun) sets HawkEye's files through the OCI unified
 * map, as podman's --cgroup-conf or a CRI annotation does: the container
 * reads back the values in its own cgroup (a cgroup namespace), and the
 * cgroup is gone after it exits. A bad value fails the start with the
 * file and EINVAL named in crun's error.
 */
TEST_F_TIMEOUT(containers, oci_runtime_sets_the_files, 120)
{
	char out[1024];
	int st;

	if (access(CRUN, X_OK))
		SKIP(return, "no " CRUN " (Debian's crun)");
	ASSERT_EQ(0, oci_bundle("\"memory.max\": \"134217728\", "
				"\"memory.thp.weight\": \"300\", "
				"\"memory.thp.shrink_underused\": \"0\", "
				"\"memory.thp.max\": \"16M\""));
	st = oci_run(out, sizeof(out));
	TH_LOG("crun: status %d: %s", st, out);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(out, "weight 300 shrink_underused 0 thp.max 16777216 max 134217728"));
	EXPECT_NE(0, access(CGROOT "hawkeye-oci", F_OK));

	ASSERT_EQ(0, oci_bundle("\"memory.max\": \"134217728\", "
				"\"memory.thp.weight\": \"0\""));
	st = oci_run(out, sizeof(out));
	TH_LOG("crun, weight 0: status %d: %s", st, out);
	EXPECT_NE(0, st);
	EXPECT_NE(NULL, strstr(out, "memory.thp.weight"));
	EXPECT_NE(NULL, strstr(out, "Invalid argument"));
	/*
	 * Debian 12's crun (1.8.1) leaves the cgroup of a start that failed
	 * writing a resource file, and `crun delete` does not know it: empty,
	 * it goes with an rmdir (kernel side: nothing holds it).
	 */
	if (!access(CGROOT "hawkeye-oci", F_OK)) {
		EXPECT_EQ(0, cg_long(CGROOT "hawkeye-oci/", "cgroup.events", "populated"));
		EXPECT_EQ(0, rmdir(CGROOT "hawkeye-oci"));
	}
}

/* Every memory.thp.* file: EINVAL for bad input, state unchanged. */
TEST_F(containers, thp_files_refuse_bad_input)
{
	static const struct knob_bad bad[] = {
		{ CG_A "memory.thp.shrink_underused", { "2", "-1", "x", "1 1", "7" } },
		{ CG_A "memory.thp.weight", { "0", "10001", "-1", "x", "1 1" } },
		{ CG_A "memory.thp.max", { "-1", "x", "1 1", "maximum" } },
	};
	static const char *const watch[] = {
		CG_A "memory.thp.shrink_underused", CG_A "memory.thp.weight",
		CG_A "memory.thp.max",
	};
	char buf[32] = "";

	EXPECT_NE(0, access(CGROOT "memory.thp.shrink_underused", F_OK));
	EXPECT_NE(0, access(CGROOT "memory.thp.weight", F_OK));
	EXPECT_NE(0, access(CGROOT "memory.thp.max", F_OK));
	/* The defaults. */
	EXPECT_EQ(1, cg_long(CG_A, "memory.thp.shrink_underused", NULL));
	EXPECT_EQ(100, cg_long(CG_A, "memory.thp.weight", NULL));
	EXPECT_EQ(0, read_file(CG_A "memory.thp.max", buf, sizeof(buf)));
	EXPECT_STREQ("max\n", buf);
	EXPECT_REFUSED(bad, watch);

	/* Set otherwise, and refused again. */
	EXPECT_EQ(0, cg_write(CG_A, "memory.thp.shrink_underused", "0"));
	EXPECT_EQ(0, cg_long(CG_A, "memory.thp.shrink_underused", NULL));
	EXPECT_EQ(0, cg_write(CG_A, "memory.thp.weight", "10000"));
	EXPECT_EQ(10000, cg_long(CG_A, "memory.thp.weight", NULL));
	/* A cap counts whole 2 MB pages. */
	EXPECT_EQ(0, cg_write(CG_A, "memory.thp.max", "5M"));
	EXPECT_EQ(4 * MB, cg_long(CG_A, "memory.thp.max", NULL));
	EXPECT_REFUSED(bad, watch);
	EXPECT_EQ(0, cg_write(CG_A, "memory.thp.shrink_underused", "1\n"));
	EXPECT_EQ(1, cg_long(CG_A, "memory.thp.shrink_underused", NULL));
	EXPECT_EQ(0, cg_write(CG_A, "memory.thp.max", "0"));
	EXPECT_EQ(0, cg_long(CG_A, "memory.thp.max", NULL));
	EXPECT_EQ(0, cg_write(CG_A, "memory.thp.max", "max"));
	EXPECT_EQ(0, read_file(CG_A "memory.thp.max", buf, sizeof(buf)));
	EXPECT_STREQ("max\n", buf);

	/* The counters are in memory.stat, hierarchical. */
	EXPECT_LE(0, cg_long(CG_A, "memory.stat", "hawkeye_debloat_thp_split"));
	EXPECT_LE(0, cg_long(CG_A, "memory.stat", "hawkeye_debloat_zero_pages_freed"));
	EXPECT_LE(0, cg_long(CG_A, "memory.stat", "hawkeye_promote_success"));
	EXPECT_LE(0, cg_long(CGROOT, "memory.stat", "hawkeye_debloat_thp_split"));
	EXPECT_LE(0, cg_long(CG_A, "memory.stat", "hawkeye_memcg_huge_capped"));
	EXPECT_LE(0, cg_long(CG_A, "memory.stat", "hawkeye_memcg_collapse_capped"));
}

TEST_HARNESS_MAIN
