// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye bloat recovery, observed from user space: under memory pressure
 * mostly-zero huge pages are split and their zero-filled subpages given
 * back, nothing written is lost (also while writers race the splits),
 * memory that must be left alone is, recovery stops below the low
 * watermark and never starts below the high one, khugepaged does not
 * collapse a recovered range back while memory is tight (and does once it
 * is free), the process whose huge pages are least
 * used goes first, and the knobs refuse bad input.
 *
 * The watermarks are set relative to the guest's memory use at the time,
 * so that a few hundred MB of huge pages are enough to cross them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include "hawkeye_test.h"

#define SUBPAGES (HPAGE_SZ / PAGE_SZ)
/* The mTHP size the tests of mTHP recovery enable: 64 KB. */
#define MTHP_ENABLED THP_SYSFS "hugepages-64kB/enabled"
#define MTHP_SUBPAGES 16
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_ZERO_PAGE 24

/* The fixture saves these; the first five are recovery's own. */
static const char *const knobs[] = {
	DEBLOAT "enabled", DEBLOAT "high_pct", DEBLOAT "low_pct", DEBLOAT "threshold",
	DEBLOAT "rate",
	KHUGEPAGED "scan_sleep_millisecs", KHUGEPAGED "alloc_sleep_millisecs",
	KHUGEPAGED "pages_to_scan", KHUGEPAGED "max_ptes_none", THP_SYSFS "enabled",
	DEBLOAT "psi_pct", DEBLOAT "mthp", MTHP_ENABLED,
};
#define NR_DEBLOAT_KNOBS 5

/* What the fixture sets, in this order. */
static const struct knob_set setup_knobs[] = {
	{ THP_SYSFS "enabled", "always" }, { DEBLOAT "enabled", "0" },
	{ DEBLOAT "threshold", "256" },
	/* The watermarks alone: PSI would start recovery at low_pct. */
	{ DEBLOAT "psi_pct", "0" }, { DEBLOAT "mthp", "0" }, { MTHP_ENABLED, "never" },
};

enum { SCANNED, SPLIT, FREED, BYTES, NR_COUNTERS };
static const char *const counter_names[NR_COUNTERS] = {
	"debloat_thp_scanned", "debloat_thp_split",
	"debloat_zero_pages_freed", "debloat_bytes_read",
};

/* Both watermarks, written in the order that keeps low < high throughout. */
static int set_watermarks(long high, long low)
{
	if (low < sysfs_read_long(DEBLOAT "high_pct"))
		return sysfs_write_long(DEBLOAT "low_pct", low) ?: sysfs_write_long(DEBLOAT "high_pct", high);
	return sysfs_write_long(DEBLOAT "high_pct", high) ?: sysfs_write_long(DEBLOAT "low_pct", low);
}

/* Memory in use as the kernel defines it: MemTotal - MemAvailable, in %. */
static double in_use_pct(void)
{
	double total = meminfo_kb("MemTotal");

	return 100.0 * (total - meminfo_kb("MemAvailable")) / total;
}

static void read_counters(long *c)
{
	for (int i = 0; i < NR_COUNTERS; i++)
		c[i] = hawkeye_stat(counter_names[i]);
}

/* Every 10th subpage (counted from the start of the mapping) is in use. */
static bool written(size_t subpage)
{
	return subpage % 10 == 0;
}

static size_t nr_written(size_t len)
{
	return (len / PAGE_SZ + 9) / 10;
}

static void fill_subpage(char *p, size_t subpage, unsigned int seed)
{
	for (size_t j = 0; j < PAGE_SZ; j++)
		p[subpage * PAGE_SZ + j] = pattern(subpage * PAGE_SZ + j, seed);
}

/*
 * len bytes of huge pages, every 10th subpage filled with a pattern, the
 * rest never written: about 90% bloat. NULL if it is not all huge.
 */
