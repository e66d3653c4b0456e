"""Finding, loading and declaring libmpi (mpicd's C library, include/mpi.h).

Binding choice: ctypes, not cffi.

- ctypes is in the standard library: ``pip install ./python`` needs no compiler and no
  dependency at all, on any Python >= 3.8.
- ``ctypes.CDLL`` releases the GIL around every foreign call, so a blocking ``MPI_Recv`` or
  ``MPI_Wait`` lets other Python threads run; a ctypes callback re-acquires the GIL itself
  (``PyGILState_Ensure``), whichever thread the library calls it from.
- mpi.h is the MPI-5 standard ABI: every handle is a pointer-sized value and the predefined
  handles are fixed small integers, so the declarations below are plain ``c_void_p``/``c_int``
  and need no header parsing (cffi's ABI mode would parse ``cdef`` text for the same result).
- What cffi would win is callback cost (a cffi callback is a little cheaper than a ctypes one).
  Our callbacks run a few times per message, never per byte: the large buffers travel as
  regions without any callback touching them, so that cost does not show in bandwidth.
- Where per-message cost does show (objects of a few KiB), the blocking object calls go through
  the optional C extension ``_mpicd_fast`` instead (C callbacks, see ``_fast.py``); it calls the
  functions of the library loaded here, by address, so there is still one libmpi.

Where libmpi is looked for, in order (the first that loads *and* exports
``MPI_Type_create_custom`` wins; Open MPI's libmpi is skipped):

1. ``$MPICD_LIBMPI``: a path to libmpi.so (an error if it is set but unusable);
2. the build tree: ``target/release/libmpi.so`` of the checkout this package sits in (running
   from source or an editable install) or was installed from (recorded at install time);
   ``$MPICD_HOME/target/release`` too;
3. the installed location: ``$MPICD_HOME/lib``, ``<sys.prefix>/lib``, ``/usr/local/lib``,
   ``ctypes.util.find_library("mpi")`` and the dynamic loader's own search path.
"""

import ctypes
import ctypes.util
import os
import sys
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_void_p

LIBNAME = "libmpi.so"

c_count = c_int64  # MPI_Count
c_aint = ctypes.c_ssize_t  # MPI_Aint (intptr_t)


class MPI_Status(ctypes.Structure):
    """``MPI_Status`` of the standard ABI: three public fields and five private ints."""

    _fields_ = [
        ("MPI_SOURCE", c_int),
        ("MPI_TAG", c_int),
        ("MPI_ERROR", c_int),
        ("internal", c_int * 5),
    ]


# --- constants of include/mpi.h (the MPI-5 standard ABI values) ---------------------------

ANY_SOURCE = -1
PROC_NULL = -3
ROOT = -4
ANY_TAG = -2
UNDEFINED = -32766
THREAD_SINGLE, THREAD_FUNNELED, THREAD_SERIALIZED, THREAD_MULTIPLE = 0, 1024, 2048, 4096
IDENT, CONGRUENT, SIMILAR, UNEQUAL = 201, 202, 203, 204
ORDER_C, ORDER_FORTRAN = 12, 15
DISTRIBUTE_NONE, DISTRIBUTE_BLOCK, DISTRIBUTE_CYCLIC, DISTRIBUTE_DFLT_DARG = 16, 17, 18, 19
TAG_UB_KEYVAL = 501

COMM_NULL, COMM_WORLD, COMM_SELF = 256, 257, 258
REQUEST_NULL = 384
MESSAGE_NULL, MESSAGE_NO_PROC = 296, 297
DATATYPE_NULL = 512
ERRHANDLER_NULL, ERRORS_ARE_FATAL, ERRORS_ABORT, ERRORS_RETURN = 320, 321, 322, 323
IN_PLACE_ADDR = 1

