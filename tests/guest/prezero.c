// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye async pre-zeroing, observed from user space: memory dirtied and
 * freed comes back zero-filled whether it was pre-zeroed or not, faults
 * (4 KB, 2 MB and mTHP sizes) take pre-zeroed memory while the feature is
 * on and the counters say so, nothing moves while it is off, and the knobs
 * refuse bad input.
 */
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

#define MTHP(kb, file) THP_SYSFS "hugepages-" #kb "kB/" file

static const char *const knobs[] = {
	PREZERO "enabled", PREZERO "rate", PREZERO "target_mb", PREZERO "nontemporal",
	PREZERO "paced", PREZERO "idle_rate", PREZERO "fault_clear", THP_SYSFS "enabled", MTHP(16, "enabled"), MTHP(64, "enabled"),
	MTHP(512, "enabled"),
};

/* What the fixture sets, in this order. */
static const struct knob_set setup_knobs[] = {
	{ PREZERO "rate", "0" }, { PREZERO "target_mb", "0" }, { PREZERO "nontemporal", "1" },
};

static void dirty_and_free(size_t len)
{
	dirty_and_free_on(-1, len);
}

/*
 * Wait until at least mb of free memory is pre-zeroed on node nid (-1: on
 * all nodes together); false on timeout.
 */
static bool wait_zeroed(int nid, unsigned long mb, double timeout)
{
	double end = now_s() + timeout;

	while (now_s() < end) {
		long pages = nid < 0 ? vmstat("nr_free_zeroed") : node_zeroed(nid);

		if ((unsigned long)pages * PAGE_SZ >= mb * MB)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/* Write one byte per page, then check that all the rest reads as zero. */
static size_t fault_and_check(char *p, size_t len)
{
	size_t i, bad = 0;

	for (i = 0; i < len; i += PAGE_SZ)
		p[i] = 1;
	for (i = 0; i < len; i += sizeof(uint64_t)) {
		uint64_t v = *(uint64_t *)(p + i);

		if (i % PAGE_SZ == 0)
			v &= ~0xffULL;
		if (v)
			bad++;
	}
	return bad;
}

/* A child that keeps dirtying and freeing memory until killed. */
static pid_t start_churn(size_t len)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			dirty_and_free(len);
	}
	return pid;
}

/* Waits, at most @secs, until nodes 0 and 1's pools stop growing. */
static void wait_two_pools_full(int secs)
{
	double t0 = now_s();
	long last = -1, sum;

	while ((sum = node_zeroed(0) + node_zeroed(1)) != last && now_s() < t0 + secs) {
		last = sum;
		sleep(1);
	}
}

/* Node @nid's free movable blocks per order, from /proc/pagetypeinfo. */
static void log_movable_free(struct __test_metadata *_metadata, int nid)
{
	FILE *f = fopen("/proc/pagetypeinfo", "r");
	char line[512], node[32];

	if (!f)
		return;
	snprintf(node, sizeof(node), "Node %4d, zone", nid);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, node, strlen(node)) && strstr(line, " Movable "))
			TH_LOG("%s", line);
	fclose(f);
}

/* NUMA nodes: target_mb and rate are each node's. */
static int nodes(void)
{
	int n = 0;

	while (node_zeroed(n) >= 0)
		n++;
	return n;
}

FIXTURE(prezero) {};

FIXTURE_SETUP(prezero)
{
	ASSERT_KNOBS_PUSH(knobs, setup_knobs);
}

FIXTURE_TEARDOWN(prezero)
{
	knobs_pop();
}

