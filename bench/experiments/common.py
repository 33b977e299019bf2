"""What every section of the report shares: number formatting, tables,
verdicts and the recorded-environment block."""

import json
import os

MACHINE = "Intel Xeon E5-2690 v3 (Haswell-EP), 2 sockets, 48 hardware threads, 96 GB, Linux 4.3 (§4)"

# Run-to-run throughput noise under TCG (WHY["noise"]).
TCG_NOISE = 0.10

WHY = {
    "tcg": "QEMU's software emulation (TCG) does not model the hardware TLB: it caches 4 KB "
    "translations in its own software TLB and walks the guest page table on a miss, so huge "
    "pages help under TCG only through a shorter walk; TLB speedups are not the hardware's.",
    "scale": "The machine is 2 cores and a 1-2 GiB guest on a 24 GB host, not 48 threads and 96 GB; "
    "sizes are scaled down 20-50x and runs last seconds, not the paper's tens of minutes.",
    "zeroing": "Under TCG every guest store is emulated, so zeroing 2 MB costs far more relative to "
    "the rest of a fault than on hardware: the 2 MB fault is slower in absolute terms, "
    "and what pre-zeroing saves is correspondingly larger.",
    "noise": f"Throughput under TCG moves by about ±{TCG_NOISE * 100:g} % between 20 s windows on the "
    "shared 2-core host; differences below that are noise.",
    "cache": "TCG has no cache model: non-temporal and normal stores differ only in emulation cost, "
    "not in cache pollution, which is what the paper measures.",
    "nopmu": "This host exposes no hardware PMU (no TLB-miss counters): HawkEye-PMU runs with "
    "synthetic MMU-overhead values here, and with the TLB model's under `make demo-tlb`.",
}


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


def spread_verdict(lo, ours, hi, paper, tol=0.25):
    """verdict() of a ratio measured over several runs, OURS their median
    and LO..HI their range: the verdict when the whole range agrees on it,
    else 'within noise'."""
    vs = {verdict(v, paper, tol) for v in (lo, ours, hi) if v is not None}
    return vs.pop() if len(vs) == 1 else ("not run" if not vs else "within noise")


def goal_verdict(lo, hi, bar, met="reproduced", missed="not reproduced"):
    """MET when every run's ratio reaches BAR (LO >= BAR), MISSED when none
    does (HI < BAR), else 'within noise' (the spread covers the bar)."""
    if lo is None or hi is None:
        return "not run"
    if lo >= bar:
        return met
    if hi < bar:
        return missed
    return f"within noise ({lo:.3g}-{hi:.3g}x around {bar:g}x)"


def speed_verdict(lo, hi, bar, missed):
    """goal_verdict() of a run-time ratio under TCG; one run (LO == HI)
    closer to 1 than the throughput noise (WHY["noise"]) is noise."""
    if lo is not None and lo == hi and abs(lo - 1) < TCG_NOISE:
        return f"within noise (one run; TCG moves ±{TCG_NOISE * 100:g} %)"
    return goal_verdict(lo, hi, bar, missed=missed)


def fx_spread(r, lo, hi):
    """A ratio with its range over the runs: '68.9x (41.2-80.1x)'."""
    if r is None:
        return "-"
    return fx(r) if lo is None or lo == hi else f"{fx(r)} ({lo:.3g}-{hi:.3g}x)"


def spread(c, key):
    """(median, (lowest, highest)) of a comparison's ratio over the rounds;
    a single run's ratio is its own range."""
    return c.get(key), tuple(c.get(key + "_range") or (c.get(key), c.get(key)))


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


def section_or_not_run(result, rd, section, title, missing, claim, paper_lines=()):
    """SECTION(result, rd) where the experiment's result file exists.
    Without it: the 'not run' section saying what is MISSING, still with
    the paper's figures (PAPER_LINES), and CLAIM, a (claim, paper's
    figure) pair, marked not run, so that the summary lists it."""
    if result is None:
        return not_run(title, missing) + list(paper_lines), [(*claim, None, "not run")]
    return section(result, rd)


def policy_rows(result, cells):
    """Table rows of a result that bench/promotion_report.py wrote
    (promotion, fairness, pmu), one per workload and policy: the workload,
    the policy, then CELLS(the policy's figures)."""
    return [
        [w, name] + cells(d)
        for w, wd in result.get("workloads", {}).items()
        for name, d in wd.get("policies", {}).items()
    ]


def linux_and_hawkeye_g(result):
    """(workload, Linux's figures, HawkEye-G's) of each workload of such a
    result: the two policies most of the paper's claims compare."""
    for w, wd in result.get("workloads", {}).items():
        pol = wd.get("policies", {})
        yield w, pol.get("linux", {}), pol.get("hawkeye-g", {})


def values(d, *keys, digits=2):
    """Table cells of D's values of KEYS ('-' where one is missing)."""
    return [fmt(d.get(k), digits) for k in keys]


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
