"""Errors: MPI.Exception with its class, unpicklable objects (raise before anything is sent, and
collectives fail on every rank instead of hanging), failures inside the serialization callbacks
on either side (both sides complete with an error, nobody hangs), truncation, receives of the
wrong kind (an object into a buffer receive and the reverse: MPI.ERR_TYPE, the sender completes),
freed handles."""

import contextlib
import threading
import time

import numpy as np
import pytest

from mpicd import MPI
from mpicd import _pickled

DEADLINE = 30.0  # seconds; a request not complete by then is a hang


def wait_or_fail(req, what):
    """Waits by polling, so that a hang fails the test instead of freezing the job."""
    t0 = time.monotonic()
    while True:
        try:
            flag, obj = req.test()
        except MPI.Exception as e:
            return e
        if flag:
            return obj
        if time.monotonic() - t0 > DEADLINE:
            pytest.fail(f"{what}: not complete after {DEADLINE} s (hang)")
        time.sleep(0.0005)


@contextlib.contextmanager
def raises_mpi(error_class):
    """The block must raise an MPI.Exception of ``error_class``."""
    with pytest.raises(MPI.Exception) as e:
        yield
    assert e.value.Get_error_class() == error_class


def test_exception_class(comm):
    with pytest.raises(MPI.Exception) as e:
        comm.Send(np.zeros(1), comm.size + 5)
    exc = e.value
    assert isinstance(exc, RuntimeError)
    assert exc.Get_error_class() == MPI.ERR_RANK
    assert exc.Get_error_code() == exc.error_code == int(exc)
    assert "MPI_ERR_RANK" in exc.Get_error_string() and "MPI_ERR_RANK" in str(exc)
    assert exc == MPI.ERR_RANK
    assert MPI.Get_error_class(MPI.ERR_TAG) == MPI.ERR_TAG
    assert "tag" in MPI.Get_error_string(MPI.ERR_TAG).lower()


def test_invalid_arguments(comm):
    with raises_mpi(MPI.ERR_RANK):
        comm.send("x", -7)
    with raises_mpi(MPI.ERR_TAG):
        comm.send("x", comm.rank, tag=-3)
    with raises_mpi(MPI.ERR_TAG):
        comm.isend("x", comm.rank, tag=MPI.ANY_TAG)
    assert not _pickled._LIVE  # nothing left behind by the failed starts


def test_unpicklable_raises_before_sending(comm, pair):
    r, peer = pair
    if peer is None:  # the odd rank out: in step with the pairs' Barrier
        comm.Barrier()
        return
    if r % 2 == 0:
        with pytest.raises(TypeError):
            comm.send({"lock": threading.Lock()}, peer, 3)
        with pytest.raises(Exception):
            comm.isend(lambda: 0, peer, 3)
        comm.send("good", peer, 3)
    else:
        # The first message to arrive is the good one: the failed sends sent nothing.
        assert comm.recv(source=peer, tag=3) == "good"
    comm.Barrier()
    assert not comm.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG)


def test_unpicklable_in_collectives_fails_everywhere(comm):
    bad = threading.Lock()
    for root in range(comm.size):
        with pytest.raises((TypeError, MPI.Exception)):
            comm.bcast(bad if comm.rank == root else None, root=root)
    # gather: the failing rank and the root raise; the others receive nothing, so learn nothing
    if comm.rank in (0, comm.size - 1):
        with pytest.raises((TypeError, MPI.Exception)):
            comm.gather(bad if comm.rank == comm.size - 1 else 1, root=0)
    else:
        assert comm.gather(1, root=0) is None
    with pytest.raises((TypeError, MPI.Exception)):
        comm.allgather(bad if comm.rank == 0 else 1)
    with pytest.raises((TypeError, MPI.Exception)):
        comm.scatter([bad] * comm.size if comm.rank == 0 else None, root=0)
    with pytest.raises((TypeError, MPI.Exception)):
        comm.alltoall([1] * (comm.size - 1) + [bad])
    with pytest.raises((ValueError, MPI.Exception)):
        comm.scatter([1] if comm.rank == 0 else None, root=0)  # wrong length at the root
    assert comm.allgather(comm.rank) == list(range(comm.size))  # still in step


BIG_STREAM = list(range(200000))  # pickles to ~1 MB in band: several pack fragments