TEST_F(prezero, bad_input_is_rejected_and_changes_nothing)
{
	static const char *const bad[] = { "2", "-1", "abc", "1x", "99999999999999999999" };

	for (int k = 0; k < 5; k++) {
		long before = sysfs_read_long(knobs[k]);

		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			/* rate and target_mb take numbers: "2" is fine for them. */
			if (!strcmp(bad[b], "2") && (k == 1 || k == 2))
				continue;
			EXPECT_EQ(EINVAL, sysfs_write(knobs[k], bad[b])) {
				TH_LOG("%s accepted '%s'", knobs[k], bad[b]);
			}
			EXPECT_EQ(before, sysfs_read_long(knobs[k]));
		}
	}
	EXPECT_EQ(EINVAL, sysfs_write(PREZERO "rate", "16777217"));
	EXPECT_EQ(EINVAL, sysfs_write(PREZERO "target_mb", "1000000000"));
}

/* Runs the caller on @cpu only; sched_setaffinity()'s result. */
static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* A counter: one of HawkEye's, or a file (an mTHP size's stats). */
static long counter(const char *name)
{
	return name[0] == '/' ? sysfs_read_long(name) : hawkeye_stat(name);
}

static void prezeroed_faults(struct __test_metadata *_metadata, const char *thp,
			     const char *prezeroed, const char *sync, size_t len)
{
	const size_t churn_len = 32 * MB, pool_len = len + 2 * churn_len;
	long pre_all = 0, syn_all = 0;
	pid_t churn;
	int round;

	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", thp));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	churn = start_churn(churn_len);
	ASSERT_LT(0, churn);
	/*
	 * A fault takes its own node's pool: ours run on CPU 0 and wait for
	 * node 0's. Counted over two nodes, the pool was full while ours
	 * was empty, and every fault of a round zeroed synchronously.
	 */
	ASSERT_EQ(0, pin_to(0));

	for (round = 0; round < 5; round++) {
		long pre0, sync0, pre, syn, pool, zeroings;
		char *p;

		/*
		 * The child takes zeroed pages as fast as it can fault: it
		 * waits while the pool fills (our faults and two of its
		 * rounds), and competes while we fault.
		 */
		kill(churn, SIGSTOP);
		/*
		 * Node 0 frees more than the pool has to hold: the thread
		 * leaves the high watermark and a block free, and page cache
		 * of earlier tests may fill the rest of the node.
		 */
		dirty_and_free_on(0, pool_len + 64 * MB);
		zeroings = hawkeye_stat("prezero_pages");
		ASSERT_TRUE(wait_zeroed(0, pool_len / MB, 120)) {
			TH_LOG("round %d: only %ld pages pre-zeroed on node 0 (%ld zeroed on all nodes meanwhile)",
			       round, node_zeroed(0), hawkeye_stat("prezero_pages") - zeroings);
			log_movable_free(_metadata, 0);
		}
		pool = node_zeroed(0);
		kill(churn, SIGCONT);
		pre0 = counter(prezeroed);
		sync0 = counter(sync);
		p = map_aligned(len);
		ASSERT_NE(NULL, p);
		EXPECT_EQ(0, fault_and_check(p, len));
		pre = counter(prezeroed) - pre0;
		syn = counter(sync) - sync0;
		munmap(p, len);
		TH_LOG("round %d: %ld faults pre-zeroed, %ld zeroed synchronously (node 0's pool %ld pages before)",
		       round, pre, syn, pool);
		pre_all += pre;
		syn_all += syn;
	}
	/* Judged over the rounds: the child, on any CPU, competes. */
	EXPECT_GT(pre_all, 2 * syn_all);
	kill(churn, SIGKILL);
	waitpid(churn, NULL, 0);
}

TEST_F_TIMEOUT(prezero, thp_faults_take_prezeroed_memory_and_read_zero, 600)
{
	prezeroed_faults(_metadata, "always", "fault_prezeroed_2m",
			 "fault_sync_zero_2m", 128 * MB);
	EXPECT_GT(hawkeye_stat("prezero_pages"), 0);
}

TEST_F_TIMEOUT(prezero, base_page_faults_take_prezeroed_memory_and_read_zero, 600)
{
	prezeroed_faults(_metadata, "never", "fault_prezeroed_4k",
			 "fault_sync_zero_4k", 64 * MB);
}

