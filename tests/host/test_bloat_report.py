"""bench/bloat_report.py: the arithmetic of the Redis bloat figures."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import bloat_report as report  # noqa: E402


def sample(config, t, phase, rss, swap=0, huge=0, split=0, freed=0, collapse=0):
    return json.dumps({"type": "sample", "config": config, "t": t, "phase": phase,
                       "rss_kb": rss, "swap_kb": swap, "anon_huge_kb": huge,
                       "mem_available_kb": 1, "swap_used_kb": swap, "thp_split": split,
                       "zero_freed": freed, "collapse": collapse})


def run(config, t1_rss, t2_rss, t2_swap, tput_np, tput_pr, split_end=0, alive=1):
    return [
        sample(config, 0, "P1", 100, split=10, freed=100),
        sample(config, 1, "P1", 1000, split=10, freed=100),
        sample(config, 2, "P2", 600, split=10, freed=100),
        sample(config, 3, "T1", t1_rss, huge=t1_rss // 2, split=10, freed=100),
        sample(config, 4, "T1", t1_rss + 100, huge=t1_rss // 2, split=10, freed=100),
        sample(config, 5, "P3", 1500, split=10, freed=100),
        sample(config, 6, "T2", t2_rss, swap=t2_swap, split=split_end, freed=100 + split_end),
        json.dumps({"type": "step", "config": config, "phase": "T1", "op": "get",
                    "ops": 1, "secs": 1, "ops_per_sec": tput_np}),
        json.dumps({"type": "step", "config": config, "phase": "T2", "op": "get",
                    "ops": 1, "secs": 1, "ops_per_sec": tput_pr}),
        json.dumps({"type": "end", "config": config, "completed": alive,
                    "server_alive": alive, "oom_kills": 1 - alive, "seconds": 7}),
    ]


LINES = ([json.dumps({"type": "env", "mem_total_kb": 2 << 20, "del_pct": 70})]
         + run("Linux-4KB", 400, 1000, 0, 90000, 89000)
         + run("Linux-2MB", 1000, 1600, 400, 100000, 60000, alive=0)
         + run("HawkEye", 1000, 1050, 0, 99000, 95000, split_end=60))


def test_per_config_figures():
    s = report.summarize(report.read(LINES))
    k4, m2, hk = (s["configs"][c] for c in ("Linux-4KB", "Linux-2MB", "HawkEye"))
    assert k4["memory_after_insert_kb"] == 1000
    assert k4["memory_no_pressure_kb"] == 450          # mean of 400 and 500
    assert m2["memory_under_pressure_kb"] == 2000      # RSS + swap
    assert m2["peak_memory_kb"] == 2000
    assert k4["huge_no_pressure_kb"] == 200
    assert hk["thp_split"] == 50 and hk["zero_pages_freed"] == 60
    assert not m2["server_alive"] and m2["oom_kills"] == 1
    assert hk["throughput_no_pressure"] == 99000


def test_comparisons_and_goals():
    s = report.summarize(report.read(LINES))
    c = s["comparisons"]
    assert c["hawkeye_vs_4kb_memory"] == 1.05
    assert c["linux2mb_vs_4kb_memory"] == 2.0
    assert c["hawkeye_vs_2mb_throughput"] == 0.99
    assert s["goals"] == {"hawkeye_memory_within_10pct_of_4kb": True,
                          "hawkeye_throughput_within_2pct_of_2mb": True}
    text = report.format_text(s)
    assert "Linux-2MB" in text and "NOT met" not in text


def test_goal_not_met_and_missing_config():
    lines = LINES[:1] + run("Linux-4KB", 400, 1000, 0, 90000, 89000) \
        + run("Linux-2MB", 1000, 1600, 0, 100000, 60000) \
        + run("HawkEye", 1000, 1200, 0, 97000, 95000)
    s = report.summarize(report.read(lines))
    assert s["goals"] == {"hawkeye_memory_within_10pct_of_4kb": False,
                          "hawkeye_throughput_within_2pct_of_2mb": False}
    assert "NOT met" in report.format_text(s)
    s = report.summarize(report.read(LINES[:1] + run("Linux-4KB", 400, 1000, 0, 1, 1)))
    assert s["comparisons"]["hawkeye_vs_4kb_memory"] is None
    assert s["goals"]["hawkeye_memory_within_10pct_of_4kb"] is None


def test_plot_writes_png(tmp_path):
    path = tmp_path / "rss.png"
    report.plot(report.read(LINES), str(path))
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_interleaved_repetitions():
    lines = (run("Linux-2MB/1", 1000, 0, 0, 10000, 0) + run("HawkEye/1", 1000, 0, 0, 9900, 0)
             + run("Linux-2MB/2", 1000, 0, 0, 12000, 0) + run("HawkEye/2", 1000, 0, 0, 12600, 0))
    s = report.summarize(report.read(lines))
    rep = s["repeated"]
    t = rep["throughput_no_pressure"]
    assert t["Linux-2MB"]["runs"] == {"1": 10000, "2": 12000} and t["Linux-2MB"]["mean"] == 11000
    assert t["HawkEye"]["mean"] == 11250
    assert abs(t["Linux-2MB"]["stdev"] - 1414.2) < 0.1
    assert rep["hawkeye_vs_2mb_throughput"] == 11250 / 11000
    assert rep["hawkeye_vs_2mb_throughput_pairs"] == {"1": 0.99, "2": 1.05}
    assert rep["hawkeye_throughput_within_2pct_of_2mb"] is True
    assert "repeated HawkEye / Linux-2MB: 1.023" in report.format_text(s)
    # nothing repeated: nothing to say
    assert report.summarize(report.read(LINES))["repeated"] == {}


def in_container(config, limit, peak, thp_t1, killed=0, xs=None):
    """A run of bloat.sh -g: samples with the cgroups' figures, its
    "container" line."""
    lines = []
    for t, phase, kb, thp in ((0, "P1", 100, 0), (1, "P1", 600, thp_t1), (2, "T1", 300, thp_t1),
                              (3, "T1", 310, thp_t1 + 10), (4, "T2", 500, 0)):
        s = json.loads(sample(config, t, phase, kb))
        s["cgroups"] = {"bench-redis": {"kb": kb, "thp_kb": thp, "swap_kb": 0, "thp_split": 0,
                                        "promoted": 0}}
        for i, (n, got) in enumerate((xs or {}).items()):
            s["cgroups"][n] = {"kb": 64, "thp_kb": 0, "swap_kb": 0, "thp_split": 0,
                               "promoted": got * t}
        lines.append(json.dumps(s))
    lines.append(json.dumps({"type": "end", "config": config, "completed": 1 - killed,
                             "server_alive": 1 - killed, "oom_kills": killed, "seconds": 4}))
    lines.append(json.dumps({"type": "container", "config": config, "limit_kb": limit,
                             "peak_kb": peak, "swap_peak_kb": 0, "oom_kills": killed,
                             "pgscan": 0, "thp_split": 3, "zero_freed": 1500,
                             "xs": {n: {"weight": 100 * (1 + 2 * i), "promoted": 3 * got,
                                        "thp_kb": 0, "thp_split": 0}
                                    for i, (n, got) in enumerate((xs or {}).items())}}))
    return lines


XS_FLAT_NESTED = {"bench-xs1": 4, "bench-xs2": 12, "bench-xs2/a": 3, "bench-xs2/b": 9}


def test_containers(tmp_path):
    lines = (in_container("Linux-4KB", 0, 1000, 0) + in_container("Linux-2MB", 1100, 1100, 200, killed=1)
             + in_container("HawkEye", 1100, 1040, 200)
             + in_container("HawkEye-3", 1100, 1060, 190, xs=XS_FLAT_NESTED))
    c = report.summarize(report.read(lines))["containers"]
    hk = c["configs"]["HawkEye"]
    assert c["configs"]["Linux-2MB"]["killed"] and not hk["killed"]
    assert hk["huge_no_pressure_kb"] == 205 and hk["memory_no_pressure_kb"] == 305
    assert hk["huge_share_while_free"] == 200 / 600  # at half the limit, in P1
    assert c["configs"]["Linux-4KB"]["huge_share_while_free"] is None  # no limit
    assert c["hawkeye_vs_4kb_peak"] == 1.04 and c["hawkeye_vs_2mb_huge"] == 1.0
    # the first sample where the processes' cgroups (the leaves) have one
    # process's regions (env xs_mb MB each, 16 when not recorded: 8)
    # promoted; a parent counts its children's
    assert c["configs"]["HawkEye-3"]["first_promotions"] == XS_FLAT_NESTED
    assert c["weights_flat"] == 3.0 and c["weights_nested"] == 3.0
    assert c["goals"] == {"hawkeye_never_killed": True, "hawkeye_peak_within_5pct_of_4kb": True,
                          "hawkeye_sampled_peak_within_5pct_of_4kb": True,
                          "hawkeye_holds_2mb_huge_pages_while_free": True,
                          "xsbench_containers_keep_huge_pages": True,
                          "promotions_follow_weights_flat": True,
                          "promotions_follow_weights_nested": True}
    report.plot(report.read(lines), str(tmp_path / "c.png"))
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    # a bloated peak, a kill: not met
    lines = (in_container("Linux-4KB", 0, 1000, 0) + in_container("Linux-2MB", 1100, 1100, 200)
             + in_container("HawkEye", 1100, 1100, 100, killed=1))
    g = report.summarize(report.read(lines))["containers"]["goals"]
    assert g == {"hawkeye_never_killed": False, "hawkeye_peak_within_5pct_of_4kb": False,
                 "hawkeye_sampled_peak_within_5pct_of_4kb": True,
                 "hawkeye_holds_2mb_huge_pages_while_free": False}
    assert "NOT met" in report.format_text(report.summarize(report.read(lines)))


def test_containers_in_rounds():
    """Interleaved rounds: each round's ratios against its own Linux-4KB,
    a goal met only when it holds in every round."""
    skewed = dict(XS_FLAT_NESTED, **{"bench-xs2/a": 4, "bench-xs2/b": 8})
    lines = (in_container("Linux-4KB/1", 0, 1000, 0) + in_container("HawkEye/1", 1100, 1040, 200)
             + in_container("HawkEye-3/1", 1100, 1060, 190, xs=XS_FLAT_NESTED)
             + in_container("Linux-4KB/2", 0, 2000, 0) + in_container("HawkEye/2", 2200, 2120, 200)
             + in_container("HawkEye-3/2", 2200, 2100, 190, xs=skewed))
    c = report.summarize(report.read(lines))["containers"]
    assert c["hawkeye_vs_4kb_peak_rounds"] == {"1": 1.04, "2": 1.06}
    assert c["hawkeye_vs_4kb_peak"] == 1.05 and c["hawkeye_vs_4kb_peak_range"] == [1.04, 1.06]
    assert c["weights_flat_rounds"] == {"1": 3.0, "2": 3.0}
    assert c["weights_nested_rounds"] == {"1": 3.0, "2": 2.0}
    g = c["goals"]
    assert g["hawkeye_peak_within_5pct_of_4kb"] is False
    assert g["promotions_follow_weights_flat"] is True
    assert g["promotions_follow_weights_nested"] is False


def test_split_to_mthp_by_round():
    """Split to mTHP against split to 4 KB, each round against its own:
    memory at most 1.02x, huge + mTHP memory kept at least 5x."""
    def mthp_run(label, t2_rss, huge, mthp):
        lines = run(label, 400, t2_rss, 0, 1, 1)
        for i, ln in enumerate(lines):
            s = json.loads(ln)
            if s.get("type") == "sample" and s["phase"] == "T2":
                s.update(anon_huge_kb=huge, mthp_kb=mthp)
                lines[i] = json.dumps(s)
            elif s.get("type") == "sample":
                s["mthp_kb"] = 0
                lines[i] = json.dumps(s)
        return lines
    lines = (LINES[:1] + mthp_run("HawkEye-64KB-split4KB/1", 1000, 100, 0)
             + mthp_run("HawkEye-64KB/1", 1010, 200, 400)
             + mthp_run("HawkEye-64KB-split4KB/2", 1000, 100, 0)
             + mthp_run("HawkEye-64KB/2", 1030, 200, 600))
    s = report.summarize(report.read(lines))
    c = s["comparisons"]
    assert c["split_mthp_vs_4kb_memory_rounds"] == {"1": 1.01, "2": 1.03}
    assert c["split_mthp_vs_4kb_large_kept_rounds"] == {"1": 6.0, "2": 8.0}
    assert c["split_mthp_vs_4kb_large_kept"] == 7.0
    assert s["goals"]["split_mthp_memory_within_2pct_of_4kb"] is False  # round 2: 1.03x
    assert s["goals"]["split_mthp_keeps_5x_large"] is True
    assert c["split_mthp_not_recovered_rounds"] == []
    assert s["configs"]["HawkEye-64KB/1"]["recover"] is None

    # redisbloat dense: each side's dense 64 KB pieces in base pages.
    def dense(label, kb):
        return json.dumps({"dense_base_kb": kb, "large_kb": 0, "type": "dense", "config": label})
    s = report.summarize(report.read(lines + [dense("HawkEye-64KB-split4KB/1", 450),
                                              dense("HawkEye-64KB/1", 30)]))
    assert s["configs"]["HawkEye-64KB/1"]["dense_base_kb"] == 30
    assert s["configs"]["HawkEye-64KB/2"]["dense_base_kb"] is None

    # bloat.sh -r: the use each side's deep recovery left; a side that did
    # not get as deep as it goes fails its round's goals.
    def recover(label, reached):
        return json.dumps({"type": "recover", "config": label, "use_pct_before": 85.0,
                           "use_pct_after": 70.5 if reached else 80.0, "rounds": 7,
                           "reached": reached, "seconds": 3})
    s = report.summarize(report.read(lines + [recover("HawkEye-64KB-split4KB/1", 1),
                                              recover("HawkEye-64KB/1", 1),
                                              recover("HawkEye-64KB-split4KB/2", 0)]))
    assert s["configs"]["HawkEye-64KB/1"]["recover"] == {
        "use_pct_before": 85.0, "use_pct_after": 70.5, "rounds": 7, "reached": 1}
    assert s["comparisons"]["split_mthp_not_recovered_rounds"] == ["2"]
    assert s["goals"]["split_mthp_keeps_5x_large"] is False


def test_pressure_phase_faults():
    """What P3 (and recovery's run to low_pct) faulted: the kernel's
    counters from the first of those samples to the last; None without
    them (an older sampler) or with a single sample."""
    def faulted(label, counts):
        out = []
        for ln in run(label, 400, 1000, 0, 1, 1):
            s = json.loads(ln)
            if s.get("type") == "sample":
                s.update(zip(("thp_fault_alloc", "thp_fault_fallback", "mthp_fault_kb"),
                             counts.get(s["phase"], (5, 1, 64))))
            out.append(json.dumps(s))
        return out
    lines = faulted("HawkEye-64KB/1", {"T1": (5, 1, 64), "P3": (5, 1, 64), "T2": (9, 9, 9)})
    lines.insert(6, json.dumps(dict(json.loads(lines[5]), phase="recover", t=5.5,
                                    thp_fault_alloc=300, thp_fault_fallback=11, mthp_fault_kb=2112)))
    c = report.summarize(report.read(lines))["configs"]["HawkEye-64KB/1"]
    assert (c["pressure_thp_faults"], c["pressure_thp_fault_fallback"],
            c["pressure_mthp_fault_kb"]) == (295, 10, 2048)
    c = report.summarize(report.read(run("HawkEye", 400, 1000, 0, 1, 1)))["configs"]["HawkEye"]
    assert c["pressure_thp_faults"] is None and c["pressure_mthp_fault_kb"] is None
