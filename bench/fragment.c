// SPDX-License-Identifier: GPL-2.0
/*
 * Physical memory fragmenter for the promotion benchmarks (bench/promotion.sh):
 * after it has run, no free 2 MB block is left, so huge page faults fall back
 * to 4 KB pages; on SIGTERM, SIGINT or SIGUSR1 it gives everything back and
 * exits, so promotion can find huge pages again. Run it as root (it reads
 * PFNs from /proc/self/pagemap and page flags from /proc/kpageflags).
 *
 *   fragment [-l LEAVE_MB] [-f FRAG_MB] [-p PIDFILE] [-t SECONDS] [-n]
 *
 * 1. Takes free memory as 4 KB pages (MADV_NOHUGEPAGE, touched) until
 *    MemFree is down to LEAVE_MB (default 32: a margin above the
 *    watermarks, so that nothing is reclaimed or OOM-killed).
 * 2. Reads the PFN of every page from /proc/self/pagemap, keeps the first
 *    page it holds in each 2 MB-aligned physical block (mlock) and gives
 *    back all the others (MADV_DONTNEED). Each block that held one of its
 *    pages now has a pinned page, so it cannot merge back into a free
 *    order-9 block. With -f FRAG_MB it does that only until FRAG_MB are
 *    given back (enough for the workload to come), and holds (mlocks) all
 *    its pages of the other blocks: those come back as whole free blocks
 *    on release, so promotion then finds huge pages without compaction.
 * 3. The LEAVE_MB it did not take may still hold whole free blocks: it takes
 *    those as huge pages (MADV_HUGEPAGE, one touch per 2 MB, stopping at
 *    three faults in a row that did not get one, as /proc/kpageflags
 *    tells) and holds them (mlock) too. -n skips this step.
 *
 * Then it prints one JSON line (type "fragment": blocks pinned, MemFree
 * and free 2 MB blocks from /proc/buddyinfo before and after), writes
 * PIDFILE if asked (scripts wait for it), prints "fragment: ready" on
 * stderr and waits. On the signal (or after -t SECONDS) it unmaps
 * everything, prints a second JSON line (type "fragment_release") and exits.
 *
 * What can still undo it: compaction may migrate the pinned pages unless
 * vm.compact_unevictable_allowed is 0 (mlocked pages are unevictable, and
 * only then does compaction leave them alone); and it may empty blocks
 * the fragmenter never held (page cache, other processes' memory, all
 * movable) into the free holes. bench/promotion.sh therefore drops caches
 * before it runs this, sets vm.compact_unevictable_allowed=0 and
 * vm.compaction_proactiveness=0, and THP defrag=never, so faults do not
 * compact either (see bench/README.md).
 */
#include "workload.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define PAGES_PER_BLOCK (HPAGE / PAGE)
#define MAX_ZONES 16

struct buddy {
	int zones;
	char name[MAX_ZONES][32];
	long blocks[MAX_ZONES];	/* free memory in orders >= 9, in 2 MB blocks */
	long total;
};

/* Free 2 MB blocks (order 9 and above, counted in 2 MB units) per zone. */
static void read_buddyinfo(struct buddy *b)
{
	char line[512];
	FILE *f = fopen("/proc/buddyinfo", "r");

	memset(b, 0, sizeof(*b));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && b->zones < MAX_ZONES) {
		char *p = strstr(line, "zone"), *end;
		int order = 0;
		long n;

		if (!p)
			continue;
		p += 4;
		while (*p == ' ')
			p++;
		sscanf(p, "%31s", b->name[b->zones]);
		p += strlen(b->name[b->zones]);
		for (;; order++, p = end) {
			n = strtol(p, &end, 10);
			if (end == p)
				break;
			if (order >= 9)
				b->blocks[b->zones] += n << (order - 9);
		}
		b->total += b->blocks[b->zones];
		b->zones++;
	}
	fclose(f);
}

static void print_buddy(const char *key, const struct buddy *b)
{
	printf("\"%s\": {", key);
	for (int z = 0; z < b->zones; z++)
		printf("%s\"%s\": %ld", z ? ", " : "", b->name[z], b->blocks[z]);
	printf("}");
}

static volatile sig_atomic_t released;

static void on_signal(int sig)
{
	(void)sig;
	released = 1;
}

