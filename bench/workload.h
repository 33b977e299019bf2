/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the promotion workloads (xsbench.c, graph500.c) share: the options,
 * the clock and random numbers, the start signal, and the one 2 MB-aligned
 * mapping whose top part holds the hot data.
 */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H

#define _GNU_SOURCE
#include <signal.h>
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
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng(uint64_t *s)	/* xorshift64* */
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
static int workload_options(int argc, char **argv, struct workload_opts *o,
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
	return 0;
}

/* With -w: say so, and wait for SIGUSR1. */
static void workload_wait_start(const struct workload_opts *o)
{
	sigset_t set;
	int sig;

	if (!o->wait_start)
		return;
	printf("%s ready pid=%d\n", o->label, getpid());
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

/* One 2 MB-aligned mapping of exactly len bytes (one VMA); NULL on failure. */
static char *workload_map(const struct workload_opts *o, size_t len)
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

#endif /* BENCH_WORKLOAD_H */
