"""Fault tolerance (ULFM, mpi4py's method names) with every process alive: a revocation stops
the processes waiting on a communicator, and agreement, shrink and the failure queries still
work on it. (Recovery after a process is killed: tests/faults/ulfm_solver.c.)"""

import time

import pytest

from mpicd import MPI


def revoked(call):
    with pytest.raises(MPI.Exception) as e:
        call()
    assert e.value.Get_error_class() == MPI.ERR_REVOKED


def test_revoke_stops_waiters_and_recovery_calls_still_work(comm):
    c = comm.Dup()
    assert not c.Is_revoked()
    if comm.rank == 0:
        time.sleep(0.2)  # the others are waiting by now
        c.Revoke()
        c.Revoke()  # again: nothing more happens
    else:
        revoked(lambda: c.recv(source=MPI.ANY_SOURCE, tag=3))
    assert c.Is_revoked()
    revoked(c.Barrier)
    revoked(lambda: c.send(b"x", dest=0, tag=3))
    revoked(lambda: c.allgather(comm.rank))
    assert c.Agree(0b11 if comm.rank == 0 else 0b01) == (0b01 if comm.size > 1 else 0b11)
    flag = memoryview(bytearray(4)).cast("i")
    flag[0] = 0b110 if comm.rank == 0 else 0b011
    req = c.Iagree(flag)
    req.Wait()
    assert flag[0] == (0b010 if comm.size > 1 else 0b110)
    with pytest.raises(ValueError):
        c.Iagree(bytearray(8))
    assert c.Get_failed() == []
    assert c.Ack_failed() == 0
    s = c.Shrink()
    assert (s.rank, s.size) == (comm.rank, comm.size) and not s.Is_revoked()
    assert s.allreduce(1) == comm.size
    s.Free()
    s, req = c.Ishrink()
    req.Wait()
    assert (s.rank, s.size) == (comm.rank, comm.size)
    assert s.allreduce(comm.rank) == comm.size * (comm.size - 1) // 2
    s.Free()
    c.Free()
    assert comm.allreduce(1) == comm.size  # other communicators are untouched
