"""Parallel I/O through MPI.File: open (create, exclusive, missing file), explicit-offset and
collective reads and writes of NumPy arrays checked across ranks, sizes, views with a derived
filetype, the individual and shared file pointers, ordered writes, and the errors of bad
arguments."""

import os
import tempfile

import numpy as np
import pytest

from mpicd import MPI


@pytest.fixture
def path(comm):
    """A file name in a fresh directory, the same on every rank; removed afterwards."""
    d = comm.bcast(tempfile.mkdtemp(prefix="mpicd-pyio-") if comm.rank == 0 else None, root=0)
    name = os.path.join(d, "data")
    yield name
    comm.Barrier()
    if comm.rank == 0:
        if os.path.exists(name):
            os.remove(name)
        os.rmdir(d)


def test_write_at_read_at(comm, path):
    r, n = comm.rank, comm.size
    f = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR)
    try:
        assert f.Get_amode() == MPI.MODE_CREATE | MPI.MODE_RDWR
        mine = np.arange(10, dtype="i4") + 100 * r
        f.Write_at_all(r * mine.nbytes, mine)
        f.Sync()
        comm.Barrier()
        assert f.Get_size() == n * mine.nbytes
        peer = (r + 1) % n
        got = np.zeros(10, dtype="i4")
        st = MPI.Status()
        f.Read_at(peer * mine.nbytes, got, st)
        assert st.Get_count(MPI.INT) == 10
        assert list(got) == list(np.arange(10) + 100 * peer)
        # Past the end: fewer elements.
        f.Read_at(n * mine.nbytes - 8, got, st)
        assert st.Get_count(MPI.INT) == 2
    finally:
        f.Close()
    assert not f


def test_views_and_pointers(comm, path):
    r, n = comm.rank, comm.size
    f = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR)
    try:
        # Interleaved: rank r owns every n-th double.
        ft = MPI.DOUBLE.Create_vector(1, 1, n).Create_resized(0, 8 * n)
        ft.Commit()
        f.Set_view(8 * r, MPI.DOUBLE, ft)
        disp, et, t, rep = f.Get_view()
        assert (disp, et.handle, rep) == (8 * r, MPI.DOUBLE.handle, "native")
        t.Free()
        f.Write_all(np.full(5, float(r)))
        assert f.Get_position() == 5
        assert f.Get_byte_offset(2) == 8 * r + 2 * 8 * n
        f.Sync()
        comm.Barrier()
        f.Set_view(0, MPI.DOUBLE)
        allv = np.zeros(5 * n)
        f.Read_at_all(0, allv)
        assert list(allv) == [float(i % n) for i in range(5 * n)]
        ft.Free()
        # Shared pointer: every rank appends one record; all are there once.
        f.Seek(0, MPI.SEEK_SET)
        comm.Barrier()
        f.Set_view(0, MPI.INT)
        f.Write_shared(np.array([r], dtype="i4"))
        f.Write_ordered(np.array([1000 + r], dtype="i4"))
        f.Sync()
        comm.Barrier()
        got = np.zeros(2 * n, dtype="i4")
        f.Read_at(0, got)
        assert sorted(got[:n]) == list(range(n))
        assert list(got[n:]) == [1000 + i for i in range(n)]
    finally:
        f.Close()


def test_errors(comm, path):
    with pytest.raises(MPI.Exception) as e:
        MPI.File.Open(comm, path, MPI.MODE_RDONLY)
    assert e.value.Get_error_class() == MPI.ERR_NO_SUCH_FILE
    with pytest.raises(MPI.Exception) as e:
        MPI.File.Open(comm, path, MPI.MODE_RDONLY | MPI.MODE_CREATE)
    assert e.value.Get_error_class() == MPI.ERR_AMODE
    f = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_WRONLY)
    f.Close()
    with pytest.raises(MPI.Exception) as e:
        MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_EXCL | MPI.MODE_WRONLY)
    assert e.value.Get_error_class() == MPI.ERR_FILE_EXISTS
    f = MPI.File.Open(comm, path, MPI.MODE_RDONLY | MPI.MODE_DELETE_ON_CLOSE)
    with pytest.raises(MPI.Exception) as e:
        f.Write_at(0, np.zeros(1))
    assert e.value.Get_error_class() == MPI.ERR_READ_ONLY
    f.Close()
    assert not os.path.exists(path)
