#!/usr/bin/env bash
# run-mpi4py.sh: the real mpi4py on mpicd. Downloads the pinned mpi4py sdist from PyPI (checked
# against its sha256), builds it with our bin/mpicc into a venv (target/mpi4py/venv; rebuilt when
# include/mpi.h changes, since mpi4py's build probes which MPI functions exist), and runs mpi4py's
# own test suite (test/main.py) under the launcher at 1, 2 and 3 ranks over shared memory and tcp.
# One line per run; a run passes when the suite reports no failure and no error.
#
# Not run: what mpicd does not implement yet, each named in the README ("The real mpi4py"):
# one-sided (test_rma*, test_win, and test_util_sync: mpi4py.util.sync is built on windows), I/O
# (test_io, test_file), dynamic processes (spawn: MPI4PY_TEST_SPAWN=0, test_dynproc), the
# non-blocking ULFM calls (testIShrink, testIAgree: MPIX_Comm_ishrink/_iagree), and
# test_mpiapi's testSymbolCoverage, which asks that the build found every function of MPI
# (one-sided, I/O and spawn included).
#
# Usage: tests/run-mpi4py.sh [MAIN.PY ARGS...]      (e.g. -i test_p2p -v)
# Environment:
#   MPIRUN               launcher (default: Open MPI's mpirun, allowed as root, oversubscribed)
#   MPI4PY_RUNS          runs as "ranks:mode" words (default "1:shm 2:shm 3:shm 1:tcp 2:tcp 3:tcp")
#   MPI4PY_TIMEOUT       seconds per run (default 900)
#   MPI4PY_DIR           where the venv, sdist and logs go (default target/mpi4py)
#   MPI4PY_MPICC         the compiler wrapper to build with (default bin/mpicc; e.g. mpicc.openmpi
#                        with another MPI4PY_DIR runs the same suite on Open MPI, for comparison)
# Needs target/release/libmpi.so and bin/mpicc (make build).
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
need_libmpi tests/run-mpi4py

VERSION=4.1.2
SDIST_URL=https://files.pythonhosted.org/packages/75/83/231445bbcf7ef10864746c244ff2d82000011449b79275642c5d4ed8c8f4/mpi4py-$VERSION.tar.gz
SDIST_SHA256=56860286dc45f20e8821e93cb06669e30462348bf866f685553fa4b712d58d02
RUNS=${MPI4PY_RUNS:-1:shm 2:shm 3:shm 1:tcp 2:tcp 3:tcp}
TIMEOUT=${MPI4PY_TIMEOUT:-900}
DIR=${MPI4PY_DIR:-$ROOT/target/mpi4py}
MPICC_USED=${MPI4PY_MPICC:-$ROOT/bin/mpicc}
SRC=$DIR/mpi4py-$VERSION
VENV=$DIR/venv
EXCLUDE=(-e test_rma -e test_win -e test_util_sync -e test_io -e test_file -e test_dynproc -e test_spawn
    -x testIShrink -x testIAgree -x testSymbolCoverage)

mkdir -p "$DIR" || exit 1
sdist=$DIR/mpi4py-$VERSION.tar.gz
if ! echo "$SDIST_SHA256  $sdist" | sha256sum --check --status 2>/dev/null; then
    echo "== mpi4py: downloading mpi4py $VERSION from PyPI"
    curl -sSfL -o "$sdist.part" "$SDIST_URL" || exit 1
    echo "$SDIST_SHA256  $sdist.part" | sha256sum --check --status || {
        echo "run-mpi4py: checksum mismatch for $SDIST_URL" >&2
        exit 1
    }
    mv "$sdist.part" "$sdist"
    rm -rf "$SRC"
fi
[[ -d $SRC ]] || tar -xzf "$sdist" -C "$DIR" || exit 1

# Build (about 4 minutes on 2 cores) when the header changed since the last build.
stamp=$DIR/built-against
want=$(sha256sum "$ROOT/include/mpi.h" | cut -d' ' -f1)-$MPICC_USED
if [[ ! -x $VENV/bin/python || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    echo "== mpi4py: building mpi4py $VERSION with $MPICC_USED (log: $DIR/build.log)"
    # A fresh source tree: mpi4py caches its configure results in its build directory.
    rm -rf "$VENV" "$SRC"
    tar -xzf "$sdist" -C "$DIR" || exit 1
    "$PYTHON" -m venv "$VENV" || exit 1
    if ! { "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        "setuptools>=61" wheel "cython>=3" &&
        env MPICC="$MPICC_USED" "$VENV/bin/python" -m pip install --no-build-isolation \
            --disable-pip-version-check --no-deps --no-cache-dir "$SRC"; } >"$DIR/build.log" 2>&1; then
        tail -20 "$DIR/build.log"
        echo "run-mpi4py: mpi4py failed to build (log: $DIR/build.log)" >&2
        exit 1
    fi
    echo "$want" >"$stamp"
fi

# What mpi4py's tests use when present (NumPy buffers, cffi and dill interop, YAML).
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check numpy cffi dill pyyaml \
    >>"$DIR/build.log" 2>&1 || echo "run-mpi4py: numpy/cffi/dill/pyyaml not installed: their tests skip" >&2

cd "$DIR" || exit 1
failed=0
for run in $RUNS; do
    n=${run%%:*}
    mode=${run#*:}
    env_mode=()
    [[ $mode == tcp ]] && env_mode=(env UCX_TLS=tcp UCX_NET_DEVICES=lo MPICD_NODE_LOCAL=0)
    log=$DIR/test-$n-$mode.log
    start=$(date +%s)
    timeout "$TIMEOUT" "${env_mode[@]}" "${MPIRUN_CMD[@]}" -n "$n" \
        env MPI4PY_TEST_SPAWN=0 "$VENV/bin/python" "$SRC/test/main.py" --no-builddir \
        "${EXCLUDE[@]}" "$@" >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    # Every rank prints unittest's summary; the worst line is the run's result.
    ran=$(grep -o "^Ran [0-9]* tests" "$log" | head -1)
    result=$(grep -E "^(OK|FAILED)" "$log" | sort | tail -1)
    if [[ $rc -eq 0 && $result == OK* ]]; then
        echo "ok   mpi4py $VERSION ($n ranks, $mode): ${ran:-?}, $result (${secs}s)"
    else
        echo "FAIL mpi4py $VERSION ($n ranks, $mode): ${ran:-?}, ${result:-no summary} (exit $rc, ${secs}s; log: $log)"
        failed=1
    fi
done
exit $failed
