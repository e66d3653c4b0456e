"""``MPI.Datatype`` and ``MPI.Op`` (and :class:`Handle`, what every handle class shares): the
predefined handles, their sizes, the typecode table that infers a datatype from a buffer's
format, and the Python meaning of each op for the object reductions (``reduce``/``allreduce``
apply them to objects, as mpi4py does)."""

import ctypes
import sys

from ._libmpi import DATATYPE_ALIASES, DATATYPES, OPS, ORDER_C, lib


class Handle:
    """What every handle class shares: equality and hash by handle, truth unless the null
    handle ``_NULL``, a repr with the name. A subclass sets ``_NULL`` and has ``handle`` and
    ``name`` slots."""

    __slots__ = ()

    def __eq__(self, other):
        return isinstance(other, type(self)) and other.handle == self.handle

    def __hash__(self):
        return hash((type(self).__name__, self.handle))

    def __bool__(self):
        return self.handle != self._NULL

    def __repr__(self):
        return f"<mpicd.MPI.{type(self).__name__} {self.name}>"


# Predefined handles are small constants of the standard ABI; created ones are far above.
_PREDEFINED_LIMIT = 0x1000


def _counts(values):
    """A ctypes int array of ``values``."""
    values = [int(v) for v in values]
    return (ctypes.c_int * max(len(values), 1))(*values), len(values)


def _aints(values):
    values = [int(v) for v in values]
    return (ctypes.c_ssize_t * max(len(values), 1))(*values), len(values)


