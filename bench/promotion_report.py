#!/usr/bin/env python3
"""Summarise bench/promotion.sh output: huge page promotion of hot regions
(paper Figures 5 and 6), fairness between three instances (Table 5,
Figure 7) and hawkeye-g vs hawkeye-pmu (Table 9).

  bench/promotion_report.py [INPUT.jsonl] [-o results/promotion.json]
                            [--fairness-output results/fairness.json]
                            [--pmu-output results/pmu.json]
                            [--plots DIR | --no-plots]

Prints the figures, writes the JSON summaries and, with matplotlib,
promotion.png (hot-set coverage over time), fairness.png (huge pages per
instance over time) and pmu.png (huge pages of the random and the
sequential workload over time, per policy) into DIR (default: the
directory of -o). promotion.json and fairness.json are written when the
input has single or fairness runs, pmu.json when it has pmu runs. What
each figure means is in bench/README.md. Every function but main() and
the plotting is pure.
"""
import argparse
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL_COVERAGE = 0.9        # "covered": >= 90 % of the hot regions are huge
GOAL_PROMOTIONS_PER_HOT = 1.2   # hawkeye-g: promotions / hot regions to get there
GOAL_SPEEDUP_T90 = 5.0     # linux / hawkeye-g time to 90 %
HPAGE_KB = 2048
# The /proc/vmstat counter that counts a policy's promotions.
PROMOTION_COUNTER = {"linux": "thp_collapse_alloc", "none": "thp_collapse_alloc",
                     "hawkeye-g": "hawkeye_promote_success",
                     "hawkeye-pmu": "hawkeye_promote_success",
                     "ingens": "hawkeye_promote_success",
                     "freebsd": "hawkeye_promote_success"}
POLICY_ORDER = ["none", "linux", "ingens", "freebsd", "hawkeye-g", "hawkeye-pmu"]
PMU_EXPECTED_RATIO = 2.0   # hawkeye-g / hawkeye-pmu time to promote the random one
TCG_NOTE = ("TCG does not model the TLB: throughput differences between the policies "
            "are QEMU's software page walks, not the hardware's MMU overhead")


class ReportError(Exception):
    pass


def parse_lines(lines):
    """Group the JSON lines by kind and run:
    {"env", "runs": {id: run}, "unavailable": [..], "samples": {id: [..]},
     "progress": {id: {inst: [..]}}, "instances": {id: {inst: ..}},
     "fragment": {id: ..}, "release": {id: ..}, "overhead": {id: ..}}."""
    d = {"env": {}, "runs": {}, "unavailable": [], "samples": {}, "progress": {},
         "instances": {}, "fragment": {}, "release": {}, "overhead": {},
         "companion": {}, "companion_op": {}, "thread_cpu": {}}
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            o = json.loads(line)
        except ValueError as e:
            raise ReportError(f"line {n}: not JSON: {e}") from None
        kind, run = o.get("type"), o.get("run")
        if kind == "env":
            d["env"] = o
        elif kind == "run":
            d["runs"][run] = o
        elif kind == "unavailable":
            d["unavailable"].append(o)
        elif kind == "sample":
            d["samples"].setdefault(run, []).append(o)
        elif kind == "progress":
            d["progress"].setdefault(run, {}).setdefault(o["inst"], []).append(o)
        elif kind == "instance":
            d["instances"].setdefault(run, {})[o["inst"]] = o
        elif kind == "fragment":
            d["fragment"][run] = o
        elif kind == "fragment_release":
            d["release"][run] = o
        elif kind == "overhead":
            d["overhead"][run] = o
        elif kind in ("companion", "companion_op"):
            d[kind].setdefault(run, []).append(o)
        elif kind == "thread_cpu":
            d["thread_cpu"][run] = o
        else:
            raise ReportError(f"line {n}: unknown type {kind!r}")
    if not d["runs"]:
        raise ReportError("no runs in the input")
    for run in d["samples"]:
        d["samples"][run].sort(key=lambda s: s["mono"])
    return d


def ratio(a, b):
    """a / b, or None where either is missing or b is 0."""
    return a / b if a is not None and b else None


def start_mono(inst, progress=()):
    """CLOCK_MONOTONIC time of the instance's start (its t = 0)."""
    if inst.get("start_mono") is not None:
        return inst["start_mono"]
    for p in progress:
        if p.get("mono") is not None and p.get("t") is not None:
            return p["mono"] - p["t"]
    return None


