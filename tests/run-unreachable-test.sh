#!/usr/bin/env bash
# run-unreachable-test.sh: a peer lost through the network alone is reported within 10 s.
#
# Two ranks of mpicd/examples/peer_unreachable.rs run as two "nodes": each in its own network
# namespace and with its own host name (UTS namespace), so that mpicd's local process check does
# not apply and only UCX's endpoint error handling can notice the loss. UCX talks tcp over a veth
# pair between the two namespaces (ucx0); PMIx reaches mpirun over a second veth per namespace
# (boot0), with mpirun's PMIx server listening on the root side of rank 0's. Once both ranks have
# connected, the script cuts the ucx0 link (both ends down) and tells the ranks so through a
# file; each must then see its receive from the other fail with ProcFailed within 10 s.
#
# What notices the cut: UCX's keepalive (every second, mpicd's default) sends on the idle
# connection, the kernel retransmits it unanswered, and gives up after tcp_retries2
# retransmissions; UCX then reports the endpoint error. The kernel's default of 15 takes about
# 15 minutes, so the namespaces set 2 (about 1.4 s), standing in for a network that fails fast.
#
# With `kill` instead, the script kills rank 1's process (SIGKILL, a node's process lost while
# the link lives): rank 0 must see its receive fail within 10 s. What notices it then: the
# launcher's process-termination event (PMIx), or UCX's endpoint error when the kernel resets
# the connection; no local process check, the ranks being on two "nodes".
#
# Needs root (network namespaces), iproute2 and util-linux (unshare). The namespaces and links
# are removed on every exit. Takes about 10 s.
#
# Usage: tests/run-unreachable-test.sh [cut|kill]   (default cut)
# Environment:
#   MPIRUN         launcher command (as in tests/run-mpi-tests.sh)
#   MPI_TEST_BIN   the program (default target/release/examples/peer_unreachable)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

MPIRUN=${MPIRUN:-env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe}
read -r -a MPIRUN_CMD <<<"$MPIRUN"
BIN=${MPI_TEST_BIN:-target/release/examples/peer_unreachable}
# Seconds the whole run may take, and seconds from the cut to both ranks' verdicts (the
# program itself checks its 10 s limit; this catches a rank that never reports).
RUN_TIMEOUT=60
VERDICT_TIMEOUT=15
MODE=${1:-cut}
[[ $MODE == cut || $MODE == kill ]] || { echo "usage: $0 [cut|kill]" >&2; exit 2; }

fail() {
    echo "unreachable-test: FAIL: $*" >&2
    exit 1
}

[[ -x $BIN ]] || fail "no executable $BIN (run \`make build\` first)"
[[ $(id -u) -eq 0 ]] || fail "needs root (network namespaces)"
command -v ip >/dev/null || fail "needs ip (iproute2)"
command -v unshare >/dev/null || fail "needs unshare (util-linux)"

# Names and addresses unique to this run: 10.X.1.0/30 (rank 0's boot0), 10.X.2.0/30 (rank 1's),
# 10.X.3.0/30 (the link between them).
id=$$
net=10.$((200 + id % 50))
ns_a=mpicd-unr-$id-a
ns_b=mpicd-unr-$id-b
host_a=unr${id}a # root side of rank 0's boot0 (at most 15 characters)
host_b=unr${id}b
work=$(mktemp -d "${TMPDIR:-/tmp}/mpicd-unreachable.XXXXXX")
log=$work/run.log
cut_file=$work/cut
job=

