"""The blocking object calls (``send``, ``ssend``, ``recv``, ``sendrecv``, ``Message.recv``)
through the compiled module ``_mpicd_fast`` when it is built, with the ctypes path of
``_pickled`` as the fallback.

``_mpicd_fast`` (``_mpicd_fast.c``, built by ``pip install`` when a C compiler and the Python
headers are there) calls libmpi directly and gives the custom datatype C callbacks, so that no
Python callback runs for a message whose stream has no out-of-band buffer (the receiver of one
that has calls ``_resize`` once, to allocate the regions from the receive pool). The messages
are the same as the ctypes path's (one per object, the stream as the packed part, the buffers
as regions): either side may use either path. The errors are the same too: an exception a
callback raises (an injected fault included) becomes the ``__cause__`` of the
``MPI.Exception``.

Measured at 1 KiB, ping-pong on 2 ranks: see python/README.md ("Compiled fast path").
``MPICD_PY_FAST=0`` turns the module off (the ctypes path for everything); ``ext`` is None then,
or when the module is not built.
"""

import ctypes
import os
import struct

from . import _objops, _objparts, _pickled
from ._libmpi import lib

ext = None
if os.environ.get("MPICD_PY_FAST", "1") != "0":
    try:
        from . import _mpicd_fast as ext
    except ImportError:  # not built (no compiler or headers at install): the ctypes path
        ext = None

SEND, SSEND = 0, 1  # the send kinds of _mpicd_fast.send
_Q = struct.Struct("q")
_NO_WORDS = (b"", b"", b"")


def _resize(packed, nregions, lens_addr, types_addr):
    """The receiver's allocation of a message with regions (called by the C resize callback):
    a RecvOp sized as the ctypes path sizes it, and its region arrays as packed words."""
    op = _objops.RecvOp()
    op.resize(packed, nregions, lens_addr, types_addr)
    if nregions == 1:
        b, n, t = op.one
        return op, _Q.pack(b), _Q.pack(n), _Q.pack(t)
    return op, op.bases, op.lens, op.types


def _addr(name):
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value


if ext is not None:
    ext.setup({name: _addr(name) for name in (
        "MPI_Send", "MPI_Ssend", "MPI_Recv", "MPI_Sendrecv", "MPI_Mrecv",
        "MPI_Type_create_custom", "MPIX_Type_custom_set_resize", "MPI_Type_free")},
        _pickled._fault, _resize)


def create_type():
    """Makes the extension's datatype (after MPI_Init); raises if libmpi refuses."""
    if ext is not None:
        code, _ = ext.create_type()
        if code:
            _raise(code, None)


def free_type():
    if ext is not None:
        ext.free_type()


def _raise(code, cause):
    from ._errors import Exception as MPIException

    exc = MPIException(code)
    if cause is not None:
        raise exc from cause
    raise exc


def _words(parts):
    """(stream, region count, bases, lens, types) of parts made by ``_objparts.dumps``."""
    n = parts.nregions
    if n == 0:
        return (parts.stream, 0) + _NO_WORDS
    if n == 1:
        b, length, t = parts.one
        return parts.stream, 1, _Q.pack(b), _Q.pack(length), _Q.pack(t)
    return parts.stream, n, parts.bases, parts.lens, parts.types


def _result(stream, op):
    """The received object: unpickled here without regions, by the RecvOp with them."""
    if op is not None:
        op.stream = stream
        op.stream_addr = 0
        return op.result()
    if stream is None:  # nothing received (MPI_PROC_NULL)
        return None
    return _pickled.unpickle(stream, ())


def send(kind, comm, obj, dest, tag):
    """``MPI_Send`` (SEND) or ``MPI_Ssend`` (SSEND) of one object on communicator ``comm``."""
    parts = _objparts.dumps(obj)  # an unpicklable object raises here, before any send
    code, cause = ext.send(kind, comm, dest, tag, *_words(parts), _pickled._faults or None)
    if code:
        _raise(code, cause)


def recv(comm, source, tag, status):
    """``MPI_Recv`` of one object; fills ``status`` (an MPI.Status or None) on success."""
    code, stream, op, cause = ext.recv(comm, source, tag,
                                       status.ob_mpi if status is not None else None,
                                       _pickled._faults or None)
    if code:
        _raise(code, cause)
    return _result(stream, op)


def sendrecv(comm, obj, dest, sendtag, source, recvtag, status):
    parts = _objparts.dumps(obj)
    (code, stream, op, cause), send_cause = ext.sendrecv(
        comm, dest, sendtag, *_words(parts), source, recvtag,
        status.ob_mpi if status is not None else None, _pickled._faults or None)
    if code:
        _raise(code, cause if cause is not None else send_cause)
    return _result(stream, op)


def mrecv(message, status):
    """``MPI_Mrecv`` of one object from ``message`` (an MPI.Message: its handle is updated)."""
    handle, (code, stream, op, cause) = ext.mrecv(
        message.handle, status.ob_mpi if status is not None else None, _pickled._faults or None)
    message._h.value = handle
    if code:
        _raise(code, cause)
    return _result(stream, op)
