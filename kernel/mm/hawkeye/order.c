// SPDX-License-Identifier: GPL-2.0
/*
 * The order in which HawkEye's own promotion policies promote the regions
 * of their processes' access_maps (access_map.c).
 *
 * hawkeye-g: each round collapses up to `batch` regions from the highest
 * bucket that any process has a region in, the processes that have one
 * there taking turns, by fair queueing across their memory cgroups'
 * weights (memory.thp.weight) and within their caps on huge pages.
 *
 * hawkeye-pmu promotes for the process with the highest MMU overhead as
 * measured with performance counters (by tools/hawkeye-pmud, written to
 * promote/measured_overhead), from its highest bucket down, processes
 * within pmu_band of the highest taking turns, and none for a process
 * measured below pmu_threshold. Processes without a measurement are served
 * after them, in the hawkeye-g order.
 *
 * See Documentation/admin-guide/mm/hawkeye.rst.
 */
#define pr_fmt(fmt) "hawkeye: " fmt

#include <linux/bsearch.h>
#include <linux/hawkeye.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/swap.h>

#include "hawkeye.h"
#include "promote.h"

/* Virtual time a region costs a cgroup of weight 1. */
#define ORDER_VTIME_UNIT	(1U << 20)

/* "no measurements" said once since the switch to hawkeye-pmu. */
static bool order_pmu_told;

/* A region picked for promotion. */
struct hawkeye_pick {
	struct hawkeye_mm *hm;
	struct hawkeye_region *r;
};

/*
 * A process's memory cgroup in a batch: its weight (its share of its
 * ancestors' shares, order_weights(); 0: at its huge page cap, not
 * served) and its virtual time in each bucket, shared by its processes.
 */
struct hawkeye_share {
	struct mem_cgroup *memcg;	/* referenced for the batch; NULL: none */
	unsigned int weight;
	struct hawkeye_vtime *vtime;
};

/*
 * Point each process's @pos at the head of each of its buckets; a fresh
 * process's bucket 0 at its end. Its windows come back to back and may
 * start before its work does (a process that waits for input after its
 * start): promoting a region it was not seen using is a guess, which
 * spends the budget that its hot regions need a window later. Bucket 0
 * waits until the process is no longer fresh.
 */
static void order_pos_init(struct hawkeye_mm **hms, unsigned int nr,
			   struct list_head *(*pos)[HAWKEYE_NR_BUCKETS])
{
	unsigned int i;
	int b;

	for (i = 0; i < nr; i++) {
		for (b = 0; b < HAWKEYE_NR_BUCKETS; b++)
			pos[i][b] = hms[i]->map.buckets[b].next;
		if (hawkeye_promote_fresh(hms[i]))
			pos[i][0] = &hms[i]->map.buckets[0];
	}
}

/* The highest bucket of a process with a region left at @pos; -1: none. */
static int order_top(struct hawkeye_mm *hm, struct list_head **pos)
{
	int b;

	for (b = HAWKEYE_NR_BUCKETS - 1; b >= 0; b--)
		if (pos[b] != &hm->map.buckets[b])
			return b;
	return -1;
}

/* The first of @hms[@nr] registered after the process @seq: whose turn it is. */
static unsigned int order_turn(struct hawkeye_mm **hms, unsigned int nr,
			       u64 seq)
{
	unsigned int i = 0;

	while (i < nr && hms[i]->seq <= seq)
		i++;
	return i;
}

/* Pick the region at @hm's @pos in bucket @b, and move @pos past it. */
static void order_take(struct hawkeye_pick *out, struct hawkeye_mm *hm,
		       struct list_head **pos, int b)
{
	out->hm = hm;
	out->r = list_entry(pos[b], struct hawkeye_region, node);
	pos[b] = pos[b]->next;
}

/*
 * Should the process of share @x be served before that of @y in bucket
 * @b? The one whose cgroup's next region there starts first in virtual
 * time: start-time fair queueing (virtual times wrap; those compared are
 * within ORDER_VTIME_UNIT of the bucket's clock, order_g()).
 */
static bool order_before(const struct hawkeye_share *x,
			 const struct hawkeye_share *y, int b)
{
	return (int)(x->vtime->t[b] - y->vtime->t[b]) < 0;
}

/*
 * Where each cgroup's regions moved since the batch before (hawkeye_map_place()),
 * for order_vtime_settle(): the buckets they entered, where the cgroup
 * had none then, and those they moved out of. The processes of a cgroup
 * share its masks; a process's moves are taken once.
 */
