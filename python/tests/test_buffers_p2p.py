"""Buffer point-to-point methods: Send, Recv, Isend, Irecv, Sendrecv, Probe, Iprobe, Mprobe,
with NumPy arrays of every predefined dtype, message specs, and statuses."""

import numpy as np
import pytest

from mpicd import MPI

DTYPES = [
    np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
    np.float32, np.float64, np.complex64, np.complex128, np.bool_,
]


def data(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_send_recv_dtypes(pair, dtype):
    r, peer = pair
    if peer is None:
        return
    n = 1000
    mine = data(dtype, n, r)
    theirs = np.empty(n, dtype=dtype)
    st = MPI.Status()
    if r % 2 == 0:
        MPI.COMM_WORLD.Send(mine, peer, tag=7)
        MPI.COMM_WORLD.Recv(theirs, peer, tag=8, status=st)
    else:
        MPI.COMM_WORLD.Recv(theirs, peer, tag=7, status=st)
        MPI.COMM_WORLD.Send(mine, peer, tag=8)
    np.testing.assert_array_equal(theirs, data(dtype, n, peer))
    assert st.Get_source() == peer
    assert st.Get_count(MPI.BYTE) == n * np.dtype(dtype).itemsize


@pytest.mark.parametrize("shape", [(0,), (1,), (3, 4), (2, 3, 5), (1 << 20,)])
def test_shapes_and_sizes(ring, comm, shape):
    left, right = ring
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) + comm.rank
    b = np.empty_like(a)
    req = comm.Irecv(b, left, 3)
    comm.Send(a, right, 3)
    req.Wait()
    np.testing.assert_array_equal(b, a - comm.rank + left)


def test_fortran_order_and_noncontiguous(pair, comm):
    r, peer = pair
    if peer is None:
        return
    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    out = np.empty((4, 3))  # same bytes: F order (3,4) is C order (4,3)
    if r % 2 == 0:
        comm.Send(f, peer)
        with pytest.raises(BufferError):
            comm.Send(np.arange(10.0)[::2], peer)
    else:
        comm.Recv(out, peer)
        np.testing.assert_array_equal(out, f.T)
        with pytest.raises(BufferError):
            comm.Send(np.arange(10.0)[::2], peer)


def test_message_specs(pair, comm):
    r, peer = pair
    if peer is None:
        return
    a = np.arange(10, dtype=np.int32)
    if r % 2 == 0:
        comm.Send([a, MPI.INT], peer, 1)
        comm.Send([a, 4, MPI.INT], peer, 2)
        comm.Send([a, (3, 5), MPI.INT], peer, 3)  # count 3 from displacement 5
        comm.Send([a, 2, 1, "i"], peer, 4)
        comm.Send(b"hello", peer, 5)  # read-only bytes
        comm.Send([a.view(np.uint8), 8, MPI.BYTE], peer, 6)
    else:
        b = np.zeros(10, dtype=np.int32)
        comm.Recv([b, MPI.INT], peer, 1)
        np.testing.assert_array_equal(b, a)
        b[:] = 0
        comm.Recv([b, 4, MPI.INT], peer, 2)
        np.testing.assert_array_equal(b[:4], a[:4])
        b[:] = 0
        comm.Recv([b, 3, MPI.INT], peer, 3)
        np.testing.assert_array_equal(b[:3], a[5:8])
        b[:] = 0
        comm.Recv([b, (2, 4), MPI.INT], peer, 4)
        np.testing.assert_array_equal(b[4:6], a[1:3])
        buf = bytearray(5)
        comm.Recv(buf, peer, 5)
        assert buf == b"hello"
        raw = bytearray(8)
        comm.Recv([raw, MPI.BYTE], peer, 6)
        assert bytes(raw) == a[:2].tobytes()


def test_spec_errors(comm):
    a = np.arange(4, dtype=np.int32)
    with pytest.raises(ValueError):
        comm.Send([a, 5, MPI.INT], comm.rank)  # more than the buffer holds
    with pytest.raises(ValueError):
        comm.Send([a, -1, MPI.INT], comm.rank)
    with pytest.raises(ValueError):
        comm.Send(np.zeros(2, dtype=np.float16), comm.rank)  # no MPI datatype
    with pytest.raises(ValueError):
        comm.Send([a, 1, 2, 3, 4], comm.rank)
    with pytest.raises(BufferError):
        comm.Recv(b"read-only", comm.rank)


