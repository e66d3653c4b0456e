"""Module surface and communicator management: constants, predefined datatypes and ops, Status,
rank/size, Dup/Split/Free, attributes, library path and version."""

import numpy as np
import pytest

from mpicd import MPI


def test_constants():
    assert MPI.ANY_SOURCE == -1 and MPI.ANY_TAG == -2 and MPI.PROC_NULL == -3
    assert MPI.UNDEFINED == -32766
    assert MPI.SUCCESS == 0 and MPI.ERR_TRUNCATE == 15
    assert repr(MPI.IN_PLACE) == "IN_PLACE"
    for name, size in [("BYTE", 1), ("INT", 4), ("DOUBLE", 8), ("C_DOUBLE_COMPLEX", 16),
                       ("INT64_T", 8), ("C_BOOL", 1), ("LONG", 8), ("FLOAT", 4)]:
        t = getattr(MPI, name)
        assert isinstance(t, MPI.Datatype) and t.Get_size() == size == t.size
    for name in ["SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR",
                 "MAXLOC", "MINLOC", "REPLACE", "NO_OP"]:
        assert isinstance(getattr(MPI, name), MPI.Op)
    assert MPI.SUM(2, 3) == 5 and MPI.MAX(2, 3) == 3 and MPI.LXOR(1, 1) is False
    assert MPI.Get_version() == (5, 0)
    assert "mpicd" in MPI.Get_library_version()
    assert MPI.Get_processor_name()
    assert MPI.Is_initialized() and not MPI.Is_finalized()
    assert MPI.LIBMPI_PATH.endswith("libmpi.so")


def test_rank_size(comm):
    assert comm.Get_rank() == comm.rank and comm.Get_size() == comm.size
    assert 0 <= comm.rank < comm.size
    assert comm.allgather(comm.rank) == list(range(comm.size))
    assert isinstance(comm, MPI.Intracomm) and isinstance(comm, MPI.Comm)
    assert comm.Is_intra() and not comm.Is_inter()
    assert comm.Get_attr(MPI.TAG_UB) >= 32767
    assert comm.Get_errhandler() == MPI.ERRORS_RETURN


def test_dup_split_free(comm):
    d = comm.Dup()
    assert d.size == comm.size and d.rank == comm.rank and d != comm
    assert d.Get_errhandler() == MPI.ERRORS_RETURN  # inherited
    c = d.Clone()
    e = c.Split(color=0, key=comm.size - comm.rank)
    assert e.rank == comm.size - 1 - comm.rank
    for x in (e, c, d):
        x.Free()
        assert x == MPI.COMM_NULL


def test_predefined_cannot_be_freed(comm):
    for c in (MPI.COMM_WORLD, MPI.COMM_SELF, MPI.COMM_NULL):
        with pytest.raises(MPI.Exception) as e:
            c.Free()
        assert e.value.Get_error_class() == MPI.ERR_COMM
    assert comm.allgather(comm.rank) == list(range(comm.size))  # still usable
    alias = MPI.Comm(comm)
    assert alias == comm and alias.bcast("x") == "x"


def test_status_object():
    st = MPI.Status()
    assert st.source == MPI.ANY_SOURCE and st.tag == MPI.ANY_TAG
    st.source, st.tag = 3, 4
    assert st.Get_source() == 3 and st.Get_tag() == 4
    copy = MPI.Status(st)
    assert copy.source == 3


def test_dtype_inference_from_numpy(comm):
    from mpicd._buffer import message

    for dt, name in [(np.int8, "SIGNED_CHAR"), (np.uint8, "UNSIGNED_CHAR"), (np.int16, "SHORT"),
                     (np.int32, "INT"), (np.int64, "LONG"), (np.uint64, "UNSIGNED_LONG"),
                     (np.float32, "FLOAT"), (np.float64, "DOUBLE"),
                     (np.complex128, "C_DOUBLE_COMPLEX"), (np.bool_, "C_BOOL")]:
        m = message(np.zeros(6, dtype=dt), writable=False)
        assert m.datatype == getattr(MPI, name) and m.count == 6, (dt, m.datatype)
        m.release()
    with pytest.raises(ValueError, match="byte order"):
        message(np.zeros(2, dtype=">f8"), writable=False)
