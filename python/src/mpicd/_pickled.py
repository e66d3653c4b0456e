"""Pickled objects through the custom datatype: one object, one MPI message.

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
import itertools
import os
import pickle
import struct
import sys

from . import _libmpi as L
from ._buffer import Pin
from ._recvpool import alloc as _alloc
from ._errors import check
from ._libmpi import lib

THRESHOLD = int(os.environ.get("MPICD_OOB_THRESHOLD", 64 * 1024))
"""Buffers of at least this many bytes travel out of band, as regions."""

PROTOCOL = 5
MPI_SUCCESS = 0
MPI_ERR_OTHER = 16
MPI_ERR_TRUNCATE = 15
MPI_ERR_NO_MEM = 39

_LIVE = {}  # key -> _SendOp | _RecvOp, from the call that starts it to the free callback
_keys = itertools.count(1)  # next() is atomic in CPython: keys are unique across threads
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


# --- sender ---------------------------------------------------------------------------------


class Parts:
    """The pickled form of one object: the stream and the out-of-band buffers, with their
    addresses and the region arrays (packed once, copied out by the region callback). Shared by
    every send of the object (bcast sends the same parts to several ranks)."""

    __slots__ = ("stream", "buffers", "_pins", "stream_addr", "stream_len", "nregions",
                 "bases", "lens", "types")

    def __init__(self, stream, buffers):
        self.stream = stream
        self.buffers = buffers
        if type(stream) is bytes:  # pickle.dumps' result: its address without a buffer export
            self._pins = []
            self.stream_addr = ctypes.cast(ctypes.c_char_p(stream), ctypes.c_void_p).value or 0
            self.stream_len = len(stream)
        else:  # received parts being forwarded (bcast)
            pin = Pin(stream)
            self._pins = [pin]
            self.stream_addr, self.stream_len = pin.addr, pin.nbytes
        # The memoryviews of PickleBuffer.raw() hold their exporters already: only the address
        # is needed (a Pin for a read-only buffer, which ctypes cannot take).
        addrs, lens = [], []
        for b in buffers:
            try:
                addrs.append(ctypes.addressof(ctypes.c_char.from_buffer(b)) if len(b) else 0)
                lens.append(len(b))
            except TypeError:
                pin = Pin(b)
                self._pins.append(pin)
                addrs.append(pin.addr)
                lens.append(pin.nbytes)
        n = len(addrs)
        self.nregions = n
        self.bases = _pack_words(addrs)
        self.lens = _pack_words(lens)
        self.types = _pack_words([L.BYTE] * n)

    @property
    def nbytes(self):
        return self.stream_len + sum(len(memoryview(b).cast("B")) for b in self.buffers)


def _pack_words(values):
    """64-bit words (region arrays of MPI_Count, pointers and handles) as bytes."""
    return struct.pack(f"{len(values)}q", *values) if values else b""


# Pickle streams of plain contiguous NumPy arrays sent out of band, by (dtype, shape, C order,
# writable): the stream does not depend on the data, so a repeated send of arrays of the same
# kind skips pickle (and NumPy's __reduce_ex__) altogether.
_ARRAY_STREAMS = {}
_ARRAY_STREAMS_MAX = 256


def _array_key(obj, limit):
    np = sys.modules.get("numpy")
    if np is None or type(obj) is not np.ndarray or obj.nbytes < limit:
        return None
    flags = obj.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        return None
    return (obj.dtype, obj.shape, flags.c_contiguous, flags.writeable)


def dumps(obj, threshold=None):
    """Pickles ``obj`` with its large buffers out of band. Raises on an unpicklable object
    (before anything is sent)."""
    limit = THRESHOLD if threshold is None else threshold
    key = _array_key(obj, limit)
    if key is not None:
        stream = _ARRAY_STREAMS.get(key)
        if stream is not None:
            return Parts(stream, [pickle.PickleBuffer(obj).raw()])
    buffers = []

    def keep_out_of_band(pb):
        try:
            raw = pb.raw()
        except BufferError:  # not contiguous: pickle copies it in band
            return True
        if raw.nbytes < limit:
            return True
        buffers.append(raw)
        return False

    stream = pickle.dumps(obj, protocol=PROTOCOL, buffer_callback=keep_out_of_band)
    if key is not None and len(buffers) == 1 and buffers[0].nbytes == obj.nbytes:
        if len(_ARRAY_STREAMS) >= _ARRAY_STREAMS_MAX:
            _ARRAY_STREAMS.clear()
        _ARRAY_STREAMS[key] = stream
    return Parts(stream, buffers)


class _Op:
    __slots__ = ("key", "error", "freed", "__weakref__")

    def __init__(self):
        self.key = next(_keys)
        self.error = None
        self.freed = False

    def register(self):
        _LIVE[self.key] = self
        return self.key

    def unregister(self):
        """After a call that failed to start the operation (no free callback will come)."""
        _LIVE.pop(self.key, None)

    def raise_error(self, code, detail=None):
        """Raises the MPI.Exception of a failed operation, caused by the callback's error."""
        from ._errors import Exception as MPIException

        exc = MPIException(code, detail)
        if self.error is not None:
            raise exc from self.error
        raise exc


