// SPDX-License-Identifier: GPL-2.0
/*
 * How fast a native x86-64 CPU clears 2 MB huge pages, by three methods,
 * and what a 2 MB anonymous fault of the running kernel costs: the share
 * of a huge page fault that pre-zeroing takes off it.
 *
 *   clearing [-m MB] [-r ROUNDS] [-o FILE]
 *
 * The clears, each over one buffer of MB MiB (default 2048, far beyond the
 * last-level cache), 2 MB-aligned, MADV_HUGEPAGE, faulted in at start-up,
 * cleared 2 MB block after 2 MB block (one pass), each block cold:
 *   per4k_stosq  Linux 6.12's huge page fault (folio_zero_user() ->
 *                process_huge_page()): the 512 subpages cleared one at a
 *                time with "rep stosq" (x86 clear_page_rep), the target
 *                subpage (the middle one) last, the others approaching it
 *                from both ends, left-right-left-right
 *   per4k_stosb  the same with "rep stosb" (clear_page_erms); only where
 *                the CPU has ERMS
 *   sequential   Linux 7.0's clear of the whole folio: one "rep stosb"
 *                over the 2 MB
 *   nontemporal  movnti, 8 bytes at a time, unrolled, over the 2 MB, then
 *                sfence
 * Before each pass the buffer is filled with a non-zero pattern, after it
 * every 8-byte word is checked to read zero (neither timed): a clear that
 * did not clear ends the run with exit status 1.
 *
 * The faults, each in a fresh mapping of MB MiB, 2 MB-aligned, unmapped
 * after the pass:
 *   fault_2m     MADV_HUGEPAGE, one byte written in the middle of each
 *                2 MB: microseconds per 2 MB fault; its AnonHugePages in
 *                /proc/self/smaps must cover 90 % of it or the pass is
 *                kept but marked invalid
 *   fault_4k     MADV_NOHUGEPAGE, one byte written per 4 KB: microseconds
 *                per 2 MB worth (512 faults); invalid if over 10 % huge
 *
 * Each fault pass is run twice in a row and only the second is recorded:
 * in a virtual machine the first touch of guest memory also pays the
 * host's faults, and memory the guest frees may go back to the host
 * (free page reporting, recorded in the environment) a few seconds later;
 * the second pass finds the memory the first one freed still backed.
 *
 * Each of ROUNDS (default 5) rounds runs every method once, the order
 * rotated by one each round. Progress lines go to stderr; one JSON object
 * (environment, settings, per method its per-round values with median,
 * min and max over the valid ones, and estimates derived from the
 * medians) to stdout, or to FILE with -o.
 */
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define HPAGE		(2UL << 20)
#define NR_SUBPAGES	(HPAGE / PAGE)
#define MAX_ROUNDS	1000

enum method { PER4K_STOSQ, PER4K_STOSB, SEQUENTIAL, NONTEMPORAL, FAULT_2M, FAULT_4K, NR_METHODS };

static const char *const method_name[NR_METHODS] = {
	"per4k_stosq", "per4k_stosb", "sequential", "nontemporal", "fault_2m", "fault_4k",
};

struct result {
	double value[MAX_ROUNDS];	/* GB/s (clears) or us per 2 MB (faults) */
	long huge_kb[MAX_ROUNDS];	/* faults: AnonHugePages of the mapping */
	int valid[MAX_ROUNDS];
	int n;
	int skipped;
	double median, min, max;	/* over the valid values; NAN: none */
	int nvalid;
};

static struct result res[NR_METHODS];
static unsigned int subpage_order[NR_SUBPAGES];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The order in which process_huge_page() (Linux 6.12 mm/memory.c) visits
 * the nr subpages of a huge page for a fault on subpage n: the far end
 * first, then the rest left-right-left-right towards n, which comes last.
 */
