"""Tests of bench/promotion_report.py and the promotion_*.py modules it
imports: their arithmetic and output shape, on made-up JSON lines in the
shape bench/promotion.sh writes (they test the report, not the kernel)."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import promotion_fairness  # noqa: E402
import promotion_pmu  # noqa: E402
import promotion_report as report  # noqa: E402
import promotion_runs  # noqa: E402

T0 = 1000.0   # CLOCK_MONOTONIC of every instance's start
REGIONS, HOT = 10, 4   # 10 regions, the top 4 hot


def line(**kw):
    return json.dumps(kw)


def run_line(run, policy, experiment="single", workload="xsbench", instances=1):
    return line(type="run", run=run, experiment=experiment, workload=workload, policy=policy,
                instances=instances, mb=20, hot_fraction=0.4, args="-d 5",
                budget={"pages_to_scan": 512, "scan_sleep_ms": 1000, "batch": 1,
                        "sleep_ms": 1000, "scan_period_ms": 5000, "sample_window_ms": 1000},
                knobs={})


def inst_sample(inst, huge_map):
    return {"inst": inst, "huge_map": huge_map, "huge": huge_map.count("H"),
            "hot_huge": huge_map[REGIONS - HOT:].count("H"), "hot_regions": HOT,
            "anon_huge_kb": 2048 * huge_map.count("H"), "rss_kb": 20480}


def sample(run, t, counters, *insts):
    return line(type="sample", run=run, mono=T0 + t, vmstat=counters, khugepaged={},
                inst=list(insts))


def instance(run, inst, seconds, work, start=T0):
    return line(type="instance", run=run, inst=inst, workload="xsbench", pid=100 * run + inst,
                map_start=0x200000, map_end=0x200000 * 11, hot_start=0x200000 * 7,
                regions=REGIONS, hot_regions=HOT, hot={}, init_seconds=0.5,
                start_mono=start, seconds=seconds, unit="lookups", work=work)


# Linux promotes one region a second from the bottom: the 4 hot ones (6..9)
# are huge at t=10; hawkeye-g promotes the hot ones first, one a second,
# from t=2. The baseline (none) does 100 lookups/s.
LINUX_MAPS = ["4" * REGIONS] + ["H" * k + "4" * (REGIONS - k) for k in range(1, 11)]
HG_MAPS = ["4" * REGIONS, "4" * REGIONS] + ["4" * 6 + "4" * (4 - k) + "H" * k
                                            for k in range(1, 5)] + ["4" * 6 + "HHHH"] * 5

LINES = [
    line(type="env", kernel="6.12.117-hawkeye", mem_total_kb=2000000, cpus=2, quick="1",
         hawkeye_promote=True, mb=20, fair_mb=20, hot_fraction=0.4, duration=10,
         fair_seconds=5, leave_mb=32, boot={}),
    run_line(1, "none"),
    line(type="fragment", run=1, free_2m_blocks_before=500, free_2m_blocks_after=0,
         blocks_pinned=900, huge_held=3, mem_free_before_kb=1800000,
         mem_free_after_kb=1790000, seconds=4.0),
    *[sample(1, t, {"thp_collapse_alloc": 7}, inst_sample(0, "4" * REGIONS))
      for t in range(-2, 11)],
    line(type="progress", run=1, inst=0, t=1.0, mono=T0 + 1, work=100, total=100,
         unit="lookups"),
    instance(1, 0, 10.0, 1000),
    line(type="fragment_release", run=1, free_2m_blocks=480, mono=T0 - 0.5),
    run_line(2, "linux"),
    # One sample before the start (fragmented phase): no huge pages yet.
    sample(2, -1, {"thp_collapse_alloc": 50}, inst_sample(0, "4" * REGIONS)),
    *[sample(2, t, {"thp_collapse_alloc": 50 + t}, inst_sample(0, m))
      for t, m in enumerate(LINUX_MAPS)],
    instance(2, 0, 10.0, 1100),
    run_line(3, "hawkeye-g"),
    *[sample(3, t, {"thp_collapse_alloc": 0, "hawkeye_promote_success": 20 + max(0, t - 1)},
             inst_sample(0, m))
      for t, m in enumerate(HG_MAPS)],
    instance(3, 0, 10.0, 1250),
]


@pytest.fixture
def data():
    return report.parse_lines(LINES)


def test_parse_groups_by_run(data):
    assert set(data["runs"]) == {1, 2, 3}
    assert data["env"]["kernel"] == "6.12.117-hawkeye"
    assert len(data["samples"][2]) == 12
    assert data["fragment"][1]["blocks_pinned"] == 900
    assert data["release"][1]["free_2m_blocks"] == 480
    assert data["progress"][1][0][0]["work"] == 100
    assert data["instances"][3][0]["work"] == 1250


def test_series_times_and_promotions(data):
    ser = promotion_runs.series(data["samples"][2], 0, T0, "thp_collapse_alloc")
    assert ser[0]["t"] == -1 and ser[0]["promotions"] == 0
    assert [p["t"] for p in ser[1:4]] == [0, 1, 2]
    # promotions count from the run's first sample (50)
    assert ser[5]["promotions"] == 4 and ser[5]["huge"] == 4 and ser[5]["hot_huge"] == 0


def test_series_leaves_out_exiting_process(data):
    # the last sample found the process's mapping gone (exiting): not a point
    lines = LINES + [sample(2, 10.5, {"thp_collapse_alloc": 60}, inst_sample(0, "-" * REGIONS))]
    samples = report.parse_lines(lines)["samples"][2]
    ser = promotion_runs.series(samples, 0, T0, "thp_collapse_alloc")
    assert ser[-1]["t"] == 10 and ser[-1]["huge"] == 10


def test_time_to_coverage():
    mk = lambda t, h: {"t": t, "hot_huge": h, "hot_regions": 10}  # noqa: E731
    ser = [mk(-1, 10), mk(0, 0), mk(1, 8), mk(2, 9), mk(3, 10)]
    assert promotion_runs.time_to_coverage(ser)["t"] == 2   # 9/10 is 90 %; t<0 ignored
    assert promotion_runs.time_to_coverage(ser, goal=1.0)["t"] == 3
    assert promotion_runs.time_to_coverage(ser[:3]) is None
    assert promotion_runs.coverage({"hot_huge": 1, "hot_regions": 0}) == 0.0


def test_time_saved():
    # 1100 lookups at the baseline's 100/s take 11 s; the run took 10 s.
    assert report.time_saved(1100, 10.0, 100.0) == pytest.approx(1.0)
    assert report.time_saved(900, 10.0, 100.0) == pytest.approx(-1.0)
    assert report.time_saved(None, 10.0, 100.0) is None
    assert report.time_saved(1000, 10.0, None) is None


def test_single_summary(data):
    s = report.summarize_single(data)["xsbench"]
    lin, hg, none = (s["policies"][p] for p in ("linux", "hawkeye-g", "none"))
    assert list(s["policies"]) == ["none", "linux", "hawkeye-g"]
    assert none["rate"] == 100 and none["promotions_total"] == 0 and none["t90"] is None
    # linux: all 4 hot regions huge at t=10 (the 10th promotion); 4 of 4 >= 90 %
    assert lin["t90"] == 10 and lin["promotions_to_90"] == 10
    assert lin["promotions_per_hot_region"] == pytest.approx(2.5)
    assert lin["huge_to_90"] == 10
    assert lin["anon_huge_kb_at_start"] == 0
    # hawkeye-g: the 4 hot ones at t=5, counter 20 -> 24
    assert hg["counter"] == "hawkeye_promote_success"
    assert hg["t90"] == 5 and hg["promotions_to_90"] == 4
    assert hg["promotions_per_hot_region"] == pytest.approx(1.0)
    assert hg["final_coverage"] == 1.0 and hg["final_huge"] == 4
    # speedups and time saved per promotion over the none run (100/s)
    assert lin["speedup"] == pytest.approx(1.1) and hg["speedup"] == pytest.approx(1.25)
    assert lin["time_saved_s"] == pytest.approx(1.0)
    assert lin["time_saved_per_promotion_ms"] == pytest.approx(100.0)   # 1 s / 10
    assert hg["time_saved_s"] == pytest.approx(2.5)
    assert hg["promotions_total"] == 9
    assert hg["time_saved_per_promotion_ms"] == pytest.approx(2500 / 9)
    assert none["fragment"]["free_2m_blocks_after"] == 0
    assert none["free_2m_blocks_after_release"] == 480
    c = s["comparison"]
    assert c["t90_linux_over_hawkeye_g"] == pytest.approx(2.0) and not c["lower_bound"]
    assert c["met_t90_ratio"] is False and c["met_promotions_per_hot_region"] is True
    assert c["time_saved_per_promotion_hawkeye_g_over_linux"] == pytest.approx(2.5 / 0.9 / 1.0)
    assert lin["series"][1] == [0, 0.0, 0, 0]


def test_lower_bound_when_linux_never_covers(data):
    lines = [ln for ln in LINES
             if not (json.loads(ln).get("run") == 2 and json.loads(ln).get("type") == "sample"
                     and json.loads(ln)["mono"] - T0 >= 7)]
    s = report.summarize_single(report.parse_lines(lines))["xsbench"]
    assert s["policies"]["linux"]["t90"] is None
    assert s["comparison"]["lower_bound"] is True
    assert s["comparison"]["t90_linux_over_hawkeye_g"] == pytest.approx(10 / 5)


def fairness_lines():
    # Three instances; linux fills #0 first, then #1; hawkeye-g spreads.
    out = [run_line(10, "linux", "fairness", instances=3),
           run_line(11, "hawkeye-g", "fairness", instances=3),
           run_line(12, "none", "fairness", instances=3)]
    lin = [("4" * 10, "4" * 10, "4" * 10), ("HHHH" + "4" * 6, "4" * 10, "4" * 10),
           ("H" * 10, "H" + "4" * 9, "4" * 10), ("H" * 10, "HHHHH" + "4" * 5, "4" * 10)]
    hg = [("4" * 10,) * 3, ("4" * 9 + "H",) * 3, ("4" * 8 + "HH", "4" * 8 + "HH", "4" * 9 + "H")]
    for t, maps in enumerate(lin):
        out.append(sample(10, t, {"thp_collapse_alloc": t}, *[inst_sample(i, m)
                                                              for i, m in enumerate(maps)]))
    for t, maps in enumerate(hg):
        out.append(sample(11, t, {"hawkeye_promote_success": t},
                          *[inst_sample(i, m) for i, m in enumerate(maps)]))
    # Instance #2 of linux finished early: its last sample is missing.
    out.append(sample(10, 4, {"thp_collapse_alloc": 4},
                      inst_sample(0, "H" * 10), inst_sample(1, "H" * 8 + "44")))
    out += [instance(10, 0, 20.0, 500), instance(10, 1, 24.0, 500),
            instance(10, 2, 30.0, 500, start=T0 + 0.5),
            instance(11, 0, 21.0, 500), instance(11, 1, 21.5, 500), instance(11, 2, 22.0, 500),
            instance(12, 0, 30.0, 500), instance(12, 1, 30.0, 500), instance(12, 2, 33.0, 500)]
    return out


def test_max_huge_difference():
    per = {0: [{"t_run": 0, "huge": 0}, {"t_run": 1, "huge": 5}, {"t_run": 2, "huge": 9}],
           1: [{"t_run": 0, "huge": 0}, {"t_run": 1, "huge": 1}],
           2: [{"t_run": 0, "huge": 2}, {"t_run": 1, "huge": 0}, {"t_run": 2, "huge": 0}]}
    # t=2 lacks instance 1: only t=0 (2) and t=1 (5) count
    assert promotion_fairness.max_huge_difference(per) == (5, 1)
    assert promotion_fairness.max_huge_difference({0: [], 1: []}) == (None, None)


def test_fairness_summary():
    d = report.parse_lines(LINES + fairness_lines())
    f = report.summarize_fairness(d)["xsbench"]["policies"]
    lin, hg = f["linux"], f["hawkeye-g"]
    assert [i["seconds"] for i in lin["instances"]] == [20.0, 24.0, 30.0]
    assert lin["completion_spread_s"] == pytest.approx(10.0)
    assert lin["mean_seconds"] == pytest.approx(74 / 3)
    assert [i["speedup"] for i in lin["instances"]] == pytest.approx([1.5, 1.25, 1.1])
    # instance 2 started 0.5 s later, but samples are taken for all at once:
    # the run's time axis (from the first start) is common; the largest gap
    # is at t=2 (10 vs 1 vs 0); t=4 lacks instance 2
    assert [s[0] for s in lin["series"]["2"]] == [0.0, 1.0, 2.0, 3.0]
    assert lin["max_huge_difference"] == 10 and lin["max_huge_difference_t"] == 2
    assert lin["instances"][2]["t90"] is None and lin["instances"][0]["t90"] == pytest.approx(2.0)
    assert hg["max_huge_difference"] == 1 and hg["max_huge_difference_t"] == 2
    assert hg["completion_spread_s"] == pytest.approx(1.0)
    assert [i["final_huge"] for i in hg["instances"]] == [2, 2, 1]


def test_unavailable_and_env():
    lines = LINES[:1] + [run_line(1, "linux"), line(type="unavailable", run=2,
                                                   experiment="single", workload="xsbench",
                                                   policy="hawkeye-g")]
    d = report.parse_lines(lines)
    env = report.environment(d)
    assert env["unavailable"] == ["hawkeye-g"]
    assert env["budgets"][0]["pages_to_scan"] == 512
    # a run without instances (e.g. cut short) yields no policy entry
    assert report.summarize_single(d)["xsbench"]["policies"] == {}


def test_bad_input():
    with pytest.raises(report.ReportError, match="no runs"):
        report.parse_lines(LINES[:1])
    with pytest.raises(report.ReportError, match="unknown type"):
        report.parse_lines(['{"type": "what"}'])


def second_round(delay):
    """Round 2 of LINES' three runs (ids 4-6), with hawkeye-g's promotions
    starting DELAY seconds later and Linux doing 1,000 lookups less."""
    out = []
    for ln in LINES[1:]:
        o = json.loads(ln)
        o["run"] += 3
        if o["type"] == "run":
            o["round"] = 2
        if o["type"] == "instance" and o["run"] == 5:
            o["work"] -= 100
        if o["type"] == "sample" and o["run"] == 6:
            t = round(o["mono"] - T0)
            o["inst"][0] = inst_sample(0, HG_MAPS[max(0, t - delay)])
        out.append(json.dumps(o))
    return out


def test_rounds_median_and_range():
    d = report.parse_lines(LINES + second_round(3))
    assert promotion_runs.rounds_of(d, "single") == {
        "xsbench": [{"none": 1, "linux": 2, "hawkeye-g": 3},
                    {"none": 4, "linux": 5, "hawkeye-g": 6}]}
    s = report.summarize_single(d)["xsbench"]
    c = s["comparison"]
    # t90: linux 10 and 10, hawkeye-g 5 and 8: paired ratios 2.0 and 1.25
    assert c["rounds"] == 2
    assert c["t90_linux_over_hawkeye_g"] == pytest.approx(1.625)
    assert c["t90_linux_over_hawkeye_g_range"] == pytest.approx([1.25, 2.0])
    # the speedup ratios pair within a round: 1.25/1.1 and 1.25/1.0
    assert c["speedup_hawkeye_g_over_linux_range"] == pytest.approx([1.25 / 1.1, 1.25])
    hg = s["policies"]["hawkeye-g"]
    assert hg["rounds"]["t90"] == [5, 8] and hg["t90"] == pytest.approx(6.5)
    # the plot's series is the median round's (the lower one of two): round 2
    assert c["round_shown"] == 2 and hg["run"] == 6
    assert [r["t90_linux_over_hawkeye_g"] for r in s["rounds"]] == pytest.approx([2.0, 1.25])
    # round 2's Linux saved no time over base pages: no time-saved ratio
    assert s["rounds"][1]["time_saved_per_promotion_hawkeye_g_over_linux"] is None
    assert c["time_saved_per_promotion_hawkeye_g_over_linux_range"] == pytest.approx([2.5 / 0.9] * 2)


def test_text_output(data):
    text = report.format_single(report.summarize_single(data))
    assert "xsbench   linux" in text and "2.50" in text
    assert "time to 90 % linux / hawkeye-g = x2.00 (x2.00-x2.00 over 1 rounds; goal >= x5)" in text
    ftext = report.format_fairness(report.summarize_fairness(
        report.parse_lines(LINES + fairness_lines())))
    assert "#0 20.0 s (x1.50) 10 huge" in ftext


def test_main_writes_json(tmp_path, capsys):
    raw = tmp_path / "p.jsonl"
    raw.write_text("\n".join(LINES + fairness_lines()) + "\n")
    out = tmp_path / "sub" / "promotion.json"
    assert report.main([str(raw), "-o", str(out), "--no-plots"]) == 0
    assert "Promotion of hot regions" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["benchmark"] == "promotion"
    assert data["workloads"]["xsbench"]["policies"]["linux"]["t90"] == 10
    fair = json.loads((tmp_path / "sub" / "fairness.json").read_text())
    assert fair["workloads"]["xsbench"]["policies"]["hawkeye-g"]["max_huge_difference"] == 1
    assert report.main([str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 1


def test_plots(tmp_path):
    pytest.importorskip("matplotlib")
    d = report.parse_lines(LINES + fairness_lines())
    paths = report.plot(report.summarize_single(d), report.summarize_fairness(d), str(tmp_path))
    assert [os.path.basename(p) for p in paths] == ["promotion.png", "fairness.png"]
    assert all(os.path.getsize(p) > 1000 for p in paths)


# The pmu experiment: xsbench -f 1.0 (instance 0, all 10 regions hot) and
# sequential (instance 1) run together. hawkeye-g serves both in turns, one
# region each a second: xsbench is fully huge at t=10, when the sequential
# one has 10 too. hawkeye-pmu (synthetic overheads 60 % and 0.5 %) gives
# all of the budget, two a second, to xsbench: fully huge at t=5.
def pmu_sample(run, t, counter, huge_random, huge_seq, measured=None):
    insts = []
    for inst, h in ((0, huge_random), (1, huge_seq)):
        hm = "H" * h + "4" * (REGIONS - h)
        d = {"inst": inst, "huge_map": hm, "huge": h, "hot_huge": h, "hot_regions": REGIONS,
             "anon_huge_kb": 2048 * h, "rss_kb": 20480}
        if measured:
            d["hawkeye"] = {"regions": REGIONS - h, "measured_overhead": measured[inst]}
        insts.append(d)
    return sample(run, t, {"hawkeye_promote_success": counter}, *insts)


def pmu_instance(run, inst, workload, unit, work):
    return line(type="instance", run=run, inst=inst, workload=workload, pid=10 * run + inst,
                map_start=0x200000, map_end=0x200000 * 11, hot_start=0x200000,
                regions=REGIONS, hot_regions=REGIONS, hot={}, init_seconds=0.5,
                start_mono=T0, seconds=12.0, unit=unit, work=work)


def pmu_lines(g_full=True, source="synthetic"):
    out = [run_line(20, "hawkeye-g", "pmu", "xsbench+sequential", 2),
           run_line(21, "hawkeye-pmu", "pmu", "xsbench+sequential", 2),
           line(type="overhead", run=21, source=source, pmud_status=3,
                pmud_message="hawkeye-pmud: no hardware PMU on this machine",
                inst=[{"inst": 0, "workload": "xsbench", "pid": 210, "overhead_bp": 6000},
                      {"inst": 1, "workload": "sequential", "pid": 211, "overhead_bp": 50}])]
    for t in range(-1, 13):
        k = max(0, t)
        rnd = min(REGIONS, k) if g_full else min(REGIONS - 1, k)
        out.append(pmu_sample(20, t, 100 + rnd + min(REGIONS, k), rnd, min(REGIONS, k)))
        out.append(pmu_sample(21, t, 100 + min(REGIONS, 2 * k), min(REGIONS, 2 * k), 0,
                              measured={0: 6000, 1: 50}))
    out += [pmu_instance(20, 0, "xsbench", "lookups", 1200),
            pmu_instance(20, 1, "sequential", "mib", 2400),
            pmu_instance(21, 0, "xsbench", "lookups", 1500),
            pmu_instance(21, 1, "sequential", "mib", 2400)]
    return out


def test_huge_at():
    ser = [{"t": -1, "huge": 0}, {"t": 0, "huge": 1}, {"t": 2, "huge": 4}]
    assert promotion_pmu.huge_at(ser, -2) is None
    assert promotion_pmu.huge_at(ser, 1.5) == 1
    assert promotion_pmu.huge_at(ser, 9) == 4


def test_pmu_summary():
    d = report.parse_lines(LINES[:1] + pmu_lines())
    assert d["overhead"][21]["source"] == "synthetic"
    s = report.summarize_pmu(d)["xsbench+sequential"]
    g, m = s["policies"]["hawkeye-g"], s["policies"]["hawkeye-pmu"]
    assert list(s["policies"]) == ["hawkeye-g", "hawkeye-pmu"]
    assert g["random_t_full"] == 10 and g["random_t90"] == 9
    assert m["random_t_full"] == 5 and m["random_t90"] == 5
    # the budget hawkeye-g spent on the sequential one
    assert g["sequential_huge_by_random_full"] == 10 and g["sequential_huge_final"] == 10
    assert m["sequential_huge_by_random_full"] == 0 and m["sequential_huge_final"] == 0
    assert m["sequential"]["t_full"] is None and g["sequential"]["t_full"] == 10
    assert g["promotions_total"] == 20 and m["promotions_total"] == 10
    assert m["overhead"]["synthetic"] is True and m["overhead"]["pmud_status"] == 3
    assert m["random"]["measured_overhead_bp"] == 6000
    assert m["sequential"]["measured_overhead_bp"] == 50
    assert g["overhead"] == {"source": None} and g["random"]["measured_overhead_bp"] is None
    assert m["random"]["workload"] == "xsbench" and m["sequential"]["unit"] == "mib"
    assert m["random"]["rate"] == pytest.approx(125.0)
    assert m["random"]["series"][1] == [0, 0] and m["random"]["series"][-1] == [12, 10]
    c = s["comparison"]
    assert c["t_full_g_over_pmu"] == pytest.approx(2.0) and not c["lower_bound"]
    assert c["t90_g_over_pmu"] == pytest.approx(9 / 5)
    assert c["random_rate_pmu_over_g"] == pytest.approx(1.25)
    assert c["sequential_rate_pmu_over_g"] == pytest.approx(1.0)
    assert "TCG does not model the TLB" in s["note"]
    # no pmu runs: nothing
    assert report.summarize_pmu(report.parse_lines(LINES)) == {}


def test_pmu_lower_bound_when_g_never_full():
    d = report.parse_lines(LINES[:1] + pmu_lines(g_full=False))
    s = report.summarize_pmu(d)["xsbench+sequential"]
    g = s["policies"]["hawkeye-g"]
    assert g["random_t_full"] is None
    # by the end of the run (t=12) the sequential one had all 10
    assert g["sequential_huge_by_random_full"] == 10
    assert s["comparison"]["lower_bound"] is True
    assert s["comparison"]["t_full_g_over_pmu"] == pytest.approx(12 / 5)


def test_pmu_text():
    text = report.format_pmu(report.summarize_pmu(report.parse_lines(LINES[:1] + pmu_lines())),
                             step=5)
    assert "hawkeye-pmu: MMU overheads SYNTHETIC (hawkeye-pmud exit status 3" in text
    assert "random 60.00 %, sequential 0.50 %" in text
    assert "fully huge at t=5.0 s" in text and "fully huge at t=10.0 s" in text
    assert "huge pages at t=0,5,..:   0  10  10" in text   # pmu's random one
    assert "hawkeye-g / hawkeye-pmu = x2.00" in text
    assert "TCG does not model the TLB" in text


def test_pmu_text_says_modeled():
    text = report.format_pmu(report.summarize_pmu(report.parse_lines(
        LINES[:1] + pmu_lines(source="modeled"))), step=5)
    assert "hawkeye-pmu: MMU overheads MODELED (hawkeye-pmud --model" in text
    assert "SYNTHETIC" not in text


def test_pmu_modeled_time_for_the_same_work():
    """Under the TLB model, each instance's modeled cycles per unit of work
    (found by its pid) give hawkeye-pmu's speedup over hawkeye-g."""
    d = report.parse_lines(LINES[:1] + pmu_lines(source="modeled"))

    def mo(cpo, intervals):
        return {"cycles_per_op": cpo, "mmu_overhead": 0.05, "intervals": intervals}
    d["modeled"] = {200: mo(1200.0, [0.1, 0.05]), 201: mo(300.0, [0.01]),
                    210: mo(1000.0, [0.1, 0.0]), 211: mo(300.0, [0.01])}
    s = report.summarize_pmu(d)["xsbench+sequential"]
    assert s["policies"]["hawkeye-g"]["random"]["modeled"]["cycles_per_op"] == 1200.0
    assert s["comparison"]["random_modeled_speedup"] == pytest.approx(1.2)
    assert s["comparison"]["sequential_modeled_speedup"] == pytest.approx(1.0)
    text = report.format_pmu(s and {"xsbench+sequential": s}, step=1)
    assert ("modeled: 1,000 cycles per lookup, MMU overhead 5.00 %; in progress intervals "
            "0,1,..: 10.0 0.0 %") in text
    assert "random, modeled time for the same work: hawkeye-g / hawkeye-pmu = x1.200" in text
    # Without the model's counters: none of it.
    plain = report.summarize_pmu(report.parse_lines(LINES[:1] + pmu_lines()))
    assert plain["xsbench+sequential"]["comparison"]["random_modeled_speedup"] is None
    assert "modeled" not in report.format_pmu(plain)


