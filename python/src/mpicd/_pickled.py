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
import io
import itertools
import os
import pickle
import struct
import sys

from . import _libmpi as L
from ._buffer import Pin, address_of
from ._recvpool import alloc as _alloc
from ._errors import check
from ._libmpi import lib

THRESHOLD = int(os.environ.get("MPICD_OOB_THRESHOLD", 64 * 1024))
"""Buffers of at least this many bytes travel out of band, as regions (``MPICD_OOB_THRESHOLD``,
declared with its default in mpicd's configuration table, mpicd/src/config/table.rs)."""

PROTOCOL = 5
MPI_SUCCESS = 0
MPI_ERR_OTHER = 16
MPI_ERR_TRUNCATE = 15
MPI_ERR_NO_MEM = 39

_LIVE = {}  # key -> _SendOp | _RecvOp, from the call that starts it to the free callback
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


# --- sender ---------------------------------------------------------------------------------


_Q = struct.Struct("q")  # one 64-bit word (an address, a length, a handle)
_BYTE_WORD = _Q.pack(L.BYTE)
_numpy = None


def _np():
    """NumPy if the process has imported it (the package never imports it for the sender)."""
    global _numpy
    if _numpy is None:
        _numpy = sys.modules.get("numpy")
    return _numpy


class Parts:
    """The pickled form of one object: the stream and the out-of-band buffers, with their
    addresses and the region arrays (packed once, copied out by the region callback). Shared by
    every send of the object (bcast sends the same parts to several ranks). A buffer is a flat
    byte view (``PickleBuffer.raw()``), or a writable C-order array itself when the stream came
    from the cache; ``_pins`` holds each one's buffer (see :func:`address_of`) while the parts
    live."""

    __slots__ = ("stream", "buffers", "_pins", "stream_addr", "stream_len", "nregions",
                 "one", "bases", "lens", "types")

    def __init__(self, stream, buffers):
        self.stream = stream
        self.buffers = buffers
        if not buffers and type(stream) is bytes:  # a small object: the stream alone
            self._pins = []
            self.stream_addr = 0
            self.stream_len = len(stream)
            self.nregions = 0
            self.one = None
            self.bases = self.lens = self.types = b""
            return
        if type(stream) is bytes:  # pickle.dumps' result: its address taken when needed
            self._pins = []
            self.stream_addr = 0
            self.stream_len = len(stream)
        else:  # received parts being forwarded (bcast)
            pin = Pin(stream)
            self._pins = [pin]
            self.stream_addr, self.stream_len = pin.addr, pin.nbytes
        addrs, lens = [], []
        for b in buffers:
            addr, holder = address_of(b)
            self._pins.append(holder)
            addrs.append(addr)
            lens.append(memoryview(b).nbytes)
        n = len(addrs)
        self.nregions = n
        self.one = (addrs[0], lens[0], L.BYTE) if n == 1 else None
        self.bases = _pack_words(addrs)
        self.lens = _pack_words(lens)
        self.types = _BYTE_WORD * n

    @classmethod
    def _one(cls, stream, stream_addr, buf, addr, nbytes, holder):
        """The parts of one array sent out of band, from the stream cache (no pickling)."""
        self = cls.__new__(cls)
        self.stream = stream
        self.buffers = [buf]
        self._pins = [holder]
        self.stream_addr = stream_addr
        self.stream_len = len(stream)
        self.nregions = 1
        self.one = (addr, nbytes, L.BYTE)
        return self

    @property
    def nbytes(self):
        return self.stream_len + sum(len(memoryview(b).cast("B")) for b in self.buffers)


def _bytes_addr(stream):
    return ctypes.cast(ctypes.c_char_p(stream), ctypes.c_void_p).value or 0


def _pack_words(values):
    """64-bit words (region arrays of MPI_Count, pointers and handles) as bytes."""
    return struct.pack(f"{len(values)}q", *values) if values else b""


# Pickle streams of plain contiguous NumPy arrays sent out of band, and of lists, tuples and
# str-keyed dicts of them, by the kind of each array (dtype, shape, C order, writable) and a
# dict's keys: the stream does not depend on the data, so a repeated send of objects of the same
# kinds skips pickle (and NumPy's __reduce_ex__) altogether. Values: (stream, its address, the
# first array's size in bytes, and for a container its region lengths and types as packed
# words).
_ARRAY_STREAMS = {}
_ARRAY_STREAMS_MAX = 256


