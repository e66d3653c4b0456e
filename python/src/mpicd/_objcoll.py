"""Object collectives (bcast, gather, scatter, allgather, alltoall, reduce, allreduce) built on
point-to-point object messages, because libmpi's collectives take predefined datatypes only.

They run on the communicator's private duplicate (made when the communicator is), so they can
never match a user's point-to-point message; every receive names its source, so the
non-overtaking rule keeps consecutive collectives apart without any sequence number. Each object
travels as one custom-typed message (stream + out-of-band regions); bcast forwards the received
stream and buffers down a binomial tree without unpickling and re-pickling them.

As in mpi4py, the objects returned are copies, the caller's own contribution included.
"""

import pickle

from . import _pickled
from ._libmpi import lib
from ._request import Request

TAG = 0


def _copy_parts(parts):
    """A private copy of an object given as parts (its buffers are copied once)."""
    return pickle.loads(parts.stream, buffers=[bytearray(b) for b in parts.buffers])


def _isend(parts, dest, h):
    op = _pickled.SendOp(parts)
    return Request(op.start(lib.MPI_Isend, dest, TAG, h), op=op)


def _irecv(source, h):
    op = _pickled.RecvOp()
    return Request(op.start(lib.MPI_Irecv, source, TAG, h), op=op)


def _irecv_from_all(rank, size, h):
    """A receive from every other rank, by rank (None at this rank's own place)."""
    recvs = [None] * size
    for k in range(1, size):
        src = (rank - k) % size
        recvs[src] = _irecv(src, h)
    return recvs


def _collect(recvs, sends, own):
    """Waits for the receives (by rank, as :func:`_irecv_from_all` made them) and the sends;
    returns the objects received, by rank, with a copy of ``own`` at this rank's place."""
    Request.Waitall([r for r in recvs if r is not None] + sends)
    return [_copy_parts(own) if r is None else r._take() for r in recvs]


def _recv_op(source, h):
    op = _pickled.RecvOp()
    op.run(lib.MPI_Recv, source, TAG, h, None)
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


def _dumps_each(items, rank, size, error):
    """The parts of ``size`` objects, one for each rank, all pickled before anything is sent.
    On ``error`` (the items' count is wrong) or an object that fails to pickle, every rank gets
    a PeerPicklingError instead; returns ``(parts, the error or None)``."""
    parts = []
    if error is None:
        for x in items:
            p, e = _dumps(x, rank)
            parts.append(p)
            error = error or e
    if error is not None:
        parts = [_pickled.dumps(PeerPicklingError(rank, f"{type(error).__name__}: {error}"))] * size
    return parts, error


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
    items = _collect(_irecv_from_all(rank, size, h), [], parts)
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
    parts, error = _dumps_each(items, rank, size, error)
    reqs = [_isend(parts[i], i, h) for i in range(size) if i != rank]
    Request.Waitall(reqs)
    _raise_first(error, ())
    return _copy_parts(parts[rank])


def allgather(comm, sendobj):
    h, rank, size = comm._coll, comm.rank, comm.size
    parts, error = _dumps(sendobj, rank)
    recvs = _irecv_from_all(rank, size, h)
    sends = [_isend(parts, (rank + k) % size, h) for k in range(1, size)]
    items = _collect(recvs, sends, parts)
    _raise_first(error, items)
    return items


def alltoall(comm, sendobjs):
    h, rank, size = comm._coll, comm.rank, comm.size
    items = list(sendobjs)
    error = None
    if len(items) != size:
        error = ValueError(f"alltoall: expecting {size} items, got {len(items)}")
    parts, error = _dumps_each(items, rank, size, error)
    recvs = _irecv_from_all(rank, size, h)
    sends = []
    for k in range(1, size):
        dst = (rank + k) % size
        sends.append(_isend(parts[dst], dst, h))
    items = _collect(recvs, sends, parts[rank])
    _raise_first(error, items)
    return items


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
