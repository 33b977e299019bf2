"""The repository speaks of the software, not of the work that made it.

Comments, docs, tests and results say what the code does and why; how it
came to be (issue numbers, review findings by id, work sessions, which
machines were available, past CI runs) belongs in commit messages, which
this test does not read. A patch's changelog is its commit message: only
the lines a patch adds are read.
"""
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

HISTORY = re.compile(
    r"\bissues? #?\d+\b"
    r"|\b(?:the|this|that) issue'?s?\b"
    r"|\breview findings?\b"
    r"|\bfindings? [A-D]\d+\b|\breview [A-D]\d+\b"
    r"|\bmm-review\b|\bstructure-2026\b"
    r"|\bwork(?:ing)? sessions?\b|\bsessions? \d+\b"
    r"|\bstops? \d+\b"
    r"|\b(?:last|previous|earlier) submissions?\b"
    r"|\b(?:was|were|been|is|are) (?:lent|drawn)\b|\blent (?:to us|machines?)\b"
    r"|\bCI (?:failed|failures?|runs? failed)\b|\(CI:",
    re.IGNORECASE)

SKIP = {"tests/host/test_no_history.py"}


def tracked_files():
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"],
                         check=True, capture_output=True).stdout
    return [f for f in out.decode().split("\0") if f and f not in SKIP]


def lines_of(path):
    """The lines of @path a reader sees (a patch: the lines it adds)."""
    try:
        text = (REPO / path).read_text()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return []
    lines = text.splitlines()
    if path.endswith(".patch"):
        return [(n, l[1:]) for n, l in enumerate(lines, 1)
                if l.startswith("+") and not l.startswith("+++")]
    return list(enumerate(lines, 1))


def test_pattern_catches_history():
    # Numbers joined on at run time: a grep of the sources for history
    # words does not find this file's examples.
    n = str(17)
    for s in ("as issue " + n + " asked", "review finding C4", "(finding A1)",
              "in session " + n, "stop " + n + " landed", "the last submission",
              "no machine was lent", "(CI: it timed out)", "see the issue's note",
              "(mm review C2)"):
        assert HISTORY.search(s), s
    for s in ("the crun session keyring", "an issue with THP", "round 2's",
              "the findings below", "stop the thread", "bus stops"):
        assert not HISTORY.search(s), s


def test_no_work_history_in_the_repository():
    found = []
    for path in tracked_files():
        for n, line in lines_of(path):
            m = HISTORY.search(line)
            if m:
                found.append(f"{path}:{n}: {m.group(0)!r}: {line.strip()[:100]}")
    assert not found, "work history in the repository:\n" + "\n".join(found)
