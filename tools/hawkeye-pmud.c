// SPDX-License-Identifier: GPL-2.0
/*
 * hawkeye-pmud: measures each process's MMU overhead with hardware
 * performance counters and hands it to the kernel's hawkeye-pmu policy.
 *
 * MMU overhead = cycles spent in data-TLB page walks (loads + stores)
 * x 100 / unhalted cycles, over all threads of a process (the paper's
 * Table 4). Every PERIOD seconds, for WINDOW seconds, it counts the
 * processes whose /proc/<pid>/hawkeye shows regions that promotion could
 * promote, and writes "PID OVERHEAD" (1/100 %) to
 * /sys/kernel/mm/hawkeye/promote/measured_overhead. Processes whose
 * counters do not fit RLIMIT_NOFILE together are counted in more windows,
 * one after the other; a process it may not count is skipped.
 *
 * Events come from libpfm4's tables for the running CPU:
 *   Intel Skylake and later  DTLB_{LOAD,STORE}_MISSES:WALK_ACTIVE
 *   Intel Haswell, Broadwell DTLB_{LOAD,STORE}_MISSES:WALK_DURATION
 *   AMD Zen 1-4              no page-walk cycle counter: L2 DTLB misses
 *                            (each one a walk) x --walk-cycles, an estimate
 *
 * Without a PMU, --model takes the same measurements from the TLB model
 * (tools/tlbmodel/plugin.c) of the QEMU the guest runs in: its counters
 * file, as the guest sees it, gives each modeled process's page-walk
 * cycles and instructions, and --cpi (the model's calibrated cycles per
 * instruction, bench/modeled_tlb.py) turns instructions into cycles.
 *
 * Exit status: 0 stopped by a signal or --once done, 1 other error,
 * 2 usage, 3 no usable PMU (or model) here, 4 not permitted, 5 not a
 * HawkEye kernel.
 *
 * Why a daemon and not the kernel: the events differ per CPU model and
 * their names live in libpfm4, maintained outside the kernel; perf_event
 * already multiplexes and scales counters for a process's threads. The
 * kernel keeps only the policy and a root-only way in, as the original
 * HawkEye did.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <perfmon/pfmlib_perf_event.h>

enum { EXIT_USAGE = 2, EXIT_NO_PMU = 3, EXIT_PERM = 4, EXIT_NO_HAWKEYE = 5 };
enum { CYCLES, WALK_LOAD, WALK_STORE, NR_EVENTS };

#define SYSFS_FILE "/sys/kernel/mm/hawkeye/promote/measured_overhead"
#define MAX_BP 10000

/* One way to count page-walk cycles; the first that resolves is used. */
static const struct event_set {
	const char *what;
	const char *name[NR_EVENTS];	/* WALK_STORE NULL: one walk event */
	bool counts_walks;		/* walks, not cycles: x walk_cycles */
} event_sets[] = {
	{ "Intel Skylake and later",
	  { "UNHALTED_CORE_CYCLES", "DTLB_LOAD_MISSES:WALK_ACTIVE",
	    "DTLB_STORE_MISSES:WALK_ACTIVE" }, false },
	{ "Intel Haswell/Broadwell",
	  { "UNHALTED_CORE_CYCLES", "DTLB_LOAD_MISSES:WALK_DURATION",
	    "DTLB_STORE_MISSES:WALK_DURATION" }, false },
	{ "AMD Zen (walks x --walk-cycles: an estimate)",
	  { "CYCLES_NOT_IN_HALT",
	    "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_2M_L2_MISS:"
	    "TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS", NULL },
	  true },
};

struct events {
	const struct event_set *set;
	int nr;
	struct perf_event_attr attr[NR_EVENTS];
	char *fstr[NR_EVENTS];
};

/* A value of a counter that ran @running of the @enabled time, scaled. */
static uint64_t scale(uint64_t value, uint64_t enabled, uint64_t running)
{
	if (!running)
		return 0;
	if (running >= enabled)
		return value;
	return (uint64_t)((double)value * enabled / running);
}

/*
 * MMU overhead in 1/100 % from summed, scaled counts; @walk_cycles > 0
 * when the walk events count walks rather than cycles.
 */
