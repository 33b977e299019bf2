/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HawkEye promotion's internal interface: its knobs, the policies (struct
 * hawkeye_policy_ops), the records of the processes they work on, the
 * access map of hawkeye-g and hawkeye-pmu, and what the baselines share.
 */
#ifndef _MM_HAWKEYE_PROMOTE_H
#define _MM_HAWKEYE_PROMOTE_H

#include "hawkeye.h"

#ifdef CONFIG_HAWKEYE_PROMOTE
/* memcg.c: memory.thp.weight */
#ifdef CONFIG_MEMCG
unsigned int hawkeye_memcg_weight(struct mem_cgroup *memcg);
#else
static inline unsigned int hawkeye_memcg_weight(struct mem_cgroup *memcg)
{
	return 100;
}
#endif

/* Promotion knobs; the thread reads them with READ_ONCE(). */
struct hawkeye_promote_params {
	unsigned int scan_period_ms;	/* a sample pass this often ... */
	unsigned int sample_window_ms;	/* ... over this long, < scan_period_ms */
	unsigned int ema_weight;	/* percent of the EMA for a new sample */
	unsigned int batch;		/* regions promoted per round */
	unsigned int sleep_ms;		/* between promotion rounds */
	unsigned int pmu_threshold;	/* hawkeye-pmu: promote above this overhead */
	unsigned int pmu_band;		/* ... sharing with those this close to the top */
	unsigned int pmu_ttl_ms;	/* ... a measurement counts this long */
	unsigned int best_size;		/* leave regions best below 2 MB alone */
	unsigned int fresh_ms;		/* a new process: windows back to back */
};

/* Measured MMU overheads are in hundredths of a percent: 0..10000. */
#define HAWKEYE_PMU_MAX			10000U

#define HAWKEYE_PROMOTE_MAX_MS		3600000U	/* an hour */
#define HAWKEYE_PROMOTE_MAX_BATCH	4096U

extern struct hawkeye_promote_params hawkeye_promote;

int hawkeye_promote_set_ms(unsigned int *knob, unsigned int ms);

/* Promotion policies: /sys/kernel/mm/hawkeye/promote/policy. */
enum hawkeye_policy {
	HAWKEYE_POLICY_LINUX,		/* khugepaged as upstream */
	HAWKEYE_POLICY_G,		/* HawkEye-G: access coverage first */
	HAWKEYE_POLICY_PMU,		/* HawkEye-PMU: measured overhead first */
#ifdef CONFIG_HAWKEYE_BASELINES
	HAWKEYE_POLICY_INGENS,		/* Ingens: utilisation, FMFI, fairness */
	HAWKEYE_POLICY_FREEBSD,		/* FreeBSD: reservations, promoted full */
#endif
	HAWKEYE_NR_POLICIES,
};

/* A process's access_map (access_map.c), under hawkeye_mm.lock. */
struct hawkeye_access_map {
	bool armed;			/* accessed bits cleared, window open */
	struct xarray regions;		/* by addr >> PMD_SHIFT */
	struct list_head buckets[HAWKEYE_NR_BUCKETS];
	struct list_head smaller;	/* best below 2 MB, promote/best_size on */
	unsigned long nr[HAWKEYE_NR_BUCKETS];	/* the smaller ones counted too */
	unsigned long nr_regions;
	/* Buckets regions moved into and out of since the last batch. */
	u16 arrived;
	u16 departed;
	unsigned long overhead;		/* sum of the regions' ema */
	unsigned long skipped;		/* region walks that read no PTE */
	/* Regions by their best page order at the last sample. */
	unsigned long nr_best[HPAGE_PMD_ORDER + 1];
	int measured;			/* MMU overhead, 1/100 %; -1: none */
	unsigned long measured_at;	/* jiffies */
};

#ifdef CONFIG_HAWKEYE_BASELINES
/*
 * A process's state under the baselines (baseline.c). Only the thread
 * writes it; readers use READ_ONCE().
 */
struct hawkeye_baseline_mm {
	unsigned long cursor;		/* the next address to look at */
	unsigned long nr_huge;		/* huge pages at the last sample, + promoted */
	unsigned long nr_idle;		/* ... of which not accessed in its window */
	bool armed;			/* sample window open */
	bool exhausted;			/* nothing left to promote this round */
};
#endif

/*
 * A process registered for promotion (registry.c), with the state of the
 * policy that runs. Reference counted: the registry holds one reference
 * and the thread one while it works on it. Its mm is mmgrab()bed only:
 * hold the address space with hawkeye_mmget_alive() for each piece of work.
 */
