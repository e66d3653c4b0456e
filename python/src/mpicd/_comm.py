"""``MPI.Comm`` / ``MPI.Intracomm``: communicator management, the buffer methods (capitalized,
NumPy arrays or ``[buf, count, datatype]`` specs, straight onto libmpi) and the object methods
(lower-case, pickled objects through the custom datatype, one message per object).

Each communicator carries a private duplicate, made when it is, on which the object collectives
run (see ``_objcoll``).
"""

import ctypes

from . import _fast, _objcoll, _objops, _objparts, _pickled
from ._buffer import message
from ._errors import check
from ._libmpi import (ANY_SOURCE, ANY_TAG, COMM_NULL, COMM_SELF, COMM_WORLD, ERRHANDLER_NULL,
                      ERRORS_RETURN, IN_PLACE_ADDR, MPI_Status, lib)
from ._request import Message, Request
from ._status import c_status
from ._types import PREDEFINED_OPS, Handle, Op

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


class Errhandler(Handle):
    __slots__ = ("handle", "name")
    _NULL = ERRHANDLER_NULL

    def __init__(self, handle, name):
        self.handle = handle
        self.name = name


class _Held:
    """The buffers of one call, each released when the call returns, whatever happens: ``with
    _Held() as held: m = held(message(...))``."""

    __slots__ = ("msgs",)

    def __init__(self):
        self.msgs = []

    def __call__(self, m):
        self.msgs.append(m)
        return m

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for m in self.msgs:
            m.release()


