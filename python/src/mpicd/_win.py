"""One-sided communication: ``MPI.Win`` with mpi4py's names, over libmpi's windows.

A window made by ``Win.Allocate`` owns its memory (libmpi allocates and registers it; ``tomemory``
gives it as a writable ``memoryview`` of bytes, valid until ``Free``); ``Win.Create`` exposes a
buffer of the caller (a NumPy array, a bytearray: anything writable and contiguous), held
exported until ``Free`` so that it cannot move. Origin buffers of ``Put``, ``Get``,
``Accumulate`` and ``Get_accumulate`` are buffer specs as for point-to-point (``buf``,
``[buf, datatype]``, ``[buf, count, datatype]``); ``target`` is ``None`` (displacement 0, the
origin's count and datatype), a displacement, or ``(displacement, count, datatype)``.

Calls complete as the MPI standard says: an origin buffer may be reused only after the epoch's
synchronization (``Fence``, ``Unlock``, ``Flush``, ``Complete``); the buffer of each call is held
until the window's next synchronization call, so that it cannot be freed in between.
"""

import ctypes
from ctypes import POINTER, byref, c_int, c_void_p

from ._buffer import Pin, message
from ._errors import check
from ._libmpi import ERRORS_RETURN, c_aint, lib
from ._types import Op

WIN_NULL = 272
INFO_NULL = 304
LOCK_EXCLUSIVE, LOCK_SHARED = 301, 302
MODE_NOCHECK, MODE_NOPRECEDE, MODE_NOPUT, MODE_NOSTORE, MODE_NOSUCCEED = (
    1024, 2048, 4096, 8192, 16384)
WIN_FLAVOR_CREATE, WIN_FLAVOR_ALLOCATE, WIN_FLAVOR_DYNAMIC, WIN_FLAVOR_SHARED = 311, 312, 313, 314
WIN_UNIFIED, WIN_SEPARATE = 321, 322
WIN_BASE, WIN_DISP_UNIT, WIN_SIZE, WIN_CREATE_FLAVOR, WIN_MODEL = 601, 602, 603, 604, 605

_P, _PP, _I, _PI = c_void_p, POINTER(c_void_p), c_int, POINTER(c_int)
_PROTOTYPES = {
    "MPI_Win_create": [_P, c_aint, _I, _P, _P, _PP],
    "MPI_Win_allocate": [c_aint, _I, _P, _P, _P, _PP],
    "MPI_Win_free": [_PP],
    "MPI_Win_set_errhandler": [_P, _P],
    "MPI_Win_fence": [_I, _P],
    "MPI_Win_lock": [_I, _I, _I, _P],
    "MPI_Win_unlock": [_I, _P],
    "MPI_Win_lock_all": [_I, _P],
    "MPI_Win_unlock_all": [_P],
    "MPI_Win_flush": [_I, _P],
    "MPI_Win_flush_all": [_P],
    "MPI_Win_flush_local": [_I, _P],
    "MPI_Win_flush_local_all": [_P],
    "MPI_Win_sync": [_P],
    "MPI_Win_get_attr": [_P, _I, _P, _PI],
    "MPI_Put": [_P, _I, _P, _I, c_aint, _I, _P, _P],
    "MPI_Get": [_P, _I, _P, _I, c_aint, _I, _P, _P],
    "MPI_Accumulate": [_P, _I, _P, _I, c_aint, _I, _P, _P, _P],
    "MPI_Get_accumulate": [_P, _I, _P, _P, _I, _P, _I, c_aint, _I, _P, _P, _P],
    "MPI_Fetch_and_op": [_P, _P, _P, _I, c_aint, _P, _P],
    "MPI_Compare_and_swap": [_P, _P, _P, _P, _I, c_aint, _P],
}
for _name, _args in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = c_int, _args


def _comm_handle(comm):
    return comm.handle


