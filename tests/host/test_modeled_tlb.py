"""bench/modeled_tlb.py: the timed part's counters from the model's
writes, the CPI calibration and the predictions."""

import json
import os
import struct
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import modeled_tlb  # noqa: E402


def space(root, name, **counters):
    sp = {k: 0 for k in modeled_tlb.COUNTERS}
    sp.update(root=root, tag=struct.unpack("<Q", name.encode().ljust(8, b"\0"))[0], pid=1)
    sp.update(counters)
    return sp


def write(path, recs):
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")


def test_runs_take_their_own_first_and_last_write(tmp_path):
    raw = tmp_path / "raw.jsonl"
    a0 = space(1, "xsb-h1", insns=100, walk_cycles=10)
    a1 = space(1, "xsb-h1", insns=1100, walk_cycles=210)
    b0 = space(2, "xsb-b1", insns=50)
    b1 = space(2, "xsb-b1", insns=2050, walk_cycles=4000)
    write(raw, [
        {"type": "mark", "from": 1, "mark": 0, "spaces": [a0]},
        # another space's write: a's counters in it do not count for a
        {"type": "mark", "from": 2, "mark": 7, "spaces": [space(1, "xsb-h1", insns=999), b0]},
        {"type": "mark", "from": 1, "mark": 10, "spaces": [a1]},
        {"type": "mark", "from": 2, "mark": 0, "spaces": [a1, b0]},
        {"type": "mark", "from": 2, "mark": 20, "spaces": [a1, b1]},
        {"type": "exit", "from": 0, "mark": 0, "spaces": [a1, b1]},
    ])
    runs = modeled_tlb.runs_from(raw)
    assert runs["xsb-h1"]["ops"] == 10
    assert runs["xsb-h1"]["per_op"]["insns"] == 100 and runs["xsb-h1"]["per_op"]["walk_cycles"] == 20
    assert runs["xsb-b1"]["ops"] == 20 and runs["xsb-b1"]["per_op"]["insns"] == 100
    assert runs["xsb-b1"]["per_op"]["walk_cycles"] == 200


def per_op(insns, walk, stlb=0):
    p = {k: 0 for k in modeled_tlb.COUNTERS}
    p.update(insns=insns, walk_cycles=walk, stlb_cycles=stlb)
    return p


def run(insns, walk):
    return {"ops": 1, "total": {}, "per_op": per_op(insns, walk)}


def test_calibration_reproduces_the_native_speedup():
    per = {"huge": per_op(1000, 50, 10), "base": per_op(1000, 800, 40)}
    cpi = modeled_tlb.calibrate(per, 1.5)
    assert cpi == pytest.approx((840 - 1.5 * 60) / (1.5 * 1000 - 1000))
    assert modeled_tlb.speedup(per, cpi) == pytest.approx(1.5)
    # No CPI makes huge pages slower than the model says they are.
    assert modeled_tlb.calibrate(per, 0.9) is None


def test_report_predicts_the_others_with_the_calibrated_cpi():
    runs = {"xsb-h1": run(1000, 0), "xsb-b1": run(1000, 500),
            "gra-h1": run(2000, 0), "gra-b1": run(2000, 400),
            "seq-h1": run(500, 0), "seq-b1": run(500, 5)}
    native = {"xsbench": {"speedup": 1.5}, "graph500": {"speedup": 1.2},
              "sequential": {"speedup": 1.0}}
    out = modeled_tlb.report(runs, native, "xsbench", {})
    assert out["calibration"]["cpi"] == pytest.approx(1.0)
    g = out["workloads"]["graph500"]
    assert g["predicted_speedup"] == pytest.approx(2400 / 2000)
    assert g["within_goal"] is True and out["workloads"]["xsbench"]["within_goal"] is None
    assert out["workloads"]["sequential"]["error"] == pytest.approx(505 / 500 - 1)
    assert out["goal_met"] is True
    native["graph500"]["speedup"] = 1.5
    assert modeled_tlb.report(runs, native, "xsbench", {})["goal_met"] is False
    # The calibration workload's native range gives a CPI range, and each
    # prediction a range: a lower native speedup, a higher CPI.
    native["xsbench"]["speedup_range"] = [1.25, 2.0]
    out = modeled_tlb.report(runs, native, "xsbench", {})
    assert out["calibration"]["cpi_range"] == pytest.approx([0.5, 2.0])
    assert out["workloads"]["graph500"]["predicted_range"] == pytest.approx(
        [(2000 * 2 + 400) / (2000 * 2), (2000 * 0.5 + 400) / (2000 * 0.5)])