def _in_place_or(held, buf, other, writable, blocks=1):
    """``(address, count, datatype)`` of one side of a collective: MPI_IN_PLACE with the
    other side's count and datatype, or the buffer (held for the call)."""
    if _is_in_place(buf):
        return IN_PLACE_ADDR, other.count, other.handle
    m = held(message(buf, writable=writable, blocks=blocks))
    return m.addr, m.count, m.handle


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
        self._coll_handle()
        return self

    def _coll_handle(self):
        """The private duplicate the object collectives run on, made at the first of them
        when the communicator came without it (``Ishrink``): every member makes it then, in
        the same order, as collectives require."""
        if self._coll is None:
            coll = ctypes.c_void_p(0)
            check(lib.MPI_Comm_dup(self._h, ctypes.byref(coll)))
            self._coll = coll.value
        return self._coll

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

    # -- fault tolerance (ULFM, mpi4py's names) ----------------------------------------

    def Revoke(self):
        """Revokes this communicator on all its processes (not collective): every later or
        pending operation on it fails with ``ERR_REVOKED``, but for the calls below."""
        if self._coll is not None:
            check(lib.MPIX_Comm_revoke(self._coll))
        check(lib.MPIX_Comm_revoke(self._h))

    def Is_revoked(self):
        flag = ctypes.c_int(0)
        check(lib.MPIX_Comm_is_revoked(self._h, ctypes.byref(flag)))
        return bool(flag.value)

    def Agree(self, flag):
        """The bitwise AND of ``flag`` over the live processes, agreed although some fail.
        Raises ``ERR_PROC_FAILED`` if one failed whose failure was not acknowledged."""
        f = ctypes.c_int(int(flag))
        check(lib.MPIX_Comm_agree(self._h, ctypes.byref(f)))
        return f.value

    def Iagree(self, flag):
        """``Agree`` without waiting: ``flag`` is a writable buffer of one C int (mpi4py's
        form), which holds the agreed value once the returned request completes."""
        from ._request import Request

        out = _AgreedFlag(flag)
        req = ctypes.c_void_p(0)
        check(lib.MPIX_Comm_iagree(self._h, ctypes.byref(out.value), ctypes.byref(req)))
        return Request(req.value, msgs=[out])

    def Shrink(self):
        """A new communicator of the live processes, in their order here (collective over
        them; works on a revoked communicator)."""
        new = ctypes.c_void_p(0)
        check(lib.MPIX_Comm_shrink(self._h, ctypes.byref(new)))
        return Intracomm(new.value)._setup()

    def Ishrink(self):
        """``Shrink`` without waiting: the new communicator and the request; the communicator
        is usable once the request completed."""
        from ._request import Request

        new = Intracomm(COMM_NULL)
        out = _ShrunkComm(new)
        req = ctypes.c_void_p(0)
        check(lib.MPIX_Comm_ishrink(self._h, ctypes.byref(out.handle), ctypes.byref(req)))
        return new, Request(req.value, msgs=[out])

    def Get_failed(self):
        """The ranks in this communicator of the processes known failed, in the order they
        were found (mpi4py returns them as a ``Group``; mpicd's Python has no groups)."""
        failed, mine = ctypes.c_void_p(0), ctypes.c_void_p(0)
        check(lib.MPIX_Comm_get_failed(self._h, ctypes.byref(failed)))
        try:
            check(lib.MPI_Comm_group(self._h, ctypes.byref(mine)))
            n = ctypes.c_int(0)
            check(lib.MPI_Group_size(failed, ctypes.byref(n)))
            ranks = (ctypes.c_int * max(n.value, 1))(*range(n.value))
            out = (ctypes.c_int * max(n.value, 1))()
            if n.value:
                check(lib.MPI_Group_translate_ranks(failed, n.value, ranks, mine, out))
            return list(out[: n.value])
        finally:
            for g in (failed, mine):
                if g.value:
                    lib.MPI_Group_free(ctypes.byref(g))

    def Ack_failed(self, num_to_ack=None):
        """Acknowledges the first ``num_to_ack`` failed processes (all when ``None``):
        receives from ``ANY_SOURCE`` no longer fail for them. Returns how many are
        acknowledged."""
        count = (1 << 31) - 1 if num_to_ack is None else int(num_to_ack)
        acked = ctypes.c_int(0)
        check(lib.MPIX_Comm_ack_failed(self._h, count, ctypes.byref(acked)))
        return acked.value

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
        message(buf, writable=False).run(fn, dest, tag, self._h)

    def Send(self, buf, dest, tag=0):
        self._send(lib.MPI_Send, buf, dest, tag)

    def Ssend(self, buf, dest, tag=0):
        self._send(lib.MPI_Ssend, buf, dest, tag)

    def _isend(self, fn, buf, dest, tag):
        m = message(buf, writable=False)
        return Request(m.start(fn, dest, tag, self._h), msgs=[m])

    def Isend(self, buf, dest, tag=0):
        return self._isend(lib.MPI_Isend, buf, dest, tag)

    def Issend(self, buf, dest, tag=0):
        return self._isend(lib.MPI_Issend, buf, dest, tag)

    def Recv(self, buf, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        st = c_status(status)
        message(buf, writable=True).run(lib.MPI_Recv, source, tag, self._h, st)

    def Irecv(self, buf, source=ANY_SOURCE, tag=ANY_TAG):
        m = message(buf, writable=True)
        return Request(m.start(lib.MPI_Irecv, source, tag, self._h), msgs=[m])

    def Sendrecv(self, sendbuf, dest, sendtag=0, recvbuf=None, source=ANY_SOURCE,
                 recvtag=ANY_TAG, status=None):
        with _Held() as held:
            s = held(message(sendbuf, writable=False))
            r = held(message(recvbuf, writable=True))
            code = lib.MPI_Sendrecv(s.addr, s.count, s.handle, dest, sendtag, r.addr, r.count,
                                    r.handle, source, recvtag, self._h, c_status(status))
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
        message(buf, writable=self.rank != root).run(lib.MPI_Bcast, root, self._h)

    def _recv_side(self, recvbuf, significant, blocks=1):
        if significant and recvbuf is not None:
            return message(recvbuf, writable=True, blocks=blocks)
        return message(None, writable=True)

    def Reduce(self, sendbuf, recvbuf, op=SUM, root=0):
        with _Held() as held:
            r = held(self._recv_side(recvbuf, self.rank == root))
            addr, count, dtype = _in_place_or(held, sendbuf, r, writable=False)
            code = lib.MPI_Reduce(addr, r.addr, count, dtype, _op_handle(op), root, self._h)
        check(code)

    def Allreduce(self, sendbuf, recvbuf, op=SUM):
        with _Held() as held:
            r = held(message(recvbuf, writable=True))
            addr = _in_place_or(held, sendbuf, r, writable=False)[0]
            code = lib.MPI_Allreduce(addr, r.addr, r.count, r.handle, _op_handle(op), self._h)
        check(code)

    def Gather(self, sendbuf, recvbuf, root=0):
        at_root = self.rank == root
        with _Held() as held:
            r = held(self._recv_side(recvbuf, at_root, blocks=self.size))
            saddr, scount, stype = _in_place_or(held, sendbuf, r, writable=False)
            rcount, rtype = (r.count, r.handle) if at_root else (scount, stype)
            code = lib.MPI_Gather(saddr, scount, stype, r.addr, rcount, rtype, root, self._h)
        check(code)

    def Scatter(self, sendbuf, recvbuf, root=0):
        at_root = self.rank == root
        with _Held() as held:
            s = held(message(sendbuf if at_root else None, writable=False, blocks=self.size))
            raddr, rcount, rtype = _in_place_or(held, recvbuf, s, writable=True)
            scount, stype = (s.count, s.handle) if at_root else (rcount, rtype)
            code = lib.MPI_Scatter(s.addr, scount, stype, raddr, rcount, rtype, root, self._h)
        check(code)

    def Allgather(self, sendbuf, recvbuf):
        with _Held() as held:
            r = held(message(recvbuf, writable=True, blocks=self.size))
            saddr, scount, stype = _in_place_or(held, sendbuf, r, writable=False)
            code = lib.MPI_Allgather(saddr, scount, stype, r.addr, r.count, r.handle, self._h)
        check(code)

    def Alltoall(self, sendbuf, recvbuf):
        with _Held() as held:
            r = held(message(recvbuf, writable=True, blocks=self.size))
            saddr, scount, stype = _in_place_or(held, sendbuf, r, writable=False,
                                                blocks=self.size)
            code = lib.MPI_Alltoall(saddr, scount, stype, r.addr, r.count, r.handle, self._h)
        check(code)

    # -- objects: point to point ---------------------------------------------------------

    def _send_obj(self, fn, obj, dest, tag):
        parts = _objparts.dumps(obj)  # an unpicklable object raises here, before any send
        _objops.SendOp(parts).run(fn, dest, tag, self._h)

    def send(self, obj, dest, tag=0):
        """Sends a pickled object (its large buffers out of band, in the same message)."""
        if _fast.ext is not None:
            return _fast.send(_fast.SEND, self._h, obj, dest, tag)
        self._send_obj(lib.MPI_Send, obj, dest, tag)

    def ssend(self, obj, dest, tag=0):
        if _fast.ext is not None:
            return _fast.send(_fast.SSEND, self._h, obj, dest, tag)
        self._send_obj(lib.MPI_Ssend, obj, dest, tag)

    def _isend_obj(self, fn, obj, dest, tag):
        op = _objops.SendOp(_objparts.dumps(obj))
        return Request(op.start(fn, dest, tag, self._h), op=op)

    def isend(self, obj, dest, tag=0):
        """Starts sending an object. Its buffers are sent from their own memory: do not modify
        them until the request completes."""
        return self._isend_obj(lib.MPI_Isend, obj, dest, tag)

    def issend(self, obj, dest, tag=0):
        return self._isend_obj(lib.MPI_Issend, obj, dest, tag)

    def recv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG, status=None):
        """Receives an object of any size (``buf`` is accepted for mpi4py compatibility and
        ignored: the buffers are allocated from the message's own shape)."""
        if _fast.ext is not None:
            return _fast.recv(self._h, source, tag, status)
        op = _objops.RecvOp()
        st = MPI_Status() if status is not None else None
        op.run(lib.MPI_Recv, source, tag, self._h, st)
        if st is not None:
            status._fill(st)
        return op.result()

    def irecv(self, buf=None, source=ANY_SOURCE, tag=ANY_TAG):
        """Starts receiving an object of any size; ``Request.wait()`` returns it."""
        op = _objops.RecvOp()
        return Request(op.start(lib.MPI_Irecv, source, tag, self._h), op=op)

    def sendrecv(self, sendobj, dest, sendtag=0, recvbuf=None, source=ANY_SOURCE,
                 recvtag=ANY_TAG, status=None):
        if _fast.ext is not None:
            return _fast.sendrecv(self._h, sendobj, dest, sendtag, source, recvtag, status)
        parts = _objparts.dumps(sendobj)
        sop = _objops.SendOp(parts)
        rop = _objops.RecvOp()
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


class _AgreedFlag:
    """The C int an ``MPIX_Comm_iagree`` reads and writes, copied into the caller's buffer when
    its request completes (``release``, as the request's other kept objects)."""

    __slots__ = ("view", "value")

    def __init__(self, buf):
        view = memoryview(buf).cast("B")
        size = ctypes.sizeof(ctypes.c_int)
        if view.readonly or view.nbytes != size:
            raise ValueError(f"Iagree: the flag must be a writable buffer of {size} bytes")
        self.view = view
        self.value = ctypes.c_int.from_buffer_copy(view)

    def release(self):
        self.view[:] = bytes(self.value)


class _ShrunkComm:
    """Where an ``MPIX_Comm_ishrink`` writes the new handle, given to its ``Intracomm`` when
    the request completes (``release``)."""

    __slots__ = ("comm", "handle")

    def __init__(self, comm):
        self.comm = comm
        self.handle = ctypes.c_void_p(0)

    def release(self):
        if self.handle.value:
            self.comm._h = self.handle.value
            check(lib.MPI_Comm_set_errhandler(self.comm._h, ERRORS_RETURN))


class Intracomm(Comm):
    """An intra-communicator (every communicator of mpicd is one)."""

    __slots__ = ()
