"""The console-log readers used by vm-run and make test."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from consolelog import KUNIT_DIR, kernel_problems, kunit_results  # noqa: E402

import pytest  # noqa: E402

needs_kunit = pytest.mark.skipif(not os.path.exists(os.path.join(KUNIT_DIR, "kunit_parser.py")),
                                 reason="no kernel tree (make test builds one)")

CLEAN_BOOT = """\
[    0.000000] Linux version 6.12.117-hawkeye-debug
[    1.234567] virtio_blk virtio1: [vda] 2097152 512-byte logical blocks
[    2.000000] Adding 1048572k swap on /dev/vda.
"""


def test_clean_boot_has_no_problems():
    assert kernel_problems(CLEAN_BOOT) == []


def test_problems_are_found():
    for line in [
        "[   12.3] Kernel panic - not syncing: sysrq triggered crash",
        "[    5.0] BUG: unable to handle page fault for address: 0000",
        "[    5.0] WARNING: CPU: 1 PID: 77 at mm/huge_memory.c:3000 split+0x1/0x2",
        "[    5.0] WARNING: possible circular locking dependency detected",
        "[    5.0] Oops: general protection fault, probably for non-canonical address",
        "[  120.0] INFO: task khugepaged:40 blocked for more than 120 seconds.",
    ]:
        assert kernel_problems(CLEAN_BOOT + line + "\n") == [line.strip()]


def test_a_kmemleak_scan_line_alone_is_not_a_problem():
    # A scan may report an object whose pointer it missed at that moment,
    # and the next find it referenced: the file is empty, the line stays
    # (one way a boot whose tests all passed, kmemleak.sh's included,
    # failed in CI once). kmemleak.sh fails on confirmed leaks.
    line = "[ 2000.0] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
    assert kernel_problems(CLEAN_BOOT + line + "\n") == []


KTAP = """\
[    1.0] KTAP version 1
[    1.0] 1..2
[    1.0]     KTAP version 1
[    1.0]     # Subtest: hawkeye-prezero
[    1.0]     # module: hawkeye
[    1.0]     1..3
[    1.0]     ok 1 zero_list_order
[    1.0]     not ok 2 rate_limit
[    1.0]     ok 3 nt_clear # SKIP no movnti
[    1.0] # hawkeye-prezero: pass:1 fail:1 skip:1 total:3
[    1.0] not ok 1 hawkeye-prezero
[    1.0]     KTAP version 1
[    1.0]     # Subtest: list-kunit-test
[    1.0]     1..1
[    1.0]     ok 1 list_test_list_init
[    1.0] ok 2 list-kunit-test
[    1.0] ok 3 not_a_case_outside_any_suite
"""


@needs_kunit
def test_kunit_cases_are_read():
    assert kunit_results(KTAP) == [
        ("hawkeye-prezero", "zero_list_order", "pass"),
        ("hawkeye-prezero", "rate_limit", "fail"),
        ("hawkeye-prezero", "nt_clear", "skip"),
        ("list-kunit-test", "list_test_list_init", "pass"),
    ]


@needs_kunit
def test_no_kunit_in_log():
    assert kunit_results(CLEAN_BOOT) == []


@needs_kunit
def test_a_case_the_kernel_did_not_finish_is_a_failure():
    crashed = """\
[    1.0] KTAP version 1
[    1.0] 1..1
[    1.0]     KTAP version 1
[    1.0]     # Subtest: hawkeye-promote
[    1.0]     1..3
[    1.0]     ok 1 first
[    1.0] random: crng init done
[    1.0]     ok 2 second
[    1.0] BUG: unable to handle page fault for address: 0000
"""
    assert kunit_results(crashed) == [
        ("hawkeye-promote", "first", "pass"),
        ("hawkeye-promote", "second", "pass"),
        ("hawkeye-promote", "(did not finish)", "fail"),
    ]
