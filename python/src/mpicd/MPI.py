"""mpicd's MPI module, with mpi4py's names: ``from mpicd import MPI``.

Importing it initializes MPI (``MPI_Init_thread`` with ``MPI_THREAD_MULTIPLE``), sets
``MPI_ERRORS_RETURN`` on COMM_WORLD and COMM_SELF (failures raise ``MPI.Exception``), creates
the custom datatype that carries pickled objects, and registers ``MPI_Finalize`` at exit.
"""

import atexit
import ctypes

from . import _libmpi as _L
from . import _fast, _pickled, _request
from ._comm import BOTTOM, IN_PLACE, Comm, Errhandler, Intracomm
from ._errors import Exception, check, error_class, error_string
from ._libmpi import lib as _lib
from ._request import Message, Request
from ._file import (  # noqa: F401  (mpi4py's names)
    DISPLACEMENT_CURRENT, FILE_NULL, MODE_APPEND, MODE_CREATE, MODE_DELETE_ON_CLOSE, MODE_EXCL,
    MODE_RDONLY, MODE_RDWR, MODE_SEQUENTIAL, MODE_UNIQUE_OPEN, MODE_WRONLY, SEEK_CUR, SEEK_END,
    SEEK_SET, File)
from ._status import Status
from ._win import (  # noqa: F401  (mpi4py's names)
    LOCK_EXCLUSIVE, LOCK_SHARED, MODE_NOCHECK, MODE_NOPRECEDE, MODE_NOPUT, MODE_NOSTORE,
    MODE_NOSUCCEED, WIN_BASE, WIN_CREATE_FLAVOR, WIN_DISP_UNIT, WIN_FLAVOR_ALLOCATE,
    WIN_FLAVOR_CREATE, WIN_FLAVOR_DYNAMIC, WIN_FLAVOR_SHARED, WIN_MODEL, WIN_SEPARATE, WIN_SIZE,
    WIN_UNIFIED, Win)
from ._types import PREDEFINED_OPS, PREDEFINED_TYPES, Datatype, Op

__all__ = [
    "COMM_WORLD", "COMM_SELF", "COMM_NULL", "ANY_SOURCE", "ANY_TAG", "PROC_NULL", "ROOT",
    "UNDEFINED", "IN_PLACE", "BOTTOM", "Comm", "Intracomm", "Status", "Request", "Message",
    "Datatype", "Op", "Errhandler", "Exception", "Wtime", "Wtick",
]

LIBMPI_PATH = _L.path
"""The libmpi this module uses."""

# --- constants --------------------------------------------------------------------------

ANY_SOURCE = _L.ANY_SOURCE
ANY_TAG = _L.ANY_TAG
PROC_NULL = _L.PROC_NULL
ROOT = _L.ROOT
UNDEFINED = _L.UNDEFINED
THREAD_SINGLE = _L.THREAD_SINGLE
THREAD_FUNNELED = _L.THREAD_FUNNELED
THREAD_SERIALIZED = _L.THREAD_SERIALIZED
THREAD_MULTIPLE = _L.THREAD_MULTIPLE
IDENT, CONGRUENT, SIMILAR, UNEQUAL = _L.IDENT, _L.CONGRUENT, _L.SIMILAR, _L.UNEQUAL
ORDER_C, ORDER_FORTRAN = _L.ORDER_C, _L.ORDER_FORTRAN
DISTRIBUTE_NONE, DISTRIBUTE_BLOCK = _L.DISTRIBUTE_NONE, _L.DISTRIBUTE_BLOCK
DISTRIBUTE_CYCLIC, DISTRIBUTE_DFLT_DARG = _L.DISTRIBUTE_CYCLIC, _L.DISTRIBUTE_DFLT_DARG
TAG_UB = _L.TAG_UB_KEYVAL
VERSION, SUBVERSION = 5, 0

for _name, _code in _L.ERROR_CLASSES.items():
    globals()[_name] = _code
ERR_PROC_FAILED = _L.ERROR_CLASSES["ERR_PROC_FAILED"]

for _name, _t in PREDEFINED_TYPES.items():
    globals()[_name] = _t
for _name, _o in PREDEFINED_OPS.items():
    globals()[_name] = _o