static int overhead_bp(uint64_t cycles, uint64_t load, uint64_t store,
		       unsigned int walk_cycles)
{
	double walk = (double)load + store;

	if (!cycles)
		return 0;
	if (walk_cycles)
		walk *= walk_cycles;
	walk = walk * MAX_BP / cycles;
	return walk > MAX_BP ? MAX_BP : (int)(walk + 0.5);
}

static int resolve(struct events *ev)
{
	for (size_t s = 0; s < sizeof(event_sets) / sizeof(event_sets[0]); s++) {
		const struct event_set *set = &event_sets[s];
		int i, ok = 1;

		memset(ev, 0, sizeof(*ev));
		for (i = 0; i < NR_EVENTS && set->name[i] && ok; i++) {
			pfm_perf_encode_arg_t arg = { .size = sizeof(arg) };

			arg.attr = &ev->attr[i];
			arg.fstr = &ev->fstr[i];
			ev->attr[i].size = sizeof(ev->attr[i]);
			ok = pfm_get_os_event_encoding(set->name[i], PFM_PLM0 | PFM_PLM3,
						       PFM_OS_PERF_EVENT, &arg) == PFM_SUCCESS;
			/* perf's generic events are not this CPU's: no. */
			ok = ok && strncmp(ev->fstr[i], "perf", 4);
		}
		if (ok) {
			ev->set = set;
			ev->nr = i;
			return 0;
		}
		for (i = 0; i < NR_EVENTS; i++)
			free(ev->fstr[i]);
	}
	return -1;
}

/*
 * --software, for tests on machines without a PMU: task-clock stands for
 * cycles and page faults for walk cycles, so that the whole measuring
 * loop runs; the figures mean nothing. User space only, as
 * perf_event_paranoid 2 lets any user count its own processes: tests can
 * then see a process refused amid others that are not.
 */
static const struct event_set software_set = {
	"software events (test mode: the figures mean nothing)",
	{ "task-clock", "page-faults", NULL }, false,
};

static void resolve_software(struct events *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->set = &software_set;
	ev->nr = 2;
	for (int i = 0; i < 2; i++) {
		ev->attr[i].size = sizeof(ev->attr[i]);
		ev->attr[i].type = PERF_TYPE_SOFTWARE;
		ev->attr[i].config = i ? PERF_COUNT_SW_PAGE_FAULTS : PERF_COUNT_SW_TASK_CLOCK;
		ev->attr[i].exclude_kernel = 1;
		ev->attr[i].exclude_hv = 1;
		ev->fstr[i] = strdup(software_set.name[i]);
	}
}

static bool have_pmu(void)
{
	return !access("/sys/bus/event_source/devices/cpu", F_OK) ||
	       !access("/sys/bus/event_source/devices/cpu_core", F_OK);
}

static int perf_open(struct perf_event_attr *attr, pid_t tid, int group)
{
	return syscall(SYS_perf_event_open, attr, tid, -1, group, 0);
}

/* Counters of one thread: a group, so that they count at the same time. */
struct thread {
	int fd[NR_EVENTS];
};

struct proc {
	pid_t pid;
	unsigned long long start;	/* with pid, which process: PIDs are reused */
	struct thread *t;
	int nr_t;
	uint64_t sum[NR_EVENTS];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig __attribute__((unused)))
{
	stop = 1;
}

/* regions N from /proc/<pid>/hawkeye; -1 if unreadable. */
static long hawkeye_regions(const char *proc, pid_t pid)
{
	char path[256], line[128];
	long regions = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/hawkeye", proc, pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "regions %ld", &regions) == 1)
			break;
	fclose(f);
	return regions;
}

/* Start time of process @pid (stat field 22, clock ticks after boot). */
static int start_time(const char *proc, pid_t pid, unsigned long long *start)
{
	char path[256], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/stat", proc, pid);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* Fields 3.. follow the comm, which may hold spaces and ')'. */
	p = p ? strrchr(buf, ')') : NULL;
	for (int i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, "%llu", start) != 1)
		return -ESRCH;
	return 0;
}

static bool out_of_fds(int err)
{
	return err == -EMFILE || err == -ENFILE;
}

static void proc_close(struct proc *p, int nr_events)
{
	for (int k = 0; k < p->nr_t; k++)
		for (int i = 0; i < nr_events; i++)
			close(p->t[k].fd[i]);
	free(p->t);
	p->t = NULL;
	p->nr_t = 0;
}

