#!/usr/bin/env bash
# run.sh: one-sided latency and bandwidth (bench/rma/rma_bench.c: put, get, accumulate,
# fetch_and_op, compare_and_swap latency at 8 B with a flush each; put and get bandwidth, 32
# operations per flush, 8 B-4 MiB; and bench/rma/strided.c, a fence epoch of a strided put, get and
# accumulate at 4 ranks on the 2 cores) for mpicd and Open MPI (`--mca osc sm,ucx`, as issue 18 asks:
# its default one-sided component crashes in MPI_Win_lock here), 3 interleaved rounds, the best
# of each, beside raw UCX on the same machine (`ucx_perftest -t ucp_put_lat / ucp_get / ucp_fadd
# / ucp_cswap` at 8 B, `ucp_put_bw` / `ucp_get` bandwidth at the same sizes). Writes
# bench/results/rma.md and rma.csv (make bench-rma, and make bench; about 2 minutes).
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/common.sh"
cd "$ROOT" || exit 1
need_libmpi bench-rma

PEER_MPICC=${PEER_MPICC:-mpicc.openmpi}
command -v "$PEER_MPICC" >/dev/null || PEER_MPICC=mpicc
TMP=bench/results/tmp/rma
RAW=$TMP/raw.txt
mkdir -p "$TMP"
: >"$RAW"
bin/mpicc -O2 -Wall -o "$TMP/rma-mpicd" bench/rma/rma_bench.c || exit 1
"$PEER_MPICC" -O2 -Wall -o "$TMP/rma-openmpi" bench/rma/rma_bench.c || exit 1
bin/mpicc -O2 -Wall -o "$TMP/strided-mpicd" bench/rma/strided.c || exit 1
"$PEER_MPICC" -O2 -Wall -o "$TMP/strided-openmpi" bench/rma/strided.c || exit 1

failed=0
for round in 1 2 3; do
    timeout 300 "${MPIRUN_CMD[@]}" -n 2 "$TMP/rma-mpicd" mpicd >"$TMP/mpicd.$round.log" 2>&1 ||
        { echo "bench-rma: mpicd round $round failed (see $TMP/mpicd.$round.log)" >&2; failed=1; }
    timeout 300 "${MPIRUN_CMD[@]}" -n 2 --mca osc sm,ucx "$TMP/rma-openmpi" openmpi \
        >"$TMP/openmpi.$round.log" 2>&1 ||
        { echo "bench-rma: Open MPI round $round failed (see $TMP/openmpi.$round.log)" >&2; failed=1; }
    # Strided epochs at 4 ranks on the 2 cores: targets blocked in MPI_Win_fence.
    timeout 300 "${MPIRUN_CMD[@]}" -n 4 "$TMP/strided-mpicd" mpicd >>"$TMP/mpicd.$round.log" 2>&1 ||
        { echo "bench-rma: mpicd strided round $round failed" >&2; failed=1; }
    timeout 300 "${MPIRUN_CMD[@]}" -n 4 --mca osc sm,ucx "$TMP/strided-openmpi" openmpi \
        >>"$TMP/openmpi.$round.log" 2>&1 ||
        { echo "bench-rma: Open MPI strided round $round failed" >&2; failed=1; }
    grep -h '^RESULT' "$TMP/mpicd.$round.log" "$TMP/openmpi.$round.log" >>"$RAW"
done

