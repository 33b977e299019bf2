"""Tests of tools/hawkeye-pmud, the HawkEye-PMU measurement daemon, on the
host: event resolution for known CPU models (libpfm4 told which PMU to
assume), the overhead arithmetic from recorded counter values (replay),
multiplexing, the no-PMU path, permission errors, PID reuse and the
descriptor limit. What it does with real counters needs a machine with a
PMU, which TCG guests do not have."""
import contextlib
import os
import pathlib
import resource
import select
import shutil
import subprocess
import tempfile
import threading
import time

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


def as_user(user, cmd):
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]


def run(exe, *args, stdin=None, env=None, user=None, nofile=None):
    cmd = [exe, *args]
    if user is not None:
        cmd = as_user(user, cmd)
    e = dict(os.environ)
    e.pop("LIBPFM_FORCE_PMU", None)
    e.update(env or {})
    limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile)) if nofile else None
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=e,
                          preexec_fn=limit)


def fake_proc(proc, pid, regions=1, stat=True):
    """proc/<pid> as the daemon reads it: hawkeye from a HawkEye kernel,
    the rest the real process's."""
    d = proc / str(pid)
    d.mkdir(parents=True)
    (d / "hawkeye").write_text(f"policy hawkeye-pmu\nregions {regions}\n")
    (d / "task").symlink_to(f"/proc/{pid}/task")
    if stat:
        (d / "stat").symlink_to(f"/proc/{pid}/stat")
    return d


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
                                  ["--period", "-1"], ["--window", "1s"],
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
        fake_proc(proc, p, regions)
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
        fake_proc(tmp_path / "proc", victim.pid)
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


def stat_line(pid, start):
    """/proc/<pid>/stat of a process started at @start (field 22)."""
    return f"{pid} (busy) S 1 {pid} {pid} 0 -1 4194560 " + "0 " * 8 + f"20 0 1 0 {start} 0 0\n"


@contextlib.contextmanager
def fifo_server(path, texts):
    """Hands texts, one each, to the successive readers of a FIFO at path:
    a file that changes between two reads, with no timing involved."""
    os.mkfifo(path)

    def serve():
        for t in texts:
            fd = os.open(path, os.O_WRONLY)         # waits for the reader
            os.write(fd, t.encode())
            p = select.poll()
            p.register(fd, 0)
            p.poll()                                # POLLERR: the reader closed it
            os.close(fd)

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    try:
        yield
    finally:
        for _ in texts:                             # release a server still waiting
            if not th.is_alive():
                break
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            th.join(0.2)
            os.close(fd)
            th.join(1)


def test_pid_reused_during_the_window_is_not_written(pmud, tmp_path):
    """The process measured exits in the window and its PID goes to another
    (stat's start time changes): its overhead is not handed to the kernel."""
    busy = subprocess.Popen(["python3", "-c",
                             "import time\nt=time.time()+6\n"
                             "while time.time()<t: bytearray(1<<20)"])
    proc = tmp_path / "proc"
    d = fake_proc(proc, busy.pid, stat=False)
    sysfs = tmp_path / "measured_overhead"
    sysfs.write_text("")
    try:
        with fifo_server(d / "stat", [stat_line(busy.pid, 1000), stat_line(busy.pid, 2000)]):
            r = run(pmud, "--software", "--once", "-v", "-p", "2", "-w", "0.3",
                    "--proc", str(proc), "--sysfs", str(sysfs))
    finally:
        busy.kill()
        busy.wait()
    assert r.returncode == 0, r.stderr
    assert sysfs.read_text() == ""
    assert f"pid {busy.pid} overhead" not in r.stdout
    assert f"pid {busy.pid}: exited or its PID reused during the window: not written" in r.stderr