/*
 * One mTHP size at a time (2 MB and the others off): its faults take
 * pre-zeroed memory, read zero, and its own counters say so; the kernel's
 * anon_fault_alloc for the size shows they were folios of that size.
 */
TEST_F_TIMEOUT(prezero, mthp_faults_take_prezeroed_memory_and_read_zero, 900)
{
	static const long sizes_kb[] = { 16, 64, 512 };
	char dir[128], en[160], pre[160], syn[160], alloc[160];

	for (int s = 0; s < 3; s++) {
		long alloc0, folios;

		snprintf(dir, sizeof(dir), THP_SYSFS "hugepages-%ldkB/", sizes_kb[s]);
		snprintf(en, sizeof(en), "%senabled", dir);
		snprintf(pre, sizeof(pre), "%sstats/hawkeye_fault_prezeroed", dir);
		snprintf(syn, sizeof(syn), "%sstats/hawkeye_fault_sync_zero", dir);
		snprintf(alloc, sizeof(alloc), "%sstats/anon_fault_alloc", dir);
		alloc0 = sysfs_read_long(alloc);
		ASSERT_EQ(0, write_file(en, "always"));
		prezeroed_faults(_metadata, "never", pre, syn, 32 * MB);
		ASSERT_EQ(0, write_file(en, "never"));
		folios = sysfs_read_long(alloc) - alloc0;
		TH_LOG("%ld kB: %ld folios faulted", sizes_kb[s], folios);
		/* Five rounds of 32 MB, nearly all in folios of that size. */
		EXPECT_LT(4 * 32 * 1024 / sizes_kb[s], folios);
	}
}

/*
 * The thread serves the sizes in use. Free memory is left in 64 KB holes
 * (most of it faulted as 64 KB folios, every other one freed): with no
 * mTHP size enabled the thread zeroes no block below 2 MB; with 64 KB
 * enabled it zeroes the holes too (prezero_mthp_pages), and 64 KB
 * faults take pre-zeroed memory and read zero.
 */
TEST_F_TIMEOUT(prezero, fragmented_memory_is_zeroed_for_mthp_sizes, 600)
{
	const size_t piece = 64 * 1024, len_faults = 16 * MB;
	long mthp0, mthp, zeroed, pre0, pre;
	char *hold, *p, target[32];
	size_t len, i;

	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	/*
	 * All free memory, as without a reporting device: beside one, the
	 * default pool (a quarter of memory) filled with 2 MB blocks first,
	 * taken back from the host, left less than the holes.
	 */
	snprintf(target, sizeof(target), "%ld", meminfo_kb("MemTotal") / 1024);
	ASSERT_EQ(0, sysfs_write(PREZERO "target_mb", target));
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "never"));
	ASSERT_EQ(0, write_file(MTHP(64, "enabled"), "always"));
	len = (meminfo_kb("MemFree") - 256 * 1024) * 1024 / HPAGE_SZ * HPAGE_SZ;
	ASSERT_LT(256 * MB, len);
	hold = map_aligned(len);
	ASSERT_NE(NULL, hold);
	for (i = 0; i < len; i += PAGE_SZ)
		hold[i] = 1;
	for (i = 0; i < len; i += 2 * piece)
		ASSERT_EQ(0, madvise(hold + i, piece, MADV_DONTNEED));
	ASSERT_EQ(0, write_file(MTHP(64, "enabled"), "never"));

	/* No mTHP size enabled: blocks of 2 MB and up only. */
	mthp0 = hawkeye_stat("prezero_mthp_pages");
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	sleep(2);
	wait_two_pools_full(60);
	EXPECT_EQ(mthp0, hawkeye_stat("prezero_mthp_pages"));
	zeroed = vmstat("nr_free_zeroed");

	/* 64 KB enabled: the holes too (some merged with a freed buddy). */
	ASSERT_EQ(0, write_file(MTHP(64, "enabled"), "always"));
	sleep(2);
	wait_two_pools_full(120);
	mthp = hawkeye_stat("prezero_mthp_pages") - mthp0;
	TH_LOG("%zu MB in 64 KB holes: %ld MB zeroed in blocks below 2 MB, pool %ld -> %ld MB",
	       len / 2 / MB, mthp * PAGE_SZ / MB, zeroed * PAGE_SZ / MB,
	       vmstat("nr_free_zeroed") * PAGE_SZ / MB);
	EXPECT_LE((long)(len / 4 / PAGE_SZ), mthp);
	EXPECT_LT(zeroed + mthp / 2, vmstat("nr_free_zeroed"));

	pre0 = sysfs_read_long(MTHP(64, "stats/hawkeye_fault_prezeroed"));
	p = map_aligned(len_faults);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0, fault_and_check(p, len_faults));
	pre = sysfs_read_long(MTHP(64, "stats/hawkeye_fault_prezeroed")) - pre0;
	EXPECT_LE((long)(len_faults / piece * 9 / 10), pre);
	munmap(p, len_faults);
	munmap(hold, len);
}

