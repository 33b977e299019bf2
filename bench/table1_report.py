#!/usr/bin/env python3
"""Summarise bench/table1.sh output in the shape of the paper's Table 1.

  bench/table1_report.py [INPUT.jsonl] [-o results/table1.json]
                         [--kernel RELEASE] [--flavour debug|release]

Prints one row per configuration (median over the repetitions, with their
range) and the ratios of COMPARISONS, and writes a JSON summary. A ratio is
the median of the per-round ratios (bench/table1.sh interleaves the
configurations, so round i of one ran next to round i of the other) and its
spread their range. Standard library only; every function but main() is pure.
"""
import statistics
import sys

from report_io import ReportError, arg_parser, json_lines, merge_thread_cpu, ratio, write_json

# (key in the rep lines, column title, divisor from the raw unit)
COLUMNS = [
    ("faults", "#faults", 1),
    ("fault_time_us", "PF time total (ms)", 1000),
    ("avg_fault_us", "avg PF (us)", 1),
    ("sys_us", "system time (ms)", 1000),
    ("total_us", "total time (ms)", 1000),
    ("thp_fault_alloc", "huge pages", 1),
]
METRICS = [c[0] for c in COLUMNS]
# Only kernels with HawkEye report these; "-" where a configuration lacks them.
# prezeroed / sync_zeroed: the faults of the run's page size only.
OPTIONAL = [("prezeroed", "pre-zeroed faults", 1), ("sync_zeroed", "zeroed at fault", 1),
            ("mthp_fault_alloc", "mTHPs", 1)]
BASE, THP = "Linux-4KB", "Linux-2MB"
# (base, other): the ratio lines printed, where both configurations ran.
COMPARISONS = [(BASE, THP), (THP, "HawkEye-2MB"), (THP, "HawkEye-2MB-fixed"),
               (THP, "Linux-2MB-seq"), (THP, "Linux-2MB-nt"),
               ("Linux-2MB-seq", "HawkEye-2MB"), ("Linux-2MB-nt", "HawkEye-2MB"),
               (BASE, "HawkEye-4KB"), (BASE, "Ingens-90%"),
               ("Linux-64KB", "HawkEye-64KB"), ("Linux-16KB", "HawkEye-16KB")]


# The faults of each zeroing_size that table1 counts zeroing for.
SIZE_FAULTS = {"2m": "thp_fault_alloc", "mthp": "mthp_fault_alloc", "4k": "faults"}


def check_zeroing(n, rep):
    """A run cannot zero (before or at the fault) more pages of its size than
    it faulted: the counters are system-wide, table1 counts one size only."""
    size = rep.get("zeroing_size")
    if size is None:
        return
    if size not in SIZE_FAULTS:
        raise ReportError(f"line {n}: unknown zeroing_size {size!r}")
    zeroed = max(rep.get("prezeroed", -1), 0) + max(rep.get("sync_zeroed", -1), 0)
    faults = rep.get(SIZE_FAULTS[size], -1)
    if size != "4k" and 0 <= faults < zeroed:
        raise ReportError(f"line {n}: {zeroed} {size} faults zeroed of {faults} faulted")


def parse_lines(lines):
    """Split JSON lines into (env dict, {label: config dict}, [rep dicts])."""
    env, configs, reps = {}, {}, []
    thread_cpu, warmup = [], []
    for n, obj in json_lines(lines):
        kind = obj.get("type", "rep")
        if kind == "env":
            env = obj
        elif kind == "config":
            configs[obj["label"]] = obj
        elif kind == "thread_cpu":
            thread_cpu.append(obj)
        elif kind == "warmup":
            warmup.append((obj["label"], obj["seconds"]))
        elif kind == "rep":
            missing = [k for k in ["label", "rep", "mib"] + METRICS if k not in obj]
            if missing:
                raise ReportError(f"line {n}: missing {', '.join(missing)}")
            check_zeroing(n, obj)
            reps.append(obj)
        else:
            raise ReportError(f"line {n}: unknown type {kind!r}")
    if not reps:
        raise ReportError("no repetitions in the input")
    env = dict(env, thread_cpu=thread_cpu, warmup=warmup)
    return env, configs, reps


def stats(values):
    """mean, median, min, max, sample stdev (0 for one value), n and the
    values themselves (in round order) of VALUES."""
    return {
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "n": len(values),
        "values": list(values),
    }


def summarize(reps):
    """{label: {metric: stats}} in the order the labels first appear."""
    by_label = {}
    for r in sorted(reps, key=lambda r: r["rep"]):
        by_label.setdefault(r["label"], []).append(r)
    out = {}
    for label, rs in by_label.items():
        out[label] = {m: stats([r[m] for r in rs]) for m in METRICS}
        for m, _, _ in OPTIONAL:
            if all(r.get(m, -1) >= 0 for r in rs):
                out[label][m] = stats([r[m] for r in rs])
    return out


