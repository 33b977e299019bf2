"""The TLB model plugin in a guest (make test-tlbmodel; skipped elsewhere:
it needs QEMU 10, which scripts/setup-tlbmodel fetches, and two boots'
worth of time). bench/sequential sweeps 64 MiB twice, with huge pages and
with base pages: the model must learn the page size from the guest's own
tables (2 MB walks only in the first, 4 KB walks for every page of every
sweep in the second), tell the two processes apart by their CR3, and
count the same user-mode instructions per MiB in both."""

import os
import subprocess
import sys

import pytest

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(REPO, "bench"))
import modeled_tlb  # noqa: E402
import native_tlb  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("HAWKEYE_TLBMODEL") != "1",
                                reason="make test-tlbmodel runs it (QEMU 10, two boots)")

PAGES = 64 * 256  # 64 MiB of 4 KB pages


def test_page_sizes_spaces_and_instructions(tmp_path):
    bindir = str(tmp_path)
    native_tlb.build(bindir, ["sequential"])
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n"
                      "echo madvise >/sys/kernel/mm/transparent_hugepage/enabled\n"
                      f"{bindir}/sequential -m 64 -f 1.0 -d 0 -n 128 -l seq-huge || exit 1\n"
                      f"{bindir}/sequential -m 64 -f 1.0 -d 0 -n 128 -N -l seq-base || exit 1\n")
    script.chmod(0o755)
    raw = tmp_path / "raw.jsonl"
    subprocess.run([os.path.join(REPO, "scripts", "vm-run"), *modeled_tlb.vm_run_args(raw),
                    "--mem", "1G", "--timeout", "3600", "--", str(script)],
                   check=True, timeout=4000)
    runs = modeled_tlb.runs_from(raw)
    huge, base = runs["seq-huge"]["total"], runs["seq-base"]["total"]
    assert runs["seq-huge"]["ops"] == runs["seq-base"]["ops"] == 128
    # Huge pages: 32 of them, walked at least once each; the program's own
    # text, stack and data are 4 KB pages, but few.
    assert huge["walks_2m"] >= 32 and huge["walks_4k"] < huge["walks_2m"]
    # Base pages: more than the STLB holds, so each page walks every sweep.
    assert base["walks_2m"] == 0 and base["walks_4k"] >= 2 * PAGES
    # The same code: user-mode instructions and accesses agree.
    assert abs(huge["insns"] / base["insns"] - 1) < 0.02
    assert abs(huge["accesses"] / base["accesses"] - 1) < 0.02