ERROR_CLASSES = {
    "SUCCESS": 0, "ERR_BUFFER": 1, "ERR_COUNT": 2, "ERR_TYPE": 3, "ERR_TAG": 4,
    "ERR_COMM": 5, "ERR_RANK": 6, "ERR_REQUEST": 7, "ERR_ROOT": 8, "ERR_GROUP": 9,
    "ERR_OP": 10, "ERR_TOPOLOGY": 11, "ERR_DIMS": 12, "ERR_ARG": 13, "ERR_UNKNOWN": 14,
    "ERR_TRUNCATE": 15, "ERR_OTHER": 16, "ERR_INTERN": 17, "ERR_PENDING": 18,
    "ERR_IN_STATUS": 19, "ERR_ACCESS": 20, "ERR_AMODE": 21, "ERR_ASSERT": 22,
    "ERR_BAD_FILE": 23, "ERR_CONVERSION": 25, "ERR_DUP_DATAREP": 27, "ERR_FILE_EXISTS": 28,
    "ERR_FILE_IN_USE": 29, "ERR_FILE": 30, "ERR_IO": 35, "ERR_NO_SPACE": 41,
    "ERR_NO_SUCH_FILE": 42, "ERR_QUOTA": 44, "ERR_READ_ONLY": 45,
    "ERR_UNSUPPORTED_DATAREP": 54, "ERR_BASE": 24, "ERR_DISP": 26, "ERR_INFO": 34,
    "ERR_LOCKTYPE": 37, "ERR_NO_MEM": 39, "ERR_RMA_ATTACH": 46, "ERR_RMA_CONFLICT": 47,
    "ERR_RMA_RANGE": 48, "ERR_RMA_SHARED": 49, "ERR_RMA_SYNC": 50, "ERR_SIZE": 52, "ERR_WIN": 56,
    "ERR_RMA_FLAVOR": 57, "ERR_PROC_ABORTED": 58,
    "ERR_UNSUPPORTED_OPERATION": 55, "ERR_ERRHANDLER": 61, "ERR_PROC_FAILED": 75,
    "ERR_PROC_FAILED_PENDING": 76, "ERR_REVOKED": 77, "ERR_NOT_INITIALIZED": 93,
    "ERR_LASTCODE": 16383,
}

OPS = {
    "OP_NULL": 32, "SUM": 33, "MIN": 34, "MAX": 35, "PROD": 36, "BAND": 40, "BOR": 41,
    "BXOR": 42, "LAND": 48, "LOR": 49, "LXOR": 50, "MINLOC": 56, "MAXLOC": 57,
    "REPLACE": 60, "NO_OP": 61,
}

# Python name -> handle, in mpi4py's spelling (TWOINT for MPI_2INT).
DATATYPES = {
    "DATATYPE_NULL": 512, "AINT": 513, "COUNT": 514, "OFFSET": 515, "PACKED": 519,
    "SHORT": 520, "INT": 521, "LONG": 522, "LONG_LONG": 523, "UNSIGNED_SHORT": 524,
    "UNSIGNED": 525, "UNSIGNED_LONG": 526, "UNSIGNED_LONG_LONG": 527, "FLOAT": 528,
    "C_FLOAT_COMPLEX": 530, "CXX_FLOAT_COMPLEX": 531, "DOUBLE": 532,
    "C_DOUBLE_COMPLEX": 534, "CXX_DOUBLE_COMPLEX": 535, "LONG_DOUBLE": 544,
    "C_LONG_DOUBLE_COMPLEX": 548, "CXX_LONG_DOUBLE_COMPLEX": 549, "FLOAT_INT": 552,
    "DOUBLE_INT": 553, "LONG_INT": 554, "TWOINT": 555, "SHORT_INT": 556,
    "LONG_DOUBLE_INT": 557, "C_BOOL": 568, "CXX_BOOL": 569, "WCHAR": 572, "INT8_T": 576,
    "UINT8_T": 577, "CHAR": 579, "SIGNED_CHAR": 580, "UNSIGNED_CHAR": 581, "BYTE": 583,
    "INT16_T": 584, "UINT16_T": 585, "INT32_T": 592, "UINT32_T": 593, "INT64_T": 600,
    "UINT64_T": 601,
}
DATATYPE_ALIASES = {
    "LONG_LONG_INT": "LONG_LONG", "UNSIGNED_LONG_LONG_INT": "UNSIGNED_LONG_LONG",
    "C_COMPLEX": "C_FLOAT_COMPLEX", "BOOL": "C_BOOL", "COMPLEX": "C_FLOAT_COMPLEX",
    "DOUBLE_COMPLEX": "C_DOUBLE_COMPLEX", "SINT8_T": "INT8_T", "SINT16_T": "INT16_T",
    "SINT32_T": "INT32_T", "SINT64_T": "INT64_T", "INT_INT": "TWOINT",
}
BYTE = DATATYPES["BYTE"]

# --- custom datatype callbacks (the paper's Listings 3-5 and MPIX resize) -----------------

