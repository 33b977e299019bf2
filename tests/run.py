#!/usr/bin/env python3
"""`make test`: every test of hawkeye, one summary.

Builds both kernel flavours, the upstream THP selftests of the pinned tree
and our own guest tests, and boots twice (see BOOTS); reads KUnit's results
from the debug boot's console log; runs the host tests (pytest). Ends with
one line `N passed, N failed, N skipped` and a non-zero status if anything
failed or nothing ran.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from consolelog import kernel_problems, kunit_results  # noqa: E402

BUILD = os.path.join(REPO, "build")
OUT = os.path.join(BUILD, "tests")
KTREE = os.path.join(BUILD, "linux")
SELFTESTS = os.path.join(OUT, "selftests-mm")

# Upstream mm selftests that guard THP behaviour: name, time limit (s), args.
UPSTREAM = [
    ("khugepaged", 900, "-s 2 all:anon"),
    ("split_huge_page_test", 1200, ""),
    ("cow", 900, ""),
    # transhuge-stress runs until -d seconds have passed.
    ("transhuge-stress", 120, "-d 30 256"),
]
GUEST_TEST_LIMIT = 600
# Programs that need longer under KASAN: prezero took 570 s in a debug
# boot of its own and 602 s in CI (killed at its last case);
# paced_fault_wakes_the_idle_thread alone fills 70 % of memory with 4 KB
# faults twice (283 s). reporting waits for half of memory to be reported
# and then for a quarter of it to be zeroed again.
GUEST_TEST_LIMITS = {"prezero": 900, "reporting": 1200}
# The KASAN boot (KUnit, udev) took 9.5 minutes under TCG with another
# guest on the machine: vm-run's default 600 s is too tight.
BOOT_TIMEOUT_S = 1200

# The boots: (group suffix, flavour, kernel arguments, our tests ("*": all
# but GUEST_TESTS_ELSEWHERE; or the names), upstream tests ("off:NAME": run
# with every HawkEye mechanism switched off first; "last:NAME": after ours),
# the stress-ng soak's seconds (0: none), vm-run options).
# The debug kernel (KASAN, KFENCE, kmemleak, lockdep, DEBUG_VM; HawkEye off
# as at boot) runs our tests and a bounded stress-ng soak with every
# mechanism on, in a two-node guest (one zeroing thread per node), with a
# disk QEMU throttles (an O_DIRECT read stays in flight). The release kernel
# runs upstream's THP tests: khugepaged with HawkEye off (stock behaviour),
# then all of them with pre-zeroing and bloat recovery on: HawkEye on must
# not change what upstream sees. Upstream's suites run outside the KASAN
# boot, which keeps ours: split_huge_page_test's 36
# million one-byte write()s took about 15 minutes there, cow about 3, and
# khugepaged's collapse_compound_extreme holds up to 1 GB of partly mapped
# THPs, more than one node of that guest has ("Failed to allocate huge
# page" with HawkEye off).
# transhuge-stress runs last in the KASAN boot: the free memory it left
# behind was fragmented (FMFI 60 % in a CI-like run), and the
# ingens tests after it, which need free 2 MB blocks, failed.
# (Policy hawkeye-g is not on there: under it khugepaged leaves anonymous
# memory to HawkEye, which upstream's khugepaged test would see.) The
# release boot also has a virtio-balloon with free page reporting, and runs
# the tests of pre-zeroing beside it (prezero after reporting: reporting
# reorders the free lists while pre-zeroing is off between the two, and
# the faults would miss a pool that reporting had emptied). It runs the cgroup
# v1 test first: the memory controller moves to a v1 hierarchy only while
# no v2 cgroup, dying ones included, uses it, and the debug boot's
# container tests leave dying memory cgroups behind.
BOOTS = [
    ("", "debug", [], "*", ["last:transhuge-stress"], 120, ["--slow-disk", "--nodes", "2"]),
    ("+hawkeye", "release", ["hawkeye_prezero=1", "hawkeye_debloat=1"],
     ("cgroup_v1", "reporting", "prezero"),
     ["off:khugepaged"] + [name for name, _, _ in UPSTREAM], 0, ["--balloon"]),
]
# Guest tests that only the boots naming them run.
GUEST_TESTS_ELSEWHERE = ("cgroup_v1", "reporting", "hibernate")
# Guest tests with a boot of their own, after the others (run_alone()).
GUEST_TESTS_ALONE = ("hibernate",)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def at_idle(cmd, idle=True):
    """cmd at SCHED_IDLE priority (if idle): on the CPU time the rest leaves."""
    return ["chrt", "--idle", "0"] + cmd if idle else cmd


def prepare_tree():
    """build/linux made from kernel/ once, before the two builds start
    side by side (each would otherwise make it); as build-kernel does,
    a tree holding unexported work is left alone."""
    subprocess.run(["bash", "-c", ". scripts/lib.sh; case $(tree_state) in "
                    "missing | stale) scripts/kernel-tree >&2 ;; esac"], cwd=REPO, check=True)


def build_kernel(flavour, idle=False):
    """Starts scripts/build-kernel; kernel_image() waits for its bzImage."""
    cmd = [os.path.join(REPO, "scripts", "build-kernel"), "--flavour", flavour]
    return subprocess.Popen(at_idle(cmd, idle), stdout=subprocess.PIPE, text=True)


def kernel_image(build):
    out, _ = build.communicate()
    if build.returncode:
        raise subprocess.CalledProcessError(build.returncode, build.args)
    return out.strip().splitlines()[-1]


def build_upstream_selftests(idle=False):
    """The UAPI headers in an object directory of their own (they need no
    .config, and the kernels' builds may be running in theirs)."""
    obj = os.path.join(BUILD, "obj-headers")
    run(at_idle(["make", "-s", "-C", KTREE, f"O={obj}", "headers"], idle))
    os.makedirs(SELFTESTS, exist_ok=True)
    run(at_idle(["make", "-s", "-C", os.path.join(KTREE, "tools/testing/selftests/mm"),
                 f"OUTPUT={SELFTESTS}", f"KHDR_INCLUDES=-isystem {obj}/usr/include", "-j2"]
                + [os.path.join(SELFTESTS, name) for name, _, _ in UPSTREAM], idle))


def build_guest_tests(idle=False):
    """Our guest tests: tests/guest/*.c, on the kernel's kselftest harness."""
    out = os.path.join(OUT, "guest")
    os.makedirs(out, exist_ok=True)
    selftests = os.path.join(KTREE, "tools/testing/selftests")
    built = []
    for src in sorted(glob.glob(os.path.join(REPO, "tests", "guest", "*.c"))):
        exe = os.path.join(out, os.path.basename(src)[:-2])
        run(at_idle(["cc", "-O2", "-g", "-Wall", "-Werror", "-D_GNU_SOURCE",
                     f"-I{selftests}", f"-I{os.path.join(REPO, 'tests', 'guest')}",
                     "-o", exe, src, "-lpthread"], idle))
        built.append(exe)
    # tools/hawkeye-pmud, next to them: promote.c runs it (no PMU in a VM).
    run(at_idle(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", os.path.join(OUT, "hawkeye-pmud"),
                 os.path.join(REPO, "tools", "hawkeye-pmud.c"), "-lpfm"], idle))
    return built


