#!/usr/bin/env bash
# mpich-ft.sh: runs MPICH's fault-tolerance tests (test/mpi/ft of pmodels/mpich: a rank exits,
# the survivors check the ULFM calls and errors) with the shared MPICH runner
# (../shared/clients/mpich.sh). The runner skips testlist lines marked strict=false, which every
# ft/ line is (MPICH's configure runs them only outside strict mode), and its mpirun ends a job
# when a rank exits non-zero. This script makes a scratch copy, under $SCRATCH, of the suite
# without those marks and runs the runner on it with `--mca orte_abort_on_non_zero_status 0`
# (the job outlives the dead rank). Nothing of MPICH's is copied into this project.
#
# Usage: scripts/mpich-ft.sh MPICC MPICH_TEST_MPI_DIR [dirs...]
#   dirs default: ft errors/faults
# Environment: SCRATCH (default /tmp/mpich-ft), MPICH_MAXNP (default 10), and the runner's.
# About 30 seconds on 2 cores.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNNER=${MPICH_RUNNER:-$HERE/../../shared/clients/mpich.sh}
[[ $# -ge 2 ]] || { sed -n '2,13p' "$0"; exit 2; }
MPICC=$1
SUITE=$2
shift 2
DIRS=("$@")
[[ ${#DIRS[@]} -gt 0 ]] || DIRS=(ft errors/faults)
[[ -f $RUNNER ]] || { echo "mpich-ft: no runner at $RUNNER (set MPICH_RUNNER)" >&2; exit 2; }
[[ -f $SUITE/ft/testlist ]] || { echo "mpich-ft: $SUITE is not MPICH's test/mpi" >&2; exit 2; }

SCRATCH=${SCRATCH:-/tmp/mpich-ft}
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
cp -r "$SUITE" "$SCRATCH/suite"
for d in "${DIRS[@]}"; do
    [[ -f $SCRATCH/suite/$d/testlist ]] && sed -i 's/ strict=false//' "$SCRATCH/suite/$d/testlist"
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPIRUN_FLAGS=${MPIRUN_FLAGS:---oversubscribe --mca orte_abort_on_non_zero_status 0}
MPICH_MAXNP=${MPICH_MAXNP:-10} exec bash "$RUNNER" "$MPICC" "$SCRATCH/suite" "${DIRS[@]}"
