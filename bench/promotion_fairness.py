"""Fairness between three identical instances started together (the
paper's Table 5 and Figure 7): promotion_report.py's fairness.json, its
text and fairness.png, from the runs of bench/promotion.sh -x fairness.
"""
from promotion_runs import (analyse_run, fmt, inst_start, median_index, over_rounds, policy_runs,
                            rounds_of, save)
from report_io import ratio

COMPARED = ("mean_seconds_linux_over_hawkeye_g", "max_huge_difference_linux",
            "max_huge_difference_hawkeye_g", "modeled_mean_linux_over_hawkeye_g",
            "modeled_spread_linux", "modeled_spread_hawkeye_g")


def modeled_cpo(r):
    """The model's cycles per unit of an instance's work, or None."""
    return (r.get("modeled") or {}).get("cycles_per_op") or None


def all_or_none(values):
    """VALUES if none is missing, else None: a comparison of the instances
    holds for all of them or for none."""
    return values if values and None not in values else None


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


def fairness_round(d, pol):
    """One round's figures per policy (POL: {policy: run id}): per-instance
    completion times (and speedups over the round's 'none' run's same
    instance), their spread, and the largest difference in huge pages
    between instances."""
    out = {}
    base, base_cpo = {}, {}
    if "none" in pol:
        base = {r["inst"]: r["seconds"] for r in analyse_run(d, pol["none"])}
        base_cpo = {r["inst"]: modeled_cpo(r) for r in analyse_run(d, pol["none"])}
    for p, rid, insts in policy_runs(d, pol):
        # One time axis for the run: from the earliest instance start.
        starts = {r["inst"]: inst_start(d, rid, r["inst"]) for r in insts}
        t_run0 = min(starts.values())
        per = {}
        for r in insts:
            off = starts[r["inst"]] - t_run0
            per[r["inst"]] = [dict(p_, t_run=round(p_["t"] + off, 1)) for p_ in r["series"]]
        diff, at = max_huge_difference(per)
        secs = [r["seconds"] for r in insts if r["seconds"] is not None]
        # Modeled speed: cycles per unit of work (an instance stopped by -d
        # did less work than the others).
        cpo = all_or_none([modeled_cpo(r) for r in insts])
        out[p] = {
            "run": rid,
            "instances": [{
                "inst": r["inst"], "seconds": r["seconds"], "work": r["work"],
                "rate": r["rate"], "t90": r["t90"], "final_huge": r["final_huge"],
                "hot_regions": r["hot_regions"], "regions": r["regions"],
                "speedup": ratio(base.get(r["inst"]), r["seconds"]),
                "hawkeye_final": r["hawkeye_final"],
                # Under the TLB model: the same, in modeled time.
                "modeled_cycles_per_op": modeled_cpo(r),
                "modeled_speedup": ratio(base_cpo.get(r["inst"]), modeled_cpo(r)),
                "modeled_mmu_overhead": (r.get("modeled") or {}).get("mmu_overhead"),
            } for r in insts],
            "modeled_mean_cycles_per_op": sum(cpo) / len(cpo) if cpo else None,
            # Slowest / fastest instance in modeled time: 1 is fair.
            "modeled_spread": max(cpo) / min(cpo) if cpo else None,
            "mean_seconds": sum(secs) / len(secs) if secs else None,
            "completion_spread_s": max(secs) - min(secs) if secs else None,
            "max_huge_difference": diff,
            "max_huge_difference_t": at,
            "series": {str(i): [[p_["t_run"], p_["huge"], p_["hot_huge"]] for p_ in ser]
                       for i, ser in per.items()},
        }
    return out


def summarize_fairness(d):
    """Per workload over the interleaved rounds: the policies' figures of
    the round whose Linux / HawkEye-G mean time is the median, and the
    comparison's median, range and per-round values (COMPARED)."""
    out = {}
    for w, rounds in rounds_of(d, "fairness").items():
        per = [r for r in (fairness_round(d, pol) for pol in rounds) if r]
        if not per:
            continue
        figs = []
        for pols in per:
            lin, hg = pols.get("linux") or {}, pols.get("hawkeye-g") or {}
            figs.append({"mean_seconds_linux_over_hawkeye_g":
                         ratio(lin.get("mean_seconds"), hg.get("mean_seconds")),
                         "max_huge_difference_linux": lin.get("max_huge_difference"),
                         "max_huge_difference_hawkeye_g": hg.get("max_huge_difference"),
                         "modeled_mean_linux_over_hawkeye_g":
                         ratio(lin.get("modeled_mean_cycles_per_op"),
                               hg.get("modeled_mean_cycles_per_op")),
                         "modeled_spread_linux": lin.get("modeled_spread"),
                         "modeled_spread_hawkeye_g": hg.get("modeled_spread")})
        shown = median_index([f["mean_seconds_linux_over_hawkeye_g"] for f in figs])
        out[w] = {"policies": per[shown],
                  "comparison": dict(over_rounds(figs, COMPARED), round_shown=shown + 1)}
    return out


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
            if r.get("modeled_mean_cycles_per_op"):
                cells = "  ".join(f"#{i['inst']} {fmt(i['modeled_cycles_per_op'], ',.0f')}"
                                  + (f" (x{i['modeled_speedup']:.3f})" if i["modeled_speedup"]
                                     else "")
                                  for i in r["instances"])
                out.append(f"  {'':9s} {'':10s} modeled cycles per unit of work: {cells}  "
                           f"slowest / fastest x{r['modeled_spread']:.3f}")
        c = wr["comparison"]
        if c["rounds"] > 1:
            gaps = ", ".join(f"{p} {c['per_round'][f'max_huge_difference_{k}']}"
                             for p, k in (("linux", "linux"), ("hawkeye-g", "hawkeye_g")))
            out.append(f"  {w}: round {c['round_shown']} of {c['rounds']} shown; max huge-page "
                       f"difference per round: {gaps}")
        if c.get("mean_seconds_linux_over_hawkeye_g") is not None:
            lo, hi = c["mean_seconds_linux_over_hawkeye_g_range"]
            out.append(f"  {w}: mean time linux / hawkeye-g "
                       f"x{c['mean_seconds_linux_over_hawkeye_g']:.2f} (x{lo:.2f}-x{hi:.2f})")
        if c.get("modeled_mean_linux_over_hawkeye_g") is not None:
            out.append(f"  {w}: mean modeled time per unit of work linux / hawkeye-g "
                       f"x{c['modeled_mean_linux_over_hawkeye_g']:.3f}")
    return "\n".join(out)


def plot_fairness(plt, fairness, outdir):
    """fairness.png: huge pages per instance over time, a panel per
    workload and policy; returns its path."""
    rows = [(w, p, r) for w, wr in fairness.items() for p, r in wr["policies"].items()]
    fig, axes = plt.subplots(1, len(rows), figsize=(5 * len(rows), 4), squeeze=False)
    for ax, (w, p, r) in zip(axes[0], rows):
        for i, ser in r["series"].items():
            ax.plot([s[0] for s in ser], [s[1] for s in ser], label=f"instance {i}")
        ax.set(title=f"{w}, {p}", xlabel="seconds", ylabel="huge pages")
        ax.legend(fontsize="small")
    return save(plt, fig, outdir, "fairness.png")
