"""The launch order experiment (the paper's Figure 8 in miniature):
promotion_report.py's order.json, its text and order.png, from the runs of
bench/promotion.sh -x order, xsbench launched before or after a lightly
loaded Redis.
"""
from promotion_runs import (TCG_NOTE, analyse_run, coverage, fmt, median_index, modeled_text,
                            over_rounds, pyplot, rounds_of, save, sorted_policies)
from report_io import ratio

ORDERS = ("workload-first", "redis-first")
EFFECT = "t90_redis_first_over_workload_first"
# Under the TLB model: xsbench's modeled time per lookup, redis-first over
# workload-first (how much launching second costs it).
MODELED_EFFECT = "modeled_redis_first_over_workload_first"


def order_round(d, runs):
    """One round's figures: per policy and launch order (RUNS: {policy:
    {order: run id}}) xsbench's speedup over the round's 'none' run, time
    until 90 % of its hot regions are huge, its huge pages and Redis's at
    the end; and per policy how much the launch order changed that time
    (redis-first / workload-first)."""
    base = None
    if "none" in runs:
        ins = analyse_run(d, next(iter(runs["none"].values())))
        base = ins[0]["rate"] if ins else None
    out = {}
    for p in sorted_policies(runs):
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
                "modeled": r["modeled"],
            }
        if p != "none" and len(res) == 2:
            res[EFFECT] = ratio(res[ORDERS[1]]["t90"], res[ORDERS[0]]["t90"])
            mo = [(res[o]["modeled"] or {}).get("cycles_per_op") for o in ORDERS]
            res[MODELED_EFFECT] = ratio(mo[1], mo[0]) if all(mo) else None
        if res:
            out[p] = res
    return out


def summarize_order(d):
    """Figure 8 over the interleaved rounds: per policy the round whose
    launch-order effect is the median (its figures and series), with the
    effect's median and range, and every round's t90s and speedups."""
    rounds = rounds_of(d, "order", key=lambda r: (r["policy"], r.get("order") or ORDERS[0]))
    per = []
    for keyed in rounds.get("xsbench", []):
        runs = {}
        for (p, order), rid in keyed.items():
            runs.setdefault(p, {})[order] = rid
        per.append(order_round(d, runs))
    per = [r for r in per if r]
    out = {}
    for p in sorted_policies({p for r in per for p in r}):
        res = [r[p] for r in per if p in r]
        figs = [{EFFECT: x.get(EFFECT), MODELED_EFFECT: x.get(MODELED_EFFECT),
                 "speedup": x.get(ORDERS[0], {}).get("speedup"),
                 **{f"t90_{o}": x.get(o, {}).get("t90") for o in ORDERS},
                 **{f"speedup_{o}": x.get(o, {}).get("speedup") for o in ORDERS}} for x in res]
        shown = median_index([f[EFFECT] if f[EFFECT] is not None else f["speedup"] for f in figs])
        rounds = over_rounds(figs, [EFFECT, MODELED_EFFECT] + [f"{k}_{o}" for k in ("t90", "speedup")
                                                               for o in ORDERS])
        out[p] = dict(res[shown], over_rounds=dict(rounds, round_shown=shown + 1))
        for k in (EFFECT, MODELED_EFFECT):
            if rounds[k] is not None:
                out[p][k] = rounds[k]
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
            if r.get("modeled"):
                out.append(f"  {'':12s} {modeled_text(r['modeled'], 'lookup')}")
        if res.get(EFFECT) is not None:
            rounds = res["over_rounds"]
            lo, hi = rounds[EFFECT + "_range"]
            spread = (f" (x{lo:.2f}-x{hi:.2f} over {rounds['rounds']} rounds; round "
                      f"{rounds['round_shown']} shown)" if rounds["rounds"] > 1 else "")
            out.append(f"  {p:12s} launch order effect on t90 (redis-first / workload-first): "
                       f"x{res[EFFECT]:.2f}{spread}")
        if res.get(MODELED_EFFECT) is not None:
            out.append(f"  {p:12s} launch order effect on modeled time per lookup "
                       f"(redis-first / workload-first): x{res[MODELED_EFFECT]:.3f}")
    out.append(f"  Note: {TCG_NOTE}.")
    return "\n".join(out)


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
    return [save(plt, fig, outdir, "order.png")]
