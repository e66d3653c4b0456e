#!/usr/bin/env bash
# gather_shapes.sh: the gather of differently shaped objects (bench/coll/gather_shapes.c) at 2,
# 3 and 4 ranks: one MPI_Gather of a custom datatype against Mprobe + Get_count + Mrecv per
# rank, both on mpicd, best of 3 rounds each. Writes bench/results/gather-shapes.csv and
# gather-shapes.md (ratio = probe time / collective time: above 1, the collective is faster).
# About 30 seconds. Part of `make bench-coll`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/common.sh"
cd "$ROOT"
mkdir -p target/bench bench/results
bin/mpicc -O2 -Wall -Wextra -o target/bench/gather_shapes bench/coll/gather_shapes.c
csv=bench/results/gather-shapes.csv
echo "ranks,doubles,collective_us,probe_us" >"$csv"
for n in 2 3 4; do
    echo "gather_shapes: $n ranks" >&2
    timeout 300 "${MPIRUN_CMD[@]}" -n "$n" target/bench/gather_shapes 1048576 >>"$csv"
done
python3 - "$csv" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out = ["# Gather of differently shaped objects: one custom-typed MPI_Gather against Probe + Recv per rank",
       "",
       "`bench/coll/gather_shapes.sh` (mpicd both ways; rank r sends n + r*n/8 doubles, one zero-copy",
       "region; best of 3 rounds). ratio = probe / collective: above 1, the collective is faster.",
       "",
       "| ranks | doubles (rank 0) | collective us | probe + recv us | ratio |",
       "|---:|---:|---:|---:|---:|"]
for r in rows:
    c, p = float(r["collective_us"]), float(r["probe_us"])
    out.append(f"| {r['ranks']} | {r['doubles']} | {c:.1f} | {p:.1f} | {p / c:.2f} |")
for ranks in sorted({r["ranks"] for r in rows}):
    ratios = [float(r["probe_us"]) / float(r["collective_us"]) for r in rows if r["ranks"] == ranks]
    out.append(f"\n{ranks} ranks: geomean ratio {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")
open("bench/results/gather-shapes.md", "w").write("\n".join(out) + "\n")
print("\n".join(out[-3:]))
PY
