"""Derived datatypes from Python (mpi4py's Datatype methods): a matrix column as a vector, a
record as a struct over a NumPy structured array, a subarray halo, resized types stepping
through an array, Pack/Unpack, and the errors of bad use."""

import numpy as np
import pytest

from mpicd import MPI


def test_vector_column_to_contiguous_and_back(pair):
    r, peer = pair
    if peer is None:
        return
    rows, cols = 6, 5
    column = MPI.DOUBLE.Create_vector(rows, 1, cols).Commit()
    try:
        assert column.size == rows * 8
        assert column.extent == ((rows - 1) * cols + 1) * 8
        if r % 2 == 0:
            a = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
            MPI.COMM_WORLD.Send([a[:, 2:], 1, column], peer, tag=1)
            back = np.full((rows, cols), -1.0)
            MPI.COMM_WORLD.Recv([back, 1, column], peer, tag=2)
            assert (back[:, 0] == a[:, 2] * 10).all()
            assert (back[:, 1:] == -1.0).all()
        else:
            got = np.empty(rows)
            st = MPI.Status()
            MPI.COMM_WORLD.Recv(got, peer, tag=1, status=st)
            assert st.Get_count(MPI.DOUBLE) == rows
            assert (got == np.arange(rows) * cols + 2).all()
            MPI.COMM_WORLD.Send(got * 10, peer, tag=2)
    finally:
        column.Free()
    assert not column


def test_struct_over_structured_array(pair):
    r, peer = pair
    if peer is None:
        return
    rec = np.dtype([("a", np.int32), ("x", np.float64), ("c", np.int8)], align=True)
    offs = [rec.fields[n][1] for n in ("a", "x", "c")]
    t = MPI.Datatype.Create_struct([1, 1, 1], offs, [MPI.INT, MPI.DOUBLE, MPI.SIGNED_CHAR])
    t = t.Create_resized(0, rec.itemsize).Commit()
    try:
        assert t.size == 13 and t.extent == rec.itemsize
        n = 4
        if r % 2 == 0:
            out = np.zeros(n, dtype=rec)
            out["a"], out["x"], out["c"] = np.arange(n), np.arange(n) / 2, -np.arange(n)
            MPI.COMM_WORLD.Send([out, n, t], peer, tag=3)
        else:
            inc = np.zeros(n, dtype=rec)
            MPI.COMM_WORLD.Recv([inc, n, t], peer, tag=3)
            assert (inc["a"] == np.arange(n)).all()
            assert (inc["x"] == np.arange(n) / 2).all()
            assert (inc["c"] == -np.arange(n)).all()
    finally:
        t.Free()


def test_subarray_halo_ring(comm, ring):
    left, right = ring
    n = 6
    grid = np.full((n, n), float(comm.rank))
    inner = MPI.DOUBLE.Create_subarray([n, n], [n - 2, 1], [1, n - 2]).Commit()
    halo = MPI.DOUBLE.Create_subarray([n, n], [n - 2, 1], [1, 0]).Commit()
    try:
        comm.Sendrecv([grid, 1, inner], right, 4, [grid, 1, halo], left, 4)
        assert (grid[1:-1, 0] == float(left)).all()
        assert (grid[0, :] == float(comm.rank)).all()
    finally:
        inner.Free()
        halo.Free()


def test_resized_negative_lb_steps_by_extent(pair):
    r, peer = pair
    if peer is None:
        return
    t = MPI.INT.Create_resized(-4, 12).Commit()
    try:
        assert (t.lb, t.extent, t.true_lb, t.true_extent) == (-4, 12, 0, 4)
        if r % 2 == 0:
            MPI.COMM_WORLD.Send(np.arange(3, dtype=np.int32), peer, tag=5)
        else:
            buf = np.full(9, -1, dtype=np.int32)
            # Displacement 1 skips the lower bound: the instances start at bytes 4, 16, 28.
            MPI.COMM_WORLD.Recv([buf[1:], 3, t], peer, tag=5)
            assert list(buf) == [-1, 0, -1, -1, 1, -1, -1, 2, -1]
    finally:
        t.Free()


def test_pack_unpack_round_trip(comm):
    t = MPI.INT.Create_indexed([2, 1], [0, 4]).Commit()
    try:
        src = np.arange(6, dtype=np.int32)
        size = t.Pack_size(2, comm)
        assert size >= 2 * t.size
        packed = np.zeros(size, dtype=np.uint8)
        pos = t.Pack([src, 1], packed, 0, comm)
        assert pos == 12
        back = np.full(6, -1, dtype=np.int32)
        assert t.Unpack(packed, 0, [back, 1], comm) == 12
        assert list(back) == [0, 1, -1, -1, 4, -1]
        with pytest.raises(MPI.Exception) as e:
            t.Pack([src, 1], np.zeros(8, dtype=np.uint8), 0, comm)
        assert e.value.Get_error_class() == MPI.ERR_TRUNCATE
    finally:
        t.Free()


def test_bad_use_raises(comm):
    v = MPI.INT.Create_vector(2, 1, 2)
    buf = np.zeros(3, dtype=np.int32)
    with pytest.raises(MPI.Exception) as e:
        comm.Send([buf, 1, v], MPI.PROC_NULL)
    assert e.value.Get_error_class() == MPI.ERR_TYPE
    v.Free()
    with pytest.raises(MPI.Exception) as e:
        MPI.INT.Create_vector(-1, 1, 2)
    assert e.value.Get_error_class() == MPI.ERR_COUNT
    with pytest.raises(MPI.Exception) as e:
        MPI.INT.Free()
    assert e.value.Get_error_class() == MPI.ERR_TYPE