TEST_F_TIMEOUT(prezero, off_means_no_counter_moves, 600)
{
	static const char *const counters[] = {
		"prezero_pages", "fault_prezeroed_4k",
		"fault_sync_zero_4k", "fault_prezeroed_2m",
		"fault_sync_zero_2m",
	};
	long before[5];
	char *p;

	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "always"));
	dirty_and_free(64 * MB);
	for (int i = 0; i < 5; i++)
		before[i] = vmstat(counters[i]);
	sleep(2);
	p = map_aligned(64 * MB);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0, fault_and_check(p, 64 * MB));
	EXPECT_EQ(64 * MB / 1024, (size_t)smaps_kb(p, "AnonHugePages"));
	munmap(p, 64 * MB);
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(before[i], vmstat(counters[i])) {
			TH_LOG("%s moved while off", counters[i]);
		}
	}

	/* 64 KB mTHP faults: their counters do not move either. */
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "never"));
	ASSERT_EQ(0, write_file(MTHP(64, "enabled"), "always"));
	before[0] = sysfs_read_long(MTHP(64, "stats/hawkeye_fault_prezeroed"));
	before[1] = sysfs_read_long(MTHP(64, "stats/hawkeye_fault_sync_zero"));
	before[2] = sysfs_read_long(MTHP(64, "stats/anon_fault_alloc"));
	p = map_aligned(16 * MB);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0, fault_and_check(p, 16 * MB));
	munmap(p, 16 * MB);
	EXPECT_LT(before[2], sysfs_read_long(MTHP(64, "stats/anon_fault_alloc")));
	EXPECT_EQ(before[0], sysfs_read_long(MTHP(64, "stats/hawkeye_fault_prezeroed")));
	EXPECT_EQ(before[1], sysfs_read_long(MTHP(64, "stats/hawkeye_fault_sync_zero")));
}

TEST_F_TIMEOUT(prezero, target_bounds_zeroed_memory, 600)
{
	unsigned long have, target;
	char buf[32];

	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	dirty_and_free(512 * MB);
	have = vmstat("nr_free_zeroed") * PAGE_SZ / MB;
	target = have + 64;
	snprintf(buf, sizeof(buf), "%lu", target);
	ASSERT_EQ(0, sysfs_write(PREZERO "target_mb", buf));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	ASSERT_TRUE(wait_zeroed(-1, target, 60));
	sleep(2);
	/* Each node's thread stops within one block (4 MB) of the target. */
	for (int nid = 0; nid < nodes(); nid++) {
		long mb = node_zeroed(nid) * PAGE_SZ / MB;

		EXPECT_LE(mb, (long)target + 4) TH_LOG("node %d", nid);
	}
}

