#!/usr/bin/env python3
"""run: mpicd's collectives against Open MPI's, in one run, as ratios, with plots.

Builds bench/coll/coll_bench.c twice (mpicd's bin/mpicc, Open MPI's mpicc), then runs both at
2, 3 and 4 ranks, ROUNDS times, interleaved (each round runs every rank count on every build,
the order of the builds alternating from round to round), so that the noise of a shared machine
falls on both alike. Each (op, ranks, size) counts with the median over the rounds.

Where ranks outnumber cores, Open MPI yields the core when it waits (mpirun --oversubscribe sets
mpi_yield_when_idle), and so does mpicd with MPICD_WAIT=auto (its default). An mpicd that polls
there instead (a libmpi from before MPICD_WAIT, or MPICD_WAIT=spin in the environment) loses every
step that waits to the scheduler; then a third build runs too, Open MPI with
`--mca mpi_yield_when_idle 0` ("Open MPI, polling"), to tell that cost apart from the cost of the
algorithms (--polling runs it in any case, --no-polling never).

Writes (in --out, default bench/results):
  collectives.csv              op,ranks,bytes, the medians in microseconds, the ratios, and in
                               how many rounds mpicd was the slower (the runs of a round paired)
  collectives.md               tables: geomeans per op and rank count, the rows mpicd lost in
                               every round, then every size (bench/coll/tables.py writes both)
  plots/collectives-OP.png     ratio against size, one line per rank count, a line at 1.0
and bench/results/tmp/coll/ (not committed): the binaries run, every run's log, raw.csv.

ratio = Open MPI's time / mpicd's time: above 1, mpicd is faster.

A result that fails coll_bench's check, a run that crashes and a run that hangs (no end within
--timeout seconds: the run is stopped) are recorded per build, rank count and operation, shown
in collectives.md, and make the script exit with status 1; an operation that hung or crashed is
not run again on that build and rank count, the others are. An operation the library does not
provide (coll_bench --list) is shown as such and is no failure.

Usage: bench/coll/run.py [--quick] [--rounds N] [--ranks 2,3,4] [--ops LIST] [--budget S]
                         [--timeout S] [--out DIR] [--no-plots] [--polling | --no-polling]
  --quick   one round, 10 sizes (16 B to 4 MiB, times 4), budget 0.05 s: about 20 s
  (defaults: 5 rounds, 20 sizes (8 B to 4 MiB, times 2), budget 0.2 s: about 1.5 minutes)
Environment: MPIRUN (default: Open MPI's mpirun as root, oversubscribed), PEER_MPICC (Open MPI's
compiler wrapper, default mpicc.openmpi, else mpicc). Standard library; matplotlib for the plots
(installed with pip when missing, as bench/run-all.sh does).
"""
import argparse
import csv
import datetime
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict

