"""tables: the report of bench/coll/run.py: collectives.csv, the tables of collectives.md (the
geomeans per op and rank count, each with how far one round alone can be off, and every size)
and the plots of the ratio against size. Standard library; matplotlib for the plots.
"""
import csv
import math
import os
import subprocess
import sys
from collections import defaultdict

# The builds run.py compares.
MPICD, OMPI, OMPI_SPIN = "mpicd", "openmpi", "openmpi-polling"
OP_TITLES = {
    "allreduce": "MPI_Allreduce (MPI_INT, MPI_SUM)",
    "bcast": "MPI_Bcast (root 0)",
    "allgather": "MPI_Allgather (bytes per rank)",
    "alltoall": "MPI_Alltoall (bytes per rank pair)",
    "reduce_scatter_block": "MPI_Reduce_scatter_block (MPI_INT, MPI_SUM; bytes per rank)",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


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


def slower_rounds(raw, peer):
    """(rounds in which mpicd took longer than `peer`, rounds both ran) per (op, ranks, bytes),
    the runs of one round paired."""
    times = defaultdict(dict)
    for b, r, op, n, nbytes, usec in raw:
        times[(op, n, nbytes)][(b, r)] = usec
    out = {}
    for key, t in times.items():
        pairs = [(t[(MPICD, r)], t[(peer, r)]) for (b, r) in t if b == MPICD and (peer, r) in t]
        out[key] = (sum(m > o for m, o in pairs), len(pairs))
    return out


def write_outputs(a, med, nsamples, ops, ranks_list, sizes, provides, problems, meta, raw):
    os.makedirs(a.out, exist_ok=True)
    slower = slower_rounds(raw, OMPI)
    # --- CSV
    csv_path = os.path.join(a.out, "collectives.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "ranks", "bytes", "mpicd_usec", "openmpi_usec", "ratio",
                    "openmpi_polling_usec", "ratio_polling", "mpicd_runs", "openmpi_runs",
                    "openmpi_polling_runs", "mpicd_slower_rounds"])
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
                                nsamples.get((OMPI_SPIN, op, n, b), 0),
                                slower.get((op, n, b), (0, 0))[0]])

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
    # --- rows slower in every round
    paired = [(k, v) for k, v in slower.items() if v[1] > 1]
    if paired:
        rounds = max(v[1] for _, v in paired)
        every = sorted(((op, n, b) for (op, n, b), (s, r) in paired if s == r == rounds),
                       key=lambda k: (ops.index(k[0]) if k[0] in ops else 0, k[1], k[2]))
        L.append(f"Rows where mpicd took longer than Open MPI in every one of the {rounds} rounds "
                 f"(the runs of a round paired): **{len(every)} of {len(paired)}**; were the two "
                 f"alike, each round a coin toss, about {len(paired) / 2 ** rounds:.0f} would. "
                 + (", ".join(f"{op} {human(b)} {n}r" for op, n, b in every) or "None") + ".\n")
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


