/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bench programs share: the clock and the numbers of /proc files.
 * And what the promotion workloads (xsbench.c, graph500.c, sequential.c)
 * share: the options, random numbers, the start signal, and the one 2 MB
 * aligned mapping whose top part holds the hot data, with the lines that
 * describe them.
 */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H

#define _GNU_SOURCE
#include <glob.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HPAGE (2UL << 20)

struct workload_opts {
	unsigned long mb;		/* -m: footprint, MiB */
	unsigned long max_ops;		/* -n: stop after this much work, 0: no limit */
	double hot_frac;		/* -f: hot fraction, at the top */
	double duration;		/* -d: seconds, 0: no limit */
	double interval;		/* -i: seconds between progress lines */
	uint64_t seed;			/* -s */
	const char *label;		/* -l */
	int wait_start;			/* -w: wait for SIGUSR1 after init */
	int advise;			/* MADV_HUGEPAGE, unless -N */
	size_t len, hot;		/* bytes: -m, and its top -f rounded up to 2 MB */
};

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The number after KEY at the start of a line of a "key value" or
 * "key: value kB" file (/proc/vmstat, /proc/meminfo, /proc/PID/status);
 * -1 if there is none.
 */
static inline long proc_value(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && (line[klen] == ' ' || line[klen] == ':')) {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* /proc/PID/pagemap entry bits and /proc/kpageflags bits (root only). */
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF_COMPOUND_HEAD 15
#define KPF_THP		22
#define KPF_ZERO_PAGE	24

/* The /proc/kpageflags word of page frame @pfn (@kpf open), 0 if none. */
static inline uint64_t kpage_flags(int kpf, uint64_t pfn)
{
	uint64_t flags;

	return pread(kpf, &flags, 8, pfn * 8) == 8 ? flags : 0;
}

/* A counter of /proc/vmstat, or -1. */
static inline long vmstat(const char *key)
{
	return proc_value("/proc/vmstat", key);
}

/* One of HawkEye's counters, /sys/kernel/mm/hawkeye/stats/NAME, or -1. */
static inline long hawkeye_stat(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hawkeye/stats/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A field (in kB) of /proc/meminfo, or -1. */
static inline long meminfo_kb(const char *key)
{
	return proc_value("/proc/meminfo", key);
}

/*
 * Sum of a per-size THP stat (hugepages-<size>kB/stats/NAME) over the mTHP
 * sizes below 2 MB, each times its size in kB if @kb; -1 if none.
 */
static inline long mthp_stat(const char *name, bool kb)
{
	char pattern[160];
	long sum = -1;
	glob_t g;

	snprintf(pattern, sizeof(pattern),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-*kB/stats/%s", name);
	if (glob(pattern, 0, NULL, &g))
		return -1;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		long v, size = atol(strchr(g.gl_pathv[i], '-') + 1);
		FILE *f;

		if (size >= 2048)
			continue;
		f = fopen(g.gl_pathv[i], "r");
		if (f && fscanf(f, "%ld", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + v * (kb ? size : 1);
		if (f)
			fclose(f);
	}
	globfree(&g);
	return sum;
}

static inline uint64_t rng(uint64_t *s)	/* xorshift64* */
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static inline double rnd01(uint64_t *s)
{
	return (rng(s) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * The common options of workload name (the default label); returns 0, or 2
 * after a usage message. ops names what -n counts; hot fractions above
 * max_frac are refused.
 */
static inline int workload_options(int argc, char **argv, struct workload_opts *o,
				   const char *name, const char *ops, double max_frac)
{
	int opt;

	*o = (struct workload_opts){ .mb = 256, .hot_frac = 0.125, .duration = 60,
				     .interval = 1, .seed = 42, .label = name, .advise = 1 };
	while ((opt = getopt(argc, argv, "m:f:d:n:i:s:l:wN")) != -1) {
		switch (opt) {
		case 'm': o->mb = strtoul(optarg, NULL, 0); break;
		case 'f': o->hot_frac = atof(optarg); break;
		case 'd': o->duration = atof(optarg); break;
		case 'n': o->max_ops = strtoul(optarg, NULL, 0); break;
		case 'i': o->interval = atof(optarg); break;
		case 's': o->seed = strtoull(optarg, NULL, 0) | 1; break;
		case 'l': o->label = optarg; break;
		case 'w': o->wait_start = 1; break;
		case 'N': o->advise = 0; break;
		default:
			fprintf(stderr, "usage: %s [-m MB] [-f HOT_FRACTION] [-d SECONDS] "
				"[-n %s] [-i INTERVAL] [-s SEED] [-l LABEL] [-w] [-N]\n",
				argv[0], ops);
			return 2;
		}
	}
	if (o->mb < 4 || o->mb % 2 || o->hot_frac <= 0 || o->hot_frac > max_frac ||
	    o->duration < 0 || o->interval <= 0 || strpbrk(o->label, " \"\\=")) {
		fprintf(stderr, "%s: bad options (-m: even, >= 4; 0 < -f <= %g)\n",
			name, max_frac);
		return 2;
	}
	if (o->wait_start) {	/* block SIGUSR1 now, so that it waits for sigwait */
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	o->len = o->mb << 20;
	o->hot = ((size_t)(o->hot_frac * o->len) + HPAGE - 1) & ~(HPAGE - 1);
	return 0;
}

/*
 * Tell the TLB model (tools/tlbmodel/plugin.c), when the program runs
 * under it: CPUID with a leaf no CPU has, which runs as usual elsewhere.
 * TLBMODEL_NAME names this address space (@a a tag, @b the pid);
 * TLBMODEL_WRITE has the model write its counters (@a a mark).
 */
#define TLBMODEL_NAME	0x484b0001u
#define TLBMODEL_WRITE	0x484b0002u

static inline void tlbmodel_call(uint32_t leaf, uint64_t a, uint64_t b)
{
	uint64_t rax = leaf, rbx = a, rcx = b, rdx = 0;

	asm volatile("cpuid" : "+a"(rax), "+b"(rbx), "+c"(rcx), "+d"(rdx) : : "memory");
}

/* The first 8 characters of @label, as the model's tag. */
static inline uint64_t tlbmodel_tag(const char *label)
{
	uint64_t tag = 0;

	memcpy(&tag, label, strnlen(label, sizeof(tag)));
	return tag;
}

/* The timed part: when it started, the next progress line is due, it ends. */
struct workload_run {
	double t0, next, end;
	const char *unit;		/* what -n counts, in progress lines */
	unsigned long last;		/* the total at the last progress line */
};

/*
 * The end of start-up, @t_init the time it began: prints the "init" line;
 * with -w says so and waits for SIGUSR1. Then the timed part starts: prints
 * the "start" line.
 */
static inline struct workload_run workload_start(const struct workload_opts *o, double t_init,
						 const char *unit)
{
	struct workload_run r = { .unit = unit };
	sigset_t set;
	int sig;

	printf("%s init seconds=%.3f\n", o->label, now() - t_init);
	if (o->wait_start) {
		printf("%s ready pid=%d\n", o->label, getpid());
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigwait(&set, &sig);
	}
	tlbmodel_call(TLBMODEL_NAME, tlbmodel_tag(o->label), getpid());
	tlbmodel_call(TLBMODEL_WRITE, 0, 0);
	r.t0 = now();
	r.next = r.t0 + o->interval;
	r.end = r.t0 + o->duration;
	printf("%s start mono=%.3f\n", o->label, r.t0);
	return r;
}

/*
 * At time @t, @total done: whether the run is over (-d, -n). When it is,
 * or an interval has passed, prints the "progress" line, with @extra=@val
 * at its end unless @extra is NULL.
 */
static inline int workload_progress(const struct workload_opts *o, struct workload_run *r,
				    double t, unsigned long total, const char *extra,
				    unsigned long val)
{
	int over = (o->duration && t >= r->end) || (o->max_ops && total >= o->max_ops);

	if (t >= r->next || over) {
		tlbmodel_call(TLBMODEL_WRITE, total, 0);
		printf("progress t=%.3f mono=%.3f %s=%lu total=%lu", t - r->t0, t, r->unit,
		       total - r->last, total);
		if (extra)
			printf(" %s=%lu", extra, val);
		printf("\n");
		r->last = total;
		while (r->next <= t)
			r->next += o->interval;
	}
	return over;
}

/* One 2 MB-aligned mapping of exactly len bytes (one VMA); NULL on failure. */
static inline char *workload_map(const struct workload_opts *o, size_t len)
{
	char *raw = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *base;

	if (raw == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	base = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	if (base > raw)
		munmap(raw, base - raw);
	if (base + len < raw + len + HPAGE)
		munmap(base + len, raw + len + HPAGE - (base + len));
	if (o->advise && madvise(base, len, MADV_HUGEPAGE))
		perror("madvise(MADV_HUGEPAGE)");
	return base;
}

/*
 * Maps the footprint (workload_map()) and prints the "map" line and the
 * fields every "hot" line opens with: the caller ends that line with its
 * own. The mapping, whose hot part starts at o->len - o->hot; NULL if none.
 */
static inline char *workload_map_hot(const struct workload_opts *o)
{
	char *base = workload_map(o, o->len);

	if (!base)
		return NULL;
	printf("%s map start=%p end=%p mb=%lu regions=%zu\n", o->label, (void *)base,
	       (void *)(base + o->len), o->mb, o->len / HPAGE);
	printf("%s hot start=%p end=%p regions=%zu fraction=%.4f", o->label,
	       (void *)(base + o->len - o->hot), (void *)(base + o->len), o->hot / HPAGE,
	       (double)o->hot / o->len);
	return base;
}

#endif /* BENCH_WORKLOAD_H */
