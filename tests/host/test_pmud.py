"""Tests of tools/hawkeye-pmud, the HawkEye-PMU measurement daemon, on the
host: event resolution for known CPU models (libpfm4 told which PMU to
assume), the overhead arithmetic from recorded counter values (replay),
multiplexing, the no-PMU path, and permission errors. What it does with
real counters needs a machine with a PMU (see the issue's closing note)."""
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(REPO, "tools", "hawkeye-pmud.c")


@pytest.fixture(scope="module")
def pmud(tmp_path_factory):
    if not os.path.exists("/usr/include/perfmon/pfmlib_perf_event.h"):
        pytest.skip("libpfm4-dev is not installed (scripts/setup-host installs it)")
    exe = str(tmp_path_factory.mktemp("pmud") / "hawkeye-pmud")
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", exe, SRC, "-lpfm"],
                   check=True)
    return exe


def run(exe, *args, stdin=None, env=None, user=None):
    cmd = [exe, *args]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    e = dict(os.environ)
    e.pop("LIBPFM_FORCE_PMU", None)
    e.update(env or {})
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=e)


@pytest.mark.parametrize("pmu,load,store", [
    ("skl", "skl::DTLB_LOAD_MISSES:WALK_ACTIVE", "skl::DTLB_STORE_MISSES:WALK_ACTIVE"),
    ("icl", "icl::DTLB_LOAD_MISSES:WALK_ACTIVE", "icl::DTLB_STORE_MISSES:WALK_ACTIVE"),
    ("spr", "spr::DTLB_LOAD_MISSES:WALK_ACTIVE", "spr::DTLB_STORE_MISSES:WALK_ACTIVE"),
    ("hsw", "hsw::DTLB_LOAD_MISSES:WALK_DURATION", "hsw::DTLB_STORE_MISSES:WALK_DURATION"),
    ("bdw", "bdw::DTLB_LOAD_MISSES:WALK_DURATION", "bdw::DTLB_STORE_MISSES:WALK_DURATION"),
])
def test_intel_events(pmud, pmu, load, store):
    r = run(pmud, "--events", env={"LIBPFM_FORCE_PMU": pmu})
    assert r.returncode == 0, r.stderr
    out = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    assert out["cycles"].startswith(f"{pmu}::UNHALTED_CORE_CYCLES")
    assert out["walk_load"].startswith(load + ":")
    assert out["walk_store"].startswith(store + ":")
    # WALK_ACTIVE is the pending-walk count with a counter mask of 1: cycles.
    if "WALK_ACTIVE" in load:
        assert ":c=1:" in out["walk_load"] and ":c=1:" in out["walk_store"]
    # Encoded as raw events of the CPU's PMU (perf type 4).
    assert "(type 4 config 0x" in out["walk_load"]


@pytest.mark.parametrize("pmu", ["amd64_fam17h_zen2", "amd64_fam19h_zen3", "amd64_fam19h_zen4"])
def test_amd_counts_walks_not_cycles(pmud, pmu):
    r = run(pmud, "--events", env={"LIBPFM_FORCE_PMU": pmu})
    assert r.returncode == 0, r.stderr
    assert "an estimate" in r.stdout
    out = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    assert out["cycles"].startswith(f"{pmu}::CYCLES_NOT_IN_HALT")
    assert "L1_DTLB_MISS" in out["walk_load"] and "L2_MISS" in out["walk_load"]
    assert "walk_store" not in out


def test_unknown_cpu_model(pmud):
    # Zen 1 has no L2-miss umasks in libpfm4: no events, a clear line, status 3.
    r = run(pmud, "--events", env={"LIBPFM_FORCE_PMU": "amd64_fam17h"})
    assert r.returncode == 3
    assert "no page-walk cycle events" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def replay(pmud, text, *args):
    r = run(pmud, "--replay", "-", *args, stdin=text)
    assert r.returncode == 0, r.stderr
    return {int(p): int(v) for p, v in (line.split() for line in r.stdout.splitlines())}


def test_overhead_arithmetic(pmud):
    # (load + store walk cycles) * 100 / cycles, in 1/100 %.
    out = replay(pmud, "10 1000 100 50 7 7\n20 4000 2400 0 7 7\n30 1000 0 0 7 7\n")
    assert out == {10: 1500, 20: 6000, 30: 0}


def test_threads_sum_and_multiplexing_scales(pmud):
    # Thread 2 counted half of the time: its counts are doubled before summing.
    out = replay(pmud, "5 1000 100 50 10 10\n5 1000 100 50 10 5\n")
    assert out == {5: 1500}   # (150 + 300) * 10000 / 3000
    # A thread never scheduled on a counter adds nothing; no cycles: 0.
    out = replay(pmud, "6 1000 100 0 10 10\n6 999 999 999 10 0\n7 0 5 5 1 1\n")
    assert out == {6: 1000, 7: 0}


def test_overhead_is_capped_and_rounded(pmud):
    out = replay(pmud, "1 100 300 0 1 1\n2 3 1 0 1 1\n")
    assert out == {1: 10000, 2: 3333}


