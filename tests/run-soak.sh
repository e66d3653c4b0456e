#!/usr/bin/env bash
# run-soak.sh: the soak test (tests/soak/soak.c: 10^6 messages of random sizes and modes, 10^4
# communicators made and freed, 10^5 requests outstanding, an unexpected-message flood of 10^5;
# every rank's RSS must stay flat after the warm-up) at 2 ranks over shared memory at full
# scale, then 3 ranks over tcp at a fifth of it. About 10 minutes on 2 cores (make test-soak).
#
# Environment: MPIRUN (launcher), SOAK_SCALE (default 1.0: the full counts), SOAK_TIMEOUT
# (seconds per run, default 1800).
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1
need_libmpi run-soak

SCALE=${SOAK_SCALE:-1.0}
TIMEOUT=${SOAK_TIMEOUT:-1800}
BIN=target/soak/soak
mkdir -p target/soak
bin/mpicc -O2 -Wall -Wextra -Werror -o "$BIN" tests/soak/soak.c || exit 1

failed=0
for run in "2:shm:$SCALE" "3:tcp:$(python3 -c "print($SCALE / 5)")"; do
    IFS=: read -r n mode scale <<<"$run"
    env_mode=()
    [[ $mode == tcp ]] && env_mode=(env UCX_TLS=tcp UCX_NET_DEVICES=lo)
    log=target/soak/soak.$mode.n$n.log
    echo "== soak: $n ranks, $mode, scale $scale (log $log)"
    start=$(date +%s)
    timeout "$TIMEOUT" "${env_mode[@]}" "${MPIRUN_CMD[@]}" -n "$n" "$BIN" "$scale" 2>&1 | tee "$log"
    if grep -q "soak: all checks passed" "$log"; then
        echo "ok   soak ($n ranks, $mode) in $(( $(date +%s) - start )) s"
    else
        echo "FAIL soak ($n ranks, $mode) after $(( $(date +%s) - start )) s"
        failed=1
    fi
done
exit $failed
