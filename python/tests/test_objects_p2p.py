"""Object point-to-point methods: send, recv, isend, irecv, sendrecv, probe, iprobe, mprobe,
improbe, with NumPy arrays of many dtypes and shapes out of band, nested objects holding many
arrays, ANY_SOURCE/ANY_TAG with statuses, and non-blocking receives of any size."""

import pickle

import numpy as np
import pytest

from mpicd import MPI
from mpicd import _objparts, _recvarrays


def assert_same(a, b):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a == b


def exchange(comm, pair, obj_of, tag=0):
    """Each rank of a pair sends obj_of(rank) and returns what the peer sent."""
    r, peer = pair
    if peer is None:
        return None
    if r % 2 == 0:
        comm.send(obj_of(r), peer, tag)
        return comm.recv(source=peer, tag=tag)
    got = comm.recv(source=peer, tag=tag)
    comm.send(obj_of(r), peer, tag)
    return got


PLAIN = [None, 0, -5, 3.25, "text", b"bytes", [1, [2, [3]]], {"a": (1, 2)}, {1, 2, 3}]


@pytest.mark.parametrize("obj", PLAIN, ids=lambda o: type(o).__name__)
def test_plain_objects(comm, pair, obj):
    got = exchange(comm, pair, lambda r: obj)
    if pair[1] is not None:
        assert got == obj


@pytest.mark.parametrize(
    "dtype", ["i1", "u2", "i4", "i8", "f4", "f8", "c16", "?", "M8[s]", "U7", [("x", "f8"), ("n", "i4")]],
    ids=str,
)
@pytest.mark.parametrize("shape", [(0,), (7,), (300, 70), (20, 30, 40)], ids=str)
def test_arrays(comm, pair, dtype, shape):
    def make(r):
        n = int(np.prod(shape))
        a = np.zeros(n, dtype=dtype)
        raw = a.view(np.uint8)
        raw[:] = (np.arange(raw.size) * (r + 3)) % 251
        if np.dtype(dtype) == np.bool_:
            a = a.view(np.uint8) % 2 == 1
        elif np.dtype(dtype).kind == "U":
            a = np.array([f"s{i % 97}" for i in range(n)], dtype=dtype)
        return a.reshape(shape)

    got = exchange(comm, pair, make)
    if pair[1] is not None:
        assert_same(make(pair[1]), got)
        assert got.flags.writeable


def test_layouts(comm, pair):
    def make(r):
        base = np.arange(200 * 300, dtype=np.float64).reshape(200, 300) + r
        return {
            "fortran": np.asfortranarray(base),
            "strided": base[::3, ::2],  # not contiguous: pickled in band
            "transposed": base.T,
            "readonly": np.frombuffer(base.tobytes(), dtype=np.float64),
            "scalar": np.float32(r),
            "0d": np.array(r),
        }

    got = exchange(comm, pair, make)
    if pair[1] is not None:
        want = make(pair[1])
        assert_same(want, got)
        assert got["fortran"].flags.f_contiguous


def test_nested_many_arrays(comm, pair):
    def make(r):
        return {
            "layers": [
                {"w": np.full((64, 64), i + r, dtype=np.float64), "b": np.arange(i, dtype=np.int32)}
                for i in range(40)
            ],
            "big": [np.full(20000 + i, r, dtype=np.int64) for i in range(12)],
            "meta": {"rank": r, "names": [f"n{i}" for i in range(100)]},
        }

    got = exchange(comm, pair, make)
    if pair[1] is not None:
        assert_same(make(pair[1]), got)


def test_buffers_and_bytearrays(comm, pair):
    def make(r):
        return [bytearray(b"x" * 200000), bytes(100000), pickle.PickleBuffer(bytearray(70000)), r]

    got = exchange(comm, pair, make)
    if pair[1] is not None:
        assert got[0] == bytearray(b"x" * 200000)
        assert got[1] == bytes(100000)
        assert bytes(got[2]) == bytes(70000)


