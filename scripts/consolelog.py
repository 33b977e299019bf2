"""Reading a guest's console log: kernel problems and KUnit's KTAP results."""
import io
import os
import re
import sys

# The kernel's KUnit tools, from the patched tree that make test builds.
KUNIT_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "build", "linux", "tools", "testing", "kunit")

# What the kernel prints when something went wrong. Each is a failure of
# the run, whatever the command's status was.
PROBLEM_PATTERNS = [
    r"Kernel panic - not syncing",
    r"\bBUG: ",
    r"\bOops\b",
    r"WARNING: .* at ",
    r"WARNING: possible .*(locking|recursive|lock)",
    r"WARNING: suspicious RCU usage",
    r"WARNING: inconsistent lock state",
    r"INFO: task .* blocked for more than",
    r"general protection fault",
    r"\bUBSAN: ",
    r"\bKASAN: ",
    r"page dumped because",
]
# Not kmemleak's "N new suspected memory leaks": a scan may report an
# object whose pointer it missed at that moment; tests/guest/kmemleak.sh
# fails on what a further scan still finds unreferenced (a leak stays so).
_PROBLEM = re.compile("|".join(f"(?:{p})" for p in PROBLEM_PATTERNS))


def kernel_problems(console):
    """Lines of the console log that report a kernel problem."""
    return [line.strip() for line in console.splitlines() if _PROBLEM.search(line)]




def kunit_results(console, kunit_dir=KUNIT_DIR):
    """KUnit test cases of a boot log, read with the pinned kernel's own KTAP
    parser (tools/testing/kunit/kunit_parser.py, what kunit.py uses).

    Returns a list of (suite, case, result) with result one of pass, fail,
    skip: one per case of each suite (a parameterised case counts once). A
    case the kernel did not finish (a crash, a case missing from the plan)
    is a fail. An empty list when the log has no KTAP output.
    """
    if kunit_dir not in sys.path:
        sys.path.insert(0, kunit_dir)
    import kunit_parser
    import kunit_printer

    kunit_parser.stdout = kunit_printer.Printer(io.StringIO())  # quiet
    run = kunit_parser.parse_run_tests(console.splitlines())
    result = {kunit_parser.TestStatus.SUCCESS: "pass", kunit_parser.TestStatus.SKIPPED: "skip"}
    return [(suite.name, case.name or "(did not finish)", result.get(case.status, "fail"))
            for suite in run.subtests for case in suite.subtests]
