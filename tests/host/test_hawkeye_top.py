"""tools/hawkeye-top against a fake /sys + /proc tree (its hidden --root)."""

import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "hawkeye-top")


def load_tool():
    loader = importlib.machinery.SourceFileLoader("hawkeye_top", TOOL)
    spec = importlib.util.spec_from_loader("hawkeye_top", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


top = load_tool()


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def hawkeye_file(buckets, **kw):
    lines = [f"policy {kw.pop('policy', 'hawkeye-g')}", f"regions {sum(buckets)}"]
    lines += [f"bucket{i} {n}" for i, n in enumerate(buckets)]
    for k, v in kw.items():
        lines.append(f"{k} {v}")
    return "\n".join(lines) + "\n"


# /proc/<pid>/stat flags: PF_KTHREAD marks a kernel thread.
KTHREAD_FLAGS = 0x00208040
USER_FLAGS = 0x00400100


def add_proc(root, pid, comm, hawkeye, huge_kb=0, ticks=(0, 0), flags=USER_FLAGS):
    write(root, f"proc/{pid}/comm", comm + "\n")
    if hawkeye is not None:
        write(root, f"proc/{pid}/hawkeye", hawkeye)
    write(
        root,
        f"proc/{pid}/smaps_rollup",
        f"00400000-7ffff000 ---p 00000000 00:00 0 [rollup]\nRss: {huge_kb + 400} kB\n"
        f"AnonHugePages: {huge_kb} kB\n",
    )
    write(
        root,
        f"proc/{pid}/stat",
        f"{pid} ({comm}) S 2 0 0 0 -1 {flags} 0 0 0 0 {ticks[0]} {ticks[1]} 0 0 39 19 1 0 5 0 0\n",
    )


def write_stats(root, **counters):
    for k, v in counters.items():
        write(root, f"sys/kernel/mm/hawkeye/stats/{k}", f"{v}\n")


@pytest.fixture
def fake(tmp_path):
    r = str(tmp_path)
    hk = "sys/kernel/mm/hawkeye"
    write(r, f"{hk}/promote/policy", "linux [hawkeye-g] ingens freebsd hawkeye-pmu\n")
    for k, v in (
        ("scan_period_ms", 30000),
        ("sample_window_ms", 1000),
        ("ema_weight", 50),
        ("batch", 8),
        ("sleep_ms", 10000),
        ("fresh_ms", 10000),
        ("new_knob", 7),
    ):
        write(r, f"{hk}/promote/{k}", f"{v}\n")
    for k, v in (("enabled", 1), ("rate", 10000), ("target_mb", 0), ("nontemporal", 1), ("paced", 1)):
        write(r, f"{hk}/prezero/{k}", f"{v}\n")
    for k, v in (
        ("enabled", 1),
        ("high_pct", 85),
        ("low_pct", 70),
        ("threshold", 256),
        ("current_threshold", 128),
        ("rate", 1000),
    ):
        write(r, f"{hk}/debloat/{k}", f"{v}\n")
    write(r, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n")
    write(r, "sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none", "511\n")
    write(r, "proc/sys/kernel/osrelease", "6.12.117-hawkeye\n")
    write(r, "proc/cmdline", "console=ttyS0 hawkeye_prezero=1 hawkeye_promote=hawkeye-g quiet\n")
    write(r, "proc/uptime", "3725.5 100.0\n")
    # The vm events among HawkEye's counters are in both places.
    write(
        r,
        "proc/vmstat",
        "nr_free_pages 100000\nnr_free_zeroed 51200\nthp_fault_alloc 12\n"
        "hawkeye_debloat_thp_split 3\nhawkeye_promote_success 32\npgfault 77\n",
    )
    write_stats(
        r,
        prezero_pages=300000,
        fault_prezeroed_2m=10,
        fault_sync_zero_2m=2,
        debloat_thp_scanned=40,
        debloat_thp_split=3,
        promote_sampled=500,
        promote_success=32,
        promote_failed=1,
        pmu_new_counter=9,
    )
    write(
        r,
        "proc/meminfo",
        "MemTotal:        2000000 kB\nMemFree:          400000 kB\n"
        "MemAvailable:     200000 kB\nAnonHugePages:   1024000 kB\n",
    )
    add_proc(r, 1, "init", hawkeye_file([0] * 10, overhead=0, samples=0, promotions=0, promote_failed=0))
    add_proc(r, 2, "kthreadd", hawkeye_file([0] * 10, overhead=0))
    add_proc(
        r,
        100,
        "xsbench",
        hawkeye_file(
            [96, 0, 0, 0, 0, 0, 0, 0, 0, 32],
            overhead=12288,
            samples=4,
            promotions=32,
            promote_failed=0,
            measured_overhead_pct=7,
            unknown_key="abc",
        )
        + "a line with several words\n",
        huge_kb=65536,
    )
    add_proc(r, 200, "redis-server", hawkeye_file([0] * 10, policy="linux"), huge_kb=4096)
    add_proc(r, 300, "other", None)  # no /proc/<pid>/hawkeye at all
    add_proc(r, 40, "hawkeye_zerod0", hawkeye_file([0] * 10), ticks=(0, 250), flags=KTHREAD_FLAGS)
    add_proc(r, 41, "khugepaged", hawkeye_file([0] * 10), ticks=(0, 10), flags=KTHREAD_FLAGS)
    return r


def run(*args):
    return subprocess.run(
        [sys.executable, TOOL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60
    )


def test_not_a_hawkeye_kernel(tmp_path):
    write(str(tmp_path), "proc/vmstat", "nr_free_pages 1\n")
    p = run("--root", str(tmp_path))
    assert p.returncode == 2
    assert "no /sys/kernel/mm/hawkeye: not a HawkEye kernel" in p.stderr
    assert p.stdout == ""
    assert run("--root", str(tmp_path), "--json").returncode == 2


def test_json_snapshot(fake):
    p = run("--root", fake, "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["kernel"]["release"] == "6.12.117-hawkeye"
    assert s["kernel"]["boot_params"] == ["hawkeye_prezero=1", "hawkeye_promote=hawkeye-g"]
    pol = s["knobs"]["promote"]["policy"]
    assert pol == {
        "current": "hawkeye-g",
        "choices": ["linux", "hawkeye-g", "ingens", "freebsd", "hawkeye-pmu"],
    }
    assert s["knobs"]["promote"]["new_knob"] == 7  # unknown knobs are kept
    assert s["knobs"]["promote"]["fresh_ms"] == 10000
    assert list(s["knobs"]) == ["promote", "prezero", "debloat"]
    assert s["knobs"]["debloat"]["current_threshold"] == 128
    assert s["vmstat"]["nr_free_zeroed"] == 51200
    assert s["vmstat"]["hawkeye_pmu_new_counter"] == 9  # every counter of stats/
    assert "pgfault" not in s["vmstat"] and "nr_free_pages" not in s["vmstat"]
    m = s["memory"]
    assert m["in_use_pct"] == 90.0 and m["high_pct"] == 85 and m["low_pct"] == 70
    assert m["state"].startswith("above high")
    assert [t["comm"] for t in s["threads"]] == ["hawkeye_zerod0", "khugepaged"]
    assert s["threads"][0]["cpu_ticks"] == 250
    pids = [p_["pid"] for p_ in s["processes"]]
    assert pids == [100, 200]  # init and kthreadd show only zeros; 300 has no file
    x = s["processes"][0]
    assert x["comm"] == "xsbench" and x["anon_huge_kb"] == 65536
    assert x["access_map"] == [96, 0, 0, 0, 0, 0, 0, 0, 0, 32]
    assert x["fields"]["overhead"] == 12288 and x["fields"]["promotions"] == 32
    assert x["fields"]["measured_overhead_pct"] == 7
    assert x["fields"]["unknown_key"] == "abc"
    assert x["other"] == ["a line with several words"]


def test_text(fake):
    p = run("--root", fake)
    assert p.returncode == 0, p.stderr
    t = p.stdout
    assert "6.12.117-hawkeye" in t and "up 1h02m" in t
    assert "policy hawkeye-g (also: linux ingens freebsd hawkeye-pmu)" in t
    assert "new_knob 7" in t
    assert "prezero   on" in t and "nr_free_zeroed 51200 pages (200.0 MiB = 51% of free memory)" in t
    assert "debloat   on" in t and "current_threshold 128" in t
    assert "in use 90.0%" in t and "above high" in t
    assert "thp_split 3" in t and "success 32" in t
    assert "hawkeye_pmu_new_counter 9" in t
    assert "hawkeye_zerod0 2.5s" in t or "hawkeye_zerod0" in t
    line = next(ln for ln in t.splitlines() if "xsbench" in ln)
    assert "64.0 MiB" in line and "12288 / 7" in line and "   96" in line and "   32" in line
    assert "unknown_key abc" in t and "a line with several words" in t
    assert "redis-server" in t and " init " not in t


def test_pid_filter(fake):
    s = json.loads(run("--root", fake, "--json", "-p", "1", "-p", "999").stdout)
    assert [p["pid"] for p in s["processes"]] == [1]  # a filtered pid is shown even with zeros
    t = run("--root", fake, "-p", "200").stdout
    assert "redis-server" in t and "xsbench" not in t


def test_no_processes_and_missing_groups(tmp_path):
    r = str(tmp_path)
    write(r, "sys/kernel/mm/hawkeye/prezero/enabled", "0\n")  # an older kernel: prezero only
    write(r, "proc/vmstat", "nr_free_zeroed 0\n")
    p = run("--root", r)
    assert p.returncode == 0, p.stderr
    assert "prezero   off" in p.stdout and "promote" not in p.stdout
    assert "no process with HawkEye state or huge pages" in p.stdout
    s = json.loads(run("--root", r, "--json").stdout)
    assert s["memory"]["in_use_pct"] is None and s["processes"] == []


def test_watch_rates(fake):
    s1 = top.snapshot(fake)
    write(fake, "proc/vmstat", "nr_free_zeroed 51200\nhawkeye_promote_success 36\n")
    write_stats(fake, prezero_pages=302560, promote_success=36)
    write(fake, "proc/100/hawkeye", hawkeye_file([96] + [0] * 9, overhead=100, promotions=36))
    s2 = top.snapshot(fake)
    s2["time"] = s1["time"] + 2.0
    r = top.rates(s1, s2)
    assert r["vmstat"]["hawkeye_prezero_pages"] == 1280.0
    assert r["vmstat"]["hawkeye_promote_success"] == 2.0
    assert r["processes"]["100"]["promotions_per_s"] == 2.0
    t = top.format_text(s2, r)
    assert "(+5.0 MiB/s)" in t and "success 36 (+2.0/s)" in t and "36(+2/s)" in t


def test_watch_loop_iterations(fake):
    p = run("--root", fake, "-w", "0.2", "-n", "2", "--json")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 2
    assert "rates" not in json.loads(lines[0]) and "rates" in json.loads(lines[1])
    p = run("--root", fake, "-w", "0.2", "-n", "2")
    assert p.stdout.count("hawkeye-top  6.12.117-hawkeye") == 2


def test_parse_helpers():
    assert top.parse_choice("[linux] hawkeye-g") == ("linux", ["linux", "hawkeye-g"])
    assert top.parse_choice("hawkeye-g") == ("hawkeye-g", ["hawkeye-g"])
    p = top.parse_proc_hawkeye("regions 3\nbucket0 1\nbucket12 2\nweird\n")
    assert p["access_map"] == [1] + [0] * 11 + [2]  # more buckets than ten are kept
    assert p["other"] == ["weird"]
    assert top.parse_proc_hawkeye("")["access_map"] == []
    assert top.human_kb(2048) == "2.0 MiB"


# C0 (but newline), DEL and C1: what a terminal may act on.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def test_process_names_are_sanitised(fake):
    # Any process can name itself (prctl PR_SET_NAME): escape sequences
    # must not reach root's terminal.
    add_proc(fake, 500, "\x1b]0;owned\x07\x1b[2J", hawkeye_file([1] + [0] * 9), huge_kb=2048)
    add_proc(fake, 501, "a\x9b31mb\x7fc\u202e", hawkeye_file([1] + [0] * 9), huge_kb=2048)
    p = run("--root", fake)
    assert p.returncode == 0, p.stderr
    assert not CONTROL.search(p.stdout)
    assert "\u202e" not in p.stdout  # nor other non-printables (bidi override)
    assert "\\x1b]0;owned" in p.stdout and "a\\x9b31mb\\x7f" in p.stdout
    # JSON escapes them itself and keeps the name as it is.
    p = run("--root", fake, "--json", "-p", "500")
    assert not CONTROL.search(p.stdout)
    assert json.loads(p.stdout)["processes"][0]["comm"] == "\x1b]0;owned\x07\x1b[2J"


def test_sanitise_name():
    assert top.sanitise("xsbench") == "xsbench"
    assert top.sanitise("a\tb\x1b[0m\x7f\x85\u202e") == "a\\x09b\\x1b[0m\\x7f\\x85\\u202e"
    assert top.sanitise("na\u00efve \u65e5\u672c") == "na\u00efve \u65e5\u672c"  # printable text stays


def test_threads_are_kernel_threads_only(fake):
    # A user process can call itself hawkeye_zerod0 (even a usermode helper,
    # whose parent is kthreadd): only PF_KTHREAD in stat's flags counts.
    add_proc(fake, 500, "hawkeye_zerod0", None, ticks=(900, 900))
    add_proc(fake, 501, "khugepaged", None, ticks=(900, 900))
    s = json.loads(run("--root", fake, "--json").stdout)
    assert [(t["pid"], t["comm"]) for t in s["threads"]] == [(40, "hawkeye_zerod0"), (41, "khugepaged")]
    assert "18.0s" not in run("--root", fake).stdout