static void process_huge_page_order(unsigned int *order, int nr, int n)
{
	int i, base, l, k = 0;

	if (2 * n <= nr) {
		base = 0;
		l = n;
		for (i = nr - 1; i >= 2 * n; i--)
			order[k++] = i;
	} else {
		base = nr - 2 * (nr - n);
		l = nr - n;
		for (i = 0; i < base; i++)
			order[k++] = i;
	}
	for (i = 0; i < l; i++) {
		order[k++] = base + i;
		order[k++] = base + 2 * l - 1 - i;
	}
}

/* x86 clear_page_rep */
static inline void clear_page_stosq(void *page)
{
	unsigned long cnt = PAGE / 8;

	asm volatile("rep stosq" : "+c" (cnt), "+D" (page) : "a" (0UL) : "memory");
}

/* x86 clear_page_erms */
static inline void clear_page_stosb(void *page)
{
	unsigned long cnt = PAGE;

	asm volatile("rep stosb" : "+c" (cnt), "+D" (page) : "a" (0UL) : "memory");
}

static void clear_per4k_stosq(char *block)
{
	for (unsigned int k = 0; k < NR_SUBPAGES; k++)
		clear_page_stosq(block + subpage_order[k] * PAGE);
}

static void clear_per4k_stosb(char *block)
{
	for (unsigned int k = 0; k < NR_SUBPAGES; k++)
		clear_page_stosb(block + subpage_order[k] * PAGE);
}

static void clear_sequential(char *block)
{
	unsigned long cnt = HPAGE;
	void *p = block;

	asm volatile("rep stosb" : "+c" (cnt), "+D" (p) : "a" (0UL) : "memory");
}

static void clear_nontemporal(char *block)
{
	for (char *p = block, *end = block + HPAGE; p < end; p += 64)
		asm volatile("movnti %1, 0(%0)\n\t"
			     "movnti %1, 8(%0)\n\t"
			     "movnti %1, 16(%0)\n\t"
			     "movnti %1, 24(%0)\n\t"
			     "movnti %1, 32(%0)\n\t"
			     "movnti %1, 40(%0)\n\t"
			     "movnti %1, 48(%0)\n\t"
			     "movnti %1, 56(%0)"
			     : : "r" (p), "r" (0UL) : "memory");
	asm volatile("sfence" : : : "memory");
}

static void (*const clear_fn[])(char *) = {
	[PER4K_STOSQ] = clear_per4k_stosq,
	[PER4K_STOSB] = clear_per4k_stosb,
	[SEQUENTIAL] = clear_sequential,
	[NONTEMPORAL] = clear_nontemporal,
};

/*
 * A 2 MB-aligned read-write mapping of len bytes with PROT_NONE guards on
 * both sides, so that it is a VMA of its own (its smaps entry is just it).
 * *resv and *resv_len: what to munmap.
 */
static char *map_aligned(size_t len, int advice, void **resv, size_t *resv_len)
{
	size_t total = len + 2 * HPAGE;
	char *p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a;

	if (p == MAP_FAILED) {
		perror("clearing: mmap");
		exit(1);
	}
	a = (char *)(((uintptr_t)p + PAGE + HPAGE - 1) & ~(HPAGE - 1));
	if (mprotect(a, len, PROT_READ | PROT_WRITE)) {
		perror("clearing: mprotect");
		exit(1);
	}
	if (madvise(a, len, advice))
		perror("clearing: madvise");
	*resv = p;
	*resv_len = total;
	return a;
}

/* AnonHugePages (kB) of the smaps entry that starts at addr; -1: none. */
static long anon_huge_kb(const void *addr)
{
	unsigned long start, end;
	char line[512];
	int in = 0;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			if (in)
				break;
			in = start == (uintptr_t)addr;
		} else if (in && !strncmp(line, "AnonHugePages:", 14)) {
			kb = strtol(line + 14, NULL, 10);
		}
	}
	fclose(f);
	return kb;
}

