"""Containers: Redis's bloat inside a memory cgroup, and huge pages shared
between containers by weight (the paper's §3.5 limitations)."""

from .common import fmt, ratio, fx, fx_spread, table, recorded, png, section_or_not_run, WHY

FILES = ("containers.json", "streaming.json")

PAPER = {
    "limitations": {
        "source": "§3.5: HawkEye's watermarks are static and system-wide ('an ideal solution should "
        "adjust these thresholds dynamically'); huge pages are shared between processes, not "
        "between applications ('integrate a policy with ... cgroups')",
    },
}

MIB = 1024.0
TITLE = "Containers: Redis's bloat inside a memory cgroup, huge pages by weight"
CLAIM = ("HawkEye inside a container at 1.1x Linux-4KB's peak: never killed, peak within 5 % of "
         "Linux-4KB's", "not in the paper (§3.5: global only)")
WEIGHTS = (("weights_flat", "bench-xs1", "bench-xs2",
            "Promotions between containers follow memory.thp.weight (1:3)"),
           ("weights_nested", "bench-xs2/a", "bench-xs2/b",
            "Promotions between nested containers follow memory.thp.weight (1:3)"))
STREAMING = ("A container streaming a file at its limit: recovery on within 10 % of off (median "
             "of interleaved rounds), walking nothing", "not in the paper (§3.5: global only)")


def peak_verdict(hk, goals):
    """Met on both peaks, partly on the sampled one only."""
    if not hk:
        return "not run"
    if not goals.get("hawkeye_never_killed"):
        return "not reproduced (killed)"
    if goals.get("hawkeye_peak_within_5pct_of_4kb"):
        return "reproduced (goal met)"
    if goals.get("hawkeye_sampled_peak_within_5pct_of_4kb"):
        return "partly (the sampled peak; memory.peak touches the limit)"
    return "not reproduced (goal not met)"


def of_round(per, label, name):
    """The configuration NAME of LABEL's round (labels NAME/N)."""
    _, sep, n = label.partition("/")
    return per.get(f"{name}{sep}{n}", {})


def spread_of(cont, key):
    """'3.00x (2.9-3.1x)': a ratio's median and range over the rounds."""
    lo, hi = cont.get(key + "_range") or (None, None)
    return fx_spread(cont.get(key), lo, hi)


def pct(v):
    return "-" if v is None else f"{100 * v:.0f} %"


def mib(v):
    return fmt(None if v is None else v / MIB)


def kilo(v):
    return fmt(None if v is None else v / 1000)


def render(res, rd):
    return section_or_not_run(res.get("containers"), rd,
                              lambda b, rd: section_containers(b, rd, res.get("streaming")), TITLE,
                              "results/containers.json is missing (make demo step 2).", CLAIM,
                              [f"Paper: {PAPER['limitations']['source']}.", ""])


def section_streaming(s):
    """bench/streaming.sh's table and claim."""
    env, cfg, goals = s.get("env", {}), s.get("configs", {}), s.get("goals", {})
    out = [f"File streaming at the limit (`bench/streaming.sh`): {fmt(env.get('file_mb'))} MB of a "
           "disk read through its page cache (dd, 1 MB blocks, caches dropped first) in a cgroup of "
           f"{fmt(env.get('max_mb'))} MB without swap, beside a process holding "
           f"{fmt(env.get('hold_mb'))} MB in 4 KB pages; recovery off and on interleaved in "
           f"{fmt(env.get('rounds'))} rounds. A charge at the limit reclaims page cache as "
           "upstream's does; recovery must not walk the process for it.", ""]
    out += table(["recovery", "MB/s (median)", "range", "episodes", "THPs scanned",
                  "bytes read by recovery"],
                 [[c, fmt(d.get("mb_per_s_median")),
                   "-".join(fmt(v) for v in d.get("mb_per_s_range") or []),
                   fmt(d.get("episodes")), fmt(d.get("thp_scanned")), fmt(d.get("bytes_read"))]
                  for c, d in cfg.items()])
    lo, hi = s.get("on_vs_off_range") or (None, None)
    met = goals.get("on_within_10pct_of_off") and goals.get("recovery_walks_nothing")
    out += ["", f"On / off, round by round: {fx_spread(s.get('on_vs_off'), lo, hi)}.", ""]
    claim = (*STREAMING, f"{fx_spread(s.get('on_vs_off'), lo, hi)}, episodes "
             f"{fmt((cfg.get('on') or {}).get('episodes'))}",
             "reproduced (goal met)" if met else "not reproduced (goal not met)")
    return out, claim


