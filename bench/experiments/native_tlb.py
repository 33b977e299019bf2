"""What huge pages are worth on a hardware MMU (bench/native_tlb.py, run
natively on a machine with a real TLB): the ground truth that TCG cannot give for
Tables 3, 5 and 9."""

from . import fairness, table9
from .common import fmt, fx_spread, goal_verdict, recorded, section_or_not_run, table, verdict

FILES = ("native-tlb.json",)

_T9 = table9.PAPER["table9"]["rows"]
_T5 = fairness.PAPER["table5"]["rows"]
PAPER = {
    "native": {"source": "Table 9 (4 KB vs HawkEye-PMU, all huge) and Table 5 (first instance, "
               "Linux-4KB vs HawkEye-PMU): time with base pages / time with huge pages",
               "random": _T9["random(4GB)"][1] / _T9["random(4GB)"][2],
               "sequential": _T9["sequential(4GB)"][1] / _T9["sequential(4GB)"][2],
               "graph500": _T5["graph500"][0][0] / _T5["graph500"][0][3],
               "xsbench": _T5["xsbench"][0][0] / _T5["xsbench"][0][3]},
}
GAIN = 1.2
CLAIM = ("A random-access workload gains from huge pages on a hardware MMU, a sequential one "
         "does not (Tables 3 and 9)",
         f"random {PAPER['native']['random']:.2f}x, sequential {PAPER['native']['sequential']:.2f}x")
TITLE = "Huge pages on a hardware MMU (native runs, not TCG)"


def render(res, rd):
    return section_or_not_run(res.get("native-tlb"), rd, lambda nt, rd: section(nt, rd, res), TITLE,
                              "results/native-tlb.json is missing: `bench/native_tlb.py -o "
                              "results/native-tlb.json` on a host with a hardware MMU (no TCG).",
                              CLAIM[:2])


def section(nt, rd, res):
    env, s = nt.get("environment", {}), nt.get("summary", {})
    st = nt.get("settings", {})
    out = [f"## {TITLE}", "",
           f"Each workload of the promotion experiments, {fmt(st.get('mb'))} MiB, all of it hot "
           f"(graph500: half), run natively for {fmt(st.get('seconds'))} s with huge pages "
           "(MADV_HUGEPAGE) and with base pages, "
           f"{fmt(st.get('rounds'))} interleaved rounds; throughput per second, median over the "
           f"rounds. Machine: {env.get('cpu')}, {env.get('cores')} cores, {env.get('mem_gib')} GiB, "
           f"Linux {env.get('kernel')}"
           + (" in a virtual machine: a TLB miss walks the guest's page table and the host's"
              if env.get("hypervisor") else "") + ".", ""]
    rows = []
    for w, d in s.items():
        rows.append([w, d.get("unit"), fmt(d.get("base_rate")), fmt(d.get("huge_rate")),
                     fx_spread(d.get("speedup"), *d.get("speedup_range", (None, None)))])
    out += table(["workload", "throughput", "base pages", "huge pages", "huge / base"], rows) + [""]
    claims = []
    p = PAPER["native"]
    rnd, seq = s.get("xsbench", {}), s.get("sequential", {})
    r_lo, r_hi = rnd.get("speedup_range", (None, None))
    s_lo, s_hi = seq.get("speedup_range", (None, None))
    # "Gains": by GAIN or more in every round; "does not": in none.
    rnd_v = goal_verdict(r_lo, r_hi, GAIN)
    seq_v = goal_verdict(s_lo, s_hi, GAIN, met="not reproduced", missed="reproduced")
    # Both halves must hold: one that fails decides, else the first that is unsure.
    if "not reproduced" in (rnd_v, seq_v):
        both_v = "not reproduced"
    else:
        both_v = next((v for v in (rnd_v, seq_v) if v != "reproduced"), "reproduced")
    claims.append(
        (*CLAIM, f"xsbench {fx_spread(rnd.get('speedup'), r_lo, r_hi)}, sequential "
         f"{fx_spread(seq.get('speedup'), s_lo, s_hi)}", both_v))
    for w in ("graph500", "xsbench"):
        d = s.get(w, {})
        claims.append((f"{w} runs faster with huge pages than with base pages (Table 5)",
                       f"{p[w]:.2f}x", fx_spread(d.get("speedup"), *d.get("speedup_range", (None, None))),
                       verdict(d.get("speedup"), p[w])))
    out += [
        "What this shows: the premise of access-coverage promotion and of HawkEye-PMU, on real "
        "hardware. Huge pages speed up the random readers (xsbench, graph500), by as much as the "
        "paper's hardware or more, and not the sequential one, whose TLB misses the prefetchers "
        "hide, although every one of its pages is accessed in every window. HawkEye-G's access "
        "coverage rates both alike; HawkEye-PMU, told the MMU overheads, does not (Table 9, "
        "above, runs on synthetic overheads for want of a PMU).",
        "",
        f"The host: {'a hardware PMU' if env.get('pmu') else 'no hardware PMU exposed'} "
        f"(so HawkEye-PMU could not read real counters there either); `/dev/kvm` "
        f"{'present' if env.get('dev_kvm') else 'absent'}, "
        f"{'usable' if env.get('kvm_usable') else 'without vmx/svm, so no KVM guest of our kernel'}"
        ". The runs need no HawkEye kernel: they measure what a promotion is worth, not our code.",
        "",
    ]
    out += pteloop_lines(nt.get("pteloop"), res.get("sampling") or {})
    out += recorded(env, st)
    return out, claims


def pteloop_lines(pte, sampling):
    """`pteloop` here beside the build host's and TCG's (results/sampling.json),
    and the hardware estimate of sampling's cost that this host's loop gives."""
    if not pte:
        return []
    ns = pte["open_ns_per_entry"] + pte["count_ns_per_entry"]
    tcg = sampling.get("tcg") or {}
    goal = (sampling.get("goals") or {}).get("pct_at_largest") or {}
    out = [f"`bench/pteloop` on this host, over {fmt(pte['entries'])} entries (16 GiB): "
           f"{fmt(ns)} ns per entry (opening and counting walk together)"]
    if tcg.get("guest_ns_per_entry") and goal.get("ours") is not None:
        out[0] += (f", against {fmt(tcg.get('host_ns_per_entry'))} on the build host and "
                   f"{fmt(tcg['guest_ns_per_entry'])} under TCG. Scaled by this host's loop instead "
                   "of the build host's, the worst case of \"HawkEye's own overhead\" "
                   f"({fmt(goal['ours'], 3)} % of one CPU under TCG) would be "
                   f"{fmt(goal['ours'] * ns / tcg['guest_ns_per_entry'], 3)} % on this hardware "
                   "(an estimate, as there)")
    return [out[0] + ".", ""]
