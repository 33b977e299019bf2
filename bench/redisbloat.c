// SPDX-License-Identifier: GPL-2.0
/*
 * The client of the paper's Redis bloat experiment (§2.1, Figure 1,
 * Table 7): fills a Redis server over its Unix socket, deletes a random
 * share of the keys, measures GET throughput. Pipelined RESP, no library.
 *
 *   redisbloat -s SOCK fill PREFIX COUNT SIZE     SET PREFIX:i, i < COUNT
 *   redisbloat -s SOCK del PREFIX COUNT PCT SEED  DEL a random PCT% of them
 *   redisbloat -s SOCK get PREFIX COUNT PCT SEED SECS [RATE]
 *                                                  GET random survivors, at
 *                                                  most RATE a second if given
 *   redisbloat watch PID CONFIG PHASEFILE [CGROUP...]   a sample a second
 *   redisbloat dense PID                          its anonymous memory by
 *                                                  64 KB piece (root)
 *
 * Values are pseudo-random, non-zero bytes: a page of values is never
 * zero-filled, so bloat recovery cannot mistake data for bloat. Which keys
 * a `del` removes depends only on (COUNT, PCT, SEED), so `get` knows the
 * survivors. Each command prints one JSON object on stdout; it exits 1 if
 * the server goes away (killed by the OOM killer, say). `watch` prints a
 * JSON line a second about process PID, the system and each memory cgroup
 * named (a directory under /sys/fs/cgroup) until PID is gone:
 * a shell loop forking awk for every figure takes seconds per sample on
 * an emulated CPU.
 *
 * `dense` reads PID's page tables (/proc/PID/pagemap, /proc/kpageflags):
 * the 64 KB-aligned pieces of its anonymous mappings that present base
 * pages map whole, none of them the zero page (dense pieces left in base
 * pages), and the pieces large folios map.
 */
#include "workload.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#define DEPTH 32	/* requests in flight */

static int fd;
static char rbuf[1 << 16];
static size_t rlen, rpos;

static void die(const char *what)
{
	fprintf(stderr, "redisbloat: %s: %s\n", what, errno ? strerror(errno) : "server closed");
	exit(1);
}

static void send_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			die("write");
		p += w;
		n -= w;
	}
}

static int get_byte(void)
{
	if (rpos == rlen) {
		ssize_t r = read(fd, rbuf, sizeof(rbuf));

		if (r <= 0)
			die("read");
		rlen = r;
		rpos = 0;
	}
	return (unsigned char)rbuf[rpos++];
}

static long read_line_number(char *type)
{
	char line[64];
	size_t n = 0;
	int c;

	while ((c = get_byte()) != '\n')
		if (n < sizeof(line) - 1)
			line[n++] = c;
	line[n] = 0;
	*type = line[0];
	if (*type == '-') {
		fprintf(stderr, "redisbloat: server error: %s\n", line);
		exit(1);
	}
	return strtol(line + 1, NULL, 10);
}

/* Reads one reply (status, integer, error or bulk string) and drops it. */
static void read_reply(void)
{
	char type;
	long n = read_line_number(&type);

	if (type != '$' || n < 0)
		return;
	/* Skip the value and its CRLF a buffer at a time, not a byte at a time. */
	for (n += 2; n > 0;) {
		size_t k;

		if (rpos == rlen) {
			get_byte();
			n--;
			continue;
		}
		k = rlen - rpos < (size_t)n ? rlen - rpos : (size_t)n;
		rpos += k;
		n -= k;
	}
}

/* splitmix64: the same stream on every run. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static bool deleted(long i, int pct, uint64_t seed)
{
	return mix(seed * 0x100000001b3ULL + i) % 100 < (uint64_t)pct;
}

static char *cmd;
static size_t cmd_cap;

/* One RESP command: SET/DEL/GET key [value]. */
static void send_cmd(const char *verb, const char *prefix, long i,
		     const char *val, size_t vlen)
{
	char key[128], head[256];
	int klen = snprintf(key, sizeof(key), "%s:%ld", prefix, i);
	int hlen = snprintf(head, sizeof(head), "*%d\r\n$%zu\r\n%s\r\n$%d\r\n%s\r\n",
			    val ? 3 : 2, strlen(verb), verb, klen, key);
	size_t need = hlen + (val ? vlen + 32 : 0);

	if (need > cmd_cap) {
		cmd_cap = need;
		cmd = realloc(cmd, cmd_cap);
		if (!cmd)
			die("realloc");
	}
	memcpy(cmd, head, hlen);
	if (val) {
		hlen += snprintf(cmd + hlen, 32, "$%zu\r\n", vlen);
		memcpy(cmd + hlen, val, vlen);
		memcpy(cmd + hlen + vlen, "\r\n", 2);
		hlen += vlen + 2;
	}
	send_all(cmd, hlen);
}