def test_main_pmu_only(tmp_path, capsys):
    raw = tmp_path / "pmu.jsonl"
    raw.write_text("\n".join(LINES[:1] + pmu_lines()) + "\n")
    out = tmp_path / "promotion.json"
    assert report.main([str(raw), "-o", str(out), "--no-plots"]) == 0
    assert "HawkEye-PMU vs HawkEye-G" in capsys.readouterr().out
    # pmu runs only: the other summaries are left alone
    assert not out.exists() and not (tmp_path / "fairness.json").exists()
    data = json.loads((tmp_path / "pmu.json").read_text())
    assert data["benchmark"] == "pmu" and "TLB" in data["note"]
    pol = data["workloads"]["xsbench+sequential"]["policies"]
    assert pol["hawkeye-pmu"]["random_t_full"] == 5
    # with single runs too, promotion.json is written as well (fairness.json
    # only where fairness runs exist)
    raw.write_text("\n".join(LINES + pmu_lines()) + "\n")
    assert report.main([str(raw), "-o", str(out), "--no-plots"]) == 0
    assert out.exists()
    assert (tmp_path / "fairness.json").exists() == any(
        '"fairness"' in x for x in LINES)


def test_plot_pmu(tmp_path):
    pytest.importorskip("matplotlib")
    pmu = report.summarize_pmu(report.parse_lines(LINES[:1] + pmu_lines()))
    paths = report.plot_pmu(pmu, str(tmp_path))
    assert [os.path.basename(p) for p in paths] == ["pmu.png"]
    assert os.path.getsize(paths[0]) > 1000
    assert report.plot_pmu({}, str(tmp_path)) == []


