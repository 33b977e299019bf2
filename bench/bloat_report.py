#!/usr/bin/env python3
"""Summarise bench/bloat.sh output: Redis memory and throughput per kernel
configuration (the paper's Table 7) and RSS over time (its Figure 1).

  bench/bloat_report.py [INPUT.jsonl] [-o results/bloat.json] [--plot results/bloat-rss.png]

Memory is the server's footprint: resident plus swapped out (VmRSS +
VmSwap), so that a configuration cannot look small by swapping. A run in
containers (bloat.sh -g) also has "container" lines: "containers" then
holds each configuration's cgroup figures (limit, peak, OOM kills, swap,
huge pages held), the xsbench containers' promotions, and the containers'
goals; the plot shows the cgroups' memory.current. Configurations repeated
as NAME/N (interleaved rounds) are compared round by round: each ratio is
reported as its median, its range and its value in each round, and a goal
is met when it holds in every round.
"""
import json
import os
import statistics
import sys

from report_io import REPO, arg_parser, median_and_range, write_json

GOALS = {
    # Under pressure HawkEye's footprint is within 10% of Linux-4KB's.
    "hawkeye_vs_4kb_memory_max": 1.10,
    # Without pressure its throughput is within 2% of Linux-2MB's.
    "hawkeye_vs_2mb_throughput_min": 0.98,
    # In a container at 1.1x Linux-4KB's peak: HawkEye's peak within 5 %
    # of Linux-4KB's, and as many huge pages as Linux-2MB while memory is
    # free (after the deletion).
    "container_peak_vs_4kb_max": 1.05,
    "container_huge_vs_2mb_min": 0.95,
    # Promotions between containers by memory.thp.weight (1:3), flat and
    # nested, within this fraction of the weights' ratio.
    "container_weights_tolerance": 0.10,
    # Recovery splitting to mTHP against splitting to 4 KB: at most this
    # much more memory, at least this much more huge + mTHP memory kept.
    "split_mthp_vs_4kb_memory_max": 1.02,
    "split_mthp_vs_4kb_large_kept_min": 5.0,
}


def read(lines):
    rows = [json.loads(line) for line in lines if line.strip()]
    return {t: [r for r in rows if r.get("type") == t]
            for t in ("env", "sample", "step", "end", "thread_cpu", "container", "recover",
                      "dense")}


def footprint(s):
    return s["rss_kb"] + s["swap_kb"]


def in_phase(samples, phase):
    return [s for s in samples if s["phase"] == phase]


def summarize_config(samples, steps, end, recover=None, dense=None):
    """One configuration's figures; None where a phase never ran."""
    step = {s["phase"]: s for s in steps}
    last = {}
    for s in samples:
        last[s["phase"]] = s

    def mean_of(phase, key):
        vals = [v for v in map(key, in_phase(samples, phase)) if v is not None and v >= 0]
        return statistics.fmean(vals) if vals else None

    def tput(phase):
        s = step.get(phase)
        return s.get("ops_per_sec") if s else None

    first = samples[0] if samples else None
    final = samples[-1] if samples else None

    def delta(key, less=None):
        if not samples or first.get(key, -1) < 0:
            return None
        d = final[key] - first[key]
        return d - (final[less] - first[less]) if less else d
    return {
        "completed": bool(end and end.get("completed")),
        "server_alive": bool(end and end.get("server_alive")),
        "oom_kills": end.get("oom_kills", 0) if end else None,
        "memory_after_insert_kb": footprint(last["P1"]) if "P1" in last else None,
        "memory_no_pressure_kb": mean_of("T1", footprint),
        "memory_under_pressure_kb": mean_of("T2", footprint),
        "peak_memory_kb": max((footprint(s) for s in samples), default=None),
        "huge_no_pressure_kb": mean_of("T1", lambda s: s["anon_huge_kb"]),
        "huge_under_pressure_kb": mean_of("T2", lambda s: s["anon_huge_kb"]),
        # mTHP memory (below 2 MB) of the whole guest: per-size nr_anon.
        "mthp_no_pressure_kb": mean_of("T1", lambda s: s.get("mthp_kb")),
        "mthp_under_pressure_kb": mean_of("T2", lambda s: s.get("mthp_kb")),
        "max_server_swap_kb": max((s["swap_kb"] for s in samples), default=None),
        "max_system_swap_kb": max((s["swap_used_kb"] for s in samples), default=None),
        "throughput_no_pressure": tput("T1"),
        "throughput_under_pressure": tput("T2"),
        "thp_split": final["thp_split"] - first["thp_split"] if samples else None,
        "zero_pages_freed": final["zero_freed"] - first["zero_freed"] if samples else None,
        "collapses": final["collapse"] - first["collapse"] if samples else None,
        "mthp_split": final["mthp_split"] - first["mthp_split"]
        if samples and first.get("mthp_split", -1) >= 0 else None,
        # Splits by everyone else (the kernel's own counters less recovery's):
        # THPs the deferred split shrinker found underused, and mTHPs that
        # madvise(), reclaim, migration or the shrinker split.
        "underused_split": delta("underused_split"),
        "mthp_split_elsewhere": delta("mthp_split_all", "mthp_split"),
        # What the pressure phase faulted (P3, and recovery's deep run with
        # -r): 2 MB faults, those that fell back, and mTHP faulted in.
        **pressure_faults(samples),
        # bloat.sh -r: memory use (as recovery counts it) before and after
        # recovery ran as deep as it goes at the end of the pressure phase,
        # and its rounds.
        "recover": {k: recover.get(k) for k in ("use_pct_before", "use_pct_after", "rounds",
                                                "reached")}
        if recover else None,
        # bloat.sh, the mTHP pair: after T2, the server's 64 KB pieces that
        # base pages map whole, none the zero page (redisbloat dense).
        "dense_base_kb": dense["dense_base_kb"] if dense else None,
    }