cleanup() {
    if [[ -n $job ]]; then
        # timeout leads its own process group: mpirun and the ranks are in it.
        kill -KILL -- "-$job" 2>/dev/null
        wait "$job" 2>/dev/null
    fi
    # Deleting a namespace deletes the links in it, and a veth's other end with it.
    ip netns del "$ns_a" 2>/dev/null
    ip netns del "$ns_b" 2>/dev/null
    ip link del "$host_a" 2>/dev/null
    ip link del "$host_b" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

setup() {
    set -e
    ip netns add "$ns_a"
    ip netns add "$ns_b"
    ip link add "$host_a" type veth peer name "${host_a}n"
    ip link add "$host_b" type veth peer name "${host_b}n"
    ip link add "${host_a}u" type veth peer name "${host_b}u"
    ip link set "${host_a}n" netns "$ns_a"
    ip link set "${host_b}n" netns "$ns_b"
    ip link set "${host_a}u" netns "$ns_a"
    ip link set "${host_b}u" netns "$ns_b"
    ip addr add "$net.1.1/30" dev "$host_a"
    ip addr add "$net.2.1/30" dev "$host_b"
    ip link set "$host_a" up
    ip link set "$host_b" up
    local ns side
    for side in a b; do
        ns=mpicd-unr-$id-$side
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "unr$id${side}n" name boot0
        ip -n "$ns" link set "unr$id${side}u" name ucx0
    done
    ip -n "$ns_a" addr add "$net.1.2/30" dev boot0
    ip -n "$ns_b" addr add "$net.2.2/30" dev boot0
    ip -n "$ns_a" addr add "$net.3.1/30" dev ucx0
    ip -n "$ns_b" addr add "$net.3.2/30" dev ucx0
    for ns in "$ns_a" "$ns_b"; do
        ip netns exec "$ns" sh -c 'echo 2 >/proc/sys/net/ipv4/tcp_retries2'
        ip -n "$ns" link set boot0 up
        ip -n "$ns" link set ucx0 up
    done
    # Each namespace reaches mpirun's PMIx server (on the root side of rank 0's boot0).
    ip -n "$ns_a" route add default via "$net.1.1"
    ip -n "$ns_b" route add default via "$net.2.1"
    set +e
}
(setup) || fail "could not set up the network namespaces"

# The ranks: each in its namespace, with its own host name, UCX on tcp over ucx0 only.
ucx_env=(env UCX_TLS=tcp UCX_NET_DEVICES=ucx0)
named='hostname "$0" && exec "$@"'
cmd_a=(ip netns exec "$ns_a" unshare --uts "${ucx_env[@]}"
    sh -c "$named" mpicd-unr-a "$ROOT/$BIN" "$cut_file")
cmd_b=(ip netns exec "$ns_b" unshare --uts "${ucx_env[@]}"
    sh -c "$named" mpicd-unr-b "$ROOT/$BIN" "$cut_file")

# A killed rank must not end the job: the survivor reports.
PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=$host_a \
    timeout --kill-after=5 "$RUN_TIMEOUT" "${MPIRUN_CMD[@]}" \
    --mca orte_abort_on_non_zero_status 0 \
    -n 1 "${cmd_a[@]}" : -n 1 "${cmd_b[@]}" >"$log" 2>&1 </dev/null &
job=$!

# Both ranks connected: cut the link between them.
deadline=$((SECONDS + 30))
until (($(grep -c CONNECTED "$log") == 2)); do
    if ! kill -0 "$job" 2>/dev/null || ((SECONDS > deadline)); then
        cat "$log"
        fail "the ranks did not connect"
    fi
    sleep 0.1
done
sleep 0.5 # let the exchange's acknowledgements land
survivors=2
if [[ $MODE == cut ]]; then
    ip -n "$ns_a" link set ucx0 down
    ip -n "$ns_b" link set ucx0 down
else
    for pid in $(ip netns pids "$ns_b"); do
        [[ $(cat "/proc/$pid/comm" 2>/dev/null) == peer_unreachab* ]] && kill -KILL "$pid"
    done
    survivors=1
fi
touch "$cut_file"
cut_at=$SECONDS

verdicts() { grep -c -E 'PEER-UNREACHABLE-(OK|WRONG)' "$log"; }
until (($(verdicts) == survivors)); do
    if ! kill -0 "$job" 2>/dev/null || ((SECONDS - cut_at > VERDICT_TIMEOUT)); then
        cat "$log"
        fail "no verdict from the surviving ranks within ${VERDICT_TIMEOUT}s of the $MODE"
    fi
    sleep 0.1
done
if [[ $MODE == cut ]]; then
    wait "$job"
    rc=$?
else
    # Open MPI 4.1.4's mpirun does not end a job one of whose ranks a signal killed (with
    # orte_abort_on_non_zero_status 0): once the survivor has exited, the job is ended here.
    ranks_in() { # the program's processes in namespace $1
        for pid in $(ip netns pids "$1"); do
            [[ $(cat "/proc/$pid/comm" 2>/dev/null) == peer_unreachab* ]] && echo "$pid"
        done
    }
    deadline=$((SECONDS + 10))
    while [[ -n $(ranks_in "$ns_a") ]] && ((SECONDS < deadline)); do sleep 0.1; done
    rc=0
    [[ -n $(ranks_in "$ns_a") ]] && rc=1
    kill -KILL -- "-$job" 2>/dev/null
    wait "$job" 2>/dev/null
fi
job=
cat "$log"
(($(grep -c PEER-UNREACHABLE-OK "$log") == survivors)) || fail "a rank did not see ProcFailed in time"
((rc == 0)) || fail "mpirun exited with $rc (or the survivor did not exit)"
echo "unreachable-test ($MODE): ok (the surviving ranks saw ProcFailed from the lost peer)"