def test_isend_irecv_many(ring, comm):
    left, right = ring
    n = 16
    sends = [np.full(100 + i, comm.rank * 1000 + i, dtype=np.int64) for i in range(n)]
    recvs = [np.empty(100 + i, dtype=np.int64) for i in range(n)]
    rreqs = [comm.Irecv(recvs[i], left, tag=i) for i in range(n)]
    sreqs = [comm.Isend(sends[i], right, tag=i) for i in range(n)]
    MPI.Request.Waitall(rreqs + sreqs)
    for i in range(n):
        assert (recvs[i] == left * 1000 + i).all()
    assert not rreqs[0]  # completed requests are REQUEST_NULL
    assert rreqs[0] == MPI.REQUEST_NULL


def test_test_and_waitany(ring, comm):
    left, right = ring
    b = np.empty(4, dtype=np.int32)
    r = comm.Irecv(b, left, 11)
    comm.Barrier()
    s = comm.Isend(np.full(4, comm.rank, dtype=np.int32), right, 11)
    while not r.Test():
        pass
    assert (b == left).all()
    idx = MPI.Request.Waitany([MPI.REQUEST_NULL, s])
    assert idx == 1
    assert MPI.Request.Waitany([MPI.REQUEST_NULL]) == MPI.UNDEFINED
    c = np.empty(1, dtype=np.int32)
    r2 = comm.Irecv(c, left, 12)
    s2 = comm.Isend(np.array([comm.rank], dtype=np.int32), right, 12)
    while not MPI.Request.Testall([r2, s2]):
        pass
    assert c[0] == left


def test_sendrecv(ring, comm):
    left, right = ring
    out = np.empty(5, dtype=np.float64)
    st = MPI.Status()
    comm.Sendrecv(np.full(5, float(comm.rank)), right, 9, out, left, 9, st)
    assert (out == left).all()
    assert st.source == left and st.tag == 9


def test_probe_iprobe_any(ring, comm):
    left, right = ring
    st = MPI.Status()
    assert not comm.Iprobe(MPI.ANY_SOURCE, 99)
    comm.Send(np.arange(5, dtype=np.int16), right, 42)
    assert comm.Probe(MPI.ANY_SOURCE, MPI.ANY_TAG, st)
    assert st.Get_source() == left and st.Get_tag() == 42
    assert st.Get_count(MPI.SHORT) == 5 and st.Get_count(MPI.BYTE) == 10
    assert st.Get_count(MPI.INT) == MPI.UNDEFINED
    while not comm.Iprobe(left, 42, st):
        pass
    out = np.empty(5, dtype=np.int16)
    comm.Recv(out, MPI.ANY_SOURCE, MPI.ANY_TAG, st)
    assert st.source == left and st.tag == 42
    np.testing.assert_array_equal(out, np.arange(5))


def test_mprobe_buffers(ring, comm):
    left, right = ring
    comm.Send(np.arange(8, dtype=np.int32), right, 5)
    st = MPI.Status()
    msg = comm.Mprobe(MPI.ANY_SOURCE, 5, st)
    assert msg and st.source == left
    out = np.empty(st.Get_count(MPI.INT), dtype=np.int32)
    msg.Recv(out)
    assert not msg
    np.testing.assert_array_equal(out, np.arange(8))
    comm.Send(np.arange(3, dtype=np.int32), right, 6)
    m = None
    while m is None:
        m = comm.Improbe(left, 6)
    out = np.empty(3, dtype=np.int32)
    m.Irecv(out).Wait()
    np.testing.assert_array_equal(out, np.arange(3))


def test_proc_null(comm):
    comm.Send(np.zeros(3), MPI.PROC_NULL)
    st = MPI.Status()
    comm.Recv(np.zeros(3), MPI.PROC_NULL, status=st)
    assert st.source == MPI.PROC_NULL


def test_self_messages(comm):
    me = comm.rank
    r = comm.Irecv(out := np.empty(3), me, 1)
    comm.Send(np.arange(3.0), me, 1)
    r.Wait()
    np.testing.assert_array_equal(out, np.arange(3.0))
    s = MPI.COMM_SELF
    assert s.size == 1 and s.rank == 0
    s.Send(b"abc", 0, 2)
    got = bytearray(3)
    s.Recv(got, 0, 2)
    assert got == b"abc"
