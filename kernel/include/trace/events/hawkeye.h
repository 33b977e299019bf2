/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM hawkeye

#if !defined(_TRACE_HAWKEYE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_HAWKEYE_H

#include <linux/tracepoint.h>

#ifdef CONFIG_HAWKEYE_PROMOTE
/*
 * A 2 MB region's access coverage measured, and where it put the region;
 * @populated: pages mapped during the window, not counted in @coverage.
 */
TRACE_EVENT(hawkeye_sample,

	TP_PROTO(pid_t pid, unsigned long addr, unsigned int coverage,
		 unsigned int populated, unsigned int ema, unsigned int bucket),

	TP_ARGS(pid, addr, coverage, populated, ema, bucket),

	TP_STRUCT__entry(
		__field(pid_t, pid)
		__field(unsigned long, addr)
		__field(unsigned int, coverage)
		__field(unsigned int, populated)
		__field(unsigned int, ema)
		__field(unsigned int, bucket)
	),

	TP_fast_assign(
		__entry->pid = pid;
		__entry->addr = addr;
		__entry->coverage = coverage;
		__entry->populated = populated;
		__entry->ema = ema;
		__entry->bucket = bucket;
	),

	TP_printk("pid=%d addr=0x%lx coverage=%u populated=%u ema=%u bucket=%u",
		  __entry->pid, __entry->addr, __entry->coverage,
		  __entry->populated, __entry->ema, __entry->bucket)
);

/*
 * A 2 MB region promoted (result 0) or not (a negative errno), with its
 * process's measured MMU overhead in 1/100 % (-1: none) for hawkeye-pmu.
 */
TRACE_EVENT(hawkeye_promote,

	TP_PROTO(pid_t pid, unsigned long addr, unsigned int bucket,
		 unsigned int ema, int measured, int result),

	TP_ARGS(pid, addr, bucket, ema, measured, result),

	TP_STRUCT__entry(
		__field(pid_t, pid)
		__field(unsigned long, addr)
		__field(unsigned int, bucket)
		__field(unsigned int, ema)
		__field(int, measured)
		__field(int, result)
	),

	TP_fast_assign(
		__entry->pid = pid;
		__entry->addr = addr;
		__entry->bucket = bucket;
		__entry->ema = ema;
		__entry->measured = measured;
		__entry->result = result;
	),

	TP_printk("pid=%d addr=0x%lx bucket=%u ema=%u measured=%d result=%d",
		  __entry->pid, __entry->addr, __entry->bucket,
		  __entry->ema, __entry->measured, __entry->result)
);

#ifdef CONFIG_HAWKEYE_BASELINES
/*
 * A promotion attempt of a baseline policy (ingens, freebsd); util the
 * region's populated base pages (512: a full reservation), fmfi the free
 * memory fragmentation index in percent, metric the process's Ingens
 * metric before it; result 0 (promoted) or a negative errno.
 */
TRACE_EVENT(hawkeye_baseline_promote,

	TP_PROTO(pid_t pid, const char *policy, unsigned long addr,
		 unsigned int util, unsigned int fmfi, u64 metric, int result),

	TP_ARGS(pid, policy, addr, util, fmfi, metric, result),

	TP_STRUCT__entry(
		__field(pid_t, pid)
		__string(policy, policy)
		__field(unsigned long, addr)
		__field(unsigned int, util)
		__field(unsigned int, fmfi)
		__field(u64, metric)
		__field(int, result)
	),

	TP_fast_assign(
		__entry->pid = pid;
		__assign_str(policy);
		__entry->addr = addr;
		__entry->util = util;
		__entry->fmfi = fmfi;
		__entry->metric = metric;
		__entry->result = result;
	),

	TP_printk("pid=%d policy=%s addr=0x%lx util=%u fmfi=%u metric=%llu result=%d",
		  __entry->pid, __get_str(policy), __entry->addr, __entry->util,
		  __entry->fmfi, __entry->metric, __entry->result)
);
#endif
#endif /* CONFIG_HAWKEYE_PROMOTE */

#ifdef CONFIG_HAWKEYE_DEBLOAT
/*
 * Bloat recovery split a folio of order @from at @addr to order @to (mTHP
 * pieces, or 0), freeing @freed zero-filled subpages to the zero page.
 */
TRACE_EVENT(hawkeye_debloat_split,

	TP_PROTO(struct mm_struct *mm, unsigned long addr, unsigned int from,
		 unsigned int to, unsigned int freed),

	TP_ARGS(mm, addr, from, to, freed),

	TP_STRUCT__entry(
		__field(struct mm_struct *, mm)
		__field(unsigned long, addr)
		__field(unsigned int, from)
		__field(unsigned int, to)
		__field(unsigned int, freed)
	),

	TP_fast_assign(
		__entry->mm = mm;
		__entry->addr = addr;
		__entry->from = from;
		__entry->to = to;
		__entry->freed = freed;
	),

	TP_printk("mm=%p addr=0x%lx order=%u to=%u freed=%u",
		  __entry->mm, __entry->addr, __entry->from, __entry->to,
		  __entry->freed)
);
#endif /* CONFIG_HAWKEYE_DEBLOAT */

#endif /* _TRACE_HAWKEYE_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
