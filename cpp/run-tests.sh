#!/usr/bin/env bash
# cpp/run-tests.sh: configures the C++ tests with CMake (FindMPI over mpicd's bin/mpicc and
# bin/mpicxx), builds them and runs them with ctest: each test under the launcher with 2 and 4
# ranks over shared memory, and with 2 ranks over UCX_TLS=tcp.
#
# Environment:
#   MPIRUN            launcher (default: Open MPI's mpirun, allowed to run as root,
#                     oversubscribed); the Makefile exports it
#   CPP_TEST_RANKS    rank counts (default "2 4")
#   CPP_TEST_BUILD    build directory (default target/cpp)
#   CPP_TEST_TIMEOUT  seconds per test run (default 120; 600 under valgrind)
#   MPICD_CPP_TESTS_VALGRIND=1
#                     every rank runs under valgrind's memcheck (errors fail the test; the
#                     suppressions of tests/c/valgrind.supp)
# Needs `cargo build --release -p mpicd-capi` first (the Makefile's build does it).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT"
BUILD=${CPP_TEST_BUILD:-$ROOT/target/cpp}
RANKS=${CPP_TEST_RANKS:-2 4}
TIMEOUT=${CPP_TEST_TIMEOUT:-120}
WRAPPER=""
if [[ "${MPICD_CPP_TESTS_VALGRIND:-0}" == 1 ]]; then
    WRAPPER="valgrind;-q;--error-exitcode=99;--leak-check=no;--num-callers=30;--suppressions=$ROOT/tests/c/valgrind.supp"
    TIMEOUT=${CPP_TEST_TIMEOUT:-600}
fi

need_libmpi cpp/run-tests
command -v cmake >/dev/null || { echo "cpp/run-tests: cmake not found (apt-get install cmake)" >&2; exit 1; }

# CMake lists are ;-separated.
launcher=$(tr -s ' ' ';' <<<"$MPIRUN")
ranks=$(tr -s ' ' ';' <<<"$RANKS")
mkdir -p "$BUILD"
log="$BUILD/configure-build.log"
if ! { cmake -S cpp -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DMPICD_TEST_LAUNCHER=$launcher" "-DMPICD_TEST_RANKS=$ranks" \
        "-DMPICD_TEST_TIMEOUT=$TIMEOUT" "-DMPICD_TEST_WRAPPER=$WRAPPER" &&
    cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 2)"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "cpp/run-tests: configure or build failed (log: $log)" >&2
    exit 1
fi
grep -a "mpicd: " "$log" | sed 's/^-- /cpp: /' || true
cd "$BUILD"
ctest --output-on-failure