def series(samples, inst_no, t0, counter):
    """Per sample of one instance: t, hot_huge, hot_regions, huge, anon_huge_kb,
    and promotions (COUNTER's increase since the run's first sample). A
    sample that finds none of its mapping present is of the exiting process
    (its memory already unmapped): left out."""
    out = []
    base = samples[0]["vmstat"].get(counter) if samples else None
    for s in samples:
        for i in s["inst"]:
            if i["inst"] != inst_no or not i["huge_map"].strip("-"):
                continue
            c = s["vmstat"].get(counter)
            out.append({"t": round(s["mono"] - t0, 3), "hot_huge": i["hot_huge"],
                        "hot_regions": i["hot_regions"], "huge": i["huge"],
                        "anon_huge_kb": i.get("anon_huge_kb"),
                        "promotions": c - base if c is not None and base is not None else None,
                        "hawkeye": i.get("hawkeye")})
    return out


def coverage(point):
    return point["hot_huge"] / point["hot_regions"] if point["hot_regions"] else 0.0


def time_to_coverage(ser, goal=GOAL_COVERAGE):
    """The first point (t >= 0) where the hot coverage reaches GOAL, or None."""
    for p in ser:
        if p["t"] >= 0 and coverage(p) >= goal - 1e-9:
            return p
    return None


def time_saved(work, seconds, base_rate):
    """Seconds the run saved over base pages: the time the baseline would
    take for the same work, less the time the run took."""
    if work is None or not seconds or not base_rate:
        return None
    return work / base_rate - seconds


def run_rate(inst):
    return ratio(inst.get("work"), inst.get("seconds")) if inst else None


def counter_for(run):
    return PROMOTION_COUNTER.get(run["policy"], "thp_collapse_alloc")


def analyse_run(d, run_id):
    """Per instance of one run: its series and figures."""
    run = d["runs"][run_id]
    samples = d["samples"].get(run_id, [])
    counter = counter_for(run)
    res = []
    for inst_no, inst in sorted(d["instances"].get(run_id, {}).items()):
        t0 = start_mono(inst, d["progress"].get(run_id, {}).get(inst_no, []))
        if t0 is None:
            continue
        ser = series(samples, inst_no, t0, counter)
        hit = time_to_coverage(ser)
        before = [p for p in ser if p["t"] <= 0]
        last = ser[-1] if ser else None
        res.append({
            "inst": inst_no,
            "regions": inst.get("regions"),
            "hot_regions": inst.get("hot_regions") or (last or {}).get("hot_regions"),
            "seconds": inst.get("seconds"),
            "work": inst.get("work"),
            "unit": inst.get("unit"),
            "rate": run_rate(inst),
            "init_seconds": inst.get("init_seconds"),
            "t90": hit["t"] if hit else None,
            "promotions_to_90": hit["promotions"] if hit else None,
            "huge_to_90": hit["huge"] if hit else None,
            "final_coverage": coverage(last) if last else None,
            "final_huge": last["huge"] if last else None,
            "promotions_total": last["promotions"] if last else None,
            "anon_huge_kb_at_start": max((p["anon_huge_kb"] or 0 for p in before), default=None),
            "hawkeye_final": last.get("hawkeye") if last else None,
            "series": ser,
        })
    return res


def runs_of(d, experiment):
    """{workload: {policy: run id}} (the last run of each pair)."""
    out = {}
    for rid, r in sorted(d["runs"].items()):
        if r.get("experiment") == experiment:
            out.setdefault(r["workload"], {})[r["policy"]] = rid
    return out


def baseline_rates(d):
    """{workload: work per second of the single 'none' run}."""
    rates = {}
    for w, pol in runs_of(d, "single").items():
        if "none" in pol:
            insts = d["instances"].get(pol["none"], {})
            if insts:
                rates[w] = run_rate(next(iter(insts.values())))
    return rates


def _sorted_policies(pols):
    return sorted(pols, key=lambda p: (POLICY_ORDER.index(p) if p in POLICY_ORDER else 99, p))


