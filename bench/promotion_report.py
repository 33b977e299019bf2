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
the plotting is pure. The runs' analysis is in promotion_runs.py; the
fairness, pmu and order summaries in promotion_fairness.py,
promotion_pmu.py and promotion_order.py.
"""
import json
import os
import sys

from modeled_tlb import processes_from
from promotion_fairness import format_fairness, plot_fairness, summarize_fairness
from promotion_order import format_order, plot_order, summarize_order
from promotion_pmu import format_pmu, plot_pmu, summarize_pmu
from promotion_runs import (GOAL_COVERAGE, TCG_NOTE, ReportError, analyse_run, counter_for, coverage, fmt,
                            median_index, parse_lines, policy_runs, pyplot, rounds_of, run_rate,
                            save, sorted_policies, time_ratio)
from report_io import arg_parser, median_and_range, ratio, write_json

GOAL_PROMOTIONS_PER_HOT = 1.2   # hawkeye-g: promotions / hot regions to get there
GOAL_SPEEDUP_T90 = 5.0     # linux / hawkeye-g time to 90 %
# A policy's figures given as their median over the rounds.
MEDIAN_KEYS = ("speedup", "t90", "promotions_to_90", "promotions_total",
               "promotions_per_hot_region", "time_saved_per_promotion_ms", "rate",
               "final_coverage", "modeled_speedup", "modeled_mmu_overhead",
               "modeled_saved_per_promotion_mcycles")
# compare_round()'s ratios, given as median and range over the rounds.
RATIO_KEYS = ("t90_linux_over_hawkeye_g", "promotions_per_hot_region",
              "speedup_hawkeye_g_over_linux", "time_saved_per_promotion_hawkeye_g_over_linux",
              "modeled_speedup_hawkeye_g_over_linux",
              "modeled_saved_per_promotion_hawkeye_g_over_linux")


def time_saved(work, seconds, base_rate):
    """Seconds the run saved over base pages: the time the baseline would
    take for the same work, less the time the run took."""
    if work is None or not seconds or not base_rate:
        return None
    return work / base_rate - seconds


def baseline_rate(d, pol):
    """Work per second of the 'none' run of POL ({policy: run id}), or None."""
    insts = d["instances"].get(pol.get("none"), {})
    return run_rate(next(iter(insts.values()))) if insts else None


def modeled_figures(r, base):
    """Under the TLB model: the modeled speedup over the 'none' run's
    instance BASE (the same work in its modeled cycles), the MMU overhead,
    and the modeled cycles saved per promotion (millions)."""
    mo, mb = r.get("modeled") or {}, (base or {}).get("modeled") or {}
    cpo, base_cpo = mo.get("cycles_per_op"), mb.get("cycles_per_op")
    saved = (r["work"] * (base_cpo - cpo) / 1e6 if cpo and base_cpo and r.get("work")
             else None)
    return {"modeled_speedup": ratio(base_cpo, cpo),
            "modeled_mmu_overhead": mo.get("mmu_overhead"),
            "modeled_saved_per_promotion_mcycles": (saved / r["promotions_total"]
                                                    if saved is not None and r["promotions_total"]
                                                    else None),
            "modeled_mmu_intervals": mo.get("intervals")}


def summarize_round(d, pol):
    """One round's figures per policy (POL: {policy: run id})."""
    base = baseline_rate(d, pol)
    base_inst = next(iter(analyse_run(d, pol["none"])), None) if "none" in pol else None
    out = {}
    for p, rid, insts in policy_runs(d, pol):
        r = insts[0]
        saved = time_saved(r["work"], r["seconds"], base)
        frag, rel = d["fragment"].get(rid, {}), d["release"].get(rid, {})
        out[p] = {
            "run": rid,
            "counter": counter_for(d["runs"][rid]),
            **{k: v for k, v in r.items() if k != "series"},
            "promotions_per_hot_region": ratio(r["promotions_to_90"], r["hot_regions"]),
            "speedup": ratio(r["rate"], base),
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
            **modeled_figures(r, base_inst),
        }
    return out


