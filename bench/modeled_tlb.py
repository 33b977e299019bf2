#!/usr/bin/env python3
"""The promotion workloads under the TLB model (tools/tlbmodel), and the
model checked against a native run: what huge pages are worth where no
machine here has a TLB to measure.

  bench/modeled_tlb.py [-m MB] [-d SECONDS] [-r ROUNDS] [--native NATIVE.json]
                       [--calibrate WORKLOAD] [--raw RAW.jsonl] [--report-only]
                       [-o OUT.json]

Boots the release kernel under QEMU 10 with the model plugin
(scripts/setup-tlbmodel) and runs each of bench/native_tlb.py's workloads,
-m MiB, once with MADV_HUGEPAGE and once without (THP "madvise"), -d
seconds each, the order alternating by round. Each workload names its
address space to the model when its timed part starts and has the model
write its counters at every progress line (bench/workload.h), so the
counters of the timed part, per unit of work, are the last write's less the
first's: instructions I, modeled walk cycles W (page-table loads, priced by
where the model's caches found them) and STLB-hit cycles S.

The model's time per unit of work is I x CPI + W + S. CPI, the base cycles
per instruction of everything but address translation, is the one free
parameter: it is calibrated on one workload (--calibrate, xsbench by
default) so that its huge/base speedup is the native run's, and the others'
speedups are then predicted with it and compared with theirs (the goal:
each within 15 %). The native run (--native, bench/native_tlb.py's JSON)
must be of the same -m.
"""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys

from native_tlb import WORKLOADS, build, pages_order
from report_io import write_json

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GOAL = 0.15
# And where huge pages gain natively (at least GAIN_MIN), the predicted gain
# (speedup - 1) within GAIN_GOAL of the native one: on speedups near 1, 15 %
# alone would pass a model that predicts no gain at all.
GAIN_MIN, GAIN_GOAL = 0.10, 0.5
COUNTERS = ("insns", "accesses", "l1_misses", "stlb_hits", "walks", "walks_4k", "walks_2m",
            "walks_1g", "pwc_hits", "loads_l1d", "loads_l2", "loads_llc", "loads_dram",
            "stlb_cycles", "walk_cycles")


def label(workload, pages, rnd):
    """The run's label, at most 8 characters: the model's tag."""
    return f"{workload[:3]}-{pages[0]}{rnd}"


def tag_name(tag):
    return struct.pack("<Q", tag).rstrip(b"\0").decode(errors="replace") if tag else ""


def guest_script(bindir, mb, seconds, rounds):
    lines = ["#!/bin/sh", "echo madvise >/sys/kernel/mm/transparent_hugepage/enabled"]
    for rnd in range(1, rounds + 1):
        for workload, frac, _ in WORKLOADS:
            for pages in pages_order(rnd):
                lines.append(f"{bindir}/{workload} -m {mb} -f {frac} -d {seconds} "
                             f"-i {seconds / 3:g} -l {label(workload, pages, rnd)}"
                             + (" -N" if pages == "base" else "") + " || exit 1")
    return "\n".join(lines) + "\n"


def vm_run_args(raw):
    """scripts/vm-run's options for a boot of the release kernel under the
    model, its counters to raw."""
    return ["--flavour", "release", "--tlbmodel", os.path.abspath(raw)]


def run_guest(a):
    """Builds what it needs and runs the workloads under the model."""
    bindir = os.path.join(REPO, "build", "tlbmodel-bench")
    build(bindir, [w for w, _, _ in WORKLOADS], again=True)
    script = os.path.join(bindir, "run.sh")
    with open(script, "w") as f:
        f.write(guest_script(bindir, a.mb, a.seconds, a.rounds))
    os.chmod(script, 0o755)
    mem_mb = a.mb * 2 + 1024
    cmd = [os.path.join(REPO, "scripts", "vm-run"), *vm_run_args(a.raw), "--mem", f"{mem_mb}M",
           "--timeout", str(int(a.rounds * len(WORKLOADS) * 2 * (a.seconds + 600))),
           "--", script]
    subprocess.run(cmd, check=True)


