"""HawkEye's own overhead: access-bit sampling and its threads' CPU time (§4)."""

import json

from .common import fmt, fx, not_run, png, recorded, table

FILES = ("sampling.json",)
CPU_PCT = 5  # "little CPU": below this share of one CPU over a run

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


def least_tcg_factor(tcg):
    """The least of the TCG slowdowns of HawkEye's threads' inner loops
    (bench/pteloop: the sample pass, the zeroing, the zero scan), with
    the three named; None unless all three were measured."""
    if not tcg or not all(tcg.get(k) for k in ("zero", "scan")):
        return None
    loops = {"the sample pass": tcg["factor"], "zeroing": tcg["zero"]["factor"],
             "the zero scan": tcg["scan"]["factor"]}
    text = ", ".join(f"{n} {fx(f)}" for n, f in loops.items())
    return {"factor": min(loops.values()), "text": text}


def hawkeye_cpu_pct(e):
    """HawkEye's threads' CPU time in a thread_cpu entry, in % of one CPU
    over its wall time; None without one."""
    hk = sum(v for n, v in (e.get("threads") or {}).items() if n.startswith("hawkeye_"))
    return 100 * hk / e["seconds"] if e.get("seconds") else None


def zeroed_per_cpu_s(e):
    """MB the zeroing threads zeroed per second of their CPU time in a
    thread_cpu entry; None without the figure or under 0.1 s of CPU."""
    cpu = sum(v for n, v in (e.get("threads") or {}).items() if n.startswith("hawkeye_zerod"))
    return e["prezero_mb"] / cpu if e.get("prezero_mb") is not None and cpu >= 0.1 else None


def thread_cpu_lines(entries):
    """Markdown table of THREAD_CPU entries: CPU seconds per thread,
    HawkEye's threads' share of one CPU over the run and what a second of
    the zeroing threads' CPU zeroed."""
    names = sorted({n for e in entries for n in (e.get("threads") or {})})
    rows = []
    for e in entries:
        th = e.get("threads") or {}
        cfg = " ".join(x for x in (e.get("workload"), e.get("config")) if x)
        rows.append([e.get("experiment") or "-", cfg or "-",
                     f"{e['seconds']:.1f}" if e.get("seconds") is not None else "-"]
                    + [fmt(th.get(n), 2) for n in names] + [fmt(hawkeye_cpu_pct(e), 2),
                                                            zeroed_cell(e),
                                                            fmt(zeroed_per_cpu_s(e), 0)])
    return table(["experiment", "configuration", "wall (s)"] + [f"{n} CPU (s)" for n in names]
                 + ["HawkEye threads, % of one CPU",
                    "zeroed (MB; of it taken by allocations not needing zeroes)",
                    "zeroed per zerod CPU-second (MB)"],
                 rows) + [""]


def zeroed_cell(e):
    """What the zeroing threads zeroed during a run, and how much of it
    went to allocations that zero nothing (prezero_wasted) where
    the run recorded it."""
    if e.get("prezero_mb") is None:
        return "-"
    wasted = e.get("prezero_wasted_mb")
    return fmt(e["prezero_mb"], 0) + ("" if wasted is None else f" ({fmt(wasted, 0)})")


