"""bench/streaming_report.py: streaming at a container's limit, recovery on
against off, round by round."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import streaming_report as report  # noqa: E402
from report_io import json_lines  # noqa: E402


def stream(config, rnd, mbps, episodes=0, scanned=0):
    return {"type": "stream", "config": config, "round": rnd, "seconds": 320 / mbps,
            "mb_per_s": mbps, "peak_kb": 98000, "anon_kb": 65600, "pgscan": 80000,
            "episodes": episodes, "thp_scanned": scanned, "bytes_read": 0}


ENV = {"type": "env", "kernel": "6.12.117-hawkeye", "max_mb": 96, "hold_mb": 64,
       "file_mb": 320, "rounds": 3}


def summarize(lines):
    return report.summarize(list(json_lines(json.dumps(x) for x in lines)))


def test_ratios_round_by_round_and_the_goals():
    s = summarize([ENV, stream("off", 1, 100), stream("on", 1, 98), stream("off", 2, 200),
                   stream("on", 2, 190), stream("off", 3, 120), stream("on", 3, 120)])
    assert s["configs"]["off"]["mb_per_s"] == [100, 200, 120]
    assert s["configs"]["on"]["mb_per_s_median"] == 120
    assert s["configs"]["on"]["mb_per_s_range"] == [98, 190]
    # The ratio of each round, not of the medians (120 / 120 = 1.0).
    assert s["ratios"] == [0.98, 0.95, 1.0]
    assert s["on_vs_off"] == 0.98 and s["on_vs_off_range"] == [0.95, 1.0]
    assert s["goals"] == {"on_within_10pct_of_off": True, "recovery_walks_nothing": True}


def test_the_median_round_counts_and_a_walk_misses_the_goal():
    # One slow round of three is noise; the median is 0.95.
    s = summarize([stream("off", 1, 100), stream("on", 1, 80),
                   stream("off", 2, 100), stream("on", 2, 95),
                   stream("off", 3, 100), stream("on", 3, 101, episodes=1, scanned=3)])
    assert s["on_vs_off"] == 0.95 and s["on_vs_off_range"] == [0.8, 1.01]
    assert s["configs"]["on"]["episodes"] == 1 and s["configs"]["on"]["thp_scanned"] == 3
    assert s["goals"] == {"on_within_10pct_of_off": True, "recovery_walks_nothing": False}
    # Two slow rounds of three: the median is 0.85.
    s = summarize([stream("off", 1, 100), stream("on", 1, 80),
                   stream("off", 2, 100), stream("on", 2, 85),
                   stream("off", 3, 100), stream("on", 3, 101)])
    assert s["goals"]["on_within_10pct_of_off"] is False


def test_missing_reads_fail_or_leave_the_goals_unknown():
    # Asked for 3 rounds, 1 complete: "every round" is not shown.
    s = summarize([ENV, stream("off", 1, 100), stream("on", 1, 99)])
    assert s["on_vs_off"] == 0.99
    assert s["goals"]["on_within_10pct_of_off"] is False
    # A round with one read only.
    s = summarize([stream("off", 1, 100), stream("on", 1, 99), stream("off", 2, 100)])
    assert s["goals"]["on_within_10pct_of_off"] is False
    # Nothing read with recovery on: nothing is known.
    s = summarize([stream("off", 1, 100)])
    assert s["goals"] == {"on_within_10pct_of_off": None, "recovery_walks_nothing": None}


def test_main_writes_the_summary_and_refuses_bad_input(tmp_path, capsys):
    raw, out = tmp_path / "streaming.jsonl", tmp_path / "streaming.json"
    raw.write_text("\n".join(json.dumps(x) for x in (ENV, stream("off", 1, 100), stream("on", 1, 99))))
    assert report.main([str(raw), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["on_vs_off"] == 0.99
    assert "recovery on / off: 0.990" in capsys.readouterr().out
    raw.write_text(json.dumps(ENV) + "\n")
    assert report.main([str(raw), "-o", str(out)]) == 1
    raw.write_text("{not json\n")
    assert report.main([str(raw), "-o", str(out)]) == 1
