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


def test_slab_buffers():
    """Many new buffers come from one huge-page slab: distinct, writable at their addresses,
    the first on a 2 MiB boundary; a buffer in use (also through a shorter view of it) is not
    handed out again; spare slab buffers are pooled."""
    import ctypes

    P.clear()
    cls = 128 << 10
    bufs, addrs = P.alloc_many(cls, 20)  # 2.5 MiB: a 4 MiB slab
    assert addrs[0] % (2 << 20) == 0
    assert sorted(addrs) == [addrs[0] + i * cls for i in range(20)]
    for i, a in enumerate(addrs):
        ctypes.memset(a, i, cls)
    assert all((np.frombuffer(b, np.uint8) == i).all() for i, b in enumerate(bufs))
    assert P.pooled_bytes() == 32 * cls  # the spare ones are in the pool
    del bufs
    # A size that is not the class's: a shorter view, which still holds its buffer.
    short, saddrs = P.alloc_many(cls - 1000, 40)
    assert all(len(b) == cls - 1000 for b in short)
    kept = rebuilt(short[3], cls - 1000)
    held = saddrs[3]
    del short
    again, addrs2 = P.alloc_many(cls, 40)
    assert held not in addrs2
    del kept, again
    everything, all_addrs = P.alloc_many(cls, P.pooled_bytes() // cls)
    assert held in all_addrs  # free again
    del everything
    P.clear()
    assert P.pooled_bytes() == 0