def section_sampling(s, cpu, rd):
    title = "HawkEye's own overhead"
    p = PAPER["sampling"]
    if not s and not cpu:
        return not_run(title, "results/sampling.json is missing (bench/run-scaling)."), [
            ("HawkEye's access-bit sampling costs negligible CPU (§4)", "negligible", None, "not run")
        ]
    out = [f"## {title}", "", f"Paper: {p['source']}.", ""]
    claims = []
    if s and s.get("points"):
        g = s["goals"]
        out += [
            "### Costs as memory grows",
            "",
            "`bench/run-scaling`: one 20 GiB guest; each working set is split over 1, 8 or 64 processes "
            "that keep writing random 4 KB pages, of all of it (100 % hot: the worst case) or of its first "
            "part (the rest cold, as most memory is); every mechanism on at its defaults, promotion held off "
            "so that the whole working set stays sampled. Measured over whole sample "
            "passes of `hawkeye_promoted`: its CPU (% of one CPU, per pass, per pass and GiB), its "
            "mmap_lock holds (tracepoints, filtered to the thread), the wall time of its walks (the clear "
            "walk and the count walk of a pass), and the access_maps' memory (computed from their regions: "
            "64 bytes each plus the xarray's 576-byte nodes).",
            "",
        ]
        out += table(
            ["working set (GiB)", "processes", "hot (%)", "regions", "% of one CPU", "CPU per pass (s)",
             "per pass and GiB (ms)", "lock holds", "hold p99 (µs)", "hold max (µs)",
             "walk, median (s)", "access_maps (KiB)", "other HawkEye threads, % of one CPU"],
            [[fmt(q["gib"], 0), q["processes"], q.get("hot_pct", 100), q["regions"],
              fmt(q["pct_of_one_cpu"], 3),
              fmt(q["cpu_per_pass_s"], 3), fmt(q["cpu_per_pass_per_gib_ms"]), q["lock_holds"],
              fmt(q["lock_hold_p99_us"]), fmt(q["lock_hold_max_us"]), fmt(q["walk_median_s"]),
              fmt(q["access_map_kib"]),
              ", ".join(f"{n} {v:.3f}" for n, v in q["threads_pct"].items()
                        if n.startswith("hawkeye_") and n != "hawkeye_promoted") or "-"]
             for q in s["points"]],
        )
        out += [""] + png(rd, "sampling.png", "Sampling CPU and mmap_lock holds against the working set")
        out += table(
            ["processes", "working sets (GiB)", "CPU per pass and GiB, largest / smallest",
             "lock hold p99, largest / smallest"],
            [[n, "-".join(fmt(x, 0) for x in v["gib"]), fx(v["per_gib_ratio"]), fx(v["hold_p99_ratio"])]
             for n, v in s["shape"].items()],
        )
        out.append("")
        claims += [
            (f"Sampling costs at most {g['pct_at_largest']['goal']:g} % of one CPU at "
             f"{fmt(g['pct_at_largest']['gib'], 0)} GiB, default periods",
             "negligible", f"{fmt(g['pct_at_largest']['ours'], 3)} % (all of it hot, worst process count)",
             "reproduced (goal met)" if g["pct_at_largest"]["met"] else "not reproduced (goal missed)"),
        ]
        claims += [
            (f"Sampling costs at most {v['goal']:g} % of one CPU at {fmt(v['gib'], 0)} GiB with "
             f"{v['hot_pct']} % of it hot, default periods",
             "negligible", f"{fmt(v['ours'], 3)} % (worst process count)",
             "reproduced (goal met)" if v["met"] else "not reproduced (goal missed)")
            for v in g.values() if "hot_pct" in v
        ]
        if "pct_at_largest_native_estimate" in g:
            v, t = g["pct_at_largest_native_estimate"], s["tcg"]
            out += [f"`bench/pteloop`, a sample pass's inner loop over {fmt(v['gib'], 0)} GiB of page "
                    f"table entries, all young: {fmt(t['host_ns_per_entry'])} ns per entry on the host, "
                    f"{fmt(t['guest_ns_per_entry'])} ns in a TCG guest on the same host ({fx(t['factor'])}); the "
                    "worst case's CPU divided by that factor estimates the hardware's.", ""]
            claims.append(
                (f"Sampling costs at most {v['goal']:g} % of one CPU at {fmt(v['gib'], 0)} GiB on hardware, "
                 "all of it hot (estimate: TCG's figure / the inner loop's TCG slowdown)",
                 "negligible", f"{fmt(v['ours'], 3)} % (/ {fx(v['tcg_factor'])})",
                 "reproduced (goal met, estimated)" if v["met"] else "not reproduced (goal missed, estimated)"))
        claims += [
            ("Sampling cost grows linearly with the working set: no super-linear term",
             "-", f"per-GiB cost {fx(g['linear']['ours'])} from smallest to largest (goal <= "
             f"{g['linear']['goal']:g}x)",
             "reproduced (goal met)" if g["linear"]["met"] else "not reproduced (goal missed)"),
            ("mmap_lock holds of sampling stay bounded as memory grows",
             "-", f"p99 {fx(g['holds_bounded']['ours'])} from smallest to largest (goal <= "
             f"{g['holds_bounded']['goal']:g}x)",
             "reproduced (goal met)" if g["holds_bounded"]["met"] else "not reproduced (goal missed)"),
        ]
        out += recorded(s.get("environment"))
    else:
        out += ["The scaling run has not been run: results/sampling.json is missing (`bench/run-scaling`).", ""]
        claims.append(("HawkEye's access-bit sampling costs negligible CPU as memory grows (§4)",
                       "negligible", None, "not run"))
    if cpu:
        out += ["CPU time of the memory-management threads during each benchmark run (read from "
                "/proc once a second by bench/lib.sh): HawkEye's (`hawkeye_zerod`, `hawkeye_debloatd`, "
                "`hawkeye_promoted`, which also runs the ingens and freebsd policies) and the kernel's "
                "(`khugepaged`, `kcompactd`). Pre-zeroing with no rate limit (Table 1, Table 8) is "
                "the zeroing the faults would otherwise do themselves. Under TCG a thread is charged for the "
                "time it is on a CPU however slowly its vCPU runs: the threads zeroed 0.2 to 2.9 GB per "
                "CPU-second in our guests; far less marks a stalled vCPU, not work "
                "(bench/README.md, \"When zerod's CPU time is not zeroing\").", ""]
        out += thread_cpu_lines(cpu)
        worst_rated = max((hawkeye_cpu_pct(e) or 0 for e in cpu
                           if e.get("experiment") in ("bloat", "single", "fairness", "order", "pmu")),
                          default=0.0)
        ours = f"at most {worst_rated:.2f} % of one CPU (promotion and bloat runs)"
        verdict = "reproduced" if worst_rated < CPU_PCT else "not reproduced"
        least = least_tcg_factor((s or {}).get("tcg"))
        if least:
            est = worst_rated / least["factor"]
            out += ["Under TCG the threads' inner loops run slower than on the build host's CPU "
                    f"(`bench/pteloop`, host and guest): {least['text']}. The worst run's share divided "
                    f"by the least of them, {fx(least['factor'])}, estimates the hardware's: "
                    f"{est:.2f} %.", ""]
            ours += f", under TCG; estimated {est:.2f} % on hardware (/ {fx(least['factor'])})"
            verdict = ("reproduced (estimated)" if est < CPU_PCT else
                       "not reproduced (estimated)") if worst_rated >= CPU_PCT else verdict
        claims.append((
            "HawkEye's threads cost little CPU at their default rates during the runs (§4)",
            "negligible", ours, verdict,
        ))
    return out, claims