def _array_key(obj, limit):
    np = _numpy or _np()
    if np is None or type(obj) is not np.ndarray or obj.nbytes < limit:
        return None
    flags = obj.flags
    c = flags.c_contiguous
    if not (c or flags.f_contiguous):
        return None
    return (obj.dtype, obj.shape, c, flags.writeable)


def _seq_parts(obj, limit):
    """For a list or tuple (or a dict's values) of distinct arrays that each go out of band:
    its key, and its buffers, their addresses and what holds them (for :func:`_cached_seq`);
    else None."""
    np = _numpy or _np()
    if np is None or not obj or type(obj[0]) is not np.ndarray:
        return None
    got = _uniform_seq_parts(obj, limit, np.ndarray)
    if got is None:
        got = _mixed_seq_parts(obj, limit, np.ndarray)
    if got is not None and len(set(map(id, obj))) != len(obj):
        return None  # the same array twice: pickle sends it once (the copies stay one object)
    return got


def _uniform_seq_parts(obj, limit, nd):
    """The common case, in one tight pass: writable C-order arrays all of one dtype and shape.
    The key is that dtype and shape and the count; ctypes takes each array's address (and
    refuses an array that is read-only, not C-contiguous or empty)."""
    first = obj[0]
    dtype, shape = first.dtype, first.shape
    if first.nbytes < limit:
        return None
    addressof, from_buffer = ctypes.addressof, ctypes.c_char.from_buffer
    addrs, pins = [], []
    try:
        for a in obj:
            if type(a) is not nd or a.shape != shape:
                return None
            d = a.dtype
            if d is not dtype and d != dtype:
                return None
            v = from_buffer(a)  # holds the array's buffer while the parts live
            pins.append(v)
            addrs.append(addressof(v))
    except (TypeError, ValueError):  # read-only, not C-contiguous, empty
        return None
    return (type(obj), len(obj), dtype, shape), list(obj), addrs, pins


def _mixed_seq_parts(obj, limit, nd):
    """Any other sequence of contiguous arrays: keyed by each array's kind."""
    keys, bufs, addrs, pins = [], [], [], []
    for a in obj:
        if type(a) is not nd or a.nbytes < limit:
            return None
        flags = a.flags
        c = flags.c_contiguous
        if not (c or flags.f_contiguous):
            return None
        w = flags.writeable
        keys.append((a.dtype, a.shape, c, w))
        buf = a if c and w else pickle.PickleBuffer(a).raw()  # a C-order array is its own
        addr, holder = address_of(buf)
        bufs.append(buf)
        addrs.append(addr)
        pins.append(holder)
    return (type(obj), tuple(keys)), bufs, addrs, pins


def _cached_seq(cached, bufs, addrs, pins):
    """The parts of a container of arrays from the stream cache (no pickling)."""
    p = Parts.__new__(Parts)
    p.stream = cached[0]
    p.buffers = bufs
    p._pins = pins
    p.stream_addr = cached[1]
    p.stream_len = len(cached[0])
    p.nregions = len(bufs)
    p.one = (addrs[0], cached[2], L.BYTE) if len(bufs) == 1 else None  # see _write_regions
    p.bases = _pack_words(addrs)
    p.lens = cached[3]
    p.types = cached[4]
    return p


def _str_keyed_values(obj):
    """The values of a dict whose keys are all ``str`` (a pickle stream of it depends on nothing
    but the keys and the values' kinds), else None. Other keys may compare equal and pickle
    differently (``1 == 1.0 == True``)."""
    for k in obj:
        if type(k) is not str:
            return None
    return list(obj.values())