static void order_vtime_moves(struct hawkeye_mm **hms, unsigned int nr,
			      struct hawkeye_share *share)
{
	unsigned int i, b;

	BUILD_BUG_ON(HAWKEYE_NR_BUCKETS > 16);	/* u16 masks */
	for (i = 0; i < nr; i++) {
		struct hawkeye_vtime *v = share[i].vtime;

		v->now = 0;
		v->entered = 0;
		v->departed = 0;
	}
	for (i = 0; i < nr; i++) {
		struct hawkeye_vtime *v = share[i].vtime;
		struct hawkeye_access_map *map = &hms[i]->map;

		for (b = 0; b < HAWKEYE_NR_BUCKETS; b++)
			if (!list_empty(&map->buckets[b]))
				v->now |= BIT(b);
		v->entered |= map->arrived;
		v->departed |= map->departed;
		map->arrived = 0;
		map->departed = 0;
	}
	for (i = 0; i < nr; i++)
		share[i].vtime->entered &= ~share[i].vtime->queued;
	for (i = 0; i < nr; i++)
		share[i].vtime->queued = share[i].vtime->now;
}

/*
 * Bucket @b's turn, with @vclock the buckets' clocks. A cgroup that kept
 * promoting there is up to a region of weight 1 ahead of @b's clock and
 * keeps its place. One further ahead is stale (absent or capped for long,
 * or the thread restarted with fresh clocks), one behind had nothing to
 * promote there meanwhile: it starts at the clock, with no credit. A
 * cgroup with no regions in @b at the batch before, some of whose regions
 * moved into it since, out of the bucket it was served in last
 * (coverages climbing or falling, all at once or a few at a time),
 * starts no earlier than the clock plus its lag there (how far it was
 * ahead of that bucket's clock), so that cgroups that move together keep
 * their order by weight: at the clock, each would get a turn in every
 * bucket entered.
 */
static void order_vtime_settle(struct hawkeye_share *share, unsigned int nr,
			       int b, const unsigned int *vclock)
{
	unsigned int i, ahead, lag;

	for (i = 0; i < nr; i++) {
		struct hawkeye_vtime *v = share[i].vtime;
		int from = (int)v->last - 1;

		if (!share[i].weight)
			continue;
		ahead = v->t[b] - vclock[b];
		if (ahead > ORDER_VTIME_UNIT)
			ahead = 0;
		lag = 0;
		if (v->entered & BIT(b)) {
			if (from >= 0 && (v->departed & BIT(from)))
				lag = v->t[from] - vclock[from];
			if (lag > ORDER_VTIME_UNIT)
				lag = 0;
			v->entered &= ~BIT(b);
		}
		v->t[b] = vclock[b] + max(ahead, lag);
	}
}

/*
 * The hawkeye-g order: up to @n regions of the processes @hms[@nr] (in
 * registration order), from the highest bucket in which any of them has
 * a region. Within that bucket, processes take turns (round-robin), each
 * giving the region at the head of its bucket first; where their cgroups
 * (@share) differ, turns go by weight, in start-time fair queueing, each
 * bucket on its own: each region advances its cgroup's virtual time in
 * the bucket by ORDER_VTIME_UNIT over its weight, the cgroup with the
 * earliest virtual time there is served, and the bucket's clock in @rr is
 * the virtual time of the region it served last. Virtual times carry over
 * from batch to batch and across the other buckets' turns, so weights
 * 1:3 get regions 1:3 of a bucket at any batch size, however hotter
 * regions interleave, and cgroups whose regions move between buckets
 * together keep their order (order_vtime_settle()). Processes of a
 * cgroup at its cap (weight 0) get none. Whenever
 * the bucket changes, turns start with the first process among those
 * whose cgroups are equally early (the paper's order, where all are);
 * they go on from where @rr left them otherwise. @pos is scratch
 * space for @nr processes. Changes nothing but @rr, @pos and @share's
 * virtual times and bucket masks. Returns the number of regions put in
 * @out.
 */
static unsigned int order_g(struct hawkeye_mm **hms, unsigned int nr,
			    struct hawkeye_share *share,
				  struct list_head *(*pos)[HAWKEYE_NR_BUCKETS],
				  struct hawkeye_rr_cursor *rr,
				  struct hawkeye_pick *out, unsigned int n)
{
	unsigned int i, k, j, start, best;
	int b, settled = -1;

