#!/usr/bin/env python3
"""Summarise bench/sampling.sh output: HawkEye's costs as memory grows.

  bench/sampling_report.py [INPUT.jsonl] [-o results/sampling.json] [--plot results/sampling.png]

Per point (working set, processes, hot percent): each thread's CPU share,
the promotion thread's CPU per pass, per GiB and per process, its
mmap_lock holds and walks, the access_maps' memory. Then the curve's
shape, against our goals: the promotion thread under 1 % of one CPU
at 16 GiB (default periods), no super-linear term (CPU per GiB and per
pass at the largest working set within 1.25x of the smallest, for each
process count), lock holds bounded (p99 at the largest working set within
2x of the smallest). The shape and the goals are those of the worst case,
the whole working set hot; the 1 % goal is also given for the points with
part of it hot, and for the worst case on hardware, estimated: divided by
how much slower TCG runs the pass's inner loop than the host
(bench/pteloop's lines, "where" host and guest).
"""
import os
import statistics
import sys

from report_io import REPO, arg_parser, json_lines, ratio, write_json

GOAL_PCT = 1.0		# of one CPU, at the largest working set
GOAL_LINEAR = 1.25	# CPU per GiB, largest over smallest working set
GOAL_HOLD = 2.0		# lock hold p99, largest over smallest working set


def summarize(lines):
    pts = []
    for _, d in lines:
        if d.get("type") != "sampling" or "processes" not in d:
            continue
        gib = d["working_set_mib"] / 1024
        gib = int(gib) if gib.is_integer() else gib
        cpu = d["thread_cpu_s"]
        walks = d.get("walks_s") or []
        pts.append({
            "gib": gib, "processes": d["processes"], "hot_pct": d.get("hot_pct", 100),
            "seconds": d["seconds"],
            "passes": d["passes"], "regions": d["regions"],
            "regions_per_pass": ratio(d["regions_sampled"], d["passes"]),
            "pct_of_one_cpu": d["pct_of_one_cpu"],
            "threads_pct": {n: round(100 * t / d["seconds"], 3)
                            for n, t in sorted(d["threads"].items())},
            "cpu_per_pass_s": d["cpu_per_pass_s"],
            "cpu_per_pass_per_gib_ms": 1000 * d["cpu_per_pass_s"] / gib,
            "cpu_per_pass_per_process_ms": 1000 * d["cpu_per_pass_s"] / d["processes"],
            "lock_holds": d["lock_holds"],
            "lock_hold_p99_us": d["lock_hold_p99_us"],
            "lock_hold_max_us": d["lock_hold_max_us"],
            "walk_median_s": statistics.median(walks) if walks else None,
            "walk_max_s": max(walks) if walks else None,
            "access_map_kib": d["access_map_bytes"] / 1024,
            "access_map_bytes_per_gib": d["access_map_bytes"] / gib,
        })
    pts.sort(key=lambda p: (-p["hot_pct"], p["processes"], p["gib"]))
    env = next((d for _, d in lines if d.get("type") == "sampling"), {})
    worst = [p for p in pts if p["hot_pct"] == 100]
    shape = {}
    for n in sorted({p["processes"] for p in worst}):
        row = [p for p in worst if p["processes"] == n]
        lo, hi = row[0], row[-1]
        if lo["gib"] == hi["gib"]:
            continue
        shape[str(n)] = {
            "gib": [lo["gib"], hi["gib"]],
            "per_gib_ratio": ratio(hi["cpu_per_pass_per_gib_ms"], lo["cpu_per_pass_per_gib_ms"]),
            "hold_p99_ratio": ratio(hi["lock_hold_p99_us"], lo["lock_hold_p99_us"]),
        }
    top = max((p["gib"] for p in pts), default=None)

    def pct_at_top(row):
        ours = max((p["pct_of_one_cpu"] for p in row if p["gib"] == top), default=None)
        return {"gib": top, "ours": ours, "goal": GOAL_PCT,
                "met": ours is not None and ours <= GOAL_PCT}

    goals = {
        "pct_at_largest": pct_at_top(worst),
        "linear": {"ours": max((s["per_gib_ratio"] or 0 for s in shape.values()), default=None),
                   "goal": GOAL_LINEAR},
        "holds_bounded": {"ours": max((s["hold_p99_ratio"] or 0 for s in shape.values()), default=None),
                          "goal": GOAL_HOLD},
    }
    for k in ("linear", "holds_bounded"):
        goals[k]["met"] = goals[k]["ours"] is not None and goals[k]["ours"] <= goals[k]["goal"]
    for h in sorted({p["hot_pct"] for p in pts} - {100}, reverse=True):
        goals[f"pct_at_largest_{h}_pct_hot"] = dict(
            pct_at_top([p for p in pts if p["hot_pct"] == h]), hot_pct=h)
    # bench/pteloop: the pass's inner loop on the host and under TCG.
    loops = {d.get("where"): d for _, d in lines if d.get("type") == "pteloop"}
    tcg = None
    if {"host", "guest"} <= loops.keys():
        ns = {w: loops[w]["open_ns_per_entry"] + loops[w]["count_ns_per_entry"]
              for w in ("host", "guest")}
        tcg = {"host_ns_per_entry": ns["host"], "guest_ns_per_entry": ns["guest"],
               "factor": ratio(ns["guest"], ns["host"])}
        # The byte work of zerod (zero) and debloatd (scan), per 4 KB page.
        for k in ("zero", "scan"):
            h, g = (loops[w].get(f"{k}_ns_per_page") for w in ("host", "guest"))
            if h and g:
                tcg[k] = {"host_ns_per_page": h, "guest_ns_per_page": g, "factor": ratio(g, h)}
        ours = goals["pct_at_largest"]["ours"]
        est = ours / tcg["factor"] if ours is not None and tcg["factor"] else None
        goals["pct_at_largest_native_estimate"] = {
            "gib": top, "ours": est, "goal": GOAL_PCT, "met": est is not None and est <= GOAL_PCT,
            "tcg_factor": tcg["factor"]}
    return {"environment": {k: env.get(k) for k in ("kernel", "flavour", "scan_period_ms",
                                                    "sample_window_ms")},
            "points": pts, "shape": shape, "goals": goals, "tcg": tcg}


