#!/usr/bin/env bash
# run-tests.sh: installs the Python package (pip install ./python) with what its tests need
# (pytest, numpy), then runs the pytest suite under the launcher with 2 and 4 ranks over UCX's
# default transports (shared memory), with 2 and 3 ranks over UCX_TLS=tcp (an odd count: one
# rank has no partner in the pair tests), and with 2 ranks over shared memory with the package's
# C extension turned off (MPICD_PY_FAST=0: the ctypes path the package falls back to when the
# extension is not built). The install must build the extension (tests/test_fast.py checks that
# the other runs take it).
#
# Usage: python/run-tests.sh [PYTEST ARGS...]
# Environment:
#   MPIRUN            launcher (default: Open MPI's mpirun, allowed as root, oversubscribed)
#   PYTHON            interpreter (default: python3)
#   PY_TEST_RUNS      runs as "ranks:mode" words, mode shm, tcp or ctypes (shm without the C
#                     extension) (default "2:shm 4:shm 2:tcp 3:tcp 2:ctypes")
#   PY_TEST_TIMEOUT   seconds per run (default 600)
#   PY_TEST_NO_INSTALL=1  skip the pip installs (use what is installed)
# Needs target/release/libmpi.so (cargo build --release --workspace); the package finds it in
# the checkout it was installed from, or through MPICD_LIBMPI.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../scripts/common.sh"
RUNS=${PY_TEST_RUNS:-2:shm 4:shm 2:tcp 3:tcp 2:ctypes}
TIMEOUT=${PY_TEST_TIMEOUT:-600}

[[ -n "${MPICD_LIBMPI:-}" ]] || need_libmpi python/run-tests

if [[ "${PY_TEST_NO_INSTALL:-0}" != 1 ]]; then
    "$PYTHON" -m pip install --quiet --disable-pip-version-check pytest numpy || exit 1
    install_python_package || exit 1
fi

# Run from outside the source tree so that the installed package is the one tested.
cd "$ROOT/target" 2>/dev/null || cd /tmp
failed=0
for run in $RUNS; do
    n=${run%%:*}
    mode=${run#*:}
    env_mode=(env PY_TEST_FAST_EXPECTED=1)
    case $mode in
        tcp) env_mode+=(UCX_TLS=tcp UCX_NET_DEVICES=lo MPICD_NODE_LOCAL=0) ;;
        ctypes) env_mode=(env MPICD_PY_FAST=0) ;;
    esac
    start=$(date +%s)
    echo "== python tests: $n ranks, $mode"
    if timeout "$TIMEOUT" "${env_mode[@]}" "${MPIRUN_CMD[@]}" -n "$n" \
        "$PYTHON" -m pytest -q -x --color=no -p no:cacheprovider "$HERE/tests" "$@"; then
        echo "ok   python tests ($n ranks, $mode) in $(( $(date +%s) - start )) s"
    else
        echo "FAIL python tests ($n ranks, $mode) after $(( $(date +%s) - start )) s"
        failed=$((failed + 1))
    fi
done
exit $(( failed > 0 ))
