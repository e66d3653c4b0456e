"""Receive buffers: where the regions of an incoming object land.

Fresh memory costs a page fault (and the kernel's zeroing) per page on first touch: for a
64 MiB array, or 512 arrays of 128 KiB, that takes longer than moving the data over shared
memory. So region buffers of at least ``MIN_POOLED`` bytes come from a per-thread pool and are
recycled once nothing references them any more. The pool keeps one reference to each buffer
(a NumPy uint8 array, or a bytearray without NumPy); what it hands out (the buffer or a view of
it, then the arrays pickle rebuilds on it) keeps more, so a buffer whose reference count is back
to the pool's own is free. That holds because every pooled buffer owns its memory: NumPy
makes the owner of the memory the base of every view and of every array built on a view (it
skips the views in between), so a buffer carved out of a larger allocation would look free
while arrays on it live. Buffers are grouped by size class; the two most recently handed out
are tried first (a free one is still in the caches: a loop receiving one object after another
keeps reusing the same memory), then the others oldest first, which is the order in which
received objects usually die, so finding a free one is O(1) in the common case. No lock: each
thread has its own pool (the resize callback that allocates runs on the thread that drives the
receive).

Tunables (environment, read at import; declared with their defaults in mpicd's configuration
table, mpicd/src/config/table.rs, which ``mpicd-info --doc`` prints):
- ``MPICD_RECV_POOL_BYTES``: most bytes one thread's pool keeps (default 1 GiB; 0 turns the pool
  off). Past it, free buffers are dropped to make room, and new ones are not pooled.
- ``MPICD_RECV_POOL_MIN``: smallest buffer taken from the pool (default 64 KiB, the out-of-band
  threshold); smaller ones are allocated each time.
"""

import collections
import ctypes
import os
import sys
import threading

LIMIT = int(os.environ.get("MPICD_RECV_POOL_BYTES", 1 << 30))
MIN_POOLED = int(os.environ.get("MPICD_RECV_POOL_MIN", 64 << 10))
_TRIES = 8  # busy buffers looked at before allocating a new one

_numpy = None


def _np():
    global _numpy
    if _numpy is None:
        try:
            import numpy

            _numpy = numpy
        except ImportError:
            _numpy = False
    return _numpy


def _new(nbytes):
    """A new buffer and its address."""
    np = _np()
    if np and nbytes >= 4096:  # below, a bytearray's zero fill costs less than NumPy's call
        buf = np.empty(nbytes, dtype=np.uint8)
        return buf, buf.__array_interface__["data"][0]
    buf = bytearray(nbytes)
    return buf, ctypes.addressof(ctypes.c_char.from_buffer(buf)) if nbytes else 0


def _view(buf, nbytes):
    """The first ``nbytes`` of a pooled buffer, as an object that keeps ``buf``'s reference
    count up for as long as it, or anything built on it, lives."""
    if len(buf) == nbytes:
        return buf
    if _np():
        return buf[:nbytes]  # a NumPy view: arrays built on it get buf itself as their base
    return memoryview(buf)[:nbytes]  # a bytearray: the memoryview holds it


def _size_class(nbytes):
    grain = 4096 if nbytes < (1 << 20) else (1 << 21)
    return -(-nbytes // grain) * grain


class _Pool(threading.local):
    def __init__(self):
        self.classes = {}  # size class -> deque of (buffer, address), oldest first
        self.pooled = 0


_pool = _Pool()
# sys.getrefcount of a buffer only the pool holds, as seen below: the pool's (buffer, address)
# tuple, the local variable, getrefcount's argument.
_FREE_REFS = 3


def _take(dq):
    n = len(dq)
    if not n:
        return None
    # The most recently handed out buffers first (the last one, then the one before: a loop
    # that keeps its previous object while receiving the next): a free one is still warm in
    # the caches, and a steady exchange keeps reusing the same memory.
    entry = dq[-1]
    buf = entry[0]
    if sys.getrefcount(buf) == _FREE_REFS:
        return entry
    if n > 1:
        entry = dq[-2]
        buf = entry[0]
        if sys.getrefcount(buf) == _FREE_REFS:
            del dq[-2]
            dq.append(entry)  # to the newest end
            return entry
    # Then oldest first: the order in which received objects usually die.
    for _ in range(min(_TRIES, n)):
        entry = dq[0]
        dq.rotate(-1)  # to the newest end, free or not
        buf = entry[0]
        if sys.getrefcount(buf) == _FREE_REFS:
            return entry
    return None


def _make_room(nbytes):
    pool = _pool
    for dq in pool.classes.values():
        if pool.pooled + nbytes <= LIMIT:
            break
        for _ in range(len(dq)):
            buf = dq[0][0]
            if sys.getrefcount(buf) == _FREE_REFS:
                dq.popleft()
                pool.pooled -= len(buf)
            else:
                dq.rotate(-1)
            del buf
            if pool.pooled + nbytes <= LIMIT:
                break
    return pool.pooled + nbytes <= LIMIT


def alloc(nbytes):
    """``(buffer, address)``: a writable buffer of exactly ``nbytes`` bytes (contents
    undefined) and the address of its first byte."""
    if nbytes < MIN_POOLED or LIMIT <= 0:
        return _new(nbytes)
    cls = _size_class(nbytes)
    pool = _pool
    dq = pool.classes.get(cls)
    if dq is None:
        dq = pool.classes[cls] = collections.deque()
    entry = _take(dq)
    if entry is None:
        entry = _new(cls)
        if _make_room(cls):
            dq.append(entry)
            pool.pooled += cls
    return _view(entry[0], nbytes), entry[1]


def clear():
    """Drops this thread's free pooled buffers."""
    _make_room(LIMIT + 1)


def pooled_bytes():
    """Bytes this thread's pool holds (free or in use)."""
    return _pool.pooled
