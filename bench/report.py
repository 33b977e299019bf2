#!/usr/bin/env python3
"""Collate the benchmark results into results/REPORT.md: each of our tables
beside the paper's, what matches, what does not, and why.

  bench/report.py [--results DIR] [-o DIR/REPORT.md]

Reads whichever of DIR/table1.json, prezero.json, bloat.json,
sampling.jsonl, promotion.json, fairness.json (and the experiments still to
land: table8.json, table9.json) exist, and order.json (Figure 8);
an experiment whose file is missing gets one line saying it was not run.
JSON files it does not know are listed at the end with their recorded
environment. The paper's numbers are in PAPER below, each with its source
(table or figure of the ASPLOS '19 paper). Standard library only; every
function but main() is pure (dicts in, markdown lines out).
"""

import argparse
import glob
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------
# The paper's numbers (Panwar, Bansal, Gopinath: "HawkEye: Efficient
# Fine-grained OS Support for Huge Pages", ASPLOS '19). Machine: 2-socket
# Haswell-EP E5-2690 v3, 48 hardware threads, 96 GB, Linux 4.3 (§4).
# ---------------------------------------------------------------------------
PAPER = {
    "machine": "Intel Xeon E5-2690 v3 (Haswell-EP), 2 sockets, 48 hardware threads, 96 GB, Linux 4.3 (§4)",
    "table1": {
        "source": "Table 1 (§2.2): 10 GB buffer, one byte written per 4 KB page, 10 runs (≈100 GB allocated)",
        # "Ingens-90%" is the paper's "async promotion" column; HawkEye-* its
        # "no page-zeroing" columns (what pre-zeroing achieves).
        "columns": ["Linux-4KB", "Linux-2MB", "Ingens-90%", "HawkEye-4KB", "HawkEye-2MB"],
        "faults": [26.2e6, 51.5e3, 26.2e6, 26.2e6, 51.5e3],
        "fault_time_s": [92.6, 23.9, 92.8, 69.5, 0.7],
        "avg_fault_us": [3.5, 465, 3.5, 2.65, 13],
        "sys_s": [102, 24, 104, 79, 1.3],
        "total_s": [106, 24.9, 116, 83, 4.4],
    },
    "table7": {
        "source": "Table 7 (§4, bloat vs. performance): Redis, 8M keys x 4 KB values, 60 % deleted",
        # label: (memory GB, GET throughput K requests/s)
        "rows": {
            "Linux-4KB": (16.2, 106.1),
            "Linux-2MB": (33.2, 113.8),
            "Ingens-90%": (16.3, 106.8),
            "Ingens-50%": (33.1, 113.4),
            "HawkEye (no mem. pressure)": (33.2, 113.6),
            "HawkEye (mem. pressure)": (16.2, 105.8),
        },
    },
    "figure1": {
        "source": "Figure 1 and §2.1: Redis on a 48 GB machine; P1 11M x 4 KB values (45 GB), "
        "P2 delete 80 %, P3 17K x 2 MB values back to 45 GB",
        "dataset_gb": 45,
        "rss_after_delete_gb": 11,
        "linux_bloat_gb": 28,
        "ingens_bloat_gb": 20,
        "outcome": {"Linux-2MB": "OOM", "Ingens": "OOM", "HawkEye": "recovers the bloat, no OOM"},
    },
    "figure5": {
        "source": "Figure 5 and §4 text (fragmented system, one workload)",
        "max_speedup_over_no_promotion": 1.22,
        # HawkEye over Linux and Ingens, whole-run performance
        "hawkeye_over_linux": {"graph500": 1.13, "xsbench": 1.12, "cg.D": 1.06},
        # time saved per promotion, HawkEye / Linux, XSBench
        "time_saved_per_promotion_vs_linux": {"hawkeye-g": 6.7, "hawkeye-pmu": 44},
    },
    "figure6": {
        "source": "Figure 6 and §4 text: time to remove XSBench's MMU overhead",
        "xsbench_hawkeye_s": 300,
        "xsbench_linux_s": "> 1000 (still high after 1000 s)",
    },
    "table5": {
        "source": "Table 5: 3 simultaneous instances, execution time in s (speedup over Linux-4KB)",
        "columns": ["Linux-4KB", "Linux-2MB", "Ingens", "HawkEye-PMU", "HawkEye-G"],
        "rows": {
            "graph500": [
                [2270, 2145, 2243, 1987, 2007],
                [2289, 2252, 2253, 1994, 2013],
                [2293, 2293, 2299, 2012, 2018],
            ],
            "xsbench": [
                [2427, 2415, 2392, 2108, 2098],
                [2437, 2427, 2415, 2109, 2110],
                [2443, 2455, 2456, 2133, 2143],
            ],
        },
        "average_speedup": {
            "graph500": [1.0, 1.02, 1.01, 1.14, 1.13],
            "xsbench": [1.0, 1.0, 1.00, 1.15, 1.15],
        },
    },
    "figure8": {
        "source": "Figure 8 and §4 text: TLB-sensitive workload beside a lightly loaded Redis, "
        "launched before or after it",
        "hawkeye_speedup_over_4kb": (1.15, 1.60),
        "linux": "speedup only when the TLB-sensitive workload starts first (launch order)",
    },
    "table8": {
        "source": "Table 8: fault-bound workloads; Redis in K requests/s (higher is better), "
        "the others in s (lower is better)",
        "columns": ["Linux-4KB", "Linux-2MB", "Ingens-90%", "HawkEye-4KB", "HawkEye-2MB"],
        "rows": {
            "redis": [233, 437, 192, 236, 551],
            "sparsehash": [50.1, 17.2, 51.5, 46.6, 10.6],
            "hacc-io": [6.5, 4.5, 6.6, 6.5, 4.2],
            "jvm": [37.7, 18.6, 52.7, 29.8, 1.37],
            "kvm": [40.6, 9.7, 41.8, 30.2, 0.70],
        },
        "higher_is_better": ["redis"],
    },
    "figure10": {
        "source": "Figure 10 and §4: worst-case cache interference of pre-zeroing at 0.25M pages/s (1 GB/s)",
        "omnetpp_overhead_pct": {"normal stores": 27, "non-temporal": 6},
        "default_rate_pages_per_s": 10000,
    },
    "table9": {
        "source": "Table 9: HawkEye-PMU vs HawkEye-G, time in s (speedup over 4 KB)",
        "columns": ["MMU overhead", "4KB", "HawkEye-PMU", "HawkEye-G"],
        "rows": {
            "random(4GB)": ["60%", 582, 328, 413],
            "sequential(4GB)": ["<1%", 517, 535, 532],
            "cg.D(16GB)": ["39%", 1952, 1202, 1450],
            "mg.D(24GB)": ["<1%", 1363, 1364, 1377],
        },
        "totals": {"set 1": [1099, 863, 945], "set 2": [3315, 2566, 2827]},
    },
    "sampling": {
        "source": "§3.3 (access bits cleared, tested after 1 s, every 30 s) and §4 'Performance "
        "overheads of HawkEye' (access-bit tracking, promotion, de-duplication: negligible)",
        "scan_period_ms": 30000,
        "sample_window_ms": 1000,
        "overhead": "negligible",
    },
}