struct hawkeye_mm {
	refcount_t ref;
	struct hlist_node hash;		/* the registry's, by mm */
	struct list_head node;		/* ... in registration order */
	const struct hawkeye_policy_ops *ops;	/* whose state it holds */
	struct mm_struct *mm;
	u64 seq;			/* registration order, for round-robin */
	pid_t pid;			/* who registered it, if it was the owner */
	struct mutex lock;		/* the state below, against readers */
	unsigned long samples;		/* sample passes over this mm */
	unsigned long registered;	/* jiffies at registration */
	unsigned long fresh_from;	/* ... or a window it mapped memory in */
	bool in_pass;			/* in the open sample window (thread) */
	unsigned long promotions;
	unsigned long promote_failed;
	/*
	 * The state of one policy, the one whose ops it was made for: a
	 * record is freed, not converted, when the state changes.
	 */
	union {
		struct hawkeye_access_map map;	/* hawkeye-g, hawkeye-pmu */
#ifdef CONFIG_HAWKEYE_BASELINES
		struct hawkeye_baseline_mm baseline;	/* the baselines */
#endif
	};
};

/* Where round-robin goes on: the bucket and the process served last. */
struct hawkeye_rr_cursor {
	int bucket;			/* -1: none yet */
	/* hawkeye-g: fair queueing's virtual clock in each bucket */
	unsigned int vclock[HAWKEYE_NR_BUCKETS];
	u64 seq;
	u64 pmu_seq;			/* hawkeye-pmu: the process served last */
};

/*
 * The per-process state a policy keeps (hawkeye_policy_ops.state): a tag
 * that records are compared by. The name is for a debugger; a member also
 * gives each tag an address of its own.
 */
struct hawkeye_policy_state {
	const char *name;
};

/**
 * struct hawkeye_policy_ops - a promotion policy
 * @name:	its name in promote/policy
 * @state:	the per-process state it keeps; policies with the same
 *		@state share it: a switch between them keeps the thread and
 *		every registration (NULL: no state, nothing is registered)
 * @start:	turn its fault-time behaviour on; under the policy mutex
 * @stop:	... and off again
 * @mm_init:	set up the state of a newly registered process
 * @mm_release:	free it, once the process is unregistered and unused
 * @sample:	open (@pass 0) or close sample window @pass on a process
 * @batch:	promote up to @batch regions of the processes @hms[@nr], in
 *		registration order; @rr carries round-robin across rounds
 * @fault:	an anonymous base page fault (hawkeye_policy_fault())
 * @overhead:	its estimate of a process's MMU overhead: false if none
 * @measured:	a process's measured MMU overhead, 1/100 %; -1: none
 * @set_measured: record it (1/100 %, -1: forget it); kept by the
 *		policies that keep measurements whichever of them runs
 * @show:	its lines of /proc/<pid>/hawkeye, for any process: given its
 *		record where that holds this policy's state, NULL (zeros)
 *		otherwise; shown once for the policies that share it
 *
 * The linux policy has no hooks: khugepaged promotes as upstream. The
 * promotion thread, the switch and the fault hook call through the table
 * and never ask which policy runs.
 */
struct hawkeye_policy_ops {
	const char *name;
	const struct hawkeye_policy_state *state;
	void (*start)(void);
	void (*stop)(void);
	void (*mm_init)(struct hawkeye_mm *hm);
	void (*mm_release)(struct hawkeye_mm *hm);
	void (*sample)(struct hawkeye_mm *hm, unsigned long pass);
	void (*batch)(struct hawkeye_mm **hms, unsigned int nr,
		      unsigned int batch, struct hawkeye_rr_cursor *rr);
	vm_fault_t (*fault)(struct vm_fault *vmf);
	bool (*overhead)(struct hawkeye_mm *hm, unsigned long *overhead);
	int (*measured)(struct hawkeye_mm *hm);
	void (*set_measured)(struct hawkeye_mm *hm, int overhead);
	void (*show)(struct seq_file *m, struct hawkeye_mm *hm);
};

extern const struct hawkeye_policy_ops hawkeye_g_ops;
extern const struct hawkeye_policy_ops hawkeye_pmu_ops;

/* registry.c */
struct hawkeye_mm *hawkeye_mm_find(struct mm_struct *mm);
void hawkeye_mm_put(struct hawkeye_mm *hm);
unsigned int hawkeye_mm_get_all(struct hawkeye_mm ***out);
void hawkeye_mm_put_all(struct hawkeye_mm **hms, unsigned int nr);
void hawkeye_mm_register_all(void);
void hawkeye_mm_forget_all(void);
pid_t hawkeye_mm_pid(struct hawkeye_mm *hm);
void hawkeye_mm_account(struct hawkeye_mm *hm, int result);
int hawkeye_promote_set_measured(pid_t pid, int overhead);