def order_lines():
    """Figure 8: none (one run), linux and hawkeye-g in both launch orders.
    Linux covers xsbench's hot regions at t=10 when it was launched first
    and never (in its 12 s run) when Redis was; hawkeye-g at t=5 either way."""
    out = []
    rid = 30
    for policy, order, maps in (
            ("none", "workload-first", ["4" * REGIONS] * 12),
            ("linux", "workload-first", LINUX_MAPS + [LINUX_MAPS[-1]]),
            ("linux", "redis-first", ["4" * REGIONS] * 7 + LINUX_MAPS[1:6]),
            ("hawkeye-g", "workload-first", HG_MAPS + [HG_MAPS[-1]] * 1),
            ("hawkeye-g", "redis-first", HG_MAPS + [HG_MAPS[-1]] * 1)):
        o = json.loads(run_line(rid, policy, "order"))
        o.update(order=order, redis_mb=96, redis_rate=1000)
        out.append(json.dumps(o))
        out += [sample(rid, t, {"thp_collapse_alloc": t, "hawkeye_promote_success": t},
                       inst_sample(0, m)) for t, m in enumerate(maps)]
        work = 1200 if policy == "none" else 1320
        out.append(instance(rid, 0, 12.0, work))
        out.append(line(type="companion", run=rid, config="redis", t=12.0, phase="",
                        rss_kb=120000, swap_kb=0, anon_huge_kb=8192 if order == "redis-first"
                        and policy == "linux" else 0, mem_available_kb=0, swap_used_kb=0,
                        thp_split=0, zero_freed=0, collapse=0))
        out.append(line(type="companion_op", run=rid, op="get", ops=12000, secs=12.0,
                        ops_per_sec=1000.0))
        out.append(line(type="thread_cpu", run=rid, experiment="order", config=policy,
                        seconds=14.0, clk_tck=100, threads={"khugepaged": 0.5}))
        rid += 1
    return out