def test_amd_walks_times_walk_cycles(pmud):
    out = replay(pmud, "1 10000 20 0 1 1\n", "--walk-cycles", "35")
    assert out == {1: 700}    # 20 walks x 35 cycles / 10000 cycles = 7%


def test_writes_pid_and_overhead_to_the_kernel_file(pmud, tmp_path):
    f = tmp_path / "measured_overhead"
    f.write_text("")
    r = run(pmud, "--replay", "-", "--sysfs", str(f), stdin="42 1000 100 50 1 1\n")
    assert r.returncode == 0, r.stderr
    assert f.read_text() == "42 1500\n"


def test_not_a_hawkeye_kernel(pmud, tmp_path):
    r = run(pmud, "--replay", "-", "--sysfs", str(tmp_path / "missing"),
            stdin="42 1000 100 50 1 1\n")
    assert r.returncode == 5
    assert "not a HawkEye kernel" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run as another user")
def test_permission_error_is_clear(pmud, tmp_path):
    f = tmp_path / "measured_overhead"
    f.write_text("")
    f.chmod(0o600)
    os.chmod(tmp_path, 0o755)
    r = run(pmud, "--replay", "-", "--sysfs", str(f), stdin="42 1000 100 50 1 1\n",
            user=65534)
    assert r.returncode == 4
    assert "not permitted" in r.stderr and "run it as root" in r.stderr
    assert f.read_text() == ""


def test_no_pmu_one_line_and_status_3(pmud):
    if os.path.exists("/sys/bus/event_source/devices/cpu"):
        pytest.skip("this machine has a PMU")
    r = run(pmud, "--once")
    assert r.returncode == 3
    assert r.stderr.count("\n") == 1
    assert "no hardware PMU" in r.stderr and "HawkEye-G" in r.stderr


@pytest.mark.parametrize("args", [["-p", "0"], ["-w", "x"], ["-p", "1", "-w", "2"],
                                  ["--walk-cycles", "0"], ["extra"]])
def test_bad_usage(pmud, args):
    r = run(pmud, *args)
    assert r.returncode == 2
    assert "usage:" in r.stderr


def test_measuring_loop_with_software_events(pmud, tmp_path):
    """The live loop, with software events standing in for the PMU: it
    counts only processes with regions, all their threads, skips processes
    that are gone before or exit during the window, and writes
    "PID OVERHEAD" for the others."""
    busy = subprocess.Popen(["python3", "-c",
                             "import time\nt=time.time()+6\n"
                             "while time.time()<t: bytearray(1<<20)"])
    short = subprocess.Popen(["sleep", "0.3"])
    gone = subprocess.Popen(["true"])
    gone.wait()
    idle = subprocess.Popen(["sleep", "6"])
    proc = tmp_path / "proc"
    for p, regions in ((busy.pid, 4), (short.pid, 4), (gone.pid, 4), (idle.pid, 0)):
        d = proc / str(p)
        d.mkdir(parents=True)
        (d / "hawkeye").write_text(f"policy hawkeye-pmu\nregions {regions}\n")
        (d / "task").symlink_to(f"/proc/{p}/task")
    sysfs = tmp_path / "measured_overhead"
    sysfs.write_text("")
    try:
        r = run(pmud, "--software", "--once", "-v", "-p", "2", "-w", "1",
                "--proc", str(proc), "--sysfs", str(sysfs))
    finally:
        for p in (busy, short, idle):
            p.kill()
            p.wait()
    if "not permitted" in r.stderr:
        pytest.skip("perf_event_open is not permitted here")
    assert r.returncode == 0, r.stderr
    assert "test mode" in r.stderr
    seen = {int(line.split()[1]): line for line in r.stdout.splitlines()}
    assert busy.pid in seen
    # task-clock (ns) as cycles: CPU time in the 1 s window, > 10 ms even
    # on a loaded machine.
    assert int(seen[busy.pid].split()[5]) > 10**7
    assert gone.pid not in seen and idle.pid not in seen
    # Each write starts at offset 0, as in sysfs: the first line is the last.
    pid, bp = sysfs.read_text().splitlines()[0].split()
    assert int(pid) in seen and 0 <= int(bp) <= 10000


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run as another user")
def test_counting_another_users_process_is_not_permitted(pmud):
    # Under /tmp directly: pytest's own directories are private to root.
    tmp_path = pathlib.Path(tempfile.mkdtemp(dir="/tmp"))
    victim = subprocess.Popen(["sleep", "5"])
    try:
        d = tmp_path / "proc" / str(victim.pid)
        d.mkdir(parents=True)
        (d / "hawkeye").write_text("regions 1\n")
        (d / "task").symlink_to(f"/proc/{victim.pid}/task")
        sysfs = tmp_path / "measured_overhead"
        sysfs.write_text("")
        os.chmod(tmp_path, 0o755)
        r = run(pmud, "--software", "--once", "-w", "0.1", "--proc", str(tmp_path / "proc"),
                "--sysfs", str(sysfs), user=65534)
    finally:
        victim.kill()
        victim.wait()
        shutil.rmtree(tmp_path)
    assert r.returncode == 4, r.stderr
    assert f"count events of process {victim.pid}" in r.stderr
    assert "perf_event_paranoid=" in r.stderr and "run it as root" in r.stderr