static char *map_bloat(size_t len, unsigned int seed)
{
	char *p = map_aligned(len);

	if (!p)
		return NULL;
	madvise(p, len, MADV_HUGEPAGE);
	for (size_t s = 0; s < len / PAGE_SZ; s++)
		if (written(s))
			fill_subpage(p, s, seed);
	if (smaps_kb(p, "AnonHugePages") != (long)(len >> 10)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/*
 * Subpages of a mapping whose contents are not what was written: the
 * pattern of @seed in those that @is_written picks, zero in the others.
 */
static size_t check_written(const char *p, size_t len, unsigned int seed,
			    bool (*is_written)(size_t subpage))
{
	static const char zero[PAGE_SZ];
	size_t bad = 0;

	for (size_t s = 0; s < len / PAGE_SZ; s++) {
		const char *sp = p + s * PAGE_SZ;

		if (!is_written(s)) {
			bad += !!memcmp(sp, zero, PAGE_SZ);
			continue;
		}
		for (size_t j = 0; j < PAGE_SZ; j++)
			if (sp[j] != (char)pattern(s * PAGE_SZ + j, seed)) {
				bad++;
				break;
			}
	}
	return bad;
}

/* Subpages of a map_bloat() mapping whose contents are not what was written. */
static size_t check_bloat(const char *p, size_t len, unsigned int seed)
{
	return check_written(p, len, seed, written);
}

/* Wait until the AnonHugePages of the mapping at p are at most (at least) kb. */
static bool wait_huge(void *p, long kb, bool at_least, double timeout)
{
	double end = now_s() + timeout;
	long huge;

	do {
		huge = smaps_kb(p, "AnonHugePages");
		if (at_least ? huge >= kb : huge <= kb)
			return true;
		usleep(100 * 1000);
	} while (now_s() < end);
	return false;
}

static bool wait_huge_kb(void *p, long kb, double timeout)
{
	return wait_huge(p, kb, false, timeout);
}

/*
 * Recovery on, at once and for good: the high watermark at 1%, the low one
 * at 0, so that it goes on examining everything until disabled (also
 * across enable/disable cycles: a thread starts idle until above high).
 */
static int start_recovery(long rate)
{
	return set_watermarks(1, 0) ?: sysfs_write_long(DEBLOAT "rate", rate) ?:
	       sysfs_write(DEBLOAT "enabled", "1");
}

/*
 * A child that, once told to, maps and fills len bytes of 4 KB pages, then
 * waits to die. It is forked before the memory under test is mapped, so
 * that it does not share those huge pages (which recovery leaves alone).
 */
struct allocator {
	pid_t pid;
	int go, done;
};

static int start_allocator(struct allocator *a, size_t len)
{
	int go[2], done[2];
	char c;

	if (pipe(go) || pipe(done))
		return -1;
	a->pid = fork();
	if (a->pid == 0) {
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		madvise(p, len, MADV_NOHUGEPAGE);
		memset(p, 0x5a, len);
		if (write(done[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(go[0]);
	close(done[1]);
	a->go = go[1];
	a->done = done[0];
	return a->pid < 0 ? -1 : 0;
}

/* Let the allocator allocate; 0 once it has. */
static int allocator_go(struct allocator *a)
{
	char c;

	if (write(a->go, "x", 1) != 1 || read(a->done, &c, 1) != 1)
		return -1;
	return 0;
}

static void stop_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

FIXTURE(debloat) {};

FIXTURE_SETUP(debloat)
{
	ASSERT_KNOBS_PUSH(knobs, setup_knobs);
}

#define SPLIT_EVENT TRACING "events/hawkeye/hawkeye_debloat_split/enable"

FIXTURE_TEARDOWN(debloat)
{
	sysfs_write(DEBLOAT "enabled", "0");	/* no round with half-restored knobs */
	knobs_pop();
	write_file(SPLIT_EVENT, "0");
}

/* hawkeye_debloat_split events in [@p, @p + @len) from order @from to @to. */
static long split_events(const char *p, size_t len, unsigned int from,
			 unsigned int to)
{
	unsigned int f, t;
	unsigned long addr;
	char line[512];
	const char *at;
	long nr = 0;
	FILE *trace = fopen(TRACING "trace", "r");

	if (!trace)
		return -1;
	while (fgets(line, sizeof(line), trace)) {
		at = strstr(line, "hawkeye_debloat_split:");
		at = at ? strstr(at, "addr=") : NULL;
		if (at && sscanf(at, "addr=0x%lx order=%u to=%u", &addr, &f, &t) == 3 &&
		    addr >= (unsigned long)p && addr < (unsigned long)p + len &&
		    f == from && t == to)
			nr++;
	}
	fclose(trace);
	return nr;
}

TEST_F(debloat, bad_input_is_rejected_and_changes_nothing)
{
	static const char *const bad[] = { "-1", "abc", "1x", " ", "99999999999999999999" };
	long before[NR_DEBLOAT_KNOBS];

	for (size_t k = 0; k < NR_DEBLOAT_KNOBS; k++) {
		before[k] = sysfs_read_long(knobs[k]);
		for (size_t b = 0; b < NR(bad); b++) {
			EXPECT_EQ(EINVAL, sysfs_write(knobs[k], bad[b])) {
				TH_LOG("%s accepted '%s'", knobs[k], bad[b]);
			}
			EXPECT_EQ(before[k], sysfs_read_long(knobs[k]));
		}
	}
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "enabled", "2"));
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "high_pct", "101"));
	EXPECT_EQ(EINVAL, sysfs_write_long(DEBLOAT "high_pct", before[2]));	/* = low */
	EXPECT_EQ(EINVAL, sysfs_write_long(DEBLOAT "high_pct", before[2] - 1));	/* < low */
	EXPECT_EQ(EINVAL, sysfs_write_long(DEBLOAT "low_pct", before[1]));	/* = high */
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "low_pct", "100"));
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "threshold", "0"));
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "threshold", "513"));
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "rate", "1048577"));
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "mthp", "2"));
	EXPECT_EQ(EINVAL, sysfs_write(DEBLOAT "mthp", "-1"));
	EXPECT_EQ(0, sysfs_read_long(DEBLOAT "mthp"));
	for (size_t k = 0; k < NR_DEBLOAT_KNOBS; k++) {
		EXPECT_EQ(before[k], sysfs_read_long(knobs[k]));
	}

	/* The bounds themselves are fine. */
	EXPECT_EQ(0, sysfs_write(DEBLOAT "threshold", "512"));
	EXPECT_EQ(0, sysfs_write(DEBLOAT "threshold", "1"));
	EXPECT_EQ(0, sysfs_write(DEBLOAT "rate", "1048576"));
	EXPECT_EQ(0, set_watermarks(100, 99));
	EXPECT_EQ(0, set_watermarks(1, 0));
	EXPECT_EQ(1, sysfs_read_long(DEBLOAT "high_pct"));
	EXPECT_EQ(0, sysfs_read_long(DEBLOAT "low_pct"));
}

/*
 * The main scenario: a process with 256 MB of 90% empty huge pages, then
 * a second process pushes memory use over the high watermark.
 */
TEST_F_TIMEOUT(debloat, recovers_zero_subpages_under_pressure, 180)
{
	const size_t len = 256 * MB;
	long c0[NR_COUNTERS], c1[NR_COUNTERS], rss, want, high;
	struct allocator alloc;
	double before;
	size_t bad;
	char *p;

	/* 8% of memory, enough to cross the high watermark set below. */
	ASSERT_EQ(0, start_allocator(&alloc, meminfo_kb("MemTotal") * 1024 / 100 * 8));
	p = map_bloat(len, 1);
	ASSERT_NE(NULL, p);
	read_counters(c0);

	/* Enabled, but below the high watermark: nothing happens. */
	before = in_use_pct();
	high = (long)before + 4;
	ASSERT_EQ(0, set_watermarks(high, 0));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "rate", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "1"));
	sleep(3);
	read_counters(c1);
	EXPECT_EQ(c0[SCANNED], c1[SCANNED]);
	EXPECT_EQ(len >> 10, (size_t)smaps_kb(p, "AnonHugePages"));

	/* A second process allocates: memory use goes over the high watermark. */
	ASSERT_EQ(0, allocator_go(&alloc));
	TH_LOG("in use %.1f%% before the allocation, high watermark %ld%%", before, high);
	EXPECT_TRUE(wait_huge_kb(p, 0, 120)) {
		TH_LOG("%ld kB still huge", smaps_kb(p, "AnonHugePages"));
	}
	stop_child(alloc.pid);
	read_counters(c1);

	/* RSS is about the written part: the zero part was given back. */
	rss = smaps_kb(p, "Rss");
	want = nr_written(len) * PAGE_SZ / 1024;
	TH_LOG("Rss %ld kB (written %ld kB, mapped %zu kB); scanned %ld split %ld freed %ld read %ld B",
	       rss, want, len >> 10, c1[SCANNED] - c0[SCANNED], c1[SPLIT] - c0[SPLIT],
	       c1[FREED] - c0[FREED], c1[BYTES] - c0[BYTES]);
	EXPECT_GE(rss, want);
	EXPECT_LE(rss, want + 2048);
	EXPECT_GE(c1[SPLIT] - c0[SPLIT], (long)(len / HPAGE_SZ));
	EXPECT_GE(c1[FREED] - c0[FREED], (long)(len / PAGE_SZ - nr_written(len)));
	EXPECT_GE(c1[SCANNED] - c0[SCANNED], (long)(len / HPAGE_SZ));
	/* A split THP: at least threshold zero subpages read whole. */
	EXPECT_GE(c1[BYTES] - c0[BYTES], (long)(len / HPAGE_SZ * 256 * PAGE_SZ));

	/* Every written byte is intact, every other byte reads zero. */
	EXPECT_EQ(0, check_bloat(p, len, 1));

	/* Later writes to the given-back subpages work and stay. */
	for (size_t s = 0; s < len / PAGE_SZ; s++)
		if (!written(s))
			p[s * PAGE_SZ + 123] = (char)(s | 1);
	bad = 0;
	for (size_t s = 0; s < len / PAGE_SZ; s++)
		if (!written(s) && p[s * PAGE_SZ + 123] != (char)(s | 1))
			bad++;
	EXPECT_EQ(0, bad);
	EXPECT_GE(smaps_kb(p, "Rss"), (long)(len >> 10) - 2048);
	munmap(p, len);
}