def pressure_faults(samples):
    p = [s for s in samples if s["phase"] in ("P3", "recover")]
    out = {}
    for key, name in (("thp_fault_alloc", "pressure_thp_faults"),
                      ("thp_fault_fallback", "pressure_thp_fault_fallback"),
                      ("mthp_fault_kb", "pressure_mthp_fault_kb")):
        ok = len(p) > 1 and p[0].get(key, -1) >= 0
        out[name] = p[-1][key] - p[0][key] if ok else None
    return out


def ratio(a, b):
    return a / b if a is not None and b else None


def rounds(labels):
    """Interleaved repetitions: {N: {NAME: label}} for the labels NAME/N
    (a plain NAME is in round "1")."""
    out = {}
    for label in labels:
        name, _, n = label.partition("/")
        out.setdefault(n or "1", {})[name] = label
    return out


def by_round(per, fn, *names):
    """fn(per[NAME] for each of NAMES) in each round that ran them all,
    where it is not None: {N: value}."""
    out = {}
    for n, r in rounds(per).items():
        if all(name in r for name in names):
            v = fn(*(per[r[name]] for name in names))
            if v is not None:
                out[n] = v
    return out


def put_spread(d, key, vals):
    """d[key] the median of vals ({round: value}), d[key + "_range"] their
    range, d[key + "_rounds"] the values; d[key] None without any."""
    d[key], d[key + "_range"] = median_and_range(vals.values())
    d[key + "_rounds"] = vals