class SendOp(_Op):
    __slots__ = ("parts",)

    def __init__(self, parts):
        super().__init__()
        self.parts = parts

    def query(self, packed_size):
        _fault("query")
        packed_size[0] = self.parts.stream_len

    def pack(self, offset, dst, dst_size, used):
        _fault("pack")
        p = self.parts
        n = min(dst_size, p.stream_len - offset)
        if n < 0:
            raise ValueError(f"pack at offset {offset} beyond the {p.stream_len}-byte stream")
        ctypes.memmove(dst, p.stream_addr + offset, n)
        used[0] = n

    def region_count(self, count):
        count[0] = self.parts.nregions

    def regions(self, n, bases, lens, types):
        _fault("region")
        p = self.parts
        if n != p.nregions:
            raise ValueError(f"asked for {n} regions, the object has {p.nregions}")
        if n:
            ctypes.memmove(bases, p.bases, 8 * n)
            ctypes.memmove(lens, p.lens, 8 * n)
            ctypes.memmove(types, p.types, 8 * n)

    def unpack(self, *_):
        raise TypeError("a send operation cannot unpack")

    def resize(self, *_):
        raise TypeError("a send operation cannot be resized")


# --- receiver -------------------------------------------------------------------------------

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


class RecvOp(_Op):
    __slots__ = ("stream", "buffers", "stream_addr", "nregions", "bases", "lens", "types")

    def __init__(self):
        super().__init__()
        self.stream = None
        self.buffers = []
        self.stream_addr = 0
        self.nregions = 0
        self.bases = self.lens = self.types = b""

    def resize(self, packed_size, nregions, lens_addr, types_addr):
        """The sender's shape: allocates the stream and one buffer per region (a second call
        replaces the first allocation)."""
        _fault("resize")
        if nregions:
            lens = struct.unpack(f"{nregions}q", ctypes.string_at(lens_addr, 8 * nregions))
            types = struct.unpack(f"{nregions}q", ctypes.string_at(types_addr, 8 * nregions))
            nbytes = [n * _type_size(t) for n, t in zip(lens, types)]
        else:
            lens = types = nbytes = ()
        stream, self.stream_addr = _alloc(packed_size)
        got = [_alloc(n) for n in nbytes]
        self.stream = stream
        self.buffers = [b for b, _ in got]
        self.nregions = nregions
        self.bases = _pack_words([a for _, a in got])
        self.lens = _pack_words(list(lens))
        self.types = _pack_words(list(types))

    def query(self, packed_size):
        packed_size[0] = len(self.stream) if self.stream is not None else 0

    def unpack(self, offset, src, size):
        _fault("unpack")
        if self.stream is None or offset < 0 or offset + size > len(self.stream):
            raise ValueError(f"{size} packed bytes at offset {offset} do not fit the stream")
        ctypes.memmove(self.stream_addr + offset, src, size)

    def region_count(self, count):
        count[0] = self.nregions

    def regions(self, n, bases, lens, types):
        if n != self.nregions:
            raise ValueError(f"asked for {n} regions, the message has {self.nregions}")
        if n:
            ctypes.memmove(bases, self.bases, 8 * n)
            ctypes.memmove(lens, self.lens, 8 * n)
            ctypes.memmove(types, self.types, 8 * n)

    def pack(self, *_):
        raise TypeError("a receive operation cannot pack")

    def parts(self):
        """The received stream and buffers (to forward them without unpickling)."""
        return Parts(self.stream, self.buffers)

    def result(self):
        """The received object (None when nothing was received: MPI_PROC_NULL)."""
        if self.stream is None:
            return None
        stream, buffers = self.stream, self.buffers
        self.stream, self.buffers = None, []
        return pickle.loads(stream, buffers=buffers)


