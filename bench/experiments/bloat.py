"""Bloat recovery: Table 7 and Figure 1 (Redis)."""

from .common import fx_spread, fmt, ratio, fx, verdict, table, recorded, png, not_run, WHY

FILES = ("bloat.json", "bloat-throughput.json", "bloat-mthp.json")

PAPER = {
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
}


def render(res, rd):
    out, claims = section_bloat(res.get("bloat"), rd, res.get("bloat-throughput"))
    more, more_claims = section_mthp(res.get("bloat-mthp"))
    return out + more, claims + more_claims


def section_mthp(b):
    """Recovery with 64 KB mTHP on, splitting to 4 KB or to the largest
    dense size, at the memory it recovers; round by round when repeated."""
    title = "Redis bloat with 64 KB mTHP: split to 4 KB vs to the largest dense size"
    claim = ("Recovery that splits to mTHP keeps >= 5x the huge/mTHP memory at <= 1.02x the "
             "memory of splitting to 4 KB")
    if b is None:
        return not_run(title, "results/bloat-mthp.json is missing (make demo, full run)."), [
            (claim, "-", None, "not run")]
    c, cmp = b.get("configs", {}), b.get("comparisons", {})
    mib = 1024.0
    rows = []
    for label, d in c.items():
        large = (d.get("huge_under_pressure_kb") or 0) + (d.get("mthp_under_pressure_kb") or 0)
        rows.append([label, fmt(d.get("memory_under_pressure_kb", 0) / mib),
                     fmt((d.get("huge_under_pressure_kb") or 0) / mib),
                     fmt((d.get("mthp_under_pressure_kb") or 0) / mib), fmt(large / mib),
                     d.get("thp_split"), d.get("mthp_split"), d.get("zero_pages_freed"),
                     pressure_faults(d),
                     "-" if d.get("dense_base_kb") is None else fmt(d["dense_base_kb"] / mib)])
    mem = fx_spread(cmp.get("split_mthp_vs_4kb_memory"), *(cmp.get("split_mthp_vs_4kb_memory_range")
                                                           or (None, None)))
    kept = fx_spread(cmp.get("split_mthp_vs_4kb_large_kept"),
                     *(cmp.get("split_mthp_vs_4kb_large_kept_range") or (None, None)))
    out = [f"## {title}", "",
           "Not in the paper. Both with THP and 64 KB mTHP (`hugepages-64kB/enabled=always`) on, "
           "pre-zeroing and bloat recovery on; `debloat/mthp` 0 splits a bloated huge page to 4 KB, "
           "1 to 64 KB pieces and only the sparse pieces on to 4 KB. Under pressure (T2), MiB; "
           "mTHP memory is the guest's (per-size `nr_anon`), Redis nearly all of it. After P3 "
           "`bloat.sh -r` runs recovery on both as deep as it goes (until two whole rounds at "
           "the floor bar, `threshold / 8`, split nothing in the server), so that both compare "
           "what recovery leaves of the same data, not where an episode happened to stop. The "
           "second last column is what P3 faulted: a 2 MB fault that falls back faults in 64 KB "
           "mTHPs, which recovery to 4 KB leaves as they are, so `bloat.sh -r` compacts memory "
           "before P3 for both alike:", ""]
    out += table(["configuration", "memory", "2 MB pages", "64 KB mTHPs", "huge + mTHP",
                  "THPs split", "mTHPs split", "zero pages freed",
                  "P3's 2 MB faults (fell back), mTHP faulted", "dense 64 KB in base pages"],
                 rows)
    out += ["", f"Split to mTHP / split to 4 KB (median and range over the rounds): memory {mem}, "
            f"huge + mTHP memory kept {kept}. Throughput is not compared here: under TCG.", ""]
    if any(d.get("dense_base_kb") is not None for d in c.values()):
        out += ["The last column is read from the server's page tables after T2 (`redisbloat "
                "dense`): 64 KB-aligned pieces that present base pages map whole, none of them "
                "the zero page. On the split-to-mTHP side they are dense pieces left in base pages "
                "(split to base pages while sparse and filled since, or split as part of a "
                "partially mapped THP, which goes to base pages on both sides).", ""]
    out += recorded(b.get("env"))
    # Every round's ratios against the goals (a single run is its own range).
    m_hi = (cmp.get("split_mthp_vs_4kb_memory_range") or [None, cmp.get("split_mthp_vs_4kb_memory")])[1]
    k_lo = (cmp.get("split_mthp_vs_4kb_large_kept_range") or [cmp.get("split_mthp_vs_4kb_large_kept")])[0]
    verdict = ("not run" if m_hi is None or k_lo is None else
               "reproduced (goal met)" if m_hi <= 1.02 and k_lo >= 5 else "not reproduced (goal not met)")
    return out, [(claim, "-", f"memory {mem}, kept {kept}", verdict)]


def pressure_faults(d):
    n, fb, m = (d.get(k) for k in ("pressure_thp_faults", "pressure_thp_fault_fallback",
                                   "pressure_mthp_fault_kb"))
    return "-" if n is None else f"{n} ({fb}), {fmt(None if m is None else m / 1024.0)} MiB"


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
        # (ratio, ours, paper, tolerance): 10 % on memory (our goal),
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
            "than the split threshold, and recovery stops at the low watermark (70 % in use), "
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
