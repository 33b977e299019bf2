"""Churn: a program that frees and re-faults its memory every few seconds,
idle in between (zeroing paced to demand). Not in the paper."""

from .common import fmt, fx_spread, goal_verdict, recorded, section_or_not_run, table
from .table1 import measures

FILES = ("churn.json",)
TITLE = "Churn: memory freed and re-faulted, idle CPUs in between"
BASE = "Linux-2MB"
PACED, FIXED = "HawkEye-2MB", "HawkEye-2MB-fixed"
# The paper has no churn run; its Table 1 ratio is the bar.
PAPER = {"churn": {"source": "Table 1: a pre-zeroed 2 MB fault 35.8x cheaper (13 vs 465 µs)",
                    "avg_fault_ratio": 35.8}}
CLAIM = ("our goal: under churn with idle CPUs, pre-zeroed 2 MB faults >= 35x cheaper "
         "than Linux-2MB's in a single run", "35.8x")


def render(res, rd):
    return section_or_not_run(
        res.get("churn"), rd, section_churn, TITLE,
        missing="results/churn.json is missing (bench/run-table1 or make demo).",
        claim=CLAIM,
    )


def zerod_share(env, label):
    """The zeroing threads' CPU time in % of the configuration's wall time."""
    for e in env.get("thread_cpu", []):
        if e.get("config") == label and e.get("seconds"):
            cpu = sum(t for n, t in e["threads"].items() if n.startswith("hawkeye_zerod"))
            return 100 * cpu / e["seconds"]
    return None


def section_churn(c, rd):
    cfg, m, pr = measures(c)
    env = c.get("environment", {})
    out = [
        f"## {TITLE}",
        "",
        f"Not in the paper. Each configuration's program faults {env.get('mib', '?')} MiB with "
        f"THP `always`, frees it and sleeps {fmt(env.get('idle_s'))} s, "
        f"{env.get('cycles', '?')} times a run (after an untimed warm-up pass), in rounds that "
        "interleave the configurations; nothing waits for the pool to refill. "
        f"{PACED} is pre-zeroing at its defaults (paced: the rate is a cap for busy CPUs only), "
        f"{FIXED} the paper's fixed 10,000 pages a second. Medians per run, ranges in brackets; "
        "zeroing thread: its CPU time in % of the run's wall time.",
        "",
    ]
    rows = []
    for label in cfg:
        st = cfg[label]["avg_fault_us"]
        r = pr(BASE, label, "avg_fault_us") if label != BASE else (None, None, None)
        rows.append([label, f"{fmt(m(label, 'avg_fault_us'))} ({fmt(st['min'])}-{fmt(st['max'])})",
                     fmt(m(label, "thp_fault_alloc")), fmt(m(label, "prezeroed")),
                     fmt(zerod_share(env, label), 1), fx_spread(*r) if r[0] else "-"])
    out += table(["config", "avg fault (µs)", "2 MB faults", "pre-zeroed", "zeroing thread (% CPU)",
                  f"{BASE} / config"], rows)
    out.append("")
    out += recorded(env)
    r, lo, hi = pr(BASE, PACED, "avg_fault_us")
    claims = [(*CLAIM, fx_spread(r, lo, hi),
               goal_verdict(lo if lo is not None else r, hi if hi is not None else r, 35,
                            met="reproduced (goal met)", missed="not reproduced (goal not met)"))]
    return out, claims
