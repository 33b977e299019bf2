// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection (debug kernel): slab allocations and huge page
 * allocations fail at random in HawkEye's kernel threads and in a process
 * that keeps forking, then allocations of every order in the threads
 * alone, while pre-zeroing, bloat recovery and promotion all run and the
 * policy changes under them. Nothing may crash (vm-run reads
 * the console) or leak (make test's kmemleak scan at the end of the boot),
 * every process still alive is registered again once allocations succeed,
 * and the counters of the failures move.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

#define DEBUGFS "/sys/kernel/debug/"
#define KEPT 4			/* children kept alive through the injection */
#define WORK_MB 32

static int fault_attr(const char *what, const char *attr, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), DEBUGFS "%s/%s", what, attr);
	return sysfs_write(path, val);
}

/*
 * @what (failslab or fail_page_alloc) fails @pct percent of the
 * allocations of tasks marked make-it-fail, wherever they are made.
 */
static int inject(const char *what, const char *pct)
{
	static const char *const attrs[][2] = {
		{ "interval", "1" }, { "times", "-1" }, { "verbose", "0" },
		{ "space", "0" }, { "task-filter", "Y" }, { "ignore-gfp-wait", "N" },
		{ "require-start", "0" }, { "require-end", "18446744073709551615" },
		{ "reject-start", "0" }, { "reject-end", "0" },
	};

	for (unsigned int i = 0; i < NR(attrs); i++)
		if (fault_attr(what, attrs[i][0], attrs[i][1]))
			return -1;
	return fault_attr(what, "probability", pct);
}

static int make_it_fail(pid_t pid, bool on)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/make-it-fail", pid);
	return sysfs_write(path, on ? "1" : "0");
}

/* Marks HawkEye's threads as they are now (a policy switch makes anew). */
static int mark_threads(bool on)
{
	static const char *const names[] = {
		"hawkeye_zerod0", "hawkeye_zerod1", "hawkeye_debloatd", "hawkeye_promoted",
	};
	int marked = 0;

	for (unsigned int i = 0; i < NR(names); i++) {
		pid_t pid = kthread_pid(names[i]);

		marked += pid && !make_it_fail(pid, on);
	}
	return marked;
}

/*
 * The forking process: maps WORK_MB for promotion, then, marked so that
 * its forks and faults fail too, forks children that touch it and exit,
 * keeping KEPT of them alive, for @secs; reports the kept children's pids
 * on @out, then waits for SIGKILL. The mapping is made before the marking
 * (marked, it failed in 19 of 300 tries): without it the process, and
 * every child, stays out of khugepaged and HawkEye, and the test has
 * nothing to watch.
 */
