#!/usr/bin/env python3
"""The table of bench/prediction.sh: per kernel and scaling kind, the minimum
and average of the overall accuracy and coverage of every prediction
(`weft predict TEST TRAIN --against REF --format json`), beside the paper's
Tables 2-4 (Vormwald et al., "Predicting Remote Reuse Distance Patterns in
UPC Applications").

    summary.py PREDICTIONS.tsv [--markdown]

PREDICTIONS.tsv: one prediction a line, tab-separated: kernel, kind (size,
threads-nogroup, threads-group), test, train, reference, status (ok or
failed), JSON path. The JSON's "overall" object has "coverage" and
"accuracy" as fractions in [0, 1] and "operations". A prediction whose
command failed, or whose JSON has no overall coverage/accuracy, is counted
in the `failed` column and left out of the minimum and average.
"""
import json
import math
import sys

KINDS = [
    ("size", "problem-size scaling", "Table 2"),
    ("threads-nogroup", "thread scaling, no grouping", "Table 3"),
    ("threads-group", "thread scaling, grouping", "Table 4"),
]

# The paper's numbers, percent: (accuracy min, avg, coverage min, avg).
PAPER = {
    "size": {
        "matmul": (3, 97, 53, 99),
        "jacobi": (100, 100, 39, 100),
        "lu8": (6, 94, 0, 77),
        "lu16": (9, 96, 0, 63),
        "lu32": (0, 96, 0, 53),
        "stencil2d-4p": (99, 100, 100, 100),
        "stencil2d-8p": (89, 100, 71, 99),
        "stencil3d-6p": (91, 99, 100, 100),
        "stencil3d-26p": (9, 83, 58, 90),
        "fft3d": (60, 88, 100, 100),
    },
    "threads-nogroup": {
        "matmul": (3, 98, 28, 99),
        "jacobi": (94, 100, 56, 91),
        "lu8": (13, 95, 0, 42),
        "lu16": (20, 92, 0, 37),
        "lu32": (13, 82, 0, 21),
        "stencil2d-4p": (100, 100, 0, 50),
        "stencil2d-8p": (0, 69, 0, 61),
        "stencil3d-6p": (95, 100, 0, 50),
        "stencil3d-26p": (7, 69, 8, 66),
        "fft3d": (61, 92, 24, 89),
    },
    "threads-group": {
        "matmul": (92, 99, 100, 100),
        "jacobi": (95, 100, 100, 100),
        "lu8": (51, 91, 100, 100),
        "lu16": (56, 80, 97, 99),
        "lu32": (49, 92, 98, 99),
        "stencil2d-4p": (100, 100, 100, 100),
        "stencil2d-8p": (100, 100, 100, 100),
        "stencil3d-6p": (100, 100, 100, 100),
        "stencil3d-26p": (100, 100, 100, 100),
        "fft3d": (69, 93, 100, 100),
    },
}
ORDER = list(PAPER["size"])


def overall(path):
    """(accuracy, coverage) of one prediction's JSON, or None."""
    try:
        with open(path) as f:
            doc = json.load(f)
        o = doc["overall"]
        acc, cov = float(o["accuracy"]), float(o["coverage"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (0 <= acc <= 1 and 0 <= cov <= 1) or math.isnan(acc) or math.isnan(cov):
        return None
    return acc, cov


def load(listing):
    """{(kernel, kind): {"acc": [...], "cov": [...], "failed": n}}."""
    cells = {}
    with open(listing) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 7:
                continue
            kernel, kind, _test, _train, _ref, status, path = fields
            cell = cells.setdefault((kernel, kind), {"acc": [], "cov": [], "failed": 0})
            result = overall(path) if status == "ok" else None
            if result is None:
                cell["failed"] += 1
                continue
            cell["acc"].append(result[0])
            cell["cov"].append(result[1])
    return cells


def pct(x):
    return "%d" % round(100 * x)


def measured(cell):
    """'min/avg' accuracy and coverage strings and the count, or dashes."""
    if cell is None or not cell["acc"]:
        return "-", "-", ("0" if cell is None else "0+%df" % cell["failed"])
    acc, cov = cell["acc"], cell["cov"]
    a = "%s/%s" % (pct(min(acc)), pct(sum(acc) / len(acc)))
    c = "%s/%s" % (pct(min(cov)), pct(sum(cov) / len(cov)))
    n = str(len(acc)) + ("+%df" % cell["failed"] if cell["failed"] else "")
    return a, c, n


def paper(kind, kernel):
    p = PAPER[kind].get(kernel)
    if p is None:
        return "-", "-"
    return "%d/%d" % (p[0], p[1]), "%d/%d" % (p[2], p[3])


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    markdown = "--markdown" in argv[2:]
    cells = load(argv[1])
    kernels = [k for k in ORDER if any((k, kind) in cells for kind, _, _ in KINDS)]
    kernels += sorted({k for k, _ in cells} - set(kernels))
    rows = []
    for kernel in kernels:
        row = [kernel]
        for kind, _, _ in KINDS:
            a, c, n = measured(cells.get((kernel, kind)))
            pa, pc = paper(kind, kernel)
            row += ["%s (%s)" % (a, pa), "%s (%s)" % (c, pc), n]
        rows.append(row)
    head1 = [""] + sum([[title + " [paper " + table + "]", "", ""] for _, title, table in KINDS], [])
    head2 = ["kernel"] + ["accuracy min/avg %", "coverage min/avg %", "n"] * 3
    if markdown:
        header = ["kernel"]
        for kind, _, table in KINDS:
            short = {"size": "size", "threads-nogroup": "threads", "threads-group": "threads+grouping"}[kind]
            header += ["%s accuracy (%s)" % (short, table), "%s coverage (%s)" % (short, table), "n"]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        print()
        print("Each cell: weft's min/avg in percent over the n predictions (paper's in")
        print("parentheses); `+kf`: k predictions failed and are left out.")
        return 0
    widths = [max(len(r[i]) for r in rows + [head2]) for i in range(len(head2))]
    for g in range(3):  # a group title spans its three columns
        span = sum(widths[1 + 3 * g : 4 + 3 * g]) + 4
        if len(head1[1 + 3 * g]) > span:
            widths[1 + 3 * g] += len(head1[1 + 3 * g]) - span
    def line(cells, group=False):
        out = [cells[0].ljust(widths[0])]
        for g in range(3):
            if group:
                span = sum(widths[1 + 3 * g : 4 + 3 * g]) + 4
                out.append(cells[1 + 3 * g].ljust(span))
            else:
                out += [cells[1 + 3 * g + i].ljust(widths[1 + 3 * g + i]) for i in range(3)]
        return "  ".join(out).rstrip()
    print(line(head1, group=True))
    print(line(head2))
    for row in rows:
        print(line(row))
    print("# min/avg over the n predictions of each kernel, in percent; the paper's in parentheses;")
    print("# n: predictions (+kf: k failed, left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