def own_writes(raw_path):
    """Each named address space's own writes (bench/workload.h: mark 0 when
    its timed part starts, then its work done so far at each progress
    line), in order: (name, pid, mark, counters). hawkeye-pmud --model's
    writes (mark bit 63) are no workload's, even from a root a workload
    named before it exited."""
    with open(raw_path) as f:
        for line in f:
            rec = json.loads(line)
            if rec["type"] != "mark" or rec["mark"] >> 63:
                continue
            for sp in rec["spaces"]:
                name = tag_name(sp["tag"])
                if sp["root"] == rec["from"] and name:
                    yield name, sp["pid"], rec["mark"], sp


def runs_from(raw_path):
    """Per run label: its counters over the timed part, and per unit of work."""
    first, last = {}, {}
    for name, _, mark, sp in own_writes(raw_path):
        if mark == 0:
            first[name] = sp
            last.pop(name, None)
        elif name in first:
            last[name] = (mark, sp)
    if not last:
        raise SystemExit(f"modeled_tlb: {raw_path} has no workload's counters "
                         "(did the guest run under the plugin?)")
    runs = {}
    for name, (ops, sp) in last.items():
        d = {k: sp[k] - first[name][k] for k in COUNTERS}
        runs[name] = {"ops": ops, "total": d,
                      "per_op": {k: v / ops for k, v in d.items()}}
    return runs


def modeled_cycles(c, cpi):
    """The model's time of counters c at base CPI cpi, and its part in
    address translation."""
    mmu = c["walk_cycles"] + c["stlb_cycles"]
    return c["insns"] * cpi + mmu, mmu


def processes_from(raw_path, cpi):
    """Per pid of a workload (bench/workload.h) under the model: its modeled
    cycles per unit of work over its timed part, its MMU overhead (STLB and
    walk cycles / modeled cycles) over it and between each two progress
    lines, in order. A pid that two processes had in the boot is left out
    (None): which run's instance it was is not known here."""
    out, prev, reused = {}, {}, set()
    for name, pid, mark, sp in own_writes(raw_path):
        if mark == 0:
            if pid in out:
                reused.add(pid)
            out[pid] = {"label": name, "ops": 0, "cycles": 0.0, "mmu_cycles": 0, "intervals": []}
        elif pid in out and pid in prev:
            d = {k: sp[k] - prev[pid][1][k] for k in ("insns", "walk_cycles", "stlb_cycles")}
            cyc, mmu = modeled_cycles(d, cpi)
            p = out[pid]
            p["ops"] += mark - prev[pid][0]
            p["cycles"] += cyc
            p["mmu_cycles"] += mmu
            p["intervals"].append(mmu / cyc if cyc else None)
        prev[pid] = (mark, sp)
    for p in out.values():
        p["cycles_per_op"] = p["cycles"] / p["ops"] if p["ops"] else None
        p["mmu_overhead"] = p["mmu_cycles"] / p["cycles"] if p["cycles"] else None
    return {pid: None if pid in reused else p for pid, p in out.items()}


def speedup(per, cpi):
    """Modeled huge/base speedup at base CPI cpi, from per-op counters."""
    return modeled_cycles(per["base"], cpi)[0] / modeled_cycles(per["huge"], cpi)[0]


def calibrate(per, native):
    """The CPI at which the modeled speedup is the native one: solves
    (I_b c + T_b) / (I_h c + T_h) = s for c (T: translation cycles)."""
    b, h = per["base"], per["huge"]
    tb = b["walk_cycles"] + b["stlb_cycles"]
    th = h["walk_cycles"] + h["stlb_cycles"]
    den = native * h["insns"] - b["insns"]
    cpi = (tb - native * th) / den if den else None
    return cpi if cpi and cpi > 0 else None


