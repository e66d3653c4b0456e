"""``MPI.Status``: what a receive, probe or wait reports (source, tag, error, count)."""

import ctypes

from ._errors import check
from ._libmpi import MPI_Status, lib
from ._types import BYTE, Datatype


class Status:
    """mpi4py's Status: ``Get_source``, ``Get_tag``, ``Get_error``, ``Get_count``,
    ``Get_elements``, ``Is_cancelled`` and the ``source``/``tag``/``error`` properties."""

    __slots__ = ("ob_mpi",)

    def __init__(self, status=None):
        self.ob_mpi = MPI_Status()
        if isinstance(status, Status):
            ctypes.pointer(self.ob_mpi)[0] = status.ob_mpi
        else:
            self.ob_mpi.MPI_SOURCE = -1  # MPI_ANY_SOURCE, as mpi4py's fresh Status
            self.ob_mpi.MPI_TAG = -2  # MPI_ANY_TAG

    def Get_source(self):
        return self.ob_mpi.MPI_SOURCE

    def Set_source(self, source):
        self.ob_mpi.MPI_SOURCE = source

    def Get_tag(self):
        return self.ob_mpi.MPI_TAG

    def Set_tag(self, tag):
        self.ob_mpi.MPI_TAG = tag

    def Get_error(self):
        return self.ob_mpi.MPI_ERROR

    def Set_error(self, error):
        self.ob_mpi.MPI_ERROR = error

    def Get_count(self, datatype=BYTE):
        """Elements of ``datatype`` received (``MPI.UNDEFINED`` if not a whole number)."""
        if not isinstance(datatype, Datatype):
            from ._buffer import to_datatype

            datatype = to_datatype(datatype)
        n = ctypes.c_int64(0)
        check(lib.MPI_Get_count_c(ctypes.byref(self.ob_mpi), datatype.handle, ctypes.byref(n)))
        return n.value

    Get_elements = Get_count

    def Is_cancelled(self):
        flag = ctypes.c_int(0)
        check(lib.MPI_Test_cancelled(ctypes.byref(self.ob_mpi), ctypes.byref(flag)))
        return bool(flag.value)

    source = property(Get_source, Set_source)
    tag = property(Get_tag, Set_tag)
    error = property(Get_error, Set_error)
    count = property(Get_count)
    cancelled = property(Is_cancelled)

    def _fill(self, c_status):
        ctypes.pointer(self.ob_mpi)[0] = c_status

    def __repr__(self):
        return f"<mpicd.MPI.Status source={self.source} tag={self.tag} error={self.error}>"


def c_status(status):
    """The ``MPI_Status *`` to pass: the Status's own struct, or NULL (MPI_STATUS_IGNORE)."""
    return ctypes.byref(status.ob_mpi) if status is not None else None
