#!/usr/bin/env bash
# run-install-test.sh: installs mpicd into a temporary PREFIX with scripts/install.sh and checks
# the installed tree as a user would use it:
#   - the libraries' SONAMEs (libmpi.so.0; libmpi_abi.so.1 for the standard ABI name) and links
#   - a standard MPI program (tests/install/hello.c) built with PREFIX/bin/mpicc, with
#     `pkg-config --cflags --libs mpicd` (and the mpi.pc alias), with -lmpi_abi, and statically
#     (libmpi.a + pkg-config --static), each run under the launcher with 2 ranks
#   - a program that dlopens libmpi_abi.so.1 by name
#   - the installed wrappers name only PREFIX, not the build tree
#   - the complete C and C++ programs of mpicd-capi/README.md, built with the installed
#     wrappers, run
#   - CMake's FindMPI with MPI_C_COMPILER/MPI_CXX_COMPILER set to the installed wrappers and
#     to the build tree's bin/mpicc and bin/mpicxx: a C program and a C++ program with a
#     custom type (cpp/tests/listvec.cpp, with the installed mpicd/custom.hpp), run
# Prints one line per check and "N passed, N failed".
#
# Environment: MPIRUN (launcher), INSTALL_TEST_KEEP=1 keeps the temporary directory.
# Needs `cargo build --release -p mpicd-capi` first.
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mpicd-install.XXXXXX")
[[ "${INSTALL_TEST_KEEP:-0}" == 1 ]] || trap 'rm -rf "$TMP"' EXIT
PREFIX="$TMP/prefix"
W="$TMP/work"
mkdir -p "$W"

passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() {
    echo "FAIL $1"
    [[ -n "${2:-}" && -e "$2" ]] && grep -av "UCX  WARN" "$2" | tail -n 8 | sed 's/^/     /'
    failed=$((failed + 1))
}
# check NAME LOG COMMAND...: runs the command, output to LOG.
check() {
    local name=$1 log=$2
    shift 2
    if "$@" >"$log" 2>&1; then ok "$name"; else bad "$name" "$log"; fi
}
# run_on_2 NAME EXE PATTERN: runs EXE on 2 ranks and checks that its output has a line
# matching PATTERN (grep's basic regular expression).
run_on_2() {
    local log="$W/$1.run.log"
    if timeout 60 "${MPIRUN_CMD[@]}" -n 2 "$2" >"$log" 2>&1 && grep -aq "$3" "$log"; then
        ok "$1 runs on 2 ranks"
    else
        bad "$1 runs on 2 ranks" "$log"
    fi
}
# run_hello NAME EXE: runs tests/install/hello.c's EXE on 2 ranks (rank 0 says how many).
run_hello() { run_on_2 "$1" "$2" "hello: ok, 2 ranks"; }
soname() { objdump -p "$1" 2>/dev/null | awk '$1 == "SONAME" { print $2 }'; }
needed() { objdump -p "$1" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'; }

# Install.
if ! bash scripts/install.sh "$PREFIX" >"$W/install.log" 2>&1; then
    bad "scripts/install.sh $PREFIX" "$W/install.log"
    echo "$passed passed, $failed failed"
    exit 1
fi
ok "scripts/install.sh PREFIX"

missing=()
for f in lib/libmpi.so lib/libmpi.so.0 lib/libmpi.a lib/libmpi_abi.so.1 lib/libmpi_abi.so \
    include/mpi.h include/mpicd/custom.hpp bin/mpicc bin/mpicxx lib/pkgconfig/mpicd.pc \
    lib/pkgconfig/mpi.pc; do
    [[ -e "$PREFIX/$f" ]] || missing+=("$f")
done
if [[ ${#missing[@]} -eq 0 ]]; then ok "installed files"; else bad "installed files: missing ${missing[*]}"; fi

s=$(soname "$PREFIX/lib/libmpi.so")
if [[ "$s" == libmpi.so.0 ]]; then ok "SONAME of libmpi.so is $s"; else bad "SONAME of libmpi.so is '$s', not libmpi.so.0"; fi
s=$(soname "$PREFIX/lib/libmpi_abi.so.1")
if [[ "$s" == libmpi_abi.so.1 ]]; then
    ok "SONAME of libmpi_abi.so.1 is $s"
elif ! command -v patchelf >/dev/null; then
    echo "skip SONAME of libmpi_abi.so.1 is '$s' (patchelf not installed)"
else
    bad "SONAME of libmpi_abi.so.1 is '$s'"
fi

# The installed wrappers must not point into the build tree.
show=$("$PREFIX/bin/mpicc" -show 2>&1)
if [[ "$show" == *"$PREFIX/include"* && "$show" == *"$PREFIX/lib"* && "$show" != *"$ROOT"* ]]; then
    ok "installed mpicc -show names PREFIX only"
else
    bad "installed mpicc -show: $show"
fi
show=$("$PREFIX/bin/mpicxx" -show 2>&1)
if [[ "$show" == *"$PREFIX/lib"* && "$show" != *"$ROOT"* ]]; then
    ok "installed mpicxx -show names PREFIX only"
else
    bad "installed mpicxx -show: $show"
fi
# Builds export CC=mpicc / CXX=mpicxx (make passes its command line's variables on, so
# `make CC=mpicc` does too): the wrappers must not take themselves for the compiler.
show=$(CC="$PREFIX/bin/mpicc" CXX=mpicxx timeout 10 "$PREFIX/bin/mpicxx" -show 2>&1)
if [[ "$show" == "c++ "* ]] &&
    [[ "$(CC=mpicc.openmpi timeout 10 "$PREFIX/bin/mpicc" -show 2>&1)" == "cc "* ]]; then
    ok "mpicc/mpicxx ignore a CC/CXX that names an MPI wrapper"
else
    bad "mpicxx -show with CXX=mpicxx: $show"
fi

# A standard program with the installed mpicc (run in a clean environment: no MPICD_*).
if check "hello.c with installed mpicc" "$W/mpicc.log" \
    env -u MPICD_HOME -u MPICD_LIBDIR "$PREFIX/bin/mpicc" -O1 -Wall -Werror -o "$W/hello_mpicc" tests/install/hello.c; then
    if needed "$W/hello_mpicc" | grep -qx libmpi.so.0; then ok "hello_mpicc needs libmpi.so.0"; else bad "hello_mpicc needs: $(needed "$W/hello_mpicc" | tr '\n' ' ')"; fi
    run_hello hello_mpicc "$W/hello_mpicc"
fi

# With pkg-config, and the mpi.pc alias.
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
for pc in mpicd mpi; do
    # shellcheck disable=SC2046
    if check "hello.c with pkg-config --cflags --libs $pc" "$W/pc-$pc.log" \
        cc -O1 -Wall -Werror -o "$W/hello_pc_$pc" tests/install/hello.c $(pkg-config --cflags --libs $pc); then
        run_hello "hello_pc_$pc" "$W/hello_pc_$pc"
    fi
done

# Linked by the standard ABI name.
if check "hello.c linked with -lmpi_abi" "$W/abi.log" \
    cc -O1 -o "$W/hello_abi" tests/install/hello.c -I"$PREFIX/include" -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lmpi_abi; then
    if needed "$W/hello_abi" | grep -qx libmpi_abi.so.1; then ok "hello_abi needs libmpi_abi.so.1"; else bad "hello_abi needs: $(needed "$W/hello_abi" | tr '\n' ' ')"; fi
    run_hello hello_abi "$W/hello_abi"
fi
if check "abi_dlopen.c builds" "$W/dlopen-build.log" cc -O1 -o "$W/abi_dlopen" tests/install/abi_dlopen.c -ldl; then
    check "dlopen(\"libmpi_abi.so.1\") by name" "$W/dlopen.log" env LD_LIBRARY_PATH="$PREFIX/lib" "$W/abi_dlopen"
fi

# Statically: libmpi.a and the native libraries of pkg-config --static (Libs.private).
static_libs=$(pkg-config --static --libs mpicd | sed 's/ -lmpi\b//')
# shellcheck disable=SC2086
if check "hello.c linked with libmpi.a" "$W/static.log" \
    cc -O1 -o "$W/hello_static" tests/install/hello.c -I"$PREFIX/include" "$PREFIX/lib/libmpi.a" $static_libs; then
    if needed "$W/hello_static" | grep -q '^libmpi'; then bad "hello_static still needs a shared libmpi"; else ok "hello_static needs no shared libmpi"; fi
    run_hello hello_static "$W/hello_static"
fi

# The complete programs of mpicd-capi/README.md (each code block after a "<!-- test: NAME" line),
# built with the installed wrappers and run on 2 ranks: rank 1 prints "NAME: ... ok".
awk -v dir="$W" '
    /^<!-- test: / { name = $3; want = 1; next }
    want && /^```/ { if (out) { close(out); out = ""; want = 0 } else { out = dir "/" name }; next }
    out { print > out }
' mpicd-capi/README.md
for src in dvec.c lists.cpp; do
    base=${src%.*}
    if [[ ! -s "$W/$src" ]]; then
        bad "README example $src: not found in mpicd-capi/README.md"
        continue
    fi
    if [[ $src == *.c ]]; then wrapper=$PREFIX/bin/mpicc std=-std=c11; else wrapper=$PREFIX/bin/mpicxx std=-std=c++17; fi
    if check "README example $src builds" "$W/$base.build.log" \
        "$wrapper" "$std" -O1 -Wall -Wextra -Werror -o "$W/$base" "$W/$src"; then
        run_on_2 "README example $src" "$W/$base" "^$base: .*ok$"
    fi
done

# CMake's FindMPI, with the installed wrappers and with the build tree's.
if command -v cmake >/dev/null; then
    for tree in installed build; do
        if [[ $tree == installed ]]; then
            cc_=$PREFIX/bin/mpicc cxx_=$PREFIX/bin/mpicxx
        else
            cc_=$ROOT/bin/mpicc cxx_=$ROOT/bin/mpicxx
        fi
        b="$W/cmake-$tree"
        # shellcheck disable=SC2016
        if check "CMake FindMPI with the $tree tree's mpicc/mpicxx" "$b.log" \
            bash -c 'cmake -S "$1" -B "$2" -DMPI_C_COMPILER="$3" -DMPI_CXX_COMPILER="$4" && cmake --build "$2"' \
            _ "$ROOT/tests/install" "$b" "$cc_" "$cxx_"; then
            lib=$(sed -n 's/^-- probe: MPI_C_LIBRARIES=//p' "$b.log")
            want=$([[ $tree == installed ]] && echo "$PREFIX/lib" || echo "$ROOT/target/release")
            if [[ "$lib" == "$want/libmpi.so" ]]; then ok "FindMPI found $lib"; else bad "FindMPI found '$lib', not $want/libmpi.so"; fi
            run_hello "cmake-$tree hello" "$b/hello"
            run_on_2 "cmake-$tree C++ custom type (listvec)" "$b/listvec" "listvec: all checks passed"
        fi
    done
else
    echo "skip CMake FindMPI (cmake not installed)"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