STATE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_count, POINTER(c_void_p))
FREE_FN = ctypes.CFUNCTYPE(c_int, c_void_p)
QUERY_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_count, POINTER(c_count))
PACK_FN = ctypes.CFUNCTYPE(
    c_int, c_void_p, c_void_p, c_count, c_count, c_void_p, c_count, POINTER(c_count)
)
UNPACK_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_count, c_count, c_void_p, c_count)
REGION_COUNT_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_count, POINTER(c_count))
# reg_bases, reg_lens, reg_types are passed as raw addresses: filled with one memmove each.
REGION_FN = ctypes.CFUNCTYPE(
    c_int, c_void_p, c_void_p, c_count, c_count, c_void_p, c_void_p, c_void_p
)
RESIZE_FN = ctypes.CFUNCTYPE(
    c_int, c_void_p, c_void_p, c_count, c_count, c_count, c_void_p, c_void_p
)

_P = c_void_p  # every handle (MPI_Comm, MPI_Datatype, MPI_Request, ...) is a pointer
_PP = POINTER(c_void_p)
_I = c_int
_PI = POINTER(c_int)
_PS = POINTER(MPI_Status)

# name: (restype, argtypes)
PROTOTYPES = {
    "MPI_Init_thread": (_I, [_P, _P, _I, _PI]),
    "MPI_Initialized": (_I, [_PI]),
    "MPI_Finalized": (_I, [_PI]),
    "MPI_Finalize": (_I, []),
    "MPI_Abort": (_I, [_P, _I]),
    "MPI_Query_thread": (_I, [_PI]),
    "MPI_Is_thread_main": (_I, [_PI]),
    "MPI_Get_version": (_I, [_PI, _PI]),
    "MPI_Get_library_version": (_I, [c_char_p, _PI]),
    "MPI_Get_processor_name": (_I, [c_char_p, _PI]),
    "MPI_Wtime": (c_double, []),
    "MPI_Wtick": (c_double, []),
    "MPI_Error_string": (_I, [_I, c_char_p, _PI]),
    "MPI_Error_class": (_I, [_I, _PI]),
    "MPI_Comm_rank": (_I, [_P, _PI]),
    "MPI_Comm_size": (_I, [_P, _PI]),
    "MPI_Comm_dup": (_I, [_P, _PP]),
    "MPI_Comm_split": (_I, [_P, _I, _I, _PP]),
    "MPI_Comm_free": (_I, [_PP]),
    "MPI_Comm_group": (_I, [_P, _PP]),
    "MPI_Group_size": (_I, [_P, _PI]),
    "MPI_Group_translate_ranks": (_I, [_P, _I, _PI, _P, _PI]),
    "MPI_Group_free": (_I, [_PP]),
    "MPIX_Comm_revoke": (_I, [_P]),
    "MPIX_Comm_is_revoked": (_I, [_P, _PI]),
    "MPIX_Comm_agree": (_I, [_P, _PI]),
    "MPIX_Comm_iagree": (_I, [_P, _PI, _PP]),
    "MPIX_Comm_shrink": (_I, [_P, _PP]),
    "MPIX_Comm_ishrink": (_I, [_P, _PP, _PP]),
    "MPIX_Comm_get_failed": (_I, [_P, _PP]),
    "MPIX_Comm_ack_failed": (_I, [_P, _I, _PI]),
    "MPI_Comm_compare": (_I, [_P, _P, _PI]),
    "MPI_Comm_set_errhandler": (_I, [_P, _P]),
    "MPI_Comm_get_errhandler": (_I, [_P, _PP]),
    "MPI_Comm_get_attr": (_I, [_P, _I, _P, _PI]),
    "MPI_Barrier": (_I, [_P]),
    "MPI_Bcast": (_I, [_P, _I, _P, _I, _P]),
    "MPI_Reduce": (_I, [_P, _P, _I, _P, _P, _I, _P]),
    "MPI_Allreduce": (_I, [_P, _P, _I, _P, _P, _P]),
    "MPI_Gather": (_I, [_P, _I, _P, _P, _I, _P, _I, _P]),
    "MPI_Scatter": (_I, [_P, _I, _P, _P, _I, _P, _I, _P]),
    "MPI_Allgather": (_I, [_P, _I, _P, _P, _I, _P, _P]),
    "MPI_Alltoall": (_I, [_P, _I, _P, _P, _I, _P, _P]),
    "MPI_Ibcast": (_I, [_P, _I, _P, _I, _P, _PP]),
    "MPI_Igather": (_I, [_P, _I, _P, _P, _I, _P, _I, _P, _PP]),
    "MPI_Iscatter": (_I, [_P, _I, _P, _P, _I, _P, _I, _P, _PP]),
    "MPI_Iallgather": (_I, [_P, _I, _P, _P, _I, _P, _P, _PP]),
    "MPI_Ialltoall": (_I, [_P, _I, _P, _P, _I, _P, _P, _PP]),
    "MPI_Send": (_I, [_P, _I, _P, _I, _I, _P]),
    "MPI_Ssend": (_I, [_P, _I, _P, _I, _I, _P]),
    "MPI_Isend": (_I, [_P, _I, _P, _I, _I, _P, _PP]),
    "MPI_Issend": (_I, [_P, _I, _P, _I, _I, _P, _PP]),
    "MPI_Recv": (_I, [_P, _I, _P, _I, _I, _P, _PS]),
    "MPI_Irecv": (_I, [_P, _I, _P, _I, _I, _P, _PP]),
    "MPI_Sendrecv": (_I, [_P, _I, _P, _I, _I, _P, _I, _P, _I, _I, _P, _PS]),
    "MPI_Probe": (_I, [_I, _I, _P, _PS]),
    "MPI_Iprobe": (_I, [_I, _I, _P, _PI, _PS]),
    "MPI_Mprobe": (_I, [_I, _I, _P, _PP, _PS]),
    "MPI_Improbe": (_I, [_I, _I, _P, _PI, _PP, _PS]),
    "MPI_Mrecv": (_I, [_P, _I, _P, _PP, _PS]),
    "MPI_Imrecv": (_I, [_P, _I, _P, _PP, _PP]),
    "MPIX_Message_shape": (_I, [_P, POINTER(c_count), POINTER(c_count), c_count, _P, _P]),
    "MPI_Wait": (_I, [_PP, _PS]),
    "MPI_Test": (_I, [_PP, _PI, _PS]),
    "MPI_Testall": (_I, [_I, _PP, _PI, _PS]),
    "MPI_Waitany": (_I, [_I, _PP, _PI, _PS]),
    "MPI_Testany": (_I, [_I, _PP, _PI, _PI, _PS]),
    "MPI_Request_free": (_I, [_PP]),
    "MPI_Cancel": (_I, [_PP]),
    "MPI_Get_count": (_I, [_PS, _P, _PI]),
    "MPI_Get_count_c": (_I, [_PS, _P, POINTER(c_count)]),
    "MPI_Test_cancelled": (_I, [_PS, _PI]),
    "MPI_Type_size": (_I, [_P, _PI]),
    "MPI_Type_get_extent": (_I, [_P, POINTER(c_aint), POINTER(c_aint)]),
    "MPI_Type_commit": (_I, [_PP]),
    "MPI_Type_contiguous": (_I, [_I, _P, _PP]),
    "MPI_Type_vector": (_I, [_I, _I, _I, _P, _PP]),
    "MPI_Type_create_hvector": (_I, [_I, _I, c_aint, _P, _PP]),
    "MPI_Type_indexed": (_I, [_I, _PI, _PI, _P, _PP]),
    "MPI_Type_create_hindexed": (_I, [_I, _PI, POINTER(c_aint), _P, _PP]),
    "MPI_Type_create_indexed_block": (_I, [_I, _I, _PI, _P, _PP]),
    "MPI_Type_create_hindexed_block": (_I, [_I, _I, POINTER(c_aint), _P, _PP]),
    "MPI_Type_create_struct": (_I, [_I, _PI, POINTER(c_aint), _PP, _PP]),
    "MPI_Type_create_subarray": (_I, [_I, _PI, _PI, _PI, _I, _P, _PP]),
    "MPI_Type_create_darray": (_I, [_I, _I, _I, _PI, _PI, _PI, _PI, _I, _P, _PP]),
    "MPI_Type_create_resized": (_I, [_P, c_aint, c_aint, _PP]),
    "MPI_Type_dup": (_I, [_P, _PP]),
    "MPI_Type_get_true_extent": (_I, [_P, POINTER(c_aint), POINTER(c_aint)]),
    "MPI_Pack": (_I, [_P, _I, _P, _P, _I, _PI, _P]),
    "MPI_Unpack": (_I, [_P, _I, _PI, _P, _I, _P, _P]),
    "MPI_Pack_size": (_I, [_I, _P, _P, _PI]),
    "MPI_Type_free": (_I, [_PP]),
    "MPI_Type_create_custom": (
        _I,
        [STATE_FN, FREE_FN, QUERY_FN, PACK_FN, UNPACK_FN, REGION_COUNT_FN, REGION_FN, _P, _I, _PP],
    ),
    "MPIX_Type_custom_set_resize": (_I, [_P, RESIZE_FN]),
    "MPIX_Config_string": (_I, [_I, _PI, c_char_p]),
}

