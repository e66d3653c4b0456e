#!/usr/bin/env bash
# Wire options for many regions (issue #3): ping-pong bandwidth of a message of equal regions
# sent by the custom engine under each of its wire plans, forced with the MPICD_* knobs (the
# default choice; the remote plan, zero-copy messages from 256 KiB; every region on its own;
# everything coalesced), packed by hand, and as one contiguous message (the limit), over shared
# memory and over tcp on loopback, 2 ranks on this node. Over tcp the default is the remote plan
# (MPICD_NODE_LOCAL=0, as between two nodes) unless a method sets MPICD_NODE_LOCAL itself. Each configuration runs REPS
# times (default 3), interleaved; each run reports the fastest of 5 timed windows (about 1 s in
# all per size; 2 s for 64 MiB), and the table gives the best run and the spread (min-max).
#
# Usage: bash bench/wire-options.sh [REPS]   (from the repository root, after
#        cargo build --release -p mpicd-bench --bin regions)
# Writes raw RESULT lines to bench/results/tmp/wire-options/raw.txt and prints a Markdown table
# of every line in that file: with APPEND=1 the new repetitions are added to those already there
# (more repetitions when the machine was busy during some of them); TRANSPORTS="shm" (or "tcp")
# runs only one of the two.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-3}
BIN=${CARGO_TARGET_DIR:-target}/release/regions
OUT=bench/results/tmp/wire-options
mkdir -p "$OUT"
[ "${APPEND:-0}" = 1 ] || : >"$OUT/raw.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe -n 2)

# name | environment for mpirun -x (space-separated) | regions method
METHODS=(
    "custom||custom"
    "remote|MPICD_NODE_LOCAL=0|custom"
    "separate-all|MPICD_NODE_LOCAL=0 MPICD_ZCOPY_THRESHOLD=1|custom"
    "coalesce-all|MPICD_NODE_LOCAL=0 MPICD_ZCOPY_THRESHOLD=1000000000|custom"
    "packed||packed"
    "contiguous||contiguous"
)

# Waits (at most QUIET_WAIT seconds, default 180) until the machine has been nearly idle for a
# second: the two ranks busy-poll, so any other process on a 2-core machine halves what they
# measure.
wait_quiet() {
    local tries=0 a b
    while [ $((tries * 5)) -lt "${QUIET_WAIT:-180}" ]; do
        a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
        local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
        for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
        [ $((100 * (total - idle))) -le $((15 * total)) ] && return 0
        tries=$((tries + 1)); sleep 4
    done
    echo "wire-options: machine still busy, measuring anyway" >&2
}

run() { # transport name env method total seconds sizes
    local transport=$1 name=$2 env=$3 method=$4 total=$5 secs=$6 sizes=$7
    local args=("${MPIRUN[@]}")
    local var
    if [ "$transport" = tcp ]; then
        args+=(-x UCX_TLS=tcp -x UCX_NET_DEVICES=lo)
        [[ $env == *MPICD_NODE_LOCAL* ]] || args+=(-x MPICD_NODE_LOCAL=0)
    fi
    for var in $env; do args+=(-x "$var"); done
    wait_quiet
    "${args[@]}" "$BIN" -m "$method" -n "$transport/$name" -t "$total" -T "$secs" -w 5 \
        -s "$sizes" \
        | grep '^RESULT' | tee -a "$OUT/raw.txt"
}

for rep in $(seq "$REPS"); do
    for transport in ${TRANSPORTS:-shm tcp}; do
        for m in "${METHODS[@]}"; do
            IFS='|' read -r name env method <<<"$m"
            run "$transport" "$name" "$env" "$method" $((4 << 20)) 1.0 8,64,512,4096,32768,262144,1048576
            run "$transport" "$name" "$env" "$method" $((64 << 20)) 2.0 1048576
        done
    done
done

python3 - "$OUT/raw.txt" <<'EOF'
import sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    _, name, metric, total, mbs = line.split()
    transport, method = name.split('/')
    runs[(transport, int(metric.split('-')[1]), int(total), method)].append(float(mbs))
methods = ["custom", "remote", "separate-all", "coalesce-all", "packed", "contiguous"]
def size(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} B"
for transport in ("shm", "tcp"):
    if not any(k[0] == transport for k in runs):
        continue
    n = max(len(v) for k, v in runs.items() if k[0] == transport)
    print(f"\n### {transport}: MB/s, best of {n} (min-max)\n")
    print("| region | total | regions | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    keys = sorted({(r, t) for (tr, r, t, _) in runs if tr == transport}, key=lambda k: (k[1], k[0]))
    for r, t in keys:
        cells = []
        for m in methods:
            v = runs.get((transport, r, t, m), [])
            cells.append(f"{max(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})".replace(",", " ") if v else "-")
        print(f"| {size(r)} | {size(t)} | {t // r} | " + " | ".join(cells) + " |")
EOF
