#!/usr/bin/env bash
# pingpong-compare.sh: mpicd's p2p ping-pong beside raw UCX and Open MPI, in one run, on this machine.
#
# Measures latency at 8 B (one-way, half the round trip), bandwidth at 4 MiB and the small-message
# rate (8 B, 64 in flight per window: MB/s of payload) (MB = 1e6 bytes) for
#   ucx_perftest  raw UCX tag matching (ucx-utils): the limit mpicd can reach over UCX
#   openmpi       Open MPI, pml ob1 + btl vader (its default shared-memory path)
#   openmpi-ucx   Open MPI over its UCX pml (Debian disables it by default in openmpi-mca-params.conf;
#                 asked for explicitly here)
#   mpicd         target/release/pingpong (bench crate) under mpirun
# Each is run BENCH_RUNS times (default 3), the rounds interleaved so that the machine's noise falls
# on all alike; the best run counts. bench/p2p_table.py prints the table and the ratios and writes
# bench/results/p2p.csv. Builds nothing: `make bench-p2p` builds first.
#
# Every program prints `RESULT <impl> latency <bytes> <usec>` and `RESULT <impl> bandwidth <bytes>
# <MBps>`; ucx_perftest's own output is converted to those lines here.
#
# Environment: MPIRUN (exported by the Makefile), BENCH_RUNS, MPICD_PINGPONG (binary),
# MPICD_PINGPONG_ARGS, OMPI_PINGPONG (binary), UCX_TLS (default: UCX chooses, i.e. shared memory).
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1

RUNS=${BENCH_RUNS:-3}
MPICD_PINGPONG=${MPICD_PINGPONG:-target/release/pingpong}
read -r -a MPICD_ARGS <<<"${MPICD_PINGPONG_ARGS:-}"
OMPI_PINGPONG=${OMPI_PINGPONG:-target/bench/ompi_pingpong}
TIMEOUT=120

# The workload, shared by all implementations (OSU style).
LAT_SIZE=8
LAT_ITERS=10000
LAT_WARMUP=1000
BW_SIZE=4194304
BW_ITERS=20     # windows
BW_WARMUP=2     # windows
BW_WINDOW=64    # messages in flight per window (fixed in ompi_pingpong.c)
# The small-message rate: the same windows at 8 B (osu_mbw_mr-style), reported as `rate` lines.
RATE_SIZE=8
RATE_ITERS=4000 # windows
RATE_WARMUP=200 # windows

OUT_DIR=bench/results
TMP_DIR=$OUT_DIR/tmp
RAW=$TMP_DIR/p2p-raw.txt
mkdir -p "$TMP_DIR"
: >"$RAW"

note() { echo "note: $*" >&2; }

# run_logged LOG CMD...: runs CMD with a time limit, keeps its output in LOG and its RESULT lines
# in $RAW (through the command named by $RESULTS_FILTER, if set). Fails when CMD fails or printed
# no RESULT line.
run_logged() {
    local log=$1 rc
    shift
    timeout --kill-after=10 "$TIMEOUT" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    grep '^RESULT ' "$log" | ${RESULTS_FILTER:-cat} >>"$RAW"
    if ((rc != 0)) || ! grep -q '^RESULT ' "$log"; then
        note "$(basename "$log" .log) failed (exit $rc); last lines of $log:"
        tail -n 5 "$log" | sed 's/^/    /' >&2
        return 1
    fi
}

# --- ucx_perftest -------------------------------------------------------------------------------
# Server and client are two processes on localhost, pinned to cores 0 and 1 as mpirun binds two
# ranks. ucx_perftest (UCX 1.13.1) reports for tag_lat the one-way latency (half the round trip),
# and for tag_bw MB/s with MB = 2^20 bytes; the "Final:" line's columns are
#   Final: iters lat50% lat_avg lat_overall bw_avg bw_overall msgrate_avg msgrate_overall
# We take the overall latency and the overall bandwidth, converted to MB = 1e6 bytes.

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}

