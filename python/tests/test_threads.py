"""Python threads: several threads send and receive objects at once through the package, and a
blocking receive releases the GIL (another thread keeps running while it waits)."""

import threading
import time

import numpy as np

from mpicd import MPI


def test_threads_exchange_objects(comm, ring):
    left, right = ring
    nthreads, nmsgs = 4, 20
    errors = []
    got = {}

    def worker(t):
        try:
            for i in range(nmsgs):
                tag = t * 1000 + i
                req = comm.irecv(source=left, tag=tag)
                comm.send({"t": t, "i": i, "a": np.full(20000 + i, t)}, right, tag)
                obj = req.wait()
                assert obj["t"] == t and obj["i"] == i and (obj["a"] == t).all()
            got[t] = True
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert sorted(got) == list(range(nthreads))


def test_blocking_recv_releases_the_gil(comm, pair):
    r, peer = pair
    if peer is None:
        return
    if r % 2 == 1:
        ticks = [0]
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                ticks[0] += 1

        th = threading.Thread(target=spin)
        th.start()
        try:
            t0 = time.monotonic()
            obj = comm.recv(source=peer, tag=1)  # the peer sends after 0.5 s
            waited = time.monotonic() - t0
        finally:
            stop.set()
            th.join()
        assert obj == "late"
        assert waited > 0.3
        # The spinning thread ran while the main thread was blocked in libmpi.
        assert ticks[0] > 10000
    else:
        time.sleep(0.5)
        comm.send("late", peer, 1)


def test_thread_receives_while_main_sends(comm, pair):
    r, peer = pair
    if peer is None:
        return
    out = []
    th = threading.Thread(target=lambda: out.append(comm.recv(source=peer, tag=2)))
    th.start()
    comm.send(("hello from", r, np.arange(300000)), peer, 2)
    th.join(timeout=60)
    assert not th.is_alive()
    assert out[0][1] == peer and (out[0][2] == np.arange(300000)).all()
    assert MPI.Query_thread() == MPI.THREAD_MULTIPLE