def summarize_single(d):
    """Figures per workload and policy, and the linux vs hawkeye-g comparison."""
    rates = baseline_rates(d)
    out = {}
    for w, pol in runs_of(d, "single").items():
        wres = {"policies": {}}
        for p in _sorted_policies(pol):
            rid = pol[p]
            insts = analyse_run(d, rid)
            if not insts:
                continue
            r = insts[0]
            saved = time_saved(r["work"], r["seconds"], rates.get(w))
            frag, rel = d["fragment"].get(rid, {}), d["release"].get(rid, {})
            wres["policies"][p] = {
                "run": rid,
                "counter": counter_for(d["runs"][rid]),
                **{k: v for k, v in r.items() if k != "series"},
                "promotions_per_hot_region": ratio(r["promotions_to_90"], r["hot_regions"]),
                "speedup": ratio(r["rate"], rates.get(w)),
                "time_saved_s": saved,
                "time_saved_per_promotion_ms": (saved * 1000 / r["promotions_total"]
                                                if saved is not None and r["promotions_total"]
                                                else None),
                "fragment": {k: frag.get(k) for k in (
                    "free_2m_blocks_before", "free_2m_blocks_after", "blocks_pinned",
                    "huge_held", "mem_free_before_kb", "mem_free_after_kb", "seconds")},
                "free_2m_blocks_after_release": rel.get("free_2m_blocks"),
                "series": [[p_["t"], round(coverage(p_), 4), p_["promotions"], p_["huge"]]
                           for p_ in r["series"]],
            }
        lin, hg = wres["policies"].get("linux"), wres["policies"].get("hawkeye-g")
        cmp_ = {"t90_linux_over_hawkeye_g": None, "lower_bound": False}
        if lin and hg and hg["t90"]:
            if lin["t90"] is not None:
                cmp_["t90_linux_over_hawkeye_g"] = lin["t90"] / hg["t90"]
            elif lin["seconds"]:
                # Linux never got there: its run time is a lower bound.
                cmp_["t90_linux_over_hawkeye_g"] = lin["seconds"] / hg["t90"]
                cmp_["lower_bound"] = True
        if hg:
            cmp_["goal_promotions_per_hot_region"] = GOAL_PROMOTIONS_PER_HOT
            cmp_["met_promotions_per_hot_region"] = (
                hg["promotions_per_hot_region"] is not None
                and hg["promotions_per_hot_region"] <= GOAL_PROMOTIONS_PER_HOT)
        if cmp_["t90_linux_over_hawkeye_g"] is not None:
            cmp_["goal_t90_ratio"] = GOAL_SPEEDUP_T90
            cmp_["met_t90_ratio"] = cmp_["t90_linux_over_hawkeye_g"] >= GOAL_SPEEDUP_T90
        if lin and hg:
            cmp_["time_saved_per_promotion_hawkeye_g_over_linux"] = ratio(
                hg["time_saved_per_promotion_ms"], lin["time_saved_per_promotion_ms"])
        wres["comparison"] = cmp_
        out[w] = wres
    return out


def max_huge_difference(per_inst):
    """Largest difference in huge pages between instances at one sample time,
    over the samples where every instance was sampled: (diff, t) or (None, None).
    PER_INST: {inst: series}; the series of one run share sample times."""
    by_t = {}
    for ser in per_inst.values():
        for p in ser:
            by_t.setdefault(p["t_run"], []).append(p["huge"])
    best = (None, None)
    for t, hs in sorted(by_t.items()):
        if len(hs) == len(per_inst):
            diff = max(hs) - min(hs)
            if best[0] is None or diff > best[0]:
                best = (diff, t)
    return best