def test_order_summary():
    d = report.parse_lines(LINES[:1] + order_lines())
    s = report.summarize_order(d)
    assert list(s) == ["none", "linux", "hawkeye-g"]
    assert list(s["none"]) == ["workload-first", "over_rounds"]
    lin, hg = s["linux"], s["hawkeye-g"]
    assert lin["workload-first"]["t90"] == 10 and not lin["workload-first"]["t90_lower_bound"]
    # never covered when Redis came first: the run's length, flagged
    assert lin["redis-first"]["t90"] == 12.0 and lin["redis-first"]["t90_lower_bound"]
    assert lin["t90_redis_first_over_workload_first"] == pytest.approx(1.2)
    assert hg["workload-first"]["t90"] == hg["redis-first"]["t90"] == 5
    assert hg["t90_redis_first_over_workload_first"] == 1.0
    assert hg["workload-first"]["speedup"] == pytest.approx(1.1)
    assert lin["redis-first"]["redis_anon_huge_kb_end"] == 8192
    assert lin["redis-first"]["redis_get_per_s"] == 1000.0
    text = report.format_order(s)
    assert "launch order effect" in text and "≥12.0" in text
    cpu = report.summarize_thread_cpu(d)
    assert len(cpu) == 5 and cpu[0]["threads"] == {"khugepaged": 0.5}


