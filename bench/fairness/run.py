#!/usr/bin/env python3
"""run: progress when ranks outnumber cores, mpicd against Open MPI in one run, as ratios.

1. Randomized message rate (bench/fairness/msgrate.c: random sizes 0 B-1 MiB, random peers
   and tags, MPI_ANY_SOURCE/MPI_ANY_TAG receives, every byte checked) at 2 ranks over shared
   memory, 2 over tcp (UCX_TLS=tcp for mpicd, --mca btl tcp,self for Open MPI), and 3 and 4
   ranks on this machine's cores (oversubscribed on 2 cores). ROUNDS rounds, the two builds
   alternating in each; the median rate of each counts.
2. A blocked rank's CPU (bench/fairness/idle.c): 3 ranks, rank 0 sleeps 10 s before it sends;
   the CPU time of the ranks waiting in MPI_Recv, for mpicd (MPICD_WAIT=auto) and Open MPI;
   then the same with the ranks waiting in MPI_Barrier (mpicd: through the node's memory).

Writes bench/results/fairness.md and fairness.csv; binaries and logs in
bench/results/tmp/fairness/. ratio = mpicd's rate / Open MPI's (above 1, mpicd is faster).

Usage: bench/fairness/run.py [--rounds N] [--msgs M] [--idle-seconds S] [--out DIR]
  (defaults: 3 rounds, 4000 messages per rank, 10 s; about 3 minutes on 2 cores)
Environment: MPIRUN (default: Open MPI's mpirun as root, oversubscribed), PEER_MPICC (Open
MPI's compiler wrapper, default mpicc.openmpi).
"""
import argparse
import csv
import os
import re
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPIRUN = shlex.split(os.environ.get(
    "MPIRUN",
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe"))
TMP = os.path.join(ROOT, "bench", "results", "tmp", "fairness")
RATE = re.compile(r"^RESULT msgrate ranks=(\d+) msgs=(\d+) seconds=([0-9.]+) rate=([0-9.]+)")
# What the blocked ranks wait in (idle.c's second argument).
IDLE_WAITS = ("recv", "barrier")
IDLE = re.compile(r"^RESULT idle ranks=(\d+) seconds=([0-9.]+) cpu_max=([0-9.]+) cpu_mean=([0-9.]+)")
# (label, ranks, transport)
CASES = [("2 ranks, shm", 2, "shm"), ("2 ranks, tcp", 2, "tcp"),
         ("3 ranks on 2 cores", 3, "shm"), ("4 ranks on 2 cores", 4, "shm")]
BUILDS = ("mpicd", "openmpi")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build(peer_cc):
    os.makedirs(TMP, exist_ok=True)
    for prog in ("msgrate", "idle"):
        src = os.path.join(ROOT, "bench", "fairness", prog + ".c")
        subprocess.run([os.path.join(ROOT, "bin", "mpicc"), "-O2", "-o",
                        os.path.join(TMP, prog + "-mpicd"), src], check=True)
        subprocess.run([peer_cc, "-O2", "-o", os.path.join(TMP, prog + "-openmpi"), src],
                       check=True)


def launch(build_name, ranks, transport, argv, timeout):
    env_args = []
    if transport == "tcp":
        env_args = (["-x", "UCX_TLS=tcp", "-x", "UCX_NET_DEVICES=lo"] if build_name == "mpicd"
                    else ["--mca", "btl", "tcp,self", "--mca", "pml", "ob1"])
    cmd = MPIRUN + ["-np", str(ranks)] + env_args + argv
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if out.returncode != 0:
        return None, (out.stdout + out.stderr)[-400:]
    return out.stdout, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--msgs", type=int, default=4000)
    ap.add_argument("--idle-seconds", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    peer_cc = os.environ.get("PEER_MPICC", "mpicc.openmpi")
    build(peer_cc)

    rates = {(c[0], b): [] for c in CASES for b in BUILDS}
    failures = []
    for rnd in range(args.rounds):
        order = BUILDS if rnd % 2 == 0 else tuple(reversed(BUILDS))
        for label, ranks, transport in CASES:
            for b in order:
                prog = os.path.join(TMP, "msgrate-" + b)
                out, err = launch(b, ranks, transport, [prog, str(args.msgs), str(rnd + 1)], 300)
                m = out and next((RATE.match(l) for l in out.splitlines() if RATE.match(l)), None)
                if not m:
                    failures.append(f"msgrate {b} {label} round {rnd + 1}: {err.strip()}")
                    log(f"  FAILED msgrate {b} {label}: {err.strip()[-200:]}")
                    continue
                rates[(label, b)].append(float(m.group(4)))
                log(f"  round {rnd + 1} {label:20} {b:8} {float(m.group(4)):10.0f} msg/s")

    idle = {}
    for wait in IDLE_WAITS:
        for b in BUILDS:
            prog = [os.path.join(TMP, "idle-" + b), str(args.idle_seconds), wait]
            out, err = launch(b, 3, "shm", prog, args.idle_seconds + 120)
            m = out and next((IDLE.match(l) for l in out.splitlines() if IDLE.match(l)), None)
            if not m:
                failures.append(f"idle {wait} {b}: {err.strip()}")
                continue
            idle[(wait, b)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
            log(f"  idle {b}: {m.group(3)} s CPU at most in {m.group(2)} s blocked in {wait}")

    os.makedirs(args.out, exist_ok=True)
    rows = []
    for label, ranks, transport in CASES:
        med = {b: statistics.median(rates[(label, b)]) if rates[(label, b)] else None
               for b in BUILDS}
        ratio = med["mpicd"] / med["openmpi"] if med["mpicd"] and med["openmpi"] else None
        rows.append((label, ranks, transport, med["mpicd"], med["openmpi"], ratio))
    with open(os.path.join(args.out, "fairness.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "ranks", "transport", "mpicd_msgs_per_s", "openmpi_msgs_per_s",
                    "ratio"])
        for r in rows:
            w.writerow([r[0], r[1], r[2]] + ["" if v is None else f"{v:.3f}" for v in r[3:]])
        for (wait, b), (wall, cpu_max, cpu_mean) in idle.items():
            case = f"idle {b}" if wait == "recv" else f"idle {wait} {b}"
            w.writerow([case, 3, "shm", f"{wall:.2f}", f"{cpu_max:.3f}", f"{cpu_mean:.3f}"])
    fmt = lambda v, spec: "-" if v is None else format(v, spec)
    lines = ["# Progress when ranks outnumber cores",
             "",
             f"`bench/fairness/run.py --rounds {args.rounds} --msgs {args.msgs}` on "
             f"{os.cpu_count()} cores; ratio = mpicd / Open MPI (above 1: mpicd is faster).",
             "",
             "## Randomized message rate (0 B-1 MiB, random peers and tags, wildcard receives)",
             "",
             "| case | mpicd msg/s | Open MPI msg/s | ratio |",
             "|---|---:|---:|---:|"]
    for label, _, _, a, b, ratio in rows:
        lines.append(f"| {label} | {fmt(a, '.0f')} | {fmt(b, '.0f')} | {fmt(ratio, '.2f')} |")
    lines += ["", f"## CPU of a blocked rank ({args.idle_seconds} s, 3 ranks)", "",
              "| build | blocked in | blocked s | CPU s (max) | CPU s (mean) |",
              "|---|---|---:|---:|---:|"]
    for (wait, b), (wall, cpu_max, cpu_mean) in idle.items():
        call = {"recv": "MPI_Recv", "barrier": "MPI_Barrier"}[wait]
        lines.append(f"| {b} | {call} | {wall:.2f} | {cpu_max:.3f} | {cpu_mean:.3f} |")
    if failures:
        lines += ["", "## Failures", ""] + [f"- {f}" for f in failures]
    with open(os.path.join(args.out, "fairness.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
