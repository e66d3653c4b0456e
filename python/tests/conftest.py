"""Fixtures for the multi-rank suite: every rank runs every test in the same order, so each test
must make the same collective calls on all ranks.

A test that fails on one rank would leave the others waiting in a collective; the report hook
prints the failure and aborts the whole job instead, so a failure is never a hang.
"""

import os
import sys

import pytest

from mpicd import MPI


@pytest.fixture
def comm():
    """COMM_WORLD, checked to be in step on entry and quiet on exit."""
    world = MPI.COMM_WORLD
    world.Barrier()
    yield world
    world.Barrier()


@pytest.fixture
def pair(comm):
    """(rank, peer) for tests on pairs 0<->1, 2<->3, ...; the odd rank out has peer None."""
    r, n = comm.rank, comm.size
    if n < 2:
        pytest.skip("needs at least 2 ranks")
    peer = r ^ 1
    return r, (peer if peer < n else None)


@pytest.fixture
def ring(comm):
    """(left, right) neighbours of this rank."""
    r, n = comm.rank, comm.size
    return (r - 1) % n, (r + 1) % n


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and os.environ.get("MPICD_TEST_NO_ABORT") != "1":
        rank = MPI.COMM_WORLD.rank
        sys.stderr.write(
            f"\n[rank {rank}] {item.nodeid} failed ({report.when}):\n{report.longreprtext}\n"
            f"[rank {rank}] aborting the job so that the other ranks do not wait forever\n"
        )
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
