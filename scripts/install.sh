#!/usr/bin/env bash
# install.sh: installs mpicd's C and C++ libraries, headers, compiler wrappers and pkg-config
# files under PREFIX (what `make install PREFIX=...` runs; build first: `make build`).
#
# Usage: scripts/install.sh PREFIX
#
#   PREFIX/lib/libmpi.so.0.1.0        the shared library (SONAME libmpi.so.0)
#   PREFIX/lib/libmpi.so.0, libmpi.so the SONAME and development links
#   PREFIX/lib/libmpi.a               the static library (its native libraries: pkg-config --static),
#                                     with the profiling interface turned around for static
#                                     links: each function defined as PMPI_X, MPI_X a weak
#                                     symbol that jumps to it (a tool's own MPI_X wins)
#   PREFIX/lib/libmpi_abi.so.1        the same library under the MPI-5 standard ABI name, with
#                                     SONAME libmpi_abi.so.1 (a copy renamed with patchelf; a
#                                     link to libmpi.so.0.1.0 when patchelf is missing), and
#                                     libmpi_abi.so -> libmpi_abi.so.1 for -lmpi_abi
#   PREFIX/include/mpi.h              the C header (MPI-5 standard ABI, custom datatypes)
#   PREFIX/include/mpicd/custom.hpp   the C++ helper (custom datatypes from C++ types)
#   PREFIX/bin/mpicc, mpicxx          the compiler wrappers; they find PREFIX from their own
#                                     location (or MPICD_HOME)
#   PREFIX/lib/pkgconfig/mpicd.pc     Cflags and Libs (with an rpath to PREFIX/lib); also
#                                     installed as mpi.pc, mpi-c.pc and mpi-cxx.pc, the names
#                                     Debian's MPI alternatives use, unless MPICD_PC_ALIASES=0
#
# Environment: DESTDIR (staging root: files go to $DESTDIR$PREFIX, paths inside them name
# PREFIX), MPICD_PC_ALIASES (default 1), PATCHELF (default patchelf).
set -euo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=$1
[[ $PREFIX == /* ]] || PREFIX="$(pwd)/$PREFIX"
PREFIX=${PREFIX%/}
DEST="${DESTDIR:-}$PREFIX"
BUILD="$ROOT/target/release"

for f in libmpi.so libmpi.a; do
    if [[ ! -e "$BUILD/$f" ]]; then
        echo "install: $BUILD/$f missing: build first (make build, or cargo build --release -p mpicd-capi)" >&2
        exit 1
    fi
done

# The version and the SONAME the library was linked with (mpicd-capi/build.rs).
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$ROOT/Cargo.toml")
VERSION=${VERSION:-0.0.0}
SONAME=$(objdump -p "$BUILD/libmpi.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
if [[ -z "$SONAME" ]]; then
    echo "install: $BUILD/libmpi.so has no SONAME: rebuild it (mpicd-capi/build.rs sets one)" >&2
    exit 1
fi
REAL="libmpi.so.$VERSION"
ABI=libmpi_abi.so.1

install -d "$DEST/lib/pkgconfig" "$DEST/include/mpicd" "$DEST/bin"

# Libraries. Removed first, not overwritten in place, so that running programs keep theirs.
rm -f "$DEST/lib/$REAL"
install -m 0755 "$BUILD/libmpi.so" "$DEST/lib/$REAL"
ln -sfn "$REAL" "$DEST/lib/$SONAME"
ln -sfn "$SONAME" "$DEST/lib/libmpi.so"
# libmpi.a: cargo's archive holds MPI_X (the function) and PMPI_X (a jump to MPI_X), both
# strong: a tool defining MPI_X would clash with it, and its PMPI_X would jump back into the
# tool. Swapping the two names (the references inside the archive follow) and weakening MPI_X
# gives what a static tool needs: the function as PMPI_X, a weak MPI_X jumping to it.
OBJCOPY=${OBJCOPY:-objcopy}
pmpi_tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpicd-pmpi.XXXXXX")
nm --defined-only "$BUILD/libmpi.a" 2>/dev/null |
    awk '$2 == "T" && $3 ~ /^PMPIX?_/ { print substr($3, 2) }' | sort -u >"$pmpi_tmp/names"
awk '{ print $1, "P" $1; print "P" $1, $1 }' "$pmpi_tmp/names" >"$pmpi_tmp/swap"
if [[ ! -s "$pmpi_tmp/names" ]]; then
    echo "install: $BUILD/libmpi.a has no PMPI_ functions: rebuild it" >&2
    rm -rf "$pmpi_tmp"
    exit 1
fi
"$OBJCOPY" --redefine-syms="$pmpi_tmp/swap" "$BUILD/libmpi.a" "$pmpi_tmp/swapped.a"
"$OBJCOPY" --weaken-symbols="$pmpi_tmp/names" "$pmpi_tmp/swapped.a" "$pmpi_tmp/libmpi.a"
install -m 0644 "$pmpi_tmp/libmpi.a" "$DEST/lib/libmpi.a"
rm -rf "$pmpi_tmp"

PATCHELF=${PATCHELF:-patchelf}
rm -f "$DEST/lib/$ABI"
if command -v "$PATCHELF" >/dev/null 2>&1; then
    install -m 0755 "$BUILD/libmpi.so" "$DEST/lib/$ABI.tmp"
    "$PATCHELF" --set-soname "$ABI" "$DEST/lib/$ABI.tmp"
    mv -f "$DEST/lib/$ABI.tmp" "$DEST/lib/$ABI"
else
    echo "install: patchelf not found: $ABI is a link to $REAL (SONAME $SONAME); apt-get install patchelf for a copy with SONAME $ABI" >&2
    ln -sfn "$REAL" "$DEST/lib/$ABI"
fi
ln -sfn "$ABI" "$DEST/lib/libmpi_abi.so"

# Headers.
install -m 0644 "$ROOT/include/mpi.h" "$DEST/include/mpi.h"
install -m 0644 "$ROOT/cpp/include/mpicd/custom.hpp" "$DEST/include/mpicd/custom.hpp"

# Compiler wrappers: they locate the tree from their own path (PREFIX/bin/..).
install -m 0755 "$ROOT/bin/mpicc" "$DEST/bin/mpicc"
install -m 0755 "$ROOT/bin/mpicxx" "$DEST/bin/mpicxx"

# pkg-config. The static link needs UCX's and PMIx's libraries and what Rust's std uses.
native=$(pkg-config --libs ucx pmix 2>/dev/null || echo "-lucp -luct -lucs -lucm -lpmix")
read -r -a native_words <<<"$native"
native="${native_words[*]} -lgcc_s -lutil -lrt -lpthread -lm -ldl"
pc() { # pc NAME DESCRIPTION
    cat >"$DEST/lib/pkgconfig/$1.pc" <<EOF
# $1.pc: mpicd (scripts/install.sh). pkg-config --cflags --libs $1
prefix=$PREFIX
exec_prefix=\${prefix}
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: $1
Description: $2
Version: $VERSION
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmpi
Libs.private: $native
EOF
}
pc mpicd "mpicd: MPI (MPI-5 standard ABI) over UCX with custom serialization datatypes"
if [[ "${MPICD_PC_ALIASES:-1}" != 0 ]]; then
    pc mpi "MPI, provided by mpicd (alias of mpicd.pc)"
    pc mpi-c "MPI for C, provided by mpicd (alias of mpicd.pc)"
    pc mpi-cxx "MPI for C++, provided by mpicd (alias of mpicd.pc)"
fi

echo "install: mpicd $VERSION in $DEST (lib, include, bin, lib/pkgconfig)"