def loads(parts):
    """Unpickles parts made by :func:`dumps` (a local copy: the buffers are shared)."""
    return pickle.loads(parts.stream, buffers=parts.buffers)


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
        op = _LIVE.pop(state, None)
        if op is not None:
            op.freed = True
        return MPI_SUCCESS
    except BaseException:  # noqa: BLE001
        return MPI_ERR_OTHER


def _query_cb(state, buf, count, packed_size):
    try:
        _LIVE[state].query(packed_size)
        return MPI_SUCCESS
    except BaseException as e:  # noqa: BLE001
        return _failed(state, e)


def _pack_cb(state, buf, count, offset, dst, dst_size, used):
    try:
        _LIVE[state].pack(offset, dst, dst_size, used)
        return MPI_SUCCESS
    except BaseException as e:  # noqa: BLE001
        return _failed(state, e)


def _unpack_cb(state, buf, count, offset, src, src_size):
    try:
        _LIVE[state].unpack(offset, src, src_size)
        return MPI_SUCCESS
    except BaseException as e:  # noqa: BLE001
        return _failed(state, e)


def _region_count_cb(state, buf, count, region_count):
    try:
        _LIVE[state].region_count(region_count)
        return MPI_SUCCESS
    except BaseException as e:  # noqa: BLE001
        return _failed(state, e)


def _region_cb(state, buf, count, region_count, bases, lens, types):
    try:
        _LIVE[state].regions(region_count, bases, lens, types)
        return MPI_SUCCESS
    except BaseException as e:  # noqa: BLE001
        return _failed(state, e)


def _resize_cb(state, buf, count, packed_size, region_count, lens, types):
    try:
        _LIVE[state].resize(packed_size, region_count, lens, types)
        return MPI_SUCCESS
    except BaseException as e:  # noqa: BLE001
        return _failed(state, e)


# Module-level references: libmpi keeps these function pointers for the life of the process.
_CALLBACKS = (
    L.STATE_FN(_state_cb),
    L.FREE_FN(_free_cb),
    L.QUERY_FN(_query_cb),
    L.PACK_FN(_pack_cb),
    L.UNPACK_FN(_unpack_cb),
    L.REGION_COUNT_FN(_region_count_cb),
    L.REGION_FN(_region_cb),
)
_RESIZE = L.RESIZE_FN(_resize_cb)

OBJECT_TYPE = None
"""The custom datatype handle, made once by :func:`create_type` after MPI_Init."""


def create_type():
    global OBJECT_TYPE
    t = ctypes.c_void_p(0)
    # inorder=0: the unpack callback writes at the offset it is given, in any order.
    check(lib.MPI_Type_create_custom(*_CALLBACKS, None, 0, ctypes.byref(t)))
    check(lib.MPIX_Type_custom_set_resize(t, _RESIZE))
    check(lib.MPI_Type_commit(ctypes.byref(t)))
    OBJECT_TYPE = t.value
    init_type_sizes()
    return OBJECT_TYPE


def free_type():
    global OBJECT_TYPE
    if OBJECT_TYPE is not None:
        t = ctypes.c_void_p(OBJECT_TYPE)
        lib.MPI_Type_free(ctypes.byref(t))
        OBJECT_TYPE = None
