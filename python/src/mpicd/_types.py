"""``MPI.Datatype`` and ``MPI.Op`` (and :class:`Handle`, what every handle class shares): the
predefined handles, their sizes, the typecode table that infers a datatype from a buffer's
format, and the Python meaning of each op for the object reductions (``reduce``/``allreduce``
apply them to objects, as mpi4py does)."""

import ctypes
import sys

from ._libmpi import DATATYPE_ALIASES, DATATYPES, OPS, lib


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


class Datatype(Handle):
    """A datatype handle. Only the predefined ones exist in Python."""

    __slots__ = ("handle", "name", "_size")
    _NULL = DATATYPES["DATATYPE_NULL"]

    def __init__(self, handle, name=None):
        self.handle = int(handle)
        self.name = name or f"datatype {self.handle:#x}"
        self._size = None

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

    @property
    def extent(self):
        return self.Get_extent()[1]

    @property
    def lb(self):
        return self.Get_extent()[0]

    def Get_name(self):
        return self.name


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