/* Non-zero pseudo-random bytes, different for every key. */
static void make_value(char *v, size_t size, long i)
{
	uint64_t x = mix(i);

	for (size_t j = 0; j < size; j++) {
		if (j % 8 == 0)
			x = mix(x);
		v[j] = 'a' + (x >> (j % 8 * 8)) % 26;
	}
}

static int fill(const char *prefix, long count, size_t size)
{
	char *v = malloc(size);
	double t0 = now();
	long inflight = 0;

	if (!v)
		die("malloc");
	for (long i = 0; i < count; i++) {
		make_value(v, size, i);
		send_cmd("SET", prefix, i, v, size);
		if (++inflight == DEPTH) {
			while (inflight)
				read_reply(), inflight--;
		}
	}
	while (inflight)
		read_reply(), inflight--;
	printf("{\"op\": \"fill\", \"keys\": %ld, \"size\": %zu, \"secs\": %.3f}\n",
	       count, size, now() - t0);
	return 0;
}

static int del(const char *prefix, long count, int pct, uint64_t seed)
{
	double t0 = now();
	long inflight = 0, n = 0;

	for (long i = 0; i < count; i++) {
		if (!deleted(i, pct, seed))
			continue;
		send_cmd("DEL", prefix, i, NULL, 0);
		n++;
		if (++inflight == DEPTH) {
			while (inflight)
				read_reply(), inflight--;
		}
	}
	while (inflight)
		read_reply(), inflight--;
	printf("{\"op\": \"del\", \"keys\": %ld, \"secs\": %.3f}\n", n, now() - t0);
	return 0;
}

static int get(const char *prefix, long count, int pct, uint64_t seed, double secs,
	       double rate)
{
	double t0 = now(), t;
	uint64_t x = seed;
	long ops = 0;

	do {
		for (int k = 0; k < DEPTH; k++) {
			long i;

			do {
				x = mix(x);
				i = x % count;
			} while (deleted(i, pct, seed));
			send_cmd("GET", prefix, i, NULL, 0);
		}
		for (int k = 0; k < DEPTH; k++)
			read_reply();
		ops += DEPTH;
		t = now() - t0;
		/* A light load: wait until the next batch is due. */
		if (rate > 0 && ops / rate > t && ops / rate < secs)
			usleep((ops / rate - t) * 1e6);
		t = now() - t0;
	} while (t < secs);
	printf("{\"op\": \"get\", \"ops\": %ld, \"secs\": %.3f, \"ops_per_sec\": %.1f}\n",
	       ops, t, ops / t);
	return 0;
}

/* A number from a cgroup's FILE (its KEY line, if KEY); -1 if none. */
static long cg_value(const char *cg, const char *file, const char *key)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s", cg, file);
	if (key)
		return proc_value(path, key);
	f = fopen(path, "r");
	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* ", "cgroups": {NAME: {...}, ...}" for the cgroups in @cgs. */
static void watch_cgroups(FILE *out, char **cgs, int n)
{
	fprintf(out, ", \"cgroups\": {");
	for (int i = 0; i < n; i++)
		fprintf(out, "%s\"%s\": {\"kb\": %ld, \"thp_kb\": %ld, \"swap_kb\": %ld, "
		       "\"thp_split\": %ld, \"promoted\": %ld}", i ? ", " : "", cgs[i],
		       cg_value(cgs[i], "memory.current", NULL) / 1024,
		       cg_value(cgs[i], "memory.stat", "anon_thp") / 1024,
		       cg_value(cgs[i], "memory.swap.current", NULL) / 1024,
		       cg_value(cgs[i], "memory.stat", "hawkeye_debloat_thp_split"),
		       cg_value(cgs[i], "memory.stat", "hawkeye_promote_success"));
	fprintf(out, "}");
}

