"""Finding libmpi: MPICD_LIBMPI first, a clear ImportError when it is unusable or when nothing
is found (checked in a fresh interpreter: the library is loaded once per process)."""

import os
import subprocess
import sys

from mpicd import MPI


def run_import(env_changes):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_"))}
    env.update(env_changes)
    code = "import mpicd._libmpi as L; print(L.path)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)


def test_bad_env_path(comm):
    if comm.rank != 0:
        return
    p = run_import({"MPICD_LIBMPI": "/nonexistent/libmpi.so"})
    assert p.returncode != 0
    assert "ImportError" in p.stderr and "MPICD_LIBMPI=/nonexistent/libmpi.so" in p.stderr
    assert "cargo build --release" in p.stderr


def test_env_path_is_used(comm):
    if comm.rank != 0:
        return
    p = run_import({"MPICD_LIBMPI": MPI.LIBMPI_PATH})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == MPI.LIBMPI_PATH


def test_open_mpi_is_not_taken(comm):
    """Open MPI's libmpi (also "libmpi") is rejected with a message naming it."""
    if comm.rank != 0:
        return
    import ctypes.util

    ompi = ctypes.util.find_library("mpi")
    if ompi is None:
        return
    p = run_import({"MPICD_LIBMPI": ompi})
    assert p.returncode != 0 and "not mpicd's libmpi" in p.stderr