/* Every 8-byte word of buf reads zero, or the run ends here. */
static void verify_zero(const char *buf, size_t len, int m)
{
	const volatile uint64_t *w = (const uint64_t *)buf;

	for (size_t i = 0; i < len / 8; i++) {
		if (w[i]) {
			fprintf(stderr, "clearing: %s left a word non-zero at offset %zu (0x%llx): not a clear\n",
				method_name[m], i * 8, (unsigned long long)w[i]);
			exit(1);
		}
	}
}

static double clear_pass(char *buf, size_t len, int m)
{
	double t;

	memset(buf, 0x5a, len);
	t = now();
	for (size_t off = 0; off < len; off += HPAGE)
		clear_fn[m](buf + off);
	t = now() - t;
	verify_zero(buf, len, m);
	return len / t / 1e9;
}

static double fault_pass(size_t len, int m, long *huge_kb)
{
	int huge = m == FAULT_2M;
	size_t stride = huge ? HPAGE : PAGE;
	size_t first = huge ? HPAGE / 2 : 0;
	size_t resv_len;
	void *resv;
	char *a = map_aligned(len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE, &resv, &resv_len);
	volatile char *v = a;
	double t;

	t = now();
	for (size_t off = first; off < len; off += stride)
		v[off] = 1;
	t = now() - t;
	*huge_kb = anon_huge_kb(a);
	munmap(resv, resv_len);
	return t * 1e6 / (len / HPAGE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void summarise(struct result *r)
{
	double v[MAX_ROUNDS];
	int n = 0;

	for (int i = 0; i < r->n; i++)
		if (r->valid[i])
			v[n++] = r->value[i];
	r->nvalid = n;
	r->median = r->min = r->max = NAN;
	if (!n)
		return;
	qsort(v, n, sizeof(v[0]), cmp_double);
	r->min = v[0];
	r->max = v[n - 1];
	r->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The first line of path, or "" */
static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, size, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/* The [selected] word of a sysfs mode file, or "" */
static void thp_mode(const char *path, char *buf, size_t size)
{
	char line[256], *s, *e;

	read_line(path, line, sizeof(line));
	buf[0] = 0;
	s = strchr(line, '[');
	e = s ? strchr(s, ']') : NULL;
	if (e && (size_t)(e - s) <= size) {
		memcpy(buf, s + 1, e - s - 1);
		buf[e - s - 1] = 0;
	}
}

/*
 * Whether a virtio balloon offers free page reporting (feature bit 5):
 * memory the guest frees goes back to the host; -1: no balloon found.
 */
static int free_page_reporting(void)
{
	char path[4096], dev[64], feat[256];
	int r = -1;
	glob_t g;

	if (glob("/sys/bus/virtio/devices/*", 0, NULL, &g))
		return -1;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		snprintf(path, sizeof(path), "%s/device", g.gl_pathv[i]);
		read_line(path, dev, sizeof(dev));
		if (strtol(dev, NULL, 0) != 5)
			continue;
		snprintf(path, sizeof(path), "%s/features", g.gl_pathv[i]);
		read_line(path, feat, sizeof(feat));
		r = strlen(feat) > 5 && feat[5] == '1';
	}
	globfree(&g);
	return r;
}

static int has_flag(const char *flags, const char *flag)
{
	size_t l = strlen(flag);

	for (const char *p = flags; (p = strstr(p, flag)); p += l)
		if ((p == flags || p[-1] == ' ' || p[-1] == '\t') && (!p[l] || p[l] == ' ' || p[l] == '\n'))
			return 1;
	return 0;
}

static char cpu_model[256], cpu_flags[8192];

static void read_cpuinfo(void)
{
	static char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!c)
			continue;
		c += 1 + (c[1] == ' ');
		c[strcspn(c, "\n")] = 0;
		if (!cpu_model[0] && !strncmp(line, "model name", 10))
			snprintf(cpu_model, sizeof(cpu_model), "%s", c);
		else if (!cpu_flags[0] && !strncmp(line, "flags", 5))
			snprintf(cpu_flags, sizeof(cpu_flags), "%s", c);
		if (cpu_model[0] && cpu_flags[0])
			break;
	}
	fclose(f);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

/* v, or null where it is NAN (not measured) or infinite */
static void json_number(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("null", f);
	else
		fprintf(f, "%.4g", v);
}

/* us to clear 2 MB at the method's median GB/s; NAN: not measured */
static double clear_us(int m)
{
	return HPAGE / (res[m].median * 1e9) * 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: clearing [-m MB] [-r ROUNDS] [-o FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long mb = 2048;
	int rounds = 5, erms, opt, m, r;
	const char *out = NULL;
	char thp[64], defrag[64];
	struct utsname uts;
	size_t len, resv_len;
	long buf_huge_kb;
	void *resv;
	char *buf;
	FILE *f;

	while ((opt = getopt(argc, argv, "m:r:o:")) != -1) {
		switch (opt) {
		case 'm':
			mb = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind < argc || mb < 2 || rounds < 1 || rounds > MAX_ROUNDS)
		usage();
	len = (mb << 20) & ~(HPAGE - 1);

	read_cpuinfo();
	erms = has_flag(cpu_flags, "erms");
	thp_mode("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp));
	thp_mode("/sys/kernel/mm/transparent_hugepage/defrag", defrag, sizeof(defrag));
	uname(&uts);
	process_huge_page_order(subpage_order, NR_SUBPAGES, NR_SUBPAGES / 2);
	res[PER4K_STOSB].skipped = !erms;

	buf = map_aligned(len, MADV_HUGEPAGE, &resv, &resv_len);
	memset(buf, 0x5a, len);
	buf_huge_kb = anon_huge_kb(buf);
	fprintf(stderr, "clearing: %lu MiB buffer, %ld kB of it huge; %d rounds; %s\n",
		len >> 20, buf_huge_kb, rounds, cpu_model);

	for (r = 0; r < rounds; r++) {
		for (int i = 0; i < NR_METHODS; i++) {
			struct result *rs;
			long huge_kb = -1;
			double v;

			m = (i + r) % NR_METHODS;
			rs = &res[m];
			if (rs->skipped)
				continue;
			if (m == FAULT_2M || m == FAULT_4K) {
				fault_pass(len, m, &huge_kb);
				v = fault_pass(len, m, &huge_kb);
				rs->valid[rs->n] = m == FAULT_2M ? huge_kb * 1024 >= 0.9 * len :
					huge_kb >= 0 && huge_kb * 1024 <= 0.1 * len;
				fprintf(stderr, "clearing: round %d/%d %-12s %8.2f us per 2 MB, %ld kB huge%s\n",
					r + 1, rounds, method_name[m], v, huge_kb,
					rs->valid[rs->n] ? "" : " (invalid)");
			} else {
				v = clear_pass(buf, len, m);
				rs->valid[rs->n] = 1;
				fprintf(stderr, "clearing: round %d/%d %-12s %8.2f GB/s\n",
					r + 1, rounds, method_name[m], v);
			}
			rs->huge_kb[rs->n] = huge_kb;
			rs->value[rs->n++] = v;
		}
	}
	for (m = 0; m < NR_METHODS; m++)
		summarise(&res[m]);

	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		return 1;
	}
	fprintf(f, "{\n  \"environment\": {\"cpu\": ");
	json_string(f, cpu_model);
	fprintf(f, ", \"cores\": %ld, \"kernel\": ", sysconf(_SC_NPROCESSORS_ONLN));
	json_string(f, uts.release);
	fprintf(f, ", \"erms\": %s, \"fsrm\": %s, \"hypervisor\": %s, \"llc_bytes\": %ld,\n    \"thp_enabled\": ",
		erms ? "true" : "false", has_flag(cpu_flags, "fsrm") ? "true" : "false",
		has_flag(cpu_flags, "hypervisor") ? "true" : "false", sysconf(_SC_LEVEL3_CACHE_SIZE));
	json_string(f, thp);
	fprintf(f, ", \"thp_defrag\": ");
	json_string(f, defrag);
	r = free_page_reporting();
	fprintf(f, ", \"free_page_reporting\": %s", r < 0 ? "null" : r ? "true" : "false");
	fprintf(f, "},\n  \"settings\": {\"mb\": %lu, \"rounds\": %d, \"buffer_huge_kb\": %ld, \"per4k_target_subpage\": %lu,\n    \"fault_passes_after_untimed_one\": true,\n",
		len >> 20, rounds, buf_huge_kb, NR_SUBPAGES / 2);
	fprintf(f, "    \"units\": {\"clear\": \"GB/s (1e9 bytes/s)\", \"fault\": \"us per 2 MB\"}},\n  \"methods\": {");
	for (m = 0; m < NR_METHODS; m++) {
		struct result *rs = &res[m];
		int fault = m == FAULT_2M || m == FAULT_4K;

		fprintf(f, "%s\n    \"%s\": {", m ? "," : "", method_name[m]);
		if (rs->skipped) {
			fprintf(f, "\"skipped\": \"no erms\"}");
			continue;
		}
		fprintf(f, "\"values\": [");
		for (int i = 0; i < rs->n; i++) {
			fputs(i ? ", " : "", f);
			json_number(f, rs->value[i]);
		}
		fprintf(f, "]");
		if (fault) {
			fprintf(f, ", \"huge_kb\": [");
			for (int i = 0; i < rs->n; i++)
				fprintf(f, "%s%ld", i ? ", " : "", rs->huge_kb[i]);
			fprintf(f, "], \"valid\": [");
			for (int i = 0; i < rs->n; i++)
				fprintf(f, "%s%s", i ? ", " : "", rs->valid[i] ? "true" : "false");
			fprintf(f, "]");
		}
		fprintf(f, ", \"median\": ");
		json_number(f, rs->median);
		fprintf(f, ", \"min\": ");
		json_number(f, rs->min);
		fprintf(f, ", \"max\": ");
		json_number(f, rs->max);
		fprintf(f, "}");
	}

	/*
	 * Estimates: the 6.12 fault clears its page per 4 KB (the faster of
	 * the two variants stands for it); take that clear out of the fault's
	 * median and put each other method's clear in.
	 */
	{
		int best = res[PER4K_STOSB].median > res[PER4K_STOSQ].median ? PER4K_STOSB : PER4K_STOSQ;
		double fault = res[FAULT_2M].median, c4k = clear_us(best), pre = fault - c4k;
		static const int with[] = { SEQUENTIAL, NONTEMPORAL };

		fprintf(f, "\n  },\n  \"estimates\": {\"per4k_variant\": \"%s\", \"clear_us_per_2m_estimate\": {",
			method_name[best]);
		for (m = PER4K_STOSQ; m <= NONTEMPORAL; m++) {
			fprintf(f, "%s\"%s\": ", m ? ", " : "", method_name[m]);
			json_number(f, clear_us(m));
		}
		fprintf(f, "},\n    \"fault_2m_clear_share_per4k_estimate\": ");
		json_number(f, c4k / fault);
		fprintf(f, ", \"prezeroed_fault_us_estimate\": ");
		json_number(f, pre);
		for (unsigned int i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
			double c = clear_us(with[i]);
			double est = pre + c;

			fprintf(f, ",\n    \"fault_2m_us_estimate_%s\": ", method_name[with[i]]);
			json_number(f, est);
			fprintf(f, ", \"prezeroed_over_fault_ratio_estimate_%s\": ", method_name[with[i]]);
			json_number(f, pre / est);
		}
		fprintf(f, ",\n    \"prezeroed_over_fault_ratio_estimate_per4k\": ");
		json_number(f, pre / fault);
		fprintf(f, "}\n}\n");
	}
	if (out && fclose(f)) {
		perror(out);
		return 1;
	}
	munmap(resv, resv_len);
	return 0;
}