def fmt_ratio(r):
    return "n/a" if r is None else f"x{r:.3g}"


def paired_ratio(num, den):
    """(median, min, max) of the per-round ratios num[i] / den[i] of two
    metric stats; None if a round has no ratio."""
    rs = [ratio(a, b) for a, b in zip(num["values"], den["values"])]
    if not rs or None in rs:
        return None
    return statistics.median(rs), min(rs), max(rs)


RATIO_METRICS = ("faults", "fault_time_us", "avg_fault_us", "sys_us", "total_us")


def ratios(summary, base=BASE, other=THP):
    """OTHER over BASE: the median of the per-round ratios of each metric,
    and their range under "spread"; None if one configuration is missing."""
    if base not in summary or other not in summary:
        return None
    s, b = summary[other], summary[base]
    paired = {m: paired_ratio(s[m], b[m]) for m in RATIO_METRICS}
    return {"of": other, "over": base,
            **{m: p and p[0] for m, p in paired.items()},
            "spread": {m: p and [p[1], p[2]] for m, p in paired.items()}}


def all_ratios(summary):
    """The ratios of COMPARISONS whose configurations both ran."""
    return [r for b, o in COMPARISONS if (r := ratios(summary, b, o))]


def fmt(value, divisor):
    v = value / divisor
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def format_table(summary, rats=()):
    """The text table: a row per configuration, cells 'median [min-max]'."""
    cols = COLUMNS + [c for c in OPTIONAL if any(c[0] in st for st in summary.values())]
    head = ["configuration"] + [title for _, title, _ in cols]
    rows = [[label] + [f"{fmt(st[m]['median'], d)} [{fmt(st[m]['min'], d)}-{fmt(st[m]['max'], d)}]"
                       if m in st else "-"
                       for m, _, d in cols]
            for label, st in summary.items()]
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    n = {st["faults"]["n"] for st in summary.values()}
    out = [f"Table 1 (median over {'/'.join(map(str, sorted(n)))} repetitions [min-max])",
           line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]
    for rat in rats or ():
        def cell(m):
            spread = rat["spread"][m]
            return fmt_ratio(rat[m]) + (f" [{fmt_ratio(spread[0])}-{fmt_ratio(spread[1])}]"
                                        if spread and spread[0] != spread[1] else "")
        out.append(f"{rat['of']} vs {rat['over']}: "
                   f"total PF time {cell('fault_time_us')}, "
                   f"avg PF time {cell('avg_fault_us')}, "
                   f"faults {cell('faults')}, "
                   f"system time {cell('sys_us')}, "
                   f"total time {cell('total_us')}")
    return "\n".join(out)


def build_report(env, configs, reps, summary, rat, kernel=None, flavour=None):
    """The JSON summary: environment, per-configuration stats, ratios."""
    mibs = sorted({r["mib"] for r in reps})
    environment = {
        "kernel": env.get("kernel") or kernel,
        "flavour": env.get("flavour") or flavour,
        "mib": mibs[0] if len(mibs) == 1 else mibs,
        "reps": {label: st["faults"]["n"] for label, st in summary.items()},
        "thp_enabled_boot": env.get("thp_enabled_boot"),
        "thp_defrag_boot": env.get("thp_defrag_boot"),
        "clocksource": env.get("clocksource"),
        "mem_total_kb": env.get("mem_total_kb"),
        "cpus": env.get("cpus"),
        "knobs": env.get("knobs"),
        "thread_cpu": merge_thread_cpu(env.get("thread_cpu", [])),
        # Seconds of each configuration's untimed warm-up pass.
        "warmup_s": dict(env.get("warmup", [])),
    }
    if env.get("idle_s"):  # the churn run (table1.sh -i)
        environment.update(idle_s=env["idle_s"], cycles=env.get("cycles"))
    return {
        "benchmark": "table1",
        "environment": environment,
        "configs": [{
            "label": label,
            "setup": configs.get(label, {}).get("setup"),
            "thp_enabled": configs.get(label, {}).get("thp_enabled"),
            "thp_defrag": configs.get(label, {}).get("thp_defrag"),
            "metrics": st,
        } for label, st in summary.items()],
        "ratios": rat,
    }


def main(argv):
    p = arg_parser(__doc__, "table1")
    p.add_argument("--kernel", help="kernel release, if the input does not say")
    p.add_argument("--flavour", help="kernel flavour the run booted")
    a = p.parse_args(argv)
    try:
        with open(a.input) as f:
            env, configs, reps = parse_lines(f)
    except (OSError, ReportError) as e:
        print(f"table1_report: {e}", file=sys.stderr)
        return 1
    summary = summarize(reps)
    rat = all_ratios(summary)
    print(format_table(summary, rat))
    report = build_report(env, configs, reps, summary, rat, a.kernel, a.flavour)
    write_json(a.output, report, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
