"""The receive pool recycles a buffer only once nothing references it (directly, through a view,
or through the arrays pickle rebuilt on it), and stays under its byte limit."""

import gc
import pickle

import numpy as np

from mpicd import _recvpool as P


def rebuilt(buf, n):
    """An array rebuilt by pickle on ``buf``, as a receive does."""
    data = pickle.dumps(np.arange(n, dtype=np.uint8), protocol=5, buffer_callback=lambda b: False)
    return pickle.loads(data, buffers=[buf])


def test_reuse_only_when_free():
    # Objects received by earlier tests may live on in reference cycles (an exception's
    # traceback holds its frames) until the collector runs: their buffers are not free.
    gc.collect()
    P.clear()
    size = 3 << 20
    a, addr_a = P.alloc(size)
    b, addr_b = P.alloc(size)
    assert addr_a != addr_b and a.nbytes == size
    arr = rebuilt(a, size)
    del a
    c, addr_c = P.alloc(size)  # a is still referenced by arr: not reused
    assert addr_c not in (addr_a, addr_b)
    del arr
    d, addr_d = P.alloc(size)  # now a is free
    assert addr_d == addr_a
    del b, c, d
    P.clear()
    assert P.pooled_bytes() == 0


def test_small_buffers_are_not_pooled():
    P.clear()
    buf, addr = P.alloc(1000)
    assert len(buf) == 1000 and addr
    assert P.pooled_bytes() == 0


def test_limit(monkeypatch):
    P.clear()
    monkeypatch.setattr(P, "LIMIT", 8 << 20)
    held = [P.alloc(3 << 20)[0] for _ in range(4)]  # 4 MiB classes: only two fit
    assert P.pooled_bytes() <= 8 << 20
    del held
    P.clear()
    assert P.pooled_bytes() == 0


def test_addresses_are_the_buffers():
    import ctypes

    P.clear()
    buf, addr = P.alloc(1 << 20)
    ctypes.memset(addr, 7, 1 << 20)
    assert (buf == 7).all()
    del buf
    P.clear()


def test_arrays_on_views_keep_the_buffer():
    """NumPy gives every array built on a view the buffer that owns the memory as its base:
    arrays made on slices of a pooled buffer (a received list of arrays of one kind: the rows of
    one array, or slices for pickle) keep that buffer busy until the last one is dropped."""
    P.clear()
    size = 2 << 20
    block, addr = P.alloc(size)
    rows = list(np.ndarray((16, size // 16), np.uint8, block, 0, (size // 16, 1)))
    pickled = rebuilt(block[size // 2:size // 2 + 1000], 1000)
    del block
    held = [P.alloc(size)]  # held: each try below must find addr or allocate anew
    assert held[-1][1] != addr
    del rows
    held.append(P.alloc(size))
    assert held[-1][1] != addr  # the array pickle made on a slice still holds it
    del pickled
    held.append(P.alloc(size))
    assert held[-1][1] == addr
    del held
    P.clear()
    assert P.pooled_bytes() == 0
