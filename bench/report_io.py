"""What the *_report.py summarisers share: JSON lines in, a JSON summary
out, with the same error for a bad line and the same 'wrote' message, so
that bench/demo and promotion.sh see one behaviour whichever they run."""
import argparse
import json
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ReportError(Exception):
    """Input a summary cannot use; main() prints it and exits 1."""


def arg_parser(doc, name):
    """The command line every summary starts from: INPUT (default
    results/raw/NAME.jsonl) and -o OUTPUT (default results/NAME.json); DOC's
    first line describes it."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("input", nargs="?", default=os.path.join(REPO, f"results/raw/{name}.jsonl"))
    p.add_argument("-o", "--output", default=os.path.join(REPO, f"results/{name}.json"))
    return p


def json_lines(lines):
    """(line number, parsed object) of each line that is not blank; a line
    that is not JSON stops the summary with its number."""
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise ReportError(f"line {n}: not JSON: {e}") from None
        yield n, obj


def ratio(a, b):
    """a / b, or None where either is missing or b is 0 (keeps the JSON
    free of inf/NaN)."""
    return a / b if a is not None and b else None


def median_and_range(values):
    """(median, [lowest, highest]) of the values that are not None, or
    (None, None) without any: a figure over interleaved rounds."""
    vs = [v for v in values if v is not None]
    return (statistics.median(vs), [min(vs), max(vs)]) if vs else (None, None)


def write_json(path, obj, indent=1):
    """Write OBJ to PATH (making its directory), refusing NaN and inf,
    which JSON readers other than Python's reject."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, allow_nan=False)
        f.write("\n")
    print(f"wrote {path}", file=sys.stderr)


def merge_thread_cpu(entries):
    """One thread_cpu entry per configuration: the rounds' seconds and
    thread CPU times added up."""
    merged = {}
    for e in entries:
        m = merged.setdefault(e["config"], dict(e, seconds=0.0, threads={}))
        m["seconds"] += e["seconds"]
        for name, t in e["threads"].items():
            m["threads"][name] = m["threads"].get(name, 0.0) + t
    return list(merged.values())