# The symbol that tells mpicd's libmpi from another MPI's (Open MPI's is also "libmpi").
MARKER = "MPI_Type_create_custom"


def _build_tree_candidates():
    """``target/release/libmpi.so`` of the checkouts this package may belong to."""
    roots = []
    home = os.environ.get("MPICD_HOME")
    if home:
        roots.append(home)
    # Running from the source checkout (python/src/mpicd/) or an editable install.
    here = os.path.dirname(os.path.abspath(__file__))
    d = here
    for _ in range(4):
        d = os.path.dirname(d)
        roots.append(d)
    # The checkout an installed copy was built from (written by setup.py at install time).
    try:
        from . import _build_tree  # type: ignore[attr-defined]

        roots.append(_build_tree.SOURCE_TREE)
    except ImportError:
        pass
    seen = set()
    for root in roots:
        path = os.path.join(root, "target", "release", LIBNAME)
        if path not in seen:
            seen.add(path)
            yield path


def _installed_candidates():
    home = os.environ.get("MPICD_HOME")
    if home:
        yield os.path.join(home, "lib", LIBNAME)
    yield os.path.join(sys.prefix, "lib", LIBNAME)
    yield os.path.join("/usr/local/lib", LIBNAME)
    found = ctypes.util.find_library("mpi")
    if found:
        yield found
    yield LIBNAME  # the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache)


