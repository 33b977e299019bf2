"""The admin guide documents every counter HawkEye has.

The counters are the file names of /sys/kernel/mm/hawkeye/stats/, listed
in mm/hawkeye/sysfs.c; the vm events among them (vm_event_item.h, named
hawkeye_<file> in /proc/vmstat) must be listed there too.
"""
import os
import re

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
SYSFS = os.path.join(REPO, "kernel", "mm", "hawkeye", "sysfs.c")
GUIDE = os.path.join(REPO, "kernel", "Documentation", "admin-guide", "mm", "hawkeye.rst")
PATCHES = os.path.join(REPO, "kernel", "patches")


def stat_names():
    """The files of stats/: HawkEye's own counters, then its vm events."""
    src = open(SYSFS).read()
    names = []
    for table in ("stat_names", "stat_vm_events"):
        body = re.search(table + r"\[[A-Z_]*\] = \{(.*?)\n\};", src, re.S).group(1)
        names += re.findall(r'"([a-z0-9_]+)"', body)
    return names


def vm_events():
    """HawkEye's vm events, as the series adds them to vmstat_text."""
    names = []
    for p in sorted(os.listdir(PATCHES)):
        text = open(os.path.join(PATCHES, p)).read()
        for part in text.split("\ndiff --git ")[1:]:
            if part.startswith("a/mm/vmstat.c "):
                names += re.findall(r'^\+\t"hawkeye_([a-z0-9_]+)",', part, re.M)
    return names


def test_every_counter_is_documented():
    names = stat_names()
    assert len(names) > 20 and len(set(names)) == len(names)
    guide = open(GUIDE).read()
    missing = [n for n in names if f"``{n}``" not in guide]
    assert not missing, f"not in the admin guide: {missing}"


def test_every_vm_event_is_a_stats_file_too():
    events = vm_events()
    assert events, "no hawkeye_ vm events found in the series"
    assert not set(events) - set(stat_names())
