"""``MPI.Comm`` / ``MPI.Intracomm``: communicator management, the buffer methods (capitalized,
NumPy arrays or ``[buf, count, datatype]`` specs, straight onto libmpi) and the object methods
(lower-case, pickled objects through the custom datatype, one message per object).

Each communicator carries a private duplicate, made when it is, on which the object collectives
run (see ``_objcoll``).
"""

import ctypes

from . import _objcoll, _pickled
from ._buffer import message
from ._errors import check
from ._libmpi import (ANY_SOURCE, ANY_TAG, COMM_NULL, COMM_SELF, COMM_WORLD, ERRORS_RETURN,
                      IN_PLACE_ADDR, REQUEST_NULL, MPI_Status, lib)
from ._request import Message, Request
from ._status import c_status
from ._types import PREDEFINED_OPS, Op

SUM = PREDEFINED_OPS["SUM"]


class InPlaceType(int):
    """Type of ``MPI.IN_PLACE``."""

    def __repr__(self):
        return "IN_PLACE"


class BottomType(int):
    """Type of ``MPI.BOTTOM``."""

    def __repr__(self):
        return "BOTTOM"


IN_PLACE = InPlaceType(IN_PLACE_ADDR)
BOTTOM = BottomType(0)


def _is_in_place(buf):
    return isinstance(buf, InPlaceType)


class Errhandler:
    __slots__ = ("handle", "name")

    def __init__(self, handle, name):
        self.handle = handle
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Errhandler) and other.handle == self.handle

    def __hash__(self):
        return hash(("Errhandler", self.handle))

    def __repr__(self):
        return f"<mpicd.MPI.Errhandler {self.name}>"


def _op_handle(op):
    if not isinstance(op, Op):
        raise TypeError(f"expected an MPI.Op, got {type(op).__name__}")
    return op.handle