/* PFNs of the NPAGES pages at ADDR; 0 where a page is not present. */
static int read_pfns(int pagemap, uintptr_t addr, size_t npages, uint64_t *pfn)
{
	size_t done = 0;

	while (done < npages) {
		size_t n = npages - done > 8192 ? 8192 : npages - done;
		ssize_t r = pread(pagemap, pfn + done, n * 8, ((addr >> 12) + done) * 8);

		if (r <= 0)
			return -1;
		done += r / 8;
	}
	for (size_t i = 0; i < npages; i++)
		pfn[i] = pfn[i] & PM_PRESENT ? pfn[i] & PM_PFN_MASK : 0;
	return 0;
}

/* Is the page at ADDR the head of a transparent huge page? */
static int is_thp_head(int pagemap, int kpageflags, uintptr_t addr)
{
	uint64_t pfn, flags;

	if (read_pfns(pagemap, addr, 1, &pfn) || !pfn || (pfn & (PAGES_PER_BLOCK - 1)))
		return 0;
	flags = kpage_flags(kpageflags, pfn);
	return (flags >> KPF_THP & 1) && (flags >> KPF_COMPOUND_HEAD & 1);
}

int main(int argc, char **argv)
{
	long leave_mb = 32, hold_s = 0, frag_mb = 0;
	const char *pidfile = NULL;
	int opt, grab_huge = 1;
	struct buddy before, after, released_b;

	while ((opt = getopt(argc, argv, "l:f:p:t:n")) != -1) {
		switch (opt) {
		case 'l': leave_mb = atol(optarg); break;
		case 'f': frag_mb = atol(optarg); break;
		case 'p': pidfile = optarg; break;
		case 't': hold_s = atol(optarg); break;
		case 'n': grab_huge = 0; break;
		default:
			fprintf(stderr, "usage: %s [-l LEAVE_MB] [-f FRAG_MB] [-p PIDFILE] [-t SECONDS] [-n]\n",
				argv[0]);
			return 2;
		}
	}
	if (leave_mb < 0 || hold_s < 0 || frag_mb < 0) {
		fprintf(stderr, "fragment: bad -l, -f or -t\n");
		return 2;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
	setrlimit(RLIMIT_MEMLOCK, &inf);

	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	int kpageflags = open("/proc/kpageflags", O_RDONLY);

	if (pagemap < 0 || kpageflags < 0) {
		perror("fragment: /proc/self/pagemap or /proc/kpageflags");
		return 1;
	}

	double t0 = now();
	long free_before = meminfo_kb("MemFree"), total_kb = meminfo_kb("MemTotal");

	read_buddyinfo(&before);

	/* 1. Take free memory as base pages, down to LEAVE_MB. */
	size_t cap = (size_t)total_kb * 1024;
	char *area = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	size_t npages = 0, maxpages = cap / PAGE;
	uint64_t *pfn = malloc(maxpages * sizeof(*pfn));

	if (area == MAP_FAILED || !pfn) {
		perror("fragment: mmap");
		return 1;
	}
	madvise(area, cap, MADV_NOHUGEPAGE);
	for (;;) {
		long free_kb = meminfo_kb("MemFree");
		size_t step = free_kb > leave_mb * 1024 ? (free_kb - leave_mb * 1024) / 4 : 0;

		/* Half of what is left (4 MB at least), then look again. */
		if (step > 1024 && step / 2 > 1024)
			step /= 2;
		else if (step > 1024)
			step = 1024;
		if (step < 16 || npages + step > maxpages)
			break;
		for (size_t i = 0; i < step; i++)
			area[(npages + i) * PAGE] = 1;
		npages += step;
	}

	/* 2. One page per 2 MB physical block stays (mlocked), the rest goes. */
	if (read_pfns(pagemap, (uintptr_t)area, npages, pfn)) {
		perror("fragment: reading /proc/self/pagemap");
		return 1;
	}
	uint64_t maxpfn = 0;

	for (size_t i = 0; i < npages; i++) {
		if (pfn[i] > maxpfn)
			maxpfn = pfn[i];
	}
	if (npages && !maxpfn) {
		fprintf(stderr, "fragment: pagemap shows no PFNs (not root?)\n");
		return 1;
	}
	size_t nblocks = maxpfn / PAGES_PER_BLOCK + 1;
	/* Per block: 0 not seen, 1 fragmented (one page kept), 2 held whole. */
	unsigned char *state = calloc(nblocks, 1);
	unsigned char *keep = calloc(npages + 1, 1);
	long pinned = 0, whole = 0, lock_failed = 0;
	size_t freed = 0, run = 0;

	if (!state || !keep) {
		perror("fragment: calloc");
		return 1;
	}
	for (size_t i = 0; i < npages; i++) {
		uint64_t b = pfn[i] / PAGES_PER_BLOCK;

		if (!pfn[i]) {
			continue;
		} else if (!state[b]) {
			/* A new block: fragment it while below FRAG_MB, else hold it. */
			state[b] = !frag_mb || freed < (size_t)frag_mb * 256 ? 1 : 2;
			keep[i] = 1;
			pinned += state[b] == 1;
			whole += state[b] == 2;
		} else if (state[b] == 2) {
			keep[i] = 1;
		} else {
			freed++;
		}
	}
	/* Give back runs of pages not kept; lock runs of kept ones. */
	for (size_t i = 1; i <= npages; i++) {
		if (i < npages && keep[i] == keep[run])
			continue;
		if (keep[run]) {
			if (mlock(area + run * PAGE, (i - run) * PAGE))
				lock_failed++;
		} else {
			madvise(area + run * PAGE, (i - run) * PAGE, MADV_DONTNEED);
		}
		run = i;
	}

	/* 3. Whole free blocks that are left: take them as huge pages. */
	struct buddy mid;
	size_t nhuge = 0, huge_cap = 0;
	char *huge = NULL, *hmap = MAP_FAILED;

	read_buddyinfo(&mid);
	if (grab_huge && mid.total > 0) {
		huge_cap = (mid.total + 8) * HPAGE;
		hmap = mmap(NULL, huge_cap + HPAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (hmap != MAP_FAILED) {
			huge = (char *)(((uintptr_t)hmap + HPAGE - 1) & ~(HPAGE - 1));
			madvise(huge, huge_cap, MADV_HUGEPAGE);
			/* Until three faults in a row got no huge page. */
			for (size_t k = 0, misses = 0; k < huge_cap / HPAGE && misses < 3; k++) {
				char *p = huge + k * HPAGE;

				*p = 1;
				if (!is_thp_head(pagemap, kpageflags, (uintptr_t)p)) {
					madvise(p, HPAGE, MADV_DONTNEED);
					misses++;
					continue;
				}
				misses = 0;
				nhuge++;
				if (mlock(p, HPAGE))
					lock_failed++;
			}
		}
	}

	read_buddyinfo(&after);
	long free_after = meminfo_kb("MemFree");

	printf("{\"type\": \"fragment\", \"leave_mb\": %ld, \"pages_touched\": %zu, "
	       "\"frag_mb\": %ld, \"blocks_pinned\": %ld, \"blocks_held\": %ld, "
	       "\"fragmented_free_kb\": %zu, \"huge_held\": %zu, \"mlock_failed\": %ld, "
	       "\"mem_total_kb\": %ld, \"mem_free_before_kb\": %ld, \"mem_free_after_kb\": %ld, "
	       "\"free_2m_blocks_before\": %ld, \"free_2m_blocks_mid\": %ld, "
	       "\"free_2m_blocks_after\": %ld, ",
	       leave_mb, npages, frag_mb, pinned, whole, freed * 4, nhuge, lock_failed, total_kb, free_before, free_after,
	       before.total, mid.total, after.total);
	print_buddy("zones_before", &before);
	printf(", ");
	print_buddy("zones_after", &after);
	printf(", \"seconds\": %.2f, \"mono\": %.3f}\n", now() - t0, now());
	fflush(stdout);

	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
			perror("fragment: pidfile");
			return 1;
		}
	}
	fprintf(stderr, "fragment: ready: %ld blocks fragmented (one page pinned), %ld held whole, "
		"%zu huge pages held, free 2 MB blocks %ld -> %ld, MemFree %ld -> %ld kB\n",
		pinned, whole, nhuge, before.total, after.total, free_before, free_after);

	double t_hold = now();

	if (hold_s)
		alarm(hold_s);
	sigaction(SIGALRM, &sa, NULL);
	while (!released)
		pause();

	double t1 = now();

	munmap(area, cap);
	if (hmap != MAP_FAILED)
		munmap(hmap, huge_cap + HPAGE);
	double t2 = now();

	read_buddyinfo(&released_b);
	printf("{\"type\": \"fragment_release\", \"held_seconds\": %.2f, "
	       "\"release_seconds\": %.3f, \"mem_free_kb\": %ld, \"free_2m_blocks\": %ld, "
	       "\"mono\": %.3f}\n",
	       t1 - t_hold, t2 - t1, meminfo_kb("MemFree"), released_b.total, t2);
	fflush(stdout);
	if (pidfile)
		unlink(pidfile);
	return 0;
}