def summarize_fairness(d):
    """Per workload and policy: per-instance completion times (and speedups
    over the 'none' run's same instance), their spread, and the largest
    difference in huge pages between instances."""
    out = {}
    fr = runs_of(d, "fairness")
    for w, pol in fr.items():
        wres = {"policies": {}}
        base = {}
        if "none" in pol:
            base = {r["inst"]: r["seconds"] for r in analyse_run(d, pol["none"])}
        for p in _sorted_policies(pol):
            rid = pol[p]
            insts = analyse_run(d, rid)
            if not insts:
                continue
            # One time axis for the run: from the earliest instance start.
            t_run0 = min(start_mono(d["instances"][rid][r["inst"]],
                                    d["progress"].get(rid, {}).get(r["inst"], []))
                         for r in insts)
            per = {}
            for r in insts:
                off = start_mono(d["instances"][rid][r["inst"]],
                                 d["progress"].get(rid, {}).get(r["inst"], [])) - t_run0
                per[r["inst"]] = [dict(p_, t_run=round(p_["t"] + off, 1)) for p_ in r["series"]]
            diff, at = max_huge_difference(per)
            secs = [r["seconds"] for r in insts if r["seconds"] is not None]
            wres["policies"][p] = {
                "run": rid,
                "instances": [{
                    "inst": r["inst"], "seconds": r["seconds"], "work": r["work"],
                    "rate": r["rate"], "t90": r["t90"], "final_huge": r["final_huge"],
                    "hot_regions": r["hot_regions"], "regions": r["regions"],
                    "speedup": ratio(base.get(r["inst"]), r["seconds"]),
                    "hawkeye_final": r["hawkeye_final"],
                } for r in insts],
                "mean_seconds": sum(secs) / len(secs) if secs else None,
                "completion_spread_s": max(secs) - min(secs) if secs else None,
                "max_huge_difference": diff,
                "max_huge_difference_t": at,
                "series": {str(i): [[p_["t_run"], p_["huge"], p_["hot_huge"]] for p_ in ser]
                           for i, ser in per.items()},
            }
        out[w] = wres
    return out


ORDERS = ("workload-first", "redis-first")


def summarize_order(d):
    """Figure 8: per policy and launch order, xsbench's speedup over the
    'none' run, time until 90 % of its hot regions are huge, its huge pages
    and Redis's at the end; and per policy how much the launch order
    changed that time (redis-first / workload-first)."""
    runs = {}
    for rid, r in sorted(d["runs"].items()):
        if r.get("experiment") == "order":
            runs.setdefault(r["policy"], {})[r.get("order") or ORDERS[0]] = rid
    base = None
    if "none" in runs:
        ins = analyse_run(d, next(iter(runs["none"].values())))
        base = ins[0]["rate"] if ins else None
    out = {}
    for p in _sorted_policies(runs):
        res = {}
        for order in ORDERS:
            rid = runs[p].get(order)
            insts = analyse_run(d, rid) if rid is not None else []
            if not insts:
                continue
            r = insts[0]
            comp = d["companion"].get(rid, [])
            ops = {o.get("op"): o for o in d["companion_op"].get(rid, [])}
            # Never covered: the run's length is a lower bound.
            t90 = r["t90"] if r["t90"] is not None else r["seconds"]
            res[order] = {
                "run": rid, "seconds": r["seconds"], "rate": r["rate"], "unit": r["unit"],
                "speedup": ratio(r["rate"], base), "t90": t90,
                "t90_lower_bound": r["t90"] is None, "final_coverage": r["final_coverage"],
                "final_huge": r["final_huge"], "regions": r["regions"],
                "hot_regions": r["hot_regions"],
                "redis_anon_huge_kb_end": comp[-1].get("anon_huge_kb") if comp else None,
                "redis_rss_kb_end": comp[-1].get("rss_kb") if comp else None,
                "redis_get_per_s": ops.get("get", {}).get("ops_per_sec"),
                "redis_fill_s": ops.get("fill", {}).get("secs"),
                "series": [[p_["t"], round(coverage(p_), 4), p_["huge"]] for p_ in r["series"]],
            }
        if p != "none" and len(res) == 2:
            res["t90_redis_first_over_workload_first"] = ratio(res[ORDERS[1]]["t90"],
                                                               res[ORDERS[0]]["t90"])
        if res:
            out[p] = res
    return out


def format_order(summary):
    out = ["Figure 8 in miniature: xsbench beside a lightly loaded Redis, launched before "
           "(workload-first) or after it (redis-first)",
           f"  {'policy':12s} {'order':15s} {'speedup':>8s} {'t90 (s)':>8s} {'hot cov':>8s} "
           f"{'huge':>5s} {'Redis huge MB':>14s} {'GET/s':>7s}"]
    for p, res in summary.items():
        for order in ORDERS:
            r = res.get(order)
            if not r:
                continue
            t90 = ("≥" if r["t90_lower_bound"] else "") + fmt(r["t90"])
            out.append(f"  {p:12s} {order:15s} {fmt(r['speedup'], '.3f'):>8s} {t90:>8s} "
                       f"{fmt(100 * (r['final_coverage'] or 0), '.0f'):>7s}% "
                       f"{fmt(r['final_huge'], 'd'):>5s} "
                       f"{fmt((r['redis_anon_huge_kb_end'] or 0) / 1024, '.0f'):>14s} "
                       f"{fmt(r['redis_get_per_s'], '.0f'):>7s}")
        if res.get("t90_redis_first_over_workload_first") is not None:
            out.append(f"  {p:12s} launch order effect on t90 (redis-first / workload-first): "
                       f"x{res['t90_redis_first_over_workload_first']:.2f}")
    out.append(f"  Note: {TCG_NOTE}.")
    return "\n".join(out)


