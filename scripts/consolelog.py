"""Reading a guest's console log: kernel problems and KUnit's KTAP results."""
import re

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
    r"kmemleak: \d+ new suspected memory leaks",
]
_PROBLEM = re.compile("|".join(f"(?:{p})" for p in PROBLEM_PATTERNS))


def kernel_problems(console):
    """Lines of the console log that report a kernel problem."""
    return [line.strip() for line in console.splitlines() if _PROBLEM.search(line)]




def kunit_results(console):
    """KUnit test cases from the KTAP lines of a boot log.

    Returns a list of (suite, case, result) with result one of pass, fail,
    skip. Only leaf cases count: a suite's own ok line summarises its cases.
    """
    results, suite, indent_of_cases = [], None, None
    for raw in console.splitlines():
        line = re.sub(r"^\[[ \d.]+\]\s?", "", raw)
        m = re.match(r"^(\s*)# Subtest: (\S+)", line)
        if m:
            suite, indent_of_cases = m.group(2), len(m.group(1))
            continue
        m = re.match(r"^(\s*)(not ok|ok) \d+ (.*?)\s*(?:#\s*(SKIP|skip)\b.*)?$", line)
        if not m or suite is None:
            continue
        indent, status, name, skip = len(m.group(1)), m.group(2), m.group(3), m.group(4)
        if indent == indent_of_cases:
            result = "skip" if skip else ("pass" if status == "ok" else "fail")
            results.append((suite, name, result))
        elif indent < indent_of_cases and name == suite:
            suite = None
    return results