def compare_round(pols):
    """Linux against HawkEye-G in one round's figures (POLS: policy ->
    figures): the ratios the claims are about, each None where a policy
    did not run or a figure is missing."""
    lin, hg = pols.get("linux"), pols.get("hawkeye-g")
    c = {"t90_linux_over_hawkeye_g": None, "lower_bound": False,
         "promotions_per_hot_region": (hg or {}).get("promotions_per_hot_region"),
         "speedup_hawkeye_g_over_linux": None,
         "time_saved_per_promotion_hawkeye_g_over_linux": None,
         "modeled_speedup_hawkeye_g_over_linux": None,
         "modeled_saved_per_promotion_hawkeye_g_over_linux": None}
    if lin and hg:
        if hg["t90"]:
            c["t90_linux_over_hawkeye_g"], c["lower_bound"] = time_ratio(
                lin["t90"], lin["seconds"], hg["t90"])
        c["speedup_hawkeye_g_over_linux"] = ratio(hg["speedup"], lin["speedup"])
        c["modeled_speedup_hawkeye_g_over_linux"] = ratio(hg["modeled_speedup"],
                                                          lin["modeled_speedup"])
        for key, fig in (("time_saved_per_promotion_hawkeye_g_over_linux",
                          "time_saved_per_promotion_ms"),
                         ("modeled_saved_per_promotion_hawkeye_g_over_linux",
                          "modeled_saved_per_promotion_mcycles")):
            saved = hg[fig], lin[fig]
            # A run that lost time against base pages saved nothing to compare.
            if all(s is not None and s > 0 for s in saved):
                c[key] = ratio(*saved)
    return c


def summarize_single(d):
    """Figures per workload and policy over the interleaved rounds, and the
    Linux vs HawkEye-G comparison: each ratio paired within a round, then
    its median and range over the rounds. A policy's figures are its
    medians, with every round's value under "rounds"; its series (the
    plot) is that of the round whose t90 ratio is the median."""
    out = {}
    for w, rounds in rounds_of(d, "single").items():
        # The rounds that have runs, with their numbers (a cut-short one has none).
        kept = [(k + 1, pols) for k, pols in enumerate(summarize_round(d, pol) for pol in rounds)
                if pols]
        numbers, per = [k for k, _ in kept], [pols for _, pols in kept]
        cmps = [compare_round(pols) for pols in per]
        shown = median_index([c["t90_linux_over_hawkeye_g"] for c in cmps])
        policies = {}
        for p in sorted_policies({p for pols in per for p in pols}):
            runs = [pols[p] for pols in per if p in pols]
            fig = dict(per[shown].get(p) or runs[0])
            # Round by round, None where this policy has no run: the
            # policies' lists pair by index.
            fig["rounds"] = {k: [(pols.get(p) or {}).get(k) for pols in per]
                             for k in MEDIAN_KEYS}
            for k in MEDIAN_KEYS:
                fig[k] = median_and_range(fig["rounds"][k])[0]
            policies[p] = fig
        cmp_ = {"rounds": len(per), "round_shown": numbers[shown] if per else None,
                "lower_bound": any(c["lower_bound"] for c in cmps)}
        for k in RATIO_KEYS:
            cmp_[k], cmp_[k + "_range"] = median_and_range(c[k] for c in cmps)
        if "hawkeye-g" in policies:
            cmp_["goal_promotions_per_hot_region"] = GOAL_PROMOTIONS_PER_HOT
            cmp_["met_promotions_per_hot_region"] = (
                cmp_["promotions_per_hot_region"] is not None
                and cmp_["promotions_per_hot_region"] <= GOAL_PROMOTIONS_PER_HOT)
        if cmp_["t90_linux_over_hawkeye_g"] is not None:
            cmp_["goal_t90_ratio"] = GOAL_SPEEDUP_T90
            cmp_["met_t90_ratio"] = cmp_["t90_linux_over_hawkeye_g"] >= GOAL_SPEEDUP_T90
        out[w] = {"policies": policies, "comparison": cmp_, "rounds": cmps}
    return out


def summarize_thread_cpu(d):
    """CPU seconds of the memory-management threads per run."""
    return [{"run": rid, "experiment": d["runs"].get(rid, {}).get("experiment"),
             "workload": d["runs"].get(rid, {}).get("workload"), "config": o.get("config"),
             "seconds": o.get("seconds"), "threads": o.get("threads")}
            for rid, o in sorted(d["thread_cpu"].items())]


def environment(d):
    env = dict(d["env"])
    budgets = {json.dumps(r.get("budget"), sort_keys=True) for r in d["runs"].values()}
    env["budgets"] = [json.loads(b) for b in sorted(budgets)]
    env["unavailable"] = sorted({u["policy"] for u in d["unavailable"]})
    return env


