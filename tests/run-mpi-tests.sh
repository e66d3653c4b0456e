#!/usr/bin/env bash
# run-mpi-tests.sh: runs mpicd's multi-rank integration tests under a real launcher.
#
# The test programs are the examples of the mpicd crate named mpi_* (mpicd/examples/mpi_*.rs),
# built by `make build` into target/release/examples/. Each one checks the data it received and
# exits 0 on success, non-zero (after printing what failed) on failure.
#
# Every program is run with each of its rank counts (default 2 and 4) in two transport modes:
#   shm  UCX's default transports (on one node: shared memory, sysv/posix + cma)
#   tcp  UCX_TLS=tcp UCX_NET_DEVICES=lo: the network path. UCX 1.13.1 (Debian 12) also sends a
#        process's messages to itself over tcp/lo when "self" is left out (checked with
#        `UCX_TLS=tcp ucx_perftest -l`), so plain `tcp` works and keeps every byte on the
#        network transport. The loopback device keeps all traffic on this machine.
#        MPICD_NODE_LOCAL=0 makes the custom datatype send regions as it does between two
#        nodes (zero-copy messages from 256 KiB) instead of coalescing them, and
#        MPICD_COLL_NODE=0 runs the blocking collectives on messages, as between nodes.
#   remote  shm with MPICD_NODE_LOCAL=0: the zero-copy region messages over shared memory.
#        Only for programs that ask for it with modes=.
#
# A program can say which rank counts it needs with one comment line in its source:
#   // mpi-test: ranks=1          singleton only: run WITHOUT mpirun (MPI singleton mode)
#   // mpi-test: ranks=2,4        (the default)
#   // mpi-test: ranks=3 timeout=300
#   // mpi-test: ranks=2,4 modes=shm,tcp,remote   (the modes, instead of MPI_TEST_MODES)
#   // mpi-test: ranks=2 pass=PEER-FAILURE-OK
#                                 success is judged by that line in the output, not by the exit
#                                 code (for tests where a rank dies on purpose, which makes
#                                 mpirun exit non-zero)
#
# Usage: tests/run-mpi-tests.sh [NAME...]      (no names: every mpi_* program found)
# Environment:
#   MPIRUN             launcher command (the Makefile exports it; default: scripts/common.sh)
#   MPI_TEST_BIN_DIR   where the programs are (default target/release/examples)
#   MPI_TEST_SRC_DIR   where their sources are (default mpicd/examples)
#   MPI_TEST_MODES     transport modes to run (default "shm tcp")
#   MPI_TEST_TIMEOUT   seconds per run unless the program says otherwise (default 120)
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1

BIN_DIR=${MPI_TEST_BIN_DIR:-target/release/examples}
SRC_DIR=${MPI_TEST_SRC_DIR:-mpicd/examples}
MODES=${MPI_TEST_MODES:-shm tcp}
DEFAULT_TIMEOUT=${MPI_TEST_TIMEOUT:-120}
LOG_DIR=target/mpi-tests
mkdir -p "$LOG_DIR"

# The program's source file, if there is one.
source_of() {
    local name=$1
    for f in "$SRC_DIR/$name.rs" "$SRC_DIR/$name/main.rs"; do
        [[ -f $f ]] && { echo "$f"; return; }
    done
}

# Value of KEY in the program's "// mpi-test:" line, or DEFAULT.
directive() {
    local name=$1 key=$2 default=$3 src line value
    src=$(source_of "$name")
    if [[ -n $src ]]; then
        line=$(grep -m1 -E '^[[:space:]]*//[/!]*[[:space:]]*mpi-test:' "$src")
        value=$(sed -n -E "s/.*[[:space:]:]${key}=([^[:space:]]+).*/\1/p" <<<"$line")
    fi
    echo "${value:-$default}"
}

