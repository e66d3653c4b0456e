#!/usr/bin/env bash
# run.sh: the Python object ping-pong benchmark (issue 5, item 6), in one run on this machine:
# mpicd (raw buffers, pickle in-band, pickle out-of-band with one message per buffer, and ours:
# pickle out-of-band through the custom datatype, one message) and mpi4py from PyPI built
# against the system Open MPI (in-band pickle and mpi4py.util.pkl5), for (a) one NumPy array and
# (b) a list of 128 KiB arrays, sizes 1 KiB .. 256 MiB, 2 ranks over shared memory.
#
# Writes python/bench/results/pingpong.csv and pingpong.png and prints ours against the targets.
#
# Usage: python/bench/run.sh [--max-size 64M] [--min-size 1K] [--repeat N] [--quick]
#   --quick      sizes 1 KiB .. 16 MiB, one repeat (about a minute)
#   --repeat N   run each implementation N times, alternating, keep each point's best (default 2)
# Environment: MPIRUN (launcher, default Open MPI's mpirun as root, oversubscribed), PYTHON,
#   BENCH_NO_INSTALL=1 (use what is installed), BENCH_ARGS (more pingpong.py options).
# The default run takes about 3-6 minutes on 2 cores (plus ~8 min once to compile mpi4py).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../scripts/common.sh"
MIN=1K
MAX=256M
REPEAT=2
while [[ $# -gt 0 ]]; do
    case $1 in
        --max-size) MAX=$2; shift 2 ;;
        --min-size) MIN=$2; shift 2 ;;
        --repeat) REPEAT=$2; shift 2 ;;
        --quick) MAX=16M; REPEAT=1; shift ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

[[ -n "${MPICD_LIBMPI:-}" ]] || need_libmpi python/bench/run.sh

if [[ "${BENCH_NO_INSTALL:-0}" != 1 ]]; then
    pip=("$PYTHON" -m pip install --quiet --disable-pip-version-check)
    "${pip[@]}" numpy matplotlib
    # mpi4py compiled here against the system Open MPI (mpicc), not a prebuilt wheel.
    if ! "$PYTHON" -c "import mpi4py" 2>/dev/null; then
        echo "run.sh: building mpi4py against Open MPI (mpicc); this takes a few minutes once"
        "${pip[@]}" --no-binary mpi4py mpi4py
    fi
    install_python_package
fi

OUT="$HERE/results"
TMP="$OUT/tmp"
mkdir -p "$TMP"
rm -f "$TMP"/*.csv
cd "$TMP"
start=$(date +%s)
for ((i = 1; i <= REPEAT; i++)); do
    for impl in mpicd mpi4py; do
        echo "== $impl, run $i of $REPEAT"
        "${MPIRUN_CMD[@]}" -n 2 "$PYTHON" "$HERE/pingpong.py" --impl "$impl" \
            --min-size "$MIN" --max-size "$MAX" --out "$TMP/$impl.$i.csv" ${BENCH_ARGS:-}
    done
done
"$PYTHON" "$HERE/report.py" "$TMP"/*.csv --csv "$OUT/pingpong.csv" --png "$OUT/pingpong.png"
echo "benchmark took $(( $(date +%s) - start )) s"