def test_same_process_is_written(pmud, tmp_path):
    busy = subprocess.Popen(["sleep", "6"])
    proc = tmp_path / "proc"
    d = fake_proc(proc, busy.pid, stat=False)
    sysfs = tmp_path / "measured_overhead"
    sysfs.write_text("")
    try:
        with fifo_server(d / "stat", [stat_line(busy.pid, 1000)] * 2):
            r = run(pmud, "--software", "--once", "-p", "2", "-w", "0.1",
                    "--proc", str(proc), "--sysfs", str(sysfs))
    finally:
        busy.kill()
        busy.wait()
    assert r.returncode == 0, r.stderr
    assert sysfs.read_text() == f"{busy.pid} 0\n"


def sleepers(n, threads=1):
    code = "import threading, time\n" \
           f"for _ in range({threads - 1}): threading.Thread(target=time.sleep, args=(20,), daemon=True).start()\n" \
           "print(flush=True)\ntime.sleep(20)\n"
    ps = [subprocess.Popen(["python3", "-c", code], stdout=subprocess.PIPE) for _ in range(n)]
    for p in ps:
        p.stdout.readline()                     # its threads have started
    return ps


@pytest.mark.parametrize("soft,hard", [(16, 4096), (16, 16)])
def test_every_candidate_measured_at_the_descriptor_limit(pmud, tmp_path, soft, hard):
    """2 perf fds per thread (software events) for 12 processes do not fit
    16 descriptors: the soft limit is raised to the hard one, and what still
    does not fit is measured in more windows, none silently left out."""
    ps = sleepers(12)
    proc = tmp_path / "proc"
    for p in ps:
        fake_proc(proc, p.pid)
    try:
        r = run(pmud, "--software", "--once", "-n", "-p", "2", "-w", "0.1",
                "--proc", str(proc), nofile=(soft, hard))
    finally:
        for p in ps:
            p.kill()
            p.wait()
    assert r.returncode == 0, r.stderr
    seen = {int(line.split()[1]) for line in r.stdout.splitlines()}
    assert seen == {p.pid for p in ps}


def test_process_too_big_for_the_descriptor_limit_is_reported(pmud, tmp_path):
    small, big = sleepers(1)[0], sleepers(1, threads=10)[0]
    proc = tmp_path / "proc"
    for p in (small, big):
        fake_proc(proc, p.pid)
    try:
        r = run(pmud, "--software", "--once", "-n", "-p", "2", "-w", "0.1",
                "--proc", str(proc), nofile=(16, 16))
    finally:
        for p in (small, big):
            p.kill()
            p.wait()
    assert r.returncode == 0, r.stderr
    assert {int(line.split()[1]) for line in r.stdout.splitlines()} == {small.pid}
    assert f"pid {big.pid}: Too many open files" in r.stderr


def paranoid():
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        return int(f.read())


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or paranoid() > 2,
                    reason="needs root and setpriv to run as another user, who may count"
                           " its own processes (perf_event_paranoid <= 2)")
def test_one_process_not_permitted_is_skipped(pmud):
    """As nobody: root's process cannot be counted, nobody's own can (the
    software events count user space only); the daemon skips the first,
    says so at -v, and goes on."""
    tmp_path = pathlib.Path(tempfile.mkdtemp(dir="/tmp"))
    victim = subprocess.Popen(["sleep", "6"])
    own = subprocess.Popen(as_user(65534, ["sleep", "6"]))
    try:
        # Until setpriv has exec'd sleep, the process is still root's: the
        # daemon could not count it either (it failed so on a loaded host).
        for _ in range(500):
            with open(f"/proc/{own.pid}/comm") as f:
                if f.read().strip() == "sleep":
                    break
            time.sleep(0.01)
        for p in (victim, own):
            fake_proc(tmp_path / "proc", p.pid)
        sysfs = tmp_path / "measured_overhead"
        sysfs.write_text("")
        sysfs.chmod(0o666)
        os.chmod(tmp_path, 0o755)
        r = run(pmud, "--software", "--once", "-v", "-w", "0.1", "--proc", str(tmp_path / "proc"),
                "--sysfs", str(sysfs), user=65534)
        written = sysfs.read_text()
    finally:
        for p in (victim, own):
            p.kill()
            p.wait()
        shutil.rmtree(tmp_path)
    assert r.returncode == 0, r.stderr
    assert written == f"{own.pid} 0\n"
    assert f"pid {victim.pid}: Permission denied" in r.stderr