del _name, _code, _t, _o

ERRHANDLER_NULL = Errhandler(_L.ERRHANDLER_NULL, "ERRHANDLER_NULL")
ERRORS_ARE_FATAL = Errhandler(_L.ERRORS_ARE_FATAL, "ERRORS_ARE_FATAL")
ERRORS_RETURN = Errhandler(_L.ERRORS_RETURN, "ERRORS_RETURN")
ERRORS_ABORT = Errhandler(_L.ERRORS_ABORT, "ERRORS_ABORT")

COMM_NULL = Intracomm(_L.COMM_NULL)
COMM_WORLD = Intracomm(_L.COMM_WORLD)
COMM_SELF = Intracomm(_L.COMM_SELF)
REQUEST_NULL = Request(_L.REQUEST_NULL)
MESSAGE_NULL = Message(_L.MESSAGE_NULL)
MESSAGE_NO_PROC = Message(_L.MESSAGE_NO_PROC)


# --- environment ------------------------------------------------------------------------


restrict_unpickling = _pickled.restrict_unpickling
"""Restricts what objects received from peers may rebuild (see ``_pickled.restrict_unpickling``):
``MPI.restrict_unpickling([MyClass, "pkg.module.Name"])``; ``None`` lifts it."""


def Wtime():
    """Seconds since an arbitrary point (MPI_Wtime)."""
    return _lib.MPI_Wtime()


def Wtick():
    return _lib.MPI_Wtick()


def Is_initialized():
    flag = ctypes.c_int(0)
    check(_lib.MPI_Initialized(ctypes.byref(flag)))
    return bool(flag.value)


def Is_finalized():
    flag = ctypes.c_int(0)
    check(_lib.MPI_Finalized(ctypes.byref(flag)))
    return bool(flag.value)


def Query_thread():
    p = ctypes.c_int(0)
    check(_lib.MPI_Query_thread(ctypes.byref(p)))
    return p.value


def Is_thread_main():
    flag = ctypes.c_int(0)
    check(_lib.MPI_Is_thread_main(ctypes.byref(flag)))
    return bool(flag.value)


def Get_version():
    v, s = ctypes.c_int(0), ctypes.c_int(0)
    check(_lib.MPI_Get_version(ctypes.byref(v), ctypes.byref(s)))
    return v.value, s.value


def Get_library_version():
    buf = ctypes.create_string_buffer(8192)
    n = ctypes.c_int(0)
    check(_lib.MPI_Get_library_version(buf, ctypes.byref(n)))
    return buf.raw[: n.value].decode("utf-8", "replace")


def Get_processor_name():
    buf = ctypes.create_string_buffer(256)
    n = ctypes.c_int(0)
    check(_lib.MPI_Get_processor_name(buf, ctypes.byref(n)))
    return buf.raw[: n.value].decode("utf-8", "replace")


def Get_error_class(errorcode):
    return error_class(errorcode)


def Get_error_string(errorcode):
    return error_string(errorcode)


def Init():
    """Already done at import (kept for mpi4py compatibility)."""


def Init_thread(required=THREAD_MULTIPLE):
    """Already done at import; returns the thread level provided."""
    return Query_thread()


_finalized_by_us = False


def Finalize():
    """Finalizes MPI (also done at exit). No MPI call is allowed afterwards."""
    global _finalized_by_us
    if _finalized_by_us or Is_finalized():
        return
    _finalized_by_us = True
    _fast.free_type()
    _pickled.free_type()
    check(_lib.MPI_Finalize())
    _request._ORPHANS.clear()


def _init():
    flag = ctypes.c_int(0)
    check(_lib.MPI_Initialized(ctypes.byref(flag)))
    if not flag.value:
        provided = ctypes.c_int(0)
        check(_lib.MPI_Init_thread(None, None, THREAD_MULTIPLE, ctypes.byref(provided)))
    COMM_WORLD._setup()
    COMM_SELF._setup()
    _pickled.create_type()
    _fast.create_type()
    atexit.register(_at_exit)


def _at_exit():
    try:
        Finalize()
    except BaseException:  # noqa: BLE001 - nothing useful to do at exit
        pass


_init()