# The test programs: executables named mpi_*, without cargo's hashed copies and .d files.
programs=()
if (($# > 0)); then
    programs=("$@")
else
    for path in "$BIN_DIR"/mpi_*; do
        name=$(basename "$path")
        [[ -f $path && -x $path ]] || continue
        [[ $name == *.d || $name =~ -[0-9a-f]{16}$ ]] && continue
        programs+=("$name")
    done
fi
if ((${#programs[@]} == 0)); then
    echo "mpi-tests: no test programs $BIN_DIR/mpi_* found (run \`make build\` first)" >&2
    exit 1
fi

passed=0
failed=0
failures=()

# run_one NAME RANKS MODE: runs one program once and reports it.
run_one() {
    local name=$1 ranks=$2 mode=$3 timeout_s log start end secs rc
    timeout_s=$(directive "$name" timeout "$DEFAULT_TIMEOUT")
    log="$LOG_DIR/$name-n$ranks-$mode.log"

    local -a envs=(env -u UCX_TLS -u UCX_NET_DEVICES -u MPICD_NODE_LOCAL)
    local -a export_flags=()
    if [[ $mode == tcp ]]; then
        envs+=(UCX_TLS=tcp UCX_NET_DEVICES=lo MPICD_NODE_LOCAL=0 MPICD_COLL_NODE=0)
        export_flags=(-x UCX_TLS -x UCX_NET_DEVICES -x MPICD_NODE_LOCAL)
    elif [[ $mode == remote ]]; then
        envs+=(MPICD_NODE_LOCAL=0)
        export_flags=(-x MPICD_NODE_LOCAL)
    fi

    local -a cmd
    if [[ $ranks == 1 ]]; then
        cmd=("${envs[@]}" "$BIN_DIR/$name")           # singleton: no launcher
    else
        cmd=("${envs[@]}" "${MPIRUN_CMD[@]}" -n "$ranks" "${export_flags[@]}" "$BIN_DIR/$name")
    fi

    start=$(date +%s.%N)
    # timeout runs the command in its own process group and signals the whole group, so ranks
    # that outlive a killed mpirun are ended too.
    timeout --kill-after=10 "$timeout_s" "${cmd[@]}" >"$log" 2>&1 </dev/null
    rc=$?
    end=$(date +%s.%N)
    local pass_marker
    pass_marker=$(directive "$name" pass "")
    if [[ -n $pass_marker ]] && ((rc != 124 && rc != 137)); then
        if grep -qF -- "$pass_marker" "$log"; then rc=0; else rc=1; fi
    fi
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

    if ((rc == 0)); then
        passed=$((passed + 1))
        printf '[ok]   %s n=%s %s (%ss)\n' "$name" "$ranks" "$mode" "$secs"
    else
        failed=$((failed + 1))
        local why="exit $rc"
        ((rc == 124 || rc == 137)) && why="timed out after ${timeout_s}s"
        failures+=("$name n=$ranks $mode ($why)")
        printf '[FAIL] %s n=%s %s (%ss, %s): %s\n' "$name" "$ranks" "$mode" "$secs" "$why" \
            "${cmd[*]}"
        # With several ranks the failing rank's message may be far from the end: show it first.
        if grep -q -i -E 'panick|fail|error|mismatch|assert' "$log"; then
            echo "------ lines naming a failure in $log (first 10) ------"
            grep -i -E 'panick|fail|error|mismatch|assert' "$log" | head -n 10
        fi
        echo "------ last 30 lines of $log ------"
        tail -n 30 "$log"
        echo "------"
    fi
}

# The shared-memory segments of node collectives and shared windows (/dev/shm/mpicd-KIND-PID-N)
# that exist now: every one a run makes must be gone by its end (its maker removes the name once
# the members mapped it).
areas_before=$(ls /dev/shm 2>/dev/null | grep -E '^mpicd-(coll|win)-' | sort)

for name in "${programs[@]}"; do
    if [[ ! -x $BIN_DIR/$name ]]; then
        failed=$((failed + 1))
        failures+=("$name (no executable $BIN_DIR/$name)")
        echo "[FAIL] $name: no executable $BIN_DIR/$name"
        continue
    fi
    ranks_list=$(directive "$name" ranks "2,4")
    for ranks in ${ranks_list//,/ }; do
        if ! [[ $ranks =~ ^[1-9][0-9]*$ ]]; then
            failed=$((failed + 1))
            failures+=("$name (bad mpi-test ranks '$ranks_list')")
            echo "[FAIL] $name: bad '// mpi-test: ranks=$ranks_list' in $(source_of "$name")"
            continue
        fi
        modes=$(directive "$name" modes "$MODES")
        for mode in ${modes//,/ }; do
            run_one "$name" "$ranks" "$mode"
        done
    done
done

# A segment name whose maker has exited was left behind (a leak in /dev/shm).
left=()
while read -r area; do
    [[ -z $area ]] && continue
    pid=${area#mpicd-*-}
    pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || left+=("$area")
done < <(comm -13 <(echo "$areas_before") <(ls /dev/shm 2>/dev/null | grep -E '^mpicd-(coll|win)-' | sort))
if ((${#left[@]} > 0)); then
    failed=$((failed + 1))
    failures+=("${#left[@]} shared-memory names left in /dev/shm by exited runs: ${left[*]:0:5}")
    echo "[FAIL] ${#left[@]} shared-memory names left in /dev/shm by exited runs"
fi

echo
if ((failed > 0)); then
    echo "failed runs:"
    printf '  %s\n' "${failures[@]}"
    echo "logs: $LOG_DIR/"
fi
echo "mpi-tests: $passed passed, $failed failed"
((failed == 0))