def upstream_line(tag, entry):
    """A manifest line for an upstream test: "NAME", "off:NAME" (every
    HawkEye mechanism off first) or "last:NAME" (after our tests)."""
    name = entry.split(":")[-1]
    limit, args = next((lim, a) for n, lim, a in UPSTREAM if n == name)
    cmd = f"{os.path.join(SELFTESTS, name)} {args}"
    if entry.startswith("off:"):
        return f"upstream+off/{name} {limit} {os.path.join(REPO, 'tests', 'guest', 'hawkeye-off.sh')} {cmd}\n"
    return f"upstream{tag}/{name} {limit} {cmd}\n"


def write_manifest(tag, guest_tests, upstream, soak_s, kasan=False):
    # Upstream's tests first, on the machine as booted, as run_vmtests.sh
    # runs them; "last:" ones after ours and the soak. A KASAN boot first
    # checks that it runs as vm-run set it up (kasan-paging.sh).
    path = os.path.join(OUT, f"manifest{tag}")
    with open(path, "w") as f:
        if kasan:
            check = os.path.join(REPO, "tests", "guest", "kasan-paging.sh")
            f.write(f"harness/kasan-paging 30 {check}\n")
        for entry in upstream:
            if not entry.startswith("last:"):
                f.write(upstream_line(tag, entry))
        for exe in guest_tests:
            name = os.path.basename(exe)
            f.write(f"hawkeye/{name} {GUEST_TEST_LIMITS.get(name, GUEST_TEST_LIMIT)} {exe}\n")
        if soak_s:
            f.write(f"soak/stress-ng {soak_s + 300} "
                    f"{os.path.join(REPO, 'tests', 'guest', 'soak.sh')} {soak_s}\n")
        for entry in upstream:
            if entry.startswith("last:"):
                f.write(upstream_line(tag, entry))
    return path


