// SPDX-License-Identifier: GPL-2.0
/*
 * HawkEye promotion: the policy table and switch, the process registry
 * and the promotion thread.
 *
 * khugepaged promotes a process's memory from its lowest address up, and
 * processes one after the other: the linux policy, which leaves it so.
 * Every other policy (struct hawkeye_policy_ops) takes anonymous memory
 * from khugepaged and promotes it on a kernel thread, hawkeye_promoted:
 * every scan_period_ms the thread opens a sample window on each registered
 * process, closes it sample_window_ms later, and every sleep_ms it asks
 * the policy to promote up to `batch` regions.
 *
 * The processes are those khugepaged knows (MMF_VM_HUGEPAGE), and only
 * while the policy is not linux: one is registered with __khugepaged_enter()
 * and, for those that khugepaged knew before the switch or whose
 * registration failed for want of memory, by the thread at each sample
 * pass; it is dropped with __khugepaged_exit() or when a switch changes
 * the state policies keep. Under linux fork and exit cost HawkEye nothing
 * but a load. Only the thread changes a process's policy state; the
 * record's mutex serialises it with readers (/proc/<pid>/hawkeye). A record
 * is reference counted: the registry holds one reference and the thread
 * one while it works on it, so it never sees a freed record. The thread
 * holds a process's mm_users only for a bounded piece of work, never
 * across a sleep: a process that exits gives its memory back at once.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/mm.h>
#include <linux/freezer.h>
#include <linux/hashtable.h>
#include <linux/hawkeye.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/vmstat.h>

#include "hawkeye.h"

#define CREATE_TRACE_POINTS
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
	[HAWKEYE_POLICY_INGENS] = &hawkeye_ingens_ops,
	[HAWKEYE_POLICY_FREEBSD] = &hawkeye_freebsd_ops,
};

#define PROMOTE_HASH_BITS	10

/* Protects promote_hash, promote_mms, promote_nr_mms and promote_seq. */
static DEFINE_SPINLOCK(promote_lock);
static DEFINE_HASHTABLE(promote_hash, PROMOTE_HASH_BITS);
static LIST_HEAD(promote_mms);
static unsigned int promote_nr_mms;
static u64 promote_seq;

static DEFINE_MUTEX(promote_mutex);	/* policy, thread, paired knobs */
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

static void promote_mm_init(struct hawkeye_mm *hm, struct mm_struct *mm,
			    const struct hawkeye_policy_ops *ops)
{
	refcount_set(&hm->ref, 1);
	hm->ops = ops;
	hm->mm = mm;
	INIT_LIST_HEAD(&hm->node);
	mutex_init(&hm->lock);
	if (ops->mm_init)
		ops->mm_init(hm);
}

/* Caller holds promote_lock; the record lives while it does. */
static struct hawkeye_mm *promote_lookup(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	hash_for_each_possible(promote_hash, hm, hash, (unsigned long)mm)
		if (hm->mm == mm)
			return hm;
	return NULL;
}

/**
 * hawkeye_mm_put() - drop a reference on a registered process's record
 * @hm: the record; the last reference frees it with the policy's state
 */
void hawkeye_mm_put(struct hawkeye_mm *hm)
{
	if (!refcount_dec_and_test(&hm->ref))
		return;
	if (hm->ops->mm_release)
		hm->ops->mm_release(hm);
	mutex_destroy(&hm->lock);
	mmdrop(hm->mm);
	kfree(hm);
}

/**
 * hawkeye_mm_find() - a registered process's record
 * @mm: the process's mm
 *
 * Return: the record with a reference (hawkeye_mm_put() it), or NULL. A
 * policy switch may unregister it meanwhile: mm_users does not keep it.
 */
struct hawkeye_mm *hawkeye_mm_find(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	spin_lock(&promote_lock);
	hm = promote_lookup(mm);
	if (hm)
		refcount_inc(&hm->ref);
	spin_unlock(&promote_lock);
	return hm;
}

/*
 * Register @mm (on which the caller holds mm_users), unless it already is
 * or the policy is linux. Without memory it is registered by the thread's
 * next sample pass.
 */
static void promote_register(struct mm_struct *mm)
{
	const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();
	struct hawkeye_mm *hm;

	if (!promote_active(ops))
		return;
	hm = kzalloc(sizeof(*hm), GFP_KERNEL);
	if (!hm) {
		/* The thread tries again at its next sample pass. */
		count_vm_event(HAWKEYE_PROMOTE_REGISTER_FAILED);
		return;
	}
	promote_mm_init(hm, mm, ops);
	if (current->mm == mm)
		hm->pid = current->tgid;
	spin_lock(&promote_lock);
	/* A switch forgets everyone after it sets the policy. */
	if (hawkeye_promote_policy()->state != ops->state ||
	    promote_lookup(mm)) {
		spin_unlock(&promote_lock);
		if (ops->mm_release)
			ops->mm_release(hm);
		mutex_destroy(&hm->lock);
		kfree(hm);
		return;
	}
	mmgrab(mm);
	hm->seq = ++promote_seq;
	hash_add(promote_hash, &hm->hash, (unsigned long)mm);
	list_add_tail(&hm->node, &promote_mms);
	WRITE_ONCE(promote_nr_mms, promote_nr_mms + 1);
	spin_unlock(&promote_lock);
}