def model_line(mark, spaces):
    """A line of the TLB model's counters file (tools/tlbmodel/plugin.c)."""
    sp = ", ".join(f'{{"root": {root}, "tag": 1, "pid": {pid}, "insns": {insns}, '
                   f'"accesses": 0, "walks": 0, "stlb_cycles": {stlb}, "walk_cycles": {walk}}}'
                   for root, pid, insns, stlb, walk in spaces)
    return f'{{"type": "mark", "seq": 1, "from": 0, "mark": {mark}, "host_s": 0, "spaces": [{sp}]}}\n'


def test_model_overheads_from_the_model_counters(pmud, tmp_path):
    """--model: each window's overhead from the model's counters at both
    ends (the lines with the marks the daemon asked for): page-walk and
    STLB cycles / (instructions x CPI + those), for the processes HawkEye
    promotes for that ran at both ends."""
    proc = tmp_path / "proc"
    for pid, regions in ((101, 4), (102, 0), (103, 4), (104, 4)):
        d = proc / str(pid)
        d.mkdir(parents=True)
        (d / "hawkeye").write_text(f"policy hawkeye-pmu\nregions {regions}\n")
    sysfs = tmp_path / "measured_overhead"
    sysfs.write_text("")
    model = tmp_path / "counters.jsonl"
    # Lines from before the daemon started are not its.
    model.write_text(model_line(5, [(1, 101, 0, 0, 0)]))
    ends = [
        # root, pid, insns, stlb, walk: 101 has 1000 instructions and 500
        # MMU cycles in the window; 102 has no regions; 103 changed root
        # (another process under a reused pid); 104 did not run.
        [(1, 101, 5000, 100, 400), (2, 102, 0, 0, 0), (3, 103, 0, 0, 0), (4, 104, 7, 0, 0)],
        [(1, 101, 6000, 300, 700), (2, 102, 900, 0, 900), (9, 103, 900, 0, 900), (4, 104, 7, 0, 0)],
    ]
    p = subprocess.Popen([pmud, "--once", "-v", "-p", "1", "-w", "0.1", "--model", str(model),
                          "--cpi", "2", "--proc", str(proc), "--sysfs", str(sysfs)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if "model mark" in line:
            with open(model, "a") as f:
                f.write(model_line(int(line.split()[-1]), ends.pop(0)))
            if not ends:
                break
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert out.splitlines() == ["pid 101 overhead 20.00% insns 1000 mmu 500"]
    assert sysfs.read_text() == "101 2000\n"


def test_model_that_writes_nothing_is_status_3(pmud, tmp_path):
    model = tmp_path / "counters.jsonl"
    model.write_text("")
    r = run(pmud, "--once", "-n", "--model", str(model), "--cpi", "2")
    assert r.returncode == 3
    assert "no TLB model writes" in r.stderr


@pytest.mark.parametrize("args", [["--model", "x"], ["--cpi", "2"], ["--model", "x", "--cpi", "0"],
                                  ["--model", "x", "--cpi", "2", "--software"],
                                  ["--model", "x", "--cpi", "2", "--replay", "-"]])
def test_model_wants_its_cpi(pmud, args):
    assert run(pmud, *args).returncode == 2


def test_running_daemon_outlives_a_window_the_model_missed(pmud, tmp_path):
    """Without --once a window the model did not write is skipped, not the
    end: the daemon says so and goes on until stopped."""
    model = tmp_path / "counters.jsonl"
    model.write_text("")
    sysfs = tmp_path / "measured_overhead"
    sysfs.write_text("")
    p = subprocess.Popen([pmud, "-p", "20", "-w", "0.1", "--model", str(model), "--cpi", "2",
                          "--sysfs", str(sysfs)], stderr=subprocess.PIPE, text=True)
    try:
        for line in p.stderr:
            if "this window: not measured" in line:
                break
        assert p.poll() is None
    finally:
        p.terminate()
    assert p.wait(timeout=30) == 0
