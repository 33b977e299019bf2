"""bench/clearing.c: every method leaves the buffer zero (the program
checks every word after each pass and fails otherwise), and its JSON
carries a figure per method and round."""
import json
import os
import subprocess

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "clearing.c")


def test_clears_and_reports(tmp_path):
    exe = str(tmp_path / "clearing")
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-D_GNU_SOURCE", "-o", exe, SRC], check=True)
    out = tmp_path / "c.json"
    subprocess.run([exe, "-m", "64", "-r", "2", "-o", str(out)], check=True, timeout=300)
    r = json.loads(out.read_text())
    assert r["settings"]["mb"] == 64 and r["settings"]["rounds"] == 2
    for m in ("per4k_stosq", "sequential", "nontemporal", "fault_4k"):
        vals = r["methods"][m]["values"]
        assert len(vals) == 2 and all(v > 0 for v in vals), m
    # fault_4k's mapping has no huge pages (MADV_NOHUGEPAGE)
    assert r["methods"]["fault_4k"]["huge_kb"] == [0, 0]