def section_containers(b, rd, streaming=None):
    cont = b.get("containers", {})
    per, env, cfg = cont.get("configs", {}), b.get("env", {}), b.get("configs", {})
    out = [f"## {TITLE}", "", f"Paper: {PAPER['limitations']['source']}.", ""]
    out += [
        "Ours: the Redis experiment above (P1 4 KB values, P2 delete "
        f"{env.get('del_pct', '?')} %, T1 GETs, P3 2 MB values back, T2 GETs) with "
        f"{fmt(env.get('keys'))} keys, the server in a memory cgroup. Linux-4KB runs first without a limit; "
        "its peak (`memory.peak`) times 1.1 is `memory.max` for the others of its round. Linux-2MB-409 is stock 6.12's "
        "answer, the THP shrinker (`max_ptes_none` 409, as Meta runs it); HawkEye-global is HawkEye with "
        "recovery off in the cgroup (`memory.thp.shrink_underused` 0): the paper's global-only design; "
        "HawkEye-3 is HawkEye beside xsbench containers that hawkeye-g promotes "
        "meanwhile: bench-xs1 (weight 100) beside bench-xs2 (300), whose children a and b (100 and 300) "
        "run one xsbench each, every region hot (weights divide promotions within a bucket of access "
        "coverage). Memory is the cgroup's (`memory.peak`, its high-water mark, and `memory.swap.peak`) "
        "and, as in the section above, the server's RSS + swap sampled once a second; huge pages are "
        "the cgroup's `anon_thp`: its share of the cgroup's memory at the first sample of P1 at half "
        "the limit (the container has room), and after the delete (T1). Configurations named NAME/N "
        "ran in interleaved rounds, each round with its own limit; ratios are to Linux-4KB of the same "
        "round.",
        "",
    ]
    out += png(rd, "containers.png", "Figure 1 per cgroup: the Redis container's memory over time")
    rows = []
    for c, d in per.items():
        k4 = of_round(per, c, "Linux-4KB")
        rows.append([c, fmt(d["limit_kb"] / MIB if d.get("limit_kb") else "none"),
                     fmt(d["peak_kb"] / MIB), fx(ratio(d.get("peak_kb"), k4.get("peak_kb"))),
                     fx(ratio(d.get("peak_footprint_kb"), k4.get("peak_footprint_kb"))),
                     fmt(d["swap_peak_kb"] / MIB), "yes" if d.get("killed") else "no",
                     pct(d.get("huge_share_while_free")), mib(d.get("huge_no_pressure_kb")),
                     kilo(cfg.get(c, {}).get("throughput_no_pressure")),
                     kilo(cfg.get(c, {}).get("throughput_under_pressure")),
                     fmt(d.get("pgscan")), fmt(d.get("thp_split"))])
    out += table(["configuration", "memory.max (MiB)", "memory.peak (MiB)", "memory.peak / Linux-4KB",
                  "sampled RSS+swap peak / Linux-4KB", "swap (MiB)", "OOM-killed",
                  "share in huge pages at half the limit", "huge pages after the delete (MiB)",
                  "GET K/s (T1)", "GET K/s (T2)",
                  "pages scanned by reclaim", "THPs split by recovery"], rows)
    out.append("")
    xs_rows = []
    for c, d in per.items():
        fp = d.get("first_promotions") or {}
        xs_rows += [[c, n, x["weight"], fmt(fp.get(n)), fmt(x["promoted"]), fmt(x["thp_kb"] / MIB),
                     fmt(x["thp_split"])] for n, x in (d.get("xs") or {}).items()]
    if xs_rows:
        out += ["HawkEye-3's xsbench containers (faulted in base pages, promoted by hawkeye-g while Redis "
                "bloats and recovers in its own container; a parent counts its children's promotions):",
                ""]
        out += table(["configuration", "container", "weight",
                      "promotions when one process's worth of regions was promoted",
                      "promotions in all", "huge pages at the end (MiB)", "THPs split by recovery"],
                     xs_rows)
        out.append("")
    goals = cont.get("goals", {})
    out += ["Goals: " + "; ".join(
        f"{k.replace('_', ' ')}: {'n/a' if v is None else ('met' if v else 'NOT met')}"
        for k, v in goals.items()) + ". " + WHY["tcg"], ""]
    hk = [d for c, d in per.items() if c.partition("/")[0] == "HawkEye"]
    claims = [(CLAIM[0], CLAIM[1],
               None if not hk else f"killed: {'yes' if any(d.get('killed') for d in hk) else 'no'}, "
               f"memory.peak {spread_of(cont, 'hawkeye_vs_4kb_peak')}, sampled RSS+swap peak "
               f"{spread_of(cont, 'hawkeye_vs_4kb_sampled_peak')}",
               peak_verdict(hk, goals))]
    # A run from before the nested containers has one flat goal.
    if "promotions_follow_weights" in goals:
        goals = dict(goals, promotions_follow_weights_flat=goals["promotions_follow_weights"])
    for key, light, heavy, claim in WEIGHTS:
        if goals.get(f"promotions_follow_{key}") is not None:
            counts = ", ".join(f"{(d.get('first_promotions') or {}).get(light)}:"
                               f"{(d.get('first_promotions') or {}).get(heavy)}"
                               for c, d in per.items() if d.get("xs"))
            claims.append((claim, "not in the paper", f"{spread_of(cont, key)} ({counts})",
                           "reproduced (goal met)" if goals[f"promotions_follow_{key}"]
                           else "not reproduced (goal not met)"))
    if streaming:
        lines, claim = section_streaming(streaming)
        out += lines
        claims.append(claim)
    else:
        out += ["File streaming at the limit: **not run** (results/streaming.json is missing).", ""]
        claims.append((*STREAMING, None, "not run"))
    out += recorded(env)
    return out, claims