class Datatype(Handle):
    """A datatype handle: a predefined one, or one made by the constructors below (mpi4py's
    names). A new type must be committed (:meth:`Commit`) before it is used in communication
    and freed (:meth:`Free`) when no longer needed."""

    __slots__ = ("handle", "name", "_size")
    _NULL = DATATYPES["DATATYPE_NULL"]

    def __init__(self, handle, name=None):
        self.handle = int(handle)
        self.name = name or f"datatype {self.handle:#x}"
        self._size = None

    # --- constructors ---------------------------------------------------------------------

    @staticmethod
    def _made(fn, *args):
        from ._errors import check

        out = ctypes.c_void_p(DATATYPES["DATATYPE_NULL"])
        check(fn(*args, ctypes.byref(out)))
        return Datatype(out.value)

    def Create_contiguous(self, count):
        return self._made(lib.MPI_Type_contiguous, int(count), self.handle)

    def Create_vector(self, count, blocklength, stride):
        return self._made(lib.MPI_Type_vector, int(count), int(blocklength), int(stride),
                          self.handle)

    def Create_hvector(self, count, blocklength, stride):
        return self._made(lib.MPI_Type_create_hvector, int(count), int(blocklength),
                          int(stride), self.handle)

    def Create_indexed(self, blocklengths, displacements):
        bl, n = _counts(blocklengths)
        dp, m = _counts(displacements)
        if n != m:
            raise ValueError(f"{n} block lengths for {m} displacements")
        return self._made(lib.MPI_Type_indexed, n, bl, dp, self.handle)

    def Create_hindexed(self, blocklengths, displacements):
        bl, n = _counts(blocklengths)
        dp, m = _aints(displacements)
        if n != m:
            raise ValueError(f"{n} block lengths for {m} displacements")
        return self._made(lib.MPI_Type_create_hindexed, n, bl, dp, self.handle)

    def Create_indexed_block(self, blocklength, displacements):
        dp, n = _counts(displacements)
        return self._made(lib.MPI_Type_create_indexed_block, n, int(blocklength), dp,
                          self.handle)

    def Create_hindexed_block(self, blocklength, displacements):
        dp, n = _aints(displacements)
        return self._made(lib.MPI_Type_create_hindexed_block, n, int(blocklength), dp,
                          self.handle)

    @classmethod
    def Create_struct(cls, blocklengths, displacements, datatypes):
        bl, n = _counts(blocklengths)
        dp, m = _aints(displacements)
        from ._buffer import to_datatype

        types = [to_datatype(t).handle for t in datatypes]
        if not n == m == len(types):
            raise ValueError("Create_struct: lists of different lengths")
        th = (ctypes.c_void_p * max(n, 1))(*types)
        return cls._made(lib.MPI_Type_create_struct, n, bl, dp, th)

    def Create_subarray(self, sizes, subsizes, starts, order=None):
        sz, n = _counts(sizes)
        sub, _ = _counts(subsizes)
        st, _ = _counts(starts)
        order = ORDER_C if order is None else int(order)
        return self._made(lib.MPI_Type_create_subarray, n, sz, sub, st, order, self.handle)

    def Create_darray(self, size, rank, gsizes, distribs, dargs, psizes, order=None):
        gs, n = _counts(gsizes)
        di, _ = _counts(distribs)
        da, _ = _counts(dargs)
        ps, _ = _counts(psizes)
        order = ORDER_C if order is None else int(order)
        return self._made(lib.MPI_Type_create_darray, int(size), int(rank), n, gs, di, da, ps,
                          order, self.handle)

    def Create_resized(self, lb, extent):
        return self._made(lib.MPI_Type_create_resized, self.handle, int(lb), int(extent))

    def Dup(self):
        return self._made(lib.MPI_Type_dup, self.handle)

    def Commit(self):
        from ._errors import check

        h = ctypes.c_void_p(self.handle)
        check(lib.MPI_Type_commit(ctypes.byref(h)))
        return self

    def Free(self):
        from ._errors import check

        h = ctypes.c_void_p(self.handle)
        check(lib.MPI_Type_free(ctypes.byref(h)))
        self.handle = DATATYPES["DATATYPE_NULL"]

    # --- queries --------------------------------------------------------------------------

    def Get_size(self):
        if self._size is None:
            from ._errors import check

            n = ctypes.c_int(0)
            check(lib.MPI_Type_size(self.handle, ctypes.byref(n)))
            self._size = n.value
        return self._size

    @property
    def size(self):
        return self.Get_size()

    def Get_extent(self):
        from ._errors import check

        lb, ext = ctypes.c_ssize_t(0), ctypes.c_ssize_t(0)
        check(lib.MPI_Type_get_extent(self.handle, ctypes.byref(lb), ctypes.byref(ext)))
        return lb.value, ext.value

    def Get_true_extent(self):
        from ._errors import check

        lb, ext = ctypes.c_ssize_t(0), ctypes.c_ssize_t(0)
        check(lib.MPI_Type_get_true_extent(self.handle, ctypes.byref(lb), ctypes.byref(ext)))
        return lb.value, ext.value

    @property
    def extent(self):
        return self.Get_extent()[1]

    @property
    def lb(self):
        return self.Get_extent()[0]

    @property
    def ub(self):
        lb, ext = self.Get_extent()
        return lb + ext

    @property
    def true_extent(self):
        return self.Get_true_extent()[1]

    @property
    def true_lb(self):
        return self.Get_true_extent()[0]

    def Get_name(self):
        return self.name

    @property
    def is_predefined(self):
        return self.handle < _PREDEFINED_LIMIT

    def span(self, count):
        """The bytes ``count`` instances reach from the buffer's start: ``(low, high)``."""
        if count <= 0 or self.Get_size() == 0:
            return 0, 0
        tlb, text = self.Get_true_extent()
        reach = (count - 1) * self.extent
        return tlb + min(reach, 0), tlb + text + max(reach, 0)

    # --- packing --------------------------------------------------------------------------

    def Pack_size(self, count, comm):
        from ._errors import check

        n = ctypes.c_int(0)
        check(lib.MPI_Pack_size(int(count), self.handle, comm.handle, ctypes.byref(n)))
        return n.value

    def Pack(self, inbuf, outbuf, position, comm):
        """Packs ``inbuf`` (a buffer, or ``[buffer, count]``) of this type into ``outbuf`` at
        byte ``position``; returns the new position."""
        from ._buffer import message
        from ._errors import check

        src = message(_with_type(inbuf, self), False)
        dst = message(outbuf, True)
        pos = ctypes.c_int(int(position))
        try:
            size = dst.count * dst.datatype.Get_size()
            check(lib.MPI_Pack(src.addr, src.count, self.handle, dst.addr, size,
                               ctypes.byref(pos), comm.handle))
        finally:
            src.release()
            dst.release()
        return pos.value

    def Unpack(self, inbuf, position, outbuf, comm):
        """Unpacks from ``inbuf`` at byte ``position`` into ``outbuf`` (a buffer, or
        ``[buffer, count]``) of this type; returns the new position."""
        from ._buffer import message
        from ._errors import check

        src = message(inbuf, False)
        dst = message(_with_type(outbuf, self), True)
        pos = ctypes.c_int(int(position))
        try:
            size = src.count * src.datatype.Get_size()
            check(lib.MPI_Unpack(src.addr, size, ctypes.byref(pos), dst.addr, dst.count,
                                 self.handle, comm.handle))
        finally:
            src.release()
            dst.release()
        return pos.value