	order_pos_init(hms, nr, pos);
	order_vtime_moves(hms, nr, share);
	for (k = 0; k < n; k++) {
		b = -1;
		for (i = 0; i < nr; i++)
			if (share[i].weight)
				b = max(b, order_top(hms[i], pos[i]));
		if (b < 0)
			break;
		if (b != settled) {
			order_vtime_settle(share, nr, b, rr->vclock);
			settled = b;
		}
		start = b == rr->bucket ? order_turn(hms, nr, rr->seq) : 0;
		best = nr;
		for (j = 0; j < nr; j++) {
			i = (start + j) % nr;
			if (pos[i][b] == &hms[i]->map.buckets[b] || !share[i].weight)
				continue;
			if (best == nr || order_before(&share[i], &share[best], b))
				best = i;
		}
		order_take(&out[k], hms[best], pos[best], b);
		rr->vclock[b] = share[best].vtime->t[b];
		share[best].vtime->t[b] += ORDER_VTIME_UNIT / share[best].weight;
		share[best].vtime->last = b + 1;
		rr->bucket = b;
		rr->seq = hms[best]->seq;
	}
	return k;
}

/*
 * The hawkeye-pmu order: up to @n regions, each from the process with the
 * highest measured overhead (@measured[i], 1/100 %, -1: none) at or above
 * @threshold that has a region left, from its highest bucket down. The
 * processes within @band of the highest take turns, starting after the
 * one @rr served last. @hms are in registration order, @pos is scratch
 * space. Changes nothing but @rr and @pos; returns the number put in @out.
 */
static unsigned int order_pmu(struct hawkeye_mm **hms, unsigned int nr,
			      const int *measured, int threshold,
				      int band,
				      struct list_head *(*pos)[HAWKEYE_NR_BUCKETS],
				      struct hawkeye_rr_cursor *rr,
				      struct hawkeye_pick *out, unsigned int n)
{
	unsigned int i, j, k, start;
	int b = -1, best;

	order_pos_init(hms, nr, pos);

	for (k = 0; k < n; k++) {
		best = -1;
		for (i = 0; i < nr; i++)
			if (measured[i] >= threshold && measured[i] > best &&
			    order_top(hms[i], pos[i]) >= 0)
				best = measured[i];
		if (best < 0)
			break;
		/* The first one in turn within the band that has a region. */
		start = order_turn(hms, nr, rr->pmu_seq);
		for (j = 0; j < nr; j++) {
			i = (start + j) % nr;
			if (measured[i] >= max(threshold, best - band)) {
				b = order_top(hms[i], pos[i]);
				if (b >= 0)
					break;
			}
		}
		order_take(&out[k], hms[i], pos[i], b);
		rr->pmu_seq = hms[i]->seq;
	}
	return k;
}

/*
 * hawkeye-pmu: up to @n regions for the processes measured above the
 * threshold (a measurement counts times the weight of the process's
 * cgroup, / 100), then for those without a measurement in the hawkeye-g
 * order. Reorders @hms and @share alike: the unmeasured ones first.
 */
static unsigned int order_pick_pmu(struct hawkeye_mm **hms, unsigned int nr,
				   struct hawkeye_share *share,
				     struct list_head *(*pos)[HAWKEYE_NR_BUCKETS],
				     struct hawkeye_rr_cursor *rr,
				     struct hawkeye_pick *picks, unsigned int n)
{
	int *measured = kmalloc_array(nr, sizeof(*measured), GFP_KERNEL);
	unsigned int i, got, nr_none = 0;

	if (!measured)
		return 0;
	for (i = 0; i < nr; i++) {
		measured[i] = hawkeye_map_measured(hms[i]);
		if (measured[i] > 0)
			measured[i] = min_t(u64, (u64)measured[i] * share[i].weight / 100,
					    INT_MAX);
		if (!share[i].weight)
			measured[i] = -1;
	}
	got = order_pmu(hms, nr, measured,
			READ_ONCE(hawkeye_promote.pmu_threshold),
				READ_ONCE(hawkeye_promote.pmu_band),
				pos, rr, picks, n);
	/* Stable: the unmeasured keep their registration order. */
	for (i = 0; i < nr; i++) {
		if (measured[i] < 0) {
			swap(hms[nr_none], hms[i]);
			swap(share[nr_none], share[i]);
			nr_none++;
		}
	}
	kfree(measured);
	if (nr_none == nr && !READ_ONCE(order_pmu_told)) {
		WRITE_ONCE(order_pmu_told, true);
		pr_notice("hawkeye-pmu: no MMU overhead measurements (is tools/hawkeye-pmud running?); promoting by the HawkEye-G estimate\n");
	}
	if (got < n && nr_none)
		got += order_g(hms, nr_none, share, pos, rr, picks + got,
				     n - got);
	return got;
}

