#!/usr/bin/env bash
# run-all.sh: every benchmark of mpicd's evaluation (the paper's section V) on 2 local ranks, in
# one command, with CSV files, PNG plots and a Markdown summary of the ratios against the targets
# in bench/results/.
#
#   bash bench/run-all.sh            the full run (make bench); 8.5 minutes on a quiet 2-core machine, more when busy
#   bash bench/run-all.sh --smoke    tiny sizes, one iteration, correctness only (make test)
#
# What runs, in order (a progress line each):
#   1. build: the bench crate and libmpi (cargo), the rsmpi peer (bench/rsmpi, its own workspace:
#      it links Open MPI), DDTBench twice (Open MPI's mpicc; mpicd's bin/mpicc -DMPICD_CUSTOM);
#   2. the Rust datatype benchmarks (target/release/datatypes): double-vec, struct-vec,
#      struct-simple, struct-simple-no-gap; latency and bandwidth of custom, packed, serde,
#      (serde-region,) bytes on mpicd, then the same with rsmpi on Open MPI (derived datatypes,
#      raw bytes); the custom path's peak memory (VmHWM) against CustomConfig::memory_bound();
#   3. DDTBench (bench/ddtbench): every kernel and configuration, Open MPI (reference, manual,
#      mpi_ddt, mpi_pack_ddt) then mpicd (mpicd_reference, mpicd_manual, mpicd_ddt, mpicd_pack_ddt,
#      custom, custom_regions; the *_ddt methods build the same derived datatypes on both);
#   4. criterion (bench/benches/engine.rs): the engine's CPU costs in a singleton, no network;
#   5. collectives (full run only, not --smoke): bench/coll/run.py, mpicd's Allreduce, Bcast,
#      Allgather, Alltoall (and Reduce_scatter_block once libmpi has it) against Open MPI's at 2, 3
#      and 4 ranks, interleaved rounds: collectives.csv, collectives.md, plots/collectives-*.png
#      (make bench-coll runs it alone); then bench/coll/gather_shapes.sh, the custom-typed gather
#      of differently shaped objects against Probe + Recv (gather-shapes.csv, .md);
#   5b. (full run only) the p2p comparison with ucx_perftest and Open MPI (bench/pingpong-compare.sh:
#      p2p.csv) and progress fairness at 2-4 ranks (bench/fairness/run.py: fairness.csv, .md);
#   5c. (full run only) one-sided latency and bandwidth (bench/rma/run.sh: rma.md, rma.csv);
#   6. bench/report.py: CSVs, plots (matplotlib, installed with pip when missing) and summary.md
#      (with the collectives' geomeans when collectives.md is there);
#   7. (full run only) bench/scoreboard.py: every per-message target of issue 20, the collectives'
#      benchmark targets of issue 16 and the one-sided targets of issue 18 with their ratios, met
#      or missed: scoreboard.md (the Python row comes
#      from make bench-python's last run).
# Every benchmark checks the data it received; a failed check fails the run.
#
# Environment: MPIRUN (the Makefile exports it), PEER_MPICC (default mpicc: Open MPI's; not
# OMPI_MPICC, which Open MPI's own wrapper reads as the compiler to run, i.e. itself),
# BENCH_TARGET (seconds per timed repetition of the Rust benchmarks, default 0.05),
# BENCH_TIMEOUT (seconds per benchmark, default 900; 300 for --smoke), CARGO.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1

SMOKE=0
for a in "$@"; do
    case "$a" in
        --smoke) SMOKE=1 ;;
        -h | --help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "run-all.sh: unknown argument $a" >&2; exit 2 ;;
    esac
done

if [[ -d "$HOME/.cargo/bin" ]]; then PATH="$HOME/.cargo/bin:$PATH"; fi
CARGO=${CARGO:-cargo}
PEER_MPICC=${PEER_MPICC:-mpicc}
if ((SMOKE)); then
    TIMEOUT=${BENCH_TIMEOUT:-300}
    OUT=bench/results/tmp/smoke/report
