"""Buffer collectives: Barrier, Bcast, Reduce, Allreduce, Gather, Allgather, Scatter, Alltoall,
with MPI.IN_PLACE and the [buf, count, datatype] specs."""

import numpy as np
import pytest

from mpicd import MPI


@pytest.mark.parametrize("root", [0, -1])
def test_bcast(comm, root):
    root %= comm.size
    a = np.arange(100, dtype=np.float64) if comm.rank == root else np.zeros(100)
    comm.Bcast(a, root=root)
    np.testing.assert_array_equal(a, np.arange(100.0))
    big = np.full(1 << 20, comm.rank, dtype=np.int32)
    comm.Bcast([big, MPI.INT], root=root)
    assert (big == root).all()


@pytest.mark.parametrize(
    "dtype,op,expect",
    [
        (np.int32, MPI.SUM, lambda ranks: sum(ranks)),
        (np.int64, MPI.MAX, lambda ranks: max(ranks)),
        (np.float64, MPI.MIN, lambda ranks: min(ranks)),
        (np.float32, MPI.PROD, lambda ranks: np.prod([r + 1 for r in ranks])),
        (np.uint8, MPI.BOR, lambda ranks: np.bitwise_or.reduce(ranks)),
    ],
)
def test_reduce_allreduce(comm, dtype, op, expect):
    ranks = list(range(comm.size))
    val = comm.rank + 1 if op == MPI.PROD else comm.rank
    send = np.full(10, val, dtype=dtype)
    recv = np.zeros(10, dtype=dtype)
    comm.Reduce(send, recv if comm.rank == 0 else None, op=op, root=0)
    if comm.rank == 0:
        assert (recv == expect(ranks)).all()
    recv = np.zeros(10, dtype=dtype)
    comm.Allreduce(send, recv, op=op)
    assert (recv == expect(ranks)).all()


def test_reduce_in_place(comm):
    a = np.full(4, comm.rank + 1, dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM)
    assert (a == sum(range(1, comm.size + 1))).all()
    b = np.full(4, comm.rank, dtype=np.int64)
    if comm.rank == 0:
        comm.Reduce(MPI.IN_PLACE, b, op=MPI.MAX, root=0)
        assert (b == comm.size - 1).all()
    else:
        comm.Reduce(b, None, op=MPI.MAX, root=0)


def test_reduce_bad_op(comm):
    with pytest.raises(MPI.Exception) as e:
        comm.Allreduce(np.zeros(2), np.zeros(2), op=MPI.BAND)  # bitwise op on doubles
    assert e.value.Get_error_class() == MPI.ERR_OP


def test_gather_scatter(comm):
    n, r = comm.size, comm.rank
    send = np.full(3, r, dtype=np.int32)
    recv = np.empty((n, 3), dtype=np.int32) if r == 0 else None
    comm.Gather(send, recv, root=0)
    if r == 0:
        assert (recv == np.arange(n)[:, None]).all()
    src = np.arange(n * 2, dtype=np.float64).reshape(n, 2) if r == 0 else None
    mine = np.empty(2)
    comm.Scatter(src, mine, root=0)
    np.testing.assert_array_equal(mine, [2 * r, 2 * r + 1])
    # explicit per-block counts
    recv2 = np.zeros(n * 3, dtype=np.int32) if r == 0 else None
    comm.Gather([send, 3, MPI.INT], [recv2, 3, MPI.INT] if r == 0 else None, root=0)
    if r == 0:
        assert (recv2.reshape(n, 3) == np.arange(n)[:, None]).all()
    # in place at the root
    if r == 0:
        buf = np.zeros((n, 3), dtype=np.int32)
        buf[0] = 0
        comm.Gather(MPI.IN_PLACE, buf, root=0)
        assert (buf == np.arange(n)[:, None]).all()
    else:
        comm.Gather(send, None, root=0)


def test_allgather_alltoall(comm):
    n, r = comm.size, comm.rank
    out = np.empty(n, dtype=np.int64)
    comm.Allgather(np.array([r * 10], dtype=np.int64), out)
    np.testing.assert_array_equal(out, np.arange(n) * 10)
    send = np.array([r * 100 + j for j in range(n)], dtype=np.int32)
    recv = np.empty(n, dtype=np.int32)
    comm.Alltoall(send, recv)
    np.testing.assert_array_equal(recv, [j * 100 + r for j in range(n)])
    inplace = np.zeros(n, dtype=np.int64)
    inplace[r] = r + 5
    comm.Allgather(MPI.IN_PLACE, inplace)
    np.testing.assert_array_equal(inplace, np.arange(n) + 5)


def test_barrier_and_wtime(comm):
    t0 = MPI.Wtime()
    comm.Barrier()
    comm.barrier()
    assert MPI.Wtime() >= t0
    assert MPI.Wtick() > 0