def dumps(obj, threshold=None):
    """Pickles ``obj`` with its large buffers out of band. Raises on an unpicklable object
    (before anything is sent)."""
    limit = THRESHOLD if threshold is None else threshold
    arrays = None  # the arrays of a container that may skip pickle, in pickle's order
    key = _array_key(obj, limit)
    if key is not None:
        cached = _ARRAY_STREAMS.get(key)
        if cached is not None:
            # Writable and C order: the array is its own flat buffer.
            buf = obj if key[3] and key[2] else pickle.PickleBuffer(obj).raw()
            addr, holder = address_of(buf)
            return Parts._one(cached[0], cached[1], buf, addr, cached[2], holder)
        arrays = (obj,)
    else:
        if type(obj) is list or type(obj) is tuple:
            arrays = obj
        elif type(obj) is dict:
            arrays = _str_keyed_values(obj)
        got = _seq_parts(arrays, limit) if arrays is not None else None
        if got is not None:
            key = got[0] if arrays is obj else (dict, tuple(obj), got[0])
            cached = _ARRAY_STREAMS.get(key)
            if cached is not None:
                return _cached_seq(cached, *got[1:])
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
    parts = Parts(stream, buffers)
    if key is not None:
        sizes = [a.nbytes for a in arrays]
        if len(buffers) == len(sizes) and all(b.nbytes == n for b, n in zip(buffers, sizes)):
            if len(_ARRAY_STREAMS) >= _ARRAY_STREAMS_MAX:
                _ARRAY_STREAMS.clear()
            _ARRAY_STREAMS[key] = (stream, _bytes_addr(stream), sizes[0], parts.lens, parts.types)
    return parts


class _Op:
    # pinned: a collective's operation, which may have several states (one object sent to
    # several members, one message each): the collective, not the free callback, takes it out
    # of ``_LIVE`` when it completes.
    __slots__ = ("key", "error", "freed", "pinned", "__weakref__")

    def register(self):
        _LIVE[self.key] = self
        return self.key

    def unregister(self):
        """After a call that failed to start the operation (no free callback will come), or
        after a blocking call (its type has no free callback)."""
        _LIVE.pop(self.key, None)

    def run(self, fn, *args):
        """Runs the blocking call ``fn(key, 1, BLOCKING_TYPE, *args)`` on this operation, which
        leaves ``_LIVE`` when the call returns (complete or failed); raises its error."""
        key = self.register()
        code = fn(key, 1, BLOCKING_TYPE, *args)
        self.unregister()
        if code != 0:
            self.raise_error(code)

    def start(self, fn, *args):
        """Starts the non-blocking call ``fn(key, 1, OBJECT_TYPE, *args, &request)`` on this
        operation and returns the request handle (the type's free callback takes the operation
        out of ``_LIVE`` at completion). A call that fails to start leaves nothing behind and
        raises its error."""
        key = self.register()
        req = ctypes.c_void_p(L.REQUEST_NULL)
        code = fn(key, 1, OBJECT_TYPE, *args, ctypes.byref(req))
        if code != 0:
            self.unregister()
            self.raise_error(code)
        return req.value

    def raise_error(self, code, detail=None):
        """Raises the MPI.Exception of a failed operation, caused by the callback's error."""
        from ._errors import Exception as MPIException

        exc = MPIException(code, detail)
        if self.error is not None:
            raise exc from self.error
        raise exc


_VP = ctypes.c_void_p
_I64 = ctypes.c_int64
_CHAR = ctypes.c_char
_SMALL_COPY = 4096  # below, a copy through a ctypes array beats ctypes.memmove (a foreign call)


def _write_regions(r, n, bases, lens, types):
    """Fills libmpi's region arrays from ``r`` (Parts or RecvOp): ``one`` for one region,
    else the packed words."""
    if n != r.nregions:
        raise ValueError(f"asked for {n} regions, the message has {r.nregions}")
    if n == 1:
        b, l, t = r.one
        _VP.from_address(bases).value = b
        _I64.from_address(lens).value = l
        _I64.from_address(types).value = t
    elif n:
        ctypes.memmove(bases, r.bases, 8 * n)
        ctypes.memmove(lens, r.lens, 8 * n)
        ctypes.memmove(types, r.types, 8 * n)