class Win:
    """A window of memory that the other ranks of its communicator may read and write."""

    __slots__ = ("_h", "_exposed", "_held", "__weakref__")

    def __init__(self):
        self._h = WIN_NULL
        self._exposed = None  # the holder of a Create window's memory
        self._held = []  # origin buffers of the epoch in progress

    @property
    def handle(self):
        return self._h

    def __bool__(self):
        return self._h != WIN_NULL

    # -- creation and release ------------------------------------------------------------

    @classmethod
    def Create(cls, memory, disp_unit=1, info=None, comm=None):
        """Exposes ``memory`` (writable and contiguous; None for no memory) to ``comm``."""
        from . import MPI
        comm = MPI.COMM_WORLD if comm is None else comm
        win = cls()
        if memory is None:
            addr, size, pin = None, 0, None
        else:
            pin = Pin(memory, writable=True)
            addr, size = pin.addr, pin.nbytes
        h = c_void_p(WIN_NULL)
        code = lib.MPI_Win_create(addr, size, int(disp_unit), INFO_NULL, _comm_handle(comm),
                                  byref(h))
        if code != 0:
            if pin is not None:
                pin.release()
            check(code)
        win._h, win._exposed = h.value, pin
        win._errors_raise()
        return win

    @classmethod
    def Allocate(cls, size, disp_unit=1, info=None, comm=None):
        """A window of ``size`` bytes of memory libmpi allocates (zeroed) on each rank."""
        from . import MPI
        comm = MPI.COMM_WORLD if comm is None else comm
        win = cls()
        base, h = c_void_p(), c_void_p(WIN_NULL)
        check(lib.MPI_Win_allocate(int(size), int(disp_unit), INFO_NULL, _comm_handle(comm),
                                   byref(base), byref(h)))
        win._h = h.value
        win._errors_raise()
        return win

    def _errors_raise(self):
        """Errors of the window's calls become exceptions, as everywhere in this package (a
        new window's handler is MPI_ERRORS_ARE_FATAL otherwise)."""
        check(lib.MPI_Win_set_errhandler(self._h, ERRORS_RETURN))

    def Free(self):
        """Frees the window (collective); its memory goes with it."""
        h = c_void_p(self._h)
        check(lib.MPI_Win_free(byref(h)))
        self._h = WIN_NULL
        self._release_held()
        pin, self._exposed = self._exposed, None
        if pin is not None:
            pin.release()

    def tomemory(self):
        """The window's own memory as a writable memoryview of bytes (valid until Free)."""
        base, size = self.Get_attr(WIN_BASE), self.Get_attr(WIN_SIZE)
        if not size:
            return memoryview(bytearray(0))
        return memoryview((ctypes.c_char * size).from_address(base)).cast("B")

    def Get_attr(self, keyval):
        """A predefined attribute: WIN_BASE (address), WIN_SIZE, WIN_DISP_UNIT,
        WIN_CREATE_FLAVOR, WIN_MODEL; None if it is not set."""
        value, flag = c_void_p(), c_int(0)
        check(lib.MPI_Win_get_attr(self._h, int(keyval), byref(value), byref(flag)))
        if not flag.value:
            return None
        if keyval == WIN_BASE:
            return ctypes.cast(value, c_void_p).value or 0
        # The other predefined attributes point at an integer (MPI_Aint for the size).
        if keyval == WIN_SIZE:
            return ctypes.cast(value, POINTER(c_aint))[0]
        return ctypes.cast(value, POINTER(c_int))[0]

    # -- communication -------------------------------------------------------------------

    def _origin(self, spec, writable):
        m = message(spec, writable=writable)
        self._held.append(m)
        return m

    @staticmethod
    def _target(target, origin):
        if target is None:
            return 0, origin.count, origin.handle
        if isinstance(target, int):
            return target, origin.count, origin.handle
        disp, count, datatype = target
        from ._buffer import to_datatype
        return int(disp), int(count), to_datatype(datatype).handle

    def Put(self, origin, target_rank, target=None):
        o = self._origin(origin, writable=False)
        disp, count, dt = self._target(target, o)
        check(lib.MPI_Put(o.addr, o.count, o.handle, target_rank, disp, count, dt, self._h))

    def Get(self, origin, target_rank, target=None):
        o = self._origin(origin, writable=True)
        disp, count, dt = self._target(target, o)
        check(lib.MPI_Get(o.addr, o.count, o.handle, target_rank, disp, count, dt, self._h))

    def Accumulate(self, origin, target_rank, target=None, op=None):
        from . import MPI
        op = MPI.SUM if op is None else op
        o = self._origin(origin, writable=False)
        disp, count, dt = self._target(target, o)
        check(lib.MPI_Accumulate(o.addr, o.count, o.handle, target_rank, disp, count, dt,
                                 _op(op), self._h))

    def Get_accumulate(self, origin, result, target_rank, target=None, op=None):
        from . import MPI
        op = MPI.SUM if op is None else op
        o = self._origin(origin, writable=False)
        r = self._origin(result, writable=True)
        disp, count, dt = self._target(target, r)
        check(lib.MPI_Get_accumulate(o.addr, o.count, o.handle, r.addr, r.count, r.handle,
                                     target_rank, disp, count, dt, _op(op), self._h))

    def Fetch_and_op(self, origin, result, target_rank, target_disp=0, op=None):
        from . import MPI
        op = MPI.SUM if op is None else op
        o = self._origin(origin, writable=False)
        r = self._origin(result, writable=True)
        check(lib.MPI_Fetch_and_op(o.addr, r.addr, r.handle, target_rank, int(target_disp),
                                   _op(op), self._h))

    def Compare_and_swap(self, origin, compare, result, target_rank, target_disp=0):
        o = self._origin(origin, writable=False)
        c = self._origin(compare, writable=False)
        r = self._origin(result, writable=True)
        check(lib.MPI_Compare_and_swap(o.addr, c.addr, r.addr, r.handle, target_rank,
                                       int(target_disp), self._h))

    # -- synchronization -----------------------------------------------------------------

    def _release_held(self):
        held, self._held = self._held, []
        for m in held:
            m.release()

    def _sync(self, code, release=True):
        if release:
            self._release_held()
        check(code)

    def Fence(self, assertion=0):
        self._sync(lib.MPI_Win_fence(int(assertion), self._h))

    def Lock(self, rank, lock_type=LOCK_EXCLUSIVE, assertion=0):
        check(lib.MPI_Win_lock(int(lock_type), int(rank), int(assertion), self._h))

    def Unlock(self, rank):
        self._sync(lib.MPI_Win_unlock(int(rank), self._h))

    def Lock_all(self, assertion=0):
        check(lib.MPI_Win_lock_all(int(assertion), self._h))

    def Unlock_all(self):
        self._sync(lib.MPI_Win_unlock_all(self._h))

    def Flush(self, rank):
        self._sync(lib.MPI_Win_flush(int(rank), self._h))

    def Flush_all(self):
        self._sync(lib.MPI_Win_flush_all(self._h))

    def Flush_local(self, rank):
        self._sync(lib.MPI_Win_flush_local(int(rank), self._h))

    def Flush_local_all(self):
        self._sync(lib.MPI_Win_flush_local_all(self._h))

    def Sync(self):
        check(lib.MPI_Win_sync(self._h))


def _op(op):
    if not isinstance(op, Op):
        raise TypeError(f"expected an MPI.Op, got {type(op).__name__}")
    return op.handle
