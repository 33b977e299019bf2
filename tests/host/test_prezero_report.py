"""bench/prezero_report.py: the arithmetic of the pre-zeroing figures."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import prezero_report as report  # noqa: E402

LINES = [
    '{"type": "env", "kernel": "6.12.117-hawkeye", "mem_total_kb": 2000000, "cpus": 2}',
    '{"type": "bandwidth", "nontemporal": 1, "pages": 262144, "seconds": 2.0, "cpu_seconds": 0.5}',
    '{"type": "bandwidth", "nontemporal": 0, "pages": 262144, "seconds": 4.0}',
    '{"type": "rate", "knob": 2560, "pages": 12800, "seconds": 5.0}',
    '{"type": "spinup", "workload": "jvm", "label": "Linux-2MB", "seconds": 6.0}',
    '{"type": "spinup", "workload": "jvm", "label": "Linux-2MB", "seconds": 4.0}',
    '{"type": "spinup", "workload": "jvm", "label": "HawkEye-2MB", "seconds": 2.5}',
    '{"type": "spinup", "workload": "jvm", "label": "HawkEye-2MB", "seconds": 2.0}',
    '{"type": "hashinsert", "label": "Linux-2MB", "mib": 768, "keys": 1, "seconds": 3.0,'
    ' "faults": 384, "collisions": 0}',
    '{"type": "hashinsert", "label": "HawkEye-2MB", "mib": 768, "keys": 1, "seconds": 1.5,'
    ' "faults": 384, "collisions": 0}',
]


def test_summary_figures():
    s = report.summarize(report.read(LINES))
    assert [b["mb_per_s"] for b in s["bandwidth"]] == [512.0, 256.0]
    # per CPU-second of the threads where prezero.sh recorded it, else None
    assert [b["mb_per_cpu_s"] for b in s["bandwidth"]] == [2048.0, None]
    assert s["rate"][0]["observed_pages_per_s"] == 2560
    assert s["spinup"]["jvm"]["median"] == {"Linux-2MB": 5.0, "HawkEye-2MB": 2.25}
    # Run i of one configuration over run i of the other (the rounds of
    # prezero.sh's interleaving): 6 / 2.5 and 4 / 2.
    assert s["spinup"]["jvm"]["speedup"] == 2.2
    assert s["spinup"]["jvm"]["speedup_range"] == [2.0, 2.4]
    assert s["spinup"]["hashinsert"]["speedup"] == 2.0
    text = report.format_text(s)
    assert "non-temporal" in text and "speedup x2.20 [x2.00-x2.40]" in text


def test_missing_config_has_no_speedup():
    s = report.summarize(report.read(LINES[:5]))
    assert s["spinup"]["jvm"]["speedup"] is None
    assert "n/a" in report.format_text(s)


def test_redis_is_requests_per_second_higher_is_better():
    lines = LINES + [
        '{"type": "spinup", "workload": "redis", "label": "Linux-2MB", "seconds": 4.0, "ops_per_s": 64.0}',
        '{"type": "spinup", "workload": "redis", "label": "HawkEye-2MB", "seconds": 2.0, "ops_per_s": 128.0}',
        '{"type": "spinup", "workload": "redis", "label": "Linux-4KB", "seconds": 8.0, "ops_per_s": 32.0}',
        '{"type": "thread_cpu", "experiment": "table8", "config": "HawkEye-2MB", "seconds": 9.0,'
        ' "clk_tck": 100, "threads": {"hawkeye_zerod": 1.5}}',
    ]
    s = report.summarize(report.read(lines))
    r = s["spinup"]["redis"]
    assert r["unit"] == "requests/s"
    assert r["mean"] == {"Linux-2MB": 64.0, "HawkEye-2MB": 128.0, "Linux-4KB": 32.0}
    assert r["speedup"] == 2.0
    assert s["spinup"]["jvm"]["unit"] == "s"
    assert s["thread_cpu"][0]["threads"]["hawkeye_zerod"] == 1.5


def test_jvm_pretouch_is_each_round_less_its_start_up():
    lines = LINES + [
        '{"type": "spinup", "workload": "jvm16", "label": "Linux-2MB", "seconds": 1.0}',
        '{"type": "spinup", "workload": "jvm16", "label": "Linux-2MB", "seconds": 1.5}',
        '{"type": "spinup", "workload": "jvm16", "label": "HawkEye-2MB", "seconds": 1.5}',
        '{"type": "spinup", "workload": "jvm16", "label": "HawkEye-2MB", "seconds": 1.0}',
    ]
    s = report.summarize(report.read(lines))
    p = s["spinup"]["jvm-pretouch"]
    # Round 1: (6 - 1) / (2.5 - 1.5) = 5; round 2: (4 - 1.5) / (2 - 1) = 2.5.
    assert p["seconds"] == {"Linux-2MB": [5.0, 2.5], "HawkEye-2MB": [1.0, 1.0]}
    assert p["speedup"] == 3.75 and p["speedup_range"] == [2.5, 5.0]
    assert s["spinup"]["jvm"]["speedup"] == 2.2     # the whole run, as before
    assert "jvm-pretouch" not in report.summarize(report.read(LINES))["spinup"]