def test_main_order_only(tmp_path):
    raw = tmp_path / "order.jsonl"
    raw.write_text("\n".join(LINES[:1] + order_lines()) + "\n")
    out = tmp_path / "promotion.json"
    assert report.main([str(raw), "-o", str(out), "--no-plots"]) == 0
    assert not out.exists()
    data = json.loads((tmp_path / "order.json").read_text())
    assert data["benchmark"] == "order" and set(data["policies"]) == {"none", "linux", "hawkeye-g"}
    assert len(data["environment"]["thread_cpu"]) == 5


def as_round(lines, k, edit=lambda o: None):
    """LINES as round K: run ids moved up by 100 * (K - 1), EDIT applied to
    each parsed line."""
    out = []
    for ln in lines:
        o = json.loads(ln)
        if o.get("run") is not None:
            o["run"] += 100 * (k - 1)
            if o["type"] == "run":
                o["round"] = k
        edit(o)
        out.append(json.dumps(o))
    return out


def instance_seconds(run, seconds):
    """An edit for as_round(): the instance lines of RUN (its id in round 1)
    take SECONDS(old seconds)."""
    def edit(o):
        if o["type"] == "instance" and o["run"] % 100 == run % 100:
            o["seconds"] = seconds(o["seconds"])
    return edit