def format_text(s):
    out = ["HawkEye's costs as memory grows (hawkeye_promoted: CPU, mmap_lock holds, access_maps)",
           f"  {'GiB':>4} {'procs':>5} {'hot%':>4} {'%CPU':>7} {'CPU/pass':>9} {'ms/GiB':>7} {'holds':>6} "
           f"{'p99 us':>7} {'max us':>8} {'walk s':>7} {'map KiB':>8}"]
    for p in s["points"]:
        out.append(f"  {p['gib']:4.0f} {p['processes']:5d} {p['hot_pct']:4d} {p['pct_of_one_cpu']:7.3f} "
                   f"{p['cpu_per_pass_s']:9.3f} {p['cpu_per_pass_per_gib_ms']:7.1f} {p['lock_holds']:6d} "
                   f"{p['lock_hold_p99_us'] or 0:7.0f} {p['lock_hold_max_us'] or 0:8.0f} "
                   f"{p['walk_median_s'] or 0:7.2f} {p['access_map_kib']:8.0f}")
    for k, g in s["goals"].items():
        out.append(f"  goal {k}: ours {g['ours']}, goal {g['goal']}: {'met' if g['met'] else 'not met'}")
    return "\n".join(out)


def plot(s, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for h in sorted({p["hot_pct"] for p in s["points"]}, reverse=True):
        for n in sorted({p["processes"] for p in s["points"] if p["hot_pct"] == h}):
            row = [p for p in s["points"] if p["processes"] == n and p["hot_pct"] == h]
            a.plot([p["gib"] for p in row], [p["pct_of_one_cpu"] for p in row],
                   "o-" if h == 100 else "s--", label=f"{n} processes, {h} % hot")
    for n in sorted({p["processes"] for p in s["points"]}):
        row = [p for p in s["points"] if p["processes"] == n and p["hot_pct"] == 100]
        x = [p["gib"] for p in row]
        b.plot(x, [p["lock_hold_p99_us"] for p in row], "o-", label=f"{n} processes, p99")
        b.plot(x, [p["lock_hold_max_us"] for p in row], "x:", label=f"{n} processes, max")
    a.axhline(GOAL_PCT, color="grey", lw=0.8, ls="--", label="goal")
    a.set(xscale="log", xlabel="working set (GiB)", ylabel="hawkeye_promoted, % of one CPU",
          title="sampling CPU (default periods)")
    b.set(xscale="log", yscale="log", xlabel="working set (GiB)", ylabel="mmap_lock hold (µs)",
          title="hawkeye_promoted's mmap_lock holds")
    for ax in (a, b):
        ax.set_xticks([p["gib"] for p in s["points"]], minor=False)
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv):
    p = arg_parser(__doc__, "sampling")
    p.add_argument("--plot", default=os.path.join(REPO, "results/sampling.png"))
    a = p.parse_args(argv)
    with open(a.input) as f:
        s = summarize(list(json_lines(f)))
    print(format_text(s))
    write_json(a.output, s)
    if a.plot:
        plot(s, a.plot)
        print(f"plot: {a.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
