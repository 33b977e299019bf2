// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye fine-grained promotion (policy hawkeye-g), observed from user
 * space: the hot regions of a process are promoted first (khugepaged, policy
 * linux, goes by address), processes with equal needs are served in turns
 * (khugepaged serves one after the other), processes that exit, unmap,
 * mremap or fork while sampled and promoted, and policy switches meanwhile,
 * lose no data, /proc/<pid>/hawkeye is consistent, and the knobs refuse
 * bad input. Policy hawkeye-pmu, driven through the interface that
 * tools/hawkeye-pmud writes to with values the test chooses: promotions go
 * to the highest measured overhead, none under the threshold, turns for
 * near-ties; without measurements (no PMU here) it works as hawkeye-g and
 * says so, and the daemon exits with its no-PMU status.
 *
 * Which 2 MB region is huge is read from /proc/<pid>/pagemap and
 * /proc/kpageflags (KPF_THP), so that both policies are observed the same
 * way; the hawkeye:hawkeye_promote tracepoint is checked too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

/*
 * Every knob the fixture or a test here changes; the fixture puts them
 * back in reverse order, the policy last.
 */
static const char *const knobs[] = {
	PROMOTE "policy", KHUGEPAGED "scan_sleep_millisecs", KHUGEPAGED "alloc_sleep_millisecs",
	KHUGEPAGED "pages_to_scan", THP_SYSFS "enabled",
	PROMOTE "scan_period_ms", PROMOTE "sample_window_ms", PROMOTE "ema_weight",
	PROMOTE "batch", PROMOTE "sleep_ms", PROMOTE "pmu_threshold", PROMOTE "pmu_band",
	PROMOTE "pmu_ttl_ms", THP_SYSFS "hugepages-64kB/enabled", PROMOTE "best_size",
	PROMOTE "fresh_ms",
};

/* What the fixture sets, in this order. */
static const struct knob_set setup_knobs[] = {
	/* Fast knobs: sample every 2 s for 200 ms, promote every 500 ms. */
	{ PROMOTE "policy", "linux" }, { PROMOTE "sample_window_ms", "200" },
	{ PROMOTE "scan_period_ms", "2000" }, { PROMOTE "sleep_ms", "500" },
	{ PROMOTE "batch", "8" }, { PROMOTE "ema_weight", "50" },
	{ KHUGEPAGED "scan_sleep_millisecs", "500" }, { KHUGEPAGED "pages_to_scan", "4096" },
};

static int set_policy(const char *p)
{
	return sysfs_write(PROMOTE "policy", p);
}

static int set_thp(const char *val)
{
	return sysfs_write(THP_SYSFS "enabled", val);
}

/* Is the 4 KB page at addr of process pid part of a THP? -1: cannot tell. */
static int page_is_thp(int pagemap, int kpageflags, unsigned long addr)
{
	uint64_t ent, flags;

	if (pread(pagemap, &ent, 8, addr / PAGE_SZ * 8) != 8)
		return -1;
	if (!(ent >> 63))
		return 0;
	ent &= (1ULL << 55) - 1;
	if (!ent || pread(kpageflags, &flags, 8, ent * 8) != 8)
		return -1;
	return (flags >> KPF_THP) & 1;
}

/* huge[i]: is region i of the n at base (in pid) huge? Returns how many are. */
/*
 * Which of n regions from base are huge in pid. Read in the order opposite
 * to the promotion order under test (@top_down for khugepaged, which goes
 * by address; bottom up for hawkeye-g, hot top first): a region promoted
 * while we read is then never seen huge while one promoted before it is
 * not, which would fake a broken order.
 */
static int huge_regions(int pid, unsigned long base, int n, bool *huge,
			bool top_down)
{
	char path[64];
	int pm, kf, i, nr = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pm = open(path, O_RDONLY);
	kf = open("/proc/kpageflags", O_RDONLY);
	if (pm < 0 || kf < 0) {
		if (pm >= 0)
			close(pm);
		if (kf >= 0)
			close(kf);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		i = top_down ? n - 1 - k : k;
		huge[i] = page_is_thp(pm, kf, base + i * HPAGE_SZ) == 1;
		nr += huge[i];
	}
	close(pm);
	close(kf);
	return nr;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t checksum(const char *p, size_t len)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < len; i += 8)
		sum = sum * 31 + *(const uint64_t *)(p + i);
	return sum;
}

static void fill(char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(i, seed);
}

static bool intact(const char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] != pattern(i, seed))
			return false;
	return true;
}

static void tracing_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), TRACING "%s", file);
	write_file(path, val);
}

FIXTURE(promote) {};

FIXTURE_SETUP(promote)
{
	if (access(PROMOTE "policy", F_OK))
		SKIP(return, "no HawkEye promotion in this kernel");
	ASSERT_KNOBS_PUSH(knobs, setup_knobs);
}

FIXTURE_TEARDOWN(promote)
{
	set_policy("linux");
	knobs_pop();
	tracing_write("events/hawkeye/enable", "0");
}

