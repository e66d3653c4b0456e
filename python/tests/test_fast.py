"""The compiled fast path (``mpicd._mpicd_fast``): taken by the blocking object calls when it is
built (and ``MPICD_PY_FAST`` is not 0), its C callbacks run instead of Python ones, and its
messages are the ctypes path's (the other tests mix both: ``isend`` and ``irecv`` always take
the ctypes path, ``send`` and ``recv`` the compiled one when it is there)."""

import importlib.util
import os

import numpy as np
import pytest

from mpicd import MPI
from mpicd import _fast, _pickled

BUILT = importlib.util.find_spec("mpicd._mpicd_fast") is not None
WANTED = os.environ.get("MPICD_PY_FAST", "1") != "0"
fast_only = pytest.mark.skipif(not (BUILT and WANTED), reason="C extension not built, or off")

OBJECTS = [
    "small",
    np.arange(300, dtype=np.int16),  # in band
    np.arange(20000, dtype=np.float64).reshape(100, 200),  # one region
    {"a": np.ones(100000), "b": [np.zeros(30000), np.full(9000, 3, dtype=np.int32)], "c": 7},
    [np.ones(20000)] * 2,  # one array twice: pickle sends it once
]


def same(a, b):
    if isinstance(a, np.ndarray):
        return type(b) is np.ndarray and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return a == b


def test_extension_taken_when_built(comm):
    assert (_fast.ext is not None) == (BUILT and WANTED)
    if os.environ.get("PY_TEST_FAST_EXPECTED") == "1":  # python/run-tests.sh: it must be built
        assert BUILT, "mpicd._mpicd_fast was not built"


@fast_only
def test_blocking_calls_run_c_callbacks(comm, pair):
    r, peer = pair
    if peer is None:
        return
    before = _fast.ext.callbacks()
    live = len(_pickled._LIVE)
    for i, obj in enumerate(OBJECTS):
        if r % 2 == 0:
            comm.send(obj, peer, 30 + i)
            got = comm.recv(source=peer, tag=40 + i)
        else:
            got = comm.recv(source=peer, tag=30 + i)
            comm.ssend(got, peer, 40 + i)
        assert same(obj, got)
    # Each message: at least query, region count and pack on the sender (3 callbacks), resize,
    # query, region count and unpack on the receiver (4), all in C.
    assert _fast.ext.callbacks() - before >= 7 * len(OBJECTS)
    assert len(_pickled._LIVE) == live  # no operation went through the Python table


@fast_only
def test_sendrecv_mrecv_status(comm, pair):
    r, peer = pair
    if peer is None:
        return
    before = _fast.ext.callbacks()
    for obj in OBJECTS:
        st = MPI.Status()
        got = comm.sendrecv(obj, peer, 50 + r, source=peer, recvtag=50 + peer, status=st)
        assert same(obj, got)
        assert (st.Get_source(), st.Get_tag(), st.Get_error()) == (peer, 50 + peer, 0)
        st = MPI.Status()
        if r % 2 == 0:  # a blocking send of a large object waits for its receive
            comm.send(obj, peer, 60 + r)
        msg = comm.mprobe(source=peer, tag=60 + peer)
        assert same(obj, msg.recv(status=st))
        assert not msg and (st.Get_source(), st.Get_tag()) == (peer, 60 + peer)
        if r % 2 == 1:
            comm.send(obj, peer, 60 + r)
    assert _fast.ext.callbacks() - before >= 14 * len(OBJECTS)
    assert comm.recv(source=MPI.PROC_NULL) is None
    comm.send("nothing", MPI.PROC_NULL)


def test_errors_of_the_blocking_calls(comm, pair):
    """The same errors on either path."""
    r, peer = pair
    if peer is None:
        return
    with pytest.raises(MPI.Exception) as e:
        comm.send("x", comm.size + 3)
    assert e.value.Get_error_class() == MPI.ERR_RANK
    with pytest.raises(MPI.Exception) as e:
        comm.recv(source=peer, tag=-7)
    assert e.value.Get_error_class() == MPI.ERR_TAG
    # A buffer message received as an object fails the receive, which stays usable.
    if r % 2 == 0:
        comm.Send(np.frombuffer(b"not a pickle", dtype=np.uint8), peer, 70)
        comm.send("after", peer, 71)
    else:
        with pytest.raises(MPI.Exception) as e:  # a buffer message received as an object
            comm.recv(source=peer, tag=70)
        assert comm.recv(source=peer, tag=71) == "after"