/* Called by __khugepaged_enter() once for each mm that khugepaged will scan. */
void hawkeye_promote_enter(struct mm_struct *mm)
{
	promote_register(mm);
}

/*
 * Called by __khugepaged_exit() from __mmput(): mm_users is zero. The
 * record goes with the thread's reference if it holds one.
 */
void hawkeye_promote_exit(struct mm_struct *mm)
{
	struct hawkeye_mm *hm;

	/* Policy linux: nothing is registered, nothing to look up. */
	if (!READ_ONCE(promote_nr_mms))
		return;
	spin_lock(&promote_lock);
	hm = promote_lookup(mm);
	if (hm) {
		hash_del(&hm->hash);
		list_del(&hm->node);
		WRITE_ONCE(promote_nr_mms, promote_nr_mms - 1);
	}
	spin_unlock(&promote_lock);
	if (hm)
		hawkeye_mm_put(hm);
}

/* Unregister every process. Allocates nothing. */
static void promote_forget_all(void)
{
	struct hawkeye_mm *hm, *tmp;
	LIST_HEAD(gone);

	spin_lock(&promote_lock);
	list_splice_init(&promote_mms, &gone);
	hash_init(promote_hash);
	WRITE_ONCE(promote_nr_mms, 0);
	spin_unlock(&promote_lock);
	list_for_each_entry_safe(hm, tmp, &gone, node)
		hawkeye_mm_put(hm);
}

/*
 * Register the processes khugepaged knows that are not registered yet:
 * those from before the policy left linux, and those whose registration
 * failed.
 */
static void promote_register_all(void)
{
	struct mm_struct **mms;
	int i, nr;

	nr = hawkeye_grab_user_mms(&mms, MMF_VM_HUGEPAGE);
	for (i = 0; i < nr && !kthread_should_stop(); i++) {
		if (mmget_not_zero(mms[i])) {
			promote_register(mms[i]);
			mmput(mms[i]);
		}
		mmdrop(mms[i]);
	}
	for (; i < nr; i++)
		mmdrop(mms[i]);
	kvfree(mms);
}

/*
 * Take a reference on every registered process's record, in registration
 * order. Returns the number taken, the array in *@out (kfree() it after
 * promote_put_mms()). The processes' address spaces are not held: use
 * hawkeye_mm_get() for each piece of work.
 */
static unsigned int promote_get_mms(struct hawkeye_mm ***out)
{
	struct hawkeye_mm **hms, *hm;
	unsigned int max, nr = 0;

	*out = NULL;
	for (;;) {
		max = READ_ONCE(promote_nr_mms) + 8;
		hms = kmalloc_array(max, sizeof(*hms), GFP_KERNEL);
		if (!hms)
			return 0;
		spin_lock(&promote_lock);
		if (promote_nr_mms <= max)
			break;
		spin_unlock(&promote_lock);
		kfree(hms);
	}
	list_for_each_entry(hm, &promote_mms, node) {
		refcount_inc(&hm->ref);
		hms[nr++] = hm;
	}
	spin_unlock(&promote_lock);
	*out = hms;
	return nr;
}

static void promote_put_mms(struct hawkeye_mm **hms, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		hawkeye_mm_put(hms[i]);
	kfree(hms);
}

/**
 * hawkeye_mm_pid() - the process a record is for, for trace events
 * @hm: the record
 *
 * Return: the tgid of the mm's owner, or of who registered it.
 */
pid_t hawkeye_mm_pid(struct hawkeye_mm *hm)
{
	pid_t pid = 0;
#ifdef CONFIG_MEMCG
	struct task_struct *owner;

	rcu_read_lock();
	owner = rcu_dereference(hm->mm->owner);
	if (owner)
		pid = task_tgid_nr(owner);
	rcu_read_unlock();
#endif
	return pid ? pid : hm->pid;
}

/**
 * hawkeye_mm_account() - count a promotion attempt in a process
 * @hm: the process's record
 * @result: 0 (promoted) or a negative errno
 */
void hawkeye_mm_account(struct hawkeye_mm *hm, int result)
{
	count_vm_event(result ? HAWKEYE_PROMOTE_FAILED : HAWKEYE_PROMOTE_SUCCESS);
	mutex_lock(&hm->lock);
	if (result)
		hm->promote_failed++;
	else
		hm->promotions++;
	mutex_unlock(&hm->lock);
}