def test_order_over_rounds():
    # Linux redis-first never covers: its run time stands in, 12, 18, 15 s.
    lines = (order_lines() + as_round(order_lines(), 2, instance_seconds(32, lambda s: 18.0))
             + as_round(order_lines(), 3, instance_seconds(32, lambda s: 15.0)))
    s = report.summarize_order(report.parse_lines(LINES[:1] + lines))
    lin, rounds = s["linux"], s["linux"]["over_rounds"]
    assert rounds["rounds"] == 3 and rounds["round_shown"] == 3
    assert lin["t90_redis_first_over_workload_first"] == pytest.approx(1.5)
    assert rounds["t90_redis_first_over_workload_first_range"] == pytest.approx([1.2, 1.8])
    assert lin["redis-first"]["t90"] == 15.0 and lin["redis-first"]["run"] == 232
    assert rounds["per_round"]["t90_redis-first"] == [12.0, 18.0, 15.0]
    assert "x1.50 (x1.20-x1.80 over 3 rounds; round 3 shown)" in report.format_order(s)


def test_fairness_over_rounds():
    # hawkeye-g's instances 5 s slower in round 2, 1 s faster in round 3.
    lines = (fairness_lines() + as_round(fairness_lines(), 2, instance_seconds(11, lambda s: s + 5))
             + as_round(fairness_lines(), 3, instance_seconds(11, lambda s: s - 1)))
    f = report.summarize_fairness(report.parse_lines(LINES + lines))["xsbench"]
    c = f["comparison"]
    assert c["rounds"] == 3 and c["round_shown"] == 1
    assert c["mean_seconds_linux_over_hawkeye_g"] == pytest.approx(74 / 64.5)
    assert c["mean_seconds_linux_over_hawkeye_g_range"] == pytest.approx([74 / 79.5, 74 / 61.5])
    assert c["per_round"]["max_huge_difference_linux"] == [10, 10, 10]
    assert f["policies"]["hawkeye-g"]["run"] == 11
    text = report.format_fairness(report.summarize_fairness(report.parse_lines(LINES + lines)))
    assert "round 1 of 3 shown" in text and "x1.15 (x0.93-x1.20)" in text