TEST_F_TIMEOUT(debloat, nothing_split_below_high_or_when_off, 60)
{
	const size_t len = 64 * MB;
	long c0[NR_COUNTERS], c1[NR_COUNTERS], cur;
	char *p;

	p = map_bloat(len, 2);
	ASSERT_NE(NULL, p);
	cur = (long)in_use_pct();
	read_counters(c0);

	/* Below both watermarks. */
	ASSERT_EQ(0, set_watermarks(cur + 6, cur + 3));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "rate", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "1"));
	sleep(3);
	/* Between them, the thread idle: it needs the high one to start. */
	ASSERT_EQ(0, set_watermarks(cur + 3, cur > 3 ? cur - 3 : 0));
	sleep(3);
	/* Above the high watermark, but off: stock behaviour. */
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));
	ASSERT_EQ(0, set_watermarks(cur > 2 ? cur - 2 : 1, 0));
	sleep(3);
	read_counters(c1);
	for (int i = 0; i < NR_COUNTERS; i++) {
		EXPECT_EQ(c0[i], c1[i]) {
			TH_LOG("%s moved", counter_names[i]);
		}
	}
	EXPECT_EQ(len >> 10, (size_t)smaps_kb(p, "AnonHugePages"));
	EXPECT_EQ(0, check_bloat(p, len, 2));
	munmap(p, len);
}

/* Three of every four subpages written: a quarter zero-filled. */
static bool three_in_four(size_t subpage)
{
	return subpage % 4 != 0;
}

/*
 * Recovery off ends the episode that was running: on again, a new one
 * starts only above high_pct, however low low_pct is. The episode here
 * never ends by itself (low_pct 0) and has lowered its bar to the floor;
 * had it survived, it would split the quarter-zero huge pages mapped after
 * (the floor is threshold / 8), which the machine's threshold, all that
 * reclaim's shrinker applies without an episode, leaves whole.
 */
TEST_F_TIMEOUT(debloat, off_ends_the_episode, 120)
{
	const size_t len = 32 * MB;
	long threshold, split0;
	char *p, *q;
	double end;

	threshold = sysfs_read_long(DEBLOAT "threshold");
	/* q below the threshold, above its floor. */
	ASSERT_LT(HPAGE_SZ / PAGE_SZ / 4, threshold);
	p = map_bloat(len, 4);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, start_recovery(0));
	ASSERT_TRUE(wait_huge_kb(p, 0, 60));
	/* Full passes that leave memory "tight" halve the bar to its floor. */
	end = now_s() + 60;
	while (sysfs_read_long(DEBLOAT "current_threshold") > threshold / 8 && now_s() < end)
		usleep(100 * 1000);
	ASSERT_EQ(threshold / 8, sysfs_read_long(DEBLOAT "current_threshold"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));

	q = map_aligned(len);
	ASSERT_NE(NULL, q);
	madvise(q, len, MADV_HUGEPAGE);
	for (size_t sp = 0; sp < len / PAGE_SZ; sp++)
		if (three_in_four(sp))
			fill_subpage(q, sp, 5);
	ASSERT_EQ((long)(len >> 10), smaps_kb(q, "AnonHugePages"));
	ASSERT_EQ(0, set_watermarks(100, 1));
	ASSERT_LE(1.0, in_use_pct());
	split0 = hawkeye_stat("debloat_thp_split");
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "1"));
	/* A surviving episode splits q in its first round. */
	EXPECT_FALSE(wait_huge(q, (long)(len >> 10) - 2048, false, 10)) {
		TH_LOG("%ld kB of %zu still huge: an episode ran on", smaps_kb(q, "AnonHugePages"),
		       len >> 10);
	}
	EXPECT_EQ(split0, hawkeye_stat("debloat_thp_split"));
	EXPECT_EQ(0, check_written(q, len, 5, three_in_four));
	munmap(q, len);
	munmap(p, len);
}

TEST_F_TIMEOUT(debloat, stops_below_low_watermark, 120)
{
	const size_t len = 256 * MB;
	long c0[NR_COUNTERS], c1[NR_COUNTERS], c2[NR_COUNTERS], low, huge;
	double end;
	char *p;

	p = map_bloat(len, 3);
	ASSERT_NE(NULL, p);
	read_counters(c0);
	/* About 4% of memory (80 MB of the 230 MB zero part) to give back. */
	low = (long)in_use_pct() - 4;
	ASSERT_EQ(0, set_watermarks(low + 3, low));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "rate", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "1"));
	end = now_s() + 60;
	while (in_use_pct() >= low && now_s() < end)
		usleep(100 * 1000);
	ASSERT_LT(in_use_pct(), low);
	sleep(2);
	read_counters(c1);
	sleep(4);
	read_counters(c2);
	huge = smaps_kb(p, "AnonHugePages");
	TH_LOG("in use %.1f%% (low %ld%%): split %ld THPs, %ld kB still huge",
	       in_use_pct(), low, c2[SPLIT] - c0[SPLIT], huge);
	EXPECT_GT(c1[SPLIT], c0[SPLIT]);
	/* It stopped: not all was split, and it is idle now. */
	EXPECT_GT(huge, 0);
	EXPECT_EQ(c1[SCANNED], c2[SCANNED]);
	EXPECT_EQ(0, check_bloat(p, len, 3));
	munmap(p, len);
}

/*
 * Writers race the splits. Each subpage has one writer, which logs its
 * writes in order; afterwards every subpage must be what its log says.
 */
#define WRITERS 3
#define LOG_MAX 200000

struct write_rec {
	uint32_t subpage;
	uint32_t seq;
	uint16_t off;
	uint8_t val;
};

struct writer {
	pthread_t thread;
	int id;
	char *p;
	size_t nr_subpages;
	volatile bool *stop;
	const char *split_counter;	/* counts the folios split */
	size_t unit;			/* subpages a folio */
	long split0;
	struct write_rec *log;
	size_t nr;
};

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void writer_write(struct writer *w, size_t s, uint32_t *rnd)
{
	struct write_rec *r = &w->log[w->nr];

	r->subpage = s;
	r->seq = w->nr;
	r->off = xorshift(rnd) % PAGE_SZ;
	r->val = xorshift(rnd) % 255 + 1;
	w->p[s * PAGE_SZ + r->off] = r->val;
	w->nr++;
}

/*
 * Writers 0 and 1 write random subpages (those with s % 3 == id) at a
 * modest rate; writer 2 (s % 3 == 2) writes into the folios (THPs or
 * mTHPs) the thread is about to split, going by the split counter, at
 * most an eighth of their subpages' worth of writes each so that they
 * stay worth splitting.
 */
