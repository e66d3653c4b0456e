"""Object collectives: bcast, gather, scatter, allgather, alltoall, reduce, allreduce, barrier,
with every root, objects holding NumPy arrays, and results that are copies."""

import numpy as np
import pytest

from mpicd import MPI


def roots(comm):
    return list(range(comm.size))


def test_bcast_every_root(comm):
    for root in roots(comm):
        obj = {"root": root, "a": np.arange(100000) * root, "s": "x" * 10} if comm.rank == root else None
        got = comm.bcast(obj, root=root)
        assert got["root"] == root and got["s"] == "x" * 10
        assert (got["a"] == np.arange(100000) * root).all()
        if comm.rank == root:
            assert got is not obj and got["a"] is not obj["a"]  # a copy, as in mpi4py
            got["a"][0] = -1
            assert obj["a"][0] == 0


def test_gather_reduce(comm):
    n, r = comm.size, comm.rank
    for root in roots(comm):
        got = comm.gather((r, np.full(20000, r)), root=root)
        if r == root:
            assert [g[0] for g in got] == list(range(n))
            assert all((g[1] == i).all() for i, g in enumerate(got))
        else:
            assert got is None
        total = comm.reduce(r + 1, op=MPI.SUM, root=root)
        assert total == (n * (n + 1) // 2 if r == root else None)
    arr = comm.reduce(np.full(3, r), op=MPI.SUM, root=0)  # arrays: elementwise +
    if r == 0:
        assert (arr == n * (n - 1) // 2).all()
    assert comm.reduce(float(r), op=MPI.MAX, root=0) == (n - 1.0 if r == 0 else None)
    loc = comm.reduce((10 - r, r), op=MPI.MINLOC, root=0)
    if r == 0:
        assert loc == (10 - (n - 1), n - 1)
    cat = comm.reduce([r], op=lambda x, y: x + y, root=0)  # any callable, rank order
    if r == 0:
        assert cat == list(range(n))


def test_scatter(comm):
    n, r = comm.size, comm.rank
    for root in roots(comm):
        items = [{"to": i, "a": np.arange(70000) + i} for i in range(n)] if r == root else None
        got = comm.scatter(items, root=root)
        assert got["to"] == r and (got["a"] == np.arange(70000) + r).all()


def test_allgather_allreduce_alltoall(comm):
    n, r = comm.size, comm.rank
    got = comm.allgather({"r": r, "a": np.full(100000, r, dtype=np.int16)})
    assert [g["r"] for g in got] == list(range(n))
    assert all((g["a"] == i).all() for i, g in enumerate(got))
    assert comm.allreduce(r, op=MPI.SUM) == n * (n - 1) // 2
    assert comm.allreduce(r) == n * (n - 1) // 2  # SUM is the default
    assert comm.allreduce(r, op=MPI.MAX) == n - 1
    assert comm.allreduce(np.full(4, r + 1), op=MPI.PROD).tolist() == [np.prod(np.arange(1, n + 1))] * 4
    out = comm.alltoall([(r, j, np.full(40000, r * 10 + j)) for j in range(n)])
    for j, (src, dst, a) in enumerate(out):
        assert src == j and dst == r and (a == j * 10 + r).all()


def test_collectives_on_split_and_dup(comm):
    n, r = comm.size, comm.rank
    half = comm.Split(color=r % 2, key=-r)
    try:
        assert half.size == len(range(r % 2, n, 2))
        assert half.rank == sorted(range(r % 2, n, 2), reverse=True).index(r)
        members = half.allgather(r)
        assert members == sorted(range(r % 2, n, 2), reverse=True)
        assert half.bcast(r if half.rank == 0 else None) == members[0]
    finally:
        half.Free()
    assert not half and half == MPI.COMM_NULL
    d = comm.Dup()
    assert d.Compare(comm) == MPI.CONGRUENT and comm.Compare(comm) == MPI.IDENT
    # point-to-point traffic on comm does not disturb collectives on d
    if n >= 2:
        left, right = (r - 1) % n, (r + 1) % n
        req = comm.irecv(source=left, tag=0)
        comm.send("on comm", right, 0)
        assert d.bcast("on d") == "on d"
        assert req.wait() == "on comm"
    d.Free()


def test_split_undefined(comm):
    c = comm.Split(MPI.UNDEFINED if comm.rank == 0 else 1, 0)
    if comm.rank == 0:
        assert c == MPI.COMM_NULL
    else:
        assert c.size == comm.size - 1
        assert c.allreduce(1) == comm.size - 1
        c.Free()


def test_comm_self_objects():
    s = MPI.COMM_SELF
    assert s.bcast([1, 2]) == [1, 2]
    assert s.allgather("x") == ["x"]
    assert s.alltoall(["y"]) == ["y"]
    assert s.scatter(["z"]) == "z"
    assert s.gather(5) == [5]
    assert s.allreduce(3) == 3


def test_bad_root(comm):
    with pytest.raises(MPI.Exception) as e:
        comm.bcast(1, root=comm.size)
    assert e.value.Get_error_class() == MPI.ERR_ROOT


def test_repeated_collectives_of_arrays(comm):
    """Arrays and lists of arrays of kinds sent before (their pickle stream reused, their
    buffers the arrays themselves): every rank, the root included, gets an independent copy."""
    for rnd in range(3):
        a = np.arange(50000, dtype=np.float64) + rnd
        f = np.asfortranarray(np.arange(60000, dtype=np.int32).reshape(200, 300) + rnd)
        objs = [a, [a, f, a * 2], (f, a)]
        for obj in objs:
            got = comm.bcast(obj if comm.rank == 0 else None, root=0)
            want = obj
            if isinstance(obj, np.ndarray):
                got, want = [got], [obj]
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
                assert g.flags.f_contiguous == w.flags.f_contiguous
                if comm.rank == 0:
                    assert not np.shares_memory(g, w)
        everyone = comm.allgather([a + comm.rank, f])
        for r, (x, y) in enumerate(everyone):
            np.testing.assert_array_equal(x, a + r)
            np.testing.assert_array_equal(y, f)


def test_objects_of_different_shapes(comm):
    """Every rank's object has its own shape: libmpi's collectives over the object datatype
    size each receiving object from its message (no probe, each array moved once)."""
    n, r = comm.size, comm.rank
    mine = {"r": r, "a": np.arange(1000 * (r + 1) + r, dtype=np.float64)}
    for root in range(n):
        got = comm.gather(mine, root=root)
        if r == root:
            assert [g["r"] for g in got] == list(range(n))
            assert all(len(g["a"]) == 1000 * (i + 1) + i for i, g in enumerate(got))
        else:
            assert got is None
        back = comm.scatter(got if r == root else None, root=root)
        assert back["r"] == r and (back["a"] == mine["a"]).all()
    every = comm.allgather(mine)
    assert all((g["a"] == np.arange(1000 * (i + 1) + i)).all() for i, g in enumerate(every))
