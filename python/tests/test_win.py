"""One-sided communication through MPI.Win: windows allocated by libmpi and over a NumPy array,
Put/Get/Accumulate under fences and passive-target locks, Fetch_and_op and Compare_and_swap,
the predefined attributes, and the errors of bad arguments."""

import numpy as np
import pytest

from mpicd import MPI


def test_allocate_put_get_fence(comm):
    r, n = comm.rank, comm.size
    win = MPI.Win.Allocate(8 * n, disp_unit=8, comm=comm)
    try:
        assert win.Get_attr(MPI.WIN_SIZE) == 8 * n
        assert win.Get_attr(MPI.WIN_DISP_UNIT) == 8
        assert win.Get_attr(MPI.WIN_CREATE_FLAVOR) == MPI.WIN_FLAVOR_ALLOCATE
        mem = np.frombuffer(win.tomemory(), dtype="i8")
        assert mem.shape == (n,) and not mem.any()
        mine = np.array([100 + r], dtype="i8")
        win.Fence()
        for t in range(n):
            win.Put(mine, t, r)  # my value into slot r of every rank
        win.Fence()
        assert list(mem) == [100 + i for i in range(n)]
        got = np.zeros(n, dtype="i8")
        win.Fence()
        win.Get(got, (r + 1) % n)
        win.Fence()
        assert list(got) == [100 + i for i in range(n)]
    finally:
        win.Free()
    assert not win


def test_create_over_numpy_accumulate_lock(comm):
    r, n = comm.rank, comm.size
    exposed = np.zeros(4, dtype="f8")
    win = MPI.Win.Create(exposed, disp_unit=8, comm=comm)
    try:
        one = np.ones(4, dtype="f8") * (r + 1)
        for t in range(n):
            win.Lock(t, MPI.LOCK_SHARED)
            win.Accumulate(one, t, op=MPI.SUM)
            win.Unlock(t)
        comm.Barrier()
        win.Lock(r, MPI.LOCK_EXCLUSIVE)
        total = exposed.copy()
        win.Unlock(r)
        assert list(total) == [n * (n + 1) / 2] * 4
    finally:
        win.Free()


def test_fetch_and_op_counter_and_cas(comm):
    r, n = comm.rank, comm.size
    win = MPI.Win.Allocate(16, disp_unit=8, comm=comm)
    try:
        one, old = np.array([1], dtype="i8"), np.zeros(1, dtype="i8")
        seen = []
        win.Lock_all()
        for _ in range(50):
            win.Fetch_and_op(one, old, 0, 0, op=MPI.SUM)
            win.Flush(0)
            seen.append(int(old[0]))
        win.Unlock_all()
        comm.Barrier()
        every = comm.allgather(seen)
        values = sorted(v for s in every for v in s)
        assert values == list(range(50 * n)), "a fetch-and-add lost or repeated an update"
        # Compare and swap: only one rank wins slot 1 of rank 0.
        me, zero, res = np.array([r + 1], dtype="i8"), np.zeros(1, dtype="i8"), np.zeros(1, dtype="i8")
        win.Lock(0, MPI.LOCK_SHARED)
        win.Compare_and_swap(me, zero, res, 0, 1)
        win.Unlock(0)
        winners = comm.allgather(int(res[0]) == 0)
        assert sum(winners) == 1
    finally:
        win.Free()


def test_errors(comm):
    win = MPI.Win.Allocate(8, comm=comm)
    try:
        x = np.zeros(1, dtype="i8")
        with pytest.raises(MPI.Exception) as e:
            win.Put(x, 0)  # outside any epoch
        assert e.value.Get_error_class() == MPI.ERR_RMA_SYNC
        win.Fence()
        with pytest.raises(MPI.Exception) as e:
            win.Put(x, comm.size)  # no such rank
        assert e.value.Get_error_class() == MPI.ERR_RANK
        with pytest.raises(MPI.Exception) as e:
            win.Put(x, 0, 1)  # past the window's 8 bytes
        assert e.value.Get_error_class() == MPI.ERR_RMA_RANGE
        win.Fence()
    finally:
        win.Free()