static void *writer_fn(void *arg)
{
	struct writer *w = arg;
	size_t nr_thp = w->nr_subpages / w->unit;
	uint32_t rnd = 0x9e3779b9u * (w->id + 1);
	unsigned char *front = calloc(nr_thp, 1);

	while (!*w->stop && w->nr < LOG_MAX) {
		size_t s;

		if (w->id < 2) {
			s = xorshift(&rnd) % (w->nr_subpages / 3) * 3 + w->id;
			writer_write(w, s, &rnd);
			usleep(5000);
			continue;
		}
		s = hawkeye_stat(w->split_counter) - w->split0 + xorshift(&rnd) % 2;
		if (s >= nr_thp || front[s] >= w->unit / 8) {
			usleep(1000);
			continue;
		}
		front[s]++;
		s = s * w->unit + xorshift(&rnd) % (w->unit / 3) * 3;
		s += (2 - s % 3 + 3) % 3;
		if (s < w->nr_subpages)
			writer_write(w, s, &rnd);
	}
	free(front);
	return NULL;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct write_rec *x = a, *y = b;

	if (x->subpage != y->subpage)
		return x->subpage < y->subpage ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Wait until HawkEye's @counter is at least @n, up to @timeout seconds. */
static bool wait_stat(const char *counter, long n, double timeout)
{
	double end = now_s() + timeout;

	while (hawkeye_stat(counter) < n && now_s() < end)
		usleep(100 * 1000);
	return hawkeye_stat(counter) >= n;
}

/*
 * The writers race recovery over @p, a map_bloat() (-like) mapping of
 * folios of @unit subpages that @split_counter counts the splits of.
 */
static void writers_race_recovery(struct __test_metadata *_metadata, char *p,
				  size_t len, const char *split_counter,
				  size_t unit)
{
	const size_t nr_subpages = len / PAGE_SZ;
	struct writer w[WRITERS];
	volatile bool stop = false;
	long split0, split1, split2;
	size_t total = 0, bad = 0, all;
	struct write_rec *recs;
	char *expect;

	split0 = hawkeye_stat(split_counter);
	for (int i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .id = i, .p = p, .nr_subpages = nr_subpages,
					.stop = &stop, .split0 = split0,
					.split_counter = split_counter, .unit = unit };
		w[i].log = malloc(LOG_MAX * sizeof(*w[i].log));
		ASSERT_NE(NULL, w[i].log);
		/* The logs are not what is being tested: keep them in 4 KB pages. */
		madvise(w[i].log, LOG_MAX * sizeof(*w[i].log), MADV_NOHUGEPAGE);
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, writer_fn, &w[i]));
	}

	/* Phase 1: recovery at 8 THPs (or PTE tables) a second. */
	ASSERT_EQ(0, start_recovery(8));
	sleep(6);
	split1 = hawkeye_stat(split_counter);
	/* Phase 2: enable/disable cycles under load. */
	for (int i = 0; i < 8; i++) {
		ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", i % 2 ? "1" : "0"));
		usleep(i % 2 ? 1500 * 1000 : 300 * 1000);
	}
	ASSERT_EQ(0, sysfs_write(DEBLOAT "rate", "0"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "1"));
	sleep(3);
	stop = true;
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i].thread, NULL);
	/* Most folios are still worth splitting after the writes. */
	EXPECT_TRUE(wait_stat(split_counter, split0 + (long)(nr_subpages / unit / 2), 60));
	split2 = hawkeye_stat(split_counter);
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));

	for (int i = 0; i < WRITERS; i++)
		total += w[i].nr;
	TH_LOG("%zu/%zu/%zu writes; folios split: %ld in phase 1, %ld in all",
	       w[0].nr, w[1].nr, w[2].nr, split1 - split0, split2 - split0);
	EXPECT_GT(split1 - split0, 4);
	EXPECT_GT(w[2].nr, 0);

	/* Replay the logs, subpage by subpage, in each writer's order. */
	recs = malloc(total * sizeof(*recs));
	ASSERT_NE(NULL, recs);
	all = 0;
	for (int i = 0; i < WRITERS; i++) {
		memcpy(recs + all, w[i].log, w[i].nr * sizeof(*recs));
		all += w[i].nr;
	}
	qsort(recs, total, sizeof(*recs), rec_cmp);
	expect = malloc(PAGE_SZ);
	ASSERT_NE(NULL, expect);
	for (size_t s = 0, r = 0; s < nr_subpages; s++) {
		if (written(s))
			for (size_t j = 0; j < PAGE_SZ; j++)
				expect[j] = pattern(s * PAGE_SZ + j, 4);
		else
			memset(expect, 0, PAGE_SZ);
		for (; r < total && recs[r].subpage == s; r++)
			expect[recs[r].off] = recs[r].val;
		if (memcmp(expect, p + s * PAGE_SZ, PAGE_SZ) && !bad++)
			TH_LOG("subpage %zu differs from its writes", s);
	}
	EXPECT_EQ(0, bad);
	free(expect);
	free(recs);
	for (int i = 0; i < WRITERS; i++)
		free(w[i].log);
}

TEST_F_TIMEOUT(debloat, concurrent_writers_keep_every_write, 180)
{
	const size_t len = 128 * MB;
	char *p = map_bloat(len, 4);

	ASSERT_NE(NULL, p);
	writers_race_recovery(_metadata, p, len, "debloat_thp_split", SUBPAGES);
	munmap(p, len);
}

/*
 * The order of the folio that maps @addr (0 for a base page), if @addr is
 * its first page; -1 for the zero page, -2 if it is not the first page or
 * not mapped.
 */
static int folio_order_at(char *addr)
{
	uint64_t pfn = pfn_of(0, (unsigned long)addr), f = kpageflags(pfn);
	int order = 0;

	if (!pfn)
		return -2;
	if (f & (1ULL << KPF_ZERO_PAGE))
		return -1;
	if (f & (1ULL << KPF_COMPOUND_TAIL))
		return -2;
	if (!(f & (1ULL << KPF_COMPOUND_HEAD)))
		return 0;
	while (order < 9 && (kpageflags(pfn + (1UL << order)) & (1ULL << KPF_COMPOUND_TAIL)))
		order++;
	return order;
}

/*
 * map_bloat() in 64 KB mTHPs (THP off, 64 KB on): every 10th subpage
 * written, every 64 KB folio worth splitting. NULL if a piece is no mTHP.
 */
static char *map_bloat_mthp(size_t len, unsigned int seed)
{
	char *p;

	if (sysfs_write(THP_SYSFS "enabled", "never") || sysfs_write(MTHP_ENABLED, "always"))
		return NULL;
	p = map_aligned(len);
	if (!p)
		return NULL;
	for (size_t s = 0; s < len / PAGE_SZ; s++)
		if (written(s))
			fill_subpage(p, s, seed);
	for (size_t off = 0; off < len; off += MTHP_SUBPAGES * PAGE_SZ)
		if (folio_order_at(p + off) != 4) {
			munmap(p, len);
			return NULL;
		}
	return p;
}

TEST_F_TIMEOUT(debloat, concurrent_writers_keep_every_write_mthp, 180)
{
	const size_t len = 32 * MB;
	char *p = map_bloat_mthp(len, 4);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, sysfs_write(DEBLOAT "mthp", "1"));
	writers_race_recovery(_metadata, p, len, "debloat_mthp_split", MTHP_SUBPAGES);
	munmap(p, len);
}

/*
 * mTHPs that PTE tables map: with debloat/mthp off recovery leaves them
 * alone; on, it splits every one (each is mostly zero) and Rss drops to
 * the subpages written, which read back.
 */