/* A cgroup above a process in a batch, and its children's weights. */
struct order_node {
	struct mem_cgroup *memcg;
	u64 children;	/* the weights of its children with regions to promote */
};

static int order_node_cmp(const void *a, const void *b)
{
	const struct order_node *x = a, *y = b;

	return x->memcg < y->memcg ? -1 : x->memcg > y->memcg;
}

static struct order_node *order_node(struct order_node *nodes,
				     unsigned int nr, struct mem_cgroup *memcg)
{
	struct order_node key = { .memcg = memcg };

	return bsearch(&key, nodes, nr, sizeof(*nodes), order_node_cmp);
}

/* A cgroup other than the root; false for none. */
static bool order_below_root(struct mem_cgroup *memcg)
{
	return memcg && !mem_cgroup_is_root(memcg);
}

/* A cgroup below a top-level one (a child of the root). */
static bool order_below_top(struct mem_cgroup *memcg)
{
	return order_below_root(memcg) &&
	       order_below_root(parent_mem_cgroup(memcg));
}

/*
 * The weight of each of @share[@nr]'s cgroups in a batch, as cgroup v2
 * distributes by weight (Documentation/admin-guide/cgroup-v2.rst,
 * "Weights"): at each level, the children of a cgroup that have regions
 * to promote (@active) divide the cgroup's share in proportion to their
 * memory.thp.weight. Scaled so that a cgroup's weight is its top-level
 * ancestor's weight times its fraction of that ancestor's share: with
 * every cgroup at the top level, their own weights. A subtree cannot take
 * more than its top cgroup's share, however many children it makes with
 * whatever weights. The processes of the root cgroup count as a top-level
 * cgroup of weight 100. Called with @share[*].weight the cgroups' own
 * weights (0: at the cap, left so); sorts the cgroups above them once, so
 * that a batch costs O(nr * depth * log): false if out of memory.
 */
static bool order_weights(struct hawkeye_share *share, const bool *active,
			  unsigned int nr)
{
	struct order_node *nodes, *n;
	struct mem_cgroup *m;
	unsigned int i, k, nr_nodes = 0;
	size_t max = 0;

	for (i = 0; i < nr; i++)
		for (m = share[i].memcg; active[i] && order_below_root(m);
		     m = parent_mem_cgroup(m))
			max++;
	nodes = kvmalloc_array(max ?: 1, sizeof(*nodes), GFP_KERNEL);
	if (!nodes)
		return false;
	/* Every cgroup from an active process up to the top level, once. */
	for (i = 0; i < nr; i++)
		for (m = share[i].memcg; active[i] && order_below_root(m);
		     m = parent_mem_cgroup(m))
			nodes[nr_nodes++] = (struct order_node){ .memcg = m };
	sort(nodes, nr_nodes, sizeof(*nodes), order_node_cmp, NULL);
	for (i = 0, k = 0; i < nr_nodes; i++)
		if (!k || nodes[k - 1].memcg != nodes[i].memcg)
			nodes[k++] = nodes[i];
	nr_nodes = k;
	/* Each one's weight in its parent's sum. */
	for (i = 0; i < nr_nodes; i++) {
		struct mem_cgroup *parent = parent_mem_cgroup(nodes[i].memcg);

		n = order_below_root(parent) ?
		    order_node(nodes, nr_nodes, parent) : NULL;
		if (n)
			n->children += hawkeye_memcg_weight(nodes[i].memcg);
	}
	for (i = 0; i < nr; i++) {
		u64 frac = ORDER_VTIME_UNIT;

		if (!share[i].weight)
			continue;
		for (m = share[i].memcg; order_below_top(m);
		     m = parent_mem_cgroup(m)) {
			n = order_node(nodes, nr_nodes, parent_mem_cgroup(m));
			frac = div64_u64(frac * hawkeye_memcg_weight(m),
					 max(n ? n->children : 0, 1ULL));
		}
		frac = frac * hawkeye_memcg_weight(m) / ORDER_VTIME_UNIT;
		share[i].weight = clamp_t(u64, frac, 1, ORDER_VTIME_UNIT);
	}
	kvfree(nodes);
	return true;
}

/*
 * Each process's share in a batch: its cgroup's weight in the hierarchy
 * (order_weights()), 0 if the cgroup is at its huge page cap (its
 * collapses could not be charged), and its cgroup's virtual time. NULL if
 * out of memory.
 */
