#!/usr/bin/env python3
"""Summarise bench/table1.sh output in the shape of the paper's Table 1.

  bench/table1_report.py [INPUT.jsonl] [-o results/table1.json]
                         [--kernel RELEASE] [--flavour debug|release]

Prints one row per configuration (mean over the repetitions, ± sample
standard deviation) and the Linux-2MB / Linux-4KB ratios, and writes a JSON
summary. Standard library only; every function but main() is pure.
"""
import statistics
import sys

from report_io import ReportError, arg_parser, json_lines, ratio, write_json

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
COMPARISONS = [(BASE, THP), (THP, "HawkEye-2MB"), (BASE, "HawkEye-4KB"), (BASE, "Ingens-90%"),
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
    """mean, min, max, sample stdev (0 for one value) and n of VALUES."""
    return {
        "mean": statistics.fmean(values),
        "min": min(values),
        "max": max(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "n": len(values),
    }


def summarize(reps):
    """{label: {metric: stats}} in the order the labels first appear."""
    by_label = {}
    for r in reps:
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


def ratios(summary, base=BASE, other=THP):
    """Means of OTHER divided by those of BASE, or None if one is missing."""
    if base not in summary or other not in summary:
        return None
    s, b = summary[other], summary[base]
    return {"of": other, "over": base,
            **{m: ratio(s[m]["mean"], b[m]["mean"])
               for m in ("faults", "fault_time_us", "avg_fault_us", "sys_us", "total_us")}}


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
    """The text table: a row per configuration, cells 'mean ±stdev'."""
    cols = COLUMNS + [c for c in OPTIONAL if any(c[0] in st for st in summary.values())]
    head = ["configuration"] + [title for _, title, _ in cols]
    rows = [[label] + [f"{fmt(st[m]['mean'], d)} ±{fmt(st[m]['stdev'], d)}" if m in st else "-"
                       for m, _, d in cols]
            for label, st in summary.items()]
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    n = {st["faults"]["n"] for st in summary.values()}
    out = [f"Table 1 (mean over {'/'.join(map(str, sorted(n)))} repetitions, ± sample stdev)",
           line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]
    for rat in rats or ():
        out.append(f"{rat['of']} vs {rat['over']}: "
                   f"total PF time {fmt_ratio(rat['fault_time_us'])}, "
                   f"avg PF time {fmt_ratio(rat['avg_fault_us'])}, "
                   f"faults {fmt_ratio(rat['faults'])}, "
                   f"system time {fmt_ratio(rat['sys_us'])}, "
                   f"total time {fmt_ratio(rat['total_us'])}")
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
        "thread_cpu": env.get("thread_cpu", []),
        # Seconds of each configuration's untimed warm-up pass.
        "warmup_s": dict(env.get("warmup", [])),
    }
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
