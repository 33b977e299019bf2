// SPDX-License-Identifier: GPL-2.0
/*
 * An allocation-heavy program in the spirit of the paper's SparseHash run
 * (Table 8): insert random keys into a large open-addressing hash table
 * that is allocated up front and touched in random order, so its run time
 * is dominated by first-touch page faults.
 *
 *   hashinsert [-m MIB] [-n KEYS] [-l LABEL]
 *
 * Prints one JSON line: label, mib, keys, seconds, faults.
 */
#include "workload.h"
#include <sys/resource.h>

struct slot {
	uint64_t key, value;
};

int main(int argc, char **argv)
{
	unsigned long mib = 512, keys = 0, nslots, i, collisions = 0;
	const char *label = "unlabelled";
	uint64_t x = 0x9e3779b97f4a7c15ULL;	/* fixed seed: same keys every run */
	struct rusage r0, r1;
	struct slot *t;
	double t0, secs;
	int opt;

	while ((opt = getopt(argc, argv, "m:n:l:")) != -1) {
		switch (opt) {
		case 'm': mib = strtoul(optarg, NULL, 0); break;
		case 'n': keys = strtoul(optarg, NULL, 0); break;
		case 'l': label = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-m MIB] [-n KEYS] [-l LABEL]\n", argv[0]);
			return 2;
		}
	}
	nslots = (mib << 20) / sizeof(struct slot);
	if (!keys)
		keys = nslots / 8;	/* every page is touched many times */
	if (!mib || keys >= nslots || strpbrk(label, "\"\\")) {
		fprintf(stderr, "hashinsert: bad -m, -n or -l\n");
		return 2;
	}

	getrusage(RUSAGE_SELF, &r0);
	t0 = now();
	t = mmap(NULL, nslots * sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		perror("hashinsert: mmap");
		return 1;
	}
	for (i = 0; i < keys; i++) {
		uint64_t h;

		/* xorshift64*: keys are never 0, which marks an empty slot */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		h = x * 0x2545f4914f6cdd1dULL;
		for (uint64_t s = h % nslots;; s = (s + 1) % nslots) {
			if (!t[s].key) {
				t[s].key = x;
				t[s].value = i;
				break;
			}
			if (t[s].key == x)
				break;
			collisions++;
		}
	}
	secs = now() - t0;
	getrusage(RUSAGE_SELF, &r1);
	printf("{\"type\": \"hashinsert\", \"label\": \"%s\", \"mib\": %lu, \"keys\": %lu, "
	       "\"seconds\": %.3f, \"faults\": %ld, \"collisions\": %lu}\n",
	       label, mib, keys, secs, r1.ru_minflt - r0.ru_minflt, collisions);
	munmap(t, nslots * sizeof(*t));
	return 0;
}
