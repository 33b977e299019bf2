// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye promotion: the policy table and switch, and the promotion thread.
 *
 * khugepaged promotes a process's memory from its lowest address up, and
 * processes one after the other: the linux policy, which leaves it so.
 * Every other policy (struct hawkeye_policy_ops) takes anonymous memory
 * from khugepaged and promotes it on a kernel thread, hawkeye_promoted:
 * every scan_period_ms the thread opens a sample window on each registered
 * process (registry.c), closes it sample_window_ms later, and every
 * sleep_ms it asks the policy to promote up to `batch` regions. For its
 * first fresh_ms a newly registered process is sampled in windows back to
 * back, alone, between those passes: its hot regions are known within a
 * window or two of its start, not a scan period. Until then its regions
 * of the lowest coverage wait (order.c). One still mapping memory
 * (initialising it) stays fresh, up to PROMOTE_FRESH_MAX times fresh_ms.
 *
 * Under linux, khugepaged's hawkeye_promote_enter() and _exit() of each
 * process return after a load or two and register nothing. Only the
 * thread changes a process's policy state. It holds a process's mm_users
 * only for a bounded piece of work, never across a sleep: a process that
 * exits gives its memory back at once.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/freezer.h>
#include <linux/hawkeye.h>
#include <linux/kthread.h>
#include <linux/sysfs.h>
#include <linux/vmstat.h>

#include "hawkeye.h"
#include "promote.h"

#include <trace/events/hawkeye.h>

DEFINE_STATIC_KEY_FALSE(hawkeye_promote_key);

struct hawkeye_promote_params hawkeye_promote = {
	.scan_period_ms = 30000,	/* the paper's: sample every 30 s ... */
	.sample_window_ms = 1000,	/* ... for 1 s */
	.ema_weight = 50,
	.batch = 8,			/* khugepaged's pages_to_scan / 512 */
	.sleep_ms = 10000,		/* khugepaged's scan_sleep_millisecs */
	.pmu_threshold = 200,		/* the paper's 2% */
	.pmu_band = 100,
	.pmu_ttl_ms = 30000,		/* three of hawkeye-pmud's periods */
};

static const struct hawkeye_policy_ops linux_ops = {
	.name = "linux",
};

/* The policies, in the order promote/policy lists them. */
static const struct hawkeye_policy_ops *const policies[HAWKEYE_NR_POLICIES] = {
	[HAWKEYE_POLICY_LINUX] = &linux_ops,
	[HAWKEYE_POLICY_G] = &hawkeye_g_ops,
	[HAWKEYE_POLICY_PMU] = &hawkeye_pmu_ops,
#ifdef CONFIG_HAWKEYE_BASELINES
	[HAWKEYE_POLICY_INGENS] = &hawkeye_ingens_ops,
	[HAWKEYE_POLICY_FREEBSD] = &hawkeye_freebsd_ops,
#endif
};

static DEFINE_MUTEX(promote_mutex);	/* policy, thread, paired knobs */
/* Until when (jiffies) a process may be fresh: windows back to back. */
static unsigned long promote_fresh_until;
/* How long a process still mapping memory may stay fresh, in fresh_ms. */
#define PROMOTE_FRESH_MAX	4
static struct task_struct *promote_thread;
static const struct hawkeye_policy_ops *promote_ops = &linux_ops;

/**
 * hawkeye_promote_policy() - the promotion policy that runs
 *
 * Return: its table entry; its hooks may be called without a lock, the
 * entry stays. A switch between policies that keep no state in common
 * stops the thread before it unregisters every process.
 */
const struct hawkeye_policy_ops *hawkeye_promote_policy(void)
{
	return READ_ONCE(promote_ops);
}

/* Does the policy promote (and keep processes registered), or khugepaged? */
static bool promote_active(const struct hawkeye_policy_ops *ops)
{
	return ops->state;
}

/*
 * Raise promote_fresh_until to when @hm stops being fresh. Registration
 * (under the registry lock) and the thread both raise it, never lower it.
 */