TEST_F_TIMEOUT(prezero, rate_limit_is_observed, 600)
{
	const long rate = 2560;	/* pages a second: 10 MB/s */
	double t0, secs;
	long z0, pages;

	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	dirty_and_free(512 * MB);
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "2560"));
	/* The paper's fixed rate: paced, idle CPUs would lift it. */
	ASSERT_EQ(0, sysfs_write(PREZERO "paced", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	z0 = hawkeye_stat("prezero_pages");
	t0 = now_s();
	sleep(4);
	pages = hawkeye_stat("prezero_pages") - z0;
	secs = now_s() - t0;
	TH_LOG("zeroed %ld pages in %.2f s at rate %ld: %.0f pages/s", pages, secs, rate,
	       pages / secs);
	/* Each node's: one 4 MB block may go before the first sleep. */
	EXPECT_LE(pages, nodes() * ((long)(rate * secs) + 1024));
	EXPECT_GE(pages, (long)(rate * secs / 4));
}

/*
 * Microseconds @pid has run: the scheduler's own sum (/proc/PID/sched,
 * CONFIG_SCHED_DEBUG). Clock ticks sample a thread too coarsely when it
 * zeroes 150 MB in a few ticks: one CI run charged the threads 1 and 2.
 */
static long thread_run_us(pid_t pid)
{
	char path[64], buf[8192], *p;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	if (read_file(path, buf, sizeof(buf)) ||
	    !(p = strstr(buf, "se.sum_exec_runtime")) || !(p = strchr(p, ':')))
		return -1;
	return (long)(strtod(p + 1, NULL) * 1000);
}

/*
 * Two NUMA nodes: a zeroing thread per node, allowed on its node's CPUs
 * only, zeroing its node's memory only: memory dirtied on node 1 and freed
 * is zeroed again by hawkeye_zerod1, which runs longer meanwhile than
 * hawkeye_zerod0.
 */
TEST_F_TIMEOUT(prezero, one_thread_per_node_zeroes_its_node, 600)
{
	const size_t len = 256 * MB;
	unsigned long node1 = 1UL << 1;
	long before, low, run_us[2];
	pid_t pid[2];
	double t0;
	int nid;
	char *p;

	if (access(NODE_SYSFS "1", F_OK))
		SKIP(return, "one NUMA node (make test's debug boot has two)");
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	for (nid = 0; nid < 2; nid++) {
		char name[32], path[64], cpus[64], status[2048], *allowed;

		snprintf(name, sizeof(name), "hawkeye_zerod%d", nid);
		pid[nid] = kthread_pid(name);
		ASSERT_LT(0, pid[nid]) TH_LOG("no thread %s", name);
		snprintf(path, sizeof(path), NODE_SYSFS "%d/cpulist", nid);
		ASSERT_EQ(0, read_file(path, cpus, sizeof(cpus)));
		snprintf(path, sizeof(path), "/proc/%d/status", pid[nid]);
		ASSERT_EQ(0, read_file(path, status, sizeof(status)));
		allowed = strstr(status, "Cpus_allowed_list:\t");
		ASSERT_NE(NULL, allowed);
		allowed += strlen("Cpus_allowed_list:\t");
		EXPECT_EQ(0, strncmp(allowed, cpus, strlen(cpus)))
			TH_LOG("%s may run on CPUs %.16s, node %d has %s", name, allowed, nid, cpus);
	}
	/*
	 * Both pools full: they stop growing. Node 1's holds more than the
	 * faults drain; node 0's, whose free memory earlier tests and the
	 * kernel share, only has to be there: it held 494 MB in a
	 * fresh-clone make test, short of the 512 MB asked of
	 * both before.
	 */
	wait_two_pools_full(300);
	EXPECT_LE((long)(len / PAGE_SZ), node_zeroed(0));
	EXPECT_LE(2 * (long)(len / PAGE_SZ), node_zeroed(1));

	before = node_zeroed(1);
	run_us[0] = thread_run_us(pid[0]);
	run_us[1] = thread_run_us(pid[1]);
	ASSERT_LE(0, run_us[0]);
	p = map_aligned(len);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, syscall(SYS_mbind, p, len, MPOL_BIND, &node1, 8 * sizeof(node1), 0));
	/* The faults take node 1's pre-zeroed pages; freed, they are dirty. */
	memset(p, 0xa5, len);
	low = node_zeroed(1);
	munmap(p, len);
	/* Half of what the faults took zeroed again, by node 1's thread. */
	for (t0 = now_s(); now_s() < t0 + 120 && node_zeroed(1) < low + (before - low) / 2;)
		sleep_ms(100);
	run_us[0] = thread_run_us(pid[0]) - run_us[0];
	run_us[1] = thread_run_us(pid[1]) - run_us[1];
	TH_LOG("node 1's pool %ld pages, %ld after 256 MB were dirtied there, %ld %.1f s after they were freed; ran: zerod0 %ld us, zerod1 %ld us",
	       before, low, node_zeroed(1), now_s() - t0, run_us[0], run_us[1]);
	EXPECT_LT(low, before - (long)(len / PAGE_SZ) / 2);
	EXPECT_LE(low + (before - low) / 2, node_zeroed(1));
	EXPECT_LT(0, run_us[1]);
	/*
	 * Node 1's thread did the work. Node 0's is not idle (memory other
	 * tasks free on node 0 meanwhile is its to zero), so it only has to
	 * have done less.
	 */
	EXPECT_LT(run_us[0], run_us[1]);
}

