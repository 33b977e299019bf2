/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by hawkeye's guest tests (kselftest harness). */
#ifndef HAWKEYE_TEST_H
#define HAWKEYE_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/mempolicy.h>

#include "kselftest_harness.h"

#define PAGE_SZ 4096UL
#define HPAGE_SZ (2UL << 20)
#define THP_SYSFS "/sys/kernel/mm/transparent_hugepage/"
#define KHUGEPAGED THP_SYSFS "khugepaged/"
#define TRACING "/sys/kernel/tracing/"
#define HAWKEYE "/sys/kernel/mm/hawkeye/"
#define PREZERO HAWKEYE "prezero/"
#define DEBLOAT HAWKEYE "debloat/"
#define PROMOTE HAWKEYE "promote/"
#define INGENS HAWKEYE "ingens/"
/* Does the kernel have the baseline policies (CONFIG_HAWKEYE_BASELINES)? */
#define HAS_BASELINES() (access(INGENS "util_threshold", F_OK) == 0)
#define NO_BASELINES "no baseline policies in this kernel (CONFIG_HAWKEYE_BASELINES)"
#define MB (1UL << 20)
#define NR(a) (sizeof(a) / sizeof((a)[0]))
#define KPF_THP 22	/* /proc/kpageflags bit */

static inline int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static inline int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* 0, or the errno with which the kernel refused the write. */
static inline int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

static inline int sysfs_write_long(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", val);
	return sysfs_write(path, buf);
}

/* The number a sysfs file holds, or -1. */
static inline long sysfs_read_long(const char *path)
{
	char buf[64];

	return read_file(path, buf, sizeof(buf)) ? -1 : atol(buf);
}

/* The pid of the process (kernel thread) called @comm, or 0. */
static inline pid_t kthread_pid(const char *comm)
{
	DIR *dir = opendir("/proc");
	struct dirent *d;
	pid_t pid = 0;

	while (dir && !pid && (d = readdir(dir))) {
		char path[288], buf[32];

		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (!read_file(path, buf, sizeof(buf)) &&
		    !strncmp(buf, comm, strlen(comm)) && buf[strlen(comm)] == '\n')
			pid = atoi(d->d_name);
	}
	if (dir)
		closedir(dir);
	return pid;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The selected word of a sysfs choice file such as "always [madvise] never". */
static inline int read_choice(const char *path, char *out, size_t len)
{
	char buf[256], *l, *r;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (!r || (size_t)(r - l) >= len)
		return -1;
	memcpy(out, l + 1, r - l - 1);
	out[r - l - 1] = '\0';
	return 0;
}

/* The number after "KEY<sep>" at the start of a line of path, or -1. */
static inline long keyed_value(const char *path, const char *key, char sep)
{
	char line[256];
	size_t n = strlen(key);
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == sep) {
			val = atol(line + n + 1);
			break;
		}
	fclose(f);
	return val;
}

/* The "<key> <n>" value of /proc/<pid>/hawkeye, or -1. */
static inline long proc_hawkeye(int pid, const char *key)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/hawkeye", pid);
	return keyed_value(path, key, ' ');
}

/* A counter from /proc/vmstat, or -1. */
static inline long vmstat(const char *name)
{
	return keyed_value("/proc/vmstat", name, ' ');
}

/* One of HawkEye's counters, /sys/kernel/mm/hawkeye/stats/<name>, or -1. */
static inline long hawkeye_stat(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/hawkeye/stats/%s", name);
	return sysfs_read_long(path);
}

/* A field (in kB) of /proc/meminfo, or -1. */
static inline long meminfo_kb(const char *field)
{
	return keyed_value("/proc/meminfo", field, ':');
}

/* A field (in kB) of /proc/PID/smaps_rollup (pid 0: self), or -1. */
static inline long rollup_kb(int pid, const char *field)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps_rollup");
	return keyed_value(path, field, ':');
}

/* A field (in kB) of the /proc/PID/smaps entry that holds addr, or -1. */
static inline long pid_smaps_kb(int pid, void *addr, const char *field)
{
	unsigned long start, end, a = (unsigned long)addr;
	char line[256];
	size_t n = strlen(field);
	int in = 0;
	long val = -1;
	FILE *f;

	snprintf(line, sizeof(line), "/proc/%d/smaps", pid);
	f = fopen(line, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, ' ') &&
		    line[strspn(line, "0123456789abcdef")] == '-') {
			in = a >= start && a < end;
			continue;
		}
		if (in && !strncmp(line, field, n) && line[n] == ':') {
			val = atol(line + n + 1);
			break;
		}
	}
	fclose(f);
	return val;
}

