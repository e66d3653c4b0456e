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
  collectives.csv              op,ranks,bytes, the medians in microseconds, the ratios
  collectives.md               tables: geomeans per op and rank count, then every size
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
import math
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPIRUN = shlex.split(os.environ.get(
    "MPIRUN",
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe"))
OPS = ["allreduce", "bcast", "allgather", "alltoall", "reduce_scatter_block"]
OP_TITLES = {
    "allreduce": "MPI_Allreduce (MPI_INT, MPI_SUM)",
    "bcast": "MPI_Bcast (root 0)",
    "allgather": "MPI_Allgather (bytes per rank)",
    "alltoall": "MPI_Alltoall (bytes per rank pair)",
    "reduce_scatter_block": "MPI_Reduce_scatter_block (MPI_INT, MPI_SUM; bytes per rank)",
}
# The builds: name, binary, extra mpirun arguments, whether it is mpicd.
MPICD, OMPI, OMPI_SPIN = "mpicd", "openmpi", "openmpi-polling"
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


# ----- statistics and report --------------------------------------------------------------------

def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def human(n):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"


def fnum(x, digits=1):
    if x is None or not math.isfinite(x):
        return "-"
    if x >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits if x >= 10 else 2}f}"


def duration(secs):
    return f"{secs:.0f} s" if secs < 120 else f"{secs / 60:.1f} min"


def fratio(x):
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.2f}" if x >= 0.095 else f"{x:.2g}"


def ensure_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        pass
    log("run.py: installing matplotlib with pip")
    # (a Debian system python refuses a plain pip install: PEP 668; --user then)
    for extra in ([], ["--user", "--break-system-packages"]):
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *extra, "matplotlib"])
        if r.returncode == 0:
            import importlib
            import site
            importlib.invalidate_caches()
            if extra:
                site.addsitedir(site.getusersitepackages())
            try:
                import matplotlib  # noqa: F401,F811
                return True
            except ImportError:
                pass
    log("run.py: pip failed; no plots (apt-get install python3-matplotlib works too)")
    return False