def summarize_thread_cpu(d):
    """CPU seconds of the memory-management threads per run."""
    return [{"run": rid, "experiment": d["runs"].get(rid, {}).get("experiment"),
             "workload": d["runs"].get(rid, {}).get("workload"), "config": o.get("config"),
             "seconds": o.get("seconds"), "threads": o.get("threads")}
            for rid, o in sorted(d["thread_cpu"].items())]


def huge_at(ser, t):
    """Huge pages of the last point of SER at or before T (None before any)."""
    h = None
    for p in ser:
        if p["t"] > t:
            break
        h = p["huge"]
    return h


def overhead_info(d, run_id, insts):
    """Where a pmu run's MMU overheads came from, and each instance's last
    measured overhead (1/100 %) as /proc/PID/hawkeye showed it."""
    o = d["overhead"].get(run_id)
    if o is None:
        return {"source": None}, {}
    given = {i["inst"]: i.get("overhead_bp") for i in o.get("inst", [])}
    seen = {}
    for r in insts:
        for p in r["series"]:
            m = (p.get("hawkeye") or {}).get("measured_overhead")
            if m is not None:
                seen[r["inst"]] = m
    info = {"source": o.get("source"), "synthetic": o.get("source") == "synthetic",
            "pmud_status": o.get("pmud_status"), "pmud_message": o.get("pmud_message")}
    return info, {i: seen.get(i, given.get(i)) for i in set(given) | set(seen)}


def summarize_pmu(d):
    """hawkeye-g vs hawkeye-pmu, a random and a sequential workload run
    together: per policy and workload the huge pages over time, the time
    until the random one is fully (and 90 %) promoted, huge pages that went
    to the sequential one (by then and in all), throughput; and the ratios
    between the policies. {} without pmu runs."""
    out = {}
    for pair, pol in runs_of(d, "pmu").items():
        wres = {"policies": {}}
        for p in _sorted_policies(pol):
            rid = pol[p]
            insts = analyse_run(d, rid)
            if not insts:
                continue
            info, measured = overhead_info(d, rid, insts)
            workload = {r["inst"]: d["instances"][rid][r["inst"]].get("workload") for r in insts}
            seq = [r for r in insts if workload[r["inst"]] == "sequential"]
            rnd = [r for r in insts if workload[r["inst"]] != "sequential"]
            if not seq or not rnd:
                continue
            seq, rnd = seq[0], rnd[0]
            full = time_to_coverage(rnd["series"], goal=1.0)
            t_end = max(r["series"][-1]["t"] for r in insts if r["series"])
            per = {}
            for role, r in (("random", rnd), ("sequential", seq)):
                per[role] = {
                    "inst": r["inst"], "workload": workload[r["inst"]],
                    "regions": r["regions"], "seconds": r["seconds"], "work": r["work"],
                    "unit": r["unit"], "rate": r["rate"], "t90": r["t90"],
                    "t_full": (time_to_coverage(r["series"], goal=1.0) or {}).get("t"),
                    "final_huge": r["final_huge"],
                    "measured_overhead_bp": measured.get(r["inst"]),
                    "hawkeye_final": r["hawkeye_final"],
                    "series": [[p_["t"], p_["huge"]] for p_ in r["series"]],
                }
            wres["policies"][p] = {
                "run": rid, "overhead": info, **per,
                "random_t_full": full["t"] if full else None,
                "random_t90": rnd["t90"],
                # Huge pages the sequential one got while the random one
                # still waited for some: the budget hawkeye-pmu saves.
                "sequential_huge_by_random_full": huge_at(seq["series"],
                                                          full["t"] if full else t_end),
                "sequential_huge_final": seq["final_huge"],
                "promotions_total": rnd["promotions_total"],
            }
        g, m = wres["policies"].get("hawkeye-g"), wres["policies"].get("hawkeye-pmu")
        cmp_ = {"t_full_g_over_pmu": None, "lower_bound": False,
                "expected_t_full_ratio": PMU_EXPECTED_RATIO}
        if g and m and m["random_t_full"]:
            if g["random_t_full"] is not None:
                cmp_["t_full_g_over_pmu"] = g["random_t_full"] / m["random_t_full"]
            elif g["random"]["seconds"]:
                # hawkeye-g never got there: its run time is a lower bound.
                cmp_["t_full_g_over_pmu"] = g["random"]["seconds"] / m["random_t_full"]
                cmp_["lower_bound"] = True
        if g and m:
            cmp_["t90_g_over_pmu"] = ratio(g["random_t90"], m["random_t90"])
            for role in ("random", "sequential"):
                cmp_[f"{role}_rate_pmu_over_g"] = ratio(m[role]["rate"], g[role]["rate"])
        wres["comparison"] = cmp_
        wres["note"] = TCG_NOTE
        out[pair] = wres
    return out