def report(runs, native_summary, calibration, settings):
    per_workload = {}
    for workload, _, _ in WORKLOADS:
        per = {}
        for pages in ("huge", "base"):
            got = [r["per_op"] for n, r in runs.items()
                   if n.startswith(workload[:3] + "-" + pages[0])]
            if got:
                per[pages] = {k: statistics.median(g[k] for g in got) for k in COUNTERS}
        if len(per) == 2:
            per_workload[workload] = per
    out = {"settings": settings, "runs": runs, "workloads": {}, "calibration": None}
    cal = per_workload.get(calibration)
    nat = (native_summary or {}).get(calibration, {}).get("speedup")
    nat_range = (native_summary or {}).get(calibration, {}).get("speedup_range") or []
    cpi = calibrate(cal, nat) if cal and nat else None
    # The CPIs the ends of the calibration workload's native range give.
    cpi_range = sorted(c for c in (calibrate(cal, r) for r in nat_range if cal) if c)
    out["calibration"] = {"workload": calibration, "native_speedup": nat, "cpi": cpi,
                          "cpi_range": cpi_range if len(cpi_range) == 2 else None}
    for workload, per in per_workload.items():
        nat_w = (native_summary or {}).get(workload, {})
        w = {"per_op": per, "native_speedup": nat_w.get("speedup"),
             "native_range": nat_w.get("speedup_range")}
        if cpi:
            pred = speedup(per, cpi)
            w["predicted_speedup"] = pred
            if out["calibration"]["cpi_range"]:
                w["predicted_range"] = sorted(speedup(per, c)
                                              for c in out["calibration"]["cpi_range"])
            w["mmu_overhead"] = {p: modeled_cycles(per[p], cpi)[1] / modeled_cycles(per[p], cpi)[0]
                                 for p in per}
        out["workloads"][workload] = w
    out["goal_met"] = judge(out["workloads"], calibration) if cpi else None
    return out


def judge(workloads, calibration):
    """Each prediction against its native speedup (its "error", "gain_error"
    and "within_goal", set in @workloads), and whether all of them meet the
    goal: every workload but the calibration one is predicted, and one
    without a modeled run, a native figure or a prediction fails it."""
    for name, w in workloads.items():
        pred, nat = w.get("predicted_speedup"), w.get("native_speedup")
        if not pred or not nat:
            continue
        w["error"] = pred / nat - 1
        w["gain_error"] = (pred - 1) / (nat - 1) - 1 if nat - 1 >= GAIN_MIN else None
        w["within_goal"] = (abs(w["error"]) <= GOAL
                            and (w["gain_error"] is None or abs(w["gain_error"]) <= GAIN_GOAL)
                            if name != calibration else None)
    return all((workloads.get(w) or {}).get("within_goal") is True
               for w, _, _ in WORKLOADS if w != calibration)


def rounds_in(runs):
    """The rounds an earlier run's raw holds (the labels' last digits)."""
    return max((int(n[5:]) for n in runs if n[5:].isdigit()), default=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", "--mb", type=int, default=1024)
    ap.add_argument("-d", "--seconds", type=float, default=30)
    ap.add_argument("-r", "--rounds", type=int, default=1)
    ap.add_argument("--native", help="bench/native_tlb.py's JSON, of the same -m")
    ap.add_argument("--calibrate", default="xsbench", choices=[w for w, _, _ in WORKLOADS])
    ap.add_argument("--raw", default=os.path.join(REPO, "results", "raw", "modeled-tlb.jsonl"))
    ap.add_argument("--report-only", action="store_true",
                    help="no guest run: the report of an earlier run's --raw, made with the -m and -d given")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    if a.mb < 4 or a.mb % 2 or a.seconds <= 0 or a.rounds < 1:
        ap.error("-m: even, >= 4; -d > 0; -r >= 1")
    native = None
    if a.native:
        with open(a.native) as f:
            native = json.load(f)
        if native["settings"]["mb"] != a.mb:
            ap.error(f"--native ran -m {native['settings']['mb']}, not {a.mb}")
    if not a.report_only:
        os.makedirs(os.path.dirname(os.path.abspath(a.raw)), exist_ok=True)
        run_guest(a)
    runs = runs_from(a.raw)
    # The sizes a raw was made with are the command line's; its rounds are
    # what it holds.
    settings = {"mb": a.mb, "seconds": a.seconds, "rounds": rounds_in(runs),
                "native": native and {"settings": native["settings"],
                                      "cpu": native["environment"].get("cpu"),
                                      "cpuid": native["environment"].get("cpuid")}}
    res = report(runs, native and native["summary"], a.calibrate, settings)
    if a.output == "-":
        json.dump(res, sys.stdout, indent=1)
        print()
    else:
        write_json(a.output, res)


if __name__ == "__main__":
    main()