static struct hawkeye_share *order_shares(struct hawkeye_mm **hms,
					  unsigned int nr)
{
	/* Without memory cgroups all share one time: plain turns. */
	static struct hawkeye_vtime vtime_no_memcg;
	struct hawkeye_share *share = kmalloc_array(nr, sizeof(*share), GFP_KERNEL);
	bool *active = kmalloc_array(nr, sizeof(*active), GFP_KERNEL);
	unsigned int i;

	if (!share || !active)
		goto fail;
	for (i = 0; i < nr; i++) {
		struct mem_cgroup *memcg = get_mem_cgroup_from_mm(hms[i]->mm);

		share[i].memcg = memcg;
		share[i].weight = hawkeye_memcg_huge_full(memcg) ?
				  0 : hawkeye_memcg_weight(memcg);
#ifdef CONFIG_MEMCG
		share[i].vtime = memcg ? &memcg->hawkeye.vtime : &vtime_no_memcg;
#else
		share[i].vtime = &vtime_no_memcg;
#endif
		active[i] = share[i].weight && READ_ONCE(hms[i]->map.nr_regions);
	}
	if (order_weights(share, active, nr)) {
		kfree(active);
		return share;
	}
	for (i = 0; i < nr; i++)
		mem_cgroup_put(share[i].memcg);
fail:
	kfree(active);
	kfree(share);
	return NULL;
}

static void order_shares_put(struct hawkeye_share *share, unsigned int nr)
{
	unsigned int i;

	for (i = 0; share && i < nr; i++)
		mem_cgroup_put(share[i].memcg);
	kfree(share);
}

/* Promote up to @batch regions, in the order of @order. */
static void map_batch(struct hawkeye_mm **hms, unsigned int nr,
		      unsigned int batch, struct hawkeye_rr_cursor *rr,
		      unsigned int (*order)(struct hawkeye_mm **hms,
					    unsigned int nr,
					    struct hawkeye_share *share,
					    struct list_head *(*pos)[HAWKEYE_NR_BUCKETS],
					    struct hawkeye_rr_cursor *rr,
					    struct hawkeye_pick *out,
					    unsigned int n))
{
	struct list_head *(*pos)[HAWKEYE_NR_BUCKETS];
	struct hawkeye_share *share = order_shares(hms, nr);
	struct hawkeye_pick *picks;
	unsigned int i, n = 0;

	pos = kmalloc_array(nr, sizeof(*pos), GFP_KERNEL);
	picks = kmalloc_array(batch, sizeof(*picks), GFP_KERNEL);
	if (pos && picks && share)
		n = order(hms, nr, share, pos, rr, picks, batch);
	order_shares_put(share, nr);
	if (n)
		lru_add_drain_all();
	for (i = 0; i < n && !kthread_should_stop(); i++) {
		bool go_on;

		if (!hawkeye_mmget_alive(picks[i].hm->mm))
			continue;
		go_on = hawkeye_map_promote(picks[i].hm, picks[i].r);
		mmput(picks[i].hm->mm);
		if (!go_on)
			break;
		cond_resched();
	}
	kfree(picks);
	kfree(pos);
}

static void g_batch(struct hawkeye_mm **hms, unsigned int nr,
		    unsigned int batch, struct hawkeye_rr_cursor *rr)
{
	map_batch(hms, nr, batch, rr, order_g);
}

static void pmu_batch(struct hawkeye_mm **hms, unsigned int nr,
		      unsigned int batch, struct hawkeye_rr_cursor *rr)
{
	map_batch(hms, nr, batch, rr, order_pick_pmu);
}

static void pmu_start(void)
{
	WRITE_ONCE(order_pmu_told, false);
}

const struct hawkeye_policy_ops hawkeye_g_ops = {
	.name = "hawkeye-g",
	.state = &hawkeye_access_map_state,
	.mm_init = hawkeye_map_mm_init,
	.mm_release = hawkeye_map_mm_release,
	.sample = hawkeye_map_sample,
	.batch = g_batch,
	.overhead = hawkeye_map_overhead,
	.set_measured = hawkeye_map_set_measured,
	.show = hawkeye_access_map_show,
};

const struct hawkeye_policy_ops hawkeye_pmu_ops = {
	.name = "hawkeye-pmu",
	.state = &hawkeye_access_map_state,
	.start = pmu_start,
	.mm_init = hawkeye_map_mm_init,
	.mm_release = hawkeye_map_mm_release,
	.sample = hawkeye_map_sample,
	.batch = pmu_batch,
	.overhead = hawkeye_map_overhead,
	.measured = hawkeye_map_measured,
	.set_measured = hawkeye_map_set_measured,
	.show = hawkeye_access_map_show,
};

#ifdef CONFIG_HAWKEYE_ORDER_KUNIT_TEST
#include "tests/order-kunit.h"
#endif