def format_pmu(summary, step=10):
    out = ["HawkEye-PMU vs HawkEye-G: a random and a sequential workload together "
           "(t = seconds after the fragmenter let go)"]
    for pair, wr in summary.items():
        for p, r in wr["policies"].items():
            o, pct = r["overhead"], lambda bp: "-" if bp is None else f"{bp / 100:.2f} %"
            if o.get("source") == "synthetic":
                src = (f"MMU overheads SYNTHETIC (hawkeye-pmud exit status "
                       f"{fmt(o['pmud_status'], 'd', 'none: no daemon')}, no PMU)")
            elif o.get("source"):
                src = "MMU overheads measured by hawkeye-pmud"
            else:
                src = "access coverage only, no MMU overheads"
            if o.get("source"):
                src += ": " + ", ".join(f"{role} {pct(r[role]['measured_overhead_bp'])}"
                                        for role in ("random", "sequential"))
            out.append(f"  {p}: {src}")
            out.append(f"    random ({r['random']['workload']}, {r['random']['regions']} regions) "
                       f"fully huge at t={fmt(r['random_t_full'])} s, 90 % at "
                       f"t={fmt(r['random_t90'])} s; huge pages wasted on the sequential "
                       f"one by then: {fmt(r['sequential_huge_by_random_full'], 'd')}, in all "
                       f"{fmt(r['sequential_huge_final'], 'd')} of {r['sequential']['regions']}")
            for role in ("random", "sequential"):
                x = r[role]
                pts = [{"t": q[0], "huge": q[1]} for q in x["series"]]
                ts = range(0, int(max((q["t"] for q in pts), default=0)) + 1, step)
                hs = " ".join(f"{fmt(huge_at(pts, t), 'd'):>3s}" for t in ts)
                out.append(f"    {role:10s} {fmt(x['rate'], ',.0f'):>10s} {x['unit'] or ''}/s; "
                           f"huge pages at t=0,{step},..: {hs}")
        c = wr["comparison"]
        if c["t_full_g_over_pmu"] is not None:
            sign = ">=" if c["lower_bound"] else "="
            out.append(f"  random fully huge: hawkeye-g / hawkeye-pmu {sign} "
                       f"x{c['t_full_g_over_pmu']:.2f} (expected about x{PMU_EXPECTED_RATIO:g})")
        for role in ("random", "sequential"):
            if c.get(f"{role}_rate_pmu_over_g") is not None:
                out.append(f"  {role} throughput hawkeye-pmu / hawkeye-g: "
                           f"x{c[f'{role}_rate_pmu_over_g']:.3f}")
        out.append(f"  Note: {wr['note']}.")
    return "\n".join(out)


def environment(d):
    env = dict(d["env"])
    budgets = {json.dumps(r.get("budget"), sort_keys=True) for r in d["runs"].values()}
    env["budgets"] = [json.loads(b) for b in sorted(budgets)]
    env["unavailable"] = sorted({u["policy"] for u in d["unavailable"]})
    return env


def fmt(v, spec=".1f", none="-"):
    return none if v is None else format(v, spec)


