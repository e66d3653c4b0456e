"""Pickled objects through the custom datatype: one object, one MPI message.

This module owns the custom datatype and what a received stream may become: the table of
operations in flight and their keys, the C callbacks, the two datatypes (``create_type``), the
sizes of the region types, the fault-injection hook of the tests, and unpickling (``loads``,
``unpickle``, ``restrict_unpickling``). The sender's parts and ``dumps`` are in ``_objparts``,
the operations ``SendOp`` and ``RecvOp`` in ``_objops``, the receiver's shortcut for repeated
arrays in ``_recvarrays``.

Sender: ``pickle.dumps(obj, protocol=5, buffer_callback=...)`` keeps every contiguous buffer of
at least ``THRESHOLD`` bytes (a NumPy array's data, a bytearray) out of the stream as a
``PickleBuffer``; smaller ones stay in band. The stream is the custom datatype's *packed part*
(the pack callback copies it fragment by fragment), each out-of-band buffer is a *region*
(libmpi sends it from the array's own memory: the data is never copied in Python).

Receiver: the receive is posted with no buffer at all. When libmpi matches the message it calls
the resize callback (``MPIX_Type_custom_set_resize``) with the sender's packed size and region
lengths, read from the message itself; the callback allocates the stream and one buffer per
region, the regions land directly in those buffers, the unpack callback fills the stream, and
``pickle.loads(stream, buffers=...)`` rebuilds the object around the received buffers. So an
``irecv`` of any size needs no user buffer, no lengths message and no lock.

One custom datatype serves every operation: the buffer address passed to libmpi is not an
address but a key into ``_LIVE``, the table of operations in flight; the state callback turns it
into the per-operation state, the free callback (called once, at completion) drops the entry.

Callbacks never let a Python exception escape into C: each one catches everything, keeps the
exception on its operation (it becomes the ``__cause__`` of the ``MPI.Exception`` raised) and
returns an MPI error code, which makes libmpi fail the operation on both sides.
"""

import ctypes
import io
import itertools
import pickle

from . import _libmpi as L
from . import _recvarrays
from ._errors import check
from ._libmpi import lib

MPI_SUCCESS = 0
MPI_ERR_OTHER = 16
MPI_ERR_TRUNCATE = 15
MPI_ERR_NO_MEM = 39

_LIVE = {}  # key -> _objops.SendOp | RecvOp, from the call that starts it to the free callback
# next() is atomic in CPython: keys are unique across threads. They start at 2: libmpi reads
# 0 and 1 as MPI_BOTTOM and MPI_IN_PLACE where a collective takes a buffer.
_keys = itertools.count(2)
# Blocks of consecutive keys, far above the single ones, for collectives: libmpi finds the
# object of member i at key base + i (the custom type's extent is 1).
_key_blocks = itertools.count(0)
_BLOCK_BASE = 1 << 40
_BLOCK_SPAN = 1 << 21  # more than mpicd's largest job (2^20 processes)


def key_block(ops):
    """Gives ``ops`` consecutive keys; returns the first (what libmpi takes as the buffer)."""
    base = _BLOCK_BASE + next(_key_blocks) * _BLOCK_SPAN
    for i, op in enumerate(ops):
        op.key = base + i
    return base


_faults = {}  # callback name -> calls to let through before failing (tests only)


def inject_fault(callback, after=0):
    """Test hook: make the ``after``-th next call of ``callback`` in this process fail
    (``'query'``, ``'pack'``, ``'region'``, ``'resize'``, ``'unpack'``)."""
    _faults[callback] = after


def _fault(name):
    left = _faults.get(name)
    if left is None:
        return
    if left <= 0:
        del _faults[name]
        raise RuntimeError(f"mpicd test fault injected in the {name} callback")
    _faults[name] = left - 1


# --- the sizes of the types regions may have ---------------------------------------------------

_type_sizes = {}


def _type_size(handle):
    size = _type_sizes.get(handle)
    if size is None:
        n = ctypes.c_int(0)
        check(lib.MPI_Type_size(handle, ctypes.byref(n)))
        size = _type_sizes[handle] = n.value
    return size


def init_type_sizes():
    """Caches the predefined types' sizes (so no callback has to call into libmpi)."""
    for h in L.DATATYPES.values():
        if h == L.DATATYPE_NULL:
            continue
        n = ctypes.c_int(0)
        if lib.MPI_Type_size(h, ctypes.byref(n)) == 0 and n.value > 0:
            _type_sizes[h] = n.value


def loads(parts):
    """Unpickles parts made by :func:`_objparts.dumps` (a local copy: the buffers are shared)."""
    return unpickle(parts.stream, parts.buffers)


# --- what a peer's stream may rebuild ---------------------------------------------------------

_ALLOWED = None
"""The (module, name) pairs a received stream may load (``restrict_unpickling``); None: any."""

_NUMPY_NAMES = {
    (mod, name)
    for base in ("numpy.core", "numpy._core")
    for mod, name in (
        (f"{base}.multiarray", "_reconstruct"),
        (f"{base}.multiarray", "scalar"),
        (f"{base}.numeric", "_frombuffer"),
    )
} | {("numpy", "ndarray"), ("numpy", "dtype")}
"""What pickled NumPy arrays, scalars and dtypes need (NumPy 1 and 2 module paths)."""


