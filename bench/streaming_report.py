#!/usr/bin/env python3
"""Summarise bench/streaming.sh output: file streaming at memory.max,
bloat recovery on against off.

  bench/streaming_report.py [INPUT.jsonl] [-o results/streaming.json]

Per configuration: MB/s per round, median and range; the ratio on/off of
each round (the reads of a round ran one after the other), median and
range; what reclaim and recovery did. The goals: recovery on streams
within 10 % of off (the median of the rounds' ratios: two reads of the
same configuration differ by up to 25 % under TCG), and walks nothing (no
episode, no THP scanned, no byte read by recovery). A round without both
reads, or fewer rounds than the run was asked for, fails the first goal;
no read with recovery on leaves both unknown (None).
"""
import sys

from report_io import ReportError, arg_parser, json_lines, median_and_range, ratio, write_json

GOAL_RATIO = 0.90	# on / off, the median of the rounds' ratios


def summarize(lines):
    env = next((d for _, d in lines if d.get("type") == "env"), {})
    runs = [d for _, d in lines if d.get("type") == "stream"]
    if not runs:
        raise ReportError("no stream lines")
    configs = {}
    for c in ("off", "on"):
        rs = sorted((d for d in runs if d["config"] == c), key=lambda d: d["round"])
        med, rng = median_and_range(d["mb_per_s"] for d in rs)
        configs[c] = {
            "mb_per_s": [d["mb_per_s"] for d in rs], "mb_per_s_median": med, "mb_per_s_range": rng,
            "pgscan": [d["pgscan"] for d in rs], "peak_kb": [d["peak_kb"] for d in rs],
            **{k: sum(d[k] for d in rs) for k in ("episodes", "thp_scanned", "bytes_read")},
        }
    by_round = {}
    for d in runs:
        by_round.setdefault(d["round"], {})[d["config"]] = d["mb_per_s"]
    ratios = [ratio(r.get("on"), r.get("off")) for _, r in sorted(by_round.items())]
    med, rng = median_and_range(ratios)
    on = configs["on"]
    complete = None not in ratios and len(ratios) >= env.get("rounds", len(ratios))
    goals = {
        "on_within_10pct_of_off": complete and med >= GOAL_RATIO if rng else None,
        "recovery_walks_nothing": not (on["episodes"] or on["thp_scanned"] or on["bytes_read"])
        if on["mb_per_s"] else None,
    }
    return {"env": env, "configs": configs, "ratios": ratios, "on_vs_off": med,
            "on_vs_off_range": rng, "goals": goals}


def main(argv=None):
    a = arg_parser(__doc__, "streaming").parse_args(argv)
    try:
        with open(a.input) as f:
            s = summarize(list(json_lines(f)))
    except (OSError, ReportError) as e:
        print(f"streaming_report.py: {a.input}: {e}", file=sys.stderr)
        return 1
    write_json(a.output, s)
    if s["on_vs_off"] is not None:
        lo, hi = s["on_vs_off_range"]
        print(f"recovery on / off: {s['on_vs_off']:.3f} (range {lo:.3f}-{hi:.3f}); "
              f"goals: {s['goals']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
