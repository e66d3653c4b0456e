"""``MPI.Exception`` and the one place where libmpi return codes become exceptions.

Every communicator this package hands out has ``MPI_ERRORS_RETURN`` set (COMM_WORLD and
COMM_SELF at start-up; Dup and Split inherit it), so a failing call returns its code here
instead of aborting the job.
"""

import ctypes

from ._libmpi import ERROR_CLASSES, lib

_NAMES = {v: "MPI_" + k for k, v in ERROR_CLASSES.items()}
_NAMES[75] = "MPIX_ERR_PROC_FAILED"
_NAMES[76] = "MPIX_ERR_PROC_FAILED_PENDING"
_NAMES[77] = "MPIX_ERR_REVOKED"
_NAMES[93] = "MPIX_ERR_NOT_INITIALIZED"


def error_string(code):
    """libmpi's text for ``code`` (with the details of this thread's last failure)."""
    buf = ctypes.create_string_buffer(512)
    n = ctypes.c_int(0)
    try:
        if lib.MPI_Error_string(code, buf, ctypes.byref(n)) == 0:
            return buf.raw[: n.value].decode("utf-8", "replace")
    except Exception:  # pragma: no cover - libmpi unusable (finalized)
        pass
    return _NAMES.get(code, f"MPI error {code}")


def error_class(code):
    c = ctypes.c_int(0)
    try:
        if lib.MPI_Error_class(code, ctypes.byref(c)) == 0:
            return c.value
    except Exception:  # pragma: no cover
        pass
    return code


class Exception(RuntimeError):  # noqa: A001 - mpi4py's name, shadowing on purpose
    """An MPI error: ``Get_error_code()``, ``Get_error_class()``, ``Get_error_string()``.

    Compares equal to its error code, like mpi4py's. When a Python error inside a
    serialization callback caused it, that error is the ``__cause__``.
    """

    def __init__(self, ierr=0, detail=None):
        self.ierr = int(ierr)
        self._string = error_string(self.ierr)
        self._class = error_class(self.ierr)
        msg = self._string if detail is None else f"{self._string} ({detail})"
        super().__init__(msg)

    def Get_error_code(self):
        return self.ierr

    def Get_error_class(self):
        return self._class

    def Get_error_string(self):
        return self._string

    error_code = property(Get_error_code)
    error_class = property(Get_error_class)
    error_string = property(Get_error_string)

    def __int__(self):
        return self.ierr

    def __eq__(self, other):
        if isinstance(other, Exception):
            return self.ierr == other.ierr
        if isinstance(other, int):
            return self.ierr == other
        return NotImplemented

    def __hash__(self):
        return hash(self.ierr)

    def __repr__(self):
        return f"MPI.Exception({self.ierr})"


def check(code, detail=None):
    """Raises ``MPI.Exception`` unless ``code`` is MPI_SUCCESS."""
    if code != 0:
        raise Exception(code, detail)