/* The same for this process. */
static inline long smaps_kb(void *addr, const char *field)
{
	return pid_smaps_kb(getpid(), addr, field);
}

#define FAILSLAB "/sys/kernel/debug/failslab/"

/* [start, end) of kernel function @name: its address, the next symbol's. */
static inline int ksym_range(const char *name, unsigned long *start, unsigned long *end)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[128], type;
	unsigned long addr;

	*start = *end = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %127s", &addr, &type, sym) != 3)
			continue;
		if (*start && addr > *start) {
			*end = addr;
			break;
		}
		if (!*start && !strcmp(sym, name))
			*start = addr;
	}
	if (f)
		fclose(f);
	return *start && *end ? 0 : -1;
}

/*
 * Make every slab allocation fail that is made with kernel function @func
 * on the stack (failslab's stack filter), or none when @func is NULL.
 */
static inline int failslab_aim(const char *func)
{
	unsigned long start = 0, end = 0;
	char buf[32];

	if (sysfs_write(FAILSLAB "probability", "0"))
		return -1;
	if (!func)
		return 0;
	if (ksym_range(func, &start, &end))
		return -1;
	snprintf(buf, sizeof(buf), "%#lx", start);
	if (sysfs_write(FAILSLAB "require-start", buf))
		return -1;
	snprintf(buf, sizeof(buf), "%#lx", end);
	return sysfs_write(FAILSLAB "require-end", buf) ||
	       sysfs_write(FAILSLAB "ignore-gfp-wait", "N") ||
	       sysfs_write(FAILSLAB "task-filter", "N") ||
	       sysfs_write(FAILSLAB "verbose", "0") ||
	       sysfs_write(FAILSLAB "interval", "1") ||
	       sysfs_write(FAILSLAB "times", "-1") ||
	       sysfs_write(FAILSLAB "probability", "100");
}

#define PFN_MASK ((1ULL << 55) - 1)

/* pagemap entry of addr in pid (0: self): PFN, or 0 if not present. */
static inline uint64_t pfn_of(int pid, unsigned long addr)
{
	char path[64];
	uint64_t ent = 0;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &ent, 8, addr / PAGE_SZ * 8) != 8)
		ent = 0;
	close(fd);
	return (ent >> 63) ? (ent & PFN_MASK) : 0;
}

/* The /proc/kpageflags word of a page frame (root only), 0 if none. */
static inline uint64_t kpageflags(uint64_t pfn)
{
	uint64_t flags = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &flags, 8, pfn * 8) != 8)
		flags = 0;
	close(fd);
	return flags;
}

/* Is the page at addr of pid part of a THP (a large anonymous folio)? */
static inline bool is_thp(int pid, unsigned long addr)
{
	uint64_t pfn = pfn_of(pid, addr);

	return pfn && ((kpageflags(pfn) >> KPF_THP) & 1);
}

/* An anonymous mapping of len bytes whose start is 2 MB aligned. */
static inline char *map_aligned(size_t len)
{
	char *p = mmap(NULL, len + HPAGE_SZ, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + len, p + HPAGE_SZ - a);
	return a;
}

/* The same, MADV_HUGEPAGE. */
static inline char *map_hugepage(size_t len)
{
	char *p = map_aligned(len);

	if (p && madvise(p, len, MADV_HUGEPAGE)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/*
 * Base pages that HawkEye-G may promote: written while MADV_NOHUGEPAGE
 * (no THP at fault), then MADV_HUGEPAGE.
 */
static inline char *map_promotable(size_t len)
{
	char *p = map_aligned(len);

	if (!p)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < len; i += PAGE_SZ)
		p[i] = 1;
	madvise(p, len, MADV_HUGEPAGE);
	return p;
}

/* The byte every test writes at offset i: never zero, position dependent. */
static inline unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 31 + seed) % 251 + 1);
}

/*
 * Knob save and restore for fixtures, after selftests/mm's
 * thp_push_settings() and thp_pop_settings(): knobs_push() saves the value
 * of each listed file (the selected word of a choice file; a missing file
 * is skipped), knobs_pop() writes the last saved set back, in reverse
 * order and twice: a value the kernel refuses while another knob still
 * holds the test's (a low watermark above the old high one, a sample
 * window longer than the old period) goes in on the second pass.
 */
#define KNOBS_MAX 32
#define KNOBS_DEPTH 4

struct knob_value {
	const char *path;
	char val[64];
};

static struct {
	struct knob_value knob[KNOBS_MAX];
	unsigned int n;
} knob_sets[KNOBS_DEPTH];
static unsigned int knob_depth;

