"""No copy in Python: sending a NumPy array does not allocate anything near its size (checked
with tracemalloc, which sees NumPy's allocations), and receiving allocates it once."""

import tracemalloc

import numpy as np
import pickle

from mpicd import MPI

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


def test_send_does_not_copy(comm, pair):
    r, peer = pair
    if peer is None:
        return
    if r % 2 == 0:
        a = np.ones(SIZE // 8)
        obj = {"array": a, "meta": list(range(10))}
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
        tracemalloc.start()
        try:
            x = comm.recv(source=peer, tag=1)
            _, peak1 = tracemalloc.get_traced_memory()
            assert (x["array"] == 1).all()
            del x
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            y = comm.irecv(source=peer, tag=2).wait()
            _, peak2 = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert (y["array"] == 1).all()
        # The region lands in the array's final memory: one allocation of the size, no copy.
        assert SIZE <= peak1 < SIZE * 1.05, peak1
        # The second receive reuses the first one's buffer (the receive pool): at most one
        # allocation of the size, none when the pool recycles it.
        assert peak2 - before < SIZE * 1.05, (peak2, before)
