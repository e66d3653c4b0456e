"""Ping-pong bandwidth of Python objects and raw buffers between two ranks.

Run under a launcher with 2 ranks, once per implementation:

    mpirun -n 2 python pingpong.py --impl mpicd  --out mpicd.csv    # mpicd's libmpi
    mpirun -n 2 python pingpong.py --impl mpi4py --out mpi4py.csv   # mpi4py on Open MPI

Cases: ``single`` (one NumPy uint8 array of the size) and ``many`` (a list of 128 KiB arrays
adding up to the size). Methods:

- mpicd:  ``raw`` (Send/Recv of a preallocated buffer), ``raw-multi`` (the many case's 128 KiB
  buffers as raw messages, preallocated: the transport's limit for that shape),
  ``pickle-inband`` (pickle protocol 5, every buffer in the stream, one message, received
  after Mprobe), ``pickle-oob-multi``
  (protocol 5 with the same out-of-band threshold as ours, a lengths header then one message
  for the stream and one per buffer: the pkl5 design on mpicd), ``ours`` (comm.send/recv: the
  stream and the buffers in one custom-datatype message), ``ours-ctypes`` (the same through the
  package's ctypes fallback instead of its C extension, up to 64 KiB, in the single case: what
  the extension gains where per-message costs dominate);
- mpi4py: ``raw`` (Send/Recv), ``pickle`` (comm.send/recv, in band), ``pkl5``
  (mpi4py.util.pkl5, out of band above mpi4py's default 256 KiB threshold, one message per
  buffer).

One round trip sends the object and gets it back (the echo re-serializes what it received);
bandwidth = size / (round-trip time / 2). Each rank drops the object it received in the previous
round trip before the next receive (raw reuses its one receive buffer: the others get the same
chance to reuse memory). At each size the methods run batch after batch in
turn; each point is the best of ``--batches`` batches of enough round trips to last
``--seconds`` (the machines are shared and noisy: best-of-batches is the least noisy
estimate; compare ratios from the same run). Rank 0 writes the CSV.
"""

import argparse
import csv
import os
import pickle
import sys
import time

import numpy as np

CHUNK = 128 << 10  # arrays of the "many" case
TAG = 7


def parse_size(text):
    text = text.strip().upper().rstrip("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMG")) * mult)


def sizes_between(lo, hi):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= 4
    return out


