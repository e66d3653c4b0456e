"""Object collectives (bcast, gather, scatter, allgather, alltoall, reduce, allreduce) built on
point-to-point object messages, because libmpi's collectives take predefined datatypes only.

They run on the communicator's private duplicate (made when the communicator is), so they can
never match a user's point-to-point message; every receive names its source, so the
non-overtaking rule keeps consecutive collectives apart without any sequence number. Each object
travels as one custom-typed message (stream + out-of-band regions); bcast forwards the received
stream and buffers down a binomial tree without unpickling and re-pickling them.

As in mpi4py, the objects returned are copies, the caller's own contribution included.
"""

import ctypes
import pickle

from . import _pickled
from ._libmpi import REQUEST_NULL, lib
from ._request import Request

TAG = 0


def _copy_parts(parts):
    """A private copy of an object given as parts (its buffers are copied once)."""
    return pickle.loads(parts.stream, buffers=[bytearray(b) for b in parts.buffers])


def _isend(parts, dest, h):
    op = _pickled.SendOp(parts)
    key = op.register()
    req = ctypes.c_void_p(REQUEST_NULL)
    code = lib.MPI_Isend(key, 1, _pickled.OBJECT_TYPE, dest, TAG, h, ctypes.byref(req))
    if code != 0:
        op.unregister()
        op.raise_error(code)
    return Request(req.value, op=op)


def _irecv(source, h):
    op = _pickled.RecvOp()
    key = op.register()
    req = ctypes.c_void_p(REQUEST_NULL)
    code = lib.MPI_Irecv(key, 1, _pickled.OBJECT_TYPE, source, TAG, h, ctypes.byref(req))
    if code != 0:
        op.unregister()
        op.raise_error(code)
    return Request(req.value, op=op), op


def _recv_op(source, h):
    op = _pickled.RecvOp()
    key = op.register()
    code = lib.MPI_Recv(key, 1, _pickled.BLOCKING_TYPE, source, TAG, h, None)
    op.unregister()  # complete (or failed): the blocking type has no free callback
    if code != 0:
        op.raise_error(code)
    return op


def _check_root(root, size):
    if not 0 <= root < size:
        from ._errors import Exception as MPIException

        raise MPIException(8, f"root {root} with {size} processes")  # MPI_ERR_ROOT


class PeerPicklingError:
    """Sent in place of an object its rank could not pickle, so that a collective fails on
    every rank instead of leaving the others waiting for a message that never comes."""

    def __init__(self, rank, text):
        self.rank = rank
        self.text = text


def _dumps(obj, rank):
    """``(parts, error)``: the object's parts, or a PeerPicklingError's and the local error."""
    try:
        return _pickled.dumps(obj), None
    except BaseException as e:  # noqa: BLE001 - re-raised by _raise_first
        return _pickled.dumps(PeerPicklingError(rank, f"{type(e).__name__}: {e}")), e


def _raise_first(local_error, items):
    if local_error is not None:
        raise local_error
    for x in items:
        if isinstance(x, PeerPicklingError):
            from ._errors import Exception as MPIException

            raise MPIException(16, f"rank {x.rank} could not pickle its object: {x.text}")


def bcast(comm, obj, root):
    h, rank, size = comm._coll, comm.rank, comm.size
    _check_root(root, size)
    vr = (rank - root) % size
    parts = error = None
    mask = 1
    while mask < size:
        if vr & mask:
            parts = _recv_op((rank - mask) % size, h).parts()
            break
        mask <<= 1
    if rank == root:
        parts, error = _dumps(obj, rank)
    mask >>= 1
    reqs = []
    while mask > 0:
        if vr + mask < size:
            reqs.append(_isend(parts, (rank + mask) % size, h))
        mask >>= 1
    Request.Waitall(reqs)
    result = _copy_parts(parts) if rank == root else _pickled.loads(parts)
    _raise_first(error, [result])
    return result


def gather(comm, sendobj, root):
    h, rank, size = comm._coll, comm.rank, comm.size
    _check_root(root, size)
    parts, error = _dumps(sendobj, rank)
    if rank != root:
        _isend(parts, root, h).Wait()
        _raise_first(error, ())
        return None
    reqs = [None] * size
    for i in range(size):
        if i != rank:
            reqs[i] = _irecv(i, h)[0]
    Request.Waitall([r for r in reqs if r is not None])
    items = [_copy_parts(parts) if r is None else r._take() for r in reqs]
    _raise_first(error, items)
    return items


def scatter(comm, sendobjs, root):
    h, rank, size = comm._coll, comm.rank, comm.size
    _check_root(root, size)
    if rank != root:
        item = _recv_op(root, h).result()
        _raise_first(None, [item])
        return item
    items = list(sendobjs) if sendobjs is not None else []
    error = None
    if len(items) != size:
        error = ValueError(f"scatter: expecting {size} items at the root, got {len(items)}")
        items = [PeerPicklingError(rank, str(error))] * size
    parts = []
    for x in items:  # every pickling error before any send
        p, e = _dumps(x, rank)
        parts.append(p)
        error = error or e
    if error is not None:
        parts = [_pickled.dumps(PeerPicklingError(rank, f"{type(error).__name__}: {error}"))] * size
    reqs = [_isend(parts[i], i, h) for i in range(size) if i != rank]
    Request.Waitall(reqs)
    _raise_first(error, ())
    return _copy_parts(parts[rank])


def allgather(comm, sendobj):
    h, rank, size = comm._coll, comm.rank, comm.size
    parts, error = _dumps(sendobj, rank)
    recvs = [None] * size
    for k in range(1, size):
        src = (rank - k) % size
        recvs[src] = _irecv(src, h)[0]
    sends = [_isend(parts, (rank + k) % size, h) for k in range(1, size)]
    Request.Waitall([r for r in recvs if r is not None] + sends)
    items = [_copy_parts(parts) if r is None else r._take() for r in recvs]
    _raise_first(error, items)
    return items


def alltoall(comm, sendobjs):
    h, rank, size = comm._coll, comm.rank, comm.size
    items = list(sendobjs)
    error = None
    if len(items) != size:
        error = ValueError(f"alltoall: expecting {size} items, got {len(items)}")
        items = [PeerPicklingError(rank, str(error))] * size
    parts = []
    for x in items:  # every pickling error before any send
        p, e = _dumps(x, rank)
        parts.append(p)
        error = error or e
    if error is not None:
        parts = [_pickled.dumps(PeerPicklingError(rank, f"{type(error).__name__}: {error}"))] * size
    recvs = [None] * size
    for k in range(1, size):
        src = (rank - k) % size
        recvs[src] = _irecv(src, h)[0]
    sends = []
    for k in range(1, size):
        dst = (rank + k) % size
        sends.append(_isend(parts[dst], dst, h))
    Request.Waitall([r for r in recvs if r is not None] + sends)
    out = [_copy_parts(parts[rank]) if r is None else r._take() for r in recvs]
    _raise_first(error, out)
    return out


def _reduce_items(items, op):
    res = items[0]
    for x in items[1:]:
        res = op(res, x)
    return res


def reduce(comm, sendobj, op, root):
    items = gather(comm, sendobj, root)
    return None if items is None else _reduce_items(items, op)


def allreduce(comm, sendobj, op):
    return _reduce_items(allgather(comm, sendobj), op)