class _Restricted(pickle.Unpickler):
    """An unpickler that loads only the allowed classes and functions."""

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"mpicd: a peer's object needs {module}.{name}, which is not in the allow-list "
            "(MPI.restrict_unpickling)")


def restrict_unpickling(allowed=(), numpy=True):
    """Restricts what objects received from peers may rebuild: only the classes and functions
    in ``allowed`` (the objects themselves, or ``"module.name"`` strings), plus NumPy's arrays,
    scalars and dtypes unless ``numpy`` is False. Plain data (None, numbers, strings, bytes,
    lists, tuples, dicts, sets) needs no entry. A stream that names anything else fails its
    receive with ``pickle.UnpicklingError`` before that name is imported or called.
    ``restrict_unpickling(None)`` lifts the restriction (pickle's own behaviour, the default).
    Applies to every later receive of this process, objects and collectives alike."""
    global _ALLOWED
    if allowed is None:
        _ALLOWED = None
    else:
        names = set(_NUMPY_NAMES) if numpy else set()
        for entry in allowed:
            if isinstance(entry, str):
                module, _, name = entry.rpartition(".")
                if not module:
                    raise ValueError(f"{entry!r} is not 'module.name'")
            else:
                module, name = entry.__module__, entry.__qualname__
            names.add((module, name))
        _ALLOWED = frozenset(names)
    # Streams recognised without unpickling were checked under the old rule.
    _recvarrays._RECV_ARRAYS.clear()


def unpickle(stream, buffers):
    """``pickle.loads(stream, buffers=buffers)``, under the allow-list when there is one."""
    if _ALLOWED is None:
        return pickle.loads(stream, buffers=buffers)
    return _Restricted(io.BytesIO(stream), buffers=buffers).load()


# --- the C callbacks ------------------------------------------------------------------------


def _failed(key, exc):
    op = _LIVE.get(key)
    if op is not None and op.error is None:
        op.error = exc
    return MPI_ERR_NO_MEM if isinstance(exc, MemoryError) else MPI_ERR_OTHER


def _state_cb(context, src, count, state):
    try:
        if src not in _LIVE:
            raise KeyError(f"no mpicd operation with key {src}")
        state[0] = src
        return MPI_SUCCESS
    except BaseException as e:  # noqa: BLE001 - nothing may escape into C
        return _failed(src, e)


def _free_cb(state):
    try:
        op = _LIVE.get(state)
        if op is not None and not op.pinned:
            del _LIVE[state]
            op.freed = True
        return MPI_SUCCESS
    except BaseException:  # noqa: BLE001
        return MPI_ERR_OTHER


def _to_op(method):
    """The C callback that calls ``method`` of the operation whose key is the buffer argument,
    with the arguments that follow the element count (the blocking type has no state: the
    buffer argument is the one way to the operation for both types)."""

    def callback(state, buf, count, *args):
        try:
            getattr(_LIVE[buf], method)(*args)
            return MPI_SUCCESS
        except BaseException as e:  # noqa: BLE001 - nothing may escape into C
            return _failed(buf, e)

    return callback


# Module-level references: libmpi keeps these function pointers for the life of the process.
_STATE = L.STATE_FN(_state_cb)
_FREE = L.FREE_FN(_free_cb)
_CALLBACKS = (
    L.QUERY_FN(_to_op("query")),
    L.PACK_FN(_to_op("pack")),
    L.UNPACK_FN(_to_op("unpack")),
    L.REGION_COUNT_FN(_to_op("region_count")),
    L.REGION_FN(_to_op("regions")),
)
_RESIZE = L.RESIZE_FN(_to_op("resize"))

OBJECT_TYPE = None
"""The custom datatype of non-blocking object operations, made by :func:`create_type` after
MPI_Init: its state callback checks the key, its free callback (once, at completion, even for
a request dropped unwaited) takes the operation out of ``_LIVE``."""

BLOCKING_TYPE = None
"""The same without state and free callbacks, for blocking calls: the caller takes the
operation out of ``_LIVE`` when the call returns (two callbacks fewer per message)."""


def _make_type(statefn, freefn):
    t = ctypes.c_void_p(0)
    # inorder=0: the unpack callback writes at the offset it is given, in any order.
    check(lib.MPI_Type_create_custom(statefn, freefn, *_CALLBACKS, None, 0, ctypes.byref(t)))
    check(lib.MPIX_Type_custom_set_resize(t, _RESIZE))
    check(lib.MPI_Type_commit(ctypes.byref(t)))
    return t.value


def create_type():
    global OBJECT_TYPE, BLOCKING_TYPE
    OBJECT_TYPE = _make_type(_STATE, _FREE)
    BLOCKING_TYPE = _make_type(L.STATE_FN(), L.FREE_FN())
    init_type_sizes()
    return OBJECT_TYPE


def free_type():
    global OBJECT_TYPE, BLOCKING_TYPE
    for name in ("OBJECT_TYPE", "BLOCKING_TYPE"):
        h = globals()[name]
        if h is not None:
            t = ctypes.c_void_p(h)
            lib.MPI_Type_free(ctypes.byref(t))
    OBJECT_TYPE = BLOCKING_TYPE = None
