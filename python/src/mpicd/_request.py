"""``MPI.Request`` and ``MPI.Message``.

A Request owns a libmpi request handle and what must outlive it: the pinned buffers of a buffer
operation, or the operation object of an object send/receive. ``Wait``/``Test`` complete it
(mpi4py's buffer-style names); ``wait``/``test`` also return the received object.
"""

import ctypes

from . import _fast, _objops, _pickled
from ._errors import Exception as MPIException
from ._errors import check
from ._libmpi import ANY_TAG, MESSAGE_NO_PROC, MESSAGE_NULL, PROC_NULL, REQUEST_NULL, MPI_Status, lib
from ._status import Status

# Buffers of requests freed while pending: kept until MPI_Finalize, since libmpi may still be
# using them and nothing tells Python when it stops.
_ORPHANS = []


class Request:
    """A pending operation (``MPI.REQUEST_NULL`` when there is none)."""

    __slots__ = ("_h", "_msgs", "_op", "_result", "__weakref__")

    def __init__(self, handle=REQUEST_NULL, msgs=(), op=None):
        self._h = ctypes.c_void_p(handle)
        self._msgs = list(msgs)
        self._op = op
        self._result = None

    # -- helpers ------------------------------------------------------------------------

    @property
    def handle(self):
        return self._h.value or 0

    def _active(self):
        return self.handle != REQUEST_NULL

    def _finish(self, code, c_status, status):
        """Bookkeeping once libmpi reported completion (handle is REQUEST_NULL)."""
        self._h.value = REQUEST_NULL
        for m in self._msgs:
            m.release()
        self._msgs = []
        op, self._op = self._op, None
        if status is not None and c_status is not None:
            status._fill(c_status)
        if code != 0:
            if op is not None:
                op.raise_error(code)
            raise MPIException(code)
        if isinstance(op, _objops.RecvOp):
            self._result = op.result()

    def _take(self):
        obj, self._result = self._result, None
        return obj

    # -- mpi4py's buffer-style completion ------------------------------------------------

    def _complete_inactive(self, status):
        """Whether the request is inactive: then it completes at once, with an empty status."""
        if self._active():
            return False
        if status is not None:
            status._fill(MPI_Status(PROC_NULL, ANY_TAG, 0))
        return True

    def Wait(self, status=None):
        """Waits for completion; returns True."""
        if self._complete_inactive(status):
            return True
        st = MPI_Status() if status is not None else None
        code = lib.MPI_Wait(ctypes.byref(self._h), ctypes.byref(st) if st is not None else None)
        self._finish(code, st, status)
        return True

    def Test(self, status=None):
        """Tests for completion; returns whether the operation completed."""
        if self._complete_inactive(status):
            return True
        st = MPI_Status()
        flag = ctypes.c_int(0)
        code = lib.MPI_Test(ctypes.byref(self._h), ctypes.byref(flag), ctypes.byref(st))
        if code != 0 or flag.value:
            self._finish(code, st, status)
            return True
        return False

    def Free(self):
        """Frees the handle; the operation still completes in the background."""
        if not self._active():
            return
        code = lib.MPI_Request_free(ctypes.byref(self._h))
        if self._msgs:
            _ORPHANS.append(self._msgs)
        self._msgs = []
        self._op = None  # the operation table keeps an object operation until it completes
        self._h.value = REQUEST_NULL
        check(code)

    def Cancel(self):
        check(lib.MPI_Cancel(ctypes.byref(self._h)))

    # -- mpi4py's object-style completion ------------------------------------------------

    def wait(self, status=None):
        """Waits for completion; returns the received object (None for a send)."""
        self.Wait(status)
        return self._take()

    def test(self, status=None):
        """Tests for completion; returns ``(flag, object)``."""
        if self.Test(status):
            return True, self._take()
        return False, None

    def cancel(self):
        self.Cancel()

    # -- many requests -------------------------------------------------------------------

    @staticmethod
    def Waitall(requests, statuses=None):
        """Waits for every request; raises the first error after all completed."""
        _each_then_raise(requests, lambda i, r: r.Wait(_status_at(statuses, i)))
        return True

    @staticmethod
    def waitall(requests, statuses=None):
        """Waits for every request; returns the list of received objects."""
        Request.Waitall(requests, statuses)
        return [r._take() for r in requests]

    @staticmethod
    def Testall(requests, statuses=None):
        """True (and all completed) if every request is complete, else False (none is)."""
        n = len(requests)
        arr = (ctypes.c_void_p * n)(*[r.handle for r in requests])
        sts = (MPI_Status * n)()
        flag = ctypes.c_int(0)
        code = lib.MPI_Testall(n, arr, ctypes.byref(flag), sts)
        if code != 0 and code != 19:  # MPI_ERR_IN_STATUS: per-request codes below
            raise MPIException(code)
        if not flag.value and code == 0:
            return False
        Request._complete_from(requests, arr, sts, statuses, code == 19)
        return True

    @staticmethod
    def testall(requests, statuses=None):
        if Request.Testall(requests, statuses):
            return True, [r._take() for r in requests]
        return False, None

    @staticmethod
    def _complete_from(requests, arr, sts, statuses, in_status):
        """Finishes each request that libmpi completed (its handle in ``arr`` changed)."""

        def finish(i, r):
            if r._active() and (arr[i] or 0) != r.handle:
                r._finish(sts[i].MPI_ERROR if in_status else 0, sts[i], _status_at(statuses, i))

        _each_then_raise(requests, finish)

    @staticmethod
    def Waitany(requests, status=None):
        """Waits for one request; returns its index (``MPI.UNDEFINED`` if none is active)."""
        n = len(requests)
        arr = (ctypes.c_void_p * n)(*[r.handle for r in requests])
        idx = ctypes.c_int(-1)
        st = MPI_Status()
        code = lib.MPI_Waitany(n, arr, ctypes.byref(idx), ctypes.byref(st))
        i = idx.value
        if 0 <= i < n:
            requests[i]._finish(code, st, status)
        else:
            check(code)
        return i

    @staticmethod
    def waitany(requests, status=None):
        i = Request.Waitany(requests, status)
        return i, (requests[i]._take() if 0 <= i < len(requests) else None)

    @staticmethod
    def Testany(requests, status=None):
        """Returns ``(index, flag)``."""
        n = len(requests)
        arr = (ctypes.c_void_p * n)(*[r.handle for r in requests])
        idx = ctypes.c_int(-1)
        flag = ctypes.c_int(0)
        st = MPI_Status()
        code = lib.MPI_Testany(n, arr, ctypes.byref(idx), ctypes.byref(flag), ctypes.byref(st))
        i = idx.value
        if 0 <= i < n:
            requests[i]._finish(code, st, status)
        else:
            check(code)
        return i, bool(flag.value)

    @staticmethod
    def testany(requests, status=None):
        i, flag = Request.Testany(requests, status)
        return i, flag, (requests[i]._take() if 0 <= i < len(requests) else None)

    def __bool__(self):
        return self._active()

    def __eq__(self, other):
        return isinstance(other, Request) and other.handle == self.handle

    def __hash__(self):
        return id(self)

    def __del__(self):
        # A request dropped while pending (``comm.isend(obj, 1)`` without a wait): free the
        # handle so libmpi completes it in the background. Errors (after finalize) are moot.
        try:
            if self._active():
                self.Free()
        except BaseException:  # noqa: BLE001
            pass


