"""bench/promotion.sh's JSON lines grouped by run, and each run's instances
analysed (hot-set coverage over time, time to 90 %, promotions): what the
promotion, fairness, order and pmu summaries of promotion_report.py all
start from, and the plotting helpers they share. Every function but
pyplot() and save() is pure.
"""
import os
import sys

from report_io import ReportError, json_lines, median_and_range, ratio

GOAL_COVERAGE = 0.9        # "covered": >= 90 % of the hot regions are huge
# The /proc/vmstat counter that counts a policy's promotions.
PROMOTION_COUNTER = {"linux": "thp_collapse_alloc", "none": "thp_collapse_alloc",
                     "hawkeye-g": "hawkeye_promote_success",
                     "hawkeye-pmu": "hawkeye_promote_success",
                     "ingens": "hawkeye_promote_success",
                     "freebsd": "hawkeye_promote_success"}
POLICY_ORDER = ["none", "linux", "ingens", "freebsd", "hawkeye-g", "hawkeye-pmu"]
TCG_NOTE = ("TCG does not model the TLB: throughput differences between the policies "
            "are QEMU's software page walks, not the hardware's MMU overhead")


def parse_lines(lines):
    """Group the JSON lines by kind and run:
    {"env", "runs": {id: run}, "unavailable": [..], "samples": {id: [..]},
     "progress": {id: {inst: [..]}}, "instances": {id: {inst: ..}},
     "fragment": {id: ..}, "release": {id: ..}, "overhead": {id: ..}}."""
    d = {"env": {}, "runs": {}, "unavailable": [], "samples": {}, "progress": {},
         "instances": {}, "fragment": {}, "release": {}, "overhead": {},
         "companion": {}, "companion_op": {}, "thread_cpu": {}}
    for n, o in json_lines(lines):
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
            d["overhead"][run] = dict(d["overhead"].get(run, {}), **o)
        elif kind == "pmud_exit":
            # The measuring daemon's status at the end of the run (0: it
            # was still running).
            d["overhead"].setdefault(run, {})["daemon_exit"] = o["status"]
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


def start_mono(inst, progress=()):
    """CLOCK_MONOTONIC time of the instance's start (its t = 0)."""
    if inst.get("start_mono") is not None:
        return inst["start_mono"]
    for p in progress:
        if p.get("mono") is not None and p.get("t") is not None:
            return p["mono"] - p["t"]
    return None


def inst_start(d, run_id, inst_no):
    """start_mono() of one instance of a run, from its instance and
    progress lines."""
    return start_mono(d["instances"][run_id][inst_no],
                      d["progress"].get(run_id, {}).get(inst_no, []))


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


def time_ratio(slow, slow_seconds, fast):
    """(SLOW / FAST, False): how many times longer one policy took to reach
    a coverage than another. Where the slower one never got there (SLOW is
    None) its run time SLOW_SECONDS stands in: (that / FAST, True), a lower
    bound. (None, False) without either."""
    if slow is not None:
        return slow / fast, False
    if slow_seconds:
        return slow_seconds / fast, True
    return None, False


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
        t0 = inst_start(d, run_id, inst_no)
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
            # Under the TLB model (promotion_report.py --model): its cycles
            # per unit of work and MMU overhead, over the timed part and
            # between progress lines.
            "modeled": d.get("modeled", {}).get(inst.get("pid")),
        })
    return res


def rounds_of(d, experiment, key=lambda r: r["policy"]):
    """{workload: [{KEY(run): run id} of round 1, of round 2, ...]}: the
    interleaved rounds of promotion.sh's ROUNDS (a run without a round is
    round 1's); KEY is the run's policy unless given."""
    out = {}
    for rid, r in sorted(d["runs"].items()):
        if r.get("experiment") == experiment:
            rounds = out.setdefault(r["workload"], [])
            k = r.get("round", 1) - 1
            rounds += [{} for _ in range(k + 1 - len(rounds))]
            rounds[k][key(r)] = rid
    return out


def median_index(values):
    """Index of the median of VALUES that are not None (the lower of the
    middle two of an even count), 0 without any: the round a summary over
    rounds shows, so that its figures and plot come from one real run."""
    known = sorted((v, i) for i, v in enumerate(values) if v is not None)
    return known[(len(known) - 1) // 2][1] if known else 0


def over_rounds(per_round, figures):
    """Summary of one comparison over rounds: PER_ROUND holds a dict of
    FIGURES per round (a figure may be None); returns, per figure, its
    median, its [lowest, highest] under NAME_range and every round's value
    under "rounds", with "rounds" the number of rounds."""
    out = {"rounds": len(per_round), "per_round": {}}
    for k in figures:
        vals = [r.get(k) for r in per_round]
        out[k], out[k + "_range"] = median_and_range(vals)
        out["per_round"][k] = vals
    return out


def sorted_policies(pols):
    return sorted(pols, key=lambda p: (POLICY_ORDER.index(p) if p in POLICY_ORDER else 99, p))


def policy_runs(d, pol):
    """(policy, run id, analysed instances) of each run of POL ({policy:
    run id}) in POLICY_ORDER; a run without instances (cut short) is left
    out."""
    for p in sorted_policies(pol):
        insts = analyse_run(d, pol[p])
        if insts:
            yield p, pol[p], insts


def fmt(v, spec=".1f", none="-"):
    return none if v is None else format(v, spec)


def modeled_text(mo, unit, step=10):
    """An instance's figures under the TLB model (analyse_run()'s
    "modeled"), for the text summaries."""
    ov = " ".join("-" if v is None else f"{100 * v:.1f}" for v in mo["intervals"][::step])
    return (f"modeled: {fmt(mo['cycles_per_op'], ',.0f')} cycles per {unit}, MMU overhead "
            f"{fmt(mo['mmu_overhead'] and 100 * mo['mmu_overhead'], '.2f')} %; in progress "
            f"intervals 0,{step},..: {ov} %")


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


def save(plt, fig, outdir, name):
    """Write FIG to OUTDIR/NAME and close it; returns the path."""
    fig.tight_layout()
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