static void forker(int out, double secs)
{
	char *p = map_promotable(WORK_MB * MB);
	pid_t kept[KEPT] = { 0 };
	double end;
	int n = 0;

	if (!p)
		_exit(1);
	make_it_fail(getpid(), true);
	for (end = now_s() + secs; now_s() < end;) {
		pid_t pid = fork();

		if (pid < 0)
			continue;	/* failed for want of memory: on */
		if (!pid) {
			for (size_t i = 0; i < WORK_MB * MB; i += PAGE_SZ)
				p[i]++;
			if (n % 16)
				_exit(0);
			for (;;)
				pause();
		}
		/* The newest are kept: born when registration always fails. */
		if (n % 16 == 0) {
			if (kept[n / 16 % KEPT])
				kill(kept[n / 16 % KEPT], SIGKILL);
			kept[n / 16 % KEPT] = pid;
		}
		n++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	if (write(out, kept, sizeof(kept)) != sizeof(kept))
		_exit(1);
	for (;;)
		pause();
}

FIXTURE(faults) {};

/* Every knob the fixture changes; it puts them back. */
static const char *const knobs[] = {
	PROMOTE "policy", THP_SYSFS "enabled", PREZERO "rate", PREZERO "enabled",
	DEBLOAT "low_pct", DEBLOAT "high_pct", DEBLOAT "enabled",
	PROMOTE "sample_window_ms", PROMOTE "scan_period_ms", PROMOTE "sleep_ms",
};

/* What the fixture sets, in this order (the policy last). */
static const struct knob_set setup_knobs[] = {
	{ THP_SYSFS "enabled", "madvise" }, { PREZERO "rate", "0" }, { PREZERO "enabled", "1" },
	/* Memory in use is always above 2 %: recovery never stops. */
	{ DEBLOAT "low_pct", "1" }, { DEBLOAT "high_pct", "2" }, { DEBLOAT "enabled", "1" },
	{ PROMOTE "sample_window_ms", "100" }, { PROMOTE "scan_period_ms", "500" },
	{ PROMOTE "sleep_ms", "100" }, { PROMOTE "policy", "hawkeye-g" },
};

FIXTURE_SETUP(faults)
{
	if (access(DEBUGFS "fail_page_alloc", F_OK))
		SKIP(return, "no fault injection (CONFIG_FAIL_PAGE_ALLOC)");
	ASSERT_KNOBS_PUSH(knobs, setup_knobs);
}

FIXTURE_TEARDOWN(faults)
{
	fault_attr("failslab", "probability", "0");
	fault_attr("fail_page_alloc", "probability", "0");
	mark_threads(false);
	sysfs_write(PROMOTE "policy", "linux");
	sysfs_write(DEBLOAT "enabled", "0");
	sysfs_write(PREZERO "enabled", "0");
	knobs_pop();
}

TEST_F_TIMEOUT(faults, failing_allocations_crash_nothing_and_unregister_no_one, 400)
{
	/* The baselines first, where they are built: hawkeye-g stays last. */
	static const char *const policies[] = { "ingens", "freebsd", "hawkeye-pmu", "hawkeye-g" };
	const int first = HAS_BASELINES() ? 0 : 2, nr_policies = NR(policies) - first;
	long register_failed = hawkeye_stat("promote_register_failed");
	long promote_failed = hawkeye_stat("promote_failed");
	const double secs = 40;
	pid_t pid, kept[KEPT];
	bool aimed = false;
	int fds[2], i;
	double end;

	ASSERT_EQ(0, pipe(fds));
	/* 2 % of slab allocations fail: most forks get through. */
	ASSERT_EQ(0, inject("failslab", "2"));
	/* Half the huge page allocations: promotion and THP faults. */
	ASSERT_EQ(0, inject("fail_page_alloc", "50"));
	ASSERT_EQ(0, fault_attr("fail_page_alloc", "min-order", "9"));
	ASSERT_EQ(0, fault_attr("fail_page_alloc", "ignore-gfp-highmem", "N"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		forker(fds[1], secs);
	/* The policy changes every 5 s: its thread is made anew, marked again. */
	for (i = 0, end = now_s() + secs; now_s() < end; i++) {
		/*
		 * For the last 10 s or so every registration at fork fails:
		 * chance alone may fail none, and the newest children kept
		 * are left for the thread to register.
		 */
		if (!aimed && now_s() >= end - 12) {
			ASSERT_EQ(0, failslab_aim("__khugepaged_enter"));
			aimed = true;
		}
		EXPECT_LE(3, mark_threads(true));
		sleep(5);
		if (i % 2)
			sysfs_write(PROMOTE "policy", policies[first + i / 2 % nr_policies]);
	}
	ASSERT_EQ(sizeof(kept), read(fds[0], kept, sizeof(kept)));
	/*
	 * Then allocations of every order fail, a tenth of them, in the
	 * threads only (a forking process failing base page faults would
	 * only meet the OOM killer): page tables of a split or a collapse.
	 */
	make_it_fail(pid, false);
	ASSERT_EQ(0, fault_attr("fail_page_alloc", "min-order", "0"));
	ASSERT_EQ(0, fault_attr("fail_page_alloc", "probability", "10"));
	ASSERT_EQ(0, inject("failslab", "10"));
	for (end = now_s() + 15; now_s() < end; sleep(5))
		EXPECT_LE(3, mark_threads(true));
	fault_attr("failslab", "probability", "0");
	fault_attr("fail_page_alloc", "probability", "0");
	mark_threads(false);
	ASSERT_EQ(0, sysfs_write(PROMOTE "policy", "hawkeye-g"));

	TH_LOG("registrations failed: %ld, promotions failed: %ld",
	       hawkeye_stat("promote_register_failed") - register_failed,
	       hawkeye_stat("promote_failed") - promote_failed);
	EXPECT_LT(register_failed, hawkeye_stat("promote_register_failed"));
	EXPECT_LT(promote_failed, hawkeye_stat("promote_failed"));
	/*
	 * Everyone alive is sampled again, whatever failed on the way: within
	 * 90 s in all (a sample pass takes a second or two in the KASAN guest;
	 * with another guest beside it, as in CI, several times that).
	 */
	end = now_s() + 90;
	for (i = 0; i < KEPT; i++) {
		long samples = 0;

		if (!kept[i])
			continue;
		for (; samples < 1 && now_s() < end; sleep_ms(200))
			samples = proc_hawkeye(kept[i], "samples");
		EXPECT_LE(1, samples) TH_LOG("child %d never sampled", kept[i]);
		kill(kept[i], SIGKILL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST_HARNESS_MAIN