class SendOp(_Op):
    __slots__ = ("parts",)

    def __init__(self, parts):
        self.key = next(_keys)
        self.error = None
        self.freed = False
        self.pinned = False
        self.parts = parts

    def query(self, packed_size):
        if _faults:
            _fault("query")
        packed_size[0] = self.parts.stream_len

    def pack(self, offset, dst, dst_size, used):
        if _faults:
            _fault("pack")
        p = self.parts
        n = min(dst_size, p.stream_len - offset)
        if n < 0:
            raise ValueError(f"pack at offset {offset} beyond the {p.stream_len}-byte stream")
        if n == p.stream_len and n <= _SMALL_COPY and type(p.stream) is bytes:
            (_CHAR * n).from_address(dst).raw = p.stream
        else:
            if not p.stream_addr:  # a bytes stream too long to copy in one go
                p.stream_addr = _bytes_addr(p.stream)
            ctypes.memmove(dst, p.stream_addr + offset, n)
        used[0] = n

    def region_count(self, count):
        count[0] = self.parts.nregions

    def regions(self, n, bases, lens, types):
        if _faults:
            _fault("region")
        _write_regions(self.parts, n, bases, lens, types)

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


_word_arrays = {}  # n -> ctypes type of n 64-bit words


def _words_at(addr, n):
    """The ``n`` 64-bit words at ``addr`` (a C array libmpi owns for the callback's duration)."""
    if n == 1:
        return (_I64.from_address(addr).value,)
    t = _word_arrays.get(n)
    if t is None:
        t = _I64 * n
        if len(_word_arrays) < 64:
            _word_arrays[n] = t
    return tuple(t.from_address(addr))


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
    global _recv_arrays_bytes
    np = _numpy or _np()
    if np is None:
        return
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


def _slices(block, step, count):
    """``count`` consecutive buffers of ``step`` bytes in ``block`` (views: each holds it)."""
    if type(block) is bytearray:
        block = memoryview(block)  # a bytearray's slice would be a copy
    if step == 0:
        return [block[:0] for _ in range(count)]
    return [block[i:i + step] for i in range(0, step * count, step)]


