"""Received arrays rebuilt without the unpickler: a cache, by pickle stream, of what a stream
unpickled to when that was one NumPy array, or a list, tuple or str-keyed dict of arrays, each
over one whole received buffer; and the function that builds those arrays again over a later
message's buffers (``RecvOp.result`` in ``_objops`` looks the stream up first).
``_pickled.restrict_unpickling`` clears the cache: the streams it knows were checked under the
old rule.
"""

import ctypes

from ._objparts import _np, _str_keyed_values


# Received arrays, by their pickle stream: for a stream that unpickled to one array, or to a
# list, tuple or str-keyed dict of distinct arrays, each over one whole out-of-band buffer, the
# kind of each array (dtype, shape, order, read-only, nbytes). The same stream with buffers of
# the same lengths always unpickles to arrays of those kinds, so a repeated receive builds them
# directly over the buffers (checked once to give the same dtype, shape, strides and
# writability as pickle did) instead of running the unpickler, the dtypes' reconstruction and
# NumPy's reduce function again. Values: (None, kind) for one array, (container, kinds) for a
# container of arrays (the type list or tuple, or a dict's keys, a tuple of str), then whether
# all are writable, a container's region lengths and types (as libmpi gave them: a later
# message must have the same), and for arrays all of one kind the rows that rebuild them in
# one call: (dtype, shape, strides) of the array whose rows they are.
_RECV_ARRAYS = {}
_RECV_ARRAYS_MAX = 256
_RECV_ARRAYS_BYTES = 8 << 20  # most stream bytes kept as keys
_RECV_STREAM_MAX = 256 << 10  # longer streams are not looked up
_recv_arrays_bytes = 0
_numpy = None  # NumPy, once a received object had arrays (only then are there streams to know)


def _array_kind(obj, buf):
    """The kind that rebuilds ``obj`` exactly over ``buf`` (with its strides), or None."""
    if type(obj) is not _numpy.ndarray:
        return None
    nbytes = len(buf)
    if obj.nbytes != nbytes or obj.ctypes.data != _buffer_address(buf):
        return None  # not an array over the whole received buffer
    readonly = not obj.flags.writeable
    for order in ("C", "F"):  # the layout that rebuilds it exactly, strides included
        kind = (obj.dtype, obj.shape, order, readonly, nbytes)
        try:
            again = _array_from(kind, buf)
        except (TypeError, ValueError):
            continue
        if again.strides == obj.strides and again.flags.writeable == obj.flags.writeable:
            return kind, obj.strides
    return None


def _rows(kinds, strides):
    """For arrays all of one kind, one after the other in a block: (dtype, shape, strides) of
    the array whose rows they are; else None."""
    first = kinds[0]
    if first[1] == () or any(k != first for k in kinds):
        return None  # a 0-d array's rows would be NumPy scalars
    return first[0], (len(kinds),) + first[1], (first[4],) + strides


def _remember_arrays(stream, obj, buffers, shape):
    global _recv_arrays_bytes, _numpy
    np = _numpy or _np()
    if np is None:
        return
    _numpy = np
    items = None
    if type(obj) is list or type(obj) is tuple:
        items, container = obj, type(obj)
    elif type(obj) is dict:
        items = _str_keyed_values(obj)
        container = tuple(obj)
    if items is not None:
        if not items or len(items) != len(buffers):
            return
        kinds = []
        for a, b in zip(items, buffers):
            got = _array_kind(a, b)
            if got is None:
                return
            kinds.append(got[0])
        rows = _rows(kinds, got[1])
        value = (container, kinds, not any(k[3] for k in kinds), shape, rows)
    elif len(buffers) == 1:
        got = _array_kind(obj, buffers[0])
        if got is None:
            return
        value = (None, got[0], not got[0][3], None, None)
    else:
        return
    if len(_RECV_ARRAYS) >= _RECV_ARRAYS_MAX or _recv_arrays_bytes > _RECV_ARRAYS_BYTES:
        _RECV_ARRAYS.clear()
        _recv_arrays_bytes = 0
    _RECV_ARRAYS[stream] = value
    _recv_arrays_bytes += len(stream)


def _buffer_address(buf):
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(buf))
    except (TypeError, ValueError):
        return None


def _array_from(kind, buf):
    dtype, shape, order, readonly, nbytes = kind
    if len(buf) != nbytes:
        return None
    if readonly:
        buf = memoryview(buf).toreadonly()
    # What NumPy's _frombuffer makes (frombuffer, then reshape), in one call.
    return _numpy.ndarray(shape, dtype, buf, 0, None, order)


def _rebuild_arrays(op, container, kinds, writable, shape, rows):
    """The arrays a known stream unpickles to, built over the received buffers of ``op`` (a
    ``RecvOp``; the other arguments are the stream's entry in ``_RECV_ARRAYS``); None when this
    message's regions differ from those the stream came with before."""
    block = op.block
    if container is None:
        if block is not None and writable and kinds[4] == len(block):
            return _numpy.ndarray(kinds[1], kinds[0], block, 0, None, kinds[2])
        return _array_from(kinds, block if block is not None else op.buffers[0])
    if shape != (op.lens, op.types):
        return None
    if rows is not None and block is not None:  # the rows of one array, in one call
        if not writable:
            block = memoryview(block).toreadonly()
        arrays = list(_numpy.ndarray(rows[1], rows[0], block, 0, rows[2]))
    else:
        arrays = [_array_from(k, b) for k, b in zip(kinds, op._region_buffers())]
    if container is list:
        return arrays
    if container is tuple:
        return tuple(arrays)
    return dict(zip(container, arrays))