def make_object(case, size):
    if case == "single":
        return np.full(size, 1, dtype=np.uint8)
    return [np.full(CHUNK, i % 251, dtype=np.uint8) for i in range(size // CHUNK)]


# --- methods -------------------------------------------------------------------------------


def raw_method(MPI, comm):
    state = {}

    def prepare(case, size):
        state["buf"] = np.full(size, 1, dtype=np.uint8)
        return state["buf"]

    def send(obj, peer):
        comm.Send(obj, peer, TAG)

    def recv(peer):
        comm.Recv(state["buf"], peer, TAG)
        return state["buf"]

    return prepare, send, recv


def raw_multi_method(MPI, comm):
    """The many case's buffers as raw messages, preallocated and reused: the transport's own
    limit for an object of that shape."""
    state = {}

    def prepare(case, size):
        state["bufs"] = make_object("many", size)
        return state["bufs"]

    def send(obj, peer):
        MPI.Request.Waitall([comm.Isend(b, peer, TAG) for b in obj])

    def recv(peer):
        MPI.Request.Waitall([comm.Irecv(b, peer, TAG) for b in state["bufs"]])
        return state["bufs"]

    return prepare, send, recv


def inband_method(MPI, comm):
    def send(obj, peer):
        comm.Send(pickle.dumps(obj, protocol=5), peer, TAG)

    def recv(peer):
        st = MPI.Status()
        msg = comm.Mprobe(peer, TAG, st)
        buf = bytearray(st.Get_count(MPI.BYTE))
        msg.Recv(buf)
        return pickle.loads(buf)

    return make_object, send, recv


def oob_multi_method(MPI, comm, threshold):
    def send(obj, peer):
        bufs = []

        def cb(pb):
            raw = pb.raw()
            if raw.nbytes < threshold:
                return True
            bufs.append(raw)
            return False

        stream = pickle.dumps(obj, protocol=5, buffer_callback=cb)
        header = np.array([len(stream)] + [b.nbytes for b in bufs], dtype=np.int64)
        reqs = [comm.Isend(header, peer, TAG), comm.Isend(stream, peer, TAG)]
        reqs += [comm.Isend(b, peer, TAG) for b in bufs]
        MPI.Request.Waitall(reqs)

    def recv(peer):
        st = MPI.Status()
        msg = comm.Mprobe(peer, TAG, st)
        header = np.empty(st.Get_count(MPI.BYTE) // 8, dtype=np.int64)
        msg.Recv(header)
        stream = bytearray(int(header[0]))
        bufs = [np.empty(int(n), dtype=np.uint8) for n in header[1:]]
        reqs = [comm.Irecv(stream, peer, TAG)] + [comm.Irecv(b, peer, TAG) for b in bufs]
        MPI.Request.Waitall(reqs)
        return pickle.loads(stream, buffers=bufs)

    return make_object, send, recv


def object_method(comm):
    def send(obj, peer):
        comm.send(obj, peer, TAG)

    def recv(peer):
        return comm.recv(source=peer, tag=TAG)

    return make_object, send, recv


def ctypes_object_method(comm):
    """``ours`` with the package's C extension turned off for each call: the ctypes path."""
    from mpicd import _fast

    ext = _fast.ext

    def send(obj, peer):
        _fast.ext = None
        try:
            comm.send(obj, peer, TAG)
        finally:
            _fast.ext = ext

    def recv(peer):
        _fast.ext = None
        try:
            return comm.recv(source=peer, tag=TAG)
        finally:
            _fast.ext = ext

    return make_object, send, recv


CTYPES_MAX = 64 << 10  # ours-ctypes is measured up to this size


def methods_for(impl):
    if impl == "mpicd":
        from mpicd import MPI
        from mpicd import _fast, _objparts

        comm = MPI.COMM_WORLD
        methods = {
            "raw": raw_method(MPI, comm),
            "raw-multi": raw_multi_method(MPI, comm),
            "pickle-inband": inband_method(MPI, comm),
            "pickle-oob-multi": oob_multi_method(MPI, comm, _objparts.THRESHOLD),
            "ours": object_method(comm),
        }
        if _fast.ext is not None:
            methods["ours-ctypes"] = ctypes_object_method(comm)
        return MPI, comm, methods
    from mpi4py import MPI
    from mpi4py.util import pkl5

    comm = MPI.COMM_WORLD
    return MPI, comm, {
        "raw": raw_method(MPI, comm),
        "pickle": object_method(comm),
        "pkl5": object_method(pkl5.Intracomm(comm)),
    }


# --- measurement ---------------------------------------------------------------------------


def round_trips(comm, send, recv, obj, n):
    """``n`` round trips; the previous round trip's object is dropped before each receive, for
    every method alike: ``raw`` receives into its one buffer again, so the object methods get
    the same chance to reuse the memory of what they received before (their allocator, or
    mpicd's receive pool), instead of each receive landing in memory other than the last."""
    peer = 1 - comm.Get_rank()
    back = None
    t0 = time.perf_counter()
    if comm.Get_rank() == 0:
        for _ in range(n):
            send(obj, peer)
            back = None
            back = recv(peer)
    else:
        for _ in range(n):
            back = None
            back = recv(peer)
            send(back, peer)
    return time.perf_counter() - t0, back


def check_echo(case, size, back):
    if case == "single":
        ok = isinstance(back, np.ndarray) and back.nbytes == size and back[-1] == 1
    else:
        ok = len(back) == size // CHUNK and all(b.nbytes == CHUNK for b in back)
        ok = ok and back[-1][0] == (len(back) - 1) % 251
    if not ok:
        raise SystemExit(f"pingpong: wrong echo for {case} {size}")


class Point:
    """One method at one size: its object and the best seconds per round trip so far."""

    def __init__(self, comm, name, method, case, size):
        self.name = name
        self.prepare, self.send, self.recv = method
        self.case, self.size = case, size
        self.obj = self.prepare(case, size)
        self.best = float("inf")
        self.iters = 1
        self.total = 0
        self.spent = 0.0

    def warm_up(self, comm):
        """Round trips not timed (connections, allocator, receive pool), and the echo check."""
        _, back = round_trips(comm, self.send, self.recv, self.obj, 1 if self.size >= (64 << 20) else 2)
        if comm.Get_rank() == 0:
            check_echo(self.case, self.size, back)

    def batch(self, comm, seconds, min_iters):
        comm.Barrier()
        t, _ = round_trips(comm, self.send, self.recv, self.obj, self.iters)
        t = comm.bcast(t, root=0)  # rank 0's clock decides
        self.total += self.iters
        self.spent += t
        self.best = min(self.best, t / self.iters)
        self.iters = max(min_iters, min(5000, int(seconds / self.best)))


def measure_size(comm, methods, case, size, seconds, batches, min_iters):
    """Measures every method at one size, batch after batch in turn, so that the machine's
    noise falls on all of them alike; each keeps its best batch. A method slower than the
    budget (``batches`` x ``seconds``) stops after 3 batches."""
    points = [Point(comm, name, m, case, size) for name, m in methods]
    for p in points:
        p.warm_up(comm)
    for b in range(batches + 1):  # the first batch, of one round trip, sizes the others
        for p in points:
            over = b >= 3 and p.spent > batches * seconds
            if not comm.bcast(over, root=0):
                p.batch(comm, seconds, min_iters)
    out = [(p.name, p.total, p.best) for p in points]
    del points
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", choices=["mpicd", "mpi4py"], required=True)
    ap.add_argument("--out", required=True, help="CSV file to write (rank 0)")
    ap.add_argument("--min-size", default="1K")
    ap.add_argument("--max-size", default="256M")
    ap.add_argument("--seconds", type=float, default=0.1, help="per batch")
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--min-iters", type=int, default=1)
    ap.add_argument("--methods", default="", help="comma-separated subset")
    ap.add_argument("--cases", default="single,many")
    args = ap.parse_args()

    MPI, comm, methods = methods_for(args.impl)
    if comm.Get_size() != 2:
        raise SystemExit("pingpong: run with exactly 2 ranks")
    wanted = [m for m in args.methods.split(",") if m] or list(methods)
    sizes = sizes_between(parse_size(args.min_size), parse_size(args.max_size))
    rows = []
    for case in args.cases.split(","):
        for size in sizes:
            if case == "many" and size < 2 * CHUNK:
                continue
            todo = []
            for name in wanted:
                if name not in methods or (case == "many" and name == "raw"):
                    continue  # raw: one buffer of the size, measured in the single case
                if case == "single" and name == "raw-multi":
                    continue
                if name == "ours-ctypes" and (case == "many" or size > CTYPES_MAX):
                    continue
                todo.append((name, methods[name]))
            for name, iters, rt in measure_size(comm, todo, case, size, args.seconds,
                                                args.batches, args.min_iters):
                mbps = size / (rt / 2) / 1e6
                rows.append({"impl": args.impl, "case": case, "method": name, "bytes": size,
                             "iters": iters, "roundtrip_s": f"{rt:.9f}", "MBps": f"{mbps:.1f}"})
                if comm.Get_rank() == 0:
                    print(f"{args.impl:7s} {case:6s} {name:17s} {size:>10d} B  {mbps:10.1f} MB/s"
                          f"  ({iters} round trips)", flush=True)
    if comm.Get_rank() == 0:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    comm.Barrier()


if __name__ == "__main__":
    sys.exit(main())