TEST_F_TIMEOUT(debloat, recovers_mthp_folios, 120)
{
	const size_t len = 32 * MB, folios = len / PAGE_SZ / MTHP_SUBPAGES;
	long split0 = hawkeye_stat("debloat_mthp_split"), freed0, rss0, split1;
	char *p = map_bloat_mthp(len, 5);

	ASSERT_NE(NULL, p);
	rss0 = smaps_kb(p, "Rss");
	ASSERT_EQ(0, start_recovery(0));
	sleep(3);
	split1 = hawkeye_stat("debloat_mthp_split");
	EXPECT_EQ(split0, split1);
	EXPECT_EQ(rss0, smaps_kb(p, "Rss"));

	freed0 = hawkeye_stat("debloat_zero_pages_freed");
	ASSERT_EQ(0, sysfs_write(DEBLOAT "mthp", "1"));
	EXPECT_TRUE(wait_stat("debloat_mthp_split", split1 + (long)folios, 60));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));
	TH_LOG("Rss %ld -> %ld kB (written %zu kB); mTHPs split %ld, zero pages freed %ld",
	       rss0, smaps_kb(p, "Rss"), nr_written(len) * 4, hawkeye_stat("debloat_mthp_split") - split1,
	       hawkeye_stat("debloat_zero_pages_freed") - freed0);
	EXPECT_EQ(rss0, (long)(len >> 10));
	/* Zero pages count in Rss: only the written subpages are memory. */
	EXPECT_EQ((long)(len / PAGE_SZ - nr_written(len)),
		  hawkeye_stat("debloat_zero_pages_freed") - freed0);
	EXPECT_EQ(0, check_bloat(p, len, 5));
	munmap(p, len);
}

/*
 * Split to the largest dense size: 2 MB pages whose 64 KB pieces are dense
 * (all written), nearly empty (one subpage written) or empty. With
 * debloat/mthp on and 64 KB enabled, the dense pieces stay 64 KB folios, the
 * others become base pages and zero pages; with it off all become base
 * pages. Every byte reads back either way.
 */
static bool piece_dense(size_t piece)
{
	return piece % 4 == 0;
}

static bool piece_subpage_written(size_t s)
{
	size_t piece = s / MTHP_SUBPAGES;

	return piece_dense(piece) || (piece % 4 == 1 && s % MTHP_SUBPAGES == 3);
}

TEST_F_TIMEOUT(debloat, splits_to_the_largest_dense_size, 180)
{
	const size_t len = 8 * MB, pieces = len / PAGE_SZ / MTHP_SUBPAGES;
	for (int mthp = 1; mthp >= 0; mthp--) {
		long split0 = hawkeye_stat("debloat_thp_split");
		long msplit0 = hawkeye_stat("debloat_mthp_split");
		long freed0 = hawkeye_stat("debloat_zero_pages_freed");
		long nr_anon0 = sysfs_read_long(THP_SYSFS "hugepages-64kB/stats/nr_anon");
		size_t kept = 0, base = 0, zeros = 0, bad = 0;
		char *p = map_aligned(len);

		ASSERT_NE(NULL, p);
		madvise(p, len, MADV_HUGEPAGE);
		for (size_t s = 0; s < len / PAGE_SZ; s++)
			if (piece_subpage_written(s))
				fill_subpage(p, s, 9);
		ASSERT_EQ(len >> 10, smaps_kb(p, "AnonHugePages"));
		/*
		 * madvise, not always: nr_anon is global, and with always any
		 * other process's fault may add a 64 KB folio to it (CI once
		 * counted 33 of 32).
		 */
		ASSERT_EQ(0, sysfs_write(MTHP_ENABLED, "madvise"));
		ASSERT_EQ(0, sysfs_write_long(DEBLOAT "mthp", mthp));
		ASSERT_EQ(0, write_file(TRACING "trace", ""));
		ASSERT_EQ(0, write_file(SPLIT_EVENT, "1"));
		ASSERT_EQ(0, start_recovery(0));
		EXPECT_TRUE(wait_huge_kb(p, 0, 60));
		/* The pieces of the last THP split are done with: the counter. */
		EXPECT_TRUE(wait_stat("debloat_thp_split", split0 + len / HPAGE_SZ, 10));
		/*
		 * Recovery off, khugepaged would collapse the split ranges back
		 * while we read them (a CI run found 30 of 32 dense pieces in
		 * THPs again and Rss at all 8 MB).
		 */
		madvise(p, len, MADV_NOHUGEPAGE);
		ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));

		for (size_t i = 0; i < pieces; i++) {
			char *piece = p + i * MTHP_SUBPAGES * PAGE_SZ;
			int order = folio_order_at(piece);

			if (piece_dense(i)) {
				kept += order == 4;
				base += order == 0;
			} else {
				for (size_t s = 0; s < MTHP_SUBPAGES; s++)
					zeros += folio_order_at(piece + s * PAGE_SZ) == -1;
			}
		}
		bad = check_written(p, len, 9, piece_subpage_written);
		TH_LOG("mthp %d: %zu dense 64 KB pieces of %zu kept whole, %zu base pages; "
		       "%zu zero pages; THPs split +%ld, mTHPs split +%ld, freed +%ld, "
		       "64 kB nr_anon +%ld; Rss %ld kB",
		       mthp, kept, pieces / 4, base, zeros,
		       hawkeye_stat("debloat_thp_split") - split0,
		       hawkeye_stat("debloat_mthp_split") - msplit0,
		       hawkeye_stat("debloat_zero_pages_freed") - freed0,
		       sysfs_read_long(THP_SYSFS "hugepages-64kB/stats/nr_anon") - nr_anon0,
		       smaps_kb(p, "Rss"));
		EXPECT_EQ(0, bad);
		/* Every split traced: THPs to 64 KB or 4 KB, sparse pieces to 4 KB. */
		EXPECT_EQ((long)(len / HPAGE_SZ), split_events(p, len, 9, mthp ? 4 : 0));
		EXPECT_EQ(mthp ? (long)(pieces * 3 / 4) : 0, split_events(p, len, 4, 0));
		/* The empty and nearly empty pieces: all but one subpage each. */
		EXPECT_EQ(pieces * 3 / 4 * MTHP_SUBPAGES - pieces / 4, zeros);
		if (mthp) {
			EXPECT_EQ(pieces / 4, kept);
			EXPECT_EQ(pieces * 3 / 4, hawkeye_stat("debloat_mthp_split") - msplit0);
			EXPECT_EQ((long)(pieces / 4),
				  sysfs_read_long(THP_SYSFS "hugepages-64kB/stats/nr_anon") - nr_anon0);
		} else {
			EXPECT_EQ(pieces / 4, base);
			EXPECT_EQ(0, hawkeye_stat("debloat_mthp_split") - msplit0);
		}
		munmap(p, len);
	}
}

/* Registers [p, p + len) for missing faults; the fd, or -1. */
static int uffd_register(char *p, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)p, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg)) {
		close(fd);
		return -1;
	}
	return fd;
}

