"""bench/native_tlb.py's summary and its report section."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import native_tlb  # noqa: E402
from experiments import native_tlb as section  # noqa: E402


def runs(rates, valid=True):
    """A round per (workload, huge rate, base rate) triple list."""
    out = []
    for rnd, triples in enumerate(rates, 1):
        for w, huge, base in triples:
            out += [{"workload": w, "pages": "huge", "rate": huge, "round": rnd, "valid": valid},
                    {"workload": w, "pages": "base", "rate": base, "round": rnd, "valid": True}]
    return out


def test_summary_pairs_each_round_and_drops_invalid_runs():
    r = runs([[("xsbench", 150, 100)], [("xsbench", 200, 100)], [("xsbench", 120, 100)]])
    r.append({"workload": "xsbench", "pages": "huge", "rate": 900, "round": 4, "valid": False})
    r.append({"workload": "xsbench", "pages": "base", "rate": 100, "round": 4, "valid": True})
    s = native_tlb.summarize(r)["xsbench"]
    assert s["rounds"] == 3
    assert s["speedup"] == pytest.approx(1.5)
    assert s["speedup_range"] == [pytest.approx(1.2), pytest.approx(2.0)]
    assert s["huge_rate"] == 150 and s["base_rate"] == 100
    assert native_tlb.summarize(runs([[("sequential", 100, 100)]], valid=False)) == {}


@pytest.mark.parametrize("xs, seq, want", [
    ((150, 160), (98, 101), "reproduced"),
    ((150, 160), (98, 130), "within noise"),
    ((101, 103), (98, 101), "not reproduced"),
])
def test_random_against_sequential_claim(xs, seq, want):
    rounds = [[("xsbench", xs[i], 100), ("sequential", seq[i], 100), ("graph500", 120, 100)]
              for i in range(2)]
    result = {"environment": {"kernel": "k", "cpu": "c", "cores": 16, "pmu": [], "dev_kvm": False},
              "settings": {"mb": 4096, "seconds": 10, "rounds": 2},
              "summary": native_tlb.summarize(runs(rounds)), "pteloop": None}
    text, claims = section.render({"native-tlb": result}, "/nonexistent")
    claim = next(c for c in claims if c[0].startswith("A random-access workload"))
    assert claim[3].startswith(want)
    assert "| sequential | mib_per_s | 100 |" in "\n".join(text)