@pytest.mark.parametrize(
    "callback,after,obj",
    [
        ("query", 0, {"a": np.ones(100000)}),
        ("region", 0, {"a": np.ones(100000)}),
        ("pack", 0, "small"),
        ("pack", 2, BIG_STREAM),  # after the lead message left
    ],
)
def test_sender_callback_failure(comm, pair, callback, after, obj):
    r, peer = pair
    if peer is None:  # the odd rank out: in step with the pairs' Barrier
        comm.Barrier()
        return
    if r % 2 == 0:
        _pickled.inject_fault(callback, after)
        try:
            with pytest.raises(MPI.Exception) as e:
                comm.send(obj, peer, 4)
            assert isinstance(e.value.__cause__, RuntimeError)
            assert "injected" in str(e.value.__cause__)
        finally:
            _pickled._faults.clear()
    else:
        req = comm.irecv(source=peer, tag=4)
        got = wait_or_fail(req, "receive from a failed sender")
        assert isinstance(got, MPI.Exception)
    comm.Barrier()
    # the pair still works afterwards
    if r % 2 == 0:
        comm.send("ok", peer, 5)
    else:
        assert comm.recv(source=peer, tag=5) == "ok"


@pytest.mark.parametrize(
    "callback,after,obj",
    [
        ("resize", 0, {"a": np.ones(100000)}),
        ("unpack", 0, "small"),
        ("unpack", 2, BIG_STREAM),
    ],
)
def test_receiver_callback_failure(comm, pair, callback, after, obj):
    r, peer = pair
    if peer is None:  # the odd rank out: in step with the pairs' Barrier
        comm.Barrier()
        return
    if r % 2 == 0:
        req = comm.isend(obj, peer, 6)
        got = wait_or_fail(req, "send to a failing receiver")
        assert got is None or isinstance(got, MPI.Exception)
    else:
        _pickled.inject_fault(callback, after)
        try:
            with pytest.raises(MPI.Exception) as e:
                comm.recv(source=peer, tag=6)
            assert isinstance(e.value.__cause__, RuntimeError)
        finally:
            _pickled._faults.clear()
    comm.Barrier()
    if r % 2 == 0:
        comm.send("ok", peer, 7)
    else:
        assert comm.recv(source=peer, tag=7) == "ok"


def test_truncation(comm, pair):
    r, peer = pair
    if peer is None:
        return
    if r % 2 == 0:
        comm.Send(np.arange(10, dtype=np.int32), peer, 8)
    else:
        with raises_mpi(MPI.ERR_TRUNCATE):
            comm.Recv(np.empty(5, dtype=np.int32), peer, 8)


def test_object_received_as_buffer_is_an_error(comm, pair):
    """A buffer receive that matches an object (a custom-typed message) fails with
    MPI.ERR_TYPE; the sender completes (its out-of-band buffer is drained), and the tag still
    works afterwards."""
    r, peer = pair
    if peer is None:
        return
    for size in (10, 100000):
        if r % 2 == 0:
            req = comm.isend({"a": np.ones(100000)}, peer, 9)
            got = wait_or_fail(req, "object sent to a buffer receive")
            assert got is None, got
        else:
            with raises_mpi(MPI.ERR_TYPE):
                comm.Recv(bytearray(size), peer, 9)
    _tag_still_works(comm, r, peer, 9)


def test_buffer_received_as_object_is_an_error(comm, pair):
    """The reverse: an object receive that matches a buffer message fails with MPI.ERR_TYPE."""
    r, peer = pair
    if peer is None:
        return
    if r % 2 == 0:
        comm.Send(np.arange(1000, dtype=np.int64), peer, 10)
    else:
        with raises_mpi(MPI.ERR_TYPE):
            comm.recv(source=peer, tag=10)
    _tag_still_works(comm, r, peer, 10)


def _tag_still_works(comm, r, peer, tag):
    if r % 2 == 0:
        comm.Send(np.arange(5, dtype=np.int32), peer, tag)
        comm.send({"b": np.arange(50000)}, peer, tag)
    else:
        got = np.zeros(5, dtype=np.int32)
        comm.Recv(got, peer, tag)
        assert list(got) == [0, 1, 2, 3, 4]
        obj = comm.recv(source=peer, tag=tag)
        assert np.array_equal(obj["b"], np.arange(50000))


def test_freed_communicator(comm):
    d = comm.Dup()
    h = d.handle
    d.Free()
    stale = MPI.Intracomm(h)
    with raises_mpi(MPI.ERR_COMM):
        stale.Barrier()
    with raises_mpi(MPI.ERR_COMM):
        MPI.COMM_NULL.Get_rank()