# port_listening PORT: whether something listens on TCP PORT (from /proc, no tool needed).
port_listening() {
    local hex
    hex=$(printf ':%04X' "$1")
    awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

PIN_SERVER=()
PIN_CLIENT=()
if (($(nproc) >= 2)); then
    PIN_SERVER=(-c 0)
    PIN_CLIENT=(-c 1)
fi

# ucx_perftest_once RUN TEST ARGS...: one server/client pair; prints the client's "Final:" line.
ucx_perftest_once() {
    local run=$1 test=$2 port srv_pid srv_log cli_log i rc
    shift 2
    port=$(free_port)
    srv_log=$TMP_DIR/ucx_perftest-$test-server-run$run.log
    cli_log=$TMP_DIR/ucx_perftest-$test-run$run.log
    timeout --kill-after=10 "$TIMEOUT" ucx_perftest -p "$port" "${PIN_SERVER[@]}" -t "$test" "$@" \
        >"$srv_log" 2>&1 </dev/null &
    srv_pid=$!
    for ((i = 0; i < 100; i++)); do
        port_listening "$port" && break
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.1
    done
    # UCX_LOG_LEVEL=info makes the client name the transports it chose (ep_cfg line).
    UCX_LOG_LEVEL=info timeout --kill-after=10 "$TIMEOUT" \
        ucx_perftest localhost -p "$port" "${PIN_CLIENT[@]}" -t "$test" "$@" >"$cli_log" 2>&1 </dev/null
    rc=$?
    wait "$srv_pid" 2>/dev/null
    if ((rc != 0)) || ! grep -q '^Final:' "$cli_log"; then
        note "ucx_perftest $test run $run failed (exit $rc); last lines of $cli_log:"
        tail -n 5 "$cli_log" | sed 's/^/    /' >&2
        return 1
    fi
    grep '^Final:' "$cli_log" | tail -n 1
}

run_ucx_perftest() {
    local run=$1 final
    if final=$(ucx_perftest_once "$run" tag_lat -s "$LAT_SIZE" -n "$LAT_ITERS" -w "$LAT_WARMUP"); then
        awk -v size="$LAT_SIZE" '{ printf "RESULT ucx_perftest latency %d %.3f\n", size, $5 }' \
            <<<"$final" >>"$RAW"
    fi
    # Same amount of data as ompi_pingpong: BW_ITERS windows of BW_WINDOW messages, BW_WINDOW in flight.
    if final=$(ucx_perftest_once "$run" tag_bw -s "$BW_SIZE" -n $((BW_ITERS * BW_WINDOW)) \
        -w $((BW_WARMUP * BW_WINDOW)) -O "$BW_WINDOW"); then
        awk -v size="$BW_SIZE" '{ printf "RESULT ucx_perftest bandwidth %d %.1f\n", size, $7 * 1.048576 }' \
            <<<"$final" >>"$RAW"
    fi
    if final=$(ucx_perftest_once "$run" tag_bw -s "$RATE_SIZE" -n $((RATE_ITERS * BW_WINDOW)) \
        -w $((RATE_WARMUP * BW_WINDOW)) -O "$BW_WINDOW"); then
        awk -v size="$RATE_SIZE" '{ printf "RESULT ucx_perftest rate %d %.1f\n", size, $7 * 1.048576 }' \
            <<<"$final" >>"$RAW"
    fi
}

# as_rate: keeps only the bandwidth line of a small-message run, as a `rate` line.
as_rate() {
    sed -n "s/^RESULT \([^ ]*\) bandwidth $RATE_SIZE /RESULT \1 rate $RATE_SIZE /p"
}
# The small-message rate run's arguments (its one-round-trip latency line is dropped).
RATE_ARGS=(-l "$LAT_SIZE" -L 2 -w 1 -b "$RATE_SIZE" -B "$RATE_ITERS" -W "$RATE_WARMUP")

# --- Open MPI ------------------------------------------------------------------------------------
OMPI_ARGS=(-l "$LAT_SIZE" -L "$LAT_ITERS" -w "$LAT_WARMUP" -b "$BW_SIZE" -B "$BW_ITERS" -W "$BW_WARMUP")

run_openmpi() {
    run_logged "$TMP_DIR/openmpi-run$1.log" "${MPIRUN_CMD[@]}" -n 2 \
        --mca pml ob1 --mca btl self,vader "$OMPI_PINGPONG" -n openmpi "${OMPI_ARGS[@]}"
    RESULTS_FILTER=as_rate run_logged "$TMP_DIR/openmpi-rate-run$1.log" "${MPIRUN_CMD[@]}" -n 2 \
        --mca pml ob1 --mca btl self,vader "$OMPI_PINGPONG" -n openmpi "${RATE_ARGS[@]}"
}

run_openmpi_ucx() {
    run_logged "$TMP_DIR/openmpi-ucx-run$1.log" "${MPIRUN_CMD[@]}" -n 2 \
        --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
        "$OMPI_PINGPONG" -n openmpi-ucx "${OMPI_ARGS[@]}"
}

# --- mpicd ---------------------------------------------------------------------------------------
mpicd_failed=0
run_mpicd() {
    run_logged "$TMP_DIR/mpicd-run$1.log" "${MPIRUN_CMD[@]}" -n 2 "$MPICD_PINGPONG" \
        "${MPICD_ARGS[@]}" || mpicd_failed=$((mpicd_failed + 1))
    RESULTS_FILTER=as_rate run_logged "$TMP_DIR/mpicd-rate-run$1.log" "${MPIRUN_CMD[@]}" -n 2 \
        "$MPICD_PINGPONG" "${RATE_ARGS[@]}" || mpicd_failed=$((mpicd_failed + 1))
}

# --- the rounds ----------------------------------------------------------------------------------
have_ucx_perftest=1
command -v ucx_perftest >/dev/null || { have_ucx_perftest=0; note "ucx_perftest not found (apt-get install ucx-utils): row skipped"; }
have_ompi=1
[[ -x $OMPI_PINGPONG ]] || { have_ompi=0; note "$OMPI_PINGPONG not built (make bench-p2p builds it): Open MPI rows skipped"; }
have_mpicd=1
[[ -x $MPICD_PINGPONG ]] || { have_mpicd=0; note "$MPICD_PINGPONG not built yet: mpicd row skipped"; }

transport=${UCX_TLS:+UCX_TLS=$UCX_TLS}
echo "p2p ping-pong: $RUNS rounds of ucx_perftest, Open MPI (ob1, ucx) and mpicd on 2 local ranks (${transport:-shared memory})..."
for ((run = 1; run <= RUNS; run++)); do
    ((have_ucx_perftest)) && run_ucx_perftest "$run"
    ((have_ompi)) && run_openmpi "$run"
    ((have_ompi)) && run_openmpi_ucx "$run"
    ((have_mpicd)) && run_mpicd "$run"
done
echo

python3 bench/p2p_table.py "$RAW" --runs "$RUNS" --csv "$OUT_DIR/p2p.csv" \
    --title "p2p ping-pong, 2 ranks on one node, ${transport:-shared memory}"
table_rc=$?
# The transports UCX chose for ucx_perftest, as its client logged them (ep_cfg line).
UCX_TRANSPORTS=$(cat "$TMP_DIR"/ucx_perftest-tag_lat-run*.log 2>/dev/null |
    sed -n 's/.*ep_cfg\[0\]: tag(\([^)]*\)).*/\1/p' | head -n 1)
[[ -n $UCX_TRANSPORTS ]] && echo "ucx_perftest transports: $UCX_TRANSPORTS (UCX_TLS=${UCX_TLS:-default})"
echo "csv: $OUT_DIR/p2p.csv   raw runs: $RAW"

if ((have_mpicd && mpicd_failed == 2 * RUNS)); then
    echo "p2p: every mpicd run failed" >&2
    exit 1
fi
exit "$table_rc"