def format_single(summary):
    out = ["Promotion of hot regions (t = seconds after the fragmenter let go; "
           "t90: hot coverage reaches 90 %)"]
    head = (f"  {'workload':9s} {'policy':10s} {'hot':>4s} {'t90 s':>7s} {'prom@90':>7s} "
            f"{'prom/hot':>8s} {'prom tot':>8s} {'final cov':>9s} {'rate/s':>10s} "
            f"{'speedup':>7s} {'ms saved/prom':>13s}")
    out.append(head)
    for w, wr in summary.items():
        for p, r in wr["policies"].items():
            out.append(f"  {w:9s} {p:10s} {fmt(r['hot_regions'], 'd'):>4s} {fmt(r['t90']):>7s} "
                       f"{fmt(r['promotions_to_90'], 'd'):>7s} "
                       f"{fmt(r['promotions_per_hot_region'], '.2f'):>8s} "
                       f"{fmt(r['promotions_total'], 'd'):>8s} "
                       f"{fmt(r['final_coverage'] and 100 * r['final_coverage'], '.0f'):>8s}% "
                       f"{fmt(r['rate'], ',.0f'):>10s} {fmt(r['speedup'], '.3f'):>7s} "
                       f"{fmt(r['time_saved_per_promotion_ms'], '.2f'):>13s}")
        c = wr["comparison"]
        if c.get("t90_linux_over_hawkeye_g") is not None:
            sign = ">=" if c["lower_bound"] else "="
            out.append(f"  {w}: time to 90 % linux / hawkeye-g {sign} "
                       f"x{c['t90_linux_over_hawkeye_g']:.2f} (goal >= x{GOAL_SPEEDUP_T90:g})")
    return "\n".join(out)


def format_fairness(summary):
    out = ["Fairness: three instances started together (seconds to finish the same work)"]
    for w, wr in summary.items():
        for p, r in wr["policies"].items():
            cells = "  ".join(
                f"#{i['inst']} {fmt(i['seconds'])} s"
                + (f" (x{i['speedup']:.2f})" if i["speedup"] else "")
                + f" {fmt(i['final_huge'], 'd')} huge"
                for i in r["instances"])
            out.append(f"  {w:9s} {p:10s} {cells}  spread {fmt(r['completion_spread_s'])} s, "
                       f"max huge-page difference {fmt(r['max_huge_difference'], 'd')}"
                       f" (t={fmt(r['max_huge_difference_t'])})")
    return "\n".join(out)


