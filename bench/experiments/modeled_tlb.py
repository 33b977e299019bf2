"""The workloads under the TLB model (bench/modeled_tlb.py, QEMU 10 with
tools/tlbmodel): the model checked against a native run, the third kind of
figure beside TCG and native ones, labelled "modeled"."""

from .common import fmt, fx, fx_spread, section_or_not_run, table

# The native run it was checked against (bench/native_tlb.py, of the same
# size as the modeled one) is kept beside it.
FILES = ("modeled-tlb.json", "native-tlb-1g.json")
GOAL = 0.15
# No number of the paper's: the model's goal is its own.
PAPER = {"validation": {"source": "the model's goal, not the paper's: each predicted huge/base "
                        "speedup within 15 % of the native one", "goal": GOAL}}
CLAIM = ("The TLB model predicts each workload's native huge-page speedup within "
         f"{GOAL * 100:g} % once calibrated on one (modeled)", "-")
TITLE = "Huge pages under a TLB model (modeled, validated against native runs)"


def render(res, rd):
    return section_or_not_run(res.get("modeled-tlb"), rd, section, TITLE,
                              "results/modeled-tlb.json is missing: `bench/modeled_tlb.py --native "
                              "NATIVE.json -o results/modeled-tlb.json` (bench/README.md).", CLAIM)


def section(m, rd):
    st, cal = m.get("settings", {}), m.get("calibration") or {}
    nat = st.get("native") or {}
    out = [f"## {TITLE}", "",
           "QEMU's software emulation has no TLB; this section's figures come from a model of one "
           "(tools/tlbmodel): a QEMU 10 plugin runs every user-mode data access of the guest "
           "through L1 DTLBs, an STLB, paging-structure caches and data caches sized as Intel's "
           "Golden Cove core (the native runs' CPU), and on an STLB miss walks the guest's own "
           "page tables, so each translation has the page size the kernel mapped. Each workload "
           f"ran {fmt(st.get('mb'))} MiB, {fmt(st.get('seconds'))} s with huge pages and with "
           "base pages; per unit of work the model counts instructions I and prices translation "
           "(walk cycles W, STLB hits S). Its time is I x CPI + W + S, CPI calibrated on "
           f"{cal.get('workload')} so that its speedup is the native one "
           f"({fx(cal.get('native_speedup'))}: CPI {fmt(cal.get('cpi'))}); the others are "
           f"predictions, compared with a native run of the same size on {nat.get('cpu')} "
           f"(CPUID family {(nat.get('cpuid') or {}).get('family')} model "
           f"{(nat.get('cpuid') or {}).get('model')}; results/native-tlb-1g.json, "
           f"{fmt((nat.get('settings') or {}).get('rounds'))} rounds, medians). Modeled "
           f"rounds: {fmt(st.get('rounds'))}, medians of the per-op counters.", ""]
    rows = []
    for w, d in (m.get("workloads") or {}).items():
        per = d.get("per_op", {})
        b, h = per.get("base", {}), per.get("huge", {})
        role = "calibration" if w == cal.get("workload") else "prediction"
        err = d.get("error")
        rows.append([w, role, fmt(b.get("insns")), fmt(b.get("walks")), fmt(h.get("walks")),
                     fmt((d.get("mmu_overhead") or {}).get("base"), 3),
                     fx_spread(d.get("predicted_speedup"), *(d.get("predicted_range") or (None, None))),
                     fx_spread(d.get("native_speedup"), *(d.get("native_range") or (None, None))),
                     "-" if err is None else f"{err * 100:+.1f} %"])
    out += table(["workload", "role", "instructions / op", "walks / op (base)",
                  "walks / op (huge)", "MMU overhead (base)", "modeled huge / base",
                  "native huge / base", "error"], rows) + [""]
    met = m.get("goal_met")
    ours = ", ".join(f"{w} {d['error'] * 100:+.1f} %"
                     for w, d in (m.get("workloads") or {}).items()
                     if w != cal.get("workload") and d.get("error") is not None)
    cr = cal.get("cpi_range")
    out += ["Modeled speedups are at the calibrated CPI, their range at the CPIs that the ends of "
            f"{cal.get('workload')}'s native range give"
            + (f" ({fmt(cr[0])}-{fmt(cr[1])})" if cr else "") + "; native ones are medians with "
            "their range; the error is the median prediction's against the native median.", "",
            "What this shows: how far a model with one free parameter gets from the walks it "
            "counts to the speedups the hardware gave. One CPI stands for every workload's "
            "non-translation time, so a workload whose own loop runs at a lower CPI than the "
            "calibration workload's has its walks weighed too lightly. The native machine is "
            "itself a virtual machine, where a TLB miss walks two page tables (the guest's and "
            "the host's); the model walks one, and the calibrated CPI absorbs what that and any "
            "overlap of walks with other work are worth for the calibration workload only.", ""]
    verdict = "not run" if met is None else ("reproduced" if met else "not reproduced")
    return out, [(*CLAIM[:2], ours or "-", verdict)]