def _with_type(spec, datatype):
    """A message spec of ``datatype`` from a buffer or ``[buffer, count]``."""
    if isinstance(spec, (list, tuple)):
        if len(spec) == 2:
            return [spec[0], spec[1], datatype]
        return spec
    return [spec, datatype]


def _op_max(x, y):
    return y if y > x else x


def _op_min(x, y):
    return y if y < x else x


def _op_loc(better):
    def op(x, y):
        (u, i), (v, j) = x, y
        if better(u, v):
            return u, i
        if better(v, u):
            return v, j
        return (v, j) if j < i else (u, i)

    return op


_PY_OPS = {
    "SUM": lambda x, y: x + y,
    "PROD": lambda x, y: x * y,
    "MAX": _op_max,
    "MIN": _op_min,
    "BAND": lambda x, y: x & y,
    "BOR": lambda x, y: x | y,
    "BXOR": lambda x, y: x ^ y,
    "LAND": lambda x, y: bool(x) & bool(y),
    "LOR": lambda x, y: bool(x) | bool(y),
    "LXOR": lambda x, y: bool(x) ^ bool(y),
    "MAXLOC": _op_loc(lambda a, b: a > b),
    "MINLOC": _op_loc(lambda a, b: a < b),
    "REPLACE": lambda x, y: y,
    "NO_OP": lambda x, y: x,
}


class Op(Handle):
    """A reduction operation; calling it applies it to two Python objects."""

    __slots__ = ("handle", "name", "_fn")
    _NULL = OPS["OP_NULL"]

    def __init__(self, handle, name, fn=None):
        self.handle = int(handle)
        self.name = name
        self._fn = fn

    def __call__(self, x, y):
        if self._fn is None:
            raise ValueError(f"MPI.{self.name} cannot be applied to Python objects")
        return self._fn(x, y)


PREDEFINED_TYPES = {name: Datatype(h, name) for name, h in DATATYPES.items()}
for _alias, _target in DATATYPE_ALIASES.items():
    PREDEFINED_TYPES[_alias] = PREDEFINED_TYPES[_target]
PREDEFINED_OPS = {name: Op(h, name, _PY_OPS.get(name)) for name, h in OPS.items()}
BYTE = PREDEFINED_TYPES["BYTE"]

# Buffer-protocol format (struct module codes, native) -> datatype, as mpi4py's TypeDict.
_NATIVE_CODES = {
    "c": "CHAR", "b": "SIGNED_CHAR", "B": "UNSIGNED_CHAR", "?": "C_BOOL",
    "h": "SHORT", "H": "UNSIGNED_SHORT", "i": "INT", "I": "UNSIGNED",
    "l": "LONG", "L": "UNSIGNED_LONG", "q": "LONG_LONG", "Q": "UNSIGNED_LONG_LONG",
    "n": "AINT", "N": "UNSIGNED_LONG", "f": "FLOAT", "d": "DOUBLE", "g": "LONG_DOUBLE",
    "Zf": "C_FLOAT_COMPLEX", "Zd": "C_DOUBLE_COMPLEX", "Zg": "C_LONG_DOUBLE_COMPLEX",
}
_SIZED_INTS = {
    (1, True): "INT8_T", (2, True): "INT16_T", (4, True): "INT32_T", (8, True): "INT64_T",
    (1, False): "UINT8_T", (2, False): "UINT16_T", (4, False): "UINT32_T",
    (8, False): "UINT64_T",
}
_NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"


def from_format(fmt, itemsize):
    """The datatype of a buffer format string (``'d'``, ``'<i8'``-style ``'<q'``, ``'Zd'``)."""
    if fmt is None:
        return PREDEFINED_TYPES["BYTE"]
    order = ""
    if fmt and fmt[0] in "@=<>!":
        order, fmt = fmt[0], fmt[1:]
    if order in ("<", ">", "!") and order != _NATIVE_ORDER:
        raise ValueError(f"buffer format {order}{fmt}: non-native byte order has no MPI datatype")
    name = _NATIVE_CODES.get(fmt)
    if name is None:
        raise ValueError(
            f"buffer format {order}{fmt!r} has no predefined MPI datatype: "
            "give one explicitly, as [buf, count, MPI.BYTE]"
        )
    if order in ("=", "<", ">", "!") and fmt in "bBhHiIlLqQnN":
        # Standard sizes: pick the exact-width type of that size.
        name = _SIZED_INTS.get((itemsize, fmt.islower()), name)
    return PREDEFINED_TYPES[name]


def from_typecode(code):
    """A datatype given as a typecode string (``'i'``, ``'f8'`` is not accepted; ``'d'`` is)."""
    return from_format(code, None)
