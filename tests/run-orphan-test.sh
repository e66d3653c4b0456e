#!/usr/bin/env bash
# run-orphan-test.sh: when the launcher goes away (mpirun killed with SIGKILL), every rank exits
# within seconds instead of running on as an orphan. Three ranks of tests/faults/fault.c
# (scenario `orphan`: rank 0 waits in MPI_Iprobe, the others compute without calling MPI) are
# started; once all are ready, mpirun is killed and each rank must be gone within 10 s
# (mpicd: PMIx reports the lost connection to the server, and the rank exits).
#
# Usage: tests/run-orphan-test.sh [mpicd|ompi]   (ompi: the same program on Open MPI, reported)
# Needs `cargo build --release -p mpicd-capi` first.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1
need_libmpi run-orphan-test

IMPL=${1:-mpicd}
LIMIT=10
OUT=target/faults
mkdir -p "$OUT"
case $IMPL in
    mpicd) cc=bin/mpicc ;;
    ompi) cc=mpicc.openmpi ;;
    *) echo "run-orphan-test: mpicd or ompi, not $IMPL" >&2; exit 2 ;;
esac
$cc -O1 -g -o "$OUT/fault-$IMPL" tests/faults/fault.c || exit 1
log=$OUT/orphan-$IMPL
"${MPIRUN_CMD[@]}" -n 3 "$OUT/fault-$IMPL" orphan >"$log.out" 2>"$log.err" &
launcher=$!
for _ in $(seq 100); do
    [[ $(grep -c '^READY' "$log.out") -eq 3 ]] && break
    sleep 0.2
done
pids=$(sed -n 's/^READY rank=[0-9]* pid=\([0-9]*\)$/\1/p' "$log.out")
if [[ $(wc -w <<<"$pids") -ne 3 ]]; then
    echo "FAIL orphan ($IMPL): the ranks did not start (see $log.*)"
    kill -9 "$launcher" 2>/dev/null
    exit 1
fi
{ kill -9 "$launcher"; wait "$launcher"; } 2>/dev/null
start=$(date +%s.%N)
left=$pids
while [[ -n $left ]] && (($(echo "$(date +%s.%N) - $start < $LIMIT" | bc))); do
    sleep 0.1
    left=$(for p in $left; do kill -0 "$p" 2>/dev/null && echo "$p"; done)
done
took=$(echo "$(date +%s.%N) - $start" | bc)
if [[ -n $left ]]; then
    echo "FAIL orphan ($IMPL): ranks $(echo $left) still run ${LIMIT}s after mpirun was killed"
    kill -9 $left 2>/dev/null
    exit 1
fi
printf 'ok   orphan (%s): every rank exited %.1fs after mpirun was killed\n' "$IMPL" "$took"