/*
 * Paced zeroing (the default): the rate caps the thread only while another
 * task is runnable on its CPU. Pages zeroed in @secs with dirty memory
 * free, and the back-offs counted meanwhile.
 */
static long zeroed_in(double secs, long *backoffs, double *took)
{
	long z0 = hawkeye_stat("prezero_pages"), b0 = hawkeye_stat("prezero_backoff");
	double t0 = now_s();

	sleep_ms(secs * 1000);
	*took = now_s() - t0;
	*backoffs = hawkeye_stat("prezero_backoff") - b0;
	return hawkeye_stat("prezero_pages") - z0;
}

/* A busy loop on @cpu at normal priority, until killed. */
static pid_t spin_on(int cpu)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	pin_to(cpu);
	for (;;)
		;
}

/*
 * With every CPU busy the paced threads back off: no more than the rate,
 * a back-off counted after the blocks they zero; with the CPUs idle again
 * they zero far beyond the rate.
 */
TEST_F_TIMEOUT(prezero, paced_zeroing_backs_off_for_runnable_work, 300)
{
	const long rate = 2560;	/* pages a second and node: 10 MB/s */
	int cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long busy, idle, backoffs, idle_backoffs, run0 = 0, run = 0;
	pid_t spinner[64], zerod[8];
	double secs, idle_secs;
	int n = nodes();

	ASSERT_GE(64, cpus);
	ASSERT_GE(8, n);
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	dirty_and_free(768 * MB);
	ASSERT_EQ(0, sysfs_write(PREZERO "rate", "2560"));
	ASSERT_EQ(0, sysfs_write(PREZERO "paced", "1"));
	for (int c = 0; c < cpus; c++) {
		spinner[c] = spin_on(c);
		ASSERT_LT(0, spinner[c]);
	}
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	for (int nid = 0; nid < n; nid++) {
		char name[32];

		snprintf(name, sizeof(name), "hawkeye_zerod%d", nid);
		zerod[nid] = kthread_pid(name);
		run0 += thread_run_us(zerod[nid]);
	}
	busy = zeroed_in(4, &backoffs, &secs);
	for (int nid = 0; nid < n; nid++)
		run += thread_run_us(zerod[nid]);
	for (int c = 0; c < cpus; c++) {
		kill(spinner[c], SIGKILL);
		waitpid(spinner[c], NULL, 0);
	}
	idle = zeroed_in(2, &idle_backoffs, &idle_secs);
	TH_LOG("CPUs busy: %ld pages in %.2f s (rate %ld a node), %ld back-offs, zeroing threads ran %ld us; idle: %ld pages in %.2f s, %ld back-offs",
	       busy, secs, rate, backoffs, run - run0, idle, idle_secs, idle_backoffs);
	/* Each node's: one 4 MB block may go before the first back-off. */
	EXPECT_LE(busy, n * ((long)(rate * secs) + 1024));
	/* A block is at most 4 MB: a back-off after each but the last. */
	EXPECT_LE(busy / 1024 - n, backoffs);
	EXPECT_GE(idle, n * 4 * (long)(rate * idle_secs));
}

