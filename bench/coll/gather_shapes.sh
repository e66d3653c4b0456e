#!/usr/bin/env bash
# gather_shapes.sh: the gather of differently shaped objects (bench/coll/gather_shapes.c) at 2,
# 3 and 4 ranks, for its two objects (vec: a vector of doubles; csr: a sparse-matrix block of
# three arrays): one MPI_Gather of a custom datatype against Mprobe + Get_count + Mrecv per array
# and rank, both on mpicd, best of 3 rounds each. Writes bench/results/gather-shapes.csv and
# gather-shapes.md (ratio = probe time / collective time: above 1, the collective is faster).
# About a minute. Part of `make bench-coll`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/common.sh"
cd "$ROOT"
mkdir -p target/bench bench/results
bin/mpicc -O2 -Wall -Wextra -o target/bench/gather_shapes bench/coll/gather_shapes.c
csv=bench/results/gather-shapes.csv
echo "object,ranks,elements,collective_us,probe_us" >"$csv"
for object in vec csr; do
    for n in 2 3 4; do
        echo "gather_shapes: $object, $n ranks" >&2
        timeout 300 "${MPIRUN_CMD[@]}" -n "$n" target/bench/gather_shapes "$object" 1048576 >>"$csv"
    done
done
python3 - "$csv" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
what = {"vec": "a vector of doubles, one array (the probe way: one message per rank)",
        "csr": "a sparse-matrix block in CSR form: row offsets, column indices and values, three "
               "arrays (the probe way: three messages per rank)"}
out = ["# Gather of differently shaped objects: one custom-typed MPI_Gather against Probe + Recv per rank",
       "",
       "`bench/coll/gather_shapes.sh` (mpicd both ways; rank r's object has n + r*n/8 elements, its",
       "arrays zero-copy regions; best of 3 rounds). ratio = probe / collective: above 1, the",
       "collective is faster."]
summary = []
for obj in ("vec", "csr"):
    mine = [r for r in rows if r["object"] == obj]
    if not mine:
        continue
    out += ["", f"## {obj}: {what[obj]}", "",
            "| ranks | elements (rank 0) | collective us | probe + recv us | ratio |",
            "|---:|---:|---:|---:|---:|"]
    for r in mine:
        c, p = float(r["collective_us"]), float(r["probe_us"])
        out.append(f"| {r['ranks']} | {r['elements']} | {c:.1f} | {p:.1f} | {p / c:.2f} |")
    for ranks in sorted({r["ranks"] for r in mine}):
        ratios = [float(r["probe_us"]) / float(r["collective_us"]) for r in mine if r["ranks"] == ranks]
        summary.append(f"{obj}, {ranks} ranks: geomean ratio "
                       f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")
out += ["", "## Geometric means", ""] + [f"- {s}" for s in summary]
open("bench/results/gather-shapes.md", "w").write("\n".join(out) + "\n")
print("\n".join(summary))
PY
