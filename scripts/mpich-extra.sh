#!/usr/bin/env bash
# mpich-extra.sh: runs the parts of MPICH's test suite (test/mpi of pmodels/mpich) that the
# shared runner (../shared/clients/mpich.sh) cannot run as the suite comes, each from a scratch
# copy (under $SCRATCH) adjusted as MPICH's own configure would adjust it. Nothing of MPICH's is
# copied into this project.
#
#   threads  threads/*: the runner links every test with MTest's single-threaded helpers
#            (util/mtest_single.c); a copy of the runner links util/mtest_thread.c instead, and
#            the suite's mtest_thread.c includes mpithreadtest.h (which names the thread package:
#            MPICH's configure passes it on the command line). About 3 minutes.
#   ft       ft/ and errors/faults (a rank exits, the survivors check ULFM's calls and errors):
#            every ft/ line is marked strict=false, which the runner skips (MPICH's configure runs
#            them outside strict mode); the marks are dropped, and mpirun gets
#            `--mca orte_abort_on_non_zero_status 0` so that the job outlives its dead rank.
#            About 30 seconds.
#   dtp      the DTPools tests (derived datatypes of every layout DTPools makes, with MPI_INT and
#            a struct of 4 ints and 8 doubles, counts 1 to 262144) of attr, coll, part, pt2pt and
#            rma: MPICH's maint/gentests_dtp.sh writes their testlists as MPICH's autogen.sh
#            does, with configure's default type list. About 15 minutes without rma, 25 with.
#
# Usage: scripts/mpich-extra.sh threads|ft|dtp MPICC MPICH_TEST_MPI_DIR [dirs...]
#   dirs default: threads: threads/pt2pt threads/comm threads/init threads/coll threads/part
#                 ft: ft errors/faults          dtp: coll pt2pt part attr rma
# Environment: SCRATCH (default /tmp/mpich-extra-MODE), MPICH_MAXNP (default 10; threads 6),
# MPICH_RUNNER, and the runner's.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNNER=${MPICH_RUNNER:-$HERE/../../shared/clients/mpich.sh}
[[ $# -ge 3 ]] || { sed -n '2,25p' "$0"; exit 2; }
MODE=$1
MPICC=$2
SUITE=$3
shift 3
DIRS=("$@")
[[ -f $RUNNER ]] || { echo "mpich-extra: no runner at $RUNNER (set MPICH_RUNNER)" >&2; exit 2; }
[[ -f $SUITE/util/mtest_thread.c ]] || { echo "mpich-extra: $SUITE is not MPICH's test/mpi" >&2; exit 2; }

SCRATCH=${SCRATCH:-/tmp/mpich-extra-$MODE}
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
cp -r "$SUITE" "$SCRATCH/suite"
runner=$RUNNER
maxnp=10
case $MODE in
    threads)
        [[ ${#DIRS[@]} -gt 0 ]] || DIRS=(threads/pt2pt threads/comm threads/init threads/coll threads/part)
        sed -i '/#include "mpitest.h"/a #include "mpithreadtest.h"' "$SCRATCH/suite/util/mtest_thread.c"
        runner=$SCRATCH/mpich.sh
        sed 's#util/mtest_single.c#util/mtest_thread.c#' "$RUNNER" >"$runner"
        maxnp=6
        ;;
    ft)
        [[ ${#DIRS[@]} -gt 0 ]] || DIRS=(ft errors/faults)
        for d in "${DIRS[@]}"; do
            [[ -f $SCRATCH/suite/$d/testlist ]] && sed -i 's/ strict=false//' "$SCRATCH/suite/$d/testlist"
        done
        export MPIRUN_FLAGS=${MPIRUN_FLAGS:---oversubscribe --mca orte_abort_on_non_zero_status 0}
        ;;
    dtp)
        [[ ${#DIRS[@]} -gt 0 ]] || DIRS=(coll pt2pt part attr rma)
        (cd "$SCRATCH/suite" && bash maint/gentests_dtp.sh \
            --with-dtpools-datatypes=MPI_INT,MPI_INT:4+MPI_DOUBLE:8 >/dev/null)
        for d in "${DIRS[@]}"; do
            mv "$SCRATCH/suite/$d/testlist.dtp" "$SCRATCH/suite/$d/testlist"
        done
        ;;
    *) echo "mpich-extra: no mode $MODE (threads, ft or dtp)" >&2; exit 2 ;;
esac

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPICH_MAXNP=${MPICH_MAXNP:-$maxnp} exec bash "$runner" "$MPICC" "$SCRATCH/suite" "${DIRS[@]}"