def _try_load(path, tried):
    if os.path.sep in path and not os.path.exists(path):
        tried.append(f"{path}: not found")
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        tried.append(f"{path}: {e}")
        return None
    if not hasattr(lib, MARKER):
        tried.append(f"{path}: not mpicd's libmpi (no {MARKER}; Open MPI's?)")
        return None
    return lib


def _declare(lib):
    for name, (restype, argtypes) in PROTOTYPES.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
    return lib


def load():
    """Loads libmpi; returns ``(CDLL, path)``. Raises ImportError saying what to do."""
    tried = []
    env = os.environ.get("MPICD_LIBMPI")
    if env:
        lib = _try_load(env, tried)
        if lib is None:
            raise ImportError(
                f"mpicd: MPICD_LIBMPI={env} cannot be used ({tried[-1]}). Point MPICD_LIBMPI "
                "at mpicd's target/release/libmpi.so (build it with `cargo build --release "
                "--workspace` in the mpicd checkout), or unset it."
            )
        return _declare(lib), env
    for path in list(_build_tree_candidates()) + list(_installed_candidates()):
        lib = _try_load(path, tried)
        if lib is not None:
            return _declare(lib), getattr(lib, "_name", path)
    raise ImportError(
        "mpicd: mpicd's libmpi was not found. Build it in the mpicd checkout with "
        "`cargo build --release --workspace` (it makes target/release/libmpi.so), then either "
        "run from that checkout, reinstall this package from it (`pip install ./python`), or "
        "set MPICD_LIBMPI=/path/to/libmpi.so (or MPICD_HOME=/path/to/checkout).\nTried:\n  "
        + "\n  ".join(tried)
    )


lib, path = load()


def config_string(doc=False):
    """mpicd's configuration as text (``MPIX_Config_string``, what ``mpicd-info`` prints): one
    ``NAME=value`` line per ``MPICD_*`` variable and per UCX setting mpicd applies, with the
    value in effect; ``doc`` adds each one's layer, default, values and meaning. Needs no
    ``MPI_Init``."""
    size = c_int(0)
    if lib.MPIX_Config_string(int(doc), ctypes.byref(size), None) != 0:
        raise RuntimeError("mpicd: MPIX_Config_string failed")
    buf = ctypes.create_string_buffer(size.value)
    if lib.MPIX_Config_string(int(doc), ctypes.byref(size), buf) != 0:
        raise RuntimeError("mpicd: MPIX_Config_string failed")
    return buf.value.decode()