def _each_then_raise(requests, fn):
    """Calls ``fn(i, request)`` for every request; raises the first error once all were
    called."""
    first = None
    for i, r in enumerate(requests):
        try:
            fn(i, r)
        except BaseException as e:  # noqa: BLE001
            first = first or e
    if first is not None:
        raise first


def _status_at(statuses, i):
    """Entry ``i`` of a caller's list of statuses (grown as needed), or None without a list."""
    if statuses is None:
        return None
    while len(statuses) <= i:
        statuses.append(Status())
    return statuses[i]


class Message:
    """A message taken by ``mprobe``/``improbe``/``Mprobe``/``Improbe``."""

    __slots__ = ("_h",)

    def __init__(self, handle=MESSAGE_NULL):
        self._h = ctypes.c_void_p(handle)

    @property
    def handle(self):
        return self._h.value or 0

    def __bool__(self):
        return self.handle != MESSAGE_NULL

    def shape(self):
        """mpicd extension: ``(packed_bytes, [region lengths in bytes])`` of an object
        message, from ``MPIX_Message_shape``, before receiving it."""
        packed = ctypes.c_int64(0)
        count = ctypes.c_int64(0)
        check(lib.MPIX_Message_shape(self._h, ctypes.byref(packed), ctypes.byref(count), 0,
                                     None, None))
        n = count.value
        lens = (ctypes.c_int64 * max(n, 1))()
        types = (ctypes.c_void_p * max(n, 1))()
        check(lib.MPIX_Message_shape(self._h, ctypes.byref(packed), ctypes.byref(count), n,
                                     lens, types))
        return packed.value, [lens[i] * _pickled._type_size(types[i]) for i in range(n)]

    # -- objects ---------------------------------------------------------------------------

    def recv(self, status=None):
        """Receives the object of this message."""
        if self.handle == MESSAGE_NO_PROC:
            self._h.value = MESSAGE_NULL
            return None
        if _fast.ext is not None:
            return _fast.mrecv(self, status)
        op = _objops.RecvOp()
        st = MPI_Status() if status is not None else None
        op.run(lib.MPI_Mrecv, ctypes.byref(self._h), st)
        if st is not None:
            status._fill(st)
        return op.result()

    def irecv(self):
        """Starts receiving the object of this message; ``wait()`` returns it."""
        op = _objops.RecvOp()
        return Request(op.start(lib.MPI_Imrecv, ctypes.byref(self._h)), op=op)

    # -- buffers ---------------------------------------------------------------------------

    def Recv(self, buf, status=None):
        from ._buffer import message

        st = MPI_Status()
        message(buf, writable=True).run(lib.MPI_Mrecv, ctypes.byref(self._h), ctypes.byref(st))
        if status is not None:
            status._fill(st)

    def Irecv(self, buf):
        from ._buffer import message

        m = message(buf, writable=True)
        return Request(m.start(lib.MPI_Imrecv, ctypes.byref(self._h)), msgs=[m])
