"""How make test turns guest output into counts."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from run import count_one, parse_guest_output, vm_failure  # noqa: E402


def test_kselftest_totals_are_used():
    body = ["ok 1 a", "not ok 2 b", "# Totals: pass:5 fail:1 xfail:1 xpass:0 skip:3 error:0"]
    assert count_one(body, 1) == (6, 1, 3, "not ok 2 b")


def test_failures_are_quoted():
    # upstream's khugepaged: the failing step, after the test it belongs to
    body = ["Run test: collapse_swapin (khugepaged:anon)", "Swapout one page... \x1b[0;31mFail\x1b[0m",
            "Run test: collapse_fork (madvise:anon)", "Allocate small page... \x1b[0;32mOK\x1b[0m"]
    assert count_one(body, 2) == (0, 1, 0, "exit status 2; collapse_swapin (khugepaged:anon): "
                                           "Swapout one page... Fail")
    assert count_one(["Run test: x", "OK"], 1)[3] == "exit status 1"
    # khugepaged exits early on these (CI once quoted nothing then)
    body = ["Run test: collapse_compound_extreme (madvise:anon)", "Failed to allocate huge page"]
    assert count_one(body, 1)[3] == ("exit status 1; collapse_compound_extreme (madvise:anon): "
                                     "Failed to allocate huge page")


def test_kselftest_assertions_are_quoted_first():
    # CI once quoted only "# FAIL" and "not ok": which EXPECT failed was lost
    body = ["#  RUN           faults.f ...",
            "# faults.c:221:f:registrations failed: 3, promotions failed: 9",
            "# faults.c:234:f:Expected 1 (1) <= samples (0)",
            "# faults.c:234:f:child 42 never sampled",
            "# f: Test terminated by timeout",
            "# FAIL  faults.f", "not ok 1 faults.f",
            "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"]
    assert count_one(body, 1)[3] == ("# faults.c:234:f:Expected 1 (1) <= samples (0) -- "
                                     "# faults.c:234:f:child 42 never sampled; "
                                     "# f: Test terminated by timeout; # FAIL faults.f; not ok 1 faults.f")


def test_manifest_runs_upstream_tests_with_hawkeye_off(tmp_path, monkeypatch):
    import run
    monkeypatch.setattr(run, "OUT", str(tmp_path))
    path = run.write_manifest("+x", [], ["off:khugepaged", "cow"], 0)
    lines = open(path).read().splitlines()
    assert lines[0].startswith("upstream+off/khugepaged 900 ")
    assert lines[0].split()[2].endswith("tests/guest/hawkeye-off.sh")
    assert lines[0].endswith("khugepaged -s 2 all:anon")
    assert lines[1].startswith("upstream+x/cow 900 ")


def test_manifest_runs_last_upstream_tests_after_ours(tmp_path, monkeypatch):
    import run
    monkeypatch.setattr(run, "OUT", str(tmp_path))
    path = run.write_manifest("", ["/b/baselines"], ["last:transhuge-stress"], 120)
    names = [line.split()[0] for line in open(path).read().splitlines()]
    assert names == ["hawkeye/baselines", "soak/stress-ng", "upstream/transhuge-stress"]


def test_manifest_gives_prezero_its_longer_limit(tmp_path, monkeypatch):
    import run
    monkeypatch.setattr(run, "OUT", str(tmp_path))
    path = run.write_manifest("", ["/b/baselines", "/b/prezero"], [], 0)
    limits = {line.split()[0]: int(line.split()[1]) for line in open(path)}
    assert limits == {"hawkeye/baselines": 600, "hawkeye/prezero": 900}


def test_manifest_of_a_kasan_boot_checks_its_paging_first(tmp_path, monkeypatch):
    import run
    monkeypatch.setattr(run, "OUT", str(tmp_path))
    path = run.write_manifest("", ["/b/baselines"], [], 0, kasan=True)
    lines = open(path).read().splitlines()
    assert lines[0].split()[0] == "harness/kasan-paging"
    assert lines[0].endswith("tests/guest/kasan-paging.sh")
    assert [line.split()[0] for line in lines[1:]] == ["hawkeye/baselines"]


def test_plain_programs_count_once():
    assert count_one(["Run test: x", "OK"], 0) == (1, 0, 0, "")
    assert count_one([], 4) == (0, 0, 1, "skipped")
    assert count_one([], 1) == (0, 1, 0, "exit status 1")


def test_timeout_and_bad_status_fail():
    assert count_one(["# Totals: pass:3 fail:0 xfail:0 xpass:0 skip:0 error:0"], 124)[1] == 1
    assert count_one(["# Totals: pass:3 fail:0 xfail:0 xpass:0 skip:0 error:0"], 139)[1] == 1


def test_frames():
    out = "\n".join([
        "boot noise",
        "### BEGIN hawkeye/t1",
        "# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0",
        "### END hawkeye/t1 rc=0 secs=3",
        "### BEGIN upstream/khugepaged",
        "Run test: collapse_full",
        "### END upstream/khugepaged rc=0 secs=30",
        "### BEGIN upstream/cow",
        "ok 1 partial",
    ])
    assert parse_guest_output(out) == [
        ("hawkeye/t1", 2, 0, 1, ""),
        ("upstream/khugepaged", 1, 0, 0, ""),
        ("upstream/cow", 0, 1, 0, "never finished (guest died?)"),
    ]


def test_failed_boot_names_its_kernel_problem(tmp_path):
    # CI once printed only "vm-run exit status 101": which problem
    # the console held was lost with the machine
    console = tmp_path / "console.log"
    console.write_text("boot\nWARNING: CPU: 1 PID: 89 at mm/x.c:12 f+0x5/0x55\nok\n")
    note = vm_failure(101, str(console))
    assert note.startswith(f"vm-run exit status 101 (console: {console})")
    assert note.endswith("1 kernel problem line(s), first: WARNING: CPU: 1 PID: 89 at mm/x.c:12 f+0x5/0x55")
    assert vm_failure(102, str(tmp_path / "none.log")) == \
        f"vm-run exit status 102 (console: {tmp_path / 'none.log'})"