# Why our numbers differ from the paper's, referred to by key.
WHY = {
    "tcg": "QEMU's software emulation (TCG) does not model the hardware TLB: it caches 4 KB "
    "translations in its own software TLB and walks the guest page table on a miss, so huge "
    "pages help under TCG only through a shorter walk; TLB speedups are not the hardware's.",
    "scale": "The machine is 2 cores and a 1-2 GiB guest on a 24 GB host, not 48 threads and 96 GB; "
    "sizes are scaled down 20-50x and runs last seconds, not the paper's tens of minutes.",
    "zeroing": "Under TCG every guest store is emulated, so zeroing 2 MB costs far more relative to "
    "the rest of a fault than on hardware: the 2 MB fault is slower in absolute terms, "
    "and what pre-zeroing saves is correspondingly larger.",
    "noise": "Throughput under TCG moves by about ±10 % between 20 s windows on the shared 2-core "
    "host; differences below that are noise.",
    "cache": "TCG has no cache model: non-temporal and normal stores differ only in emulation cost, "
    "not in cache pollution, which is what the paper measures.",
    "nopmu": "This host exposes no hardware PMU (no TLB-miss counters): HawkEye-PMU can only run "
    "with synthetic MMU-overhead values.",
}


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def fmt(v, digits=2):
    """A number for a table cell; '-' for None."""
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and (abs(v) >= 100 or v == 0)):
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}f}"


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def fx(r):
    return "-" if r is None else f"{r:.2f}x"


def verdict(ours, paper, tol=0.25):
    """Compare two ratios (both 'x times the baseline').
    'matches': within tol of each other (relative); 'differs' when the
    paper's is about 1 (no effect) and ours is not; 'same direction, size
    differs': both above 1 or both below 1; 'opposite'; 'not run' without
    ours."""
    if ours is None:
        return "not run"
    if paper is None:
        return "-"
    if paper and abs(ours - paper) / abs(paper) <= tol:
        return "matches"
    if abs(paper - 1) <= 0.02:
        return "differs"
    if (ours - 1) * (paper - 1) > 0:
        return "same direction, size differs"
    return "opposite"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return out


