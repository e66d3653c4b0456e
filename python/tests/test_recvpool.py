"""The receive pool recycles a buffer only once nothing references it (directly, through a view,
or through the arrays pickle rebuilt on it), and stays under its byte limit."""

import pickle

import numpy as np

from mpicd import _recvpool as P


def rebuilt(buf, n):
    """An array rebuilt by pickle on ``buf``, as a receive does."""
    data = pickle.dumps(np.arange(n, dtype=np.uint8), protocol=5, buffer_callback=lambda b: False)
    return pickle.loads(data, buffers=[buf])


def test_reuse_only_when_free():
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


def test_alloc_many_reuses_only_free_buffers():
    P.clear()
    size = 200 << 10
    bufs, addrs = P.alloc_many(size, 4)
    assert len(set(addrs)) == 4 and all(len(b) == size for b in bufs)
    kept = rebuilt(bufs[1], size)  # an array pickle rebuilt on the second one
    del bufs
    again, addrs2 = P.alloc_many(size, 4)
    assert addrs[1] not in addrs2  # still referenced: not reused
    assert len(set(addrs2) & set(addrs)) == 3  # the three free ones are
    del kept
    assert P.alloc(size)[1] == addrs[1]  # free now
    del again
    P.clear()
    assert P.pooled_bytes() == 0


def test_alloc_many_small_buffers():
    bufs, addrs = P.alloc_many(1000, 3)
    assert len(bufs) == 3 and all(len(b) == 1000 for b in bufs) and all(addrs)