TEST_F(promote, bad_input_is_rejected_and_changes_nothing)
{
	static const struct knob_bad bad[] = {
		{ PROMOTE "policy", { "\n", "hawkeye", "[linux]", "linux hawkeye-g", "1" } },
		{ PROMOTE "scan_period_ms",
		  { "0", "-1", "abc", "200", "100", "3600001", "99999999999999999999" } },
		{ PROMOTE "sample_window_ms", { "0", "2000", "5000", "1.5" } },
		{ PROMOTE "ema_weight", { "0", "101", "50%" } },
		{ PROMOTE "batch", { "0", "4097", "\n" } },
		{ PROMOTE "sleep_ms", { "0", "3600001", "x" } },
		{ PROMOTE "pmu_threshold", { "10001", "-1" } },
		{ PROMOTE "pmu_band", { "10001", "2%" } },
		{ PROMOTE "pmu_ttl_ms", { "0", "3600001" } },
		{ PROMOTE "best_size", { "2", "-1", "on" } },
		{ PROMOTE "fresh_ms", { "-1", "3600001", "1s" } },
		{ PROMOTE "measured_overhead", { "1", "1 10001", "1 -2", "x 5", "0 5", "1 5 6" } },
	};
	const char *tail = HAS_BASELINES() ? " ingens freebsd\n" : "\n";
	char after[64], want[64];

	ASSERT_EQ(0, read_file(PROMOTE "policy", after, sizeof(after)));
	snprintf(want, sizeof(want), "[linux] hawkeye-g hawkeye-pmu%s", tail);
	EXPECT_STREQ(want, after);
	/* Without the baselines their names are bad input too. */
	if (!HAS_BASELINES()) {
		EXPECT_EQ(EINVAL, sysfs_write(PROMOTE "policy", "ingens"));
		EXPECT_EQ(EINVAL, sysfs_write(PROMOTE "policy", "freebsd"));
	}
	/* Each refused, and no knob changed (the policy is one of them). */
	EXPECT_REFUSED(bad, knobs);

	/* Good values are taken, edges included. */
	EXPECT_EQ(0, sysfs_write(PROMOTE "ema_weight", "100"));
	EXPECT_EQ(100, sysfs_read_long(PROMOTE "ema_weight"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "ema_weight", "1"));
	EXPECT_EQ(1, sysfs_read_long(PROMOTE "ema_weight"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "batch", "4096"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "sample_window_ms", "1999"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "scan_period_ms", "3600000"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "policy", "hawkeye-g\n"));
	ASSERT_EQ(0, read_file(PROMOTE "policy", after, sizeof(after)));
	snprintf(want, sizeof(want), "linux [hawkeye-g] hawkeye-pmu%s", tail);
	EXPECT_STREQ(want, after);
	EXPECT_EQ(0, sysfs_write(PROMOTE "policy", "hawkeye-pmu"));
	ASSERT_EQ(0, read_file(PROMOTE "policy", after, sizeof(after)));
	snprintf(want, sizeof(want), "linux hawkeye-g [hawkeye-pmu]%s", tail);
	EXPECT_STREQ(want, after);
	EXPECT_EQ(0, sysfs_write(PROMOTE "pmu_threshold", "10000"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "pmu_band", "0"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "pmu_ttl_ms", "1"));
	/* No such process; a kernel thread, which has no memory. */
	EXPECT_EQ(ESRCH, sysfs_write(PROMOTE "measured_overhead", "999999 100"));
	EXPECT_EQ(ESRCH, sysfs_write(PROMOTE "measured_overhead", "2 100"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "policy", "hawkeye-g"));
	EXPECT_EQ(0, sysfs_write(PROMOTE "policy", "linux"));
	ASSERT_EQ(0, read_file(PROMOTE "policy", after, sizeof(after)));
	snprintf(want, sizeof(want), "[linux] hawkeye-g hawkeye-pmu%s", tail);
	EXPECT_STREQ(want, after);
}

/*
 * A child that maps len bytes of base pages (THP off while it faults them),
 * tells the parent where (pipe), waits for a byte, turns on MADV_HUGEPAGE
 * and then touches [hot_lo, hot_hi) of it for ever: at random when random,
 * in sweeps otherwise. With gap_ms, it faults only the first page of each
 * 2 MB region before MADV_HUGEPAGE (a page table, so that the rest fault
 * as base pages), and the rest after, a region every gap_ms: a process
 * initialising its memory while it is sampled.
 */
struct toucher {
	pid_t pid;
	unsigned long base;
	int to_child, from_child;
	int gap_ms;
};

static void toucher_run(size_t len, double hot_lo, double hot_hi, bool random,
			int gap_ms, int in, int out)
{
	char *p = map_aligned(len);
	unsigned long base = (unsigned long)p;
	size_t lo = (size_t)(len * hot_lo) / PAGE_SZ, hi = (size_t)(len * hot_hi) / PAGE_SZ;
	uint64_t s = 88172645463325252ULL ^ getpid();
	char c;

	if (!p)
		_exit(1);
	for (size_t i = 0; i < len; i += gap_ms ? HPAGE_SZ : PAGE_SZ)
		p[i] = 1;
	if (write(out, &base, sizeof(base)) != sizeof(base) || read(in, &c, 1) != 1)
		_exit(1);
	if (madvise(p, len, MADV_HUGEPAGE))
		_exit(1);
	if (write(out, &c, 1) != 1)
		_exit(1);
	for (size_t r = 0; gap_ms && r < len; r += HPAGE_SZ) {
		for (size_t i = PAGE_SZ; i < HPAGE_SZ; i += PAGE_SZ)
			p[r + i] = 1;
		sleep_ms(gap_ms);
	}
	for (;;) {
		if (random) {
			for (int k = 0; k < 4096; k++)
				p[(lo + xorshift(&s) % (hi - lo)) * PAGE_SZ + k % PAGE_SZ]++;
		} else {
			for (size_t i = lo; i < hi; i++)
				p[i * PAGE_SZ + 8]++;
		}
	}
}

