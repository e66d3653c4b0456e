#!/usr/bin/env bash
# run-pmpi-test.sh: the MPI profiling interface of libmpi (src/pmpi.rs), as a tool uses it:
#   - every MPI_/MPIX_ function libmpi.so exports has its PMPI_/PMPIX_ twin (nm -D), and mpi.h
#     declares exactly the exported PMPI_ names
#   - tests/pmpi/count_tool.c, a tool that defines MPI_Init/Send/Recv/Allreduce/Finalize, counts
#     the calls and reaches the library through PMPI_, attached to tests/pmpi/ring.c (known
#     counts; libmpi's own MPI_Sendrecv and MPI_Bcast must not reach the tool) in four ways:
#     LD_PRELOAD (on 2 and 3 ranks over shm, 2 over tcp), linked before -lmpi, with the program
#     linked by the standard ABI name (-lmpi_abi), and statically (tool object + libmpi.a of an
#     install into a temporary PREFIX, where the archive's MPI_ names are weak)
#   - a real test program (tests/c/p2p.c) under the LD_PRELOAD tool and statically linked with
#     it: it passes, and both ways count the same calls on every rank
# Prints one line per check and "N passed, N failed".
#
# Environment: MPIRUN (launcher), PMPI_TEST_KEEP=1 keeps the temporary directory.
# Needs `cargo build --release -p mpicd-capi` first.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1
need_libmpi run-pmpi-test
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mpicd-pmpi.XXXXXX")
[[ "${PMPI_TEST_KEEP:-0}" == 1 ]] || trap 'rm -rf "$TMP"' EXIT
PREFIX="$TMP/prefix"
W="$TMP/work"
mkdir -p "$W"
LIB="$ROOT/target/release"

passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() {
    echo "FAIL $1"
    [[ -n "${2:-}" && -e "$2" ]] && grep -av "UCX  WARN" "$2" | tail -n 8 | sed 's/^/     /'
    failed=$((failed + 1))
}
check() {
    local name=$1 log=$2
    shift 2
    if "$@" >"$log" 2>&1; then ok "$name"; else bad "$name" "$log"; fi
}

# 1. The names.
nm -D --defined-only "$LIB/libmpi.so" | awk '$2 == "T" { print $3 }' | sort >"$W/exported"
grep -E '^MPIX?_' "$W/exported" >"$W/mpi"
grep -E '^PMPIX?_' "$W/exported" | sed 's/^P//' >"$W/pmpi"
if [[ ! -s "$W/mpi" ]]; then
    bad "libmpi.so exports no MPI_ function"
elif cmp -s "$W/mpi" "$W/pmpi"; then
    ok "each of the $(wc -l <"$W/mpi") MPI_ functions of libmpi.so has its PMPI_ twin, and no other PMPI_ exists"
else
    bad "MPI_ without PMPI_: $(comm -23 "$W/mpi" "$W/pmpi" | tr '\n' ' ')PMPI_ without MPI_: $(comm -13 "$W/mpi" "$W/pmpi" | tr '\n' ' ')"
fi
grep -oE '\bPMPIX?_[A-Za-z0-9_]+\(' include/mpi.h | tr -d '(' | sed 's/^P//' | sort -u >"$W/declared"
if cmp -s "$W/declared" "$W/pmpi"; then
    ok "mpi.h declares exactly the exported PMPI_ names"
else
    bad "mpi.h's PMPI_ names differ from libmpi.so's: declared only: $(comm -23 "$W/declared" "$W/pmpi" | tr '\n' ' ')exported only: $(comm -13 "$W/declared" "$W/pmpi" | tr '\n' ' ')"
fi

# 2. The tool and the programs.
if ! bash scripts/install.sh "$PREFIX" >"$W/install.log" 2>&1; then
    bad "scripts/install.sh $PREFIX" "$W/install.log"
    echo "$passed passed, $failed failed"
    exit 1
fi
nm "$PREFIX/lib/libmpi.a" 2>/dev/null | awk '$3 == "MPI_Send" || $3 == "PMPI_Send" { print $2, $3 }' | sort >"$W/archive"
if [[ "$(tr '\n' ' ' <"$W/archive")" == "T PMPI_Send W MPI_Send " ]]; then
    ok "installed libmpi.a: PMPI_Send defined, MPI_Send weak"
else
    bad "installed libmpi.a's Send symbols: $(tr '\n' ' ' <"$W/archive")"
fi

CFLAGS=(-O1 -g -Wall -Wextra -Werror -I"$ROOT/include")
static_libs=$(PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config --static --libs mpicd | sed 's/ -lmpi\b//')
read -r -a STATIC_LIBS <<<"$static_libs"
check "count tool builds as a shared library" "$W/tool.log" \
    cc "${CFLAGS[@]}" -shared -fPIC -o "$W/libcount.so" tests/pmpi/count_tool.c
check "count tool builds as an object" "$W/tool-o.log" \
    cc "${CFLAGS[@]}" -c -o "$W/count_tool.o" tests/pmpi/count_tool.c
check "ring.c builds with -lmpi" "$W/ring.log" \
    cc "${CFLAGS[@]}" -o "$W/ring" tests/pmpi/ring.c -L"$LIB" -Wl,-rpath,"$LIB" -lmpi