static inline int knobs_push(const char *const *paths, unsigned int n)
{
	struct knob_value *k;

	if (knob_depth == KNOBS_DEPTH || n > KNOBS_MAX)
		return -1;
	k = knob_sets[knob_depth].knob;
	for (unsigned int i = 0; i < n; i++) {
		k[i].path = paths[i];
		if (read_choice(paths[i], k[i].val, sizeof(k[i].val)) == 0)
			continue;
		if (read_file(paths[i], k[i].val, sizeof(k[i].val)))
			k[i].val[0] = '\0';
		k[i].val[strcspn(k[i].val, "\n")] = '\0';
	}
	knob_sets[knob_depth++].n = n;
	return 0;
}

static inline void knobs_pop(void)
{
	struct knob_value *k;

	if (!knob_depth)
		return;
	k = knob_sets[--knob_depth].knob;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned int i = knob_sets[knob_depth].n; i-- > 0;)
			if (k[i].val[0])
				sysfs_write(k[i].path, k[i].val);
}

/* A value a fixture or a test gives a knob. */
struct knob_set {
	const char *path;
	const char *val;
};

/*
 * In a test or a fixture: writes the values of the knob_set array @set in
 * its order, each of which the kernel must take (ASSERT_KNOBS: the test
 * stops at the first it refuses; EXPECT_KNOBS: it goes on), and names the
 * knob and value it refused.
 */
#define __KNOBS(set, check) do {						\
	for (unsigned int __k = 0; __k < NR(set); __k++) {			\
		check(0, sysfs_write((set)[__k].path, (set)[__k].val))		\
			TH_LOG("%s <- '%s' refused", (set)[__k].path, (set)[__k].val); \
	}									\
} while (0)
#define ASSERT_KNOBS(set) __KNOBS(set, ASSERT_EQ)
#define EXPECT_KNOBS(set) __KNOBS(set, EXPECT_EQ)

/*
 * A fixture's set-up, after selftests/mm's thp_push_settings(): saves the
 * knobs of the path array @paths (knobs_push) and sets those of @set.
 */
#define ASSERT_KNOBS_PUSH(paths, set) do {					\
	ASSERT_EQ(0, knobs_push(paths, NR(paths)));				\
	ASSERT_KNOBS(set);							\
} while (0)

/* Values the kernel must refuse for a knob: up to 8, or to the first NULL. */
struct knob_bad {
	const char *path;
	const char *vals[8];
};

/*
 * Writes each value of bad[0..nbad), each of which the kernel must refuse
 * with EINVAL, and expects after each write that every knob of
 * watch[0..nwatch) reads back as it did before the first.
 */
static inline void expect_refused(struct __test_metadata *_metadata,
				  const struct knob_bad *bad, unsigned int nbad,
				  const char *const *watch, unsigned int nwatch)
{
	char was[KNOBS_MAX][128], now[128];

	ASSERT_GE(KNOBS_MAX, nwatch);
	for (unsigned int w = 0; w < nwatch; w++)
		if (read_file(watch[w], was[w], sizeof(was[w])))
			was[w][0] = '\0';
	for (unsigned int b = 0; b < nbad; b++) {
		for (unsigned int v = 0; v < NR(bad[b].vals) && bad[b].vals[v]; v++) {
			EXPECT_EQ(EINVAL, sysfs_write(bad[b].path, bad[b].vals[v]))
				TH_LOG("%s <- '%s' accepted", bad[b].path, bad[b].vals[v]);
			for (unsigned int w = 0; w < nwatch; w++) {
				if (read_file(watch[w], now, sizeof(now)))
					now[0] = '\0';
				EXPECT_STREQ(was[w], now) TH_LOG("%s changed", watch[w]);
			}
		}
	}
}

/* In a test: expect_refused() of the arrays @bad and @watch. */
#define EXPECT_REFUSED(bad, watch) expect_refused(_metadata, bad, NR(bad), watch, NR(watch))

/*
 * Fill len bytes with a non-zero pattern and free them again; on node nid
 * only (-1: where the kernel places them), so that the node reclaims what
 * earlier tests left there rather than fall back to another.
 */
static inline void dirty_and_free_on(int nid, size_t len)
{
	char *p = map_aligned(len);

	if (!p)
		return;
	if (nid >= 0) {
		unsigned long node = 1UL << nid;

		syscall(SYS_mbind, p, len, MPOL_BIND, &node, 8 * sizeof(node), 0);
	}
	memset(p, 0xa5, len);
	munmap(p, len);
}

#define NODE_SYSFS "/sys/devices/system/node/node"

/* Node @nid's pre-zeroed free pages, or -1 if there is no such node. */
static inline long node_zeroed(int nid)
{
	char path[64];

	snprintf(path, sizeof(path), NODE_SYSFS "%d/vmstat", nid);
	return keyed_value(path, "nr_free_zeroed", ' ');
}

#endif
