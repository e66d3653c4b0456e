# common.sh: what the test and benchmark scripts share; each one sources it (it is never run):
#   ROOT        the checkout (the parent folder of scripts/)
#   MPIRUN      the launcher's command line: the caller's, or Open MPI's mpirun allowed to run
#               as root and to start more ranks than cores (the Makefile exports the same)
#   MPIRUN_CMD  MPIRUN as an array of words: "${MPIRUN_CMD[@]}" -n 2 PROGRAM
#   PYTHON      the Python interpreter (default python3)
#   need_libmpi NAME          stops the script, as NAME, when the build tree has no libmpi
#   install_python_package    pip-installs the Python package of this checkout (python/), with
#                             its C extension (the Python headers and a compiler are installed by
#                             scripts/install-deps.sh when missing; an install without the
#                             extension fails, unless MPICD_PY_FAST=0)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MPIRUN=${MPIRUN:-env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe}
read -r -a MPIRUN_CMD <<<"$MPIRUN"
PYTHON=${PYTHON:-python3}

need_libmpi() {
    [[ -e "$ROOT/target/release/libmpi.so" ]] && return 0
    echo "$1: $ROOT/target/release/libmpi.so missing: run cargo build --release -p mpicd-capi" >&2
    exit 1
}

install_python_package() {
    local include
    include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])') || return 1
    if [[ ! -e $include/Python.h ]] || ! command -v cc >/dev/null 2>&1; then
        bash "$ROOT/scripts/install-deps.sh" || return 1 # python3-dev, build-essential
    fi
    "$PYTHON" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
        "$ROOT/python" || return 1
    rm -rf "$ROOT/python/build" "$ROOT/python/src/mpicd.egg-info" # setuptools' in-tree leftovers
    if [[ "${MPICD_PY_FAST:-1}" != 0 ]] && ! (cd / && "$PYTHON" -c "import mpicd._mpicd_fast"); then
        echo "install_python_package: the C extension mpicd._mpicd_fast was not built (no" \
            "Python.h in $include, or no C compiler?); MPICD_PY_FAST=0 to go on without it" >&2
        return 1
    fi
}