check "ring.c builds with the tool linked before -lmpi" "$W/ring-linked.log" \
    cc "${CFLAGS[@]}" -o "$W/ring_linked" tests/pmpi/ring.c -L"$W" -Wl,-rpath,"$W" -lcount \
    -L"$LIB" -Wl,-rpath,"$LIB" -lmpi
check "ring.c builds with -lmpi_abi" "$W/ring-abi.log" \
    cc "${CFLAGS[@]}" -o "$W/ring_abi" tests/pmpi/ring.c -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lmpi_abi
check "ring.c builds statically with the tool object and libmpi.a" "$W/ring-static.log" \
    cc "${CFLAGS[@]}" -o "$W/ring_static" tests/pmpi/ring.c "$W/count_tool.o" \
    "$PREFIX/lib/libmpi.a" "${STATIC_LIBS[@]}"

# counts_of LOG: the tool's lines, "rank=R ..." sorted by rank.
counts_of() { grep -a '^pmpi-count ' "$1" | sed 's/^pmpi-count //' | sort; }

# run_ring NAME N TLS EXE...: runs on N ranks and checks the tool's counts on every rank.
run_ring() {
    local name=$1 n=$2 tls=$3 log="$W/$1.run.log"
    shift 3
    local want="" r
    for ((r = 0; r < n; r++)); do
        want+="rank=$r Init=1 Send=3 Recv=3 Allreduce=2 Finalize=1"$'\n'
    done
    local envs=()
    [[ $tls == tcp ]] && envs=(UCX_TLS=tcp,self)
    if timeout 120 "${MPIRUN_CMD[@]}" -n "$n" env "${envs[@]}" "$@" >"$log" 2>&1 &&
        grep -aq "ring: all checks passed" "$log" && [[ "$(counts_of "$log")"$'\n' == "$want" ]]; then
        ok "$name: counts on $n ranks ($tls)"
    else
        bad "$name: counts on $n ranks ($tls): got $(counts_of "$log" | tr '\n' ';')" "$log"
    fi
}
[[ -x $W/ring && -e $W/libcount.so ]] && {
    run_ring preload 2 shm LD_PRELOAD="$W/libcount.so" "$W/ring"
    run_ring preload 3 shm LD_PRELOAD="$W/libcount.so" "$W/ring"
    run_ring preload 2 tcp LD_PRELOAD="$W/libcount.so" "$W/ring"
}
[[ -x $W/ring_linked ]] && run_ring linked-before-lmpi 2 shm "$W/ring_linked"
[[ -x $W/ring_abi && -e $W/libcount.so ]] && run_ring preload-abi 2 shm LD_PRELOAD="$W/libcount.so" "$W/ring_abi"
[[ -x $W/ring_static ]] && {
    run_ring static 2 shm "$W/ring_static"
    run_ring static 3 shm "$W/ring_static"
}
# Without a tool, nothing counts (the library's MPI_ names are its own).
if [[ -x $W/ring ]]; then
    if timeout 120 "${MPIRUN_CMD[@]}" -n 2 "$W/ring" >"$W/plain.log" 2>&1 &&
        grep -aq "ring: all checks passed" "$W/plain.log" && ! grep -aq '^pmpi-count' "$W/plain.log"; then
        ok "ring without a tool"
    else
        bad "ring without a tool" "$W/plain.log"
    fi
fi

# 3. A real program: tests/c/p2p.c, preloaded and static, the same counts.
check "p2p.c builds with -lmpi" "$W/p2p.log" \
    cc "${CFLAGS[@]}" -o "$W/p2p" tests/c/p2p.c -L"$LIB" -Wl,-rpath,"$LIB" -lmpi
check "p2p.c builds statically with the tool" "$W/p2p-static.log" \
    cc "${CFLAGS[@]}" -o "$W/p2p_static" tests/c/p2p.c "$W/count_tool.o" \
    "$PREFIX/lib/libmpi.a" "${STATIC_LIBS[@]}"
if [[ -x $W/p2p && -x $W/p2p_static && -e $W/libcount.so ]]; then
    timeout 120 "${MPIRUN_CMD[@]}" -n 2 env LD_PRELOAD="$W/libcount.so" "$W/p2p" >"$W/p2p-preload.run.log" 2>&1
    rc1=$?
    timeout 120 "${MPIRUN_CMD[@]}" -n 2 "$W/p2p_static" >"$W/p2p-static.run.log" 2>&1
    rc2=$?
    a=$(counts_of "$W/p2p-preload.run.log")
    b=$(counts_of "$W/p2p-static.run.log")
    if [[ $rc1 -eq 0 && $rc2 -eq 0 ]] && grep -aq "p2p: all checks passed" "$W/p2p-preload.run.log" &&
        grep -aq "p2p: all checks passed" "$W/p2p-static.run.log" &&
        [[ $(grep -c 'Init=1 Send=[1-9][0-9]* Recv=[1-9][0-9]* Allreduce=[1-9][0-9]* Finalize=1' <<<"$a") -eq 2 && "$a" == "$b" ]]; then
        ok "p2p.c on 2 ranks, LD_PRELOAD and static tool count the same: $(tr '\n' ';' <<<"$a")"
    else
        bad "p2p.c on 2 ranks with the tool: preload rc $rc1 [$(tr '\n' ';' <<<"$a")], static rc $rc2 [$(tr '\n' ';' <<<"$b")]" "$W/p2p-preload.run.log"
    fi
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