else
    TIMEOUT=${BENCH_TIMEOUT:-900}
    OUT=bench/results
fi
LOGS=bench/results/tmp/$( ((SMOKE)) && echo smoke || echo full)
RAW=$LOGS/raw
mkdir -p "$OUT" "$LOGS" "$RAW"
rm -f "$RAW"/*.txt

START=$(date +%s)
FAILED=()
STEP=0

if ((SMOKE)); then
    RUST_ARGS=(--smoke)
    DDT_ARGS=(--smoke)
else
    RUST_ARGS=()
    DDT_ARGS=()
fi

KINDS=(double-vec struct-vec struct-simple struct-simple-no-gap)
TOTAL=$((1 + ${#KINDS[@]} * 5 + 2 + 1 + 1 + (SMOKE ? 0 : 5)))

elapsed() { echo $(($(date +%s) - $1)); }

# step NAME LOG CMD...: runs CMD with a time limit, a progress line, its output in LOG and its
# RESULT lines in $RAW/NAME.txt. A failure is recorded and the run goes on.
step() {
    local name=$1 log=$2 t0 rc
    shift 2
    STEP=$((STEP + 1))
    t0=$(date +%s)
    printf '[%2d/%d] %-44s ' "$STEP" "$TOTAL" "$name" >&2
    timeout --kill-after=10 "${STEP_TIMEOUT:-$TIMEOUT}" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    grep '^RESULT ' "$log" >"$RAW/$name.txt" 2>/dev/null
    if ((rc != 0)); then
        printf 'FAILED (exit %d, %ss); last lines of %s:\n' "$rc" "$(elapsed "$t0")" "$log" >&2
        tail -n 8 "$log" | sed 's/^/        /' >&2
        FAILED+=("$name")
        return 1
    fi
    printf 'ok (%ss, %d results)\n' "$(elapsed "$t0")" "$(wc -l <"$RAW/$name.txt")" >&2
    machine "$name"
}

# machine NAME: appends the cross-core cache-line time right after step NAME to machine.csv
# (bench/placement/c2c.c: about 40 ns normally, 170+ when the host runs this VM's two vCPUs
# far apart, which makes every lock-step two-rank figure 2-4x slower; the scoreboard says which
# steps ran so; bench/placement.sh tells more).
machine() {
    [[ -x $CROSSCORE ]] || return 0
    local ns
    ns=$("$CROSSCORE" 2>/dev/null) && [[ -n $ns ]] && echo "$(date +%FT%T),$1,$ns" >>"$OUT/machine.csv"
}
CROSSCORE=target/placement/c2c
mkdir -p target/placement
# (two cores at least: on one, its two spinning processes would take turns by the time slice)
(($(nproc) >= 2)) && cc -O2 -o "$CROSSCORE" bench/placement/c2c.c 2>/dev/null || CROSSCORE=
echo "time,after,crosscore_ns" >"$OUT/machine.csv"
machine start

load=$(cut -d' ' -f1 /proc/loadavg)
echo "run-all: $( ((SMOKE)) && echo smoke || echo full) run on $(nproc) cores, load average $load, logs in $LOGS" >&2
if awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > n + 0.5) }'; then
    echo "run-all: warning: the machine is busy (load $load on $(nproc) cores): two spinning ranks" \
        "will be preempted and absolute numbers will suffer; compare ratios" >&2
fi

# ----- 1. build -----------------------------------------------------------------------------------
# Everything the run executes is copied to $BIN once built, so that a rebuild of the work tree
# during the run (cargo build --workspace by someone else) cannot mix two engines in one run.
BIN=$LOGS/bin
build() {
    set -e
    "$CARGO" build --release -p mpicd-bench -p mpicd-capi
    "$CARGO" build --release --manifest-path bench/rsmpi/Cargo.toml --target-dir target/rsmpi
    engine=$("$CARGO" bench -p mpicd-bench --bench engine --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "engine":
        print(m["executable"])')
    mkdir -p target/bench
    "$PEER_MPICC" -O2 -Wall -Wextra -o target/bench/ddtbench-ompi bench/ddtbench/*.c
    bin/mpicc -O2 -Wall -Wextra -DMPICD_CUSTOM -o target/bench/ddtbench-mpicd bench/ddtbench/*.c
    rm -rf "$BIN"
    mkdir -p "$BIN"
    cp target/release/datatypes target/rsmpi/release/rsmpi-datatypes target/bench/ddtbench-ompi \
        target/bench/ddtbench-mpicd "$BIN"/
    cp -L target/release/libmpi.so* "$BIN"/
    cp "$engine" "$BIN/engine-bench"
}
# The build may compile everything from scratch, or wait for another cargo's lock: its own limit.
if ! STEP_TIMEOUT=3600 step build "$LOGS/build.log" bash -c "$(declare -f build); CARGO='$CARGO' PEER_MPICC='$PEER_MPICC' BIN='$BIN' build"; then
    echo "run-all: the build failed; nothing to run" >&2
    exit 1
fi
# libmpi is found through the copy (ddtbench-mpicd's RUNPATH names target/release).
export LD_LIBRARY_PATH="$ROOT/$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Which engine this run measures: the commit, and a hash of uncommitted changes if any.
ENGINE="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git status --porcelain -- mpicd mpicd-capi 2>/dev/null)" ]]; then
    ENGINE="$ENGINE + uncommitted changes in mpicd/mpicd-capi (diff $(git diff HEAD -- mpicd mpicd-capi | sha1sum | cut -c1-10))"
fi
echo "run-all: engine $ENGINE" >&2

DATATYPES=$BIN/datatypes
RSMPI=$BIN/rsmpi-datatypes

# ----- 2. Rust datatype benchmarks ----------------------------------------------------------------
for kind in "${KINDS[@]}"; do
    for test in latency bandwidth; do
        step "rust-$kind-$test" "$LOGS/rust-$kind-$test.log" \
            "${MPIRUN_CMD[@]}" -n 2 "$DATATYPES" -k "$kind" -t "$test" "${RUST_ARGS[@]}"
        step "rsmpi-$kind-$test" "$LOGS/rsmpi-$kind-$test.log" \
            "${MPIRUN_CMD[@]}" -n 2 "$RSMPI" -k "$kind" -t "$test" "${RUST_ARGS[@]}"
    done
    # (MALLOC_MMAP_THRESHOLD_: see `memory` in src/bin/datatypes.rs)
    step "memory-$kind" "$LOGS/memory-$kind.log" env MALLOC_MMAP_THRESHOLD_=65536 \
        "${MPIRUN_CMD[@]}" -n 2 "$DATATYPES" -k "$kind" -t memory "${RUST_ARGS[@]}"
done

# ----- 3. DDTBench -------------------------------------------------------------------------------
step ddtbench-openmpi "$LOGS/ddtbench-openmpi.log" \
    "${MPIRUN_CMD[@]}" -n 2 "$BIN/ddtbench-ompi" "${DDT_ARGS[@]}"
step ddtbench-mpicd "$LOGS/ddtbench-mpicd.log" \
    "${MPIRUN_CMD[@]}" -n 2 "$BIN/ddtbench-mpicd" "${DDT_ARGS[@]}"

# ----- 4. criterion ------------------------------------------------------------------------------
# (the bench binary run directly, as `cargo bench` would, with its output in $LOGS/criterion)
export CRITERION_HOME="$ROOT/$LOGS/criterion"
rm -rf "$CRITERION_HOME"
if ((SMOKE)); then
    step criterion "$LOGS/criterion.log" "$BIN/engine-bench" --bench --test
else
    step criterion "$LOGS/criterion.log" "$BIN/engine-bench" --bench \
        --warm-up-time 1 --measurement-time 2 --noplot
fi

# ----- 5. collectives ----------------------------------------------------------------------------
# Not in --smoke (make test): it needs minutes and 4 ranks. It builds its own two binaries and
# copies libmpi; each of its runs has its own time limit (300 s), so the step gets an hour. Its
# progress lines and summary are in $LOGS/collectives.log.
if ((!SMOKE)); then
    STEP_TIMEOUT=3600 step collectives "$LOGS/collectives.log" python3 bench/coll/run.py --out "$OUT"
    sed -n '/^collectives: geomean/,$p' "$LOGS/collectives.log" >&2
    # The custom-typed gather of differently shaped objects against Probe + Recv (about 30 s:
    # gather-shapes.csv, read by the scoreboard).
    step gather-shapes "$LOGS/gather-shapes.log" bash bench/coll/gather_shapes.sh
fi

# ----- 5b. point-to-point and progress fairness against Open MPI ---------------------------------
# Not in --smoke: the 8 B latency and 4 MiB bandwidth beside ucx_perftest and Open MPI
# (bench/pingpong-compare.sh, about 1 minute: p2p.csv) and the randomized message rate and
# blocked-rank CPU at 2-4 ranks (bench/fairness/run.py, about 3 minutes: fairness.csv), both
# read by the scoreboard at the end.
if ((!SMOKE)); then
    step p2p "$LOGS/p2p.log" bash bench/pingpong-compare.sh
    STEP_TIMEOUT=3600 step fairness "$LOGS/fairness.log" python3 bench/fairness/run.py --out "$OUT"
fi

# ----- 5c. one-sided communication (issue 18) ------------------------------------------------------
# Not in --smoke: put, get, accumulate, fetch-and-op, compare-and-swap latency and put/get
# bandwidth 8 B-4 MiB against Open MPI (osc sm,ucx) and ucx_perftest (bench/rma/run.sh, about 2
# minutes: rma.md, rma.csv, read by the scoreboard).
if ((!SMOKE)); then
    step rma "$LOGS/rma.log" bash bench/rma/run.sh
fi

# ----- 6. report ---------------------------------------------------------------------------------
report_args=(--raw "$RAW" --out "$OUT" --criterion "$CRITERION_HOME" --engine "$ENGINE"
    --load-start "$load" --load-end "$(cut -d' ' -f1 /proc/loadavg)")
if ((SMOKE)); then
    report_args=(--raw "$RAW" --out "$OUT" --criterion none --no-plots --smoke --engine "$ENGINE")
elif ! python3 -c 'import matplotlib' 2>/dev/null; then
    echo "run-all: installing matplotlib with pip" >&2
    # (a Debian system python refuses a plain pip install: PEP 668; --user then)
    python3 -m pip install --quiet matplotlib >&2 ||
        python3 -m pip install --quiet --user --break-system-packages matplotlib >&2 ||
        echo "run-all: pip failed; no plots (apt-get install python3-matplotlib works too)" >&2
fi
step report "$LOGS/report.log" python3 bench/report.py "${report_args[@]}"
cat "$LOGS/report.log" >&2

# ----- 7. scoreboard: every per-message target (issue 20) with its ratio from this run ----------
if ((!SMOKE)); then
    # (the README's copy of the table only from a run into the committed results)
    readme=()
    [[ "$(cd "$OUT" && pwd)" == "$ROOT/bench/results" ]] && readme=(--readme README.md)
    python3 bench/scoreboard.py --results "$OUT" "${readme[@]}" >&2 || FAILED+=(scoreboard)
fi

echo "run-all: $( ((SMOKE)) && echo smoke || echo full) run done in $(elapsed "$START") s; results in $OUT" >&2
if ((${#FAILED[@]})); then
    echo "run-all: FAILED: ${FAILED[*]}" >&2
    exit 1
fi