static void promote_fresh_extend(struct hawkeye_mm *hm)
{
	unsigned long fresh = msecs_to_jiffies(READ_ONCE(hawkeye_promote.fresh_ms));
	unsigned long until = hm->fresh_from + fresh;
	unsigned long cap = hm->registered + PROMOTE_FRESH_MAX * fresh;
	unsigned long old = READ_ONCE(promote_fresh_until), prev;

	if (!fresh)
		return;
	if (time_after(until, cap))
		until = cap;
	while (time_after(until, old)) {
		prev = cmpxchg(&promote_fresh_until, old, until);
		if (prev == old)
			break;
		old = prev;
	}
}

/**
 * hawkeye_promote_registered() - a process was registered
 * @hm: its record, not yet in the registry; the registry lock is held
 *
 * Stamps the record: while it is fresh (hawkeye_promote_fresh()) the
 * thread samples the process window after window (promote_thread_fn()).
 */
void hawkeye_promote_registered(struct hawkeye_mm *hm)
{
	hm->registered = jiffies;
	hm->fresh_from = hm->registered;
	promote_fresh_extend(hm);
}

/**
 * hawkeye_promote_fresh() - is a process still fresh?
 * @hm: its record
 *
 * Fresh: within fresh_ms of its registration or of the last window it
 * mapped 2 MB or more in (hawkeye_promote_populated()), and within
 * PROMOTE_FRESH_MAX times fresh_ms of its registration.
 *
 * Return: true while it is sampled window after window (fresh_ms not 0).
 */
bool hawkeye_promote_fresh(struct hawkeye_mm *hm)
{
	unsigned long fresh = msecs_to_jiffies(READ_ONCE(hawkeye_promote.fresh_ms));

	return fresh && time_before(jiffies, hm->fresh_from + fresh) &&
	       time_before(jiffies, hm->registered + PROMOTE_FRESH_MAX * fresh);
}

/**
 * hawkeye_promote_populated() - a process mapped 2 MB or more in a window
 * @hm: its record
 *
 * A fresh process still mapping memory has not started its work yet (it
 * is initialising the memory): it stays fresh for fresh_ms from now, up to
 * PROMOTE_FRESH_MAX times fresh_ms after its registration.
 */
void hawkeye_promote_populated(struct hawkeye_mm *hm)
{
	if (!hawkeye_promote_fresh(hm))
		return;
	hm->fresh_from = jiffies;
	promote_fresh_extend(hm);
}

/*
 * Open (@pass 0) or close sample window @pass: on every registered process
 * (@full), or on the fresh ones alone. A window is closed on the processes
 * it was opened on.
 */
static void promote_sample(const struct hawkeye_policy_ops *ops,
			   unsigned long pass, bool full)
{
	struct hawkeye_mm **hms;
	unsigned int i, nr;

	if (!pass && full)
		hawkeye_mm_register_all();
	nr = hawkeye_mm_get_all(&hms);
	for (i = 0; i < nr && !kthread_should_stop(); i++) {
		if (!pass)
			hms[i]->in_pass = full || hawkeye_promote_fresh(hms[i]);
		if (hms[i]->in_pass)
			ops->sample(hms[i], pass);
	}
	hawkeye_mm_put_all(hms, nr);
}

/* Promote up to `batch` regions in the order of the policy. */
static void promote_batch(const struct hawkeye_policy_ops *ops,
			  struct hawkeye_rr_cursor *rr)
{
	struct hawkeye_mm **hms;
	unsigned int nr;

	nr = hawkeye_mm_get_all(&hms);
	if (nr)
		ops->batch(hms, nr, READ_ONCE(hawkeye_promote.batch), rr);
	hawkeye_mm_put_all(hms, nr);
}

