// SPDX-License-Identifier: GPL-2.0
/*
 * fork()/exit() cost of a process that khugepaged knows (an MADV_HUGEPAGE
 * mapping touched), under each promotion policy named on the command line,
 * interleaved: "off means upstream" for the fork and exit paths. Per
 * policy and round one JSON line: microseconds per fork + exit + wait,
 * and the kmalloc-512 slab objects before and after (when /proc/slabinfo
 * exists). Run as root in the guest:
 *
 *   forkexit [-n FORKS] [-r ROUNDS] POLICY...
 */
#include "workload.h"
#include <sys/wait.h>

#define POLICY "/sys/kernel/mm/hawkeye/promote/policy"

static int set_policy(const char *p)
{
	FILE *f = fopen(POLICY, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(p, f) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* Active objects of a slab cache, or -1. */
static long slab_objects(const char *cache)
{
	char line[512], name[64];
	long active = -1, n;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", name, &n) == 2 && !strcmp(name, cache))
			active = n;
	fclose(f);
	return active;
}

int main(int argc, char **argv)
{
	int forks = 2000, rounds = 3, opt;
	size_t len = 4UL << 20;
	char *p;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		if (opt == 'n')
			forks = atoi(optarg);
		else if (opt == 'r')
			rounds = atoi(optarg);
		else
			return 2;
	}
	if (optind == argc) {
		fprintf(stderr, "usage: forkexit [-n FORKS] [-r ROUNDS] POLICY...\n");
		return 2;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, len, MADV_HUGEPAGE))
		return 1;
	memset(p, 1, len);	/* khugepaged registers this process */

	for (int r = 0; r < rounds; r++) {
		for (int i = optind; i < argc; i++) {
			long slab0, slab1;
			double t0, t;

			if (set_policy(argv[i])) {
				fprintf(stderr, "forkexit: cannot set policy %s\n", argv[i]);
				return 1;
			}
			slab0 = slab_objects("kmalloc-512");
			t0 = now();
			for (int k = 0; k < forks; k++) {
				pid_t pid = fork();

				if (pid < 0)
					return 1;
				if (!pid)
					_exit(0);
				waitpid(pid, NULL, 0);
			}
			t = now() - t0;
			slab1 = slab_objects("kmalloc-512");
			printf("{\"policy\": \"%s\", \"round\": %d, \"forks\": %d, "
			       "\"us_per_fork\": %.1f, \"kmalloc512_before\": %ld, "
			       "\"kmalloc512_after\": %ld}\n",
			       argv[i], r, forks, t / forks * 1e6, slab0, slab1);
			fflush(stdout);
		}
	}
	set_policy("linux");
	return 0;
}
