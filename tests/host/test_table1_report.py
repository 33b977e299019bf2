"""Tests of bench/table1_report.py: its arithmetic and output shape, on made-up
JSON lines (they test the report, not the kernel)."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import table1_report as report  # noqa: E402


def rep(label, n, faults, fault_us, sys_us, total_us, thp):
    return json.dumps({"label": label, "rep": n, "mib": 4, "faults": faults,
                       "fault_time_us": fault_us, "avg_fault_us": fault_us / faults,
                       "sys_us": sys_us, "total_us": total_us, "thp_fault_alloc": thp,
                       "timer_ns": 30.0})


LINES = [
    '{"type": "env", "kernel": "6.12.117-hawkeye", "clocksource": "tsc", "mem_total_kb": 2000000,'
    ' "cpus": 2, "mib": 4, "reps": 2, "thp_enabled_boot": "madvise", "thp_defrag_boot": "madvise"}',
    '{"type": "config", "label": "Linux-4KB", "setup": "thp never", "thp_enabled": "never",'
    ' "thp_defrag": "madvise", "free_kb": 1000}',
    '{"type": "warmup", "label": "Linux-4KB", "mib": 4, "seconds": 9.5}',
    rep("Linux-4KB", 0, 1024, 3000.0, 3000, 4000.0, 0),
    rep("Linux-4KB", 1, 1024, 5000.0, 5000, 6000.0, 0),
    '',
    '{"type": "config", "label": "Linux-2MB", "setup": "thp always", "thp_enabled": "always",'
    ' "thp_defrag": "madvise", "free_kb": 1000}',
    rep("Linux-2MB", 0, 2, 1000.0, 900, 1100.0, 2),
    rep("Linux-2MB", 1, 2, 1000.0, 1100, 1300.0, 2),
]


@pytest.fixture
def parsed():
    return report.parse_lines(LINES)


def test_parse_splits_line_kinds(parsed):
    env, configs, reps = parsed
    assert env["kernel"] == "6.12.117-hawkeye"
    assert list(configs) == ["Linux-4KB", "Linux-2MB"]
    assert [r["label"] for r in reps] == ["Linux-4KB"] * 2 + ["Linux-2MB"] * 2
    assert env["warmup"] == [("Linux-4KB", 9.5)]


def test_warmup_is_reported_apart_from_the_means(parsed):
    env, configs, reps = parsed
    summary = report.summarize(reps)
    out = report.build_report(env, configs, reps, summary, report.ratios(summary))
    assert out["environment"]["warmup_s"] == {"Linux-4KB": 9.5}
    assert summary["Linux-4KB"]["faults"]["n"] == 2


def test_zeroing_counts_above_the_faults_of_their_size_are_refused():
    """A counting bug once seen: 264 of 256 2 MB faults pre-zeroed."""
    def line(**kw):
        r = json.loads(rep("HawkEye-2MB", 0, 256, 1000.0, 900, 1100.0, 256))
        return json.dumps(dict(r, **kw))

    ok = report.parse_lines([line(zeroing_size="2m", prezeroed=250, sync_zeroed=6)])
    assert ok[2][0]["prezeroed"] == 250
    with pytest.raises(report.ReportError, match="264 2m faults zeroed of 256"):
        report.parse_lines([line(zeroing_size="2m", prezeroed=264, sync_zeroed=0)])
    with pytest.raises(report.ReportError, match="unknown zeroing_size"):
        report.parse_lines([line(zeroing_size="1g", prezeroed=1)])


def test_stats():
    s = report.stats([1, 2, 3, 6])
    assert s == {"mean": 3.0, "median": 2.5, "min": 1, "max": 6,
                 "stdev": pytest.approx(2.1602, abs=1e-4), "n": 4, "values": [1, 2, 3, 6]}
    assert report.stats([5])["stdev"] == 0.0


def test_summary_means_and_order(parsed):
    summary = report.summarize(parsed[2])
    assert list(summary) == ["Linux-4KB", "Linux-2MB"]
    k4 = summary["Linux-4KB"]
    assert k4["faults"]["mean"] == 1024
    assert k4["fault_time_us"]["mean"] == 4000.0
    assert k4["fault_time_us"]["min"] == 3000.0 and k4["fault_time_us"]["max"] == 5000.0
    assert k4["avg_fault_us"]["mean"] == pytest.approx(4000 / 1024)
    assert k4["sys_us"]["stdev"] == pytest.approx(1414.2136, abs=1e-3)
    assert summary["Linux-2MB"]["thp_fault_alloc"]["mean"] == 2


def test_ratios_pair_the_rounds(parsed):
    """Round i of one configuration over round i of the other: the median
    of those ratios, and their range as the spread."""
    rat = report.ratios(report.summarize(parsed[2]))
    assert rat["of"] == "Linux-2MB" and rat["over"] == "Linux-4KB"
    assert rat["fault_time_us"] == pytest.approx((1000 / 3000 + 1000 / 5000) / 2)
    assert rat["spread"]["fault_time_us"] == pytest.approx([1000 / 5000, 1000 / 3000])
    assert rat["avg_fault_us"] == pytest.approx((500 * 1024 / 3000 + 500 * 1024 / 5000) / 2)
    assert rat["faults"] == pytest.approx(2 / 1024)
    assert rat["spread"]["faults"] == pytest.approx([2 / 1024, 2 / 1024])
    assert rat["total_us"] == pytest.approx((1100 / 4000 + 1300 / 6000) / 2)


def test_interleaved_rounds_are_summarised_in_round_order():
    """bench/table1.sh writes A0 B0 A1 B1: each configuration's values come
    out in round order, so that the pairs are the rounds run side by side."""
    lines = [rep("A", 0, 1, 10.0, 1, 10.0, 0), rep("B", 0, 1, 20.0, 1, 20.0, 0),
             rep("A", 1, 1, 30.0, 1, 30.0, 0), rep("B", 1, 1, 90.0, 1, 90.0, 0)]
    summary = report.summarize(list(reversed(report.parse_lines(lines)[2])))
    assert summary["A"]["total_us"]["values"] == [10.0, 30.0]
    rat = report.ratios(summary, "A", "B")
    assert rat["spread"]["total_us"] == [2.0, 3.0] and rat["total_us"] == 2.5


def test_ratios_missing_config_or_zero_base(parsed):
    summary = report.summarize(parsed[2][:2])
    assert report.ratios(summary) is None
    zero = {"Linux-4KB": {m: report.stats([0, 1]) for m in report.METRICS},
            "Linux-2MB": {m: report.stats([1, 1]) for m in report.METRICS}}
    assert report.ratios(zero)["faults"] is None


def test_table_shape(parsed):
    summary = report.summarize(parsed[2])
    text = report.format_table(summary, [report.ratios(summary)])
    lines = text.splitlines()
    assert "median over 2 repetitions" in lines[0]
    for title in ("#faults", "PF time total (ms)", "avg PF (us)", "system time (ms)",
                  "total time (ms)", "huge pages"):
        assert title in lines[1]
    assert lines[3].startswith("Linux-4KB") and lines[4].startswith("Linux-2MB")
    assert "1,024 [1,024-1,024]" in lines[3] and "4.00 [3.00-5.00]" in lines[3]  # ms
    assert lines[5].startswith("Linux-2MB vs Linux-4KB:")
    assert "total PF time x0.267 [x0.2-x0.333]" in lines[5] and "avg PF time x137" in lines[5]
    assert len({len(line) for line in lines[1:5]}) == 1  # columns line up


def test_json_report(parsed):
    env, configs, reps = parsed
    summary = report.summarize(reps)
    out = report.build_report(env, configs, reps, summary, report.all_ratios(summary),
                              kernel="ignored", flavour="release")
    assert out["environment"]["kernel"] == "6.12.117-hawkeye"
    assert out["environment"]["flavour"] == "release"
    assert out["environment"]["mib"] == 4
    assert out["environment"]["reps"] == {"Linux-4KB": 2, "Linux-2MB": 2}
    assert out["environment"]["thp_enabled_boot"] == "madvise"
    assert [c["label"] for c in out["configs"]] == ["Linux-4KB", "Linux-2MB"]
    assert out["configs"][1]["thp_enabled"] == "always"
    assert out["configs"][0]["metrics"]["total_us"]["mean"] == 5000.0
    json.dumps(out, allow_nan=False)


def test_kernel_from_argument_when_input_lacks_it(parsed):
    _, configs, reps = parsed
    summary = report.summarize(reps)
    out = report.build_report({}, configs, reps, summary, None, kernel="6.12-x")
    assert out["environment"]["kernel"] == "6.12-x"
    assert out["ratios"] is None


def test_bad_input():
    with pytest.raises(report.ReportError, match="no repetitions"):
        report.parse_lines(LINES[:2])
    with pytest.raises(report.ReportError, match="missing faults"):
        report.parse_lines(['{"label": "x", "rep": 0, "mib": 1}'])


def test_main_writes_json(tmp_path, capsys):
    raw = tmp_path / "t.jsonl"
    raw.write_text("\n".join(LINES) + "\n")
    out = tmp_path / "sub" / "table1.json"
    assert report.main([str(raw), "-o", str(out), "--flavour", "debug"]) == 0
    assert "Linux-2MB vs Linux-4KB" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["benchmark"] == "table1" and data["environment"]["flavour"] == "debug"
    assert report.main([str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 1