def test_large_object(comm, pair):
    n = 48 << 20  # 48 MiB of float64

    def make(r):
        return np.full(n // 8, r + 0.5)

    got = exchange(comm, pair, make)
    if pair[1] is not None:
        assert got.shape == (n // 8,) and (got == pair[1] + 0.5).all()


def test_status_any_source_any_tag(comm, ring):
    left, right = ring
    comm.send({"from": comm.rank}, right, tag=100 + comm.rank)
    st = MPI.Status()
    got = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
    assert got == {"from": left}
    assert st.Get_source() == left and st.Get_tag() == 100 + left
    assert st.Get_error() == MPI.SUCCESS
    assert st.Get_count() > 0


def test_irecv_without_buffer_any_size(comm, ring):
    left, right = ring
    sizes = [0, 10, 70000, 3 << 20]
    reqs = [comm.irecv(source=left, tag=i) for i in range(len(sizes))]
    sreqs = [comm.isend(np.full(s, comm.rank, dtype=np.uint8), right, tag=i) for i, s in enumerate(sizes)]
    st = MPI.Status()
    for i, s in enumerate(sizes):
        got = reqs[i].wait(st)
        assert got.shape == (s,) and (got == left).all()
        assert st.source == left and st.tag == i
    for s in sreqs:
        assert s.wait() is None


def test_test_and_waitall_objects(comm, ring):
    left, right = ring
    r1 = comm.irecv(source=left, tag=1)
    r2 = comm.irecv(source=left, tag=2)
    flag, obj = r1.test()
    assert not flag and obj is None
    comm.Barrier()  # nobody sends before every rank tested its empty receive
    s = [comm.isend(("one", np.arange(100000)), right, 1), comm.isend("two", right, 2)]
    got = MPI.Request.waitall([r1, r2] + s)
    assert got[0][0] == "one" and (got[0][1] == np.arange(100000)).all()
    assert got[1] == "two" and got[2] is None and got[3] is None
    r3 = comm.irecv(source=left, tag=3)
    s3 = comm.isend({"k": 3}, right, 3)
    flag = False
    while not flag:
        flag, obj = r3.test()
    assert obj == {"k": 3}
    s3.wait()
    r4 = comm.irecv(source=left, tag=4)
    s4 = comm.isend(4, right, 4)
    idx, obj = MPI.Request.waitany([r4])
    assert idx == 0 and obj == 4
    s4.wait()


def test_sendrecv_objects(comm, ring):
    left, right = ring
    st = MPI.Status()
    got = comm.sendrecv([comm.rank, np.arange(50000) + comm.rank], right, 5, None, left, 5, st)
    assert got[0] == left and (got[1] == np.arange(50000) + left).all()
    assert st.source == left


def test_probe_mprobe_objects(comm, ring):
    left, right = ring
    sreq = comm.isend(("probe", np.ones(100000)), right, 31)  # large: a blocking send waits
    st = MPI.Status()
    assert comm.probe(MPI.ANY_SOURCE, MPI.ANY_TAG, st)
    assert st.source == left and st.tag == 31
    while not comm.iprobe(left, 31):
        pass
    msg = comm.mprobe(left, 31, st)
    packed, regions = msg.shape()  # MPIX_Message_shape
    assert regions == [800000] and packed > 0
    got = msg.recv()
    assert got[0] == "probe" and (got[1] == 1).all()
    sreq.wait()
    comm.send("second", right, 32)
    m = None
    while m is None:
        m = comm.improbe(left, 32)
    assert m.irecv().wait() == "second"


def test_proc_null_objects(comm):
    comm.send("nothing", MPI.PROC_NULL)
    assert comm.recv(source=MPI.PROC_NULL) is None
    assert comm.irecv(source=MPI.PROC_NULL).wait() is None


def test_message_is_one_match(comm, pair):
    """An object with out-of-band regions is one message: the first probe sees it whole and
    the next message (another tag) is still intact after it."""
    r, peer = pair
    if peer is None:
        return
    if r % 2 == 0:
        comm.send([np.arange(100000), np.arange(200000)], peer, 1)
        comm.send("after", peer, 2)
    else:
        st = MPI.Status()
        comm.probe(peer, MPI.ANY_TAG, st)
        assert st.tag == 1
        msg = comm.mprobe(peer, 1)
        assert msg.shape()[1] == [800000, 1600000]
        got = msg.recv()
        assert (got[1] == np.arange(200000)).all()
        assert comm.recv(source=peer, tag=MPI.ANY_TAG, status=st) == "after"
        assert st.tag == 2


def test_small_buffers_stay_in_band(comm, pair):
    r, peer = pair
    if peer is None:
        return
    small = np.arange(_objparts.THRESHOLD // 8 - 1, dtype=np.int64)
    if r % 2 == 0:
        comm.send(small, peer, 3)
    else:
        msg = comm.mprobe(peer, 3)
        packed, regions = msg.shape()
        assert regions == [] and packed > small.nbytes
        assert (msg.recv() == small).all()


def test_repeated_arrays_of_one_kind(comm, pair):
    """Arrays of the same dtype and shape sent again (the sender reuses their pickle stream):
    data, order and writability still come through."""
    r, peer = pair
    if peer is None:
        return
    shape = (256, 64)

    def arrays(seed):
        c = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * seed
        f = np.asfortranarray(c + 1)
        ro = c + 2
        ro.flags.writeable = False
        return [c, f, ro]

    for seed in range(1, 4):
        if r % 2 == 0:
            for a in arrays(seed):
                comm.send(a, peer, seed)
        else:
            for want in arrays(seed):
                got = comm.recv(source=peer, tag=seed)
                np.testing.assert_array_equal(got, want)
                assert got.flags.f_contiguous == want.flags.f_contiguous
                assert got.flags.c_contiguous == want.flags.c_contiguous
                assert got.flags.writeable == want.flags.writeable


def _kinds():
    base = np.arange(3 * 5 * 4096, dtype=np.float64)
    ro = base.reshape(3, 5, 4096).copy()
    ro.flags.writeable = False
    rec = np.zeros(20000, dtype=[("a", "<i4"), ("b", ">f8"), ("c", "S3")])
    rec["a"] = np.arange(20000)
    return [
        base.reshape(3, 5, 4096),
        np.asfortranarray(base.reshape(3, 5, 4096)),
        base.reshape(1, 3 * 5 * 4096),  # size-1 dimension: strides come through too
        base.reshape(3 * 5 * 4096, 1).T,
        ro,
        np.arange(70000, dtype=">i4"),  # non-native byte order
        rec,
        np.arange(80000, dtype=np.complex64).reshape(200, 400)[:, :],
    ]


def assert_rebuilt_like_pickle(got, want, sent, where):
    """A received array is what pickle.loads makes of the sent one (``want``): dtype, shape,
    strides, contiguity, writability, data."""
    assert type(got) is np.ndarray
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.strides == want.strides, where
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert got.flags.f_contiguous == want.flags.f_contiguous
    assert got.flags.writeable == sent.flags.writeable
    np.testing.assert_array_equal(got, sent)


def sent_and_received(comm, pair, objs, tag):
    """The even rank of a pair sends each object (tags from ``tag`` on); the odd one receives
    them and yields ``(i, sent, received, what pickle.loads makes of the sent one)``."""
    r, peer = pair
    for i, obj in enumerate(objs):
        if r % 2 == 0:
            comm.send(obj, peer, tag + i)
        else:
            got = comm.recv(source=peer, tag=tag + i)
            yield i, obj, got, pickle.loads(pickle.dumps(obj, protocol=5))


def test_repeated_arrays_rebuilt_like_pickle(comm, pair):
    """Arrays received again with the same pickle stream are rebuilt without the unpickler:
    dtype, shape, strides, contiguity, writability and data are what pickle.loads gives."""
    r, peer = pair
    if peer is None:
        return
    for rnd in range(3):
        for i, a, got, want in sent_and_received(comm, pair, _kinds(), 40):
            assert_rebuilt_like_pickle(got, want, a, (i, rnd))
    if r % 2 == 1:
        assert _recvarrays._RECV_ARRAYS  # the repeated receives took the direct path


def test_repeated_sequences_of_arrays(comm, pair):
    """Lists and tuples of arrays sent again (the sender reuses their stream, the receiver
    rebuilds the arrays without the unpickler) come back like pickle.loads makes them; an array
    that appears twice stays one object; a list that is not all large arrays still works."""
    r, peer = pair
    if peer is None:
        return
    kinds = _kinds()
    x = np.arange(20000, dtype=np.float64)
    for rnd in range(3):
        objs = [list(kinds), tuple(kinds[:3]), [x, x], [x, np.arange(rnd + 3)], [x * rnd, x],
                [x + rnd]]  # one array in a list: a single region
        for i, obj, got, want in sent_and_received(comm, pair, objs, 60):
            assert type(got) is type(want) and len(got) == len(want)
            for g, w, a in zip(got, want, obj):
                assert_rebuilt_like_pickle(g, w, a, (i, rnd))
            if i == 2:
                assert got[0] is got[1]
    if r % 2 == 1:
        assert any(v[0] in (list, tuple) for v in _recvarrays._RECV_ARRAYS.values())


def test_kept_objects_stay_intact(comm, pair):
    """Received objects kept while more arrive are never overwritten: their buffers go back to
    the receive pool only once every array on them is dropped (one array, a list of arrays of
    one kind sharing one buffer, F-order and read-only ones, arrays of different sizes)."""
    r, peer = pair
    if peer is None:
        return

    def objects(seed):
        ro = [np.full(20000, seed + i, dtype=np.float64) for i in range(3)]
        for a in ro:
            a.flags.writeable = False
        return [
            np.full(300000, seed % 251, dtype=np.uint8),
            [np.full(128 << 10, (seed + i) % 251, dtype=np.uint8) for i in range(16)],
            tuple(np.asfortranarray(np.full((100, 200), seed + i, np.float32)) for i in range(4)),
            ro,
            [np.full(n, seed, dtype=np.int64) for n in (10000, 30000, 20000)],
        ]

    rounds = 4
    if r % 2 == 0:
        for seed in range(rounds):
            for i, obj in enumerate(objects(seed)):
                comm.send(obj, peer, 80 + i)
        return
    kept = []
    for seed in range(rounds):
        got = [comm.recv(source=peer, tag=80 + i) for i in range(len(objects(0)))]
        kept.append(got)
        got[1][0][:] = 255  # writing one array of a list leaves its neighbours alone
        assert (got[1][1] == (seed + 1) % 251).all()
        got[1][0][:] = seed % 251
    for seed, got in enumerate(kept):
        for g, want in zip(got, objects(seed)):
            assert_same(want, g)
        assert not any(a.flags.writeable for a in got[3])
        assert all(a.flags.f_contiguous for a in got[2])


def test_repeated_dicts_of_arrays(comm, pair):
    """Dicts of arrays with str keys sent again skip pickle on both sides (a model's weights):
    keys, their order, the arrays' kinds and data come back as pickle.loads gives them. Keys in
    another order, int keys, and an array under two keys still work (pickled each time or
    looked up under their own key)."""
    r, peer = pair
    if peer is None:
        return
    kinds = _kinds()
    w = np.arange(30000, dtype=np.float32)
    for rnd in range(3):
        objs = [
            {f"layer{i}": a for i, a in enumerate(kinds)},  # mixed kinds
            {"w1": w * rnd, "w2": w + rnd, "w3": w - rnd},  # one kind: the rows of one array
            {"w3": w - rnd, "w1": w * rnd},  # other keys, other order
            {1: w, 2: w + 1},  # int keys: pickled each time
            {"a": w, "b": w},  # one array under two keys
            {"w": w + rnd, "n": rnd, "small": np.arange(10)},  # not all large arrays
        ]
        for i, obj, got, want in sent_and_received(comm, pair, objs, 90):
            assert type(got) is dict and list(got) == list(want)
            for k in want:
                if isinstance(obj[k], np.ndarray):
                    assert_rebuilt_like_pickle(got[k], want[k], obj[k], (i, k, rnd))
                else:
                    assert got[k] == obj[k]
            if i == 4:
                assert got["a"] is got["b"]
    if r % 2 == 1:
        assert any(type(v[0]) is tuple and v[0] and type(v[0][0]) is str
                   for v in _recvarrays._RECV_ARRAYS.values())


class Trusted:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return type(other) is type(self) and other.v == self.v


class Untrusted(Trusted):
    pass


def test_restricted_unpickling(comm, pair):
    """With an allow-list, a peer's object of an allowed class (and NumPy arrays, plain data)
    arrives; one that names anything else fails its receive with UnpicklingError, before the
    class is looked up; lifting the restriction lets it through again."""
    r, peer = pair
    if peer is None:
        return
    big = np.arange(100_000, dtype="f8")  # out of band, as a region
    objs = [{"a": [1, 2.5, "x"], "arr": big}, Trusted(3), Untrusted(4), Untrusted(5)]
    if r % 2 == 0:
        for o in objs:
            comm.send(o, peer, 7)
        return
    MPI.restrict_unpickling([Trusted])
    try:
        got = comm.recv(source=peer, tag=7)
        assert got["a"] == [1, 2.5, "x"]
        np.testing.assert_array_equal(got["arr"], big)
        assert comm.recv(source=peer, tag=7) == Trusted(3)
        with pytest.raises(pickle.UnpicklingError, match="allow-list"):
            comm.recv(source=peer, tag=7)
    finally:
        MPI.restrict_unpickling(None)
    assert comm.recv(source=peer, tag=7) == Untrusted(5)
