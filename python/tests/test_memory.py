"""No copy in Python: sending NumPy arrays (in a dict, alone, as a list of one kind) does not
allocate anything near their size (checked with tracemalloc, which sees NumPy's allocations), and
receiving allocates it once."""

import tracemalloc

import numpy as np
import pickle
import pytest

from mpicd import MPI
from mpicd import _recvpool

SIZE = 64 << 20  # 64 MiB


def test_tracemalloc_sees_copies():
    """Calibration: an in-band pickle of the array is visible to tracemalloc."""
    a = np.ones(SIZE // 8)
    tracemalloc.start()
    try:
        data = pickle.dumps(a, protocol=5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del data
    assert peak >= SIZE


def _object(kind):
    """SIZE bytes of float64 ones as a dict holding an array (pickled each time), as one array
    and as a list of 8 arrays of one kind (the paths that skip pickle on a repeated send)."""
    if kind == "dict":
        return {"array": np.ones(SIZE // 8), "meta": list(range(10))}
    if kind == "array":
        return np.ones(SIZE // 8)
    return [np.ones(SIZE // 64) for _ in range(8)]


def _arrays(obj):
    return [obj["array"]] if isinstance(obj, dict) else [obj] if isinstance(obj, np.ndarray) else obj


@pytest.mark.parametrize("kind", ["dict", "array", "list"])
def test_send_does_not_copy(comm, pair, kind):
    r, peer = pair
    if peer is None:
        return
    if r % 2 == 0:
        obj = _object(kind)
        tracemalloc.start()
        try:
            comm.send(obj, peer, 1)
            req = comm.isend(obj, peer, 2)
            req.wait()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < SIZE // 64, f"sending allocated {peak} bytes in Python"
    else:
        _recvpool.clear()  # what earlier receives left free: this one allocates anew
        tracemalloc.start()
        try:
            x = comm.recv(source=peer, tag=1)
            _, peak1 = tracemalloc.get_traced_memory()
            assert all((a == 1).all() for a in _arrays(x))
            assert sum(a.nbytes for a in _arrays(x)) == SIZE
            del x
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            y = comm.irecv(source=peer, tag=2).wait()
            _, peak2 = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert all((a == 1).all() for a in _arrays(y))
        # The region lands in the array's final memory: one allocation of the size, no copy.
        assert SIZE <= peak1 < SIZE * 1.05, peak1
        # The second receive reuses the first one's buffer (the receive pool): at most one
        # allocation of the size, none when the pool recycles it.
        assert peak2 - before < SIZE * 1.05, (peak2, before)