static int toucher_start(struct toucher *t, size_t len, double lo, double hi,
			 bool random)
{
	int down[2], up[2];

	if (pipe(down) || pipe(up))
		return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (!t->pid) {
		close(down[1]);
		close(up[0]);
		toucher_run(len, lo, hi, random, t->gap_ms, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	t->to_child = down[1];
	t->from_child = up[0];
	return read(t->from_child, &t->base, sizeof(t->base)) == sizeof(t->base) ? 0 : -1;
}

/* Let it madvise and wait until it has. */
static int toucher_go(struct toucher *t)
{
	char c = 'g';

	if (write(t->to_child, &c, 1) != 1 || read(t->from_child, &c, 1) != 1)
		return -1;
	return 0;
}

static void toucher_stop(struct toucher *t)
{
	if (t->pid <= 0)
		return;
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	close(t->to_child);
	close(t->from_child);
	t->pid = 0;
}

#define HOT_LEN (256 * MB)
#define HOT_N (int)(HOT_LEN / HPAGE_SZ)
#define HOT_FIRST (HOT_N * 3 / 4)	/* the top quarter is hot */

/*
 * Watch the regions of t become huge. order[i]: the poll at which region
 * i was first seen huge (0: never). Stops once want are huge or after
 * timeout_s. Returns the number of polls.
 */
static int watch(struct toucher *t, int want, double timeout_s, int *order,
		 bool top_down)
{
	bool huge[HOT_N];
	double end = now_s() + timeout_s;
	int poll = 0, nr = 0;

	memset(order, 0, sizeof(int) * HOT_N);
	while (nr < want && now_s() < end) {
		poll++;
		nr = huge_regions(t->pid, t->base, HOT_N, huge, top_down);
		if (nr < 0)
			return -1;
		for (int i = 0; i < HOT_N; i++)
			if (huge[i] && !order[i])
				order[i] = poll;
		sleep_ms(50);
	}
	return poll;
}

/*
 * No cold region of @order (the top quarter is hot) was promoted before
 * every hot region was. Returns the poll by which they were (-1: never).
 */
static int expect_hot_first(struct __test_metadata *_metadata, const int *order)
{
	int i, hot_done = 0, cold_first = 0;

	for (i = HOT_FIRST; i < HOT_N; i++) {
		if (!order[i]) {
			hot_done = -1;
			break;
		}
		if (order[i] > hot_done)
			hot_done = order[i];
	}
	EXPECT_GT(hot_done, 0) TH_LOG("not every hot region was promoted");
	for (i = 0; i < HOT_FIRST; i++)
		if (order[i] && (!cold_first || order[i] < cold_first))
			cold_first = order[i];
	if (cold_first)
		EXPECT_GE(cold_first, hot_done)
			TH_LOG("a cold region was promoted at poll %d, hot ones until %d",
			       cold_first, hot_done);
	TH_LOG("hot quarter done by poll %d, first cold at %d", hot_done, cold_first);
	return hot_done;
}

/*
 * Start @t on HOT_LEN, its top quarter hot, under hawkeye-g, with the
 * hawkeye tracepoint @event on and the trace emptied.
 */
static int hot_quarter_start(struct toucher *t, const char *event)
{
	char path[96];

	if (set_thp("never") || toucher_start(t, HOT_LEN, 0.75, 1.0, true))
		return -1;
	snprintf(path, sizeof(path), "events/hawkeye/%s/enable", event);
	tracing_write(path, "1");
	tracing_write("trace", "");
	/* Before MADV_HUGEPAGE, or khugepaged would collapse at once. */
	if (set_policy("hawkeye-g") || set_thp("madvise"))
		return -1;
	return toucher_go(t);
}

TEST_F_TIMEOUT(promote, hawkeye_g_promotes_hot_regions_first, 240)
{
	struct toucher t = {};
	int order[HOT_N], polls;
	char line[512], want[32];
	FILE *f;
	int seen = 0, bad = 0, pid;

	ASSERT_EQ(0, hot_quarter_start(&t, "hawkeye_promote"));
	pid = t.pid;

	polls = watch(&t, HOT_N - HOT_FIRST + 8, 120, order, false);
	ASSERT_GT(polls, 0);
	tracing_write("events/hawkeye/hawkeye_promote/enable", "0");
	toucher_stop(&t);
	expect_hot_first(_metadata, order);

	/* The tracepoint agrees: the first promotions of t are hot ones. */
	f = fopen(TRACING "trace", "r");
	if (!f)
		SKIP(return, "no tracefs");
	snprintf(want, sizeof(want), "pid=%d ", pid);
	while (fgets(line, sizeof(line), f) && seen < HOT_N - HOT_FIRST) {
		char *a = strstr(line, "hawkeye_promote: ");
		unsigned long addr;
		int result;

		if (!a || !strstr(a, want))
			continue;
		a = strstr(a, "addr=");
		if (!a || sscanf(a, "addr=%lx bucket=%*u ema=%*u measured=%*d result=%d",
				 &addr, &result) != 2)
			continue;
		if (result)
			continue;
		seen++;
		if ((addr - t.base) / HPAGE_SZ < HOT_FIRST)
			bad++;
	}
	fclose(f);
	EXPECT_GT(seen, 0) TH_LOG("no hawkeye_promote event for pid %d", pid);
	EXPECT_EQ(0, bad) TH_LOG("%d of the first %d promotions were cold", bad, seen);
	TH_LOG("hawkeye-g: %d hawkeye_promote events", seen);
}

/*
 * A process that registers and then writes its memory, a region at a
 * time, while it is sampled window after window (fresh_ms), before it uses
 * the top quarter: the pages it maps during a window are not counted as
 * accessed, so the regions it was writing do not rank hot, and none of
 * them is promoted before the hot ones. The hawkeye_sample tracepoint
 * shows the pages taken out.
 */
TEST_F_TIMEOUT(promote, hawkeye_g_does_not_take_population_for_use, 240)
{
	struct toucher t = { .gap_ms = 40 };
	int order[HOT_N], seen = 0, populated = 0, pid;
	char line[512], want[32];
	FILE *f;

	ASSERT_EQ(0, sysfs_write_long(PROMOTE "fresh_ms", 120000));
	/* Only the samples that took pages out: they fit the trace buffer. */
	tracing_write("events/hawkeye/hawkeye_sample/filter", "populated > 0");
	ASSERT_EQ(0, hot_quarter_start(&t, "hawkeye_sample"));
	pid = t.pid;

	ASSERT_GT(watch(&t, HOT_N - HOT_FIRST, 120, order, false), 0);
	tracing_write("events/hawkeye/hawkeye_sample/enable", "0");
	tracing_write("events/hawkeye/hawkeye_sample/filter", "0");
	toucher_stop(&t);
	EXPECT_GT(expect_hot_first(_metadata, order), 0);

	f = fopen(TRACING "trace", "r");
	if (!f)
		SKIP(return, "no tracefs");
	snprintf(want, sizeof(want), "pid=%d ", pid);
	while (fgets(line, sizeof(line), f)) {
		char *a = strstr(line, "hawkeye_sample: ");
		unsigned int n;

		a = a && strstr(a, want) ? strstr(a, "populated=") : NULL;
		if (!a || sscanf(a, "populated=%u", &n) != 1)
			continue;
		seen++;
		populated += n;
	}
	fclose(f);
	TH_LOG("%d samples took out %d pages mapped during their windows",
	       seen, populated);
	EXPECT_GT(populated, 0);
}

TEST_F_TIMEOUT(promote, linux_promotes_lowest_address_first, 240)
{
	struct toucher t = {};
	int order[HOT_N], first = 0, i;

	ASSERT_EQ(0, set_thp("never"));
	ASSERT_EQ(0, toucher_start(&t, HOT_LEN, 0.75, 1.0, true));
	ASSERT_EQ(0, set_thp("madvise"));
	ASSERT_EQ(0, toucher_go(&t));

	ASSERT_GT(watch(&t, 1, 120, order, true), 0);
	toucher_stop(&t);
	for (i = 0; i < HOT_N; i++)
		if (order[i] && (!first || order[i] < first))
			first = order[i];
	ASSERT_GT(first, 0) TH_LOG("khugepaged promoted nothing");
	/* What was first seen huge is a prefix: khugepaged goes by address. */
	EXPECT_EQ(first, order[0]);
	for (i = 1; i < HOT_N; i++)
		if (order[i] == first)
			EXPECT_EQ(first, order[i - 1]);
}

#define FAIR_LEN (64 * MB)
#define FAIR_KB (long)(FAIR_LEN / 1024)

/*
 * Three identical processes that sweep all their memory. Returns in
 * spread_kb the largest difference of their AnonHugePages seen, in
 * partial the largest number of them partly promoted at once.
 */
/* Is the measured_overhead of pid "none"? */
static bool measured_none(int pid)
{
	char path[64], line[128];
	bool none = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/hawkeye", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		none |= !strcmp(line, "measured_overhead none\n");
	fclose(f);
	return none;
}

static int measure(int pid, int bp)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d %d", pid, bp);
	return sysfs_write(PROMOTE "measured_overhead", buf);
}

static int fairness(struct __test_metadata *_metadata, const char *policy,
		    const int *measured, long *spread_kb, int *partial)
{
	struct toucher t[3] = {};
	double end;
	long kb[3];
	int i, done = 0;

	*spread_kb = 0;
	*partial = 0;
	if (set_thp("never"))
		return -1;
	for (i = 0; i < 3; i++)
		if (toucher_start(&t[i], FAIR_LEN, 0, 1.0, false))
			return -1;
	/* Before MADV_HUGEPAGE, or khugepaged would collapse at once. */
	if (set_policy(policy) || set_thp("madvise"))
		return -1;
	for (i = 0; i < 3; i++)
		if (toucher_go(&t[i]) || (measured && measure(t[i].pid, measured[i])))
			return -1;
	/* A loaded host makes khugepaged slow: up to 200 s of the test's 300. */
	end = now_s() + 200;
	while (done < 3 && now_s() < end) {
		long lo = FAIR_KB, hi = 0;
		int part = 0;

		done = 0;
		for (i = 0; i < 3; i++) {
			kb[i] = rollup_kb(t[i].pid, "AnonHugePages");
			lo = kb[i] < lo ? kb[i] : lo;
			hi = kb[i] > hi ? kb[i] : hi;
			part += kb[i] > 0 && kb[i] < FAIR_KB;
			done += kb[i] == FAIR_KB;
		}
		if (hi - lo > *spread_kb)
			*spread_kb = hi - lo;
		if (part > *partial)
			*partial = part;
		sleep_ms(50);
	}
	TH_LOG("%s: AnonHugePages %ld %ld %ld kB, largest spread %ld kB, most partly promoted %d",
	       policy, kb[0], kb[1], kb[2], *spread_kb, *partial);
	for (i = 0; i < 3; i++)
		toucher_stop(&t[i]);
	return done == 3 ? 0 : 1;
}

TEST_F_TIMEOUT(promote, hawkeye_g_serves_processes_in_turns, 300)
{
	long spread, batch_kb = sysfs_read_long(PROMOTE "batch") * (HPAGE_SZ / 1024);
	int partial;

	ASSERT_EQ(0, fairness(_metadata, "hawkeye-g", NULL, &spread, &partial));
	EXPECT_LE(spread, batch_kb);
	EXPECT_GE(partial, 2);
}

TEST_F_TIMEOUT(promote, linux_serves_processes_one_after_another, 300)
{
	long spread;
	int partial;

	ASSERT_EQ(0, fairness(_metadata, "linux", NULL, &spread, &partial));
	EXPECT_LE(partial, 1);
	EXPECT_EQ(FAIR_KB, spread);
}

/* hawkeye-pmu: near-ties (within pmu_band) take turns as under hawkeye-g. */
TEST_F_TIMEOUT(promote, hawkeye_pmu_near_ties_take_turns, 300)
{
	static const int measured[3] = { 3000, 2950, 2990 };
	long spread, batch_kb = sysfs_read_long(PROMOTE "batch") * (HPAGE_SZ / 1024);
	int partial;

	ASSERT_EQ(0, sysfs_write_long(PROMOTE "pmu_ttl_ms", 600000));
	ASSERT_EQ(0, fairness(_metadata, "hawkeye-pmu", measured, &spread, &partial));
	EXPECT_LE(spread, batch_kb);
	EXPECT_GE(partial, 2);
}

/* Has the AnonHugePages of pid stayed at kb for ms? */
static bool stays(int pid, long kb, long ms)
{
	for (long t = 0; t < ms; t += 100) {
		if (rollup_kb(pid, "AnonHugePages") != kb)
			return false;
		sleep_ms(100);
	}
	return true;
}

/*
 * The paper's Table 9: two processes with the same access coverage, A at
 * 60% measured MMU overhead, B at 0.5%. A gets every promotion; once A is
 * measured under the 2% threshold it gets no more, and B, still under it,
 * gets none either; B gets them once measured above it. A process that
 * exits while it is the one chosen leaves the others served.
 */
TEST_F_TIMEOUT(promote, hawkeye_pmu_promotes_for_the_highest_measured_overhead, 300)
{
	struct toucher a = {}, b = {}, c = {};
	long kb_a, step_kb = sysfs_read_long(PROMOTE "batch") * (HPAGE_SZ / 1024);
	double end;
	int pid;

	ASSERT_EQ(0, sysfs_write_long(PROMOTE "pmu_ttl_ms", 600000));
	ASSERT_EQ(0, set_thp("never"));
	ASSERT_EQ(0, toucher_start(&a, FAIR_LEN, 0, 1.0, false));
	ASSERT_EQ(0, toucher_start(&b, FAIR_LEN, 0, 1.0, false));
	ASSERT_EQ(0, set_policy("hawkeye-pmu"));
	ASSERT_EQ(0, set_thp("madvise"));
	ASSERT_EQ(0, toucher_go(&a));
	ASSERT_EQ(0, toucher_go(&b));
	ASSERT_EQ(0, measure(a.pid, 6000));
	ASSERT_EQ(0, measure(b.pid, 50));
	EXPECT_EQ(60, proc_hawkeye(a.pid, "measured_overhead"));
	EXPECT_FALSE(measured_none(a.pid));

	/* A is served, B never, while A is above the threshold. */
	end = now_s() + 60;
	do {
		kb_a = rollup_kb(a.pid, "AnonHugePages");
		ASSERT_EQ(0, rollup_kb(b.pid, "AnonHugePages"));
		sleep_ms(50);
	} while (kb_a < 2 * step_kb && now_s() < end);
	ASSERT_GE(kb_a, 2 * step_kb) TH_LOG("A got %ld kB in 60 s", kb_a);
	ASSERT_LT(kb_a, FAIR_KB);

	/* A measured under the threshold: nobody gets anything. */
	ASSERT_EQ(0, measure(a.pid, 150));
	/* A batch may be under way (seconds under load): let it end. */
	end = now_s() + 30;
	do
		kb_a = rollup_kb(a.pid, "AnonHugePages");
	while (!stays(a.pid, kb_a, 1000) && now_s() < end);
	EXPECT_TRUE(stays(a.pid, kb_a, 3000));
	EXPECT_EQ(0, rollup_kb(b.pid, "AnonHugePages"));
	EXPECT_GT(proc_hawkeye(b.pid, "regions"), 0);

	/* B above it: B is served; A, still under it, is not. */
	ASSERT_EQ(0, measure(b.pid, 3000));
	end = now_s() + 60;
	while (rollup_kb(b.pid, "AnonHugePages") < 2 * step_kb && now_s() < end)
		sleep_ms(50);
	EXPECT_GE(rollup_kb(b.pid, "AnonHugePages"), 2 * step_kb);
	EXPECT_EQ(kb_a, rollup_kb(a.pid, "AnonHugePages"));

	/*
	 * C, the highest, exits while chosen: B is served again. B is held
	 * under the threshold while C starts (which takes seconds), so that
	 * it still has regions left to promote when C goes.
	 */
	ASSERT_EQ(0, measure(b.pid, 150));
	ASSERT_EQ(0, set_thp("never"));
	ASSERT_EQ(0, toucher_start(&c, FAIR_LEN, 0, 1.0, false));
	ASSERT_EQ(0, set_thp("madvise"));
	ASSERT_EQ(0, toucher_go(&c));
	ASSERT_EQ(0, measure(c.pid, 9000));
	end = now_s() + 60;
	while (!rollup_kb(c.pid, "AnonHugePages") && now_s() < end)
		sleep_ms(20);
	EXPECT_GT(rollup_kb(c.pid, "AnonHugePages"), 0);
	ASSERT_EQ(0, measure(b.pid, 3000));
	kb_a = rollup_kb(b.pid, "AnonHugePages");
	ASSERT_LT(kb_a, FAIR_KB) TH_LOG("B has no region left to promote");
	pid = c.pid;
	toucher_stop(&c);
	EXPECT_EQ(ESRCH, measure(pid, 100));
	end = now_s() + 60;
	while (rollup_kb(b.pid, "AnonHugePages") == kb_a && now_s() < end)
		sleep_ms(50);
	EXPECT_GT(rollup_kb(b.pid, "AnonHugePages"), kb_a);

	/* The data of both are intact: the touchers kept running. */
	EXPECT_EQ(0, kill(a.pid, 0));
	EXPECT_EQ(0, kill(b.pid, 0));
	toucher_stop(&a);
	toucher_stop(&b);
}

/*
 * No PMU (these VMs): tools/hawkeye-pmud says so and exits 3; hawkeye-pmu
 * then promotes as hawkeye-g, says so once in the kernel log, and
 * /proc/<pid>/hawkeye shows no measurement. A measurement older than
 * pmu_ttl_ms counts as none.
 */
TEST_F_TIMEOUT(promote, hawkeye_pmu_without_measurements_works_as_hawkeye_g, 240)
{
	static const char notice[] = "hawkeye-pmu: no MMU overhead measurements";
	char exe[PATH_MAX], cmd[PATH_MAX + 16], line[256];
	int order[HOT_N], hot = 0, polls, rc;
	ssize_t n;
	struct toucher t = {};
	FILE *f;

	/* The daemon: built next to the guest tests (tests/run.py). */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
	ASSERT_GT(n, 0);
	exe[n] = 0;	/* readlink() does not terminate it */
	strcpy(strrchr(exe, '/'), "/../hawkeye-pmud");
	snprintf(cmd, sizeof(cmd), "%s --once 2>&1", exe);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	line[0] = 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	rc = pclose(f);
	TH_LOG("hawkeye-pmud: %s", line);
	ASSERT_TRUE(WIFEXITED(rc));
	EXPECT_EQ(3, WEXITSTATUS(rc)) TH_LOG("hawkeye-pmud said: %s", line);
	EXPECT_NE(NULL, strstr(line, "no hardware PMU"));

	ASSERT_EQ(0, system("dmesg -C"));
	ASSERT_EQ(0, set_thp("never"));
	ASSERT_EQ(0, toucher_start(&t, HOT_LEN, 0.75, 1.0, true));
	ASSERT_EQ(0, set_policy("hawkeye-pmu"));
	ASSERT_EQ(0, set_thp("madvise"));
	ASSERT_EQ(0, toucher_go(&t));
	/* A measurement that expires at once is none. */
	ASSERT_EQ(0, sysfs_write_long(PROMOTE "pmu_ttl_ms", 1));
	ASSERT_EQ(0, measure(t.pid, 9000));
	sleep_ms(20);
	EXPECT_TRUE(measured_none(t.pid));

	polls = watch(&t, HOT_N / 4, 120, order, false);
	toucher_stop(&t);
	ASSERT_GT(polls, 0);
	/* As hawkeye-g: the hot quarter goes first. */
	for (int i = 0; i < HOT_N; i++)
		if (order[i] && i >= HOT_FIRST)
			hot++;
		else if (order[i])
			TH_LOG("cold region %d promoted at poll %d", i, order[i]);
	EXPECT_EQ(HOT_N / 4, hot);

	f = popen("dmesg", "r");
	ASSERT_NE(NULL, f);
	rc = 0;
	while (fgets(line, sizeof(line), f))
		rc += !!strstr(line, notice);
	pclose(f);
	EXPECT_EQ(1, rc) TH_LOG("'%s' said %d times", notice, rc);
}

/* Children that change their address space while sampled and promoted. */
static int churn_child(int kind, double secs)
{
	size_t len = 32 * MB;
	unsigned int seed = getpid();
	double end = now_s() + secs;
	char *p = map_aligned(len), *q;
	uint64_t sum;
	int rounds = 0;

	if (!p)
		return 1;
	fill(p, len, seed);
	madvise(p, len, MADV_HUGEPAGE);
	sum = checksum(p, len);
	while (now_s() < end) {
		switch (kind) {
		case 0:		/* touch, check */
			for (size_t i = 0; i < len; i += PAGE_SZ)
				(void)*(volatile char *)(p + i);
			break;
		case 1:		/* map, fill, unmap */
			q = map_aligned(8 * MB);
			if (!q)
				return 1;
			madvise(q, 8 * MB, MADV_HUGEPAGE);
			fill(q, 8 * MB, seed + rounds);
			if (!intact(q, 8 * MB, seed + rounds))
				return 2;
			munmap(q, 8 * MB);
			/* And punch a hole into the long-lived one. */
			if (rounds % 2 == 1) {
				size_t off = 4 * MB + PAGE_SZ;

				madvise(p + off, PAGE_SZ, MADV_DONTNEED);
				for (size_t j = off; j < off + PAGE_SZ; j++)
					p[j] = pattern(j, seed);
			}
			break;
		case 2:		/* mremap to elsewhere */
			q = map_aligned(len);
			if (!q)
				return 1;
			p = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, q);
			if (p == MAP_FAILED)
				return 3;
			break;
		case 3: {	/* fork, both sides check and write */
			pid_t c = fork();
			int st;

			if (!c) {
				if (checksum(p, len) != sum)
					_exit(4);
				p[rounds * PAGE_SZ % len] ^= 0x5a;
				_exit(0);
			}
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
			    WEXITSTATUS(st))
				return 5;
			break;
		}
		}
		if (checksum(p, len) != sum)
			return 6;
		rounds++;
	}
	return intact(p, len, seed) ? 0 : 7;
}