def summarize(data):
    configs = list(dict.fromkeys(s["config"] for s in data["sample"] + data["end"]))
    out = {}
    for c in configs:
        ends = [e for e in data["end"] if e["config"] == c]
        rec = [r for r in data["recover"] if r["config"] == c]
        dense = [r for r in data["dense"] if r["config"] == c]
        out[c] = summarize_config([s for s in data["sample"] if s["config"] == c],
                                  [s for s in data["step"] if s["config"] == c],
                                  ends[-1] if ends else None, rec[-1] if rec else None,
                                  dense[-1] if dense else None)
    k4, m2, hk = (out.get(c, {}) for c in ("Linux-4KB", "Linux-2MB", "HawkEye"))

    def large_kb(d, phase):
        h, m = d.get(f"huge_{phase}_kb"), d.get(f"mthp_{phase}_kb")
        return None if h is None or m is None else h + m
    cmp = {
        "hawkeye_vs_4kb_memory": ratio(hk.get("memory_under_pressure_kb"),
                                       k4.get("memory_under_pressure_kb")),
        "linux2mb_vs_4kb_memory": ratio(m2.get("memory_under_pressure_kb"),
                                        k4.get("memory_under_pressure_kb")),
        "hawkeye_vs_2mb_throughput": ratio(hk.get("throughput_no_pressure"),
                                           m2.get("throughput_no_pressure")),
        "linux4kb_vs_2mb_throughput": ratio(k4.get("throughput_no_pressure"),
                                            m2.get("throughput_no_pressure")),
    }
    # With 64 KB mTHP on: recovery splitting to the largest dense size
    # against splitting to 4 KB, round by round.
    mthp = ("HawkEye-64KB", "HawkEye-64KB-split4KB")
    put_spread(cmp, "split_mthp_vs_4kb_memory", by_round(
        out, lambda m, k: ratio(m.get("memory_under_pressure_kb"),
                                k.get("memory_under_pressure_kb")), *mthp))
    put_spread(cmp, "split_mthp_vs_4kb_large_kept", by_round(
        out, lambda m, k: ratio(large_kb(m, "under_pressure"),
                                large_kb(k, "under_pressure")), *mthp))
    # bloat.sh -r: a round where recovery did not get a side as deep as it
    # goes (whole rounds at the floor bar that split nothing) did not run
    # as defined, and fails the pair's goals.
    cmp["split_mthp_not_recovered_rounds"] = sorted(
        n for n, r in rounds(out).items()
        if any((out[r[m]].get("recover") or {}).get("reached") == 0 for m in mthp if m in r))
    goals = {
        "hawkeye_memory_within_10pct_of_4kb":
            cmp["hawkeye_vs_4kb_memory"] <= GOALS["hawkeye_vs_4kb_memory_max"]
            if cmp["hawkeye_vs_4kb_memory"] is not None and hk.get("completed") else None,
        "hawkeye_throughput_within_2pct_of_2mb":
            cmp["hawkeye_vs_2mb_throughput"] >= GOALS["hawkeye_vs_2mb_throughput_min"]
            if cmp["hawkeye_vs_2mb_throughput"] is not None else None,
    }
    if cmp["split_mthp_vs_4kb_memory"] is not None:
        goals["split_mthp_memory_within_2pct_of_4kb"] = (
            cmp["split_mthp_vs_4kb_memory_range"][1] <= GOALS["split_mthp_vs_4kb_memory_max"]
            and not cmp["split_mthp_not_recovered_rounds"])
    if cmp["split_mthp_vs_4kb_large_kept"] is not None:
        goals["split_mthp_keeps_5x_large"] = (
            cmp["split_mthp_vs_4kb_large_kept_range"][0] >= GOALS["split_mthp_vs_4kb_large_kept_min"]
            and not cmp["split_mthp_not_recovered_rounds"])
    res = {"env": data["env"][0] if data["env"] else {}, "configs": out,
           "comparisons": cmp, "goals": goals, "thread_cpu": data.get("thread_cpu", []),
           "repeated": repeated(out)}
    if data.get("container"):
        res["containers"] = containers(data, out)
    return res


def first_promotions(samples, n):
    """The xsbench containers' promotions (each cgroup's, a parent's
    counting its children's) at the first sample where those of the
    cgroups that run them (the leaves) add up to n or more. With n one
    process's regions, none has all its regions promoted yet: the
    weights' ratio is in the counts."""
    for s in samples:
        cg = {k: v["promoted"] for k, v in s.get("cgroups", {}).items()
              if k.startswith("bench-xs")}
        leaves = [k for k in cg if not any(o.startswith(k + "/") for o in cg)]
        if leaves and sum(cg[k] for k in leaves) >= n:
            return cg
    return None


def weights_ratio(fp, light, heavy):
    """heavy's promotions over light's, where light has any."""
    return fp[heavy] / fp[light] if fp and fp.get(light) and heavy in fp else None