/* Whether @pid sleeps: the state in /proc/PID/stat. */
static bool sleeping(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return !read_file(path, buf, sizeof(buf)) && (p = strrchr(buf, ')')) && p[1] && p[2] == 'S';
}

/*
 * Paced, a fault that has to zero wakes its node's thread when that one
 * sleeps with nothing to zero (here: its pool at target_mb); unpaced, it
 * waits for the thread's next look. The thread also looks once a second
 * on its own: a burst that began a moment before that look finds the
 * thread awake when the pool runs dry, and wakes nothing. So each burst
 * starts once the thread has refilled the 4 MB pool and gone to sleep (a
 * fixed two seconds between bursts was in step with the look, and in the
 * two-node debug guest all three bursts once woke nothing), faults in one
 * MADV_POPULATE_WRITE call (it drains the pool in milliseconds), and
 * paced bursts repeat, up to five, until one wakes the thread.
 */
TEST_F_TIMEOUT(prezero, paced_fault_wakes_the_idle_thread, 300)
{
	const size_t len = 32 * MB;
	pid_t zerod0;
	long woken[2];

	ASSERT_EQ(0, pin_to(0));
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "never"));
	ASSERT_EQ(0, sysfs_write(PREZERO "target_mb", "4"));
	for (int paced = 0; paced < 2; paced++) {
		long w0, pre0, pre, pool = node_zeroed(0);
		int drains = 0, burst;

		/*
		 * Empty CPU 0's node's pool (default target_mb 0 left it all of
		 * free memory): faults take zeroed blocks first while pre-zeroing
		 * is on, and the thread refills 4 MB only. With it off, zeroed
		 * blocks may be anywhere in the lists and a drain of most of free
		 * memory left 617 MB of them (in CI once).
		 */
		ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
		for (; drains < 4 && node_zeroed(0) >= (long)(len / PAGE_SZ / 2); drains++)
			dirty_and_free((size_t)meminfo_kb("MemFree") * 1024 / 10 * 7);
		TH_LOG("paced %d: node 0's pool %ld pages, %d drains, %ld after", paced, pool,
		       drains, node_zeroed(0));
		ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
		ASSERT_EQ(0, sysfs_write(PREZERO "paced", paced ? "1" : "0"));
		ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
		zerod0 = kthread_pid("hawkeye_zerod0");
		ASSERT_LT(0, zerod0);
		w0 = hawkeye_stat("prezero_woken");
		pre0 = hawkeye_stat("fault_prezeroed_4k");
		for (burst = 0; burst < (paced ? 5 : 3); burst++) {
			char *p;

			if (paced && hawkeye_stat("prezero_woken") > w0)
				break;
			ASSERT_TRUE(wait_zeroed(0, 4, 60));
			for (int t = 0; t < 6000 && !sleeping(zerod0); t++)
				usleep(10 * 1000);
			ASSERT_TRUE(sleeping(zerod0));
			pool = node_zeroed(0);
			ASSERT_GT((long)(len / PAGE_SZ), pool) TH_LOG("node 0's pool: %ld pages", pool);
			p = map_aligned(len);
			ASSERT_NE(NULL, p);
			ASSERT_EQ(0, madvise(p, len, MADV_POPULATE_WRITE));
			EXPECT_EQ(0, fault_and_check(p, len));
			munmap(p, len);
		}
		pre = hawkeye_stat("fault_prezeroed_4k") - pre0;
		woken[paced] = hawkeye_stat("prezero_woken") - w0;
		TH_LOG("paced %d: %d bursts, pool %ld pages, %ld of %zu faults pre-zeroed, thread woken %ld times",
		       paced, burst, pool, pre, burst * len / PAGE_SZ, woken[paced]);
		EXPECT_LT(0, pre);
	}
	EXPECT_EQ(0, woken[0]);
	EXPECT_LT(0, woken[1]);
}