def test_pmu_over_rounds():
    # hawkeye-g never fully promotes the random one in round 2: a lower bound.
    d = report.parse_lines(LINES[:1] + pmu_lines() + as_round(pmu_lines(g_full=False), 2))
    c = report.summarize_pmu(d)["xsbench+sequential"]["comparison"]
    assert c["rounds"] == 2 and c["round_shown"] == 1 and c["lower_bound"]
    assert c["t_full_g_over_pmu"] == pytest.approx(2.2)
    assert c["t_full_g_over_pmu_range"] == pytest.approx([2.0, 2.4])
    assert c["per_round"]["t_full_g_over_pmu"] == pytest.approx([2.0, 2.4])


def modeled(cycles_per_op, work, intervals=(0.1, 0.0)):
    """What bench/modeled_tlb.py's processes_from() gives for one process."""
    return {"cycles_per_op": cycles_per_op, "cycles": cycles_per_op * work,
            "mmu_overhead": 0.05, "intervals": list(intervals)}


def test_single_modeled_speedup_and_cycles_saved_per_promotion(data):
    # none, linux, hawkeye-g (runs 1-3): 1000, 900 and 800 cycles per lookup
    data["modeled"] = {100: modeled(1000, 1000), 200: modeled(900, 1100),
                       300: modeled(800, 1250)}
    s = report.summarize_single(data)["xsbench"]
    lin, hg = s["policies"]["linux"], s["policies"]["hawkeye-g"]
    assert lin["modeled_speedup"] == pytest.approx(1000 / 900)
    assert hg["modeled_speedup"] == pytest.approx(1.25)
    # the same work at the none run's cycles per lookup, less its own, per promotion
    assert lin["modeled_saved_per_promotion_mcycles"] == pytest.approx(1100 * 100 / 1e6 / 10)
    assert hg["modeled_saved_per_promotion_mcycles"] == pytest.approx(1250 * 200 / 1e6 / 9)
    c = s["comparison"]
    assert c["modeled_speedup_hawkeye_g_over_linux"] == pytest.approx(1.25 * 900 / 1000)
    assert c["modeled_saved_per_promotion_hawkeye_g_over_linux"] == pytest.approx(
        (1250 * 200 / 9) / (1100 * 100 / 10))
    text = report.format_single(report.summarize_single(data))
    assert "modeled: speedup 1.250, MMU overhead 5.00 %" in text
    assert "xsbench: modeled speedup hawkeye-g / linux x1.12" in text
    # Without the model: nothing modeled.
    plain = report.summarize_single(report.parse_lines(LINES))["xsbench"]
    assert plain["policies"]["hawkeye-g"]["modeled_speedup"] is None
    assert "modeled" not in report.format_single({"xsbench": plain})