static int watch(int pid, const char *config, const char *phasefile, char **cgs, int ncg)
{
	char status[64], rollup[64], phase[32];
	double t0 = now();

	snprintf(status, sizeof(status), "/proc/%d/status", pid);
	snprintf(rollup, sizeof(rollup), "/proc/%d/smaps_rollup", pid);
	for (;;) {
		long rss = proc_value(status, "VmRSS"), swap = proc_value(status, "VmSwap");
		long huge = proc_value(rollup, "AnonHugePages");
		FILE *f = fopen(phasefile, "r");
		char *line = NULL;
		size_t len = 0;
		long rss_after;
		FILE *out;

		if (rss < 0 || huge < 0)
			return 0;	/* gone */
		phase[0] = 0;
		if (f) {
			if (!fgets(phase, sizeof(phase), f))
				phase[0] = 0;
			phase[strcspn(phase, "\n")] = 0;
			fclose(f);
		}
		/*
		 * The machine's figures are read after the process's: one that
		 * exits in between would pair its RSS with a machine that no
		 * longer holds its memory (mTHP 0, MemAvailable up). The
		 * process is read again after them.
		 */
		out = open_memstream(&line, &len);
		if (!out)
			return 1;
		fprintf(out, "{\"type\": \"sample\", \"config\": \"%s\", \"t\": %.2f, \"phase\": \"%s\", "
		       "\"rss_kb\": %ld, \"swap_kb\": %ld, \"anon_huge_kb\": %ld, "
		       "\"mem_available_kb\": %ld, \"swap_used_kb\": %ld, \"thp_split\": %ld, "
		       "\"zero_freed\": %ld, \"collapse\": %ld, \"mthp_kb\": %ld, "
		       "\"mthp_split\": %ld, \"prezero_pages\": %ld, \"prezero_wasted\": %ld, "
		       "\"free_zeroed_kb\": %ld, \"thp_split_all\": %ld, \"underused_split\": %ld, "
		       "\"mthp_split_all\": %ld, \"thp_fault_alloc\": %ld, "
		       "\"thp_fault_fallback\": %ld, \"mthp_fault_kb\": %ld",
		       config, now() - t0, phase, rss, swap, huge,
		       meminfo_kb("MemAvailable"), meminfo_kb("SwapTotal") - meminfo_kb("SwapFree"),
		       hawkeye_stat("debloat_thp_split"),
		       hawkeye_stat("debloat_zero_pages_freed"), vmstat("thp_collapse_alloc"),
		       mthp_stat("nr_anon", true), hawkeye_stat("debloat_mthp_split"),
		       hawkeye_stat("prezero_pages"), hawkeye_stat("prezero_wasted"),
		       vmstat("nr_free_zeroed") * 4, vmstat("thp_split_page"),
		       vmstat("thp_underused_split_page"), mthp_stat("split", false),
		       vmstat("thp_fault_alloc"), vmstat("thp_fault_fallback"),
		       mthp_stat("anon_fault_alloc", true));
		if (ncg)
			watch_cgroups(out, cgs, ncg);
		fputs("}\n", out);
		fclose(out);
		rss_after = proc_value(status, "VmRSS");
		/*
		 * Gone, or its memory going (the OOM reaper frees it while
		 * the process is still there): the sample is dropped.
		 */
		if (rss_after >= 0 && rss_after >= rss / 2 &&
		    proc_value(rollup, "AnonHugePages") >= 0) {
			fputs(line, stdout);
			fflush(stdout);
		}
		free(line);
		if (rss_after < 0)
			return 0;
		sleep(1);
	}
}

#define PIECE		16	/* base pages in 64 KB */
#define CHUNK		512	/* pagemap entries read at once */

/*
 * Add up the 64 KB-aligned pieces from @start to @end: *@dense the kB of
 * those that 16 present base pages map, none of them the zero page;
 * *@large those whose first page is of a large folio (a THP, an mTHP),
 * not the huge zero page.
 */