from tables import (MPICD, OMPI, OMPI_SPIN, duration, ensure_matplotlib, fratio, geomean, plots,
                    write_outputs)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPIRUN = shlex.split(os.environ.get(
    "MPIRUN",
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe"))
OPS = ["allreduce", "bcast", "allgather", "alltoall", "reduce_scatter_block"]
LABELS = {MPICD: "mpicd", OMPI: "Open MPI", OMPI_SPIN: "Open MPI, polling"}
TMP = os.path.join(ROOT, "bench", "results", "tmp", "coll")
BIN = os.path.join(TMP, "bin")
ROW = re.compile(r"^([a-z_]+),(\d+),(\d+),([0-9.]+)$")
FAILED_LINE = re.compile(r"coll_bench: FAILED op=([a-z_]+) .*")
OP_LINE = re.compile(r"^coll_bench: op ([a-z_]+)$")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, cwd=ROOT, **kw)


def out_of(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        return ""


# ----- build ------------------------------------------------------------------------------------

def build():
    """Both binaries, copied with libmpi into BIN (a rebuild of target/ during the run cannot
    mix two engines). Returns {build: (binary, env)} and {build: ops it provides}."""
    lib = os.path.join(ROOT, "target", "release", "libmpi.so")
    if not os.path.exists(lib):
        sys.exit(f"run.py: {lib} missing: make build (or cargo build --release -p mpicd-capi)")
    peer = os.environ.get("PEER_MPICC") or (shutil.which("mpicc.openmpi") and "mpicc.openmpi") or "mpicc"
    src = os.path.join(ROOT, "bench", "coll", "coll_bench.c")
    out = os.path.join(ROOT, "target", "bench", "coll")
    os.makedirs(out, exist_ok=True)
    flags = ["-O2", "-Wall", "-Wextra"]
    sh([os.path.join(ROOT, "bin", "mpicc"), *flags, "-o", os.path.join(out, "coll_bench-mpicd"), src])
    sh([peer, *flags, "-o", os.path.join(out, "coll_bench-ompi"), src])
    shutil.rmtree(BIN, ignore_errors=True)
    os.makedirs(BIN)
    for name in ("coll_bench-mpicd", "coll_bench-ompi"):
        shutil.copy2(os.path.join(out, name), BIN)
    for name in os.listdir(os.path.dirname(lib)):
        if name.startswith("libmpi.so"):
            shutil.copy2(os.path.join(os.path.dirname(lib), name), BIN, follow_symlinks=True)
    env_mpicd = dict(os.environ)
    env_mpicd["LD_LIBRARY_PATH"] = BIN + (":" + os.environ["LD_LIBRARY_PATH"]
                                          if os.environ.get("LD_LIBRARY_PATH") else "")
    env_ompi = dict(os.environ)
    builds = {
        MPICD: (os.path.join(BIN, "coll_bench-mpicd"), [], env_mpicd),
        OMPI: (os.path.join(BIN, "coll_bench-ompi"), [], env_ompi),
        OMPI_SPIN: (os.path.join(BIN, "coll_bench-ompi"), ["--mca", "mpi_yield_when_idle", "0"], env_ompi),
    }
    provides = {}
    for b, (binary, _, env) in builds.items():
        r = subprocess.run([binary, "--list"], capture_output=True, text=True, env=env, check=True)
        provides[b] = set(r.stdout.split())
    return builds, provides, peer


# ----- one run ----------------------------------------------------------------------------------

def run_once(build_spec, ranks, ops, bench_args, timeout, logfile):
    """Runs coll_bench; returns (rows, failed ops {op: first FAILED line}, status, op running
    at the end, seconds). status: ok, failed (exit != 0 with FAILED lines only), crashed, hung."""
    binary, mpirun_extra, env = build_spec
    cmd = [*MPIRUN, "-np", str(ranks), *mpirun_extra, binary, "--ops", ",".join(ops), *bench_args]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=ROOT, start_new_session=True, stdin=subprocess.DEVNULL)
    hung = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = True
        # mpirun stops its ranks on SIGTERM; the process group (ours: start_new_session) gets
        # SIGKILL if anything is left after 10 s.
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
    secs = time.time() - t0
    with open(logfile, "w") as f:
        f.write(f"$ {shlex.join(cmd)}\n# exit {p.returncode}{' (stopped: timeout)' if hung else ''}, "
                f"{secs:.1f} s\n--- stdout\n{out}--- stderr\n{err}")
    rows = []
    for line in out.splitlines():
        m = ROW.match(line.strip())
        if m:
            rows.append((m[1], int(m[2]), int(m[3]), float(m[4])))
    failed = {}
    current = None
    for line in err.splitlines():
        m = OP_LINE.match(line.strip())
        if m:
            current = m[1]
        m = FAILED_LINE.search(line)
        if m and m[1] not in failed:
            failed[m[1]] = m[0]
    if hung:
        status = "hung"
    elif p.returncode == 0:
        status = "ok"
    elif failed:
        status = "failed"
    else:
        status = "crashed"
    return rows, failed, status, current, secs


# ----- main -------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 round, 10 sizes, budget 0.05 s")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--ranks", default="2,3,4")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--budget", type=float, help="seconds of timed calls per size (default 0.2)")
    ap.add_argument("--timeout", type=float, help="seconds per run (default 300; --quick 120)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--cycle", action="store_true",
                    help="time each call with the MPI_Barrier before it (coll_bench --cycle)")
    ap.add_argument("--polling", action="store_true",
                    help="run Open MPI polling where ranks outnumber cores even if mpicd yields")
    ap.add_argument("--no-polling", action="store_true", help="never run Open MPI polling")
    a = ap.parse_args()
    rounds = a.rounds or (1 if a.quick else 5)
    budget = a.budget or (0.05 if a.quick else 0.2)
    timeout = a.timeout or (120 if a.quick else 300)
    ranks_list = [int(x) for x in a.ranks.split(",")]
    ops = [x for x in a.ops.split(",") if x]
    for op in ops:
        if op not in OPS:
            sys.exit(f"run.py: unknown op {op} (ops: {','.join(OPS)})")
    if a.quick:
        size_args = ["--min", "16", "--max", str(4 << 20), "--factor", "4"]
        sizes = [16 << (2 * i) for i in range(10)]
    else:
        size_args = ["--min", "8", "--max", str(4 << 20), "--factor", "2"]
        sizes = [8 << i for i in range(20)]
    bench_args = [*size_args, "--budget", str(budget), *(["--cycle"] if a.cycle else [])]
    nproc = os.cpu_count() or 1
    load_start = open("/proc/loadavg").read().split()[0]
    t_start = time.time()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    os.makedirs(os.path.join(TMP, "logs"), exist_ok=True)
    for f in os.listdir(os.path.join(TMP, "logs")):
        os.remove(os.path.join(TMP, "logs", f))

    log(f"run.py: building coll_bench with bin/mpicc and Open MPI's mpicc")
    builds, provides, peer = build()
    missing = [op for op in ops if op not in provides[MPICD]]
    if missing:
        log(f"run.py: mpicd's libmpi lacks {', '.join(missing)}: Open MPI only there")

    # Does mpicd yield where ranks outnumber cores? (MPICD_WAIT, default auto: yes.)
    with open(os.path.join(BIN, "libmpi.so"), "rb") as f:
        has_wait = b"MPICD_WAIT" in f.read()
    wait = os.environ.get("MPICD_WAIT", "auto")
    mpicd_yields = has_wait and wait != "spin"
    polling = a.polling or (not a.no_polling and not mpicd_yields)
    # Which builds run at which rank count: Open MPI polling only where ranks outnumber cores.
    plan = {n: [MPICD, OMPI] + ([OMPI_SPIN] if n > nproc and polling else []) for n in ranks_list}
    total = rounds * sum(len(v) for v in plan.values())
    log(f"run.py: {rounds} round(s) x ranks {a.ranks} on {nproc} cores (load {load_start}), "
        f"{len(sizes)} sizes, ops {','.join(ops)}; {total} runs, timeout {timeout:.0f} s each")

    samples = defaultdict(list)            # (build, op, ranks, bytes) -> [usec]
    raw = []
    dead = defaultdict(set)                # (build, ranks) -> ops that hung or crashed
    problems_seen = defaultdict(list)      # (build, ranks, op) -> [(round, text)]
    k = 0
    for r in range(rounds):
        for n in ranks_list:
            order = plan[n][:2] if r % 2 == 0 else plan[n][1::-1]
            order += plan[n][2:]
            for b in order:
                k += 1
                todo = [op for op in ops if op in provides[b] and op not in dead[(b, n)]]
                attempt = 0
                rows_total, secs_total, notes = 0, 0.0, []
                while todo:
                    attempt += 1
                    logf = os.path.join(TMP, "logs", f"r{r + 1}-{n}ranks-{b}-{attempt}.log")
                    rows, failed, status, current, secs = run_once(
                        builds[b], n, todo, bench_args, timeout, logf)
                    secs_total += secs
                    rows_total += len(rows)
                    for op, nn, nbytes, usec in rows:
                        samples[(b, op, nn, nbytes)].append(usec)
                        raw.append((b, r + 1, op, nn, nbytes, usec))
                    for op, line in failed.items():
                        problems_seen[(b, n, op)].append((r + 1, f"wrong result: `{line}`"))
                        notes.append(f"{op} FAILED its check")
                    if status in ("ok", "failed"):
                        break
                    # hung or crashed: blame the op that was running, go on with the ones after it
                    culprit = current if current in todo else todo[0]
                    what = (f"hung: no end within {timeout:.0f} s" if status == "hung"
                            else "crashed (exit without a FAILED line)")
                    problems_seen[(b, n, culprit)].append(
                        (r + 1, f"{what}; not run again at {n} ranks (log "
                                f"{os.path.relpath(logf, ROOT)})"))
                    notes.append(f"{culprit} {status.upper()}")
                    dead[(b, n)].add(culprit)
                    todo = todo[todo.index(culprit) + 1:]
                status_txt = "ok" if not notes else "; ".join(notes)
                log(f"[{k:2d}/{total}] round {r + 1}/{rounds}  {n} ranks  {LABELS[b]:<18} "
                    f"{secs_total:6.1f} s  {rows_total:3d} results  {status_txt}")

    med = {key: statistics.median(v) for key, v in samples.items()}
    nsamples = {key: len(v) for key, v in samples.items()}
    with open(os.path.join(TMP, "raw.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["build", "round", "op", "ranks", "bytes", "usec"])
        w.writerows(raw)

    problems = []
    for (b, n, op), evs in sorted(problems_seen.items()):
        rounds_hit = sorted({x for x, _ in evs})
        problems.append(f"**{LABELS[b]}, {n} ranks, {op}**: {evs[0][1]} (in round(s) "
                        f"{', '.join(map(str, rounds_hit))} of {rounds})")
    for op in ops:
        if op not in provides[MPICD]:
            problems.append(f"mpicd, {op}: not provided by mpicd's libmpi "
                            "(coll_bench --list); not run on mpicd, no failure")
    had_failure = bool(problems_seen)

    crates = ["mpicd", "mpicd-capi", "mpicd-ucx-sys", "mpicd-pmix-sys", "mpicd-sys-build"]
    engine = out_of(["git", "log", "-1", "--format=%h", "--", *crates]) or "unknown"
    if out_of(["git", "status", "--porcelain", "--", *crates]):
        engine += " + uncommitted changes"
    ucx = re.search(r"Version (\S+)", out_of(["ucx_info", "-v"]))
    ucx = ucx[1] if ucx else "?"
    meta = {
        "cycle": a.cycle,
        "command": "bench/coll/run.py" + (" " + shlex.join(sys.argv[1:]) if sys.argv[1:] else ""),
        "date": date,
        "secs": time.time() - t_start, "rounds": rounds, "nproc": nproc,
        "load_start": load_start, "load_end": open("/proc/loadavg").read().split()[0],
        "engine": f"{engine} (the last commit that changed the runtime's crates; checkout "
                  f"{out_of(['git', 'rev-parse', '--short', 'HEAD']) or '?'})", "ucx": ucx,
        "ompi": (out_of(["mpirun", "--version"]).splitlines() or ["Open MPI ?"])[0]
                .replace("mpirun (Open MPI)", "Open MPI"),
        "peer": peer,
        "wait": (f"MPICD_WAIT={wait}" + (" (unset: the default)" if "MPICD_WAIT" not in os.environ
                                          else "")) if has_wait else None,
        "yields": mpicd_yields,
    }
    csv_path, md_path = write_outputs(a, med, nsamples, ops, ranks_list, sizes, provides,
                                      problems, meta, raw)
    made = []
    if not a.no_plots and ensure_matplotlib():
        made = plots(med, ops, ranks_list, sizes, os.path.join(a.out, "plots"),
                     provides[MPICD])

    # The summary on stdout: geomeans per op and rank count.
    print(f"\ncollectives: geomean of Open MPI time / mpicd time (>1: mpicd faster), "
          f"{rounds} round(s), {duration(time.time() - t_start)}")
    print(f"{'op':<22}" + "".join(f"{str(n) + ' ranks':>10}" for n in ranks_list))
    for op in ops:
        cells = []
        for n in ranks_list:
            xs = [med[(OMPI, op, n, b)] / med[(MPICD, op, n, b)] for b in sizes
                  if med.get((MPICD, op, n, b)) and med.get((OMPI, op, n, b))]
            cells.append(fratio(geomean(xs)))
        print(f"{op:<22}" + "".join(f"{c:>10}" for c in cells))
    for p in problems:
        print(f"  {p}")
    print(f"wrote {os.path.relpath(csv_path, ROOT)}, {os.path.relpath(md_path, ROOT)}"
          + (f", {len(made)} plots" if made else ""))
    return 1 if had_failure else 0


if __name__ == "__main__":
    sys.exit(main())