def test_fairness_modeled_time_and_spread():
    d = report.parse_lines(LINES + fairness_lines())
    # linux (run 10) unfair in modeled time, hawkeye-g (11) even; none (12)
    d["modeled"] = {1000: modeled(1000, 500), 1001: modeled(1100, 500), 1002: modeled(1200, 500),
                    1100: modeled(1000, 500), 1101: modeled(1000, 500), 1102: modeled(1000, 500),
                    1200: modeled(1200, 500), 1201: modeled(1200, 500), 1202: modeled(1200, 500)}
    s = report.summarize_fairness(d)["xsbench"]
    lin, hg = s["policies"]["linux"], s["policies"]["hawkeye-g"]
    assert lin["modeled_spread"] == pytest.approx(1.2) and hg["modeled_spread"] == 1.0
    assert [i["modeled_speedup"] for i in lin["instances"]] == pytest.approx(
        [1.2, 1200 / 1100, 1.0])
    assert s["comparison"]["modeled_mean_linux_over_hawkeye_g"] == pytest.approx(1.1)
    assert "mean modeled time per unit of work linux / hawkeye-g x1.100" in \
        report.format_fairness({"xsbench": s})
    # Cycles per unit of work, not cycles: an instance that did half the
    # work in half the cycles is as fast.
    d["modeled"][1001] = dict(modeled(1000, 250))
    d["modeled"][1002] = dict(modeled(1000, 250))
    assert report.summarize_fairness(d)["xsbench"]["policies"]["linux"]["modeled_spread"] == 1.0
    # One instance without the model's counters: no comparison at all.
    del d["modeled"][1101]
    s = report.summarize_fairness(d)["xsbench"]
    assert s["policies"]["hawkeye-g"]["modeled_spread"] is None
    assert s["comparison"]["modeled_mean_linux_over_hawkeye_g"] is None


def test_order_modeled_launch_order_effect():
    d = report.parse_lines(LINES[:1] + order_lines())
    # runs 30-34: none, linux wf, linux rf, hawkeye-g wf, hawkeye-g rf
    d["modeled"] = {3000: modeled(1000, 1200), 3100: modeled(900, 1320),
                    3200: modeled(990, 1320), 3300: modeled(800, 1320),
                    3400: modeled(800, 1320)}
    s = report.summarize_order(d)
    assert s["linux"]["modeled_redis_first_over_workload_first"] == pytest.approx(1.1)
    assert s["hawkeye-g"]["modeled_redis_first_over_workload_first"] == pytest.approx(1.0)
    text = report.format_order(s)
    assert "launch order effect on modeled time per lookup (redis-first / workload-first): x1.100" \
        in text


def test_modeled_without_a_baseline_instance_or_a_progress_write():
    # The none run cut short (no instance line): no modeled speedup, no crash.
    lines = [ln for ln in LINES if not ('"type": "instance"' in ln and '"run": 1,' in ln)]
    d = report.parse_lines(lines)
    d["modeled"] = {200: modeled(900, 1100), 300: modeled(800, 1250)}
    s = report.summarize_single(d)["xsbench"]
    assert s["policies"]["hawkeye-g"]["modeled_speedup"] is None
    # An instance that named itself and died before a progress line.
    d = report.parse_lines(LINES[:1] + pmu_lines(source="modeled"))
    empty = {"label": "xsbench-", "ops": 0, "cycles": 0.0, "mmu_cycles": 0, "intervals": [],
             "cycles_per_op": None, "mmu_overhead": None}
    d["modeled"] = {200: empty, 201: empty, 210: empty, 211: empty}
    assert "MMU overhead - %" in report.format_pmu(report.summarize_pmu(d))
    d = report.parse_lines(LINES[:1] + order_lines())
    d["modeled"] = {3100: empty, 3200: empty}
    assert "MMU overhead - %" in report.format_order(report.summarize_order(d))


def test_pmu_daemon_that_stopped_during_the_run_is_said():
    lines = LINES[:1] + pmu_lines(source="modeled") + [line(type="pmud_exit", run=21, status=3)]
    s = report.summarize_pmu(report.parse_lines(lines))
    assert s["xsbench+sequential"]["policies"]["hawkeye-pmu"]["overhead"]["daemon_exit"] == 3
    assert "[hawkeye-pmud stopped during the run: status 3]" in report.format_pmu(s)