def format_single(summary):
    out = ["Promotion of hot regions (t = seconds after the fragmenter let go; "
           "t90: hot coverage reaches 90 %; medians over the rounds)"]
    head = (f"  {'workload':9s} {'policy':10s} {'hot':>4s} {'t90 s':>7s} {'prom@90':>7s} "
            f"{'prom/hot':>8s} {'prom tot':>8s} {'final cov':>9s} {'rate/s':>10s} "
            f"{'speedup':>7s} {'ms saved/prom':>13s}")
    out.append(head)
    for w, wr in summary.items():
        for p, r in wr["policies"].items():
            out.append(f"  {w:9s} {p:10s} {fmt(r['hot_regions'], 'd'):>4s} {fmt(r['t90']):>7s} "
                       f"{fmt(r['promotions_to_90'], 'g'):>7s} "
                       f"{fmt(r['promotions_per_hot_region'], '.2f'):>8s} "
                       f"{fmt(r['promotions_total'], 'g'):>8s} "
                       f"{fmt(r['final_coverage'] and 100 * r['final_coverage'], '.0f'):>8s}% "
                       f"{fmt(r['rate'], ',.0f'):>10s} {fmt(r['speedup'], '.3f'):>7s} "
                       f"{fmt(r['time_saved_per_promotion_ms'], '.2f'):>13s}")
            if r.get("modeled_speedup") is not None or r.get("modeled_mmu_overhead") is not None:
                out.append(f"  {'':9s} {'':10s} modeled: speedup {fmt(r['modeled_speedup'], '.3f')}, "
                           f"MMU overhead {fmt(100 * (r['modeled_mmu_overhead'] or 0), '.2f')} %, "
                           f"{fmt(r['modeled_saved_per_promotion_mcycles'], '.2f')} M cycles "
                           "saved per promotion")
        c = wr["comparison"]
        for k, what in (("modeled_speedup_hawkeye_g_over_linux", "modeled speedup"),
                        ("modeled_saved_per_promotion_hawkeye_g_over_linux",
                         "modeled cycles saved per promotion")):
            if c.get(k) is not None:
                lo, hi = c[k + "_range"]
                out.append(f"  {w}: {what} hawkeye-g / linux x{c[k]:.2f} "
                           f"(x{lo:.2f}-x{hi:.2f} over {c['rounds']} rounds)")
        if c.get("t90_linux_over_hawkeye_g") is not None:
            sign = ">=" if c["lower_bound"] else "="
            lo, hi = c["t90_linux_over_hawkeye_g_range"]
            out.append(f"  {w}: time to 90 % linux / hawkeye-g {sign} "
                       f"x{c['t90_linux_over_hawkeye_g']:.2f} (x{lo:.2f}-x{hi:.2f} over "
                       f"{c['rounds']} rounds; goal >= x{GOAL_SPEEDUP_T90:g})")
    return "\n".join(out)


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
            c = wr["comparison"]
            shown = (f" (round {c['round_shown']} of {c['rounds']}: median t90 ratio)"
                     if c["rounds"] > 1 else "")
            ax.set(title=f"{w}: hot regions that are huge{shown}", xlabel="seconds after release",
                   ylabel="hot-set coverage (%)", ylim=(-2, 102))
            ax2.set_ylabel("promotions (dashed)")
            ax.legend(loc="lower right", fontsize="small")
        paths.append(save(plt, fig, outdir, "promotion.png"))
    if fairness:
        paths.append(plot_fairness(plt, fairness, outdir))
    return paths


def main(argv):
    p = arg_parser(__doc__, "promotion")
    p.add_argument("--fairness-output", help="default: fairness.json next to -o")
    p.add_argument("--pmu-output", help="default: pmu.json next to -o")
    p.add_argument("--order-output", help="default: order.json next to -o")
    p.add_argument("--plots", help="directory for the PNGs (default: that of -o)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--model", metavar="RAW",
                   help="the TLB model's counters of the same boot: modeled cycles and MMU "
                        "overheads per instance (with --cpi)")
    p.add_argument("--cpi", type=float, help="the model's calibrated base CPI")
    a = p.parse_args(argv)
    if bool(a.model) != bool(a.cpi):
        p.error("--model and --cpi go together")
    try:
        with open(a.input) as f:
            d = parse_lines(f)
        d["modeled"] = processes_from(a.model, a.cpi) if a.model else {}
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