def flatten(d, prefix=""):
    """[(dotted key, value)] of a nested dict; lists as JSON."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += flatten(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", json.dumps(v) if isinstance(v, list) else v))
    return out


def recorded(env, extra=None):
    """A 'recorded with' block: kernel, flavour and every knob the result
    carries (nested dicts flattened)."""
    env = dict(env or {})
    env.update({k: v for k, v in (extra or {}).items() if v is not None})
    kernel = env.pop("kernel", None)
    flavour = env.pop("flavour", None)
    env.pop("type", None)
    env.pop("thread_cpu", None)  # shown in "HawkEye's own overhead"
    flat = flatten(env)
    line = f"Recorded: kernel `{kernel or 'not recorded'}`, flavour `{flavour or 'not recorded'}`"
    out = [line + ("." if not flat else ", settings:"), ""]
    if flat:
        out += ["<details><summary>knobs and environment</summary>", ""]
        out += [f"- `{k}` = `{v}`" for k, v in flat]
        out += ["", "</details>", ""]
    return out


def png(results_dir, name, caption):
    if os.path.exists(os.path.join(results_dir, name)):
        return [f"![{caption}]({name})", ""]
    return [f"({name} was not produced: matplotlib missing or the experiment not run.)", ""]


def not_run(title, what):
    return [f"## {title}", "", f"**not run**: {what}", ""]


# ---------------------------------------------------------------------------
# Experiments. Each takes the loaded result (None if missing) and returns
# (markdown lines, claims); a claim is (claim, paper, ours, verdict).
# ---------------------------------------------------------------------------


def section_table1(t, rd):
    title = "Table 1: fault microbenchmark"
    p = PAPER["table1"]
    if t is None:
        return not_run(
            title, "results/table1.json is missing (bench/run-table1 or make demo)."
        ) + paper_table1_lines(), [("2 MB pages cut page faults ~500x", "509x", None, "not run")]
    cfg = {c["label"]: c["metrics"] for c in t.get("configs", [])}
    env = t.get("environment", {})

    def m(label, key, scale=1.0):
        v = cfg.get(label, {}).get(key)
        return None if v is None else v["mean"] / scale

    out = [
        f"## {title}",
        "",
        f"Paper: {p['source']}. Ours: {env.get('mib', '?')} MiB x "
        f"{max((env.get('reps') or {'': '?'}).values(), default='?')} runs in a "
        f"{fmt((env.get('mem_total_kb') or 0) / 1048576, 1)} GiB guest; means per run "
        "(the paper's are totals over 10 runs: compare ratios, not absolute values).",
        "",
    ]
    rows = []
    for i, label in enumerate(p["columns"]):
        have = label in cfg
        rows.append(
            [
                label,
                fmt(m(label, "faults")) if have else "not run",
                fmt(p["faults"][i]),
                fmt(m(label, "avg_fault_us")) if have else "-",
                fmt(p["avg_fault_us"][i]),
                fmt(m(label, "fault_time_us", 1e6)) if have else "-",
                fmt(p["fault_time_s"][i]),
                fmt(m(label, "sys_us", 1e6)) if have else "-",
                fmt(p["sys_s"][i]),
                fmt(m(label, "total_us", 1e6)) if have else "-",
                fmt(p["total_s"][i]),
            ]
        )
    for label in cfg:
        if label not in p["columns"]:
            rows.append(
                [
                    label,
                    fmt(m(label, "faults")),
                    "-",
                    fmt(m(label, "avg_fault_us")),
                    "-",
                    fmt(m(label, "fault_time_us", 1e6)),
                    "-",
                    fmt(m(label, "sys_us", 1e6)),
                    "-",
                    fmt(m(label, "total_us", 1e6)),
                    "-",
                ]
            )
    out += table(
        [
            "config",
            "faults",
            "paper (10 runs)",
            "avg fault (µs)",
            "paper",
            "fault time (s)",
            "paper (10 runs)",
            "system (s)",
            "paper (10 runs)",
            "total (s)",
            "paper (10 runs)",
        ],
        rows,
    )
    out.append("")

    pc = dict(zip(p["columns"], range(len(p["columns"]))))

    def pr(key, a, b):
        return p[key][pc[a]] / p[key][pc[b]]

    comps = [
        (
            "page faults, Linux-4KB / Linux-2MB",
            m("Linux-4KB", "faults"),
            m("Linux-2MB", "faults"),
            pr("faults", "Linux-4KB", "Linux-2MB"),
            "exact: 512 base pages per huge page",
        ),
        (
            "avg fault latency, Linux-2MB / Linux-4KB",
            m("Linux-2MB", "avg_fault_us"),
            m("Linux-4KB", "avg_fault_us"),
            pr("avg_fault_us", "Linux-2MB", "Linux-4KB"),
            "zeroing",
        ),
        (
            "total time, Linux-4KB / Linux-2MB",
            m("Linux-4KB", "total_us"),
            m("Linux-2MB", "total_us"),
            pr("total_s", "Linux-4KB", "Linux-2MB"),
            "zeroing",
        ),
        (
            "avg fault latency, Linux-2MB / HawkEye-2MB",
            m("Linux-2MB", "avg_fault_us"),
            m("HawkEye-2MB", "avg_fault_us"),
            pr("avg_fault_us", "Linux-2MB", "HawkEye-2MB"),
            "zeroing",
        ),
        (
            "total time, Linux-2MB / HawkEye-2MB",
            m("Linux-2MB", "total_us"),
            m("HawkEye-2MB", "total_us"),
            pr("total_s", "Linux-2MB", "HawkEye-2MB"),
            "zeroing",
        ),
        (
            "avg fault latency, Linux-4KB / HawkEye-4KB",
            m("Linux-4KB", "avg_fault_us"),
            m("HawkEye-4KB", "avg_fault_us"),
            pr("avg_fault_us", "Linux-4KB", "HawkEye-4KB"),
            "zeroing",
        ),
        (
            "total time, Linux-4KB / HawkEye-4KB",
            m("Linux-4KB", "total_us"),
            m("HawkEye-4KB", "total_us"),
            pr("total_s", "Linux-4KB", "HawkEye-4KB"),
            "zeroing",
        ),
        (
            "total time, Linux-4KB / Ingens-90%",
            m("Linux-4KB", "total_us"),
            m("Ingens-90%", "total_us"),
            pr("total_s", "Linux-4KB", "Ingens-90%"),
            "scale",
        ),
    ]
    rows = []
    for name, a, b, paper, why in comps:
        ours = ratio(a, b)
        rows.append([name, fx(paper), fx(ours), verdict(ours, paper)])
    out += ["Ratios (the comparison that survives emulation):", ""]
    out += table(["ratio", "paper", "ours", "verdict"], rows)
    out += [
        "",
        "Why they differ: " + WHY["zeroing"] + " Fault counts are exact and match. " + WHY["scale"],
        "",
    ]
    if "HawkEye-2MB" in cfg and "prezeroed" in cfg["HawkEye-2MB"]:
        out += [
            f"HawkEye-2MB found pre-zeroed memory for {fmt(m('HawkEye-2MB', 'prezeroed'))} of "
            f"{fmt(m('HawkEye-2MB', 'faults'))} faults per run (the pool was refilled between runs, "
            "as in the paper).",
            "",
        ]
    out += recorded(env)

    r_faults = ratio(m("Linux-4KB", "faults"), m("Linux-2MB", "faults"))
    r_2m = ratio(m("Linux-2MB", "total_us"), m("HawkEye-2MB", "total_us"))
    r_4k = ratio(m("Linux-4KB", "total_us"), m("HawkEye-4KB", "total_us"))
    r_lat = ratio(m("Linux-2MB", "avg_fault_us"), m("Linux-4KB", "avg_fault_us"))
    claims = [
        (
            "2 MB pages cut page faults ~500x (Table 1)",
            "509x",
            fx(r_faults),
            (
                "reproduced"
                if r_faults and r_faults >= 400
                else ("not run" if r_faults is None else "not reproduced")
            ),
        ),
        (
            "a 2 MB fault is >100x slower than a 4 KB fault with synchronous zeroing (Table 1)",
            "133x",
            fx(r_lat),
            "reproduced" if r_lat and r_lat >= 100 else ("not run" if r_lat is None else "not reproduced"),
        ),
        (
            "pre-zeroing makes 2 MB faults cheap: HawkEye-2MB fastest (Table 1)",
            "5.7x over Linux-2MB",
            fx(r_2m),
            "reproduced" if r_2m and r_2m > 2 else ("not run" if r_2m is None else "not reproduced"),
        ),
        (
            "with 4 KB pages pre-zeroing helps only modestly (Table 1, §3.1)",
            "1.28x",
            fx(r_4k),
            (
                "partly: larger under TCG (zeroing is emulated)"
                if r_4k and r_4k > 1.6
                else (
                    "reproduced" if r_4k and r_4k > 1 else ("not run" if r_4k is None else "not reproduced")
                )
            ),
        ),
    ]
    return out, claims


def section_prezero(z, t8, rd):
    title = "Table 8 and Figure 10: fault-bound workloads and pre-zeroing"
    p = PAPER["table8"]
    claims = []
    if z is None and t8 is None:
        return not_run(title, "results/prezero.json is missing (make demo step 2).") + paper_table8_lines(), [
            ("pre-zeroing speeds up spin-up with huge pages (Table 8)", "13.6x (JVM)", None, "not run")
        ]
    out = [f"## {title}", "", f"Paper: {p['source']}.", ""]
    # Our spin-up / fault-bound rows, from prezero.json (and table8.json when it exists).
    ours = {}
    for src in (z or {}).get("spinup", {}), (t8 or {}).get("workloads", {}):
        for w, d in src.items():
            ours[w] = d
    names = {
        "jvm": "jvm",
        "hashinsert": "sparsehash",
        "sparsehash": "sparsehash",
        "redis": "redis",
        "redis2mb": "redis",
        "hacc-io": "hacc-io",
        "kvm": "kvm",
    }
    rows = []
    seen = set()
    for w, d in ours.items():
        pw = names.get(w)
        seen.add(pw)
        mean = d.get("mean", {})
        higher = pw in p["higher_is_better"]
        l2, h2 = mean.get("Linux-2MB"), mean.get("HawkEye-2MB")
        sp = d.get("speedup") or (ratio(h2, l2) if higher else ratio(l2, h2))
        ppl = p["rows"].get(pw)
        psp = None
        if ppl:
            psp = ppl[4] / ppl[1] if higher else ppl[1] / ppl[4]
        label = w + (f" (paper: {pw})" if pw and pw != w else "") + (f" ({d['unit']})" if d.get("unit") else "")
        rows.append([label] + [fmt(mean.get(c)) for c in p["columns"]] + [fx(sp), fx(psp), verdict(sp, psp)])
    for pw, vals in p["rows"].items():
        if pw not in seen:
            rows.append(
                [pw + " (not run)"]
                + ["-"] * 5
                + [
                    "-",
                    fx(vals[4] / vals[1] if pw in p["higher_is_better"] else vals[1] / vals[4]),
                    "not run",
                ]
            )
    out += table(["workload"] + p["columns"] + ["HawkEye-2MB vs Linux-2MB", "paper", "verdict"], rows)
    out += ["", "Paper values per configuration, for reference:", ""]
    out += table(["workload"] + p["columns"], [[w] + [fmt(v) for v in vals] for w, vals in p["rows"].items()])
    out += [
        "",
        "Our workloads (HEAP: `prezero.sh -m`, recorded in the env): `jvm` is `java -XmsHEAP -XmxHEAP "
        "-XX:+AlwaysPreTouch -version` (the paper's JVM spin-up with a 36 GB heap), `hashinsert` random "
        "inserts into a HEAP table allocated up front (in the spirit of SparseHash), seconds, lower is "
        "better; `redis` SETs of HEAP / 2 values of 2 MB into a fresh server, requests/s (the paper: K "
        "requests/s), higher is better. Ingens-90% is the `ingens` policy (base pages at fault time). Why the speedups are smaller: the paper's "
        "36 GB heap is pure faulting; ours is 768 MiB, so the JVM's own start-up (seconds under TCG) weighs "
        "much more. " + WHY["scale"],
        "",
    ]
    jvm = ours.get("jvm", {})
    sp = jvm.get("speedup")
    claims.append(
        (
            "pre-zeroing cuts JVM spin-up with huge pages ~13.6x (Table 8)",
            "13.6x",
            fx(sp),
            "partly: faster, by less" if sp and sp > 1.5 else ("not run" if sp is None else "not reproduced"),
        )
    )
    hs = ours.get("hashinsert", ours.get("sparsehash", {})).get("speedup")
    claims.append(
        (
            "pre-zeroing speeds up a hash-map insertion benchmark 1.62x (Table 8, SparseHash)",
            "1.62x",
            fx(hs),
            (
                ("reproduced" if verdict(hs, 1.62) == "matches" else "partly: faster, by a different amount")
                if hs and hs > 1
                else ("not run" if hs is None else "not reproduced")
            ),
        )
    )
    if z:
        bw = {b["nontemporal"]: b for b in z.get("bandwidth", [])}
        if bw:
            out += [
                "Background zeroing bandwidth (the paper reports no bandwidth; Figure 10 is about cache "
                "interference, which TCG cannot show):",
                "",
            ]
            out += table(
                ["stores", "MB zeroed", "MB/s"],
                [
                    ["non-temporal" if k else "normal (clear_page)", fmt(b.get("mb")), fmt(b.get("mb_per_s"))]
                    for k, b in sorted(bw.items(), reverse=True)
                ],
            )
            out += [
                "",
                WHY["cache"] + f" The paper's figure: omnetpp slows down "
                f"{PAPER['figure10']['omnetpp_overhead_pct']['normal stores']} % with normal stores and "
                f"{PAPER['figure10']['omnetpp_overhead_pct']['non-temporal']} % with non-temporal ones while "
                "another core zeroes at 1 GB/s.",
                "",
            ]
        rates = z.get("rate", [])
        if rates:
            out += ["Rate limit (paper default: 10,000 pages/s ≈ 40 MB/s):", ""]
            out += table(
                ["knob (pages/s)", "observed (pages/s)", "observed / knob"],
                [
                    [
                        fmt(r["knob_pages_per_s"]),
                        fmt(r["observed_pages_per_s"]),
                        fx(ratio(r["observed_pages_per_s"], r["knob_pages_per_s"])),
                    ]
                    for r in rates
                ],
            )
            out.append("")
            ok = all(
                0.9 <= (ratio(r["observed_pages_per_s"], r["knob_pages_per_s"]) or 0) <= 1.05 for r in rates
            )
            claims.append(
                (
                    "the zeroing thread keeps to its rate limit (§3.1)",
                    "10k pages/s",
                    "within 10 %" if ok else "off by more than 10 %",
                    "reproduced" if ok else "not reproduced",
                )
            )
        out += recorded((z or {}).get("env"), {"flavour": (z or {}).get("env", {}).get("flavour")})
    if t8 is not None:
        out += recorded(t8.get("environment") or t8.get("env"))
    return out, claims


def section_bloat(b, rd, bt=None):
    title = "Figure 1 and Table 7: Redis memory bloat and its recovery"
    p7, p1 = PAPER["table7"], PAPER["figure1"]
    if b is None:
        return not_run(title, "results/bloat.json is missing (make demo step 3).") + paper_table7_lines(), [
            (
                "HawkEye recovers bloat under pressure to Linux-4KB's footprint (Table 7)",
                "1.00x",
                None,
                "not run",
            )
        ]
    c = b.get("configs", {})
    env = b.get("env", {})
    gib = 1048576.0

    def g(label, key):
        v = c.get(label, {}).get(key)
        return None if v is None else v

    out = [
        f"## {title}",
        "",
        f"Paper: {p7['source']}; {p1['source']}. Ours: Debian redis-server "
        f"{env.get('redis', '?')} in a {fmt((env.get('mem_total_kb') or 0) / gib, 1)} GiB guest with "
        f"{fmt((env.get('swap_total_kb') or 0) / gib, 1)} GiB swap: P1 {fmt(env.get('keys'))} x "
        f"{env.get('value_size', '?')}-byte values ({env.get('data_pct', '?')} % of memory), P2 delete "
        f"{env.get('del_pct', '?')} %, T1 GETs (no pressure), P3 2 MB values back to the P1 size, "
        "T2 GETs (pressure). Memory is the server's RSS + swap.",
        "",
    ]
    out += png(rd, "bloat-rss.png", "Figure 1: Redis RSS over time")
    # The paper's Table 7 memory is after the deletion (no pressure), except
    # for "HawkEye (mem. pressure)": after recovery. Ours shows both states:
    # after P2 (deletion, no pressure) and after P3 (pressure), where all
    # configurations hold the same data.
    rows = []
    mapping = [
        ("Linux-4KB", "Linux-4KB", "throughput_no_pressure"),
        ("Linux-2MB", "Linux-2MB", "throughput_no_pressure"),
        ("Ingens-90%", "Ingens-90", "throughput_no_pressure"),
        ("Ingens-50%", "Ingens-50", "throughput_no_pressure"),
        ("HawkEye (no mem. pressure)", "HawkEye", "throughput_no_pressure"),
        ("HawkEye (mem. pressure)", "HawkEye", "throughput_under_pressure"),
    ]
    for plabel, ours, tkey in mapping:
        pm, pt = p7["rows"][plabel]
        if ours not in c:
            rows.append([plabel, "not run", "-", fmt(pm), "-", fmt(pt), "-"])
            continue
        nop, pres, swap = (
            g(ours, "memory_no_pressure_kb"),
            g(ours, "memory_under_pressure_kb"),
            g(ours, "max_server_swap_kb"),
        )
        rows.append(
            [
                plabel,
                fmt(nop / gib if nop is not None else None),
                fmt(pres / gib if pres is not None else None),
                fmt(pm),
                fmt((g(ours, tkey) or 0) / 1000),
                fmt(pt),
                f"swap {fmt(swap / 1024 if swap is not None else None)} MiB, "
                f"OOM kills {fmt(g(ours, 'oom_kills'))}, splits {fmt(g(ours, 'thp_split'))}",
            ]
        )
    out += table(
        [
            "configuration",
            "GiB after delete (P2)",
            "GiB under pressure (P3)",
            "paper (GB)",
            "GET K/s",
            "paper K/s",
            "ours: server swap, OOM, splits",
        ],
        rows,
    )
    out += [
        "",
        'Throughput: without pressure (T1) except the "mem. pressure" row (T2). The paper\'s memory '
        'column is after the deletion, except HawkEye\'s "mem. pressure" row (after recovery): compare it '
        "with our P2 column for the Linux rows and with our P3 column for HawkEye under pressure.",
        "",
    ]
    l4d = g("Linux-4KB", "memory_no_pressure_kb")
    l2d = g("Linux-2MB", "memory_no_pressure_kb")
    l4 = g("Linux-4KB", "memory_under_pressure_kb")
    l2 = g("Linux-2MB", "memory_under_pressure_kb")
    hp = g("HawkEye", "memory_under_pressure_kb")
    t2 = g("Linux-2MB", "throughput_no_pressure")
    th = g("HawkEye", "throughput_no_pressure")
    t4 = g("Linux-4KB", "throughput_no_pressure")
    pr = p7["rows"]
    comps = [
        # (ratio, ours, paper, tolerance): 10 % on memory (issue 4's goal),
        # 2 % on throughput (the paper's HawkEye is within 0.2 % of Linux-2MB)
        (
            "memory after delete, Linux-2MB / Linux-4KB",
            ratio(l2d, l4d),
            pr["Linux-2MB"][0] / pr["Linux-4KB"][0],
            0.10,
        ),
        ("memory under pressure, Linux-2MB / Linux-4KB", ratio(l2, l4), None, 0.10),
        (
            "memory under pressure, HawkEye / Linux-4KB",
            ratio(hp, l4),
            pr["HawkEye (mem. pressure)"][0] / pr["Linux-4KB"][0],
            0.10,
        ),
        (
            "throughput without pressure, HawkEye / Linux-2MB",
            ratio(th, t2),
            pr["HawkEye (no mem. pressure)"][1] / pr["Linux-2MB"][1],
            0.02,
        ),
        (
            "throughput without pressure, Linux-4KB / Linux-2MB",
            ratio(t4, t2),
            pr["Linux-4KB"][1] / pr["Linux-2MB"][1],
            0.02,
        ),
    ]
    out += table(
        ["ratio", "paper", "ours", "verdict"],
        [
            [n, fx(pv) if pv else "OOM (Figure 1)", fx(o), verdict(o, pv, tol=tol) if pv else "-"]
            for n, o, pv, tol in comps
        ],
    )
    r_hp = ratio(hp, l4)
    if r_hp is not None and r_hp <= 1.10:
        memory_note = (
            f"HawkEye's footprint under pressure is within 10 % of Linux-4KB's ({fx(r_hp)}; the paper: "
            "equal). The rest is the watermarks at work: recovery stops below the low watermark (70 % in "
            "use), so a small guest keeps some bloat."
        )
    else:
        memory_note = (
            f"What does not: HawkEye's footprint under pressure stays above Linux-4KB's ({fx(r_hp)}), "
            "because jemalloc leaves each 2 MB value's unused tail in a huge page with fewer zero subpages "
            "than the split threshold (issue 4), and recovery stops at the low watermark (70 % in use), "
            "which a 2 GiB guest reaches before all bloat is gone."
        )
    out += [
        "",
        "What matches: Linux-2MB keeps the bloat it created (khugepaged even collapses the freed holes "
        "back) and is pushed into swap under pressure (the paper's Linux hits OOM after a "
        f"{p1['linux_bloat_gb']} GB bloat); HawkEye keeps huge pages while memory is free, splits mostly-zero "
        "huge pages under pressure and stays out of swap. "
        + memory_note
        + " "
        + WHY["noise"]
        + " "
        + WHY["tcg"],
        "",
    ]
    out += recorded(env)
    r_mem = ratio(hp, l4)
    r_l2 = ratio(l2d, l4d)
    r_t = ratio(th, t2)
    swap2 = g("Linux-2MB", "max_server_swap_kb") or 0
    swaph = g("HawkEye", "max_server_swap_kb") or 0
    claims = [
        (
            "Linux-2MB bloats: about 2x Linux-4KB's memory (Table 7, Figure 1)",
            "2.05x",
            fx(r_l2),
            (
                "reproduced"
                if r_l2 and r_l2 >= 1.8
                else (
                    "partly: bloats, by less"
                    if r_l2 and r_l2 > 1.2
                    else ("not run" if r_l2 is None else "not reproduced")
                )
            ),
        ),
        (
            "HawkEye recovers bloat under pressure to Linux-4KB's footprint (Table 7)",
            "1.00x",
            fx(r_mem),
            (
                "reproduced"
                if r_mem and r_mem <= 1.10
                else (
                    "partly: recovers some, not all"
                    if r_mem and r_l2 and r_mem < r_l2
                    else ("not run" if r_mem is None else "not reproduced")
                )
            ),
        ),
        (
            "Linux cannot recover bloat and runs out of memory; HawkEye does not (Figure 1)",
            "OOM vs none",
            f"Linux-2MB swapped {fmt(swap2 / 1024)} MiB, HawkEye {fmt(swaph / 1024)} MiB",
            (
                "reproduced (as swap, not OOM: the guest has swap)"
                if swap2 > 0 and swaph == 0
                else ("not run" if "HawkEye" not in c else "partly")
            ),
        ),
        (
            "HawkEye keeps Linux-2MB's throughput while memory is free (Table 7)",
            "0.998x",
            fx(r_t),
            (
                "not run"
                if r_t is None
                else "reproduced"
                if 0.98 <= r_t <= 1.10
                # Far above 1: one run each cannot show a 2 % bound.
                else "partly: not slower, but one run each is within TCG noise"
                if r_t > 1.10
                else "not reproduced (TCG noise ±10 %)"
            ),
        ),
    ]
    rep = (bt or {}).get("repeated") or {}
    if rep.get("hawkeye_vs_2mb_throughput") is not None:
        t = rep["throughput_no_pressure"]
        r = rep["hawkeye_vs_2mb_throughput"]
        spread = max(t[n]["stdev"] / t[n]["mean"] for n in ("HawkEye", "Linux-2MB"))
        out += [
            "Throughput without pressure, interleaved repetitions (results/bloat-throughput.json, one boot, "
            "P1 + P2 + T1 only):",
            "",
        ]
        out += table(
            ["configuration", "GET K/s per run", "mean", "stdev"],
            [[n, ", ".join(fmt(v / 1000) for v in d["runs"].values()), fmt(d["mean"] / 1000),
              fmt(d["stdev"] / 1000)] for n, d in t.items()],
        )
        huge = {n: [c.get("huge_no_pressure_kb") for lbl, c in bt.get("configs", {}).items()
                    if lbl.rsplit("/", 1)[0] == n and c.get("huge_no_pressure_kb") is not None]
                for n in ("HawkEye", "Linux-2MB")}
        out += ["", f"HawkEye / Linux-2MB: {fx(r)} (pairs: "
                + ", ".join(fx(v) for v in rep["hawkeye_vs_2mb_throughput_pairs"].values())
                + f"); run-to-run spread (stdev / mean) up to {100 * spread:.0f} %, wider than the 2 % "
                "the paper resolves: with a few runs under TCG this shows only that HawkEye is not "
                "measurably slower."]
        if all(huge.values()):
            h_he, h_l2 = (sum(huge[n]) / len(huge[n]) / gib for n in ("HawkEye", "Linux-2MB"))
            held = f"During T1 HawkEye held {fmt(h_he)} GiB of huge pages, Linux-2MB {fmt(h_l2)}"
            if h_he >= 0.9 * h_l2:
                out += [held + ": khugepaged collapsed the ranges jemalloc emptied in P2 back in both "
                        "(HawkEye limits khugepaged only in processes bloat recovery has split; admin "
                        "guide, \"No re-promotion\"), so the two differ in HawkEye's threads, not in "
                        "huge pages."]
            else:
                out += [held + ": khugepaged did not collapse the ranges jemalloc emptied in P2 back "
                        "under HawkEye (admin guide, \"No re-promotion\"). Under TCG huge pages barely "
                        "change GET throughput; on hardware this comparison could differ."]
        out += [""]
        out += recorded((bt or {}).get("env"))
        claims.append((
            "HawkEye keeps Linux-2MB's throughput while memory is free, interleaved repetitions (Table 7)",
            "0.998x",
            f"{fx(r)} (mean of {len(t['HawkEye']['runs'])} runs each, spread ±{100 * spread:.0f} %)",
            ("reproduced" if spread <= 0.02 else
             f"reproduced: not slower on average (the spread, ±{100 * spread:.0f} %, is wider than 2 %)")
            if r >= 0.98 else (
                "not reproduced (within the run-to-run spread)" if 1 - r <= spread
                else "not reproduced"),
        ))
    return out, claims


def section_promotion(pm, rd):
    title = "Figures 5 and 6: promoting hot regions first"
    p5, p6 = PAPER["figure5"], PAPER["figure6"]
    if pm is None:
        return not_run(title, "results/promotion.json is missing (make demo step 4)."), [
            ("HawkEye-G promotes hot regions first (Figure 6)", "≈300 s vs >1000 s", None, "not run")
        ]
    env = pm.get("environment", {})
    out = [
        f"## {title}",
        "",
        f"Paper: {p5['source']}; {p6['source']}. Ours: each workload in a fragmented "
        f"guest ({fmt((env.get('mem_total_kb') or 0) / 1048576, 1)} GiB), {env.get('mb', '?')} MiB with the "
        f"hot {fmt(100 * (env.get('hot_fraction') or 0), 1)} % at high addresses, {env.get('duration', '?')} s, "
        "one policy after another in the same boot"
        + (", QUICK sizes" if env.get("quick") else "")
        + ". t90: seconds until 90 % of the hot regions are "
        "huge; speedup: work done over the run / work with no promotion.",
        "",
    ]
    out += png(rd, "promotion.png", "Figures 5-6: hot-set coverage over time")
    rows = []
    claims = []
    for w, wd in pm.get("workloads", {}).items():
        pol = wd.get("policies", {})
        for name, d in pol.items():
            rows.append(
                [
                    w,
                    name,
                    fmt(d.get("speedup")),
                    fmt(d.get("t90")),
                    fmt(d.get("promotions_to_90")),
                    fmt(d.get("promotions_total")),
                    fmt(d.get("time_saved_per_promotion_ms")),
                ]
            )
        lin, hg = pol.get("linux", {}), pol.get("hawkeye-g", {})
        t90 = ratio(lin.get("t90"), hg.get("t90"))
        over = ratio(hg.get("speedup"), lin.get("speedup"))
        tsp = ratio(hg.get("time_saved_per_promotion_ms"), lin.get("time_saved_per_promotion_ms"))
        pw = p5["hawkeye_over_linux"].get(w)
        claims.append(
            (
                f"{w}: HawkEye-G covers the hot regions far sooner than Linux (Figure 6)",
                "≈300 s vs >1000 s (XSBench)",
                f"t90 {fmt(hg.get('t90'))} s vs {fmt(lin.get('t90'))} s " f"({fx(t90)})",
                (
                    "reproduced"
                    if t90 and t90 >= 3
                    else ("not run" if t90 is None else "partly" if t90 > 1 else "not reproduced")
                ),
            )
        )
        claims.append(
            (
                f"{w}: HawkEye-G runs faster than Linux over the run (Figure 5)",
                fx(pw),
                fx(over),
                (
                    "not run"
                    if over is None
                    else ("reproduced" if over > 1.02 else "not reproduced (TCG: no TLB; short run)")
                ),
            )
        )
        if w == "xsbench":
            claims.append(
                (
                    "xsbench: time saved per promotion, HawkEye-G / Linux (Figure 5)",
                    fx(p5["time_saved_per_promotion_vs_linux"]["hawkeye-g"]),
                    fx(tsp),
                    (
                        "not run"
                        if tsp is None
                        else (
                            "reproduced"
                            if tsp > 2
                            else "not reproduced (TCG: no TLB; both promote everything)"
                        )
                    ),
                )
            )
    out += table(
        [
            "workload",
            "policy",
            "speedup vs none",
            "t90 (s)",
            "promotions to 90 %",
            "promotions",
            "time saved / promotion (ms)",
        ],
        rows,
    )
    out += [
        "",
        f"Paper: HawkEye over Linux {', '.join(f'{k} {fx(v)}' for k, v in p5['hawkeye_over_linux'].items())}; "
        f"up to {fx(p5['max_speedup_over_no_promotion'])} over no promotion; time saved per promotion "
        f"HawkEye-G {fx(p5['time_saved_per_promotion_vs_linux']['hawkeye-g'])} and HawkEye-PMU "
        f"{fx(p5['time_saved_per_promotion_vs_linux']['hawkeye-pmu'])} Linux's (XSBench); XSBench's MMU "
        f"overhead gone after ≈{p6['xsbench_hawkeye_s']} s with HawkEye, {p6['xsbench_linux_s']} with Linux.",
        "",
        "What matches: the order. HawkEye-G promotes the hot regions first (about one promotion per hot "
        "region), Linux's khugepaged walks from low addresses and reaches the hot end last; Ingens also goes "
        "by address (its utilisation rule admits every fully populated region). FreeBSD-style reservations "
        "promote nothing here, as FreeBSD would not: a reservation is made at a region's first fault, and "
        "the workloads fault their memory while the fragmenter leaves no free 2 MB block, so every region "
        "is populated without one (the paper's point about reservations: no help once memory is "
        "fragmented at allocation time). What does not: "
        "the run-time benefit. " + WHY["tcg"] + " Our runs are also short enough that Linux promotes "
        "everything before the end, so the whole-run speedups converge, and the time saved per promotion "
        "is not larger for HawkEye-G. " + WHY["scale"],
        "",
    ]
    for w, wd in pm.get("workloads", {}).items():
        if wd.get("comparison"):
            out.append(
                f"- {w}: "
                + ", ".join(
                    f"{k} = {fmt(v) if not isinstance(v, bool) else v}" for k, v in wd["comparison"].items()
                )
            )
    out.append("")
    out += recorded(env)
    return out, claims


def section_fairness(f, rd):
    title = "Table 5 and Figure 7: three identical instances"
    p = PAPER["table5"]
    if f is None:
        return not_run(title, "results/fairness.json is missing (make demo step 4).") + [
            f"Paper: {p['source']}.",
            "",
        ] + paper_table5_lines(), [
            ("HawkEye shares huge pages fairly among identical instances (Figure 7)", "", None, "not run")
        ]
    env = f.get("environment", {})
    out = [
        f"## {title}",
        "",
        f"Paper: {p['source']}. Ours: three instances of each workload "
        f"({env.get('fair_mb', '?')} MiB each) started together in a fragmented guest, per policy in the same "
        "boot. Huge-page difference: the largest gap, at any time, between the instances' huge page counts.",
        "",
    ]
    out += png(rd, "fairness.png", "Figure 7: huge pages per instance over time")
    rows = []
    claims = []
    for w, wd in f.get("workloads", {}).items():
        pol = wd.get("policies", {})
        for name, d in pol.items():
            inst = d.get("instances", [])
            rows.append(
                [
                    w,
                    name,
                    ", ".join(fmt(i.get("seconds")) for i in inst),
                    fmt(d.get("mean_seconds")),
                    fmt(d.get("completion_spread_s")),
                    ", ".join(fmt(i.get("final_huge")) for i in inst),
                    fmt(d.get("max_huge_difference")),
                ]
            )
        lin, hg = pol.get("linux", {}), pol.get("hawkeye-g", {})
        dl, dh = lin.get("max_huge_difference"), hg.get("max_huge_difference")
        claims.append(
            (
                f"{w}: HawkEye-G shares promotions among identical instances, Linux serves one at a time "
                "(Figure 7)",
                "fair vs one at a time",
                f"max huge-page gap {fmt(dh)} vs {fmt(dl)}",
                "not run" if dl is None or dh is None else ("reproduced" if dh < dl else "not reproduced"),
            )
        )
        sp = ratio(lin.get("mean_seconds"), hg.get("mean_seconds"))
        pav = p["average_speedup"].get(w)
        psp = pav[4] / pav[1] if pav else None
        claims.append(
            (
                f"{w}: HawkEye-G's instances finish sooner than Linux's (Table 5)",
                fx(psp),
                fx(sp),
                (
                    "not run"
                    if sp is None
                    else (
                        "reproduced"
                        if sp > 1.02
                        else "not reproduced (TCG: no TLB; sampling costs CPU on 2 cores)"
                    )
                ),
            )
        )
    out += table(
        [
            "workload",
            "policy",
            "seconds per instance",
            "mean (s)",
            "finish spread (s)",
            "huge pages at end",
            "max huge-page gap",
        ],
        rows,
    )
    out += ["", "Paper (Table 5), seconds (speedup over Linux-4KB):", ""] + paper_table5_lines()
    out += [
        "",
        "What matches: the sharing. Under Linux one instance gets its huge pages while the others wait; "
        "under HawkEye-G the three grow together (Figure 7). What does not: the time. "
        + WHY["tcg"]
        + " On 2 cores three instances plus the sampling thread compete for CPU, so HawkEye-G's sampling "
        "shows up as run time. " + WHY["scale"],
        "",
    ]
    out += recorded(env)
    return out, claims


def section_table9(pm, rd):
    """Table 9 from results/pmu.json (bench/promotion.sh -x pmu): a
    TLB-sensitive workload (random) beside a TLB-insensitive one
    (sequential), under hawkeye-g and hawkeye-pmu."""
    title = "Table 9: HawkEye-G vs HawkEye-PMU"
    p = PAPER["table9"]
    env = pm.get("environment", {})
    out = [f"## {title}", ""] + paper_table9_lines()
    out += png(rd, "pmu.png", "Table 9: huge pages of the two workloads over time, per policy")
    rows, claims = [], []
    for w, wd in pm.get("workloads", {}).items():
        pol = wd.get("policies", {})
        for name, d in pol.items():
            ov = d.get("overhead") or {}
            rnd, seq = d.get("random") or {}, d.get("sequential") or {}
            rows.append(
                [
                    w,
                    name,
                    ov.get("source") or "access coverage",
                    fmt(rnd.get("t90")),
                    fmt(rnd.get("t_full")),
                    fmt(rnd.get("rate")),
                    fmt(d.get("sequential_huge_by_random_full")),
                    fmt(seq.get("final_huge")),
                    fmt(seq.get("rate")),
                ]
            )
        g, u = pol.get("hawkeye-g", {}), pol.get("hawkeye-pmu", {})
        cmp_ = wd.get("comparison", {})
        r = cmp_.get("t_full_g_over_pmu")
        sg, su = g.get("sequential_huge_by_random_full"), u.get("sequential_huge_by_random_full")
        synthetic = (u.get("overhead") or {}).get("synthetic")
        claims.append(
            (
                f"{w}: HawkEye-PMU gives huge pages to the TLB-sensitive process first, HawkEye-G "
                "shares them with the insensitive one (Table 9)",
                "PMU 1.27x vs G 1.16x over 4 KB",
                f"sensitive one fully huge {fx(r)} sooner; insensitive one's huge pages by then "
                f"{fmt(su)} (PMU) vs {fmt(sg)} (G)",
                (
                    "not run"
                    if r is None
                    else (
                        "reproduced" + (" (synthetic MMU overheads: no PMU here)" if synthetic else "")
                        if r > 1.5 and (su or 0) < (sg or 0)
                        else "not reproduced"
                    )
                ),
            )
        )
        rr = cmp_.get("random_rate_pmu_over_g")
        claims.append(
            (
                f"{w}: the TLB-sensitive workload runs faster under HawkEye-PMU (Table 9)",
                fx(p["rows"]["random(4GB)"][3] / p["rows"]["random(4GB)"][2]),
                fx(rr),
                "not run" if rr is None else ("reproduced" if rr > 1.02 else "not reproduced (TCG: no TLB)"),
            )
        )
    out += table(
        [
            "workloads",
            "policy",
            "MMU overhead from",
            "sensitive: t90 (s)",
            "sensitive: all huge (s)",
            "sensitive: rate",
            "insensitive: huge pages by then",
            "insensitive: huge at end",
            "insensitive: rate",
        ],
        rows,
    )
    out.append("")
    for w, wd in pm.get("workloads", {}).items():
        if wd.get("comparison"):
            out.append(f"- {w}: " + ", ".join(f"{k} = {fmt(v)}" for k, v in wd["comparison"].items()))
    for u in pm.get("workloads", {}).values():
        m = ((u.get("policies", {}).get("hawkeye-pmu") or {}).get("overhead") or {}).get("pmud_message")
        if m:
            out += ["", f"HawkEye-PMU's overheads: {m.strip()}"]
            break
    out += [
        "",
        "What matches: the choice. Told which process has the high MMU overhead, HawkEye-PMU promotes "
        "that process's regions first and leaves the TLB-insensitive one alone, while HawkEye-G, seeing equal "
        "access coverage, serves both. What does not: the speedup. " + WHY["tcg"] + " " + WHY["nopmu"],
        "",
    ]
    out += recorded(env)
    return out, claims


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
                [
                    pol,
                    fmt(d.get("working_set_mib")),
                    fmt(d.get("seconds")),
                    fmt(d.get("scan_period_ms")),
                    fmt(d.get("sample_window_ms")),
                    fmt(d.get("regions_sampled")),
                    fmt(d.get("thread_cpu_s")),
                    fmt(d.get("pct_of_one_cpu"), 3),
                ]
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


def section_order(o, rd):
    title = "Figure 8: a TLB-sensitive workload beside a lightly loaded Redis"
    claim = "HawkEye helps the TLB-sensitive workload whatever the launch order (Figure 8)"
    if o is None:
        return not_run(title, "results/order.json is missing (make demo step 4).") + paper_figure8_lines(), [
            (claim, "1.15-1.60x", None, "not run")
        ]
    env = o.get("environment", {})
    pol = o.get("policies", {})
    run = next((r for res in pol.values() for r in res.values() if isinstance(r, dict)), {})
    out = [f"## {title}", ""] + paper_figure8_lines()
    out += [
        f"Ours: xsbench ({fmt(run.get('regions'), 0)} regions, the top {fmt(run.get('hot_regions'), 0)} hot) "
        "beside a Redis server holding 1 KB values and serving a light, steady GET load, in a fragmented "
        "guest; xsbench launched before Redis (workload-first) or after it (redis-first); THP `always` so "
        "that Redis's heap is eligible too; one policy after another in the same boot. t90: seconds until "
        "90 % of xsbench's hot regions are huge (≥: never within the run); speedup: xsbench's work rate over "
        "the `none` (4 KB) run.",
        "",
    ]
    out += png(rd, "order.png", "Figure 8: xsbench's hot coverage, by policy and launch order")
    rows = []
    for p, res in pol.items():
        for order in ("workload-first", "redis-first"):
            r = res.get(order)
            if not r:
                continue
            rows.append([p, order, fx(r.get("speedup")),
                         ("≥" if r.get("t90_lower_bound") else "") + fmt(r.get("t90"), 1),
                         fmt(100 * (r.get("final_coverage") or 0), 0) + " %", fmt(r.get("final_huge"), 0),
                         fmt((r.get("redis_anon_huge_kb_end") or 0) / 1024, 0),
                         fmt(r.get("redis_get_per_s"), 0)])
    out += table(["policy", "launch order", "xsbench speedup", "t90 (s)", "hot coverage at end",
                  "xsbench huge pages", "Redis huge (MiB)", "Redis GET/s"], rows)
    out.append("")
    eff = {p: res.get("t90_redis_first_over_workload_first") for p, res in pol.items()}
    eff = {p: v for p, v in eff.items() if v is not None}
    if eff:
        out += ["Launch-order effect on t90 (redis-first / workload-first; 1.00 = order does not matter): "
                + ", ".join(f"{p} {fx(v)}" for p, v in eff.items()) + ".", ""]
    out += ["What the paper shows and we test: Linux's khugepaged serves processes in the order they "
            "registered, so the TLB-sensitive workload waits behind Redis when Redis started first; "
            "HawkEye promotes by access coverage, so the launch order does not matter. " + WHY["tcg"], ""]
    claims = []
    lin, hg = eff.get("linux"), eff.get("hawkeye-g")
    claims.append((
        "Linux's promotion depends on the launch order, HawkEye-G's does not (Figure 8)",
        "Linux: only when launched first",
        "t90 redis-first / workload-first: " + ", ".join(f"{p} {fx(v)}" for p, v in eff.items()),
        # HawkEye-G: Redis first must not delay it (a ratio under 1 is
        # the sampling period's phase, not the order).
        "not run" if lin is None or hg is None else (
            "reproduced" if lin >= 1.3 and hg <= 1.3 else "not reproduced"),
    ))
    sp = [r.get("speedup") for r in pol.get("hawkeye-g", {}).values()
          if isinstance(r, dict) and r.get("speedup")]
    claims.append((
        claim, "1.15-1.60x", ", ".join(fx(v) for v in sp) or None,
        "not run" if not sp else ("reproduced" if min(sp) >= 1.1 else "not reproduced (TCG: no TLB)"),
    ))
    out += recorded(env)
    return out, claims


def section_future(title, data, paper_lines, missing, extra_claim=None):
    """Experiments still to land: the paper's table and, when the result
    exists, its numbers as recorded."""
    if data is None:
        out = not_run(title, missing)
        out += paper_lines
        return out, [extra_claim] if extra_claim else []
    out = [f"## {title}", ""] + paper_lines + ["Ours:", ""] + generic_numbers(data)
    out += recorded(data.get("environment") or data.get("env"))
    return out, []


def generic_numbers(d, prefix="", depth=0):
    """A nested dict's numbers as a bullet list (for results this script
    does not know the shape of yet)."""
    out = []
    if depth > 3:
        return out
    for k, v in d.items():
        if k in ("environment", "env", "series"):
            continue
        if isinstance(v, dict):
            out += generic_numbers(v, f"{prefix}{k}.", depth + 1)
        elif isinstance(v, (int, float, str, bool)) or v is None:
            out.append(f"- `{prefix}{k}`: {fmt(v) if not isinstance(v, bool) else v}")
    return out if depth else out + [""]


def paper_table1_lines():
    p = PAPER["table1"]
    keys = [
        ("faults", "page faults"),
        ("fault_time_s", "total page fault time (s)"),
        ("avg_fault_us", "avg page fault time (µs)"),
        ("sys_s", "system time (s)"),
        ("total_s", "total time (s)"),
    ]
    return (
        [f"Paper: {p['source']}.", ""]
        + table(["event"] + p["columns"], [[n] + [fmt(v) for v in p[k]] for k, n in keys])
        + [""]
    )


def paper_table7_lines():
    p = PAPER["table7"]
    return (
        [f"Paper: {p['source']}.", ""]
        + table(
            ["kernel", "memory (GB)", "throughput (K/s)"],
            [[k, fmt(m), fmt(t)] for k, (m, t) in p["rows"].items()],
        )
        + [""]
    )


def paper_table5_lines():
    p = PAPER["table5"]
    prow = []
    for w, insts in p["rows"].items():
        for i, vals in enumerate(insts):
            prow.append(
                [f"{w}-{i + 1}"]
                + [f"{v}" + (f" ({vals[0] / v:.2f})" if j else "") for j, v in enumerate(vals)]
            )
    return table(["instance"] + p["columns"], prow) + [""]


def paper_table8_lines():
    p = PAPER["table8"]
    return (
        [f"Paper: {p['source']}.", ""]
        + table(["workload"] + p["columns"], [[w] + [fmt(v) for v in vals] for w, vals in p["rows"].items()])
        + [""]
    )


def paper_table9_lines():
    p = PAPER["table9"]
    rows = [[w] + [fmt(v) for v in vals] for w, vals in p["rows"].items()]
    rows += [[k, ""] + [fmt(v) for v in vals] for k, vals in p["totals"].items()]
    return [f"Paper: {p['source']}. " + WHY["nopmu"], ""] + table(["workload"] + p["columns"], rows) + [""]


def paper_figure8_lines():
    p = PAPER["figure8"]
    lo, hi = p["hawkeye_speedup_over_4kb"]
    return [
        f"Paper: {p['source']}: HawkEye {fx(lo)}-{fx(hi)} over 4 KB pages whatever the order; "
        f"Linux: {p['linux']}.",
        "",
    ]


# ---------------------------------------------------------------------------
# Loading and the whole report
# ---------------------------------------------------------------------------

KNOWN = {
    "pmu.json",
    "table1.json",
    "prezero.json",
    "bloat.json",
    "bloat-throughput.json",
    "promotion.json",
    "fairness.json",
    "order.json",
    "table8.json",
    "table9.json",
    "overhead.json",
}


def load(results_dir):
    """{name: parsed} for every known result that exists; sampling.jsonl
    as a list of lines; 'other': {file: parsed} for unknown *.json."""
    res = {}
    for name in KNOWN:
        path = os.path.join(results_dir, name)
        if os.path.exists(path):
            try:
                with open(path) as f:
                    res[name[:-5]] = json.load(f)
            except (OSError, ValueError) as e:
                res.setdefault("errors", []).append(f"{name}: {e}")
    path = os.path.join(results_dir, "sampling.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            res["sampling"] = [json.loads(ln) for ln in f if ln.strip()]
    res["other"] = {}
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        name = os.path.basename(path)
        if name not in KNOWN:
            try:
                with open(path) as f:
                    res["other"][name] = json.load(f)
            except (OSError, ValueError) as e:
                res.setdefault("errors", []).append(f"{name}: {e}")
    res["pngs"] = sorted(os.path.basename(p) for p in glob.glob(os.path.join(results_dir, "*.png")))
    return res


def verdict_counts(claims):
    """How many claims are reproduced, partly, not reproduced, not run."""
    counts = {"reproduced": 0, "partly": 0, "not reproduced": 0, "not run": 0}
    for c in claims:
        for k in ("not reproduced", "not run", "partly", "reproduced"):
            if c[3].startswith(k):
                counts[k] += 1
                break
    return counts


def kernels(res):
    ks = set()
    for k, v in res.items():
        if isinstance(v, dict):
            for e in (v.get("environment"), v.get("env")):
                if isinstance(e, dict) and e.get("kernel"):
                    ks.add(e["kernel"])
    for d in res.get("sampling") or []:
        if d.get("kernel"):
            ks.add(d["kernel"])
    return sorted(ks)


def build_report(res, results_dir):
    out = [
        "# HawkEye on Linux 6.12: the paper's evaluation, side by side",
        "",
        "Generated by `bench/report.py` from the result files in `results/` (each written by `make demo`). "
        f"Paper machine: {PAPER['machine']}. Ours: QEMU guests (1-2 GiB, 2 vCPUs) under software emulation "
        "(TCG) on a 2-core, 24 GB host.",
        "",
        "Read the ratios, not the absolute times: " + WHY["tcg"] + " Fault counts, page counts, memory "
        "sizes, zeroing costs and the order of promotions are real.",
        "",
    ]
    ks = kernels(res)
    if ks:
        out += [f"Kernels recorded by the results: {', '.join(f'`{k}`' for k in ks)}.", ""]
    sections = []
    claims = []
    for fn in (
        lambda: section_table1(res.get("table1"), results_dir),
        lambda: section_prezero(res.get("prezero"), res.get("table8"), results_dir),
        lambda: section_bloat(res.get("bloat"), results_dir, res.get("bloat-throughput")),
        lambda: section_promotion(res.get("promotion"), results_dir),
        lambda: section_fairness(res.get("fairness"), results_dir),
        lambda: section_order(res.get("order"), results_dir),
        lambda: (
            section_table9(res.get("pmu") or res.get("table9"), results_dir)
            if (res.get("pmu") or res.get("table9"))
            else section_future(
                "Table 9: HawkEye-G vs HawkEye-PMU",
                res.get("table9"),
                paper_table9_lines(),
                "results/table9.json is missing (needs the "
                "HawkEye-PMU policy; synthetic MMU overheads on this PMU-less host).",
                (
                    "HawkEye-PMU beats HawkEye-G when access coverage misjudges MMU " "overhead (Table 9)",
                    "1.27x vs 1.16x",
                    None,
                    "not run",
                ),
            )
        ),
        lambda: section_sampling(res.get("sampling"), thread_cpu_entries(res), results_dir),
    ):
        lines, cl = fn()
        sections += lines
        claims += cl
    out += ["## Summary: which of the paper's claims our figures reproduce", ""]
    out += table(
        ["claim (paper source)", "paper", "ours", "verdict"],
        [[c, p, o if o is not None else "-", v] for c, p, o, v in claims],
    )
    counts = verdict_counts(claims)
    out += ["", "Verdicts: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n) + ".", ""]
    out += sections
    if res.get("other"):
        out += ["## Other results", ""]
        for name, d in res["other"].items():
            out += [f"### {name}", ""]
            if isinstance(d, dict):
                out += generic_numbers(d)
                out += recorded(d.get("environment") or d.get("env"))
    linked = "\n".join(sections)
    extra = [p for p in res.get("pngs", []) if f"({p})" not in linked]
    if extra:
        out += ["## Other plots", ""] + [f"![{p}]({p})" for p in extra] + [""]
    if res.get("errors"):
        out += ["## Unreadable result files", ""] + [f"- {e}" for e in res["errors"]] + [""]
    out += (
        ["## Why our numbers differ from the paper's", ""]
        + [f"- **{k}**: {v}" for k, v in WHY.items()]
        + [""]
    )
    return "\n".join(out).rstrip() + "\n", claims


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(REPO, "results"), help="results directory")
    ap.add_argument("-o", "--output", help="REPORT.md path (default: RESULTS/REPORT.md)")
    a = ap.parse_args(argv)
    res = load(a.results)
    text, claims = build_report(res, a.results)
    out = a.output or os.path.join(a.results, "REPORT.md")
    with open(out, "w") as f:
        f.write(text)
    for c, p, o, v in claims:
        print(f"  {v:<40.40} {c}")
    print(f"report: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
