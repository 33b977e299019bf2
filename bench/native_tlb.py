#!/usr/bin/env python3
"""What huge pages are worth on a hardware MMU: the promotion workloads run
natively (no TCG) with huge pages and with base pages, on a host that has a
real TLB, for example a cloud VM on real hardware. TCG has no TLB model
(bench/README.md), so the TCG runs of `make demo` cannot show this.

  bench/native_tlb.py [-b BINDIR] [-o OUT.json] [-m MB] [-d SECONDS] [-r ROUNDS]

Each round runs every workload twice, once with MADV_HUGEPAGE and once with
-N (no advice), under THP "madvise" (set for the run, restored after), the
order of the two alternating by round; the AnonHugePages of the process,
read early in its timed part, shows what it got. A run whose huge
pages are missing (or whose base pages are huge) is kept but marked
invalid. Also recorded: whether the host has usable KVM and a hardware PMU,
`pteloop` (a sample pass's inner loop, bench/run-scaling) run here, and
the CPU's TLBs as CPUID gives them (bench/tlbinfo.c).
Writes one JSON object: environment, runs, per-workload medians and the
huge/base throughput ratio of each round. Needs root for the THP mode;
without it, the mode in force is used and recorded.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

from report_io import median_and_range, write_json

HERE = os.path.dirname(os.path.abspath(__file__))
THP = "/sys/kernel/mm/transparent_hugepage/enabled"
# workload, hot fraction (all of what it may use), its throughput key
WORKLOADS = (("xsbench", "1.0", "lookups_per_s"),
             ("graph500", "0.5", "edges_per_s"),
             ("sequential", "1.0", "mib_per_s"))
PROGRAMS = [w for w, _, _ in WORKLOADS] + ["pteloop", "tlbinfo"]


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def environment():
    cpuinfo = read("/proc/cpuinfo", "")
    flags = next((l.split(":", 1)[1].split() for l in cpuinfo.splitlines()
                  if l.startswith("flags")), [])
    model = next((l.split(":", 1)[1].strip() for l in cpuinfo.splitlines()
                  if l.startswith("model name")), None)
    mem_kb = next((int(l.split()[1]) for l in read("/proc/meminfo", "").splitlines()
                   if l.startswith("MemTotal:")), 0)
    pmu = [d for d in ("cpu", "cpu_core", "cpu_atom")
           if os.path.isdir(f"/sys/bus/event_source/devices/{d}")]
    return {"kernel": platform.release(), "cpu": model, "cores": os.cpu_count(),
            "mem_gib": round(mem_kb / 2**20, 1),
            "hypervisor": "hypervisor" in flags,
            "kvm_usable": os.path.exists("/dev/kvm") and ("vmx" in flags or "svm" in flags),
            "dev_kvm": os.path.exists("/dev/kvm"),
            "pmu": pmu, "thp_enabled": read(THP),
            "thp_defrag": read("/sys/kernel/mm/transparent_hugepage/defrag")}


def thp_mode():
    mode = read(THP) or ""
    return next((w[1:-1] for w in mode.split() if w.startswith("[")), None)


def set_thp(mode):
    try:
        with open(THP, "w") as f:
            f.write(mode)
    except OSError:
        pass
    return thp_mode()


def words(line):
    return {k: v for k, _, v in (w.partition("=") for w in line.split()[2:]) if v}


def anon_huge_kb(pid):
    for line in (read(f"/proc/{pid}/smaps_rollup", "") or "").splitlines():
        if line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return None


def run(bindir, workload, frac, key, mb, seconds, pages):
    cmd = [os.path.join(bindir, workload), "-m", str(mb), "-f", frac, "-d", str(seconds),
           "-i", str(seconds)]
    if pages == "base":
        cmd.append("-N")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    rec = {"workload": workload, "pages": pages, "mb": mb, "huge_kb": None}
    for line in p.stdout:
        if line.startswith(f"{workload} init "):
            rec["init_s"] = float(words(line)["seconds"])
        elif line.startswith(f"{workload} start "):
            time.sleep(min(1, seconds / 3))
            rec["huge_kb"] = anon_huge_kb(p.pid)
        elif line.startswith(f"{workload} done "):
            d = words(line)
            rec["seconds"] = float(d["seconds"])
            rec["rate"] = float(d[key])
    rec["rc"] = p.wait()
    hot_kb = mb * 1024 * float(frac)
    got = rec["huge_kb"]
    rec["valid"] = rec["rc"] == 0 and "rate" in rec and got is not None and (
        got >= 0.9 * hot_kb if pages == "huge" else got == 0)
    return rec


def build(bindir, programs, again=False):
    """bench/PROGRAM.c, static, into bindir (again: even if it is there)."""
    os.makedirs(bindir, exist_ok=True)
    for prog in programs:
        if again or not os.path.exists(os.path.join(bindir, prog)):
            subprocess.run(["cc", "-O2", "-static", "-o", os.path.join(bindir, prog),
                            os.path.join(HERE, prog + ".c"), "-lm"], check=True)


def pages_order(rnd):
    """Which run comes first in round rnd: they alternate."""
    return ("huge", "base") if rnd % 2 else ("base", "huge")


def summarize(runs):
    out = {}
    for workload, _, key in WORKLOADS:
        by_round = {}
        for r in runs:
            if r["workload"] == workload and r["valid"]:
                by_round.setdefault(r["round"], {})[r["pages"]] = r["rate"]
        pairs = [v for v in by_round.values() if "huge" in v and "base" in v]
        if not pairs:
            continue
        speedups = [v["huge"] / v["base"] for v in pairs]
        speedup, speedup_range = median_and_range(speedups)
        out[workload] = {"unit": key, "rounds": len(pairs),
                         "huge_rate": median_and_range(v["huge"] for v in pairs)[0],
                         "base_rate": median_and_range(v["base"] for v in pairs)[0],
                         "speedup": speedup, "speedup_range": speedup_range,
                         "speedups": speedups}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--bindir", default=os.path.join(os.path.dirname(HERE), "build", "bench"))
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("-m", "--mb", type=int, default=2048)
    ap.add_argument("-d", "--seconds", type=float, default=6)
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--pteloop-gib", type=int, default=16)
    a = ap.parse_args()
    if a.mb < 4 or a.mb % 2 or a.seconds <= 0 or a.rounds < 1:
        ap.error("-m: even, >= 4; -d > 0; -r >= 1")
    build(a.bindir, PROGRAMS)
    env = environment()
    info = subprocess.run([os.path.join(a.bindir, "tlbinfo")], capture_output=True, text=True)
    env["cpuid"] = json.loads(info.stdout) if info.returncode == 0 else None
    before = thp_mode()
    env["thp_mode_run"] = set_thp("madvise")
    runs = []
    try:
        for rnd in range(1, a.rounds + 1):
            for workload, frac, key in WORKLOADS:
                for pages in pages_order(rnd):
                    rec = run(a.bindir, workload, frac, key, a.mb, a.seconds, pages)
                    rec["round"] = rnd
                    runs.append(rec)
                    print(json.dumps(rec), file=sys.stderr, flush=True)
    finally:
        if before:
            set_thp(before)
    pte = subprocess.run([os.path.join(a.bindir, "pteloop"), str(a.pteloop_gib), "3", "native"],
                         capture_output=True, text=True)
    res = {"environment": env, "settings": {"mb": a.mb, "seconds": a.seconds, "rounds": a.rounds},
           "runs": runs, "summary": summarize(runs),
           "pteloop": json.loads(pte.stdout) if pte.returncode == 0 else None}
    if a.output == "-":
        print(json.dumps(res, indent=1))
    else:
        write_json(a.output, res)


if __name__ == "__main__":
    main()
