# common.sh: what the test and benchmark scripts share; each one sources it (it is never run):
#   ROOT        the checkout (the parent folder of scripts/)
#   MPIRUN      the launcher's command line: the caller's, or Open MPI's mpirun allowed to run
#               as root and to start more ranks than cores (the Makefile exports the same)
#   MPIRUN_CMD  MPIRUN as an array of words: "${MPIRUN_CMD[@]}" -n 2 PROGRAM
#   PYTHON      the Python interpreter (default python3)
#   need_libmpi NAME          stops the script, as NAME, when the build tree has no libmpi
#   install_python_package    pip-installs the Python package of this checkout (python/)

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
    "$PYTHON" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
        "$ROOT/python" || return 1
    rm -rf "$ROOT/python/build" "$ROOT/python/src/mpicd.egg-info" # setuptools' in-tree leftovers
}