static int promote_thread_fn(void *unused)
{
	struct hawkeye_rr_cursor rr = { .bucket = -1 };
	unsigned long last_sample, last_full, last_promote, pass = 0;
	bool window = false, full = true;

	set_freezable();
	/* The first sample at once; promotion has nothing to do before. */
	last_full = jiffies -
		msecs_to_jiffies(READ_ONCE(hawkeye_promote.scan_period_ms));
	last_sample = jiffies;
	last_promote = jiffies;
	while (!kthread_should_stop()) {
		/* A switch that keeps the thread changes the hooks it calls. */
		const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();
		unsigned long now = jiffies, due_sample, due_promote, wake;
		unsigned long period, win;
		unsigned int fresh = READ_ONCE(hawkeye_promote.fresh_ms);

		try_to_freeze();
		period = msecs_to_jiffies(READ_ONCE(hawkeye_promote.scan_period_ms));
		win = msecs_to_jiffies(READ_ONCE(hawkeye_promote.sample_window_ms));
		if (window)
			due_sample = last_sample + win;
		else if (fresh && time_before(now, READ_ONCE(promote_fresh_until)))
			due_sample = now;	/* a fresh process: the next window */
		else
			due_sample = last_full + period;
		due_promote = last_promote +
			msecs_to_jiffies(READ_ONCE(hawkeye_promote.sleep_ms));
		if (time_after_eq(now, due_sample)) {
			if (!window)
				full = time_after_eq(now, last_full + period);
			promote_sample(ops, window ? ++pass : 0, full);
			window = !window;
			last_sample = jiffies;
			/* The period runs from the end of a full pass. */
			if (!window && full)
				last_full = last_sample;
		} else if (time_after_eq(now, due_promote)) {
			promote_batch(ops, &rr);
			last_promote = jiffies;
		} else {
			wake = time_before(due_sample, due_promote) ?
			       due_sample : due_promote;
			/* Registration does not wake the thread: look again. */
			if (fresh && time_after(wake, now + win))
				wake = now + win;
			schedule_timeout_interruptible(wake - now);
		}
	}
	return 0;
}

/* Switch to @new, whose state differs from the old policy's. */
static int promote_switch(const struct hawkeye_policy_ops *new)
{
	const struct hawkeye_policy_ops *old = promote_ops;
	int ret;

	/*
	 * The old policy's thread goes, then every registration: after the
	 * policy is set, so that none of the old state is registered after.
	 */
	hawkeye_thread_stop(&promote_thread);
	if (old->stop)
		old->stop();
	WRITE_ONCE(promote_ops, new);
	hawkeye_mm_forget_all();
	if (!promote_active(new)) {
		static_branch_disable(&hawkeye_promote_key);
		return 0;
	}
	ret = hawkeye_thread_start(&promote_thread, promote_thread_fn, NULL,
				   NUMA_NO_NODE, "hawkeye_promoted");
	if (ret) {
		WRITE_ONCE(promote_ops, &linux_ops);
		hawkeye_mm_forget_all();
		static_branch_disable(&hawkeye_promote_key);
		return ret;
	}
	if (new->start)
		new->start();
	static_branch_enable(&hawkeye_promote_key);
	return 0;
}

/**
 * hawkeye_promote_set_policy() - switch the promotion policy
 * @policy: the policy's id
 *
 * Return: 0, -EINVAL for no such policy, or the error that kept the
 * thread from starting (the policy is linux then).
 */
int hawkeye_promote_set_policy(enum hawkeye_policy policy)
{
	const struct hawkeye_policy_ops *new;
	int ret = 0;

	if (policy >= HAWKEYE_NR_POLICIES || !policies[policy])
		return -EINVAL;
	new = policies[policy];
	mutex_lock(&promote_mutex);
	if (new == promote_ops)
		goto out;
	/* Between policies that keep the same state: same thread and state. */
	if (new->state == promote_ops->state) {
		if (promote_ops->stop)
			promote_ops->stop();
		WRITE_ONCE(promote_ops, new);
		if (new->start)
			new->start();
	} else {
		ret = promote_switch(new);
	}
out:
	mutex_unlock(&promote_mutex);
	return ret;
}

/**
 * hawkeye_promote_parse_policy() - a policy's id from its name
 * @buf: the name, a trailing newline allowed
 *
 * Return: the id, or -EINVAL.
 */
int hawkeye_promote_parse_policy(const char *buf)
{
	int i;

	for (i = 0; i < HAWKEYE_NR_POLICIES; i++)
		if (policies[i] && sysfs_streq(buf, policies[i]->name))
			return i;
	return -EINVAL;
}

/**
 * hawkeye_promote_show_policy() - every policy, the current one in brackets
 * @buf: a sysfs buffer; "[linux] hawkeye-g ..." goes there
 *
 * Return: the length written.
 */
ssize_t hawkeye_promote_show_policy(char *buf)
{
	const struct hawkeye_policy_ops *cur = hawkeye_promote_policy();
	int i, len = 0;

	for (i = 0; i < HAWKEYE_NR_POLICIES; i++)
		if (policies[i])
			len += sysfs_emit_at(buf, len, policies[i] == cur ? "%s[%s]" : "%s%s",
					     i ? " " : "", policies[i]->name);
	return len + sysfs_emit_at(buf, len, "\n");
}