/*
 * Open the counters of every thread of @p; -errno of the first failure.
 * Out of descriptors, none stay open: a process is counted whole or not.
 */
static int proc_open(struct proc *p, struct events *ev, const char *proc)
{
	char path[256];
	struct dirent *d;
	int err = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/task", proc, p->pid);
	dir = opendir(path);
	if (!dir)
		return errno == EMFILE || errno == ENFILE ? -errno : -ESRCH;
	while ((d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);
		struct thread *t;
		int i, e;

		if (tid <= 0)
			continue;
		t = realloc(p->t, (p->nr_t + 1) * sizeof(*t));
		if (!t) {
			err = -ENOMEM;
			break;
		}
		p->t = t;
		t = &p->t[p->nr_t];
		for (i = 0; i < ev->nr; i++) {
			struct perf_event_attr a = ev->attr[i];

			a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
					PERF_FORMAT_TOTAL_TIME_RUNNING;
			a.disabled = !i;
			t->fd[i] = perf_open(&a, tid, i ? t->fd[0] : -1);
			if (t->fd[i] < 0)
				break;
		}
		if (i == ev->nr) {
			p->nr_t++;
			continue;
		}
		e = errno;
		while (i--)
			close(t->fd[i]);
		if (out_of_fds(-e)) {
			err = -e;
			break;
		}
		/* A thread that exited meanwhile is fine; anything else is not. */
		if (e != ESRCH && !err)
			err = -e;
	}
	closedir(dir);
	if (out_of_fds(err)) {
		proc_close(p, ev->nr);
		return err;
	}
	return p->nr_t ? 0 : (err ? err : -ESRCH);
}

static void proc_read_close(struct proc *p, int nr_events)
{
	for (int k = 0; k < p->nr_t; k++) {
		for (int i = 0; i < nr_events; i++) {
			uint64_t v[3];

			if (read(p->t[k].fd[i], v, sizeof(v)) == sizeof(v))
				p->sum[i] += scale(v[0], v[1], v[2]);
		}
	}
	proc_close(p, nr_events);
}

static int write_measurement(const char *file, pid_t pid, int bp)
{
	int fd = open(file, O_WRONLY);	/* never creates: sysfs or nothing */
	char buf[64];
	int n, err = 0;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d %d\n", pid, bp);
	if (write(fd, buf, n) != n)
		err = -errno;
	close(fd);
	return err;
}

struct options {
	double period, window, cpi;
	unsigned int walk_cycles;
	int once;			/* set by getopt_long() */
	bool dry_run, verbose;
	const char *proc, *sysfs, *model;
};

/* 2-3 counters per thread of every candidate: take every descriptor we may. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - t0->tv_sec + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int perm_error(const char *what)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 99;

	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 99;
		fclose(f);
	}
	fprintf(stderr, "hawkeye-pmud: not permitted to %s (perf_event_paranoid=%d): run it as root\n",
		what, paranoid);
	return EXIT_PERM;
}

/* Hand one measurement to the kernel; an exit status, or -1 to go on. */
static int report(const char *file, pid_t pid, int bp)
{
	int err = write_measurement(file, pid, bp);

	if (err == -EACCES || err == -EPERM)
		return perm_error("write the kernel's measured_overhead");
	if (err == -ENOENT && access(file, F_OK)) {
		fprintf(stderr, "hawkeye-pmud: %s is missing: not a HawkEye kernel with hawkeye-pmu\n",
			file);
		return EXIT_NO_HAWKEYE;
	}
	/* -ESRCH, -ENOENT: the process exited or left promotion meanwhile. */
	return -1;
}

/*
 * Count the opened processes of @ps[0..@nr) for one window and hand the
 * overhead of each to the kernel if it is still the process counted; an
 * exit status, or -1.
 */