class Comm:
    """A communicator (mpi4py's names and signatures)."""

    __slots__ = ("_h", "_coll", "_rank", "_size", "__weakref__")

    def __init__(self, handle=COMM_NULL, coll=None):
        if isinstance(handle, Comm):  # MPI.Comm(comm): another reference to the same handle
            handle, coll = handle._h, handle._coll
        self._h = int(handle)
        self._coll = coll
        self._rank = None
        self._size = None

    # -- identity ------------------------------------------------------------------------

    @property
    def handle(self):
        return self._h

    def __bool__(self):
        return self._h != COMM_NULL

    def __eq__(self, other):
        return isinstance(other, Comm) and other._h == self._h

    def __hash__(self):
        return hash(("Comm", self._h))

    def __repr__(self):
        return f"<mpicd.MPI.{type(self).__name__} {self._h:#x}>"

    # -- management ----------------------------------------------------------------------

    def _setup(self):
        """Sets MPI_ERRORS_RETURN and makes the private duplicate (collective)."""
        check(lib.MPI_Comm_set_errhandler(self._h, ERRORS_RETURN))
        coll = ctypes.c_void_p(0)
        check(lib.MPI_Comm_dup(self._h, ctypes.byref(coll)))
        self._coll = coll.value
        return self

    def Get_rank(self):
        r = ctypes.c_int(0)
        check(lib.MPI_Comm_rank(self._h, ctypes.byref(r)))
        return r.value

    def Get_size(self):
        n = ctypes.c_int(0)
        check(lib.MPI_Comm_size(self._h, ctypes.byref(n)))
        return n.value

    @property
    def rank(self):
        if self._rank is None:
            self._rank = self.Get_rank()
        return self._rank

    @property
    def size(self):
        if self._size is None:
            self._size = self.Get_size()
        return self._size

    def Dup(self, info=None):
        new = ctypes.c_void_p(0)
        check(lib.MPI_Comm_dup(self._h, ctypes.byref(new)))
        return Intracomm(new.value)._setup()

    Clone = Dup

    def Split(self, color=0, key=0):
        new = ctypes.c_void_p(0)
        check(lib.MPI_Comm_split(self._h, color, key, ctypes.byref(new)))
        if (new.value or COMM_NULL) == COMM_NULL:
            return Intracomm(COMM_NULL)
        return Intracomm(new.value)._setup()

    def Free(self):
        if self._h in (COMM_NULL, COMM_WORLD, COMM_SELF):
            from ._errors import Exception as MPIException

            raise MPIException(5, "COMM_NULL, COMM_WORLD and COMM_SELF cannot be freed")
        if self._coll is not None:
            coll = ctypes.c_void_p(self._coll)
            check(lib.MPI_Comm_free(ctypes.byref(coll)))
            self._coll = None
        h = ctypes.c_void_p(self._h)
        check(lib.MPI_Comm_free(ctypes.byref(h)))
        self._h = COMM_NULL
        self._rank = self._size = None

    def Compare(self, comm):
        r = ctypes.c_int(0)
        check(lib.MPI_Comm_compare(self._h, comm._h, ctypes.byref(r)))
        return r.value

    def Abort(self, errorcode=0):
        check(lib.MPI_Abort(self._h, errorcode))

    def Set_errhandler(self, errhandler):
        check(lib.MPI_Comm_set_errhandler(self._h, errhandler.handle))

    def Get_errhandler(self):
        from . import MPI

        e = ctypes.c_void_p(0)
        check(lib.MPI_Comm_get_errhandler(self._h, ctypes.byref(e)))
        for x in (MPI.ERRORS_RETURN, MPI.ERRORS_ARE_FATAL, MPI.ERRORS_ABORT):
            if x.handle == e.value:
                return x
        return Errhandler(e.value, f"errhandler {e.value:#x}")

    def Get_attr(self, keyval):
        """A predefined attribute (``MPI.TAG_UB``, ...), or None."""
        ptr = ctypes.c_void_p(0)
        flag = ctypes.c_int(0)
        check(lib.MPI_Comm_get_attr(self._h, keyval, ctypes.byref(ptr), ctypes.byref(flag)))
        if not flag.value or not ptr.value:
            return None
        return ctypes.c_int.from_address(ptr.value).value

    def Is_intra(self):
        return True

    def Is_inter(self):
        return False

    # -- buffers: point to point ---------------------------------------------------------

    def _send(self, fn, buf, dest, tag):
        m = message(buf, writable=False)
        try:
            code = fn(m.addr, m.count, m.handle, dest, tag, self._h)
        finally:
            m.release()
        check(code)

    def Send(self, buf, dest, tag=0):
        self._send(lib.MPI_Send, buf, dest, tag)

    def Ssend(self, buf, dest, tag=0):
        self._send(lib.MPI_Ssend, buf, dest, tag)

    def _isend(self, fn, buf, dest, tag):
        m = message(buf, writable=False)
        req = ctypes.c_void_p(REQUEST_NULL)
        code = fn(m.addr, m.count, m.handle, dest, tag, self._h, ctypes.byref(req))
        if code != 0:
            m.release()
            check(code)
        return Request(req.value, msgs=[m])

    def Isend(self, buf, dest, tag=0):
        return self._isend(lib.MPI_Isend, buf, dest, tag)

    def Issend(self, buf, dest, tag=0):
        return self._isend(lib.MPI_Issend, buf, dest, tag)

    def Recv(self, buf, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        m = message(buf, writable=True)
        try:
            code = lib.MPI_Recv(m.addr, m.count, m.handle, source, tag, self._h,
                                c_status(status))
        finally:
            m.release()
        check(code)

    def Irecv(self, buf, source=ANY_SOURCE, tag=ANY_TAG):
        m = message(buf, writable=True)
        req = ctypes.c_void_p(REQUEST_NULL)
        code = lib.MPI_Irecv(m.addr, m.count, m.handle, source, tag, self._h, ctypes.byref(req))
        if code != 0:
            m.release()
            check(code)
        return Request(req.value, msgs=[m])

    def Sendrecv(self, sendbuf, dest, sendtag=0, recvbuf=None, source=ANY_SOURCE,
                 recvtag=ANY_TAG, status=None):
        s = message(sendbuf, writable=False)
        try:
            r = message(recvbuf, writable=True)
        except BaseException:
            s.release()
            raise
        try:
            code = lib.MPI_Sendrecv(s.addr, s.count, s.handle, dest, sendtag, r.addr, r.count,
                                    r.handle, source, recvtag, self._h, c_status(status))
        finally:
            s.release()
            r.release()
        check(code)

    def Probe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        check(lib.MPI_Probe(source, tag, self._h, c_status(status)))
        return True

    def Iprobe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        flag = ctypes.c_int(0)
        check(lib.MPI_Iprobe(source, tag, self._h, ctypes.byref(flag), c_status(status)))
        return bool(flag.value)

    def Mprobe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        msg = Message()
        check(lib.MPI_Mprobe(source, tag, self._h, ctypes.byref(msg._h), c_status(status)))
        return msg

    def Improbe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        msg = Message()
        flag = ctypes.c_int(0)
        check(lib.MPI_Improbe(source, tag, self._h, ctypes.byref(flag), ctypes.byref(msg._h),
                              c_status(status)))
        return msg if flag.value else None

    # -- buffers: collectives ------------------------------------------------------------

    def Barrier(self):
        check(lib.MPI_Barrier(self._h))

    def Bcast(self, buf, root=0):
        m = message(buf, writable=self.rank != root)
        try:
            code = lib.MPI_Bcast(m.addr, m.count, m.handle, root, self._h)
        finally:
            m.release()
        check(code)

    def _recv_side(self, recvbuf, significant, blocks=1):
        if significant and recvbuf is not None:
            return message(recvbuf, writable=True, blocks=blocks)
        return message(None, writable=True)

    def Reduce(self, sendbuf, recvbuf, op=SUM, root=0):
        at_root = self.rank == root
        r = self._recv_side(recvbuf, at_root)
        try:
            if _is_in_place(sendbuf):
                addr, count, dtype = IN_PLACE_ADDR, r.count, r.handle
                s = None
            else:
                s = message(sendbuf, writable=False)
                addr, count, dtype = s.addr, s.count, s.handle
            try:
                code = lib.MPI_Reduce(addr, r.addr, count, dtype, _op_handle(op), root, self._h)
            finally:
                if s is not None:
                    s.release()
        finally:
            r.release()
        check(code)

    def Allreduce(self, sendbuf, recvbuf, op=SUM):
        r = message(recvbuf, writable=True)
        try:
            if _is_in_place(sendbuf):
                addr, s = IN_PLACE_ADDR, None
            else:
                s = message(sendbuf, writable=False)
                addr = s.addr
            try:
                code = lib.MPI_Allreduce(addr, r.addr, r.count, r.handle, _op_handle(op),
                                         self._h)
            finally:
                if s is not None:
                    s.release()
        finally:
            r.release()
        check(code)

    def Gather(self, sendbuf, recvbuf, root=0):
        at_root = self.rank == root
        r = self._recv_side(recvbuf, at_root, blocks=self.size)
        s = None
        try:
            if _is_in_place(sendbuf):
                saddr, scount, stype = IN_PLACE_ADDR, r.count, r.handle
            else:
                s = message(sendbuf, writable=False)
                saddr, scount, stype = s.addr, s.count, s.handle
            rcount, rtype = (r.count, r.handle) if at_root else (scount, stype)
            code = lib.MPI_Gather(saddr, scount, stype, r.addr, rcount, rtype, root, self._h)
        finally:
            r.release()
            if s is not None:
                s.release()
        check(code)

    def Scatter(self, sendbuf, recvbuf, root=0):
        at_root = self.rank == root
        if at_root:
            s = message(sendbuf, writable=False, blocks=self.size)
        else:
            s = message(None, writable=False)
        r = None
        try:
            if _is_in_place(recvbuf):
                raddr, rcount, rtype = IN_PLACE_ADDR, s.count, s.handle
            else:
                r = message(recvbuf, writable=True)
                raddr, rcount, rtype = r.addr, r.count, r.handle
            scount, stype = (s.count, s.handle) if at_root else (rcount, rtype)
            code = lib.MPI_Scatter(s.addr, scount, stype, raddr, rcount, rtype, root, self._h)
        finally:
            s.release()
            if r is not None:
                r.release()
        check(code)

    def Allgather(self, sendbuf, recvbuf):
        r = message(recvbuf, writable=True, blocks=self.size)
        s = None
        try:
            if _is_in_place(sendbuf):
                saddr, scount, stype = IN_PLACE_ADDR, r.count, r.handle
            else:
                s = message(sendbuf, writable=False)
                saddr, scount, stype = s.addr, s.count, s.handle
            code = lib.MPI_Allgather(saddr, scount, stype, r.addr, r.count, r.handle, self._h)
        finally:
            r.release()
            if s is not None:
                s.release()
        check(code)

    def Alltoall(self, sendbuf, recvbuf):
        r = message(recvbuf, writable=True, blocks=self.size)
        s = None
        try:
            if _is_in_place(sendbuf):
                saddr, scount, stype = IN_PLACE_ADDR, r.count, r.handle
            else:
                s = message(sendbuf, writable=False, blocks=self.size)
                saddr, scount, stype = s.addr, s.count, s.handle
            code = lib.MPI_Alltoall(saddr, scount, stype, r.addr, r.count, r.handle, self._h)
        finally:
            r.release()
            if s is not None:
                s.release()
        check(code)

    # -- objects: point to point ---------------------------------------------------------

    def _send_obj(self, fn, obj, dest, tag):
        parts = _pickled.dumps(obj)  # an unpicklable object raises here, before any send
        op = _pickled.SendOp(parts)
        key = op.register()
        code = fn(key, 1, _pickled.BLOCKING_TYPE, dest, tag, self._h)
        op.unregister()  # complete (or failed): the blocking type has no free callback
        if code != 0:
            op.raise_error(code)

    def send(self, obj, dest, tag=0):
        """Sends a pickled object (its large buffers out of band, in the same message)."""
        self._send_obj(lib.MPI_Send, obj, dest, tag)

    def ssend(self, obj, dest, tag=0):
        self._send_obj(lib.MPI_Ssend, obj, dest, tag)

    def _isend_obj(self, fn, obj, dest, tag):
        parts = _pickled.dumps(obj)
        op = _pickled.SendOp(parts)
        key = op.register()
        req = ctypes.c_void_p(REQUEST_NULL)
        code = fn(key, 1, _pickled.OBJECT_TYPE, dest, tag, self._h, ctypes.byref(req))
        if code != 0:
            op.unregister()
            op.raise_error(code)
        return Request(req.value, op=op)

    def isend(self, obj, dest, tag=0):
        """Starts sending an object. Its buffers are sent from their own memory: do not modify
        them until the request completes."""
        return self._isend_obj(lib.MPI_Isend, obj, dest, tag)

    def issend(self, obj, dest, tag=0):
        return self._isend_obj(lib.MPI_Issend, obj, dest, tag)

    def recv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        """Receives an object of any size (``buf`` is accepted for mpi4py compatibility and
        ignored: the buffers are allocated from the message's own shape)."""
        op = _pickled.RecvOp()
        key = op.register()
        st = MPI_Status() if status is not None else None
        code = lib.MPI_Recv(key, 1, _pickled.BLOCKING_TYPE, source, tag, self._h, st)
        op.unregister()
        if code != 0:
            op.raise_error(code)
        if st is not None:
            status._fill(st)
        return op.result()

    def irecv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG):
        """Starts receiving an object of any size; ``Request.wait()`` returns it."""
        op = _pickled.RecvOp()
        key = op.register()
        req = ctypes.c_void_p(REQUEST_NULL)
        code = lib.MPI_Irecv(key, 1, _pickled.OBJECT_TYPE, source, tag, self._h,
                             ctypes.byref(req))
        if code != 0:
            op.unregister()
            op.raise_error(code)
        return Request(req.value, op=op)

    def sendrecv(self, sendobj, dest, sendtag=0, recvbuf=None, source=ANY_SOURCE,
                 recvtag=ANY_TAG, status=None):
        parts = _pickled.dumps(sendobj)
        sop = _pickled.SendOp(parts)
        rop = _pickled.RecvOp()
        skey, rkey = sop.register(), rop.register()
        st = MPI_Status()
        T = _pickled.BLOCKING_TYPE
        code = lib.MPI_Sendrecv(skey, 1, T, dest, sendtag, rkey, 1, T, source, recvtag,
                                self._h, ctypes.byref(st))
        sop.unregister()
        rop.unregister()
        if code != 0:
            (rop if rop.error is not None else sop).raise_error(code)
        if status is not None:
            status._fill(st)
        return rop.result()

    def probe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        return self.Probe(source, tag, status)

    def iprobe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        return self.Iprobe(source, tag, status)

    def mprobe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        return self.Mprobe(source, tag, status)

    def improbe(self, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        return self.Improbe(source, tag, status)

    # -- objects: collectives ------------------------------------------------------------

    def barrier(self):
        self.Barrier()

    def bcast(self, obj, root=0):
        return _objcoll.bcast(self, obj, root)

    def gather(self, sendobj, root=0):
        return _objcoll.gather(self, sendobj, root)

    def scatter(self, sendobj, root=0):
        return _objcoll.scatter(self, sendobj, root)

    def allgather(self, sendobj):
        return _objcoll.allgather(self, sendobj)

    def alltoall(self, sendobj):
        return _objcoll.alltoall(self, sendobj)

    def reduce(self, sendobj, op=SUM, root=0):
        return _objcoll.reduce(self, sendobj, op, root)

    def allreduce(self, sendobj, op=SUM):
        return _objcoll.allreduce(self, sendobj, op)


class Intracomm(Comm):
    """An intra-communicator (every communicator of mpicd is one)."""

    __slots__ = ()
