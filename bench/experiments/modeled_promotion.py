"""The promotion experiments under the TLB model (make demo-tlb): the
paper's run-time claims of Figures 5 and 8 and Tables 5 and 9, which TCG
cannot show, with verdicts of their own, labelled "modeled"."""

from .common import fmt, fx, fx_spread, png, spread, table
from .fairness import PAPER as TABLE5
from .order import PAPER as FIGURE8
from .promotion import PAPER as FIGURE5
from .table9 import PAPER as TABLE9

FILES = ("modeled/promotion.json", "modeled/fairness.json", "modeled/order.json",
         "modeled/pmu.json")
TITLE = "The paper's run-time claims under the TLB model (modeled)"
ORDERS = ("workload-first", "redis-first")
# The paper's figures that the claims are checked against (each module's own).
PAPER = {"figure5": FIGURE5["figure5"], "table5": TABLE5["table5"], "figure8": FIGURE8["figure8"],
         "table9": TABLE9["table9"]}
PMU_CHOICE = ("on modeled MMU overheads, HawkEye-PMU gives huge pages to the TLB-sensitive "
              "process first, HawkEye-G shares them (Table 9, modeled)")
TABLE9_CHOICE = "PMU 1.27x vs G 1.16x over 4 KB"
FIG8_PAPER = "{:.2f}-{:.2f}x".format(*PAPER["figure8"]["hawkeye_speedup_over_4kb"])
# A modeled ratio counts as a gain from 2 % up: the model's own rounding
# and the guest's timing move it by less (one run's ratio of two policies
# in the same boot).
BAR = 1.02


def claims_not_run(workloads=("xsbench", "graph500")):
    out = []
    for w in workloads:
        out += [(f"{w}: HawkEye-G runs faster than Linux over the run (Figure 5, modeled)",
                 fx(PAPER["figure5"]["hawkeye_over_linux"].get(w)), None, "not run")]
    t5 = PAPER["table5"]["average_speedup"]["xsbench"]
    return out + [
        ("xsbench: time saved per promotion, HawkEye-G / Linux (Figure 5, modeled)",
         fx(PAPER["figure5"]["time_saved_per_promotion_vs_linux"]["hawkeye-g"]), None,
         "not run"),
        ("xsbench: HawkEye-G's instances take fewer modeled cycles per unit of work than "
         "Linux's (Table 5, modeled)",
         fx(t5[4] / t5[1]), None, "not run"),
        ("HawkEye helps the TLB-sensitive workload whatever the launch order (Figure 8, modeled)",
         FIG8_PAPER, None, "not run"),
        ("the TLB-sensitive workload runs faster under HawkEye-PMU than HawkEye-G (Table 9, "
         "modeled)", fx(table9_paper_ratio()), None, "not run"),
        (PMU_CHOICE, TABLE9_CHOICE, None, "not run"),
    ]


def table9_paper_ratio():
    row = PAPER["table9"]["rows"]["random(4GB)"]
    return row[3] / row[2]


def rounds_verdict(oks):
    """A verdict from each round's outcome (True, False, or None where the
    round has no figure: a failure, unless no round has one)."""
    if not oks or all(ok is None for ok in oks):
        return "not run"
    met = sum(bool(ok) for ok in oks)
    if met == len(oks):
        return "reproduced"
    return "not reproduced" if not met else f"within noise ({met} of {len(oks)} rounds)"