# ucx_perftest: a server and a client on cores 0 and 1; the Final line's overall latency (us).
port_base=$((20000 + RANDOM % 20000))
i=0
for t in ucp_put_lat:put ucp_get:get ucp_fadd:fetch_and_op ucp_cswap:compare_and_swap; do
    test=${t%%:*} op=${t#*:} port=$((port_base + i)) i=$((i + 1))
    timeout 60 ucx_perftest -p "$port" -c 0 -t "$test" -s 8 -n 20000 >"$TMP/perftest-$test-server.log" 2>&1 &
    sleep 1
    if timeout 60 ucx_perftest localhost -p "$port" -c 1 -t "$test" -s 8 -n 20000 \
        >"$TMP/perftest-$test.log" 2>&1; then
        awk -v op="$op" '/^Final:/ { printf "RESULT ucx_perftest %s_latency 8 %.3f\n", op, $5 }' \
            "$TMP/perftest-$test.log" >>"$RAW"
    fi
    wait
done
# Bandwidth: UCX reports MB/s of 2^20 bytes; the benchmarks' MB are 10^6 bytes.
for t in ucp_put_bw:put ucp_get:get; do
    test=${t%%:*} op=${t#*:}
    for bytes in 8 512 32768 1048576 4194304; do
        port=$((port_base + i)) i=$((i + 1))
        n=$((bytes >= 1048576 ? 200 : 20000))
        timeout 60 ucx_perftest -p "$port" -c 0 -t "$test" -s "$bytes" -n "$n" >"$TMP/perftest-$test-server.log" 2>&1 &
        sleep 1
        if timeout 60 ucx_perftest localhost -p "$port" -c 1 -t "$test" -s "$bytes" -n "$n" \
            >"$TMP/perftest-$test-$bytes.log" 2>&1; then
            awk -v op="$op" -v b="$bytes" '/^Final:/ { printf "RESULT ucx_perftest %s_bandwidth %d %.1f\n", op, b, $7 * 1.048576 }' \
                "$TMP/perftest-$test-$bytes.log" >>"$RAW"
        fi
        wait
    done
done

python3 - "$RAW" <<'PY'
import collections, sys
best = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    _, impl, metric, size, value = line.split()
    key, v = (metric, int(size)), float(value)
    old = best[key].get(impl)
    better = min if metric.endswith("latency") else max
    best[key][impl] = v if old is None else better(old, v)
out = ["# One-sided communication: mpicd, Open MPI (osc sm,ucx) and raw UCX", "",
       "`make bench-rma` (bench/rma/run.sh): 2 ranks on one node, best of 3 rounds. Latency: one",
       "operation and a flush, in us; bandwidth: 32 operations per flush, MB/s. ratio = Open MPI",
       "/ mpicd for latency, mpicd / Open MPI for bandwidth (above 1: mpicd is faster); raw",
       "UCX is `ucx_perftest` (server and client on cores 0 and 1); mpicd / UCX is a multiple of",
       "UCX's latency, or the fraction of its bandwidth. The strided_* rows",
       "(bench/rma/strided.c) are one fence epoch at 4 ranks on the 2 cores: rank 0 puts, gets or",
       "accumulates 65536 ints, one in every two, into rank 1's MPI_Win_create memory, in us.", "",
       "| metric | bytes | mpicd | Open MPI | ratio | ucx_perftest | mpicd / UCX |",
       "|---|---:|---:|---:|---:|---:|---:|"]
for (metric, size), v in sorted(best.items(), key=lambda kv: (not kv[0][0].endswith("latency"), kv[0])):
    m, o, u = v.get("mpicd"), v.get("openmpi"), v.get("ucx_perftest")
    lat = metric.endswith("latency")
    ratio = (o / m if lat else m / o) if m and o else None
    vs_ucx = (m / u) if (m and u) else None
    f = lambda x, d=3 if lat else 1: "-" if x is None else f"{x:.{d}f}"
    out.append(f"| {metric} | {size} | {f(m)} | {f(o)} | {f(ratio, 2)} | {f(u)} | {f(vs_ucx, 2)} |")
open("bench/results/rma.md", "w").write("\n".join(out) + "\n")
with open("bench/results/rma.csv", "w") as f:
    f.write("metric,bytes,mpicd,openmpi,ucx_perftest\n")
    for (metric, size), v in sorted(best.items()):
        f.write(f"{metric},{size},{v.get('mpicd', '')},{v.get('openmpi', '')},{v.get('ucx_perftest', '')}\n")
print("\n".join(out))
PY
exit $failed