TEST_F_TIMEOUT(debloat, leaves_locked_shared_ksm_uffd_memory_alone, 120)
{
	const size_t len = 16 * MB;
	enum { FORKED, LOCKED, KSM, UFFD, PLAIN, NR_REGIONS };
	static const char *const names[] = { "fork-shared", "mlocked", "KSM", "userfaultfd", "plain" };
	char *r[NR_REGIONS];
	pid_t child;
	int uffd;

	/* A huge page mapped by two processes is left to both. */
	r[FORKED] = map_bloat(len, 10);
	ASSERT_NE(NULL, r[FORKED]);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	for (int i = LOCKED; i < NR_REGIONS; i++) {
		r[i] = map_bloat(len, 10 + i);
		ASSERT_NE(NULL, r[i]);
	}
	ASSERT_EQ(0, mlock(r[LOCKED], len));
	ASSERT_EQ(0, madvise(r[KSM], len, MADV_MERGEABLE));
	uffd = uffd_register(r[UFFD], len);
	if (uffd < 0)
		TH_LOG("no userfaultfd: %s", strerror(errno));

	ASSERT_EQ(0, start_recovery(0));
	EXPECT_TRUE(wait_huge_kb(r[PLAIN], 0, 60));
	sleep(3);	/* one more round */
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));

	for (int i = 0; i < NR_REGIONS; i++) {
		long huge = smaps_kb(r[i], "AnonHugePages");

		if (i == UFFD && uffd < 0)
			continue;
		TH_LOG("%s: %ld kB huge", names[i], huge);
		EXPECT_EQ(i == PLAIN ? 0 : (long)(len >> 10), huge) {
			TH_LOG("%s memory was %s", names[i], i == PLAIN ? "not recovered" : "split");
		}
		EXPECT_EQ(0, check_bloat(r[i], len, 10 + i));
	}
	stop_child(child);
	if (uffd >= 0)
		close(uffd);
}

/*
 * A child that maps bloat, fork()s (the grandchild writes, copy-on-write),
 * munmap()s part, mremap()s the rest, MADV_DONTNEEDs 64 KB of it and
 * checks its data, while recovery runs; exit status 0 if all was intact.
 */
static int churn_child(unsigned int seed, int linger_ms)
{
	const size_t len = 32 * MB, cut = 4 * MB;
	/* Subpages (counted from p) zapped by MADV_DONTNEED: read zero. */
	const size_t zap = cut / PAGE_SZ + 3 * SUBPAGES + 100, nr_zap = 16;
	pid_t gc;
	char *p, *q;
	int status;

	p = map_bloat(len, seed);
	if (!p)
		return 0;	/* no huge pages to be had: nothing to check */
	gc = fork();
	if (gc == 0) {
		for (size_t s = 1; s < len / PAGE_SZ; s += 97)
			if (!written(s))
				p[s * PAGE_SZ] = 1;
		usleep(100 * 1000);
		for (size_t s = 1; s < len / PAGE_SZ; s += 97)
			if (p[s * PAGE_SZ] != (written(s) ? (char)pattern(s * PAGE_SZ, seed) : 1))
				_exit(1);
		_exit(0);
	}
	usleep(50 * 1000);
	munmap(p, cut);
	q = map_aligned(len);
	if (!q)
		return 2;
	q = mremap(p + cut, len - cut, len - cut, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	if (q == MAP_FAILED)
		return 3;
	usleep(linger_ms * 500);
	if (madvise(q + (zap - cut / PAGE_SZ) * PAGE_SZ, nr_zap * PAGE_SZ, MADV_DONTNEED))
		return 4;
	usleep(linger_ms * 500);
	if (waitpid(gc, &status, 0) != gc || !WIFEXITED(status) || WEXITSTATUS(status))
		return 5;
	/* check_bloat() counts subpages from the start: shift by the cut. */
	for (size_t s = 0; s < (len - cut) / PAGE_SZ; s++) {
		size_t o = s + cut / PAGE_SZ;
		const char *sp = q + s * PAGE_SZ;
		bool zero = !written(o) || (o >= zap && o < zap + nr_zap);

		for (size_t j = 0; j < PAGE_SZ; j++)
			if (sp[j] != (zero ? 0 : (char)pattern(o * PAGE_SZ + j, seed)))
				return 1;
	}
	return 0;
}

TEST_F_TIMEOUT(debloat, survives_fork_exit_munmap_mremap, 120)
{
	long split0 = hawkeye_stat("debloat_thp_split");
	int failed = 0, children = 0, running = 0, status;
	double end;
	pid_t pid;

	ASSERT_EQ(0, start_recovery(0));
	/* Three at a time, living from 0.2 to 3 s: they exit mid-scan too. */
	end = now_s() + 20;
	while (now_s() < end || running) {
		if (running < 3 && now_s() < end) {
			pid = fork();
			if (pid == 0)
				_exit(churn_child(20 + children, 200 + children * 370 % 2800));
			ASSERT_LT(0, pid);
			children++;
			running++;
			continue;
		}
		pid = wait(&status);
		ASSERT_LT(0, pid);
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("child %d: status %#x", pid, status);
			failed++;
		}
	}
	TH_LOG("%d children, %ld THPs split", children,
	       hawkeye_stat("debloat_thp_split") - split0);
	EXPECT_EQ(0, failed);
	EXPECT_GT(hawkeye_stat("debloat_thp_split"), split0);
}

/*
 * Examining huge pages that are in use costs a few bytes per subpage: the
 * thread stops reading a subpage at its first non-zero byte, and a huge
 * page once too few subpages are left to reach the threshold.
 */
TEST_F_TIMEOUT(debloat, in_use_huge_pages_cost_a_few_bytes, 90)
{
	const size_t len = 64 * MB;
	long c0[NR_COUNTERS], c1[NR_COUNTERS], scanned;
	double end;
	char *p = map_aligned(len);

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < len; i += PAGE_SZ)
		p[i] = 1;
	ASSERT_EQ(len >> 10, (size_t)smaps_kb(p, "AnonHugePages"));
	read_counters(c0);
	ASSERT_EQ(0, start_recovery(0));
	end = now_s() + 60;
	do {
		usleep(200 * 1000);
		read_counters(c1);
	} while (c1[SCANNED] - c0[SCANNED] < (long)(2 * len / HPAGE_SZ) && now_s() < end);
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));
	read_counters(c1);
	scanned = c1[SCANNED] - c0[SCANNED];
	TH_LOG("%ld THPs examined, %ld bytes read: %.1f per THP", scanned,
	       c1[BYTES] - c0[BYTES], (double)(c1[BYTES] - c0[BYTES]) / scanned);
	EXPECT_GE(scanned, (long)(2 * len / HPAGE_SZ));
	/*
	 * At most 513 - current_threshold subpages in use, one byte each,
	 * decide it (257 at the default, 481 at the lowest bar); 1 KB
	 * leaves slack.
	 */
	EXPECT_LE(c1[BYTES] - c0[BYTES], scanned * 1024);
	EXPECT_EQ(c0[SPLIT], c1[SPLIT]);
	EXPECT_EQ(len >> 10, (size_t)smaps_kb(p, "AnonHugePages"));
	munmap(p, len);
}

/*
 * A THP with fewer zero subpages than `threshold` is split once full
 * passes have left memory tight: the bar halves after each such pass,
 * down to threshold / 8. Here a quarter of each THP is zero (128 of 512
 * subpages, below the 256 the episode starts with).
 */