def plots(med, ops, ranks_list, sizes, outdir, provides_mpicd):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter
    os.makedirs(outdir, exist_ok=True)
    made = []
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for op in ops:
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        drawn = False
        for i, n in enumerate(ranks_list):
            c = colors[i % len(colors)]
            for peer, style, label in ((OMPI, "-o", f"{n} ranks"),
                                       (OMPI_SPIN, "--x", f"{n} ranks, vs Open MPI polling")):
                xs, ys = [], []
                for b in sizes:
                    m, o = med.get((MPICD, op, n, b)), med.get((peer, op, n, b))
                    if m and o:
                        xs.append(b)
                        ys.append(o / m)
                if xs:
                    ax.plot(xs, ys, style, color=c, label=label, markersize=4)
                    drawn = True
        ax.axhline(1.0, color="black", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes if len(sizes) <= 10 else sizes[::2])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: human(int(x)).replace(" ", "")))
        ax.xaxis.set_minor_formatter(NullFormatter())
        lo, hi = ax.get_ylim()
        ticks = [m * 10.0 ** e for e in range(-4, 5) for m in (1, 2, 5)]
        ax.set_yticks([t for t in ticks if lo <= t <= hi])
        ax.set_ylim(lo, hi)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("Open MPI time / mpicd time")
        ax.set_title(f"{OP_TITLES[op]}\nabove 1: mpicd faster", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        if drawn:
            ax.legend(fontsize=8)
        else:
            why = ("not provided by mpicd's libmpi" if op not in provides_mpicd
                   else "no results on both (see collectives.md)")
            ax.text(0.5, 0.65, why, transform=ax.transAxes, ha="center",
                    bbox=dict(facecolor="white", edgecolor="none"))
            ax.set_xlim(sizes[0] / 1.5, sizes[-1] * 1.5)
        fig.tight_layout()
        path = os.path.join(outdir, f"collectives-{op}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path)
    return made


def round_spread(raw, peer, op, n, sizes):
    """(lowest, highest) over the rounds of that round's geomean ratio (peer / mpicd, the two
    runs of one round paired), or None with fewer than two rounds."""
    by_round = defaultdict(dict)
    for b, r, o, nn, nbytes, usec in raw:
        if o == op and nn == n and b in (MPICD, peer):
            by_round[r][(b, nbytes)] = usec
    gms = []
    for r, v in by_round.items():
        xs = [v[(peer, x)] / v[(MPICD, x)] for x in sizes
              if v.get((MPICD, x)) and v.get((peer, x))]
        if xs:
            gms.append(geomean(xs))
    return (min(gms), max(gms)) if len(gms) > 1 else None


def write_outputs(a, med, nsamples, ops, ranks_list, sizes, provides, problems, meta, raw):
    os.makedirs(a.out, exist_ok=True)
    # --- CSV
    csv_path = os.path.join(a.out, "collectives.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "ranks", "bytes", "mpicd_usec", "openmpi_usec", "ratio",
                    "openmpi_polling_usec", "ratio_polling", "mpicd_runs", "openmpi_runs",
                    "openmpi_polling_runs"])
        for op in ops:
            for n in ranks_list:
                for b in sizes:
                    m, o, s = (med.get((x, op, n, b)) for x in (MPICD, OMPI, OMPI_SPIN))
                    if m is None and o is None and s is None:
                        continue
                    w.writerow([op, n, b, "" if m is None else f"{m:.3f}",
                                "" if o is None else f"{o:.3f}",
                                f"{o / m:.4f}" if m and o else "",
                                "" if s is None else f"{s:.3f}",
                                f"{s / m:.4f}" if m and s else "",
                                nsamples.get((MPICD, op, n, b), 0), nsamples.get((OMPI, op, n, b), 0),
                                nsamples.get((OMPI_SPIN, op, n, b), 0)])

    def ratios(peer, op, n, pick=lambda b: True):
        return [med[(peer, op, n, b)] / med[(MPICD, op, n, b)] for b in sizes
                if pick(b) and med.get((MPICD, op, n, b)) and med.get((peer, op, n, b))]

    spin_ranks = [n for n in ranks_list if any(k[0] == OMPI_SPIN and k[2] == n for k in med)]
    L = []
    L.append("# Collectives: mpicd against Open MPI\n")
    L.append(f"Made by `{meta['command']}`, started {meta['date']}, in {duration(meta['secs'])}: "
             f"{meta['rounds']} interleaved round(s), medians; {meta['nproc']} cores, load average "
             f"{meta['load_start']} at the start, {meta['load_end']} at the end.  ")
    L.append(f"mpicd {meta['engine']}, UCX {meta['ucx']}; {meta['ompi']} (`{meta['peer']}`, "
             "Debian's defaults: pml ob1, btl vader, coll tuned).\n")
    timed = ("per cycle of MPI_Barrier and the call (`--cycle`)" if meta["cycle"] else
             "per call: the slowest rank's mean over the timed calls, each call started from an "
             "MPI_Barrier")
    L.append("**ratio = Open MPI's time / mpicd's time: above 1, mpicd is faster.** Times are "
             f"microseconds {timed} (`bench/coll/coll_bench.c`); MPI_INT data, every result "
             "checked. Sizes: allreduce and bcast the whole buffer; allgather, alltoall and "
             "reduce_scatter_block the block per rank (per rank pair for alltoall).\n")
    busy = [x for x in (meta["load_start"], meta["load_end"]) if float(x) > meta["nproc"] + 0.5]
    if busy:
        L.append(f"**The machine was busy** (load average above {meta['nproc']} cores): other "
                 "processes took core time from the ranks, of both implementations alike (the "
                 "rounds are interleaved); absolute times suffer more than the ratios.\n")
    over = [n for n in ranks_list if n > meta["nproc"]]
    if over and meta["yields"]:
        L.append(f"With {', '.join(map(str, over))} ranks on {meta['nproc']} cores the ranks share "
                 "cores. Both yield their core while they wait: Open MPI because mpirun "
                 f"--oversubscribe sets `mpi_yield_when_idle`, mpicd through {meta['wait']}. Those "
                 "ratios compare the algorithms on shared cores, where every step that waits goes "
                 "through the scheduler; only rank counts up to the core count compare them on "
                 "cores of their own.\n")
    elif over:
        L.append(f"With {', '.join(map(str, over))} ranks on {meta['nproc']} cores the ranks "
                 "share cores. Open MPI then yields its core while it waits (mpirun --oversubscribe "
                 "sets `mpi_yield_when_idle`); this mpicd polls ("
                 + (meta["wait"] if meta["wait"] else "its libmpi has no MPICD_WAIT") +
                 "), so a rank that waits keeps a core from the rank it waits for until the "
                 "scheduler preempts it (a time slice: milliseconds per step of the algorithm)."
                 + ("" if spin_ranks else "\n"))
    if spin_ranks:
        L.append("**Open MPI, polling** is Open MPI with `--mca mpi_yield_when_idle 0`, which "
                 "polls: where mpicd polls too, both pay the time slices and its ratio compares the "
                 "two under that same handicap (mostly the number of steps that wait), while the "
                 "plain ratio is what a user of an oversubscribed node gets.\n")
    # --- summary
    L.append("## Geometric mean of the ratio over the sizes\n")
    L.append("Of the medians; in brackets the lowest and highest of the same geomean taken in each "
             "round alone (mpicd's and Open MPI's runs of one round paired): how far one round can "
             "be off on this machine.\n")
    head = "| op | " + " | ".join(f"{n} ranks" for n in ranks_list)
    if spin_ranks:
        head += " | " + " | ".join(f"{n} ranks, vs polling" for n in spin_ranks)
    L.append(head + " |")
    L.append("|---|" + "---|" * (len(ranks_list) + len(spin_ranks)))
    def cell(peer, op, n):
        g = fratio(geomean(ratios(peer, op, n)))
        sp = round_spread(raw, peer, op, n, sizes)
        return g if g == "-" or sp is None else f"{g} ({fratio(sp[0])}-{fratio(sp[1])})"

    for op in ops:
        cells = [cell(OMPI, op, n) for n in ranks_list]
        cells += [cell(OMPI_SPIN, op, n) for n in spin_ranks]
        L.append(f"| {op} | " + " | ".join(cells) + " |")
    L.append("")
    L.append("Small (8 B-4 KiB) and large (256 KiB-4 MiB) messages apart:\n")
    L.append("| op | " + " | ".join(f"{n} ranks small | {n} ranks large" for n in ranks_list) + " |")
    L.append("|---|" + "---|---|" * len(ranks_list))
    for op in ops:
        cells = []
        for n in ranks_list:
            cells.append(fratio(geomean(ratios(OMPI, op, n, lambda b: b <= 4096))))
            cells.append(fratio(geomean(ratios(OMPI, op, n, lambda b: b >= 256 << 10))))
        L.append(f"| {op} | " + " | ".join(cells) + " |")
    L.append("")
    # --- problems
    L.append("## Failures, hangs, missing operations\n")
    if problems:
        for p in problems:
            L.append(f"- {p}")
    else:
        L.append("None: every result of every run passed its check.")
    L.append("")
    # --- details
    L.append("## Every size (microseconds per call, medians)\n")
    for op in ops:
        L.append(f"### {OP_TITLES[op]}\n")
        if op not in provides[MPICD]:
            L.append(f"mpicd's libmpi does not provide it (coll_bench --list); Open MPI's times only.\n")
        head = "| bytes |"
        sep = "|---:|"
        for n in ranks_list:
            head += f" {n}r mpicd | {n}r Open MPI | {n}r ratio |"
            sep += "---:|---:|---:|"
            if n in spin_ranks:
                head += f" {n}r OMPI polling | {n}r ratio polling |"
                sep += "---:|---:|"
        L.append(head)
        L.append(sep)
        for b in sizes:
            cells = [human(b)]
            if not any(med.get((x, op, n, b)) for x in (MPICD, OMPI) for n in ranks_list):
                continue
            for n in ranks_list:
                m, o = med.get((MPICD, op, n, b)), med.get((OMPI, op, n, b))
                cells += [fnum(m), fnum(o), fratio(o / m if m and o else None)]
                if n in spin_ranks:
                    s = med.get((OMPI_SPIN, op, n, b))
                    cells += [fnum(s), fratio(s / m if m and s else None)]
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
    L.append("Plots: `plots/collectives-OP.png` (ratio against size, one line per rank count"
             + ("; dashed: against Open MPI polling" if spin_ranks else "")
             + "). Raw samples and logs: `bench/results/tmp/coll/`.")
    md_path = os.path.join(a.out, "collectives.md")
    with open(md_path, "w") as f:
        f.write("\n".join(L) + "\n")
    return csv_path, md_path


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
