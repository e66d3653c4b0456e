#!/usr/bin/env bash
# mpich-threads.sh: runs MPICH's threads/ tests (test/mpi/threads of pmodels/mpich) with the
# shared MPICH runner (../shared/clients/mpich.sh), which links every test with MTest's
# single-threaded helpers (util/mtest_single.c) and so cannot build these. This script makes
# scratch copies, under $SCRATCH, of the runner linking util/mtest_thread.c instead and of the
# suite whose mtest_thread.c includes mpithreadtest.h (which names the thread package: MPICH's
# configure passes it on the command line), then runs the runner on them. Nothing of MPICH's
# is copied into this project.
#
# Usage: scripts/mpich-threads.sh MPICC MPICH_TEST_MPI_DIR [dirs...]
#   dirs default: threads/pt2pt threads/comm threads/init threads/coll threads/part
# Environment: SCRATCH (default /tmp/mpich-threads), MPICH_MAXNP (default 6), and the runner's.
# About 3 minutes on 2 cores for the default dirs.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNNER=${MPICH_RUNNER:-$HERE/../../shared/clients/mpich.sh}
[[ $# -ge 2 ]] || { sed -n '2,13p' "$0"; exit 2; }
MPICC=$1
SUITE=$2
shift 2
DIRS=("$@")
[[ ${#DIRS[@]} -gt 0 ]] || DIRS=(threads/pt2pt threads/comm threads/init threads/coll threads/part)
[[ -f $RUNNER ]] || { echo "mpich-threads: no runner at $RUNNER (set MPICH_RUNNER)" >&2; exit 2; }
[[ -f $SUITE/util/mtest_thread.c ]] || { echo "mpich-threads: $SUITE is not MPICH's test/mpi" >&2; exit 2; }

SCRATCH=${SCRATCH:-/tmp/mpich-threads}
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
cp -r "$SUITE" "$SCRATCH/suite"
sed -i '/#include "mpitest.h"/a #include "mpithreadtest.h"' "$SCRATCH/suite/util/mtest_thread.c"
sed 's#util/mtest_single.c#util/mtest_thread.c#' "$RUNNER" >"$SCRATCH/mpich.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPICH_MAXNP=${MPICH_MAXNP:-6} exec bash "$SCRATCH/mpich.sh" "$MPICC" "$SCRATCH/suite" "${DIRS[@]}"