TEST_F_TIMEOUT(debloat, lowers_the_bar_while_memory_stays_tight, 120)
{
	const size_t len = 64 * MB, nr = len / PAGE_SZ;
	long split0, freed0, rounds0, bar, halvings;
	static const char zero[PAGE_SZ];
	size_t bad = 0;
	char *p = map_aligned(len);

	ASSERT_NE(NULL, p);
	for (size_t s = 0; s < nr; s++)
		if (s % 4)
			fill_subpage(p, s, 6);
	ASSERT_EQ(len >> 10, (size_t)smaps_kb(p, "AnonHugePages"));
	EXPECT_EQ(256, sysfs_read_long(DEBLOAT "current_threshold"));
	split0 = hawkeye_stat("debloat_thp_split");
	freed0 = hawkeye_stat("debloat_zero_pages_freed");
	rounds0 = hawkeye_stat("debloat_round");

	ASSERT_EQ(0, start_recovery(0));
	EXPECT_TRUE(wait_huge_kb(p, 0, 90)) {
		TH_LOG("%ld kB still huge, current_threshold %ld",
		       smaps_kb(p, "AnonHugePages"), sysfs_read_long(DEBLOAT "current_threshold"));
	}
	/* Read once the thread has stopped: the bar is lowered before its round is counted. */
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));
	bar = sysfs_read_long(DEBLOAT "current_threshold");
	TH_LOG("current_threshold %ld; split %ld, freed %ld; Rss %ld kB of %zu", bar,
	       hawkeye_stat("debloat_thp_split") - split0,
	       hawkeye_stat("debloat_zero_pages_freed") - freed0,
	       smaps_kb(p, "Rss"), len >> 10);
	EXPECT_LE(bar, 128);
	EXPECT_GE(bar, 32);
	/* Each halving ended a round. */
	for (halvings = 0; 256 >> halvings > bar; halvings++)
		;
	EXPECT_LE(halvings, hawkeye_stat("debloat_round") - rounds0);
	EXPECT_GE(hawkeye_stat("debloat_thp_split") - split0, (long)(len / HPAGE_SZ));
	EXPECT_GE(hawkeye_stat("debloat_zero_pages_freed") - freed0, (long)(nr / 4));
	EXPECT_LE(smaps_kb(p, "Rss"), (long)(len >> 10) * 3 / 4 + 2048);

	for (size_t s = 0; s < nr; s++) {
		const char *sp = p + s * PAGE_SZ;

		if (s % 4 == 0) {
			bad += !!memcmp(sp, zero, PAGE_SZ);
			continue;
		}
		for (size_t j = 0; j < PAGE_SZ; j++)
			if (sp[j] != (char)pattern(s * PAGE_SZ + j, 6)) {
				bad++;
				break;
			}
	}
	EXPECT_EQ(0, bad);

	/* Writing threshold starts over from it. */
	ASSERT_EQ(0, sysfs_write(DEBLOAT "threshold", "200"));
	EXPECT_EQ(200, sysfs_read_long(DEBLOAT "current_threshold"));
	munmap(p, len);
}

/* Wait for khugepaged to finish n more full scans; false on timeout. */
static bool wait_full_scans(int n, double timeout)
{
	long target = sysfs_read_long(KHUGEPAGED "full_scans") + n;
	double end = now_s() + timeout;

	while (now_s() < end) {
		if (sysfs_read_long(KHUGEPAGED "full_scans") >= target)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

TEST_F_TIMEOUT(debloat, khugepaged_does_not_collapse_recovered_ranges, 180)
{
	const size_t len = 64 * MB;
	long collapse0, exceed0;
	char *p;

	ASSERT_EQ(0, write_file(KHUGEPAGED "max_ptes_none", "511"));
	ASSERT_EQ(0, write_file(KHUGEPAGED "scan_sleep_millisecs", "100"));
	ASSERT_EQ(0, write_file(KHUGEPAGED "alloc_sleep_millisecs", "100"));
	ASSERT_EQ(0, write_file(KHUGEPAGED "pages_to_scan", "65536"));
	p = map_bloat(len, 5);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, start_recovery(0));
	ASSERT_TRUE(wait_huge_kb(p, 0, 60));
	/* Reading it all makes the ranges referenced, as khugepaged wants. */
	EXPECT_EQ(0, check_bloat(p, len, 5));

	collapse0 = vmstat("thp_collapse_alloc");
	exceed0 = vmstat("thp_scan_exceed_none_pte");
	ASSERT_TRUE(wait_full_scans(3, 90));
	TH_LOG("recovery on: %ld collapses, %ld ranges refused for empty PTEs",
	       vmstat("thp_collapse_alloc") - collapse0,
	       vmstat("thp_scan_exceed_none_pte") - exceed0);
	EXPECT_EQ(0, smaps_kb(p, "AnonHugePages"));
	EXPECT_EQ(collapse0, vmstat("thp_collapse_alloc"));
	EXPECT_GE(vmstat("thp_scan_exceed_none_pte") - exceed0, (long)(len / HPAGE_SZ));

	/*
	 * The control: once memory is free again (use below low_pct),
	 * khugepaged follows its own max_ptes_none and collapses them back.
	 */
	ASSERT_EQ(0, set_watermarks(100, 99));
	EXPECT_TRUE(wait_full_scans(3, 90));
	EXPECT_TRUE(wait_huge(p, len >> 11, true, 30)) {
		TH_LOG("memory free: only %ld kB collapsed", smaps_kb(p, "AnonHugePages"));
	}
	TH_LOG("memory free: %ld kB huge again", smaps_kb(p, "AnonHugePages"));
	EXPECT_LT(collapse0, vmstat("thp_collapse_alloc"));
	EXPECT_EQ(0, check_bloat(p, len, 5));
	munmap(p, len);
}

/*
 * A child with bloat that either keeps touching its huge pages (hot) or
 * leaves them alone (cold).
 */
static pid_t start_bloated_child(size_t len, unsigned int seed, bool hot,
				 char **where)
{
	int fd[2];
	pid_t pid;
	char *c = NULL;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		volatile char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		p = map_bloat(len, seed);
		/* Where its huge pages are (NULL: none). */
		if (write(fd[1], &p, sizeof(p)) != sizeof(p) || !p)
			_exit(1);
		for (;;) {
			if (!hot) {
				pause();
				continue;
			}
			for (size_t i = 0; i < len; i += HPAGE_SZ)
				(void)p[i];
			usleep(20 * 1000);
		}
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &c, sizeof(c)) != sizeof(c) || !c) {
		stop_child(pid);
		pid = -1;
	}
	close(fd[0]);
	if (where)
		*where = c;
	return pid;
}

/*
 * While memory is tight, khugepaged's limit holds for a process whose huge
 * pages recovery has split, and for it only: another process's ranges,
 * emptied with MADV_DONTNEED as a memory allocator does, are collapsed
 * back as without HawkEye.
 */
