"""Buffers: pinning any buffer-protocol object to get its address, and the message specs of the
buffer methods (``buf``, ``[buf, datatype]``, ``[buf, count, datatype]``, ...), as mpi4py parses
them.

A :class:`Pin` holds a ``Py_buffer`` taken with ``PyObject_GetBuffer`` (through
``ctypes.pythonapi``): it gives the address of read-only buffers too (``bytes``, read-only
NumPy arrays, the ``PickleBuffer`` of either), which ``ctypes.c_char.from_buffer`` cannot, and
it keeps the exporter alive and unresizable until released, so libmpi never sees memory move
under a pending operation.
"""

import ctypes
import sys
from ctypes import POINTER, c_char_p, c_int, c_ssize_t, c_void_p

from ._errors import check
from ._libmpi import REQUEST_NULL
from ._types import PREDEFINED_TYPES, Datatype, from_format

PyBUF_SIMPLE = 0
PyBUF_WRITABLE = 0x0001
PyBUF_FORMAT = 0x0004
PyBUF_ND = 0x0008
PyBUF_STRIDES = 0x0010 | PyBUF_ND
PyBUF_ANY_CONTIGUOUS = 0x0080 | PyBUF_STRIDES


class _Py_buffer(ctypes.Structure):
    _fields_ = [
        ("buf", c_void_p),
        ("obj", c_void_p),
        ("len", c_ssize_t),
        ("itemsize", c_ssize_t),
        ("readonly", c_int),
        ("ndim", c_int),
        ("format", c_char_p),
        ("shape", c_void_p),
        ("strides", c_void_p),
        ("suboffsets", c_void_p),
        ("internal", c_void_p),
    ]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, POINTER(_Py_buffer), c_int]
_get_buffer.restype = c_int
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [POINTER(_Py_buffer)]
_release_buffer.restype = None


class BufferNotUsable(BufferError, ValueError):
    """The object is not a (writable, when receiving) contiguous buffer. Both a BufferError
    and a ValueError (what NumPy raises for a non-contiguous array)."""


class Pin:
    """A contiguous buffer held for the duration of an operation."""

    __slots__ = ("_view", "addr", "nbytes", "itemsize", "format", "readonly")

    def __init__(self, obj, writable=False, with_format=False):
        self._view = None
        view = _Py_buffer()
        flags = PyBUF_ANY_CONTIGUOUS
        if writable:
            flags |= PyBUF_WRITABLE
        if with_format:
            flags |= PyBUF_FORMAT
        try:
            _get_buffer(obj, ctypes.byref(view), flags)
        except (BufferError, ValueError, TypeError) as e:
            what = "writable contiguous" if writable else "contiguous"
            raise BufferNotUsable(f"{type(obj).__name__}: not a {what} buffer ({e})") from None
        self._view = view
        self.addr = view.buf or 0
        self.nbytes = view.len
        self.itemsize = view.itemsize
        self.readonly = bool(view.readonly)
        self.format = view.format.decode("ascii") if (with_format and view.format) else None

    def release(self):
        view, self._view = self._view, None
        if view is not None:
            _release_buffer(ctypes.byref(view))

    def __del__(self):
        self.release()


_TYPECODES = {
    "i1": "INT8_T", "i2": "INT16_T", "i4": "INT32_T", "i8": "INT64_T",
    "u1": "UINT8_T", "u2": "UINT16_T", "u4": "UINT32_T", "u8": "UINT64_T",
    "f4": "FLOAT", "f8": "DOUBLE", "c8": "C_FLOAT_COMPLEX", "c16": "C_DOUBLE_COMPLEX",
    "b1": "C_BOOL",
}


def to_datatype(t):
    """A Datatype from a Datatype or a typecode string (``'d'``, ``'i4'``, ...)."""
    if isinstance(t, Datatype):
        return t
    if isinstance(t, str):
        if t in _TYPECODES:
            return PREDEFINED_TYPES[_TYPECODES[t]]
        return from_format(t, None)
    raise TypeError(f"expected an MPI.Datatype or a typecode string, got {type(t).__name__}")


class Msg:
    """One side of a buffer operation: address, element count, datatype, and what holds the
    buffer (a Pin, or the ctypes view of a NumPy array: see :func:`_hold`)."""

    __slots__ = ("addr", "count", "datatype", "pin")

    def __init__(self, addr, count, datatype, pin):
        self.addr = addr
        self.count = count
        self.datatype = datatype
        self.pin = pin

    @property
    def handle(self):
        return self.datatype.handle

    def release(self):
        pin, self.pin = self.pin, None
        if type(pin) is Pin:
            pin.release()

    def run(self, fn, *args):
        """Runs the blocking call ``fn(address, count, datatype, *args)`` on this buffer,
        releases the buffer and raises the call's error."""
        try:
            code = fn(self.addr, self.count, self.datatype.handle, *args)
        finally:
            self.release()
        check(code)

    def start(self, fn, *args):
        """Starts the non-blocking call ``fn(address, count, datatype, *args, &request)`` on
        this buffer and returns the request handle; the request must hold the buffer until it
        completes. A call that fails to start releases the buffer and raises its error."""
        req = c_void_p(REQUEST_NULL)
        code = fn(self.addr, self.count, self.datatype.handle, *args, ctypes.byref(req))
        if code != 0:
            self.release()
            check(code)
        return req.value


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def address_of(buf):
    """``(address, holder)`` of a contiguous buffer; the holder keeps the buffer exported (so
    it cannot move) while it lives. A writable C-order buffer takes the short way, ctypes'
    ``from_buffer`` (one C call, no ``Py_buffer`` to keep); a read-only, Fortran-order or empty
    one a :class:`Pin`."""
    try:
        view = _from_buffer(buf)
    except (TypeError, ValueError):  # read-only or not C-contiguous; empty
        pin = Pin(buf)
        return pin.addr, pin
    return _addressof(view), view
