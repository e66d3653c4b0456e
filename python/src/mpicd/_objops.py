"""The object operations in flight on the custom datatype: ``SendOp`` (one object's parts sent
as one message) and ``RecvOp`` (a receive posted with no buffer, sized by the resize callback
when the message matches, and turned into the object at the end).

Each operation takes a key from ``_pickled``; while libmpi may call back it is in
``_pickled._LIVE`` under that key, and its methods are the bodies of the datatype's callbacks
(``_pickled`` routes each C callback to the method of the operation whose key is the buffer
argument). ``_Op.run`` and ``_Op.start`` make the blocking and the non-blocking call on the
datatype.
"""

import ctypes

from . import _libmpi as L
from . import _pickled
from ._objparts import _Q, Parts, _bytes_addr, _pack_words
from ._pickled import _LIVE, _fault, _faults, _keys, _type_size
from ._recvarrays import _RECV_ARRAYS, _RECV_STREAM_MAX, _rebuild_arrays, _remember_arrays
from ._recvpool import alloc as _alloc


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
        code = fn(key, 1, _pickled.BLOCKING_TYPE, *args)
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
        code = fn(key, 1, _pickled.OBJECT_TYPE, *args, ctypes.byref(req))
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
                return _pickled.unpickle(stream, self._region_buffers())
            if type(stream) is not bytes:
                stream = bytes(stream)
            known = _RECV_ARRAYS.get(stream)
            if known is not None:
                obj = _rebuild_arrays(self, *known)
                if obj is not None:
                    return obj
            buffers = self._region_buffers()
            obj = _pickled.unpickle(stream, buffers)
            _remember_arrays(stream, obj, buffers, (self.lens, self.types))
            return obj
        finally:
            self.block, self.buffers = None, []
