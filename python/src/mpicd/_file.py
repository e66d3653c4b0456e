"""Parallel I/O: ``MPI.File`` with mpi4py's names, over libmpi's files.

``File.Open`` is collective over its communicator; reads and writes take buffer specs as
point-to-point does (``buf``, ``[buf, datatype]``, ``[buf, count, datatype]``) and fill an
optional ``MPI.Status`` (its count is what was moved: a read past the end of the file moves
less). Files raise ``MPI.Exception`` on errors (their handler is MPI_ERRORS_RETURN, the
default of files). The subset: Open, Close, Delete, Get_size, Set_size, Preallocate, Sync,
Get_amode, Set_view, Get_view, Seek, Get_position, Read/Write (individual pointer),
Read_at/Write_at and their ``_all`` forms, Read_shared/Write_shared, Read_ordered/
Write_ordered, Get_byte_offset and Set_atomicity/Get_atomicity.
"""

import ctypes
from ctypes import POINTER, byref, c_char_p, c_int, c_int64, c_void_p

from ._buffer import message
from ._errors import check
from ._libmpi import lib
from ._status import c_status
from ._types import BYTE, PREDEFINED_TYPES, Datatype

FILE_NULL = 280
INFO_NULL = 304
MODE_APPEND, MODE_CREATE, MODE_DELETE_ON_CLOSE, MODE_EXCL = 1, 2, 4, 8
MODE_RDONLY, MODE_RDWR, MODE_SEQUENTIAL, MODE_UNIQUE_OPEN, MODE_WRONLY = 16, 32, 64, 128, 256
SEEK_CUR, SEEK_END, SEEK_SET = 401, 402, 403
DISPLACEMENT_CURRENT = -1
MAX_DATAREP_STRING = 128

_P, _PP, _I, _PI, _O, _PO = c_void_p, POINTER(c_void_p), c_int, POINTER(c_int), c_int64, \
    POINTER(c_int64)
_RW = [_P, _P, _I, _P, _P]  # fh, buf, count, datatype, status
_RW_AT = [_P, _O, _P, _I, _P, _P]
_PROTOTYPES = {
    "MPI_File_open": [_P, c_char_p, _I, _P, _PP],
    "MPI_File_close": [_PP],
    "MPI_File_delete": [c_char_p, _P],
    "MPI_File_get_size": [_P, _PO],
    "MPI_File_set_size": [_P, _O],
    "MPI_File_preallocate": [_P, _O],
    "MPI_File_sync": [_P],
    "MPI_File_get_amode": [_P, _PI],
    "MPI_File_set_atomicity": [_P, _I],
    "MPI_File_get_atomicity": [_P, _PI],
    "MPI_File_set_view": [_P, _O, _P, _P, c_char_p, _P],
    "MPI_File_get_view": [_P, _PO, _PP, _PP, c_char_p],
    "MPI_File_seek": [_P, _O, _I],
    "MPI_File_get_position": [_P, _PO],
    "MPI_File_get_byte_offset": [_P, _O, _PO],
    "MPI_File_read": _RW,
    "MPI_File_write": _RW,
    "MPI_File_read_all": _RW,
    "MPI_File_write_all": _RW,
    "MPI_File_read_shared": _RW,
    "MPI_File_write_shared": _RW,
    "MPI_File_read_ordered": _RW,
    "MPI_File_write_ordered": _RW,
    "MPI_File_read_at": _RW_AT,
    "MPI_File_write_at": _RW_AT,
    "MPI_File_read_at_all": _RW_AT,
    "MPI_File_write_at_all": _RW_AT,
}
for _name, _args in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = c_int, _args


def _info_handle(info):
    return INFO_NULL if info is None else info.handle


