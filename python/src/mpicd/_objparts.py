"""The sending side of a pickled object: its *parts*, built once per object.

``dumps`` pickles an object with every contiguous buffer of at least ``THRESHOLD`` bytes out of
band; ``Parts`` holds the stream (the custom datatype's packed part) and those buffers (its
regions), with the addresses and region arrays the callbacks hand to libmpi. A repeated send of
plain NumPy arrays, or of lists, tuples and str-keyed dicts of them, skips pickle through a
cache of their streams. Received parts forwarded without unpickling (bcast) are ``Parts`` too.
The operations that send and receive parts are in ``_objops``, the datatype they travel as in
``_pickled``.
"""

import ctypes
import os
import pickle
import struct
import sys

from . import _libmpi as L
from ._buffer import Pin, address_of

THRESHOLD = int(os.environ.get("MPICD_OOB_THRESHOLD", 64 * 1024))
"""Buffers of at least this many bytes travel out of band, as regions (``MPICD_OOB_THRESHOLD``,
declared with its default in mpicd's configuration table, mpicd/src/config/table.rs)."""

PROTOCOL = 5


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
    p.one = (addrs[0], cached[2], L.BYTE) if len(bufs) == 1 else None  # see _objops._write_regions
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