/* Open (@pass 0) or close sample window @pass on every registered process. */
static void promote_sample(const struct hawkeye_policy_ops *ops,
			   unsigned long pass)
{
	struct hawkeye_mm **hms;
	unsigned int i, nr;

	if (!pass)
		promote_register_all();
	nr = promote_get_mms(&hms);
	for (i = 0; i < nr && !kthread_should_stop(); i++)
		ops->sample(hms[i], pass);
	promote_put_mms(hms, nr);
}

/* Promote up to `batch` regions in the order of the policy. */
static void promote_batch(const struct hawkeye_policy_ops *ops,
			  struct hawkeye_rr *rr)
{
	struct hawkeye_mm **hms;
	unsigned int nr;

	nr = promote_get_mms(&hms);
	if (nr)
		ops->batch(hms, nr, READ_ONCE(hawkeye_promote.batch), rr);
	promote_put_mms(hms, nr);
}

static int promote_thread_fn(void *unused)
{
	struct hawkeye_rr rr = { .bucket = -1 };
	unsigned long last_sample, last_promote, pass = 0;
	bool window = false;

	set_freezable();
	/* The first sample at once; promotion has nothing to do before. */
	last_sample = jiffies -
		msecs_to_jiffies(READ_ONCE(hawkeye_promote.scan_period_ms));
	last_promote = jiffies;
	while (!kthread_should_stop()) {
		/* A switch that keeps the thread changes the hooks it calls. */
		const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();
		unsigned long now = jiffies, due_sample, due_promote;

		try_to_freeze();
		due_sample = last_sample + msecs_to_jiffies(window ?
			READ_ONCE(hawkeye_promote.sample_window_ms) :
			READ_ONCE(hawkeye_promote.scan_period_ms));
		due_promote = last_promote +
			msecs_to_jiffies(READ_ONCE(hawkeye_promote.sleep_ms));
		if (time_after_eq(now, due_sample)) {
			promote_sample(ops, window ? ++pass : 0);
			window = !window;
			last_sample = jiffies;
		} else if (time_after_eq(now, due_promote)) {
			promote_batch(ops, &rr);
			last_promote = jiffies;
		} else {
			schedule_timeout_interruptible(
				time_before(due_sample, due_promote) ?
				due_sample - now : due_promote - now);
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
	promote_forget_all();
	if (!promote_active(new)) {
		static_branch_disable(&hawkeye_promote_key);
		return 0;
	}
	ret = hawkeye_thread_start(&promote_thread, promote_thread_fn, NULL,
				   NUMA_NO_NODE, "hawkeye_promoted");
	if (ret) {
		WRITE_ONCE(promote_ops, &linux_ops);
		promote_forget_all();
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

	if (policy >= HAWKEYE_NR_POLICIES)
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
		if (sysfs_streq(buf, policies[i]->name))
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
		len += sysfs_emit_at(buf, len, policies[i] == cur ? "%s[%s]" : "%s%s",
				     i ? " " : "", policies[i]->name);
	return len + sysfs_emit_at(buf, len, "\n");
}

/**
 * hawkeye_promote_set_ms() - set one of the thread's periods
 * @knob: &hawkeye_promote.scan_period_ms, .sample_window_ms or .sleep_ms
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

/*
 * The policy's estimate of @mm's MMU overhead, if it has one: true under
 * hawkeye-g and hawkeye-pmu once @mm has been sampled. The caller holds a
 * reference on mm_users.
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

/*
 * @mm's measured MMU overhead (1/100 %) if the policy uses measurements
 * and it is recent, else -1. The caller holds a reference on mm_users.
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

/**
 * hawkeye_promote_show() - the registry's lines of /proc/<pid>/hawkeye
 * @m: the file
 * @hm: the process's record, or NULL: zeros
 */
void hawkeye_promote_show(struct seq_file *m, struct hawkeye_mm *hm)
{
	unsigned long samples = 0, promotions = 0, failed = 0;

	if (hm) {
		mutex_lock(&hm->lock);
		samples = hm->samples;
		promotions = hm->promotions;
		failed = hm->promote_failed;
		mutex_unlock(&hm->lock);
	}
	seq_printf(m, "samples %lu\n", samples);
	seq_printf(m, "promotions %lu\n", promotions);
	seq_printf(m, "promote_failed %lu\n", failed);
}

/*
 * Called by do_anonymous_page() while the policy handles base page faults
 * (hawkeye_base_faults()). VM_FAULT_FALLBACK: map a base page as usual.
 */
vm_fault_t hawkeye_base_fault(struct vm_fault *vmf)
{
	const struct hawkeye_policy_ops *ops = hawkeye_promote_policy();

	return ops->fault ? ops->fault(vmf) : VM_FAULT_FALLBACK;
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