TEST_F_TIMEOUT(promote, exit_munmap_mremap_fork_and_switches_lose_nothing, 300)
{
	pid_t kids[12];
	int i, st, nr = 0;
	double end;

	ASSERT_EQ(0, sysfs_write_long(PROMOTE "sample_window_ms", 50));
	ASSERT_EQ(0, sysfs_write_long(PROMOTE "scan_period_ms", 300));
	ASSERT_EQ(0, sysfs_write_long(PROMOTE "sleep_ms", 100));
	ASSERT_EQ(0, set_thp("madvise"));
	ASSERT_EQ(0, set_policy("hawkeye-g"));
	for (i = 0; i < 12; i++) {
		kids[i] = fork();
		ASSERT_GE(kids[i], 0);
		if (!kids[i])
			_exit(churn_child(i % 4, 4 + i % 5));
		nr++;
	}
	/* Switch policies under them, and let some of them be killed. */
	end = now_s() + 8;
	for (i = 0; now_s() < end; i++) {
		set_policy(i % 2 ? "hawkeye-g" : "linux");
		sleep_ms(150 + 70 * (i % 3));
	}
	set_policy("hawkeye-g");
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(kids[i], waitpid(kids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("child %d (kind %d): status 0x%x", i, i % 4, st);
	}
	/* Killed while sampled: also fine. */
	for (i = 0; i < 4; i++) {
		kids[i] = fork();
		ASSERT_GE(kids[i], 0);
		if (!kids[i])
			_exit(churn_child(i, 60));
	}
	sleep_ms(1500);
	for (i = 0; i < 4; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	EXPECT_GT(hawkeye_stat("promote_sampled"), 0);
}

TEST_F_TIMEOUT(promote, proc_pid_hawkeye_is_consistent, 120)
{
	static const char *const keys[] = {
		"policy", "regions", "bucket0", "bucket1", "bucket2", "bucket3",
		"bucket4", "bucket5", "bucket6", "bucket7", "bucket8", "bucket9",
		"overhead", "skipped_cold", "best_size", "measured_overhead", "huge",
		"idle_huge", "ingens_metric", "samples", "promotions", "promote_failed",
		"debloat_splits",
	};
	struct toucher t = {};
	char path[64], line[128], word[32];
	long v[NR(keys)], sum = 0;
	double end;
	unsigned int i;
	FILE *f;

	/* Promotion made slow: the map is still full when read. */
	ASSERT_EQ(0, sysfs_write_long(PROMOTE "sleep_ms", 600000));
	ASSERT_EQ(0, set_thp("never"));
	ASSERT_EQ(0, toucher_start(&t, 32 * MB, 0.5, 1.0, false));
	ASSERT_EQ(0, set_policy("hawkeye-g"));
	ASSERT_EQ(0, set_thp("madvise"));
	ASSERT_EQ(0, toucher_go(&t));
	end = now_s() + 30;
	while (proc_hawkeye(t.pid, "samples") < 2 && now_s() < end)
		sleep_ms(100);

	snprintf(path, sizeof(path), "/proc/%d/hawkeye", t.pid);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	for (i = 0; i < NR(keys); i++) {
		/* The baselines' lines, only where they are built. */
		if (!HAS_BASELINES() && i >= 16 && i <= 18) {
			v[i] = 0;
			continue;
		}
		ASSERT_NE(NULL, fgets(line, sizeof(line), f));
		if (i == 0) {
			ASSERT_EQ(0, strcmp(line, "policy hawkeye-g\n")) TH_LOG("%s", line);
			continue;
		}
		if (i == 14) {
			ASSERT_EQ(0, strncmp(line, "best_size", 9)) TH_LOG("%s", line);
			continue;
		}
		if (i == 15) {
			ASSERT_EQ(0, strcmp(line, "measured_overhead none\n")) TH_LOG("%s", line);
			continue;
		}
		ASSERT_EQ(2, sscanf(line, "%31s %ld", word, &v[i]));
		ASSERT_STREQ(keys[i], word);
	}
	EXPECT_EQ(NULL, fgets(line, sizeof(line), f));
	fclose(f);
	for (i = 2; i < 12; i++)
		sum += v[i];
	EXPECT_EQ(v[1], sum);
	EXPECT_EQ(16, v[1]);		/* 32 MB, none huge yet */
	EXPECT_GE(v[19], 2);
	EXPECT_EQ(0, v[20]);
	EXPECT_EQ(0, v[22]);		/* bloat recovery is off */
	/* Its record holds an access map, no baseline state: those read 0. */
	EXPECT_EQ(0, v[16]);
	EXPECT_EQ(0, v[17]);
	EXPECT_EQ(0, v[18]);
	/* The swept half is hot, the rest cold: 8 regions high, 8 in bucket 0. */
	EXPECT_EQ(8, v[2]);
	EXPECT_GE(v[12], 8 * 256);
	EXPECT_LE(v[12], 8 * 512);
	/*
	 * The cold half's page tables were not walked in the windows: each
	 * count walk read no PTE of those 8 regions (x86 marks tables
	 * accessed), and the hot half's were read.
	 */
	EXPECT_GE(v[13], 8 * (v[19] - 1));
	EXPECT_LE(v[13], 2 * 8 * v[19]);
	toucher_stop(&t);

	/* A process without THP, and the policy shown as it is. */
	EXPECT_EQ(0, proc_hawkeye(1, "regions"));
	ASSERT_EQ(0, set_policy("linux"));
	f = fopen("/proc/self/hawkeye", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	EXPECT_STREQ("policy linux\n", line);
	fclose(f);
}

/*
 * Map four 2 MB regions of promotable base pages and write, until killed,
 * region 0 whole, in region 1 every other 64 KB piece whole, in region 2
 * every other page, region 3 not at all.
 */
static int touch_shapes(void)
{
	char *p = map_promotable(4 * HPAGE_SZ);

	if (!p)
		return 1;
	for (unsigned int n = 1;; n++) {
		for (size_t i = 0; i < HPAGE_SZ; i += PAGE_SZ)
			p[i] = n;
		for (size_t i = 0; i < HPAGE_SZ; i += PAGE_SZ)
			if (i / (64 * 1024) % 2 == 0)
				p[HPAGE_SZ + i] = n;
		for (size_t i = 0; i < HPAGE_SZ; i += 2 * PAGE_SZ)
			p[2 * HPAGE_SZ + i] = n;
	}
	return 0;
}

/*
 * A child running touch_shapes() under hawkeye-g, 64 KB mTHP enabled; the
 * policy is set before the child maps its regions, so that khugepaged
 * leaves them alone. Returns its pid, or -1.
 */
static pid_t start_shapes(void)
{
	pid_t pid;

	if (sysfs_write(THP_SYSFS "hugepages-64kB/enabled", "always") ||
	    set_thp("madvise") || set_policy("hawkeye-g"))
		return -1;
	pid = fork();
	if (!pid)
		_exit(touch_shapes());
	return pid;
}

/*
 * /proc/<pid>/hawkeye's best_size: from the sampled accessed bits, 2 MB
 * for the region in full use, 64 KB (enabled) for the one used in whole
 * 64 KB pieces, 4 KB for the scattered one and the unused one.
 */
TEST_F_TIMEOUT(promote, best_size_follows_the_use, 120)
{
	char path[64], line[128];
	double end;
	pid_t pid;
	FILE *f;

	/* Sampling only: promotion would take the regions out of the map. */
	ASSERT_EQ(0, sysfs_write_long(PROMOTE "sleep_ms", 600000));
	pid = start_shapes();
	ASSERT_GT(pid, 0);
	end = now_s() + 60;
	while (proc_hawkeye(pid, "samples") < 3 && now_s() < end)
		sleep_ms(100);
	snprintf(path, sizeof(path), "/proc/%d/hawkeye", pid);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f) && strncmp(line, "best_size", 9))
		;
	fclose(f);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_STREQ("best_size 2048kB:1 64kB:1 4kB:2\n", line);
}

/*
 * promote/best_size: on, hawkeye-g collapses only the region whose use
 * asks for 2 MB; the regions best at 64 KB or 4 KB are left as they are,
 * and counted at every sample. Turned off, the used ones are collapsed
 * too, as hawkeye-g does by default.
 */
TEST_F_TIMEOUT(promote, best_size_leaves_smaller_regions_alone, 180)
{
	long smaller = hawkeye_stat("promote_smaller"), samples;
	double end = now_s() + 120;
	pid_t pid;

	ASSERT_EQ(0, sysfs_write(PROMOTE "best_size", "1"));
	pid = start_shapes();
	ASSERT_GT(pid, 0);
	while (rollup_kb(pid, "AnonHugePages") < 2048 && now_s() < end)
		sleep_ms(100);
	/* Three more samples, and promotion rounds between them. */
	samples = proc_hawkeye(pid, "samples");
	while (proc_hawkeye(pid, "samples") < samples + 3 && now_s() < end)
		sleep_ms(100);
	EXPECT_EQ(2048, rollup_kb(pid, "AnonHugePages"));
	/* Regions 1 to 3 at each of those samples at least. */
	EXPECT_GE(hawkeye_stat("promote_smaller") - smaller, 9);
	TH_LOG("best_size 1: AnonHugePages %ld kB, %ld samples left a region out",
	       rollup_kb(pid, "AnonHugePages"),
	       hawkeye_stat("promote_smaller") - smaller);

	/* Regions 1 and 2 at least (khugepaged's rules may refuse 3, unused). */
	ASSERT_EQ(0, sysfs_write(PROMOTE "best_size", "0"));
	while (rollup_kb(pid, "AnonHugePages") < 3 * 2048 && now_s() < end)
		sleep_ms(100);
	EXPECT_LE(3 * 2048, rollup_kb(pid, "AnonHugePages"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * promote/fresh_ms: for its first fresh_ms a newly registered process is
 * sampled window after window, alone. With a scan period of a minute (one
 * full pass at the switch to hawkeye-g, the next long after the test), a
 * process started with fresh_ms 0 gets no sample in 3 s; with fresh_ms
 * 3000 one gets several in 3 s, and one registered earlier (fresh no
 * more) gets none meanwhile.
 */
TEST_F_TIMEOUT(promote, fresh_processes_are_sampled_window_after_window, 120)
{
	pid_t plain, old, fresh;
	long old_samples, got[3];

	ASSERT_EQ(0, sysfs_write_long(PROMOTE "sleep_ms", 600000));
	ASSERT_EQ(0, sysfs_write_long(PROMOTE "scan_period_ms", 60000));
	ASSERT_EQ(0, sysfs_write_long(PROMOTE "fresh_ms", 0));
	ASSERT_EQ(0, set_thp("madvise"));
	ASSERT_EQ(0, set_policy("hawkeye-g"));
	sleep_ms(500);		/* the switch's full pass is over */
	plain = fork();
	if (!plain)
		_exit(touch_shapes());
	sleep(3);
	got[0] = proc_hawkeye(plain, "samples");

	ASSERT_EQ(0, sysfs_write_long(PROMOTE "fresh_ms", 3000));
	old = fork();
	if (!old)
		_exit(touch_shapes());
	sleep(5);		/* fresh for 3 s, then no more */
	old_samples = proc_hawkeye(old, "samples");
	fresh = fork();
	if (!fresh)
		_exit(touch_shapes());
	sleep(3);
	got[1] = proc_hawkeye(fresh, "samples");
	got[2] = proc_hawkeye(old, "samples");
	for (int i = 0; i < 3; i++) {
		pid_t pid = i == 0 ? plain : i == 1 ? old : fresh;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	TH_LOG("samples in 3 s: fresh_ms 0: %ld; fresh_ms 3000: %ld (the process registered 5 s before: %ld, then %ld)",
	       got[0], got[1], old_samples, got[2]);
	EXPECT_EQ(0, got[0]);
	EXPECT_LE(3, old_samples);
	EXPECT_LE(3, got[1]);
	EXPECT_EQ(old_samples, got[2]);
}

TEST_HARNESS_MAIN