static int measure_batch(struct proc *ps, int nr, struct events *ev, const struct options *o)
{
	struct timespec w = { (time_t)o->window,
			      (long)((o->window - (time_t)o->window) * 1e9) };
	int i, ret = -1;

	for (i = 0; i < nr; i++)
		for (int k = 0; k < ps[i].nr_t; k++)
			ioctl(ps[i].t[k].fd[0], PERF_EVENT_IOC_ENABLE, 0);
	nanosleep(&w, NULL);
	for (i = 0; i < nr; i++) {
		struct proc *p = &ps[i];
		unsigned long long start;
		int bp;

		if (!p->nr_t)
			continue;
		proc_read_close(p, ev->nr);
		if (ret >= 0)
			continue;
		/*
		 * The kernel takes a PID: if the process exited in the window and
		 * its PID went to another, these counts are not the new one's.
		 */
		if (start_time(o->proc, p->pid, &start) || start != p->start) {
			if (o->verbose)
				fprintf(stderr, "hawkeye-pmud: pid %d: exited or its PID reused during the window: not written\n",
					p->pid);
			continue;
		}
		bp = overhead_bp(p->sum[CYCLES], p->sum[WALK_LOAD], p->sum[WALK_STORE],
				 ev->set->counts_walks ? o->walk_cycles : 0);
		if (o->verbose || o->dry_run)
			printf("pid %d overhead %d.%02d%% cycles %llu walk %llu %llu\n",
			       p->pid, bp / 100, bp % 100,
			       (unsigned long long)p->sum[CYCLES],
			       (unsigned long long)p->sum[WALK_LOAD],
			       (unsigned long long)p->sum[WALK_STORE]);
		if (!o->dry_run)
			ret = report(o->sysfs, p->pid, bp);
	}
	return ret;
}

static unsigned long long nofile_limit(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) ? 0 : (unsigned long long)rl.rlim_cur;
}

/* One measurement of every candidate process; an exit status, or -1. */
static int measure_once(struct events *ev, const struct options *o)
{
	int nr = 0, i, counted = 0, denied = 0, ret = -1;
	struct proc *ps = NULL;
	pid_t denied_pid = 0;
	struct dirent *d;
	DIR *dir = opendir(o->proc);

	if (!dir) {
		fprintf(stderr, "hawkeye-pmud: %s: %s\n", o->proc, strerror(errno));
		return 1;
	}
	/* Every candidate first, while no counter holds a descriptor. */
	while ((d = readdir(dir))) {
		pid_t pid = atoi(d->d_name);
		unsigned long long start;
		struct proc *np;
		int err;

		if (pid <= 0 || pid == getpid() || hawkeye_regions(o->proc, pid) <= 0)
			continue;
		err = start_time(o->proc, pid, &start);
		if (err) {
			if (err != -ESRCH)
				fprintf(stderr, "hawkeye-pmud: pid %d: %s: not measured\n",
					pid, strerror(-err));
			continue;
		}
		np = realloc(ps, (nr + 1) * sizeof(*np));
		if (!np)
			break;
		ps = np;
		memset(&ps[nr], 0, sizeof(ps[nr]));
		ps[nr].pid = pid;
		ps[nr].start = start;
		nr++;
	}
	closedir(dir);

	/*
	 * As many processes at a time as RLIMIT_NOFILE allows, the rest in
	 * more windows: none is left out unsaid.
	 */
	for (i = 0; i < nr && ret < 0 && !stop;) {
		int first = i, opened = 0;

		for (; i < nr; i++) {
			int err = proc_open(&ps[i], ev, o->proc);

			if (out_of_fds(err) && opened) {
				if (o->verbose)
					fprintf(stderr, "hawkeye-pmud: RLIMIT_NOFILE %llu: %d processes in another window\n",
						nofile_limit(), nr - i);
				break;
			}
			if (out_of_fds(err)) {
				fprintf(stderr, "hawkeye-pmud: pid %d: %s even alone (RLIMIT_NOFILE %llu): not measured\n",
					ps[i].pid, strerror(-err), nofile_limit());
				continue;
			}
			/* Only this process (another user's, say): go on with the rest. */
			if ((err == -EACCES || err == -EPERM) && !denied++)
				denied_pid = ps[i].pid;
			if (err) {
				if (o->verbose && err != -ESRCH)
					fprintf(stderr, "hawkeye-pmud: pid %d: %s\n", ps[i].pid, strerror(-err));
				continue;
			}
			opened++;
		}
		counted += opened;
		if (opened)
			ret = measure_batch(ps + first, i - first, ev, o);
	}
	free(ps);
	fflush(stdout);
	/* Not one process could be counted: this daemon may count none. */
	if (ret < 0 && denied && !counted) {
		char what[96];

		snprintf(what, sizeof(what), "count events of process %d%s", denied_pid,
			 denied > 1 ? " nor of any other" : "");
		ret = perm_error(what);
	}
	return ret;
}