class File:
    """A file opened collectively by the ranks of a communicator."""

    __slots__ = ("_h", "__weakref__")

    def __init__(self):
        self._h = FILE_NULL

    @property
    def handle(self):
        return self._h

    def __bool__(self):
        return self._h != FILE_NULL

    # -- opening and closing -------------------------------------------------------------

    @classmethod
    def Open(cls, comm, filename, amode=MODE_RDONLY, info=None):
        """Opens ``filename`` on every rank of ``comm`` (collective)."""
        f = cls()
        h = c_void_p(FILE_NULL)
        check(lib.MPI_File_open(comm.handle, str(filename).encode(), int(amode),
                                _info_handle(info), byref(h)))
        f._h = h.value
        return f

    def Close(self):
        """Closes the file (collective)."""
        h = c_void_p(self._h)
        check(lib.MPI_File_close(byref(h)))
        self._h = FILE_NULL

    @staticmethod
    def Delete(filename, info=None):
        """Deletes ``filename``."""
        check(lib.MPI_File_delete(str(filename).encode(), _info_handle(info)))

    # -- size, mode, view and pointers ---------------------------------------------------

    def _get(self, fn, ctype=c_int64):
        v = ctype(0)
        check(fn(self._h, byref(v)))
        return v.value

    def Get_size(self):
        return self._get(lib.MPI_File_get_size)

    def Set_size(self, size):
        check(lib.MPI_File_set_size(self._h, int(size)))

    def Preallocate(self, size):
        check(lib.MPI_File_preallocate(self._h, int(size)))

    def Sync(self):
        check(lib.MPI_File_sync(self._h))

    def Get_amode(self):
        return self._get(lib.MPI_File_get_amode, c_int)

    def Set_atomicity(self, flag):
        check(lib.MPI_File_set_atomicity(self._h, int(bool(flag))))

    def Get_atomicity(self):
        return bool(self._get(lib.MPI_File_get_atomicity, c_int))

    def Set_view(self, disp=0, etype=None, filetype=None, datarep="native", info=None):
        """Sets this rank's view: data from byte ``disp`` in ``etype`` units laid out by
        ``filetype`` (both default to bytes; ``filetype`` defaults to ``etype``)."""
        etype = BYTE if etype is None else etype
        filetype = etype if filetype is None else filetype
        check(lib.MPI_File_set_view(self._h, int(disp), etype.handle, filetype.handle,
                                    datarep.encode(), _info_handle(info)))

    def Get_view(self):
        """``(disp, etype, filetype, datarep)``; derived types are new (free them)."""
        disp, e, t = c_int64(0), c_void_p(), c_void_p()
        rep = ctypes.create_string_buffer(MAX_DATAREP_STRING)
        check(lib.MPI_File_get_view(self._h, byref(disp), byref(e), byref(t), rep))
        named = {d.handle: d for d in PREDEFINED_TYPES.values()}
        types = [named.get(x.value) or Datatype(x.value) for x in (e, t)]
        return disp.value, types[0], types[1], rep.value.decode()

    def Seek(self, offset, whence=SEEK_SET):
        check(lib.MPI_File_seek(self._h, int(offset), int(whence)))

    def Get_position(self):
        return self._get(lib.MPI_File_get_position)

    def Get_byte_offset(self, offset):
        v = c_int64(0)
        check(lib.MPI_File_get_byte_offset(self._h, int(offset), byref(v)))
        return v.value

    # -- data access ---------------------------------------------------------------------

    def _rw(self, fn, buf, status, writable):
        m = message(buf, writable=writable)
        m.run(lambda a, n, t: fn(self._h, a, n, t, c_status(status)))

    def _rw_at(self, fn, offset, buf, status, writable):
        m = message(buf, writable=writable)
        m.run(lambda a, n, t: fn(self._h, int(offset), a, n, t, c_status(status)))

    def Read(self, buf, status=None):
        self._rw(lib.MPI_File_read, buf, status, True)

    def Write(self, buf, status=None):
        self._rw(lib.MPI_File_write, buf, status, False)

    def Read_all(self, buf, status=None):
        self._rw(lib.MPI_File_read_all, buf, status, True)

    def Write_all(self, buf, status=None):
        self._rw(lib.MPI_File_write_all, buf, status, False)

    def Read_shared(self, buf, status=None):
        self._rw(lib.MPI_File_read_shared, buf, status, True)

    def Write_shared(self, buf, status=None):
        self._rw(lib.MPI_File_write_shared, buf, status, False)

    def Read_ordered(self, buf, status=None):
        self._rw(lib.MPI_File_read_ordered, buf, status, True)

    def Write_ordered(self, buf, status=None):
        self._rw(lib.MPI_File_write_ordered, buf, status, False)

    def Read_at(self, offset, buf, status=None):
        self._rw_at(lib.MPI_File_read_at, offset, buf, status, True)

    def Write_at(self, offset, buf, status=None):
        self._rw_at(lib.MPI_File_write_at, offset, buf, status, False)

    def Read_at_all(self, offset, buf, status=None):
        self._rw_at(lib.MPI_File_read_at_all, offset, buf, status, True)

    def Write_at_all(self, offset, buf, status=None):
        self._rw_at(lib.MPI_File_write_at_all, offset, buf, status, False)

    size = property(Get_size)
    amode = property(Get_amode)
    atomicity = property(Get_atomicity, Set_atomicity)

    def __repr__(self):
        return f"<mpicd.MPI.File handle={self._h:#x}>"
