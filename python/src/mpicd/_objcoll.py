"""Object collectives (bcast, gather, scatter, allgather, alltoall, reduce, allreduce).

bcast, gather, scatter, allgather and alltoall are libmpi's blocking collectives over the object
datatype (``MPI_Bcast`` ... on ``_pickled.OBJECT_TYPE``; ctypes lets go of the GIL for the call
and the callbacks take it back): each object travels as one custom-typed message (stream +
out-of-band regions), or through the node's shared memory where the ranks share an area of it,
and each receiving operation sizes itself from the shape it gets (the resize callback), so every
rank's object may have its own shape; libmpi finds the operation of member i at key ``base + i``
(a block of keys, ``_pickled.key_block``).

They run on the communicator's private duplicate (made when the communicator is), so they can
never match a user's point-to-point message.

As in mpi4py, the objects returned are copies, the caller's own contribution included.
"""


from . import _objops, _objparts, _pickled
from ._libmpi import lib


def _copy_parts(parts):
    """A private copy of an object given as parts (its buffers are copied once)."""
    return _pickled.unpickle(parts.stream, [bytearray(b) for b in parts.buffers])


def _run(fn, args, ops):
    """Runs the blocking collective ``fn(*args)`` over the object operations ``ops``; raises
    its error, caused by a callback's. The operations stay in
    ``_LIVE`` for the callbacks until the collective has completed (pinned: an object sent to
    several members has several states, which come and go)."""
    for op in ops:
        op.pinned = True
        op.register()
    code = fn(*args)
    for op in ops:
        op.unregister()
    if code != 0:
        failed = next((op for op in ops if op.error is not None), ops[0])
        failed.raise_error(code)


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
        return _objparts.dumps(obj), None
    except BaseException as e:  # noqa: BLE001 - re-raised by _raise_first
        return _objparts.dumps(PeerPicklingError(rank, f"{type(e).__name__}: {e}")), e


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
        peer_error = PeerPicklingError(rank, f"{type(error).__name__}: {error}")
        parts = [_objparts.dumps(peer_error)] * size
    return parts, error


def _raise_first(local_error, items):
    if local_error is not None:
        raise local_error
    for x in items:
        if isinstance(x, PeerPicklingError):
            from ._errors import Exception as MPIException

            raise MPIException(16, f"rank {x.rank} could not pickle its object: {x.text}")


def bcast(comm, obj, root):
    h, rank, size = comm._coll_handle(), comm.rank, comm.size
    _check_root(root, size)
    parts = error = None
    if rank == root:
        parts, error = _dumps(obj, rank)
        op = _objops.SendOp(parts)
    else:
        op = _objops.RecvOp()
    t = _pickled.OBJECT_TYPE
    _run(lib.MPI_Bcast, (op.key, 1, t, root, h), [op])
    result = _copy_parts(parts) if rank == root else op.result()
    _raise_first(error, [result])
    return result


def gather(comm, sendobj, root):
    h, rank, size = comm._coll_handle(), comm.rank, comm.size
    _check_root(root, size)
    parts, error = _dumps(sendobj, rank)
    send = _objops.SendOp(parts)
    recvs = [_objops.RecvOp() for _ in range(size)] if rank == root else []
    base = _pickled.key_block(recvs) if recvs else 0
    t = _pickled.OBJECT_TYPE
    _run(lib.MPI_Gather, (send.key, 1, t, base, 1, t, root, h), [send] + recvs)
    if rank != root:
        _raise_first(error, ())
        return None
    items = [r.result() for r in recvs]
    _raise_first(error, items)
    return items


def scatter(comm, sendobjs, root):
    h, rank, size = comm._coll_handle(), comm.rank, comm.size
    _check_root(root, size)
    sends, base, error = [], 0, None
    if rank == root:
        items = list(sendobjs) if sendobjs is not None else []
        if len(items) != size:
            error = ValueError(f"scatter: expecting {size} items at the root, got {len(items)}")
        parts, error = _dumps_each(items, rank, size, error)
        sends = [_objops.SendOp(p) for p in parts]
        base = _pickled.key_block(sends)
    recv = _objops.RecvOp()
    t = _pickled.OBJECT_TYPE
    _run(lib.MPI_Scatter, (base, 1, t, recv.key, 1, t, root, h), sends + [recv])
    item = recv.result()
    _raise_first(error, [item])
    return item


def allgather(comm, sendobj):
    h, rank, size = comm._coll_handle(), comm.rank, comm.size
    parts, error = _dumps(sendobj, rank)
    send = _objops.SendOp(parts)
    recvs = [_objops.RecvOp() for _ in range(size)]
    base = _pickled.key_block(recvs)
    t = _pickled.OBJECT_TYPE
    _run(lib.MPI_Allgather, (send.key, 1, t, base, 1, t, h), [send] + recvs)
    items = [r.result() for r in recvs]
    _raise_first(error, items)
    return items


def alltoall(comm, sendobjs):
    h, rank, size = comm._coll_handle(), comm.rank, comm.size
    items = list(sendobjs)
    error = None
    if len(items) != size:
        error = ValueError(f"alltoall: expecting {size} items, got {len(items)}")
    parts, error = _dumps_each(items, rank, size, error)
    sends = [_objops.SendOp(p) for p in parts]
    recvs = [_objops.RecvOp() for _ in range(size)]
    sbase, rbase = _pickled.key_block(sends), _pickled.key_block(recvs)
    t = _pickled.OBJECT_TYPE
    _run(lib.MPI_Alltoall, (sbase, 1, t, rbase, 1, t, h), sends + recvs)
    items = [r.result() for r in recvs]
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
