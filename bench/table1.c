// SPDX-License-Identifier: GPL-2.0
/*
 * Table 1 microbenchmark of the HawkEye paper (ASPLOS'19, section 2.2):
 * map N MiB of anonymous memory, write one byte in every 4 KB page in
 * order, unmap; R times. One JSON object per repetition on stdout.
 *
 *   table1 [-m MIB] [-r REPS] [-n FIRST] [-l LABEL] [-z] [-i SECS]
 *
 * No madvise: the system-wide THP mode decides the page size. -z (HawkEye)
 * waits, untimed, before each repetition until the run's size of free
 * memory is pre-zeroed. -n numbers the repetitions from FIRST (bench/table1.sh
 * runs one at a time, interleaving configurations, and numbers its rounds).
 * -i (churn) sleeps SECS before each repetition instead: a program that
 * frees and re-faults its memory every few seconds, idle in between, gets
 * only what the zeroing thread refilled in that time.
 *
 * One untimed warm-up pass (map, touch, unmap) comes first and is printed
 * as a "warmup" line: in our TCG guests the first pass over memory after a
 * configuration change was 1.5 to 23 times slower than the next, at random
 * and for Linux and HawkEye alike (bench/README.md), and no configuration
 * should pay for that in its timed repetitions.
 *
 * Fault time: every first touch is timed on its own with CLOCK_MONOTONIC
 * (vDSO); touch_time_us is their sum. With 4 KB pages every touch faults.
 * With larger pages only some do (1 of 512 with THP), and the others cost
 * a clock read pair and an access each. fault_time_us is the sum of the
 * `faults` slowest touches (faults = the kernel's ru_minflt delta), less
 * what a touch costs without a fault, measured by a second, untimed pass
 * over the mapped buffer (nofault_touch_ns) for each of them. Subtracting
 * that cost for every touch that did not fault instead made the small
 * error of 511 subtractions per fault outweigh a pre-zeroed fault: a
 * churn run's HawkEye-2MB came out at -15.7 us per fault, its second pass
 * slowed by the zeroing thread refilling the pool beside it.
 * avg_fault_us = fault_time_us / faults. total_us is mmap + first touches
 * + munmap.
 *
 * mTHP (a size below 2 MB enabled in its hugepages-<size>kB/enabled) is
 * counted from the kernel's per-size stats: mthp_fault_alloc.
 *
 * prezeroed / sync_zeroed count the faults of the run's page size only
 * (zeroing_size: "2m" when huge pages were faulted, "mthp" for mTHPs, else
 * "4k"), so that they add up to the faults of that size: the counters are
 * system-wide, and the 4 KB faults of the program itself or of anyone else
 * must not be counted with the 2 MB ones.
 */
#include "workload.h"
#include <sys/resource.h>

#define PAGE 4096UL

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

static double tv_us(struct timeval tv)
{
	return tv.tv_sec * 1e6 + tv.tv_usec;
}

/*
 * HawkEye: wait (untimed) until at least len bytes of free memory are
 * pre-zeroed, so that each repetition starts with a refilled pool. Returns
 * the seconds waited.
 */
static double wait_prezeroed(size_t len)
{
	double start = now_us();

	while (vmstat("nr_free_zeroed") * (long)PAGE < (long)len &&
	       now_us() - start < 120e6)
		usleep(50000);
	return (now_us() - start) / 1e6;
}

/* The zeroing counters of each page size: pre-zeroed, then zeroed at fault. */
enum { Z_4K, Z_2M, Z_MTHP, NR_Z };
static const char *const zeroing_size[NR_Z] = { "4k", "2m", "mthp" };

static void zeroing_counts(long pre[NR_Z], long sync[NR_Z])
{
	pre[Z_4K] = hawkeye_stat("fault_prezeroed_4k");
	sync[Z_4K] = hawkeye_stat("fault_sync_zero_4k");
	pre[Z_2M] = hawkeye_stat("fault_prezeroed_2m");
	sync[Z_2M] = hawkeye_stat("fault_sync_zero_2m");
	pre[Z_MTHP] = mthp_stat("hawkeye_fault_prezeroed", false);
	sync[Z_MTHP] = mthp_stat("hawkeye_fault_sync_zero", false);
}

static long delta(long a, long b)
{
	return a < 0 || b < 0 ? -1 : b - a;
}

static double timer_overhead_ns(void)
{
	double sum = 0;
	int i;

	for (i = 0; i < 100000; i++) {
		double a = now_us();

		sum += now_us() - a;
	}
	return sum * 1e3 / i;
}

/* The untimed warm-up pass: seconds it took. */
static double warm_up(size_t len)
{
	double start = now_us();
	char *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED) {
		perror("table1: mmap");
		exit(1);
	}
	for (size_t off = 0; off < len; off += PAGE)
		((volatile char *)map)[off] = 1;
	munmap(map, len);
	return (now_us() - start) / 1e6;
}