/* promote.c */
const struct hawkeye_policy_ops *hawkeye_promote_policy(void);
void hawkeye_promote_registered(struct hawkeye_mm *hm);
bool hawkeye_promote_fresh(struct hawkeye_mm *hm);
void hawkeye_promote_populated(struct hawkeye_mm *hm);
int hawkeye_promote_set_policy(enum hawkeye_policy policy);
int hawkeye_promote_parse_policy(const char *buf);
ssize_t hawkeye_promote_show_policy(char *buf);
void hawkeye_promote_show(struct seq_file *m, struct hawkeye_mm *hm);

/* access_map.c */
/* Access coverage a bucket spans: 0-49 bucket 0, ..., 450-512 bucket 9. */
#define HAWKEYE_BUCKET_WIDTH	50

/* A 2 MB region of a process, mapped by a page table when last seen. */
struct hawkeye_region {
	struct list_head node;		/* in its bucket */
	unsigned long addr;
	unsigned int ema;		/* access coverage, 0..HPAGE_PMD_NR */
	unsigned int bucket;
	unsigned int best_order;	/* hawkeye_best_order() at the last sample */
	bool smaller;			/* on the map's smaller list */
	unsigned int present;		/* PTEs present when last read */
	unsigned long pass;		/* the sample pass that saw it last */
	bool per_page;			/* secondary MMUs saw accesses: ask per page */
};

extern const struct hawkeye_policy_state hawkeye_access_map_state;

void hawkeye_map_mm_init(struct hawkeye_mm *hm);
void hawkeye_map_mm_release(struct hawkeye_mm *hm);
void hawkeye_map_place(struct hawkeye_mm *hm, struct hawkeye_region *r,
		       unsigned int ema, unsigned int best, bool fresh);
void hawkeye_map_remove(struct hawkeye_mm *hm, struct hawkeye_region *r);
void hawkeye_map_clear(struct hawkeye_mm *hm);
void hawkeye_map_sample(struct hawkeye_mm *hm, unsigned long pass);
bool hawkeye_map_promote(struct hawkeye_mm *hm, struct hawkeye_region *r);
bool hawkeye_map_overhead(struct hawkeye_mm *hm, unsigned long *overhead);
int hawkeye_map_measured(struct hawkeye_mm *hm);
void hawkeye_map_set_measured(struct hawkeye_mm *hm, int overhead);
void hawkeye_access_map_show(struct seq_file *m, struct hawkeye_mm *hm);

#ifdef CONFIG_HAWKEYE_BASELINES
/* Ingens knobs, in percent; the thread reads them with READ_ONCE(). */
struct hawkeye_ingens_params {
	unsigned int util_threshold;	/* promote at this utilisation ... */
	unsigned int fmfi_threshold;	/* ... or any while FMFI is below this */
	unsigned int idle_penalty;	/* idle huge pages' tax rate */
};

extern struct hawkeye_ingens_params hawkeye_ingens;

unsigned int hawkeye_fmfi(void);

extern const struct hawkeye_policy_ops hawkeye_ingens_ops;
extern const struct hawkeye_policy_ops hawkeye_freebsd_ops;

/* ingens.c */
u64 hawkeye_ingens_metric(unsigned long huge, unsigned long idle);

/* baseline.c: what the baselines share */
void hawkeye_baseline_start(void);
void hawkeye_baseline_stop(void);
void hawkeye_baseline_sample(struct hawkeye_mm *hm, unsigned long pass);
void hawkeye_baseline_show(struct seq_file *m, struct hawkeye_mm *hm);
void hawkeye_baseline_account(struct mm_struct *mm, const char *policy,
			      unsigned long addr, unsigned int util,
			  unsigned int fmfi, u64 metric, int result);

/**
 * struct hawkeye_baseline_rules - what a baseline promotes, and how
 * @name:	the policy, for the trace event
 * @pick:	the process that gets the next promotion, or NULL
 * @qualifies:	is the region at @addr promoted now? its utilisation (base
 *		pages in use) in *@util; under mmap_lock
 * @promote:	promote it; 0 or a negative errno
 */
struct hawkeye_baseline_rules {
	const char *name;
	struct hawkeye_mm *(*pick)(struct hawkeye_mm **hms, unsigned int nr);
	bool (*qualifies)(struct vm_area_struct *vma, unsigned long addr,
			  bool aggressive, unsigned int *util);
	int (*promote)(struct mm_struct *mm, unsigned long addr);
};

void hawkeye_baseline_round(const struct hawkeye_baseline_rules *rules,
			    struct hawkeye_mm **hms, unsigned int nr,
			unsigned int batch, unsigned int fmfi);
vm_fault_t hawkeye_baseline_register(struct vm_fault *vmf);
#endif /* CONFIG_HAWKEYE_BASELINES */
#endif /* CONFIG_HAWKEYE_PROMOTE */

#endif /* _MM_HAWKEYE_PROMOTE_H */
