#!/usr/bin/env python3
"""noise: how far the collectives benchmark's ratios stray when nothing differs (A/A).

Runs one implementation's coll_bench against itself, as bench/coll/run.py runs mpicd against
Open MPI (same sizes, rounds interleaved, medians per row), for mpicd and for Open MPI, and
counts the rows whose ratio falls below 1.0, 0.9 and 0.8 although both columns are the same
program. On this 2-core machine that is the floor under any "every row >= 1.0" reading of
bench/results/collectives.md: a row below 1 by less than that is not evidence of a slower
collective.

Writes bench/results/collectives-noise.md (and .csv). Usage:
    python3 bench/coll/noise.py [--rounds 5] [--ranks 2,3,4] [--out bench/results]
About 2 minutes (5 rounds). Standard library only; reuses run.py's build and runner.
"""
import argparse
import csv
import datetime
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (bench/coll/run.py)

BANDS = (1.0, 0.9, 0.8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ranks", default="2,3,4")
    ap.add_argument("--budget", type=float, default=0.2)
    ap.add_argument("--out", default=os.path.join(run.ROOT, "bench", "results"))
    a = ap.parse_args()
    ranks_list = [int(x) for x in a.ranks.split(",")]
    args = ["--min", "8", "--max", str(4 << 20), "--factor", "2", "--budget", str(a.budget)]
    os.makedirs(os.path.join(run.TMP, "logs"), exist_ok=True)
    builds, provides, _ = run.build()
    impls = [run.MPICD, run.OMPI]
    # (impl, copy A or B, op, ranks, bytes) -> [usec]
    samples = defaultdict(list)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for r in range(a.rounds):
        for n in ranks_list:
            for impl in impls:
                ops = [op for op in run.OPS if op in provides[impl]]
                for copy in ("A", "B"):
                    run.log(f"noise: round {r + 1}/{a.rounds}, {n} ranks, {run.LABELS[impl]} {copy}")
                    logfile = os.path.join(run.TMP, "logs", f"noise-{impl}-{n}-{copy}.log")
                    rows, failed, status, _, _ = run.run_once(
                        builds[impl], n, ops, args, 300, logfile)
                    if status != "ok":
                        sys.exit(f"noise: {run.LABELS[impl]} at {n} ranks: {status} ({logfile})")
                    for op, _, size, usec in rows:
                        samples[(impl, copy, op, n, size)].append(usec)
    ratios = defaultdict(list)             # (impl, ranks) -> [ratio of the medians]
    with open(os.path.join(a.out, "collectives-noise.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["impl", "op", "ranks", "bytes", "a_usec", "b_usec", "ratio"])
        for (impl, copy, op, n, size), xs in sorted(samples.items()):
            ys = samples.get((impl, "B", op, n, size))
            if copy != "A" or not ys:
                continue
            ma, mb = statistics.median(xs), statistics.median(ys)
            ratios[(impl, n)].append(ma / mb)
            w.writerow([impl, op, n, size, f"{ma:.3f}", f"{mb:.3f}", f"{ma / mb:.3f}"])
    lines = [
        "# Collectives benchmark: the same program against itself (A/A)",
        "",
        f"Made by `bench/coll/noise.py`, {date}: coll_bench of each implementation run twice per "
        f"round, {a.rounds} interleaved rounds, every op of `bench/coll/run.py` at 8 B-4 MiB; "
        "ratio = median of copy A / median of copy B, as run.py's ratio is Open MPI / mpicd. "
        "Both columns run one program, so every row below 1 is noise.",
        "",
        "| implementation | ranks | rows | below 1.0 | below 0.9 | below 0.8 | lowest | highest |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for impl in impls:
        for n in ranks_list + [0]:
            xs = [x for (i, m), v in ratios.items() if i == impl and (n == 0 or m == n) for x in v]
            if not xs:
                continue
            counts = " | ".join(str(sum(x < band for x in xs)) for band in BANDS)
            lines.append(f"| {run.LABELS[impl]} | {n or 'all'} | {len(xs)} | {counts} | "
                         f"{min(xs):.2f} | {max(xs):.2f} |")
    with open(os.path.join(a.out, "collectives-noise.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[-2 * (len(ranks_list) + 1):]))


if __name__ == "__main__":
    main()