def figure8_claim(pol, eff):
    """HawkEye-G helps xsbench in both launch orders: against the 4 KB run
    where there is one, else against Linux (no slower when xsbench comes
    first, faster when it comes second); and its time does not depend on
    the order."""
    def cpo(p, order):
        return (((pol.get(p) or {}).get(order) or {}).get("modeled") or {}).get("cycles_per_op")
    claim = "HawkEye helps the TLB-sensitive workload whatever the launch order (Figure 8, modeled)"
    hg = [cpo("hawkeye-g", o) for o in ORDERS]
    base = cpo("none", ORDERS[0])
    if None in hg or eff.get("hawkeye-g") is None:
        return (claim, FIG8_PAPER, None, "not run")
    if base:
        gains = [base / c for c in hg]
        helps = all(g >= BAR for g in gains)
        ours = "over 4 KB: " + ", ".join(f"{o} {fx(g)}" for o, g in zip(ORDERS, gains))
    else:
        lin = [cpo("linux", o) for o in ORDERS]
        if None in lin:
            return (claim, FIG8_PAPER, None, "not run")
        gains = [a / b for a, b in zip(lin, hg)]
        helps = gains[0] >= 2 - BAR and gains[1] >= BAR
        ours = ("over Linux (no 4 KB run): " + ", ".join(f"{o} {fx(g)}"
                                                        for o, g in zip(ORDERS, gains)))
    ours += (f"; redis-first / workload-first: linux {fx(eff.get('linux'))}, hawkeye-g "
             f"{fx(eff['hawkeye-g'])}")
    order_free = abs(eff["hawkeye-g"] - 1) < BAR - 1
    return (claim, FIG8_PAPER, ours, "reproduced" if helps and order_free else "not reproduced")


def per_round(pol, p, key, n):
    """A policy's figure in each of the n rounds the run was to have, None
    where a round has none (the lists pair by round)."""
    vals = list(((pol.get(p) or {}).get("rounds") or {}).get(key) or [])
    return vals + [None] * (n - len(vals))


def render(res, rd):
    got = {k: res.get(f"modeled/{k}") for k in ("promotion", "fairness", "order", "pmu")}
    if not any(got.values()):
        return ([f"## {TITLE}", "", "**not run**: results/modeled/ is empty (`make demo-tlb`).",
                 ""], claims_not_run())
    return section(got, rd)


def pct(v):
    return "-" if v is None else f"{100 * v:.2f} %"


def over_time(intervals, step=10):
    """Every STEP-th interval's MMU overhead, in %."""
    return " ".join("-" if v is None else f"{100 * v:.1f}" for v in (intervals or [])[::step])