def pyplot():
    """matplotlib.pyplot with the file backend, or None (no plots) without it."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("promotion_report: no matplotlib: no plots", file=sys.stderr)
        return None
    return plt


def plot(single, fairness, outdir):
    """promotion.png and fairness.png; returns the paths written ([] without
    matplotlib)."""
    plt = pyplot()
    if plt is None:
        return []
    paths = []
    if single:
        fig, axes = plt.subplots(1, len(single), figsize=(6 * len(single), 4), squeeze=False)
        for ax, (w, wr) in zip(axes[0], single.items()):
            ax2 = ax.twinx()
            for p, r in wr["policies"].items():
                ts = [s[0] for s in r["series"]]
                line, = ax.plot(ts, [100 * s[1] for s in r["series"]], label=f"{p} coverage")
                ax2.plot(ts, [s[2] for s in r["series"]], "--", color=line.get_color(),
                         alpha=0.6, label=f"{p} promotions")
            ax.axhline(100 * GOAL_COVERAGE, color="grey", lw=0.5)
            ax.set(title=f"{w}: hot regions that are huge", xlabel="seconds after release",
                   ylabel="hot-set coverage (%)", ylim=(-2, 102))
            ax2.set_ylabel("promotions (dashed)")
            ax.legend(loc="lower right", fontsize="small")
        fig.tight_layout()
        paths.append(os.path.join(outdir, "promotion.png"))
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    if fairness:
        rows = [(w, p, r) for w, wr in fairness.items() for p, r in wr["policies"].items()]
        fig, axes = plt.subplots(1, len(rows), figsize=(5 * len(rows), 4), squeeze=False)
        for ax, (w, p, r) in zip(axes[0], rows):
            for i, ser in r["series"].items():
                ax.plot([s[0] for s in ser], [s[1] for s in ser], label=f"instance {i}")
            ax.set(title=f"{w}, {p}", xlabel="seconds", ylabel="huge pages")
            ax.legend(fontsize="small")
        fig.tight_layout()
        paths.append(os.path.join(outdir, "fairness.png"))
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def plot_pmu(pmu, outdir):
    """pmu.png: huge pages of each workload over time, one panel per policy;
    returns the paths written ([] without matplotlib or pmu runs)."""
    rows = [(pair, p, r) for pair, wr in pmu.items() for p, r in wr["policies"].items()]
    if not rows:
        return []
    plt = pyplot()
    if plt is None:
        return []
    fig, axes = plt.subplots(1, len(rows), figsize=(5.5 * len(rows), 4), squeeze=False,
                             sharex=True, sharey=True)
    for ax, (pair, p, r) in zip(axes[0], rows):
        for role, style in (("random", "-"), ("sequential", "--")):
            x = r[role]
            ax.plot([q[0] for q in x["series"]], [q[1] for q in x["series"]], style,
                    label=f"{role} ({x['workload']}, {x['regions']} regions)")
        if r["random_t_full"] is not None:
            ax.axvline(r["random_t_full"], color="grey", lw=0.5)
        src = r["overhead"].get("source")
        title = p + (" (synthetic MMU overheads)" if src == "synthetic" else
                     " (measured MMU overheads)" if src else "")
        ax.set(title=title, xlabel="seconds after release", ylabel="huge pages")
        ax.legend(fontsize="small", loc="center right")
    fig.tight_layout()
    path = os.path.join(outdir, "pmu.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def plot_order(order, outdir):
    """order.png: xsbench's hot coverage over time per policy, solid when it
    was launched first, dashed when Redis was; [] without matplotlib."""
    if not order:
        return []
    plt = pyplot()
    if plt is None:
        return []
    fig, ax = plt.subplots(figsize=(7, 4))
    for p, res in order.items():
        color = None
        for o, style in zip(ORDERS, ("-", "--")):
            if o in res:
                ser = res[o]["series"]
                line, = ax.plot([s[0] for s in ser], [100 * s[1] for s in ser], style,
                                color=color, label=f"{p}, {o}")
                color = line.get_color()
    ax.set(title="xsbench beside Redis: hot regions that are huge", xlabel="seconds after release",
           ylabel="hot-set coverage (%)", ylim=(-2, 102))
    ax.legend(fontsize="small")
    fig.tight_layout()
    path = os.path.join(outdir, "order.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def write_json(path, obj):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, allow_nan=False)
        f.write("\n")
    print(f"wrote {path}", file=sys.stderr)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("input", nargs="?", default=os.path.join(REPO, "results/raw/promotion.jsonl"))
    p.add_argument("-o", "--output", default=os.path.join(REPO, "results/promotion.json"))
    p.add_argument("--fairness-output", help="default: fairness.json next to -o")
    p.add_argument("--pmu-output", help="default: pmu.json next to -o")
    p.add_argument("--order-output", help="default: order.json next to -o")
    p.add_argument("--plots", help="directory for the PNGs (default: that of -o)")
    p.add_argument("--no-plots", action="store_true")
    a = p.parse_args(argv)
    try:
        with open(a.input) as f:
            d = parse_lines(f)
    except (OSError, ReportError) as e:
        print(f"promotion_report: {e}", file=sys.stderr)
        return 1
    env = environment(d)
    single, fair, pmu = summarize_single(d), summarize_fairness(d), summarize_pmu(d)
    order = summarize_order(d)
    env["thread_cpu"] = summarize_thread_cpu(d)
    if env["unavailable"]:
        print(f"unavailable on this kernel: {', '.join(env['unavailable'])}")
    if single:
        print(format_single(single))
    if fair:
        print(format_fairness(fair))
    if pmu:
        print(format_pmu(pmu))
    if order:
        print(format_order(order))
    outdir = os.path.dirname(os.path.abspath(a.output))
    # Each result file is written only if its experiment ran: an input of
    # pmu runs alone leaves promotion.json and the others as they are.
    if single:
        write_json(a.output, {"benchmark": "promotion", "environment": env, "workloads": single})
    if fair:
        write_json(a.fairness_output or os.path.join(outdir, "fairness.json"),
                   {"benchmark": "fairness", "environment": env, "workloads": fair})
    if order:
        write_json(a.order_output or os.path.join(outdir, "order.json"),
                   {"benchmark": "order", "environment": env, "note": TCG_NOTE,
                    "policies": order})
    if pmu:
        write_json(a.pmu_output or os.path.join(outdir, "pmu.json"),
                   {"benchmark": "pmu", "environment": env, "note": TCG_NOTE, "workloads": pmu})
    if not a.no_plots:
        paths = plot(single, fair, a.plots or outdir) if single or fair else []
        for path in paths + plot_pmu(pmu, a.plots or outdir) + plot_order(order, a.plots or outdir):
            print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