TEST_F_TIMEOUT(debloat, khugepaged_limit_only_for_recovered_processes, 180)
{
	const size_t len = 32 * MB, nr = len / HPAGE_SZ, kept = 212;
	long exceed0, collapse0, underused0, splits = 0;
	size_t bad = 0;
	pid_t split;
	char *p, *q;

	ASSERT_EQ(0, write_file(KHUGEPAGED "max_ptes_none", "511"));
	ASSERT_EQ(0, write_file(KHUGEPAGED "scan_sleep_millisecs", "100"));
	ASSERT_EQ(0, write_file(KHUGEPAGED "alloc_sleep_millisecs", "100"));
	ASSERT_EQ(0, write_file(KHUGEPAGED "pages_to_scan", "65536"));
	/* Hot: its PTEs stay young, so only the limit can stop khugepaged. */
	split = start_bloated_child(len, 8, true, &q);
	ASSERT_LT(0, split);
	ASSERT_EQ(0, proc_hawkeye(split, "debloat_splits"));
	underused0 = vmstat("thp_underused_split_page");
	ASSERT_EQ(0, start_recovery(0));
	/*
	 * The count goes up just after each split: wait for both. The
	 * deferred-split shrinker may split an underused THP first.
	 */
	for (double end = now_s() + 60; now_s() < end; usleep(100 * 1000)) {
		splits = nr - (vmstat("thp_underused_split_page") - underused0);
		if (pid_smaps_kb(split, q, "AnonHugePages") == 0 &&
		    proc_hawkeye(split, "debloat_splits") >= splits)
			break;
	}
	ASSERT_EQ(0, pid_smaps_kb(split, q, "AnonHugePages"));
	EXPECT_LE(splits, proc_hawkeye(split, "debloat_splits"));
	EXPECT_GE((long)nr, proc_hawkeye(split, "debloat_splits"));
	splits = proc_hawkeye(split, "debloat_splits");
	ASSERT_LT(0, splits);

	/*
	 * Tight (at least low_pct in use) but recovery idle (never above
	 * high_pct). While recovery is off khugepaged has no limit at all:
	 * it is stopped (THP never) until recovery is on again.
	 */
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "never"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "0"));
	ASSERT_EQ(0, set_watermarks(100, 1));
	/*
	 * Reclaim's THP shrinker may run at any time and, while memory is
	 * tight, splits at the threshold: at 400, this process's ranges (300
	 * empty subpages each, once collapsed) stay whole, and khugepaged's
	 * limit (one less) still refuses the child's (460 empty each).
	 */
	ASSERT_EQ(0, sysfs_write(DEBLOAT "threshold", "400"));
	ASSERT_EQ(0, sysfs_write(DEBLOAT "enabled", "1"));
	exceed0 = vmstat("thp_scan_exceed_none_pte");
	collapse0 = vmstat("thp_collapse_alloc");
	ASSERT_EQ(0, write_file(THP_SYSFS "enabled", "always"));
	ASSERT_LE(1.0, in_use_pct());

	/* This process: full huge pages, then 300 subpages of each emptied. */
	p = map_aligned(len);
	ASSERT_NE(NULL, p);
	madvise(p, len, MADV_HUGEPAGE);
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(i, 9);
	ASSERT_EQ((long)(len >> 10), smaps_kb(p, "AnonHugePages"));
	for (size_t r = 0; r < nr; r++)
		ASSERT_EQ(0, madvise(p + r * HPAGE_SZ + kept * PAGE_SZ,
				     HPAGE_SZ - kept * PAGE_SZ, MADV_DONTNEED));
	/* (khugepaged may start collapsing them back at once.) */
	EXPECT_EQ(0, proc_hawkeye(getpid(), "debloat_splits"));

	EXPECT_TRUE(wait_huge(p, len >> 10, true, 90)) {
		TH_LOG("only %ld kB of this process collapsed", smaps_kb(p, "AnonHugePages"));
	}
	EXPECT_TRUE(wait_full_scans(2, 60));
	TH_LOG("%ld collapses, %ld ranges refused for empty PTEs",
	       vmstat("thp_collapse_alloc") - collapse0,
	       vmstat("thp_scan_exceed_none_pte") - exceed0);
	EXPECT_LE(collapse0 + (long)nr, vmstat("thp_collapse_alloc"));
	/* The recovered child's ranges: refused for empty PTEs, still split. */
	EXPECT_EQ(0, pid_smaps_kb(split, q, "AnonHugePages"));
	EXPECT_LE((long)nr, vmstat("thp_scan_exceed_none_pte") - exceed0);
	EXPECT_EQ(splits, proc_hawkeye(split, "debloat_splits"));
	EXPECT_EQ(0, proc_hawkeye(getpid(), "debloat_splits"));

	for (size_t i = 0; i < len; i++) {
		bool kept_byte = i % HPAGE_SZ < kept * PAGE_SZ;

		bad += p[i] != (kept_byte ? (char)pattern(i, 9) : 0);
	}
	EXPECT_EQ(0, bad);
	stop_child(split);
	munmap(p, len);
}

/*
 * Of two processes with bloat, the one whose huge pages are not accessed
 * is recovered entirely before the other one's are looked at. The hot one
 * has more huge pages, which would put it first if the access estimate
 * did not tell them apart; and either may be forked first.
 */
static void check_order(struct __test_metadata *_metadata, bool hot_first)
{
	const size_t len = 64 * MB, hot_len = 96 * MB;
	long huge_hot = 0, huge_cold = 0, full = len >> 10, hot_full = hot_len >> 10;
	pid_t hot, cold;
	bool violated = false;
	double start, end, t_cold_done = 0, t_hot_start = 0;

	if (hot_first) {
		hot = start_bloated_child(hot_len, 6, true, NULL);
		cold = start_bloated_child(len, 7, false, NULL);
	} else {
		cold = start_bloated_child(len, 7, false, NULL);
		hot = start_bloated_child(hot_len, 6, true, NULL);
	}
	ASSERT_LT(0, hot);
	ASSERT_LT(0, cold);
	ASSERT_EQ(hot_full, rollup_kb(hot, "AnonHugePages"));
	ASSERT_EQ(full, rollup_kb(cold, "AnonHugePages"));

	ASSERT_EQ(0, start_recovery(16));
	start = now_s();
	end = start + 60;
	while (now_s() < end && (huge_hot || huge_cold || !t_cold_done)) {
		huge_hot = rollup_kb(hot, "AnonHugePages");
		huge_cold = rollup_kb(cold, "AnonHugePages");
		if (!t_cold_done && huge_cold == 0)
			t_cold_done = now_s();
		if (!t_hot_start && huge_hot < hot_full)
			t_hot_start = now_s();
		if (huge_hot < hot_full && huge_cold > 0) {
			violated = true;
			TH_LOG("hot process split (%ld kB huge) while the cold one has %ld kB huge",
			       huge_hot, huge_cold);
			break;
		}
		usleep(50 * 1000);
	}
	sysfs_write(DEBLOAT "enabled", "0");
	stop_child(hot);
	stop_child(cold);
	TH_LOG("cold process recovered after %.1f s, hot one started after %.1f s",
	       t_cold_done - start, t_hot_start - start);
	EXPECT_FALSE(violated);
	EXPECT_NE(0, t_cold_done);
	EXPECT_NE(0, t_hot_start) {
		TH_LOG("the hot process was never recovered");
	}
	EXPECT_LE(t_cold_done, t_hot_start);
}

TEST_F_TIMEOUT(debloat, least_accessed_process_first_hot_forked_first, 90)
{
	check_order(_metadata, true);
}

TEST_F_TIMEOUT(debloat, least_accessed_process_first_hot_forked_second, 90)
{
	check_order(_metadata, false);
}

TEST_HARNESS_MAIN