static int dense_range(int pm, int kpf, unsigned long start, unsigned long end,
		       long *dense, long *large)
{
	const unsigned long piece = PIECE * 4096UL;
	uint64_t e[CHUNK];
	unsigned long a;

	start = (start + piece - 1) & ~(piece - 1);
	for (a = start; a + piece <= end; a += CHUNK * 4096UL) {
		size_t n = (end - a) / 4096 < CHUNK ? (end - a) / 4096 : CHUNK;

		n -= n % PIECE;
		if (pread(pm, e, n * 8, a / 4096 * 8) != (ssize_t)(n * 8))
			return -1;
		for (size_t p = 0; p < n; p += PIECE) {
			uint64_t flags;
			int i;

			for (i = 0; i < PIECE; i++)
				if (!(e[p + i] & PM_PRESENT))
					break;
			if (i < PIECE)
				continue;
			if (!(e[p] & PM_PFN_MASK))
				return -1;	/* PFNs hidden: not root */
			flags = kpage_flags(kpf, e[p] & PM_PFN_MASK);
			if (flags >> KPF_ZERO_PAGE & 1)
				continue;
			if (flags >> KPF_THP & 1) {
				*large += PIECE * 4;
				continue;
			}
			for (i = 1; i < PIECE; i++) {
				flags = kpage_flags(kpf, e[p + i] & PM_PFN_MASK);
				if (flags >> KPF_ZERO_PAGE & 1 || flags >> KPF_THP & 1)
					break;
			}
			if (i == PIECE)
				*dense += PIECE * 4;
		}
	}
	return 0;
}

static int dense(int pid)
{
	char path[64], line[512], perms[8];
	long dense_kb = 0, large_kb = 0;
	unsigned long start, end;
	int pm, kpf, n;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pm = open(path, O_RDONLY);
	kpf = open("/proc/kpageflags", O_RDONLY);
	if (!maps || pm < 0 || kpf < 0) {
		perror("redisbloat dense");
		return 1;
	}
	while (fgets(line, sizeof(line), maps)) {
		/* Anonymous: no file (the heap counts). */
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &n) != 3 ||
		    perms[3] != 'p' || (line[n] && strncmp(line + n, "[heap]", 6)))
			continue;
		if (dense_range(pm, kpf, start, end, &dense_kb, &large_kb)) {
			fprintf(stderr, "redisbloat dense: cannot read the page tables of %d\n", pid);
			return 1;
		}
	}
	printf("{\"dense_base_kb\": %ld, \"large_kb\": %ld}\n", dense_kb, large_kb);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: redisbloat -s SOCK fill PREFIX COUNT SIZE\n"
		"       redisbloat -s SOCK del PREFIX COUNT PCT SEED\n"
		"       redisbloat -s SOCK get PREFIX COUNT PCT SEED SECS [RATE]\n"
		"       redisbloat watch PID CONFIG PHASEFILE [CGROUP...]\n"
		"       redisbloat dense PID\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int nargs;

	if (argc == 3 && !strcmp(argv[1], "dense"))
		return dense(atoi(argv[2]));
	if (argc >= 5 && !strcmp(argv[1], "watch"))
		return watch(atoi(argv[2]), argv[3], argv[4], argv + 5, argc - 5);
	if (argc < 5 || strcmp(argv[1], "-s"))
		usage();
	nargs = argc - 4;
	if (strlen(argv[2]) >= sizeof(sa.sun_path))
		usage();
	strcpy(sa.sun_path, argv[2]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	if (!strcmp(argv[3], "fill") && nargs == 3)
		return fill(argv[4], atol(argv[5]), atol(argv[6]));
	if (!strcmp(argv[3], "del") && nargs == 4)
		return del(argv[4], atol(argv[5]), atoi(argv[6]), strtoull(argv[7], NULL, 0));
	if (!strcmp(argv[3], "get") && (nargs == 5 || nargs == 6) && atol(argv[5]) > 0 &&
	    atoi(argv[6]) >= 0 && atoi(argv[6]) < 100)
		return get(argv[4], atol(argv[5]), atoi(argv[6]), strtoull(argv[7], NULL, 0),
			   atof(argv[8]), nargs == 6 ? atof(argv[9]) : 0);
	usage();
	return 2;
}