class RecvOp(_Op):
    """A receive of one pickled object. Regions of equal lengths (one array, a list of arrays
    of one shape) land one after the other in one buffer (``block``): one allocation, and a
    list of arrays of one kind is rebuilt as the rows of one array, in one call. The arrays of
    such an object share that buffer: it returns to the receive pool when all are dropped.
    Regions of different lengths get a buffer each (``buffers``)."""

    __slots__ = ("stream", "stream_addr", "block", "step", "buffers", "packed", "nregions",
                 "one", "bases", "lens", "types")

    def __init__(self):
        self.key = next(_keys)
        self.error = None
        self.freed = False
        self.pinned = False
        self.stream = None  # bytes when the packed part came in one fragment, else a buffer
        self.stream_addr = 0  # that buffer's address
        self.block = None  # the buffer of equal regions, one after the other
        self.step = 0  # their length in bytes
        self.buffers = []  # the regions' buffers (None: slices of block, made when needed)
        self.packed = 0  # the sender's packed size, once resized
        self.nregions = 0
        self.one = None  # (address, length, type) of a single region
        self.bases = self.lens = self.types = b""  # several regions: libmpi's arrays

    def resize(self, packed_size, nregions, lens_addr, types_addr):
        """The sender's shape: allocates the regions' memory (a second call replaces the
        first allocation). The stream is taken when it arrives (:meth:`unpack`)."""
        if _faults:
            _fault("resize")
        self.block, self.buffers = None, []
        self.bases = self.lens = self.types = b""
        if nregions == 1:
            n = _I64.from_address(lens_addr).value
            t = _I64.from_address(types_addr).value
            step = n if t == L.BYTE else n * _type_size(t)
            self.block, addr = _alloc(step)
            self.step, self.buffers = step, None
            self.one = (addr, n, t)
        elif nregions:
            lens = ctypes.string_at(lens_addr, 8 * nregions)
            types = ctypes.string_at(types_addr, 8 * nregions)
            if lens == lens[:8] * nregions and types == types[:8] * nregions:  # all alike
                n, t = _Q.unpack_from(lens)[0], _Q.unpack_from(types)[0]
                step = n * _type_size(t)
                self.block, base = _alloc(step * nregions)
                self.step, self.buffers = step, None
                addrs = range(base, base + step * nregions, step) if step else [0] * nregions
            else:
                got = [_alloc(n * _type_size(t)) for n, t in
                       zip(_words_at(lens_addr, nregions), _words_at(types_addr, nregions))]
                self.buffers = [b for b, _ in got]
                addrs = [a for _, a in got]
            self.bases = _pack_words(addrs)
            self.lens = lens
            self.types = types
        self.nregions = nregions
        self.packed = packed_size
        self.stream = b"" if packed_size == 0 else None
        self.stream_addr = 0

    def query(self, packed_size):
        packed_size[0] = self.packed

    def unpack(self, offset, src, size):
        if _faults:
            _fault("unpack")
        if offset < 0 or size < 0 or offset + size > self.packed:
            raise ValueError(f"{size} packed bytes at offset {offset} do not fit the stream")
        if offset == 0 and size == self.packed and size <= _SMALL_COPY:  # all in one fragment
            self.stream = (_CHAR * size).from_address(src).raw
            return
        if self.stream_addr == 0:  # the first fragment of a buffer
            self.stream, self.stream_addr = _alloc(self.packed)
        if size:
            ctypes.memmove(self.stream_addr + offset, src, size)

    def region_count(self, count):
        count[0] = self.nregions

    def regions(self, n, bases, lens, types):
        _write_regions(self, n, bases, lens, types)

    def pack(self, offset, dst, dst_size, used):
        """Sends on what arrived (a broadcast relays it down its tree): the received stream;
        the regions are the received buffers (``regions``)."""
        stream = self.stream
        if stream is None:
            raise TypeError("a receive operation packs only once its message has arrived")
        n = min(dst_size, self.packed - offset)
        if n < 0:
            raise ValueError(f"pack at offset {offset} beyond the {self.packed}-byte stream")
        if self.stream_addr:
            ctypes.memmove(dst, self.stream_addr + offset, n)
        elif n:
            (_CHAR * n).from_address(dst).raw = bytes(stream[offset : offset + n])
        used[0] = n

    def _take_stream(self):
        stream = self.stream
        if stream is not None and len(stream) != self.packed:
            raise ValueError(f"{len(stream)} of {self.packed} packed bytes arrived")
        return stream

    def _region_buffers(self):
        """One buffer per region (slices of the block made now, when there is one)."""
        buffers = self.buffers
        if buffers is None:
            block = self.block
            buffers = [block] if self.nregions == 1 else _slices(block, self.step, self.nregions)
        return buffers

    def parts(self):
        """The received stream and buffers (to forward them without unpickling)."""
        return Parts(self._take_stream(), self._region_buffers())

    def result(self):
        """The received object (None when nothing was received: MPI_PROC_NULL). The operation
        lets go of the buffers: they belong to the object now."""
        stream = self.stream
        if stream is None:
            return None
        if len(stream) != self.packed:
            raise ValueError(f"{len(stream)} of {self.packed} packed bytes arrived")
        self.stream = None
        try:
            if not self.nregions or len(stream) > _RECV_STREAM_MAX:
                return unpickle(stream, self._region_buffers())
            if type(stream) is not bytes:
                stream = bytes(stream)
            known = _RECV_ARRAYS.get(stream)
            if known is not None:
                obj = self._arrays(*known)
                if obj is not None:
                    return obj
            buffers = self._region_buffers()
            obj = unpickle(stream, buffers)
            _remember_arrays(stream, obj, buffers, (self.lens, self.types))
            return obj
        finally:
            self.block, self.buffers = None, []

    def _arrays(self, container, kinds, writable, shape, rows):
        """The arrays a known stream unpickles to, built over the received buffers; None when
        this message's regions differ from those the stream came with before."""
        block = self.block
        if container is None:
            if block is not None and writable and kinds[4] == len(block):
                return _numpy.ndarray(kinds[1], kinds[0], block, 0, None, kinds[2])
            return _array_from(kinds, block if block is not None else self.buffers[0])
        if shape != (self.lens, self.types):
            return None
        if rows is not None and block is not None:  # the rows of one array, in one call
            if not writable:
                block = memoryview(block).toreadonly()
            arrays = list(_numpy.ndarray(rows[1], rows[0], block, 0, rows[2]))
        else:
            arrays = [_array_from(k, b) for k, b in zip(kinds, self._region_buffers())]
        if container is list:
            return arrays
        if container is tuple:
            return tuple(arrays)
        return dict(zip(container, arrays))


def loads(parts):
    """Unpickles parts made by :func:`dumps` (a local copy: the buffers are shared)."""
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
    _RECV_ARRAYS.clear()


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
