#!/usr/bin/env bash
# install-deps.sh: installs the Debian 12 packages mpicd needs to build, test and benchmark.
#
# Idempotent and quiet: asks dpkg which packages are missing, and only if some are runs
# `apt-get update` once and installs just those. Needs root (or sudo) only when something is missing.
# Prints "deps: ok" on success.
#
# Rust itself is not a Debian package here: cargo must already be on PATH (rustup); the script
# stops with one line saying so when it is not.
set -euo pipefail

PACKAGES=(
    libucx-dev       # UCX headers and libraries (mpicd-ucx-sys, bindgen through pkg-config "ucx")
    ucx-utils        # ucx_perftest (raw-UCX limit in the benchmark), ucx_info
    libpmix-dev      # PMIx client (launch under mpirun / srun / prterun)
    openmpi-bin      # mpirun: the launcher of the tests, and the Open MPI peer in the benchmark
    libopenmpi-dev   # mpicc and mpi.h for the Open MPI peer benchmark
    libclang-dev     # bindgen
    clang            # bindgen's clang, C shim
    pkg-config       # finds UCX and PMIx
    build-essential  # cc, make
    valgrind         # memory checks of the C API
    cmake            # builds the C++ tests (cpp/), checks FindMPI against our wrappers
    patchelf         # install.sh: libmpi_abi.so.1 with its own SONAME
    python3          # the benchmark table formatter (stdlib only)
    python3-dev      # Python headers: the Python package's C extension (mpicd._mpicd_fast)
    iproute2         # ip netns: the two-node test of tests/run-unreachable-test.sh
    curl             # tests/run-mpi4py.sh downloads the mpi4py sdist from PyPI
    python3-venv     # tests/run-mpi4py.sh builds mpi4py in a venv
)

missing=()
for pkg in "${PACKAGES[@]}"; do
    # `dpkg -s` says "Status: install ok installed" only for a fully installed package.
    if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed'; then
        missing+=("$pkg")
    fi
done

if ((${#missing[@]} > 0)); then
    SUDO=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO=(sudo)
        else
            echo "deps: missing ${missing[*]}; run this script as root to install them" >&2
            exit 1
        fi
    fi
    echo "deps: installing ${missing[*]}"
    log=$(mktemp "${TMPDIR:-/tmp}/mpicd-deps.XXXXXX")
    # apt's chatter goes to the log, shown only when something fails.
    if ! { "${SUDO[@]}" apt-get update -qq &&
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
        cat "$log" >&2
        echo "deps: installing ${missing[*]} failed (log: $log)" >&2
        exit 1
    fi
    rm -f "$log"
fi

if ! command -v cargo >/dev/null 2>&1 && [[ ! -x "$HOME/.cargo/bin/cargo" ]]; then
    echo "deps: cargo not found: install a Rust toolchain >= 1.75 (rustup) and put cargo on PATH" >&2
    exit 1
fi

echo "deps: ok"
