"""HawkEye's own overhead: access-bit sampling and its threads' CPU time (§4)."""

import json

from .common import fmt, table, recorded, not_run, values

FILES = ("overhead.json",)

PAPER = {
    "sampling": {
        "source": "§3.3 (access bits cleared, tested after 1 s, every 30 s) and §4 'Performance "
        "overheads of HawkEye' (access-bit tracking, promotion, de-duplication: negligible)",
        "scan_period_ms": 30000,
        "sample_window_ms": 1000,
        "overhead": "negligible",
    },
}


def render(res, rd):
    return section_sampling(res.get("sampling"), thread_cpu_entries(res), rd)


def thread_cpu_entries(res):
    """The thread_cpu records of every result (bench/lib.sh cpu_watch_*):
    one per configuration or run, de-duplicated (the promotion results
    share theirs)."""
    seen, out = set(), []
    for name in ("table1", "prezero", "bloat", "promotion", "fairness", "order", "pmu"):
        d = res.get(name) or {}
        env = d.get("environment") or d.get("env") or {}
        for e in d.get("thread_cpu") or env.get("thread_cpu") or []:
            key = json.dumps(e, sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append(e)
    return out


def hawkeye_cpu_pct(e):
    """HawkEye's threads' CPU time in a thread_cpu entry, in % of one CPU
    over its wall time; None without one."""
    hk = sum(v for n, v in (e.get("threads") or {}).items() if n.startswith("hawkeye_"))
    return 100 * hk / e["seconds"] if e.get("seconds") else None


def thread_cpu_lines(entries):
    """Markdown table of THREAD_CPU entries: CPU seconds per thread and
    HawkEye's threads' share of one CPU over the run."""
    names = sorted({n for e in entries for n in (e.get("threads") or {})})
    rows = []
    for e in entries:
        th = e.get("threads") or {}
        cfg = " ".join(x for x in (e.get("workload"), e.get("config")) if x)
        rows.append([e.get("experiment") or "-", cfg or "-",
                     f"{e['seconds']:.1f}" if e.get("seconds") is not None else "-"]
                    + [fmt(th.get(n), 2) for n in names] + [fmt(hawkeye_cpu_pct(e), 2)])
    return table(["experiment", "configuration", "wall (s)"] + [f"{n} CPU (s)" for n in names]
                 + ["HawkEye threads, % of one CPU"], rows) + [""]


def section_sampling(lines, cpu, rd):
    title = "HawkEye's own overhead"
    p = PAPER["sampling"]
    if not lines and not cpu:
        return not_run(title, "results/sampling.jsonl is missing (make demo step 3)."), [
            ("HawkEye's access-bit sampling costs negligible CPU (§4)", "negligible", None, "not run")
        ]
    out = [f"## {title}", "", f"Paper: {p['source']}.", ""]
    claims = []
    if lines:
        rows = []
        for d in lines:
            pol = d.get("policy") or ("hawkeye-g" if d.get("regions_sampled") else "linux (no sampling)")
            rows.append(
                [pol]
                + values(d, "working_set_mib", "seconds", "scan_period_ms", "sample_window_ms",
                         "regions_sampled", "thread_cpu_s")
                + values(d, "pct_of_one_cpu", digits=3)
            )
        out += [
            "CPU time of the `hawkeye_promoted` thread while a process keeps its working set of base pages "
            "hot, promotion held off (so the whole set stays sampled):",
            "",
        ]
        out += table(
            [
                "policy",
                "working set (MiB)",
                "seconds",
                "scan period (ms)",
                "window (ms)",
                "regions sampled",
                "thread CPU (s)",
                "% of one CPU",
            ],
            rows,
        )
        out.append("")
        worst = max((d.get("pct_of_one_cpu") or 0) for d in lines)
        claims.append(
            (
                "HawkEye's access-bit sampling costs negligible CPU (§4)",
                "negligible",
                f"{worst:.3f} % of one CPU",
                "reproduced" if worst < 1 else "not reproduced",
            )
        )
        out += recorded(
            {"kernel": lines[-1].get("kernel")},
            {
                "scan_period_ms": lines[-1].get("scan_period_ms"),
                "sample_window_ms": lines[-1].get("sample_window_ms"),
            },
        )
    if cpu:
        out += ["CPU time of the memory-management threads during each benchmark run (read from "
                "/proc once a second by bench/lib.sh): HawkEye's (`hawkeye_zerod`, `hawkeye_debloatd`, "
                "`hawkeye_promoted`, which also runs the ingens and freebsd policies) and the kernel's "
                "(`khugepaged`, `kcompactd`). Pre-zeroing with no rate limit (Table 1, Table 8) is "
                "the zeroing the faults would otherwise do themselves.", ""]
        out += thread_cpu_lines(cpu)
        worst_rated = max((hawkeye_cpu_pct(e) or 0 for e in cpu
                           if e.get("experiment") in ("bloat", "single", "fairness", "order", "pmu")),
                          default=0.0)
        claims.append((
            "HawkEye's threads cost little CPU at their default rates during the runs (§4)",
            "negligible",
            f"at most {worst_rated:.2f} % of one CPU (promotion and bloat runs)",
            "reproduced" if worst_rated < 5 else "not reproduced",
        ))
    return out, claims