int main(int argc, char **argv)
{
	unsigned long mib = 1024;
	int reps = 10, first = 0, rep, opt, refill = 0;
	const char *label = "unlabelled";
	double idle = 0;

	while ((opt = getopt(argc, argv, "m:r:n:l:zi:")) != -1) {
		switch (opt) {
		case 'm': mib = strtoul(optarg, NULL, 0); break;
		case 'r': reps = atoi(optarg); break;
		case 'n': first = atoi(optarg); break;
		case 'l': label = optarg; break;
		case 'z': refill = 1; break;
		case 'i': idle = atof(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-m MIB] [-r REPS] [-n FIRST] [-l LABEL] [-z] [-i SECS]\n",
				argv[0]);
			return 2;
		}
	}
	if (!mib || reps < 1 || first < 0 || idle < 0 || strpbrk(label, "\"\\")) {
		fprintf(stderr, "table1: bad -m, -r, -n, -l or -i\n");
		return 2;
	}
	size_t len = mib << 20;
	double timer_ns = timer_overhead_ns();
	/* Each touch's time; written now, so that it takes no fault later. */
	double *touch = calloc(len / PAGE, sizeof(*touch));

	if (!touch) {
		perror("table1: calloc");
		return 1;
	}
	memset(touch, 1, len / PAGE * sizeof(*touch));

	printf("{\"type\": \"warmup\", \"label\": \"%s\", \"mib\": %lu, \"seconds\": %.2f}\n",
	       label, mib, warm_up(len));
	fflush(stdout);

	for (rep = 0; rep < reps; rep++) {
		struct rusage ru0, ru1;
		double waited = refill ? wait_prezeroed(len) : 0;

		if (idle > 0)
			usleep(idle * 1e6);
		long thp0 = vmstat("thp_fault_alloc"), mthp0 = mthp_stat("anon_fault_alloc", false);
		long pre0[NR_Z], sync0[NR_Z], pre1[NR_Z], sync1[NR_Z];
		double fault_us = 0;
		int z;

		zeroing_counts(pre0, sync0);

		getrusage(RUSAGE_SELF, &ru0);
		double start = now_us();
		/* Map 2 MB more and start on a 2 MB boundary so that every
		 * 2 MB of the buffer can be a huge page. */
		char *map = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			perror("table1: mmap");
			return 1;
		}
		volatile char *buf = (char *)(((uintptr_t)map + HPAGE - 1) & ~(HPAGE - 1));

		for (size_t off = 0; off < len; off += PAGE) {
			double t = now_us();

			buf[off] = 1;
			touch[off / PAGE] = now_us() - t;
		}
		/*
		 * The same touches again, now without faults: what a touch
		 * costs when it does not fault (the clock reads included).
		 * Untimed in total_us.
		 */
		double base_start = now_us(), base_us = 0;

		for (size_t off = 0; off < len; off += PAGE) {
			double t = now_us();

			buf[off] = 2;
			base_us += now_us() - t;
		}
		double base_end = now_us();

		munmap(map, len + HPAGE);
		double total_us = now_us() - start - (base_end - base_start);
		getrusage(RUSAGE_SELF, &ru1);
		long thp1 = vmstat("thp_fault_alloc"), mthp1 = mthp_stat("anon_fault_alloc", false);
		zeroing_counts(pre1, sync1);

		long faults = ru1.ru_minflt - ru0.ru_minflt;
		long touches = len / PAGE, i;
		double touch_us = 0;

		/* The slowest touches are the faults (511 of 512 are not, with THP). */
		for (i = 0; i < touches; i++)
			touch_us += touch[i];
		if (faults < touches)
			qsort(touch, touches, sizeof(*touch), cmp_desc);
		for (i = 0; i < faults && i < touches; i++)
			fault_us += touch[i];
		if (faults < touches)
			fault_us -= faults * base_us / touches;
		z = delta(mthp0, mthp1) > 0 ? Z_MTHP : delta(thp0, thp1) > 0 ? Z_2M : Z_4K;
		printf("{\"label\": \"%s\", \"rep\": %d, \"mib\": %lu, \"faults\": %ld, "
		       "\"fault_time_us\": %.1f, \"avg_fault_us\": %.3f, \"sys_us\": %.0f, "
		       "\"total_us\": %.1f, \"thp_fault_alloc\": %ld, \"timer_ns\": %.1f, "
		       "\"zeroing_size\": \"%s\", \"prezeroed\": %ld, \"sync_zeroed\": %ld, "
		       "\"refill_wait_s\": %.2f, \"idle_s\": %.2f, "
		       "\"touch_time_us\": %.1f, \"nofault_touch_ns\": %.1f, "
		       "\"mthp_fault_alloc\": %ld}\n",
		       label, first + rep, mib, faults, fault_us, faults ? fault_us / faults : 0,
		       tv_us(ru1.ru_stime) - tv_us(ru0.ru_stime), total_us,
		       delta(thp0, thp1), timer_ns,
		       zeroing_size[z], delta(pre0[z], pre1[z]), delta(sync0[z], sync1[z]), waited, idle,
		       touch_us, base_us * 1e3 / touches,
		       delta(mthp0, mthp1));
		fflush(stdout);
	}
	free(touch);
	return 0;
}
