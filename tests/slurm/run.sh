#!/usr/bin/env bash
# Runs the multi-rank test programs under Slurm's `srun --mpi=pmix` on a one-node Slurm cluster
# made on this machine (Debian's slurm-wlm and munge; as root). It shows that the same binaries
# that run under Open MPI's mpirun run under Slurm's PMIx plugin too.
#
# Usage: tests/slurm/run.sh [PROGRAM...]     (default: mpi_p2p mpi_custom mpi_readme)
# Not part of `make test`: it installs packages and starts daemons (munged, slurmctld, slurmd).
set -euo pipefail
cd "$(dirname "$0")/../.."

programs=("$@")
((${#programs[@]})) || programs=(mpi_p2p mpi_custom mpi_readme)

if ! command -v srun >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

host=$(hostname)
cpus=$(nproc)
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /run/munge
cat >/etc/slurm/slurm.conf <<CONF
ClusterName=mpicd-test
SlurmctldHost=$host
MpiDefault=none
ProctrackType=proctrack/linuxproc
ReturnToService=2
SlurmUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SwitchType=switch/none
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AuthType=auth/munge
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF

chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
pgrep -x munged >/dev/null || su -s /bin/sh munge -c "munged --num-threads=10"
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 30); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 1; done

failed=0
for p in "${programs[@]}"; do
    for n in 2 4; do
        if timeout 300 srun --mpi=pmix -n "$n" --overcommit "target/release/examples/$p" >"target/slurm-$p-n$n.log" 2>&1; then
            echo "[ok]   $p n=$n srun --mpi=pmix"
        else
            echo "[FAIL] $p n=$n srun --mpi=pmix (log: target/slurm-$p-n$n.log)"
            failed=1
        fi
    done
done
exit $failed