def test_a_model_without_a_tlb_fails_and_so_does_a_missing_workload():
    """Speedups near 1 are within 15 % of 1.00: where huge pages gain at
    least 10 % natively, the predicted gain must be within half of it too.
    A predicted workload that did not run fails the goal."""
    runs = {"xsb-h1": run(1000, 0), "xsb-b1": run(1000, 500),
            "gra-h3": run(2000, 0), "gra-b3": run(2000, 0),
            "seq-h1": run(500, 0), "seq-b1": run(500, 5)}
    native = {"xsbench": {"speedup": 1.5}, "graph500": {"speedup": 1.17},
              "sequential": {"speedup": 1.0}}
    out = modeled_tlb.report(runs, native, "xsbench", {})
    g = out["workloads"]["graph500"]
    assert abs(g["error"]) < 0.15 and g["gain_error"] == pytest.approx(-1.0)
    assert g["within_goal"] is False and out["goal_met"] is False
    assert out["workloads"]["sequential"]["gain_error"] is None
    del runs["gra-h3"]
    out = modeled_tlb.report(runs, native, "xsbench", {})
    assert "graph500" not in out["workloads"] and out["goal_met"] is False
    assert modeled_tlb.rounds_in(runs) == 3


def test_processes_by_pid_with_their_overhead_between_progress_lines(tmp_path):
    """Two processes with the same label (instances of one workload in two
    runs) stay apart by pid; each interval's MMU overhead is its STLB and
    walk cycles over instructions x CPI plus those."""
    raw = tmp_path / "raw.jsonl"

    def sp(pid, root, insns, walk, stlb=0):
        return dict(space(root, "xsbench-", insns=insns, walk_cycles=walk, stlb_cycles=stlb),
                    pid=pid)
    write(raw, [
        {"type": "mark", "from": 1, "mark": 0, "spaces": [sp(7, 1, 100, 0)]},
        {"type": "mark", "from": 1, "mark": 10, "spaces": [sp(7, 1, 1100, 1000)]},
        {"type": "mark", "from": 2, "mark": 0, "spaces": [sp(7, 1, 1100, 1000), sp(8, 2, 0, 0)]},
        # a write by pid 8 does not end an interval of pid 7
        {"type": "mark", "from": 2, "mark": 5, "spaces": [sp(7, 1, 9999, 9999), sp(8, 2, 500, 0)]},
        {"type": "mark", "from": 1, "mark": 30, "spaces": [sp(7, 1, 3100, 1000, 8)]},
    ])
    p = modeled_tlb.processes_from(raw, 2.0)
    assert set(p) == {7, 8}
    assert p[7]["ops"] == 30 and p[8]["ops"] == 5
    # pid 7: 1000 insns + 1000 walk cycles, then 2000 insns + 8 STLB cycles
    assert p[7]["intervals"] == pytest.approx([1000 / 3000, 8 / 4008])
    assert p[7]["cycles_per_op"] == pytest.approx((3000 + 4008) / 30)
    assert p[7]["mmu_overhead"] == pytest.approx(1008 / 7008)
    assert p[8]["intervals"] == [0.0] and p[8]["cycles_per_op"] == pytest.approx(200)


def test_the_daemons_writes_are_no_workloads(tmp_path):
    """hawkeye-pmud --model's marks (bit 63) from a root that a workload
    named before it exited are not that workload's progress."""
    raw = tmp_path / "raw.jsonl"
    a = [dict(space(1, "xsbench-", insns=i), pid=7) for i in (0, 1000, 2000)]
    write(raw, [{"type": "mark", "from": 1, "mark": 0, "spaces": [a[0]]},
                {"type": "mark", "from": 1, "mark": 1000, "spaces": [a[1]]},
                {"type": "mark", "from": 1, "mark": 1 << 63 | 77 << 32 | 1, "spaces": [a[2]]}])
    p = modeled_tlb.processes_from(raw, 2.0)
    assert p[7]["ops"] == 1000 and p[7]["cycles_per_op"] == pytest.approx(2.0)


def test_a_reused_pid_gets_no_figures(tmp_path):
    """Two processes with one pid in the boot: neither run's instance is
    given the other's figures."""
    raw = tmp_path / "raw.jsonl"
    a = [dict(space(1, "xsbench-", insns=i), pid=7) for i in (0, 1000)]
    b = [dict(space(2, "sequenti", insns=i), pid=7) for i in (0, 5000)]
    c = [dict(space(3, "xsbench-", insns=i), pid=8) for i in (0, 1000)]
    write(raw, [{"type": "mark", "from": 1, "mark": 0, "spaces": [a[0]]},
                {"type": "mark", "from": 1, "mark": 10, "spaces": [a[1]]},
                {"type": "mark", "from": 2, "mark": 0, "spaces": [b[0]]},
                {"type": "mark", "from": 2, "mark": 10, "spaces": [b[1]]},
                {"type": "mark", "from": 3, "mark": 0, "spaces": [c[0]]},
                {"type": "mark", "from": 3, "mark": 10, "spaces": [c[1]]}])
    p = modeled_tlb.processes_from(raw, 1.0)
    assert p[7] is None and p[8]["cycles_per_op"] == pytest.approx(100)
