"""bench/report_io.py: what the *_report.py summarisers share, and that each
summariser that reads through it reports a bad line the same way."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import promotion_report  # noqa: E402
import report_io  # noqa: E402
import table1_report  # noqa: E402


def test_json_lines_skips_blank_lines_and_counts_them():
    got = list(report_io.json_lines(['{"a": 1}\n', "  \n", '{"b": 2}']))
    assert got == [(1, {"a": 1}), (3, {"b": 2})]


@pytest.mark.parametrize("parse", [promotion_report.parse_lines, table1_report.parse_lines])
def test_a_line_that_is_not_json_names_its_number(parse):
    with pytest.raises(report_io.ReportError, match="line 2: not JSON"):
        parse(["", "{oops"])


def test_ratio():
    assert report_io.ratio(3, 2) == 1.5
    assert report_io.ratio(None, 2) is None and report_io.ratio(3, 0) is None


def test_write_json_makes_the_directory_and_refuses_nan(tmp_path, capsys):
    path = tmp_path / "sub" / "x.json"
    report_io.write_json(str(path), {"a": [1]}, indent=2)
    assert json.loads(path.read_text()) == {"a": [1]} and path.read_text().endswith("\n")
    assert f"wrote {path}" in capsys.readouterr().err
    with pytest.raises(ValueError):
        report_io.write_json(str(path), {"a": float("nan")})