def containers(data, configs):
    """The cgroup figures of a run in containers (bloat.sh -g)."""
    env = data["env"][0] if data["env"] else {}
    per = {}
    for rec in data["container"]:
        c = rec["config"]
        ss = [s for s in data["sample"] if s["config"] == c and "cgroups" in s]
        redis = [s["cgroups"]["bench-redis"] for s in ss]

        def mean_in(phase, key):
            vals = [s["cgroups"]["bench-redis"][key] for s in ss if s["phase"] == phase]
            return statistics.fmean(vals) if vals else None

        d = configs.get(c, {})
        half = (rec.get("limit_kb") or 0) / 2
        # While the container has room: the share of its memory in huge
        # pages at the first sample of P1 at half its limit.
        free = next((r["thp_kb"] / r["kb"] for s, r in zip(ss, redis)
                     if half and s["phase"] == "P1" and r["kb"] >= half), None)
        per[c] = dict(rec, killed=bool(rec["oom_kills"]) or not d.get("server_alive", False),
                      huge_share_while_free=free, peak_footprint_kb=d.get("peak_memory_kb"),
                      huge_no_pressure_kb=mean_in("T1", "thp_kb"),
                      huge_under_pressure_kb=mean_in("T2", "thp_kb"),
                      memory_no_pressure_kb=mean_in("T1", "kb"),
                      max_swap_kb=max((r["swap_kb"] for r in redis), default=None),
                      # one process's regions: XS_MB / 2 of 2 MB each
                      first_promotions=first_promotions(ss, env.get("xs_mb", 16) // 2))
    res = {"configs": per}
    put_spread(res, "hawkeye_vs_4kb_peak", by_round(
        per, lambda h, k: ratio(h.get("peak_kb"), k.get("peak_kb")), "HawkEye", "Linux-4KB"))
    put_spread(res, "hawkeye_vs_4kb_sampled_peak", by_round(
        per, lambda h, k: ratio(h.get("peak_footprint_kb"), k.get("peak_footprint_kb")),
        "HawkEye", "Linux-4KB"))
    put_spread(res, "hawkeye_vs_2mb_huge", by_round(
        per, lambda h, m: ratio(h.get("huge_share_while_free"), m.get("huge_share_while_free")),
        "HawkEye", "Linux-2MB"))
    # Weights 100:300, flat (bench-xs1 beside bench-xs2) and nested (its
    # children a and b).
    put_spread(res, "weights_flat", by_round(
        per, lambda t: weights_ratio(t.get("first_promotions"), "bench-xs1", "bench-xs2"),
        "HawkEye-3"))
    put_spread(res, "weights_nested", by_round(
        per, lambda t: weights_ratio(t.get("first_promotions"), "bench-xs2/a", "bench-xs2/b"),
        "HawkEye-3"))
    hawkeye = [k for k in per if k.startswith("HawkEye")]

    def at_most(key, bar):
        return res[key + "_range"][1] <= bar if res[key] is not None else None

    def near(key, want):
        tol = GOALS["container_weights_tolerance"]
        lo, hi = res[key + "_range"] or (None, None)
        return lo >= want * (1 - tol) and hi <= want * (1 + tol) if res[key] is not None else None
    goals = {
        "hawkeye_never_killed": not any(per[k]["killed"] for k in hawkeye) if hawkeye else None,
        # memory.peak: the cgroup's high-water mark, touched by any
        # transient charge; and the server's RSS + swap sampled 1/s.
        "hawkeye_peak_within_5pct_of_4kb": at_most("hawkeye_vs_4kb_peak",
                                                   GOALS["container_peak_vs_4kb_max"]),
        "hawkeye_sampled_peak_within_5pct_of_4kb": at_most("hawkeye_vs_4kb_sampled_peak",
                                                           GOALS["container_peak_vs_4kb_max"]),
        "hawkeye_holds_2mb_huge_pages_while_free":
            res["hawkeye_vs_2mb_huge_range"][0] >= GOALS["container_huge_vs_2mb_min"]
            if res["hawkeye_vs_2mb_huge"] is not None else None,
    }
    threes = [v for k, v in per.items() if k.partition("/")[0] == "HawkEye-3" and v.get("xs")]
    if threes:
        goals["xsbench_containers_keep_huge_pages"] = all(
            x["thp_split"] == 0 for t in threes for x in t["xs"].values())
        for key in ("weights_flat", "weights_nested"):
            if res[key] is not None:
                goals[f"promotions_follow_{key}"] = near(key, 3.0)
    res["goals"] = goals
    return res


def repeated(configs):
    """Interleaved repetitions (labels NAME/N): per NAME the throughput
    without pressure of each run, mean and sample stdev; and HawkEye's
    mean over Linux-2MB's, with the ratio of each pair (same N). {} when
    nothing was repeated."""
    by = {}
    for label, c in configs.items():
        if "/" in label:
            name, n = label.rsplit("/", 1)
            if c.get("throughput_no_pressure") is not None:
                by.setdefault(name, {})[n] = c["throughput_no_pressure"]
    if not by:
        return {}
    out = {"throughput_no_pressure": {
        name: {"runs": runs, "mean": statistics.fmean(runs.values()),
               "stdev": statistics.stdev(runs.values()) if len(runs) > 1 else 0.0}
        for name, runs in by.items()}}
    hk, m2 = by.get("HawkEye", {}), by.get("Linux-2MB", {})
    pairs = {n: hk[n] / m2[n] for n in hk if m2.get(n)}
    if pairs:
        t = out["throughput_no_pressure"]
        out["hawkeye_vs_2mb_throughput"] = t["HawkEye"]["mean"] / t["Linux-2MB"]["mean"]
        out["hawkeye_vs_2mb_throughput_pairs"] = pairs
        out["hawkeye_throughput_within_2pct_of_2mb"] = (
            out["hawkeye_vs_2mb_throughput"] >= GOALS["hawkeye_vs_2mb_throughput_min"])
    return out


def _gb(kb):
    return f"{kb / 2**20:6.2f}" if kb is not None else "   n/a"


def _k(ops):
    return f"{ops / 1000:7.1f}K" if ops is not None else "     n/a"


def format_text(s):
    out = ["Redis bloat experiment (memory = RSS + swap of the server, GiB)",
           "  config      after P1  no-pressure  pressure  peak   huge(np)  "
           "tput(np)  tput(pr)  splits  oom  mTHP(pr)"]
    for c, d in s["configs"].items():
        oom = "yes" if (d["oom_kills"] or not d["server_alive"]) else "no"
        out.append(f"  {c:10s} {_gb(d['memory_after_insert_kb'])}    {_gb(d['memory_no_pressure_kb'])}"
                   f"     {_gb(d['memory_under_pressure_kb'])}  {_gb(d['peak_memory_kb'])}"
                   f"  {_gb(d['huge_no_pressure_kb'])}  {_k(d['throughput_no_pressure'])}"
                   f" {_k(d['throughput_under_pressure'])}  {d['thp_split'] or 0:6d}  {oom:3s}"
                   f"  {_gb(d['mthp_under_pressure_kb'])}")
    cmp = s["comparisons"]
    for k, v in cmp.items():
        if k.endswith(("_range", "_rounds")):
            continue
        rng = cmp.get(k + "_range")
        out.append(f"  {k:28s} {'n/a' if v is None else f'{v:.3f}'}"
                   + (f" ({rng[0]:.3f}-{rng[1]:.3f})" if rng and rng[0] != rng[1] else ""))
    for k, v in s["goals"].items():
        out.append(f"  goal {k:40s} {'n/a' if v is None else ('met' if v else 'NOT met')}")
    rep = s.get("repeated") or {}
    for name, t in rep.get("throughput_no_pressure", {}).items():
        runs = "  ".join(f"{v / 1000:.1f}K" for v in t["runs"].values())
        out.append(f"  repeated {name:10s} GET/s without pressure: {runs}; "
                   f"mean {t['mean'] / 1000:.1f}K ±{t['stdev'] / 1000:.1f}K")
    cont = s.get("containers")
    if cont:
        out.append("In containers (MiB): memory.max, memory.peak, swap, share in huge pages at half the "
                   "limit (P1), huge pages after the delete (T1)")
        for c, d in cont["configs"].items():
            out.append(f"  {c:14s} limit {d['limit_kb'] / 1024:7.1f}  peak {d['peak_kb'] / 1024:7.1f}  "
                       f"swap {d['swap_peak_kb'] / 1024:6.1f}  huge {100 * (d['huge_share_while_free'] or 0):5.1f} %"
                       f" / {(d['huge_no_pressure_kb'] or 0) / 1024:6.1f}"
                       f"  splits {d['thp_split']}  killed {'yes' if d['killed'] else 'no'}"
                       + (f"  first promotions {d['first_promotions']}" if d.get("first_promotions") else ""))
        for k, v in cont["goals"].items():
            out.append(f"  goal {k:40s} {'n/a' if v is None else ('met' if v else 'NOT met')}")
    if "hawkeye_vs_2mb_throughput" in rep:
        pairs = "  ".join(f"{v:.3f}" for v in rep["hawkeye_vs_2mb_throughput_pairs"].values())
        out.append(f"  repeated HawkEye / Linux-2MB: {rep['hawkeye_vs_2mb_throughput']:.3f} "
                   f"(pairs: {pairs}); goal >= {GOALS['hawkeye_vs_2mb_throughput_min']}: "
                   f"{'met' if rep['hawkeye_throughput_within_2pct_of_2mb'] else 'NOT met'}")
    return "\n".join(out)


def plot_containers(data, path):
    """Figure 1 per cgroup: the Redis container's memory.current for each
    configuration of the first round, its limit dashed; then HawkEye-3's
    containers."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    limits = {r["config"]: r["limit_kb"] for r in data["container"]}
    first = next(iter(rounds(dict.fromkeys(s["config"] for s in data["sample"])).values()), {})
    three = [s for s in data["sample"] if s["config"] == first.get("HawkEye-3") and "cgroups" in s]
    fig, axes = plt.subplots(2 if three else 1, 1, figsize=(8, 7 if three else 4.5), squeeze=False)
    ax = axes[0][0]
    for c in first.values():
        ss = [s for s in data["sample"] if s["config"] == c and "cgroups" in s]
        line, = ax.plot([s["t"] for s in ss], [s["cgroups"]["bench-redis"]["kb"] / 1024 for s in ss],
                        label=c)
        if limits.get(c):
            ax.axhline(limits[c] / 1024, color=line.get_color(), ls="--", lw=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Redis container memory.current (MiB)")
    ax.set_title("Redis in a container: P1 insert 4 KB, P2 delete, P3 insert 2 MB "
                 "(dashed: memory.max)", fontsize=9)
    ax.legend(fontsize=8)
    if three:
        ax = axes[1][0]
        for cg in three[0]["cgroups"]:
            line, = ax.plot([s["t"] for s in three], [s["cgroups"][cg]["kb"] / 1024 for s in three],
                            label=f"{cg} memory")
            ax.plot([s["t"] for s in three], [s["cgroups"][cg]["thp_kb"] / 1024 for s in three], ":",
                    color=line.get_color(), label=f"{cg} huge pages")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("MiB")
        ax.set_title("HawkEye-3: Redis beside xsbench containers (weights 100 and 300, "
                     "bench-xs2's children 100 and 300)", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if data.get("container"):
        return plot_containers(data, path)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for c in dict.fromkeys(s["config"] for s in data["sample"]):
        ss = [s for s in data["sample"] if s["config"] == c]
        line, = ax.plot([s["t"] for s in ss], [s["rss_kb"] / 2**20 for s in ss], label=f"{c} RSS")
        if any(s["swap_kb"] for s in ss):
            ax.plot([s["t"] for s in ss], [footprint(s) / 2**20 for s in ss], "--",
                    color=line.get_color(), label=f"{c} RSS+swap")
        for i in range(1, len(ss)):
            if ss[i]["phase"] != ss[i - 1]["phase"] and ss[i]["phase"] in ("P2", "P3"):
                ax.axvline(ss[i]["t"], color=line.get_color(), alpha=0.3, lw=0.8)
                ax.text(ss[i]["t"], ax.get_ylim()[1] * 0.02, ss[i]["phase"], fontsize=7,
                        color=line.get_color())
    env = data["env"][0] if data["env"] else {}
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Redis memory (GiB)")
    ax.set_title(f"Redis: P1 insert 4 KB, P2 delete {env.get('del_pct', '?')}%, P3 insert 2 MB "
                 f"({env.get('mem_total_kb', 0) / 2**20:.1f} GiB guest)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv):
    p = arg_parser(__doc__, "bloat")
    p.add_argument("--plot", default=os.path.join(REPO, "results/bloat-rss.png"))
    a = p.parse_args(argv)
    with open(a.input) as f:
        data = read(f)
    s = summarize(data)
    print(format_text(s))
    write_json(a.output, s, indent=2)
    if a.plot:
        plot(data, a.plot)
        print(f"plot: {a.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