def section(got, rd):
    pm, fa, od, pu = (got[k] or {} for k in ("promotion", "fairness", "order", "pmu"))
    env = (pm or fa or od or pu).get("environment", {})
    out = [f"## {TITLE}", "",
           "`make demo-tlb` runs the promotion experiments again, in one boot under the TLB model "
           "of the section above, with larger working sets than `make demo`'s (the page tables of "
           "a small one sit in the modeled L2 and its walks cost little): "
           f"{fmt(env.get('mb'))} MiB for Figures 5-6 ({fmt(env.get('rounds'))} interleaved "
           f"rounds, {fmt(env.get('duration'))} s each), three instances of "
           f"{fmt(env.get('fair_mb'))} MiB for Table 5, the launch order of Figure 8, and "
           "HawkEye-PMU (Table 9; these three one round each, so that their verdicts rest on "
           "one run) with its MMU overheads "
           "measured from the model's counters (`hawkeye-pmud --model`). Each instance's modeled "
           "time is its user-mode instructions x CPI + page-walk and STLB cycles, at the "
           "calibrated CPI (the kernel's work, faults and promotion included, is not in it); a "
           "speedup is the ratio of modeled times for the same work, and MMU overhead is the "
           "translation cycles' share of modeled time, over the run and in the progress "
           "intervals 0, 10, 20 ... (one a second). Promotion itself runs as under TCG: only "
           "what the TLB costs is modeled.", ""]
    claims = []
    rows = []
    for w, wd in (pm.get("workloads") or {}).items():
        for p, d in (wd.get("policies") or {}).items():
            rows.append([w, p, fmt(d.get("modeled_speedup"), 3), pct(d.get("modeled_mmu_overhead")),
                         fmt(d.get("modeled_saved_per_promotion_mcycles"), 3), fmt(d.get("t90")),
                         over_time(d.get("modeled_mmu_intervals"))])
    if rows:
        out += ["Figures 5 and 6, modeled:", ""]
        out += table(["workload", "policy", "modeled speedup vs none", "MMU overhead",
                      "M cycles saved per promotion", "t90 (s)",
                      "MMU overhead over time (%)"], rows) + [""]
    seen = set()
    for w, wd in (pm.get("workloads") or {}).items():
        c, pol = wd.get("comparison") or {}, wd.get("policies") or {}
        seen.add(w)
        # Each round on its own: a round without a figure is a failure.
        n = env.get("rounds") or 1
        sp = zip(per_round(pol, "hawkeye-g", "modeled_speedup", n),
                 per_round(pol, "linux", "modeled_speedup", n))
        r, (lo, hi) = spread(c, "modeled_speedup_hawkeye_g_over_linux")
        claims.append((f"{w}: HawkEye-G runs faster than Linux over the run (Figure 5, modeled)",
                       fx(PAPER["figure5"]["hawkeye_over_linux"].get(w)), fx_spread(r, lo, hi),
                       rounds_verdict([None if g is None or lin is None else g / lin >= BAR
                                       for g, lin in sp])))
        if w == "xsbench":
            # HawkEye-G must save time; Linux saving none (or losing) counts.
            sv = list(zip(per_round(pol, "hawkeye-g", "modeled_saved_per_promotion_mcycles", n),
                          per_round(pol, "linux", "modeled_saved_per_promotion_mcycles", n)))
            # Shown as the savings themselves: Linux's are about none, and
            # a ratio over them is noise.
            claims.append(("xsbench: time saved per promotion, HawkEye-G / Linux (Figure 5, "
                           "modeled)",
                           fx(PAPER["figure5"]["time_saved_per_promotion_vs_linux"]["hawkeye-g"]),
                           "M cycles saved per promotion, HawkEye-G vs Linux, per round: "
                           + ", ".join(f"{fmt(g, 2)} vs {fmt(lin, 2)}" for g, lin in sv),
                           rounds_verdict([None if g is None or lin is None else
                                           g > 0 and (lin <= 0 or g / lin >= 2)
                                           for g, lin in sv])))
    claims += [c for c in claims_not_run() if c[0].split(":")[0] not in seen
               and "Figure 5" in c[0]]

    rows = []
    for w, wd in (fa.get("workloads") or {}).items():
        for p, d in (wd.get("policies") or {}).items():
            rows.append([w, p, "; ".join(fmt(i.get("modeled_cycles_per_op"), 0)
                                         for i in d.get("instances", [])),
                         fmt(d.get("modeled_spread"), 3)])
        c = wd.get("comparison") or {}
        v = c.get("modeled_mean_linux_over_hawkeye_g")
        vals = (c.get("per_round") or {}).get("modeled_mean_linux_over_hawkeye_g") or [v]
        t5 = PAPER["table5"]["average_speedup"].get(w)
        claims.append((f"{w}: HawkEye-G's instances take fewer modeled cycles per unit of work "
                       "than Linux's (Table 5, modeled)",
                       fx(t5[4] / t5[1]) if t5 else "-", fx(v),
                       rounds_verdict([None if x is None else x >= BAR for x in vals])))
    if rows:
        out += ["Table 5, modeled: three instances started together, each one's modeled cycles "
                "per unit of work:", ""]
        out += table(["workload", "policy", "instances", "slowest / fastest"], rows) + [""]
    elif not fa:
        claims.append(claims_not_run()[3])

    rows, eff = [], {}
    for p, res in (od.get("policies") or {}).items():
        for order in ("workload-first", "redis-first"):
            r = res.get(order) or {}
            mo = r.get("modeled") or {}
            if mo:
                rows.append([p, order, fmt(mo.get("cycles_per_op"), 0), pct(mo.get("mmu_overhead")),
                             fmt(r.get("t90")), over_time(mo.get("intervals"))])
        eff[p] = res.get("modeled_redis_first_over_workload_first")
    if rows:
        out += ["Figure 8, modeled: xsbench launched before or after a lightly loaded Redis:", ""]
        out += table(["policy", "order", "cycles per lookup", "MMU overhead", "t90 (s)",
                      "MMU overhead over time (%)"], rows) + [""]
    claims.append(figure8_claim(od.get("policies") or {}, eff) if od else claims_not_run()[4])

    rows = []
    for w, wd in (pu.get("workloads") or {}).items():
        for p, d in (wd.get("policies") or {}).items():
            for role in ("random", "sequential"):
                x = d.get(role) or {}
                mo = x.get("modeled") or {}
                rows.append([w, p, f"{role} ({x.get('workload')})",
                             (d.get("overhead") or {}).get("source") or "access coverage",
                             "-" if x.get("measured_overhead_bp") is None
                             else f"{x['measured_overhead_bp'] / 100:.2f} %",
                             pct(mo.get("mmu_overhead")), fmt(x.get("t_full")),
                             fmt(x.get("final_huge")), over_time(mo.get("intervals"))])
        c = wd.get("comparison") or {}
        pol = wd.get("policies") or {}
        sg, su = ((pol.get(p) or {}).get("sequential_huge_by_random_full")
                  for p in ("hawkeye-g", "hawkeye-pmu"))
        t90 = c.get("t90_g_over_pmu")
        rnd = (pol.get("hawkeye-pmu") or {}).get("random") or {}
        # Only overheads measured from the model count: synthetic ones hand
        # HawkEye-PMU the answer.
        ov = (pol.get("hawkeye-pmu") or {}).get("overhead") or {}
        unmeasured = [role for role in ("random", "sequential")
                      if ((pol.get("hawkeye-pmu") or {}).get(role) or {}).get(
                          "measured_overhead_bp") is None]
        not_modeled = (f"not run (HawkEye-PMU's overheads: {ov.get('source')})"
                       if ov.get("source") != "modeled" else
                       f"not run (hawkeye-pmud stopped during the run: status {ov['daemon_exit']})"
                       if ov.get("daemon_exit") else
                       f"not run (hawkeye-pmud measured nothing for the {' and '.join(unmeasured)} "
                       "one)" if unmeasured else None)
        claims.append((f"{w}: {PMU_CHOICE}", TABLE9_CHOICE,
                       (f"sensitive one 90 % huge {fx(t90)} sooner" if t90 is not None else
                        f"HawkEye-PMU stopped at {fmt(rnd.get('final_huge'))} of the sensitive "
                        f"one's {fmt(rnd.get('regions'))} regions")
                       + f"; insensitive one's huge pages by then {fmt(su)} (PMU) vs {fmt(sg)} (G)",
                       not_modeled or ("not run" if su is None or sg is None else
                                       "reproduced" if t90 is not None and t90 >= 1.5 and su < sg
                                       else "not reproduced")))
        v = c.get("random_modeled_speedup")
        vals = (c.get("per_round") or {}).get("random_modeled_speedup") or [v]
        claims.append((f"{w}: the TLB-sensitive workload runs faster under HawkEye-PMU than "
                       "HawkEye-G (Table 9, modeled)", fx(table9_paper_ratio()), fx(v),
                       not_modeled or rounds_verdict([None if x is None else x >= BAR
                                                      for x in vals])))
    if rows:
        out += ["Table 9, modeled: a random and a sequential workload together; HawkEye-PMU "
                "promotes by the MMU overheads hawkeye-pmud measured from the model (the last "
                "one each process had), above its 2 % threshold:", ""]
        out += table(["workloads", "policy", "workload", "MMU overheads from", "last measured",
                      "modeled MMU overhead", "all huge at (s)", "huge pages at end",
                      "MMU overhead over time (%)"], rows) + [""]
    elif not pu:
        claims += claims_not_run()[5:]
    for name, caption in (("promotion", "Figures 5-6 under the model: hot-set coverage"),
                          ("fairness", "Table 5 under the model: huge pages per instance"),
                          ("order", "Figure 8 under the model"),
                          ("pmu", "Table 9 under the model: huge pages per workload")):
        if got[name]:
            out += png(rd, f"modeled/{name}.png", caption)
    out += ["What this shows and what it does not: the model prices each translation the way "
            "one core of the native machine would, so promotions that come sooner save modeled "
            "time where they save walks; it cannot tell what the paper's 16-96 GB working sets "
            "and hours-long runs would show, and every run here is a few minutes long. A "
            "modeled verdict needs a 2 % gain in every round (for the time saved per promotion, 2x, as for the TCG figure).", ""]
    return out, claims