def run_alone(image, exe):
    """A guest test that hibernates (hibernate.c): one boot runs it up to
    its hibernation, which writes the image to a kept swap image and powers
    off; a second boot resumes it. The 9p root does not survive a resume,
    so the program powers the guest off after printing its results and
    "### NAME done"."""
    name = os.path.basename(exe)
    swap = os.path.join(OUT, f"swap+{name}.img")
    vm_run = [os.path.join(REPO, "scripts", "vm-run"), "--kernel", image, "--mem", "2G",
              "--cpus", "2", "--timeout", "900", "--swap-image", swap,
              "--boot-timeout", str(BOOT_TIMEOUT_S)]
    out, status = "", 0
    for boot, args in (("", ["--swap", "1G", "--", exe]), ("-resume", ["--resume", "--", "false"])):
        console = os.path.join(OUT, f"console+{name}{boot}.log")
        cmd = vm_run + ["--log", console] + args
        print("+", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
        print(r.stdout, end="", flush=True)
        out += r.stdout
        if r.returncode in (101, 102):
            status = r.returncode
            break
    if os.path.exists(swap):
        os.unlink(swap)
    with open(os.path.join(OUT, f"guest+{name}.out"), "w") as f:
        f.write(out)
    if not re.search(rf"^### {re.escape(name)} done$", out, re.M):
        return [("hawkeye", name, 0, 1, 0, f"never finished (vm-run status {r.returncode}, console: {console})")]
    p, f_, s, note = count_one(out.splitlines(), 0)
    rows = [("hawkeye", name, p, f_, s, note)]
    if status:
        rows.append(("vm", f"guest run+{name}", 0, 1, 0, vm_failure(status, console)))
    return rows


# make test-deb: the kernel a user installs (scripts/build-deb: x86_64_defconfig
# with ours on top: hibernation, memory hotplug, CMA, page reporting, 512
# CPUs, KASLR) runs every guest test (each sets the mechanisms it tests;
# those needing fault injection or KUnit, which that config lacks, skip),
# the hibernation test, and the stress-ng soak with every mechanism on.
# Not in make test: the packages take about 25 minutes to build.
DEB_SOAK_S = 180


def run_deb():
    r = subprocess.run([os.path.join(REPO, "scripts", "build-deb")], stdout=subprocess.PIPE,
                       text=True, check=True)
    print(r.stdout, end="")
    image = os.path.join(BUILD, "obj-deb", "arch", "x86", "boot", "bzImage")
    guest_tests = build_guest_tests()
    mine = [exe for exe in guest_tests if os.path.basename(exe) not in GUEST_TESTS_ALONE]
    manifest = write_manifest("+deb", mine, [], DEB_SOAK_S)
    rows = run_boot("+deb", image, [], manifest, ["--balloon", "--slow-disk"])
    for exe in guest_tests:
        if os.path.basename(exe) in GUEST_TESTS_ALONE:
            rows += run_alone(image, exe)
    return [(f"{row[0]}+deb",) + tuple(row[1:]) for row in rows]


def vm_failure(status, console):
    """The note of a failed boot: vm-run's status and the first kernel
    problems of its console log, so that the summary (all CI keeps of a
    run) says what went wrong."""
    note = f"vm-run exit status {status} (console: {console})"
    if os.path.exists(console):
        with open(console, errors="replace") as f:
            problems = kernel_problems(f.read())
        if problems:
            note += f"; {len(problems)} kernel problem line(s), first: " + " | ".join(problems[:3])
    return note


def manifest_limit(manifest):
    """Seconds a boot may take running @manifest: the boot's own and every
    program's limit (run-in-guest.sh kills a program at its limit), so
    that the VM is stopped only if the guest itself hangs."""
    with open(manifest) as f:
        return BOOT_TIMEOUT_S + sum(int(line.split()[1]) for line in f if line.strip())


def run_boot(tag, image, append, manifest, vm_args):
    """One VM boot running a manifest: its result rows, KUnit's included."""
    rows = []
    console = os.path.join(OUT, f"console{tag}.log")
    cmd = [os.path.join(REPO, "scripts", "vm-run"), "--kernel", image, "--mem", "2G",
           "--cpus", "2", "--swap", "1G", "--log", console,
           "--timeout", str(manifest_limit(manifest)),
           "--boot-timeout", str(BOOT_TIMEOUT_S)] + vm_args
    cmd += [f"--append={arg}" for arg in append]
    cmd += ["--", os.path.join(REPO, "tests", "guest", "run-in-guest.sh"), manifest]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
    out = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        out.append(line)
    rc = proc.wait()
    with open(os.path.join(OUT, f"guest{tag}.out"), "w") as f:
        f.writelines(out)
    for name, p, f_, s, note in parse_guest_output("".join(out)):
        group, _, short = name.partition("/")
        rows.append((group, short, p, f_, s, note))
    if rc != 0:
        rows.append(("vm", f"guest run{tag}", 0, 1, 0, vm_failure(rc, console)))
    if os.path.exists(console):
        with open(console, errors="replace") as f:
            for suite, case, result in kunit_results(f.read()):
                rows.append(("kunit", f"{suite}.{case}", int(result == "pass"),
                             int(result == "fail"), int(result == "skip"), ""))
    return rows


_TOTALS = re.compile(r"^# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) skip:(\d+) error:(\d+)")


def parse_guest_output(text):
    """Per test: (name, passed, failed, skipped, note), from run-in-guest.sh's frames."""
    results, name, body = [], None, []
    for line in text.splitlines():
        m = re.match(r"^### BEGIN (\S+)", line)
        if m:
            name, body = m.group(1), []
            continue
        m = re.match(r"^### END (\S+) rc=(\d+)", line)
        if m and name == m.group(1):
            results.append((name,) + count_one(body, int(m.group(2))))
            name = None
            continue
        if name:
            body.append(line)
    if name:
        results.append((name, 0, 1, 0, "never finished (guest died?)"))
    return results


_FAILED_LINE = re.compile(r"^not ok |\bFail(ed)?\b|\bFAIL\b|\bTimeout\b")
# kselftest_harness's own failure lines, quoted first: an assertion
# ("file.c:LINE:test:Expected ...", with the TH_LOG line right after it)
# or a test killed ("Test terminated by timeout").
_ASSERT_LINE = re.compile(r"\.c:\d+:\S+:Expected |\bTest terminated\b")
_TH_LOG = re.compile(r"\.c:\d+:\S+:")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def count_one(body, rc):
    """(passed, failed, skipped, note) of one test from its output and status;
    the note of a failure quotes its first failing lines (CI prints only the
    summary)."""
    p, f, s, note = _count_one(body, rc)
    if f:
        asserts, quoted, current, after_assert = [], [], "", False
        for line in (" ".join(_ANSI.sub("", line).split()) for line in body):
            if after_assert and _TH_LOG.search(line) and not _ASSERT_LINE.search(line):
                asserts[-1] += " -- " + line[:120]
            after_assert = False
            if line.startswith("Run test:"):  # upstream's khugepaged
                current = line[len("Run test:"):].strip() + ": "
            elif _ASSERT_LINE.search(line) and len(asserts) < 3:
                asserts.append(line[:200])
                after_assert = True
            elif _FAILED_LINE.search(line) and len(quoted) < 3:
                quoted.append((current + line)[:120])
        note = "; ".join(filter(None, [note] + asserts + quoted))
    return p, f, s, note


def _count_one(body, rc):
    if rc == 124:
        return 0, 1, 0, "timed out"
    for line in reversed(body):
        m = _TOTALS.match(line)
        if m:
            p, f, xf, xp, s, e = map(int, m.groups())
            failed = f + xp + e
            note = ""
            if rc not in (0, 4) and failed == 0:
                failed, note = 1, f"exit status {rc}"
            return p + xf, failed, s, note
    if rc == 0:
        return 1, 0, 0, ""
    if rc == 4:  # KSFT_SKIP
        return 0, 0, 1, "skipped"
    return 0, 1, 0, f"exit status {rc}"


def run_pytest():
    r = subprocess.run([os.path.join(BUILD, "venv", "bin", "pytest"), "-q", "-p", "no:cacheprovider",
                        os.path.join(REPO, "tests", "host")], stdout=subprocess.PIPE, text=True)
    print(r.stdout, end="")
    counts = {"passed": 0, "failed": 0, "skipped": 0, "error": 0, "errors": 0}
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    for n, what in re.findall(r"(\d+) (passed|failed|skipped|errors?)", last):
        counts[what] += int(n)
    failed = counts["failed"] + counts["error"] + counts["errors"]
    if r.returncode not in (0, 5) and failed == 0:
        failed = 1
    return counts["passed"], failed, counts["skipped"]


def check_vm_run(image):
    """The harness itself: CMD's status comes back, a guest crash is caught."""
    vm_run = [os.path.join(REPO, "scripts", "vm-run"), "--kernel", image, "--"]
    rows = []
    r = subprocess.run(vm_run + ["sh", "-c", "exit 3"], capture_output=True, text=True)
    rows.append(("harness", "exit status comes back", int(r.returncode == 3),
                 int(r.returncode != 3), 0, "" if r.returncode == 3 else f"got {r.returncode}"))
    r = subprocess.run(vm_run + ["sh", "-c", "echo c > /proc/sysrq-trigger"],
                       capture_output=True, text=True)
    ok = r.returncode == 101 and "console log: " in r.stderr and "panic" in r.stderr
    rows.append(("harness", "guest crash is reported", int(ok), int(not ok), 0,
                 "" if ok else f"status {r.returncode}: {r.stderr.strip()[-200:]}"))
    return rows


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host-only", action="store_true", help="only the host tests (no kernel, no VM)")
    ap.add_argument("--deb", action="store_true",
                    help="only the packaged kernel's boot (make test-deb; see run_deb())")
    a = ap.parse_args(argv)
    groups = []  # (group, name, passed, failed, skipped, note)

    if not a.host_only:
        subprocess.run([os.path.join(REPO, "scripts", "setup-host")], check=True)
    if a.deb:
        groups += run_deb()
    elif not a.host_only:
        # Both kernels start building at once: the debug one first in
        # line, the release one (a cold build takes 16 minutes of both
        # cores) at idle priority, on what the debug build leaves (its
        # serial link steps) and then on what the KASAN guest leaves, so
        # the guest's vCPUs always come first. The test programs build at
        # idle priority too, beside the debug kernel.
        prepare_tree()
        debug = build_kernel("debug")
        release = build_kernel("release", idle=True)
        build_upstream_selftests(idle=True)
        guest_tests = build_guest_tests(idle=True)
        images = {"debug": kernel_image(debug)}
        for tag, flavour, append, ours, upstream, soak_s, vm_args in BOOTS:
            if flavour not in images:
                images[flavour] = kernel_image(release)
            # "*": in name order; named: in the order named.
            by_name = {os.path.basename(exe): exe for exe in guest_tests}
            mine = ([exe for name, exe in by_name.items() if name not in GUEST_TESTS_ELSEWHERE]
                    if ours == "*" else [by_name[name] for name in ours])
            manifest = write_manifest(tag, mine, upstream, soak_s, kasan=flavour == "debug")
            groups += run_boot(tag, images[flavour], append, manifest, vm_args)
        # On the release kernel: the pair of boots took 12 minutes under
        # KASAN; what it tests (marks after a resume) needs no debug option.
        for exe in guest_tests:
            if os.path.basename(exe) in GUEST_TESTS_ALONE:
                groups += run_alone(images["release"], exe)
        groups += check_vm_run(images["release"])

    if not a.deb:
        p, f_, s = run_pytest()
        groups.append(("host", "pytest", p, f_, s, ""))

    print("\n==== hawkeye test summary ====")
    for group in dict.fromkeys(g[0] for g in groups):
        rows = [g for g in groups if g[0] == group]
        tp, tf, ts = (sum(r[i] for r in rows) for i in (2, 3, 4))
        print(f"{group:10s} {tp:5d} passed {tf:4d} failed {ts:4d} skipped  ({len(rows)} programs/cases)")
        for r in rows:
            if r[3] or r[5]:
                print(f"    {'FAIL' if r[3] else 'note'}: {r[1]}: {r[5] or 'failed'}")
    tp, tf, ts = (sum(g[i] for g in groups) for i in (2, 3, 4))
    print(f"{tp} passed, {tf} failed, {ts} skipped")
    return 1 if tf or tp == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
