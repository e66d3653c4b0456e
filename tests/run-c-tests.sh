#!/usr/bin/env bash
# run-c-tests.sh: builds the C tests (tests/c/*.c) with our bin/mpicc against
# target/release/libmpi.so and runs each under the launcher with 1 (singleton, no launcher),
# 2, 3 and 4 ranks, over UCX's default transports (shm) and over UCX_TLS=tcp. Each test checks
# the data it received and prints "<name>: all checks passed" from rank 0 on success.
#
# Usage: tests/run-c-tests.sh [NAME...]      (no names: every tests/c/*.c)
# Environment:
#   MPIRUN           launcher (default: Open MPI's mpirun, allowed to run as root, oversubscribed)
#   C_TEST_RANKS     rank counts (default "1 2 3 4"; 1 runs the program alone as a singleton)
#   C_TEST_MODES     transport modes (default "shm tcp")
#   C_TEST_TIMEOUT   seconds per run (default 120)
#   C_TEST_CFLAGS    compiler flags (default "-O1 -g -Wall -Wextra -Werror")
#   MPICD_C_TESTS_VALGRIND
#                    1: every rank (and the singleton) runs under valgrind's memcheck: any
#                    memory error fails the run (exit code 99), leaks are not checked;
#                    "leaks": definite leaks fail it too. Suppressions: tests/c/valgrind.supp.
#                    Default timeout 600 s. Outputs in target/c-tests-valgrind.
#   MPICD_C_TESTS_ASAN
#                    1: the tests are built with AddressSanitizer and UBSan (the C code only;
#                    valgrind also checks libmpi); PMIx's leaks are suppressed
#                    (tests/c/lsan.supp). Outputs in target/c-tests-asan.
# Needs `cargo build --release -p mpicd-capi` first (the Makefile's build does it).
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1

RANKS=${C_TEST_RANKS:-1 2 3 4}
MODES=${C_TEST_MODES:-shm tcp}
TIMEOUT=${C_TEST_TIMEOUT:-120}
read -r -a CFLAGS <<<"${C_TEST_CFLAGS:--O1 -g -Wall -Wextra -Werror}"
OUT=target/c-tests
TOOL=()  # what each rank runs under
LABEL=""
case "${MPICD_C_TESTS_VALGRIND:-0}" in
    0 | "") ;;
    1 | leaks)
        if ! command -v valgrind >/dev/null; then
            echo "run-c-tests: valgrind not found (apt-get install valgrind)" >&2
            exit 1
        fi
        TOOL=(valgrind -q --error-exitcode=99 --num-callers=30 "--suppressions=$ROOT/tests/c/valgrind.supp")
        if [[ $MPICD_C_TESTS_VALGRIND == leaks ]]; then
            TOOL+=(--leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite)
        else
            TOOL+=(--leak-check=no)
        fi
        TIMEOUT=${C_TEST_TIMEOUT:-600}
        OUT=target/c-tests-valgrind
        LABEL=", valgrind"
        ;;
    *)
        echo "run-c-tests: MPICD_C_TESTS_VALGRIND is 1 or leaks, not '$MPICD_C_TESTS_VALGRIND'" >&2
        exit 2
        ;;
esac
if [[ "${MPICD_C_TESTS_ASAN:-0}" == 1 ]]; then
    CFLAGS+=("-fsanitize=address,undefined" -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/c/lsan.supp:print_suppressions=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
    OUT=target/c-tests-asan
    LABEL="$LABEL, asan"
fi
mkdir -p "$OUT"

need_libmpi run-c-tests

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
    for f in tests/c/*.c; do names+=("$(basename "$f" .c)"); done
fi

passed=0
failed=0
for name in "${names[@]}"; do
    if [[ $name == no_alloc && -n $LABEL ]]; then
        # It counts allocations by defining malloc, which valgrind and ASan replace themselves.
        echo "skip $name (${LABEL#, }: the tool replaces malloc, which the test counts)"
        continue
    fi
    if ! bin/mpicc "${CFLAGS[@]}" -o "$OUT/$name" "tests/c/$name.c"; then
        echo "FAIL $name: does not compile"
        failed=$((failed + 1))
        continue
    fi
    for mode in $MODES; do
        env_mode=()
        [[ $mode == tcp ]] && env_mode=(env UCX_TLS=tcp UCX_NET_DEVICES=lo MPICD_NODE_LOCAL=0 MPICD_COLL_NODE=0)
        for n in $RANKS; do
            log="$OUT/$name.$mode.n$n.log"
            if [[ $n == 1 ]]; then
                cmd=("${env_mode[@]}" "${TOOL[@]}" "$OUT/$name")
            else
                cmd=("${env_mode[@]}" "${MPIRUN_CMD[@]}" -n "$n" "${TOOL[@]}" "$OUT/$name")
            fi
            if timeout "$TIMEOUT" "${cmd[@]}" >"$log" 2>&1 && grep -aq "$name: all checks passed" "$log"; then
                echo "ok   $name ($mode, $n ranks$LABEL)"
                passed=$((passed + 1))
            else
                echo "FAIL $name ($mode, $n ranks$LABEL): see $log"
                grep -av "UCX  WARN" "$log" | tail -n 5 | sed 's/^/     /'
                failed=$((failed + 1))
            fi
        done
    done
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
