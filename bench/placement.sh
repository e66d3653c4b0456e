#!/usr/bin/env bash
# placement.sh: tells whether the host has put this machine's two cores close together or far
# apart right now, and what that does to a shared-memory copy without mpicd or UCX. Run it before
# and after a node-local bandwidth benchmark to know which kind of period its numbers come from.
#
# Prints, ROUNDS times (default 5): the one-way cache-line time between cpu 0 and cpu 1 (ns; ~40
# close, ~170 far on the project's VMs) and the MB/s of bench/placement/ring.c with 1 MiB messages,
# ordinary and non-temporal stores (close: ~10000 both; far: 2300-7000 ordinary, ~10000 NT).
# Builds the two C programs into target/placement with cc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../target/placement"
mkdir -p "$out"
cc -O2 -o "$out/c2c" "$here/placement/c2c.c"
cc -O2 -o "$out/ring" "$here/placement/ring.c"
for _ in $(seq 1 "${ROUNDS:-5}"); do
    lat=$("$out/c2c")
    plain=$("$out/ring" 1048576 4 0 | cut -d' ' -f2-)
    nt=$("$out/ring" 1048576 4 1 | cut -d' ' -f2-)
    kind=close
    [ "$lat" -gt 100 ] && kind=far
    echo "$(date +%T) c2c ${lat} ns ($kind) | ring ordinary: ${plain}| ring non-temporal: ${nt}"
done