/*
 * Paced, a thread whose CPU is otherwise idle keeps to idle_rate: the
 * memory bandwidth it takes is its node's, and an idle CPU is no limit. What it zeroed in the time measured is bounded
 * from above, which a slower or busier machine only makes easier.
 */
TEST_F_TIMEOUT(prezero, paced_zeroing_keeps_to_its_rates, 300)
{
	const long rate = 2560;		/* 10 MB/s */
	double t0, t;
	long done;

	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	ASSERT_EQ(0, sysfs_write(PREZERO "paced", "1"));
	ASSERT_EQ(0, sysfs_write_long(PREZERO "rate", rate));
	ASSERT_EQ(0, sysfs_write_long(PREZERO "idle_rate", rate));
	/* Most of free memory unzeroed: a free drops the marks. */
	dirty_and_free((size_t)meminfo_kb("MemFree") * 1024 / 10 * 7);
	done = hawkeye_stat("prezero_pages");
	t0 = now_s();
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "1"));
	sleep(3);
	done = hawkeye_stat("prezero_pages") - done;
	t = now_s() - t0;
	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	TH_LOG("%ld pages zeroed in %.2f s at a rate of %ld on each of %d nodes",
	       done, t, rate, nodes());
	/* Each node's thread: its first block (the largest order) is free. */
	EXPECT_GE(nodes() * ((long)(rate * t) + 1024 + 1024), done);
	EXPECT_LT(0, done);
}

/*
 * prezero/fault_clear: each way a 2 MB fault clears a folio that was not
 * pre-zeroed (6.12's, 7.0's sequential one, non-temporal stores) hands out
 * memory that reads zero, every byte, wherever in the 2 MB the fault was.
 */
TEST_F_TIMEOUT(prezero, every_fault_clear_reads_zero, 600)
{
	const size_t len = 32 * MB;
	long thp0;
	char *p;

	ASSERT_EQ(0, sysfs_write(PREZERO "enabled", "0"));
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "always"));
	EXPECT_EQ(EINVAL, sysfs_write(PREZERO "fault_clear", "3"));
	for (int mode = 0; mode < 3; mode++) {
		ASSERT_EQ(0, sysfs_write_long(PREZERO "fault_clear", mode));
		dirty_and_free(2 * len);
		thp0 = vmstat("thp_fault_alloc");
		p = map_aligned(len);
		ASSERT_NE(NULL, p);
		/* The first write of each 2 MB at a different offset. */
		for (size_t i = 0; i < len; i += HPAGE_SZ)
			p[i + (i / HPAGE_SZ * 37 % 512) * PAGE_SZ] = 1;
		EXPECT_EQ(0, fault_and_check(p, len)) TH_LOG("fault_clear %d", mode);
		EXPECT_LE((long)(len / HPAGE_SZ) / 2, vmstat("thp_fault_alloc") - thp0)
			TH_LOG("fault_clear %d: too few THP faults", mode);
		munmap(p, len);
	}
	ASSERT_EQ(0, sysfs_write(PREZERO "fault_clear", "0"));
}

TEST_HARNESS_MAIN