/*
 * --model: the TLB model's counters of one address space (a page-table
 * root, named by the process @pid) when it wrote them.
 */
struct model_space {
	uint64_t root, pid, insns, mmu_cycles;
};

/* CPUID with the model's leaf: it writes every space's counters, with @mark. */
static void model_write(uint64_t mark)
{
	uint64_t rax = 0x484b0002, rbx = mark, rcx = 0, rdx = 0;

	asm volatile("cpuid" : "+a"(rax), "+b"(rbx), "+c"(rcx), "+d"(rdx) : : "memory");
}

static uint64_t json_u64(const char *p, const char *key)
{
	p = strstr(p, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/*
 * Has the model write its counters and reads them from @f (the next line
 * with this write's mark) into @sp[0..@max): the number read, or -1 if the
 * line did not come within 10 s (no model writes @f).
 */
static int model_read(FILE *f, struct model_space *sp, int max, bool verbose)
{
	static uint64_t seq;
	uint64_t mark = 1ULL << 63 | (uint64_t)getpid() << 32 | ++seq;
	struct timespec t0, tick = { 0, 10 * 1000 * 1000 };
	char *line = NULL, *p;
	size_t cap = 0;
	int nr = -1;

	if (verbose)
		fprintf(stderr, "hawkeye-pmud: model mark %llu\n", (unsigned long long)mark);
	model_write(mark);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (nr < 0 && since(&t0) < 10 && !stop) {
		if (getline(&line, &cap, f) < 0) {
			clearerr(f);
			nanosleep(&tick, NULL);
			continue;
		}
		if (!strstr(line, "\"type\": \"mark\"") || json_u64(line, "\"mark\": ") != mark)
			continue;
		nr = 0;
		for (p = strstr(line, "{\"root\": "); p && nr < max;
		     p = strstr(p + 1, "{\"root\": ")) {
			sp[nr].root = json_u64(p, "\"root\": ");
			sp[nr].pid = json_u64(p, "\"pid\": ");
			sp[nr].insns = json_u64(p, "\"insns\": ");
			sp[nr].mmu_cycles = json_u64(p, "\"stlb_cycles\": ") +
					    json_u64(p, "\"walk_cycles\": ");
			nr++;
		}
	}
	free(line);
	return nr;
}

/*
 * One --model window: the MMU overhead of every modeled process that
 * HawkEye promotes for, from the model's counters at both ends; an exit
 * status, or -1.
 */
static int measure_model(FILE *f, const struct options *o)
{
	static struct model_space a[512], b[512];
	struct timespec w = { (time_t)o->window,
			      (long)((o->window - (time_t)o->window) * 1e9) };
	int na, nb = -1, ret = -1;

	na = model_read(f, a, 512, o->verbose);
	if (na >= 0) {
		nanosleep(&w, NULL);
		nb = model_read(f, b, 512, o->verbose);
	}
	if (na < 0 || nb < 0) {
		if (stop)
			return 0;
		fprintf(stderr, "hawkeye-pmud: no TLB model writes %s%s\n", o->model,
			o->once ? ": nothing to measure" : " this window: not measured");
		/* Running: a window missed is not the end of the model. */
		return o->once ? EXIT_NO_PMU : -1;
	}
	if (na == 512 || nb == 512)
		fprintf(stderr, "hawkeye-pmud: the model wrote more than 512 address spaces: the rest not measured\n");
	for (int j = 0; j < nb && ret < 0; j++) {
		uint64_t insns, mmu;
		int i, bp;

		/* The same process at both ends: its root is its own. */
		for (i = 0; i < na && (a[i].root != b[j].root || a[i].pid != b[j].pid); i++)
			;
		if (i == na || b[j].insns <= a[i].insns ||
		    hawkeye_regions(o->proc, b[j].pid) <= 0)
			continue;
		insns = b[j].insns - a[i].insns;
		mmu = b[j].mmu_cycles - a[i].mmu_cycles;
		bp = overhead_bp((uint64_t)(insns * o->cpi) + mmu, mmu, 0, 0);
		if (o->verbose || o->dry_run)
			printf("pid %llu overhead %d.%02d%% insns %llu mmu %llu\n",
			       (unsigned long long)b[j].pid, bp / 100, bp % 100,
			       (unsigned long long)insns, (unsigned long long)mmu);
		if (!o->dry_run)
			ret = report(o->sysfs, b[j].pid, bp);
	}
	fflush(stdout);
	return ret;
}

/*
 * --replay: lines "PID CYCLES LOAD STORE ENABLED RUNNING" (one per thread,
 * raw counts as read) -> "PID OVERHEAD_BP" per process, in input order,
 * printed, or handed to @sysfs if not NULL.
 */
static int replay(FILE *in, unsigned int walk_cycles, const char *sysfs)
{
	struct { long pid; uint64_t sum[NR_EVENTS]; } acc[256];
	unsigned long long v[5];
	int nr = 0, i;
	long pid;

	while (fscanf(in, "%ld %llu %llu %llu %llu %llu", &pid, &v[0], &v[1],
		      &v[2], &v[3], &v[4]) == 6) {
		for (i = 0; i < nr && acc[i].pid != pid; i++)
			;
		if (i == nr) {
			if (nr == 256)
				return 1;
			memset(&acc[nr++], 0, sizeof(acc[0]));
			acc[i].pid = pid;
		}
		for (int e = 0; e < NR_EVENTS; e++)
			acc[i].sum[e] += scale(v[e], v[3], v[4]);
	}
	for (i = 0; i < nr; i++) {
		int bp = overhead_bp(acc[i].sum[CYCLES], acc[i].sum[WALK_LOAD],
				     acc[i].sum[WALK_STORE], walk_cycles);
		int ret = sysfs ? report(sysfs, acc[i].pid, bp) : -1;

		if (ret >= 0)
			return ret;
		if (!sysfs)
			printf("%ld %d\n", acc[i].pid, bp);
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hawkeye-pmud [-p PERIOD_S] [-w WINDOW_S] [--once] [-n] [-v]\n"
		"                    [--walk-cycles N] [--proc DIR] [--sysfs FILE]\n"
		"                    [--model FILE --cpi CPI]\n"
		"       hawkeye-pmud --events     the events resolved for this CPU\n"
		"       hawkeye-pmud --replay FILE [--walk-cycles N] [--sysfs FILE]\n"
		"  (lines PID CYCLES WALK_LOAD WALK_STORE ENABLED RUNNING, one per thread)\n"
		"Every PERIOD_S (10) seconds measures, over WINDOW_S (1), the MMU overhead of\n"
		"each process HawkEye promotes for and writes it to\n" SYSFS_FILE ".\n"
		"--model: from the TLB model's counters FILE (tools/tlbmodel), not a PMU.\n"
		"-n: print, do not write. Exit: 3 no usable PMU, 4 not permitted,\n"
		"5 not a HawkEye kernel.\n");
}

/* The number of seconds (above 0) @arg says, in *@secs: 0, or -1 if it says none. */
static int seconds(const char *arg, double *secs)
{
	char *end;

	*secs = strtod(arg, &end);
	return *end || !(*secs > 0) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct options o = { .period = 10, .window = 1, .walk_cycles = 35,
			     .proc = "/proc", .sysfs = SYSFS_FILE };
	const char *replay_file = NULL;
	bool walks = false, sysfs_given = false;
	int list_events = 0, software = 0;
	/* The flags without a short form are set by getopt_long() itself. */
	const struct option longopts[] = {
		{ "period", required_argument, NULL, 'p' },
		{ "window", required_argument, NULL, 'w' },
		{ "once", no_argument, &o.once, 1 },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "walk-cycles", required_argument, NULL, 'c' },
		{ "events", no_argument, &list_events, 1 },
		{ "software", no_argument, &software, 1 },
		{ "replay", required_argument, NULL, 'r' },
		{ "proc", required_argument, NULL, 'P' },
		{ "sysfs", required_argument, NULL, 'S' },
		{ "model", required_argument, NULL, 'm' },
		{ "cpi", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct events ev;
	FILE *model = NULL;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "p:w:nvh", longopts, NULL)) != -1) {
		switch (c) {
		case 0: break;	/* a flag */
		case 'p':
			if (seconds(optarg, &o.period))
				goto bad;
			break;
		case 'w':
			if (seconds(optarg, &o.window))
				goto bad;
			break;
		case 'c':
			o.walk_cycles = strtoul(optarg, &end, 10);
			if (*end || !o.walk_cycles || o.walk_cycles > 10000)
				goto bad;
			walks = true;
			break;
		case 'n': o.dry_run = true; break;
		case 'v': o.verbose = true; break;
		case 'r': replay_file = optarg; break;
		case 'P': o.proc = optarg; break;
		case 'S': o.sysfs = optarg; sysfs_given = true; break;
		case 'm': o.model = optarg; break;
		case 'C':
			o.cpi = strtod(optarg, &end);
			if (*end || !(o.cpi > 0 && o.cpi < 100))
				goto bad;
			break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind != argc || o.window >= o.period || !o.model != !o.cpi ||
	    (o.model && (replay_file || software || list_events)))
		goto bad;

	if (replay_file) {
		FILE *in = strcmp(replay_file, "-") ? fopen(replay_file, "r") : stdin;

		if (!in) {
			fprintf(stderr, "hawkeye-pmud: %s: %s\n", replay_file, strerror(errno));
			return 1;
		}
		/* Walk counts (AMD) only when told how long a walk takes. */
		return replay(in, walks ? o.walk_cycles : 0,
			      sysfs_given ? o.sysfs : NULL);
	}

	if (o.model) {
		/* The counters written from now on. */
		model = fopen(o.model, "r");
		if (!model || fseek(model, 0, SEEK_END)) {
			fprintf(stderr, "hawkeye-pmud: %s: %s\n", o.model, strerror(errno));
			return EXIT_NO_PMU;
		}
		goto run;
	}
	if (software) {
		resolve_software(&ev);
		goto run;
	}
	if (pfm_initialize() != PFM_SUCCESS) {
		fprintf(stderr, "hawkeye-pmud: libpfm4 cannot initialise\n");
		return 1;
	}
	if (!list_events && !have_pmu()) {
		fprintf(stderr, "hawkeye-pmud: no hardware PMU on this machine (no /sys/bus/event_source/devices/cpu): nothing to measure; the kernel's hawkeye-pmu promotes by the HawkEye-G estimate\n");
		return EXIT_NO_PMU;
	}
	if (resolve(&ev)) {
		fprintf(stderr, "hawkeye-pmud: libpfm4 knows no page-walk cycle events for this CPU: nothing to measure\n");
		return EXIT_NO_PMU;
	}
	if (list_events) {
		printf("cpu: %s\n", ev.set->what);
		for (int i = 0; i < ev.nr; i++)
			printf("%s: %s (type %u config 0x%llx)\n",
			       i == CYCLES ? "cycles" : i == WALK_LOAD ? "walk_load" : "walk_store",
			       ev.fstr[i], ev.attr[i].type,
			       (unsigned long long)ev.attr[i].config);
		return 0;
	}
run:
	if (!o.dry_run && access(o.sysfs, F_OK)) {
		fprintf(stderr, "hawkeye-pmud: %s is missing: not a HawkEye kernel with hawkeye-pmu\n",
			o.sysfs);
		return EXIT_NO_HAWKEYE;
	}
	raise_nofile();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (model)
		fprintf(stderr, "hawkeye-pmud: TLB model (%s, CPI %g); every %gs for %gs\n",
			o.model, o.cpi, o.period, o.window);
	else
		fprintf(stderr, "hawkeye-pmud: %s; every %gs for %gs\n", ev.set->what,
			o.period, o.window);
	while (!stop) {
		struct timespec t0, rest;
		double left;
		int ret;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = model ? measure_model(model, &o) : measure_once(&ev, &o);
		if (ret >= 0)
			return ret;
		if (o.once)
			return 0;
		/* The rest of the period: more than one window if in batches. */
		left = o.period - since(&t0);
		if (left <= 0)
			continue;
		rest.tv_sec = (time_t)left;
		rest.tv_nsec = (long)((left - (time_t)left) * 1e9);
		nanosleep(&rest, NULL);
	}
	return 0;
bad:
	usage(stderr);
	return EXIT_USAGE;
}