/**
 * hawkeye_promote_set_ms() - set one of the thread's periods
 * @knob: &hawkeye_promote.scan_period_ms, .sample_window_ms, .sleep_ms or
 *	  .fresh_ms
 * @ms: the new value, within the knob table's bounds
 *
 * The sample window stays shorter than the period; the thread, which
 * sleeps until a deadline computed from them, recomputes it.
 *
 * Return: 0, or -EINVAL if the window would not be shorter.
 */
int hawkeye_promote_set_ms(unsigned int *knob, unsigned int ms)
{
	struct hawkeye_promote_params *p = &hawkeye_promote;
	unsigned int period = knob == &p->scan_period_ms ? ms : p->scan_period_ms;
	unsigned int window = knob == &p->sample_window_ms ? ms : p->sample_window_ms;
	int ret = -EINVAL;

	mutex_lock(&promote_mutex);
	if (window < period) {
		WRITE_ONCE(*knob, ms);
		if (promote_thread)
			wake_up_process(promote_thread);
		ret = 0;
	}
	mutex_unlock(&promote_mutex);
	return ret;
}

/**
 * hawkeye_promote_show - the policies' lines of /proc/<pid>/hawkeye
 * @m: the file
 * @hm: the process's record, or NULL
 *
 * Each policy's lines once, in the order of the policy table, whichever
 * policy runs: the file has the same lines under every policy. A policy
 * whose state the record does not hold shows zeros (its show gets NULL).
 */
void hawkeye_promote_show(struct seq_file *m, struct hawkeye_mm *hm)
{
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(policies); i++) {
		struct hawkeye_mm *own = NULL;

		if (!policies[i] || !policies[i]->show)
			continue;
		/* Policies that share their lines: once, at the first. */
		for (j = 0; j < i; j++)
			if (policies[j] && policies[j]->show == policies[i]->show)
				break;
		if (j < i)
			continue;
		/* The record holds one policy's state: only its lines read it. */
		for (j = i; j < ARRAY_SIZE(policies); j++)
			if (hm && policies[j] &&
			    policies[j]->show == policies[i]->show &&
			    policies[j]->state == hm->ops->state)
				own = hm;
		policies[i]->show(m, own);
	}
}

/**
 * hawkeye_promote_overhead - the policy's estimate of a process's MMU overhead
 * @mm: the process, on which the caller holds a reference on mm_users
 * @overhead: where the estimate goes
 *
 * Return: true under hawkeye-g and hawkeye-pmu once @mm has been sampled.
 */
bool hawkeye_promote_overhead(struct mm_struct *mm, unsigned long *overhead)
{
	const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();
	struct hawkeye_mm *hm;
	bool known = false;

	if (!ops->overhead)
		return false;
	hm = hawkeye_mm_find(mm);
	if (!hm)
		return false;
	/* Registered under the policy's state, not one a switch just left. */
	if (hm->ops->state == ops->state)
		known = ops->overhead(hm, overhead);
	hawkeye_mm_put(hm);
	return known;
}

/**
 * hawkeye_promote_measured - a process's measured MMU overhead
 * @mm: the process, on which the caller holds a reference on mm_users
 *
 * Return: the overhead in 1/100 % if the policy uses measurements and it
 * is recent, else -1.
 */
int hawkeye_promote_measured(struct mm_struct *mm)
{
	const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();
	struct hawkeye_mm *hm;
	int measured = -1;

	if (!ops->measured)
		return -1;
	hm = hawkeye_mm_find(mm);
	if (!hm)
		return -1;
	if (hm->ops->state == ops->state)
		measured = ops->measured(hm);
	hawkeye_mm_put(hm);
	return measured;
}

static int __init hawkeye_promote_boot(const char *s)
{
	int policy = hawkeye_promote_parse_policy(s);

	if (policy < 0)
		pr_warn("unknown promotion policy '%s'\n", s);
	else
		hawkeye_promote_set_policy(policy);
	return 0;
}

HAWKEYE_BOOT_PARAM(hawkeye_promote, hawkeye_promote_boot);