_ndarray = None
_DTYPE_DATATYPES = {}  # NumPy dtype -> Datatype of its buffer format (the formats that have one)


def _ndarray_type():
    global _ndarray
    if _ndarray is None:
        np = sys.modules.get("numpy")  # the package never imports NumPy itself
        if np is None:
            return None
        _ndarray = np.ndarray
    return _ndarray


def _hold(buf, writable, with_format):
    """``(address, bytes, datatype of its format or None, holder)`` of a contiguous buffer.
    A writable C-order NumPy array (the common case) takes the short way: ctypes takes its
    address (and holds its buffer, so it cannot be resized, until the holder is dropped), its
    dtype's datatype is cached. Anything else is pinned with ``PyObject_GetBuffer``."""
    if type(buf) is _ndarray or (_ndarray is None and type(buf) is _ndarray_type()):
        try:
            view = _from_buffer(buf)  # TypeError when read-only or not C-contiguous,
        except (TypeError, ValueError):  # ValueError when empty
            view = None
        if view is not None:
            datatype = None
            if with_format:
                datatype = _DTYPE_DATATYPES.get(buf.dtype)
                if datatype is None:
                    datatype = from_format(memoryview(buf).format, buf.itemsize)
                    if len(_DTYPE_DATATYPES) < 256:
                        _DTYPE_DATATYPES[buf.dtype] = datatype
            return _addressof(view), buf.nbytes, datatype, view
    pin = Pin(buf, writable=writable, with_format=with_format)
    try:
        datatype = from_format(pin.format, pin.itemsize) if with_format else None
    except BaseException:
        pin.release()
        raise
    return pin.addr, pin.nbytes, datatype, pin


def _is_datatype(x):
    return isinstance(x, (Datatype, str))


def message(spec, writable, blocks=1):
    """Parses a buffer spec as mpi4py does.

    ``blocks`` > 1 is for collectives: a count inferred from the buffer is divided by it (the
    count of one block), an explicit count is taken as the count of one block.
    """
    o_count = o_displ = o_type = None
    if isinstance(spec, (list, tuple)):
        n = len(spec)
        if n == 2:
            buf, second = spec
            if _is_datatype(second):
                o_type = second
            elif isinstance(second, (list, tuple)):
                o_count, o_displ = second
            else:
                o_count = second
        elif n == 3:
            buf, o_count, o_type = spec
            if isinstance(o_count, (list, tuple)):
                o_count, o_displ = o_count
        elif n == 4:
            buf, o_count, o_displ, o_type = spec
        else:
            raise ValueError("message: expecting 2 to 4 items")
    else:
        buf = spec
    if buf is None:
        datatype = to_datatype(o_type) if o_type is not None else PREDEFINED_TYPES["BYTE"]
        count = int(o_count or 0)
        if count:
            raise ValueError(f"message: buffer is None but count is {count}")
        return Msg(0, 0, datatype, None)
    addr, length, datatype, pin = _hold(buf, writable, o_type is None)
    try:
        if o_type is not None:
            datatype = to_datatype(o_type)
        size = datatype.Get_size()
        if size <= 0:
            raise ValueError(f"message: datatype {datatype.name} has size {size}")
        # A derived type steps by its extent and reaches as far as its true bounds.
        extent = size if datatype.is_predefined else datatype.extent
        offset = 0
        if o_displ is not None:
            displ = int(o_displ)
            if displ < 0:
                raise ValueError(f"message: negative displacement {displ}")
            offset = displ * extent
            if offset > length:
                raise ValueError(f"message: displacement {displ} out of bounds")
            length -= offset
        if o_count is not None:
            count = int(o_count)
            if count < 0:
                raise ValueError(f"message: negative count {count}")
        else:
            if extent <= 0 or length % extent:
                raise ValueError(
                    f"message: cannot infer count, buffer length {length} is not a multiple "
                    f"of datatype {datatype.name} extent {extent}"
                )
            count = length // extent
            if blocks > 1:
                if count % blocks:
                    raise ValueError(
                        f"message: cannot infer count, number of entries {count} is not a "
                        f"multiple of the required number of blocks {blocks}"
                    )
                count //= blocks
        low, high = (0, count * size) if datatype.is_predefined else datatype.span(count)
        if blocks > 1 and count:
            high = max(high, low + (blocks - 1) * count * extent + (high - low))
        if low < 0 or high > length:
            raise ValueError(
                f"message: {count} x {datatype.name} x {max(blocks, 1)} block(s) reach bytes "
                f"{low}..{high}, outside the buffer's {length} bytes"
            )
        return Msg(addr + offset, count, datatype, pin)
    except BaseException:
        if type(pin) is Pin:
            pin.release()
        raise
