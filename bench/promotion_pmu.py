"""HawkEye-G against HawkEye-PMU (the paper's Table 9): promotion_report.py's
pmu.json, its text and pmu.png, from the runs of bench/promotion.sh -x pmu,
a TLB-sensitive (random) and a TLB-insensitive (sequential) workload run
together.
"""
from promotion_runs import (TCG_NOTE, fmt, median_index, modeled_text, over_rounds, policy_runs,
                            pyplot,
                            rounds_of, save, time_ratio, time_to_coverage)
from report_io import ratio

PMU_EXPECTED_RATIO = 2.0   # hawkeye-g / hawkeye-pmu time to promote the random one
# The comparison's ratios given as median and range over the rounds.
PMU_COMPARED = ("t_full_g_over_pmu", "t90_g_over_pmu", "random_rate_pmu_over_g",
                "sequential_rate_pmu_over_g", "random_modeled_speedup",
                "sequential_modeled_speedup")


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
            "pmud_status": o.get("pmud_status"), "pmud_message": o.get("pmud_message"),
            "daemon_exit": o.get("daemon_exit")}
    return info, {i: seen.get(i, given.get(i)) for i in set(given) | set(seen)}


def pmu_round(d, pol):
    """hawkeye-g vs hawkeye-pmu in one round (POL: {policy: run id}), a
    random and a sequential workload run together: per policy the huge
    pages over time, the time until the random one is fully (and 90 %)
    promoted, huge pages that went to the sequential one (by then and in
    all), throughput; and the ratios between the policies."""
    wres = {"policies": {}}
    for p, rid, insts in policy_runs(d, pol):
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
                "modeled": r["modeled"],
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
        cmp_["t_full_g_over_pmu"], cmp_["lower_bound"] = time_ratio(
            g["random_t_full"], g["random"]["seconds"], m["random_t_full"])
    if g and m:
        cmp_["t90_g_over_pmu"] = ratio(g["random_t90"], m["random_t90"])
        for role in ("random", "sequential"):
            cmp_[f"{role}_rate_pmu_over_g"] = ratio(m[role]["rate"], g[role]["rate"])
            # The model's time for the same work: hawkeye-pmu's speedup.
            if g[role]["modeled"] and m[role]["modeled"]:
                cmp_[f"{role}_modeled_speedup"] = ratio(g[role]["modeled"]["cycles_per_op"],
                                                        m[role]["modeled"]["cycles_per_op"])
    wres["comparison"] = cmp_
    wres["note"] = TCG_NOTE
    return wres


def summarize_pmu(d):
    """pmu_round() per pair of workloads over the interleaved rounds: the
    round whose hawkeye-g / hawkeye-pmu time to promote the random one
    fully is the median, with the ratios' medians, ranges and per-round
    values in its comparison. {} without pmu runs."""
    out = {}
    for pair, rounds in rounds_of(d, "pmu").items():
        per = [w for w in (pmu_round(d, pol) for pol in rounds) if w["policies"]]
        if not per:
            continue
        cmps = [w["comparison"] for w in per]
        shown = median_index([c["t_full_g_over_pmu"] for c in cmps])
        out[pair] = per[shown]
        out[pair]["comparison"] = dict(cmps[shown], **over_rounds(cmps, PMU_COMPARED),
                                       lower_bound=any(c["lower_bound"] for c in cmps),
                                       round_shown=shown + 1)
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
            elif o.get("source") == "modeled":
                src = "MMU overheads MODELED (hawkeye-pmud --model: the TLB model's counters)"
            elif o.get("source"):
                src = "MMU overheads measured by hawkeye-pmud"
            else:
                src = "access coverage only, no MMU overheads"
            if o.get("daemon_exit"):
                src += f" [hawkeye-pmud stopped during the run: status {o['daemon_exit']}]"
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
                if x.get("modeled"):
                    out.append("      " + modeled_text(x["modeled"],
                                                     (x["unit"] or "op").rstrip("s"), step))
        c = wr["comparison"]
        if c["t_full_g_over_pmu"] is not None:
            sign = ">=" if c["lower_bound"] else "="
            lo, hi = c.get("t_full_g_over_pmu_range") or (None, None)
            spread = (f"x{lo:.2f}-x{hi:.2f} over {c['rounds']} rounds, "
                      if c.get("rounds", 1) > 1 else "")
            out.append(f"  random fully huge: hawkeye-g / hawkeye-pmu {sign} "
                       f"x{c['t_full_g_over_pmu']:.2f} ({spread}expected about "
                       f"x{PMU_EXPECTED_RATIO:g})")
        for role in ("random", "sequential"):
            if c.get(f"{role}_rate_pmu_over_g") is not None:
                out.append(f"  {role} throughput hawkeye-pmu / hawkeye-g: "
                           f"x{c[f'{role}_rate_pmu_over_g']:.3f}")
        for role in ("random", "sequential"):
            v = c.get(f"{role}_modeled_speedup")
            if v is not None:
                lo, hi = c.get(f"{role}_modeled_speedup_range") or (v, v)
                out.append(f"  {role}, modeled time for the same work: hawkeye-g / hawkeye-pmu "
                           f"= x{v:.3f}" + (f" (x{lo:.3f}-x{hi:.3f} over {c['rounds']} rounds)"
                                            if c.get("rounds", 1) > 1 else ""))
        out.append(f"  Note: {wr['note']}.")
    return "\n".join(out)


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
        title = p + {"synthetic": " (synthetic MMU overheads)", "modeled": " (modeled MMU overheads)",
                     None: ""}.get(src, " (measured MMU overheads)")
        ax.set(title=title, xlabel="seconds after release", ylabel="huge pages")
        ax.legend(fontsize="small", loc="center right")
    return [save(plt, fig, outdir, "pmu.png")]
