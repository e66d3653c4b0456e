"""mpicd for Python: an mpi4py-style module over mpicd's libmpi.

``from mpicd import MPI`` gives mpi4py's names (COMM_WORLD, Status, Request, Exception, the
buffer methods Send/Recv/... and the object methods send/recv/...). Objects are pickled with
protocol 5 and their large buffers (NumPy arrays) travel out of band, as memory regions of
mpicd's custom datatype, in one MPI message: see ``mpicd._pickled``.

The C library is found through ``$MPICD_LIBMPI``, then the mpicd build tree, then the installed
location (``mpicd._libmpi``). Importing ``mpicd`` alone does not load it; importing
``mpicd.MPI`` loads it and initializes MPI.
"""

__version__ = "0.1.0"
__all__ = ["MPI"]


def __getattr__(name):
    if name == "MPI":
        import importlib

        return importlib.import_module(".MPI", __name__)
    raise AttributeError(f"module 'mpicd' has no attribute {name!r}")
