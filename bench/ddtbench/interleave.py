#!/usr/bin/env python3
"""interleave: DDTBench's derived-datatype methods on Open MPI and mpicd, run alternately.

On a shared 2-core machine one run of a benchmark can be 2-4x off another minutes later, so a
single `make bench` run cannot tell two implementations apart by less than that. This script runs
the two builds of bench/ddtbench in turn, ROUNDS times (Open MPI's mpi_ddt, then mpicd's
mpicd_ddt, custom and mpicd_reference, then Open MPI's reference), takes each configuration's
median over the rounds, and prints the ratios per configuration and their geometric means per
kernel and over the kernels (mpicd ddt / Open MPI ddt, mpicd ddt / mpicd custom, and the
transports' own ratio on contiguous data, mpicd_reference / reference).

Usage: bench/ddtbench/interleave.py [--rounds 3] [--budget 1] [--out FILE]
Needs target/bench/ddtbench-ompi and target/bench/ddtbench-mpicd (bench/run-all.sh builds
them) and MPIRUN (default: Open MPI's mpirun as root, oversubscribed). Standard library only.
"""
import argparse
import math
import os
import shlex
import statistics
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPIRUN = os.environ.get(
    "MPIRUN",
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe",
)
RUNS = [
    ("ddtbench-ompi", "mpi_ddt"),
    ("ddtbench-mpicd", "mpicd_ddt"),
    ("ddtbench-mpicd", "custom"),
    ("ddtbench-mpicd", "mpicd_reference"),
    ("ddtbench-ompi", "reference"),
]


def run(binary, method, budget):
    cmd = shlex.split(MPIRUN) + ["-n", "2", os.path.join(ROOT, "target", "bench", binary),
                                 "--method", method, "--budget", str(budget)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "RESULT" and not f[2].endswith(".mean"):
            yield f[1], f[2], int(f[3]), float(f[4])


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    samples = defaultdict(list)
    for r in range(a.rounds):
        for binary, method in RUNS:
            print(f"# round {r + 1}/{a.rounds}: {method}", file=sys.stderr, flush=True)
            for m, test, nbytes, mbs in run(binary, method, a.budget):
                samples[(m, test, nbytes)].append(mbs)
    med = {k: statistics.median(v) for k, v in samples.items()}
    lines = ["| test | bytes | Open MPI mpi_ddt | mpicd_ddt | mpicd custom | ddt / Open MPI ddt "
             "| ddt / custom | ref ratio |", "|---|---|---|---|---|---|---|---|"]
    per_kernel = defaultdict(lambda: ([], [], []))
    for (m, test, nbytes) in sorted(k for k in med if k[0] == "mpi_ddt"):
        o = med[(m, test, nbytes)]
        d = med.get(("mpicd_ddt", test, nbytes))
        c = med.get(("custom", test, nbytes))
        rm, ro = med.get(("mpicd_reference", test, nbytes)), med.get(("reference", test, nbytes))
        if d is None or c is None:
            continue
        ref = rm / ro if rm and ro else float("nan")
        k = per_kernel[test]
        k[0].append(d / o), k[1].append(d / c), k[2].append(ref)
        lines.append(f"| {test} | {nbytes} | {o:.0f} | {d:.0f} | {c:.0f} | {d / o:.2f} | "
                     f"{d / c:.2f} | {ref:.2f} |")
    lines += ["", "| kernel | ddt / Open MPI ddt | ddt / custom | ref ratio |", "|---|---|---|---|"]
    for test, (x, y, z) in sorted(per_kernel.items()):
        lines.append(f"| {test} | {geomean(x):.2f} | {geomean(y):.2f} | {geomean(z):.2f} |")
    g = [geomean([geomean(v[i]) for v in per_kernel.values()]) for i in range(3)]
    lines.append(f"| **geomean over the kernels** | **{g[0]:.2f}** | **{g[1]:.2f}** | "
                 f"**{g[2]:.2f}** |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(f"Medians of {a.rounds} interleaved rounds (budget {a.budget} s).\n\n" + text)


if __name__ == "__main__":
    main()
