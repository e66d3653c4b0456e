"""Merges the ping-pong CSVs of one benchmark run, writes the combined CSV and the PNG plot, and
prints ours against the targets:

1. ours >= 0.8 x our raw bandwidth (one preallocated buffer of the size) from 4 MiB up;
2. ours >= mpi4py pkl5's bandwidth (Open MPI) at every size from 256 KiB up.
(bench/scoreboard.py has the small-object target: ours >= pkl5 at 1-16 KiB.) The single case's
table also gives ours through the package's ctypes fallback against pkl5 (ctypes/pkl5), up to
64 KiB.

Each input row is one (impl, case, method, bytes) point; repeated runs of the same point keep
the best. Usage: report.py RUN.csv... --csv OUT.csv --png OUT.png
"""

import argparse
import csv
import sys
from collections import defaultdict

TARGET_RAW_RATIO = 0.8
TARGET_RAW_FROM = 4 << 20
TARGET_PKL5_FROM = 256 << 10

SERIES = [  # (impl, method, label, style)
    ("mpicd", "raw", "mpicd raw buffer", dict(color="black", ls="-", marker=".")),
    ("mpicd", "raw-multi", "mpicd raw, one message per 128 KiB buffer", dict(color="gray", ls="--", marker=".")),
    ("mpicd", "pickle-inband", "mpicd pickle in-band", dict(color="tab:orange", ls="-", marker="v")),
    ("mpicd", "pickle-oob-multi", "mpicd pickle OOB, one message per buffer", dict(color="tab:green", ls="-", marker="s")),
    ("mpicd", "ours", "ours: pickle OOB, one custom-datatype message", dict(color="tab:red", ls="-", marker="o", lw=2.5)),
    ("mpicd", "ours-ctypes", "ours through ctypes (no C extension)", dict(color="tab:red", ls=":", marker="o")),
    ("mpi4py", "raw", "Open MPI raw buffer (mpi4py)", dict(color="tab:blue", ls=":", marker=".")),
    ("mpi4py", "pickle", "mpi4py pickle (in-band)", dict(color="tab:purple", ls=":", marker="v")),
    ("mpi4py", "pkl5", "mpi4py.util.pkl5", dict(color="tab:blue", ls="-", marker="^")),
]


def human(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"


def load(paths):
    best = {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["impl"], row["case"], row["method"], int(row["bytes"]))
                mbps = float(row["MBps"])
                if key not in best or mbps > best[key]:
                    best[key] = mbps
    return best


def write_csv(best, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["impl", "case", "method", "bytes", "MBps"])
        for (impl, case, method, size), mbps in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][3], kv[0][0], kv[0][2])):
            w.writerow([impl, case, method, size, f"{mbps:.1f}"])


def plot(best, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [c for c in ("single", "many") if any(k[1] == c for k in best)]
    fig, axes = plt.subplots(1, len(cases), figsize=(7.5 * len(cases), 6.5), squeeze=False)
    titles = {"single": "(a) one NumPy array", "many": "(b) list of 128 KiB arrays"}
    handles = {}
    for ax, case in zip(axes[0], cases):
        sizes_here = {k[3] for k in best if k[1] == case}
        for impl, method, label, style in SERIES:
            # The raw buffer is measured once (single case) and is the reference of both.
            src = "single" if (impl, method) in (("mpicd", "raw"), ("mpi4py", "raw")) else case
            pts = sorted((k[3], v) for k, v in best.items()
                         if k[:3] == (impl, src, method) and k[3] in sizes_here)
            if not pts:
                continue
            xs, ys = zip(*pts)
            (line,) = ax.plot(xs, [y / 1000 for y in ys], label=label, **style)
            handles.setdefault(label, line)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        sizes = sorted({k[3] for k in best if k[1] == case})
        ax.set_xticks(sizes)
        ax.set_xticklabels([human(s) for s in sizes], rotation=45, ha="right")
        ax.set_xlabel("object size")
        ax.set_ylabel("ping-pong bandwidth (GB/s)")
        ax.set_title(titles.get(case, case))
        ax.grid(True, which="both", alpha=0.3)
        ax.axvspan(TARGET_RAW_FROM, max(sizes) * 1.5, color="tab:red", alpha=0.04)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=4, fontsize=9)
    fig.suptitle("Python objects over mpicd (ours) vs raw buffers and mpi4py on Open MPI, "
                 "2 ranks, shared memory (shaded: the 0.8 x raw target range)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)


def report(best):
    ok_all = True
    lines = []
    for case in ("single", "many"):
        sizes = sorted({k[3] for k in best if k[1] == case and k[2] == "ours"})
        if not sizes:
            continue
        lines.append(f"\n== case {case}: " + ("one NumPy array" if case == "single" else "list of 128 KiB arrays"))
        hdr = f"{'size':>9} {'ours MB/s':>10} {'raw':>9} {'ours/raw':>9} {'pkl5':>9} {'ours/pkl5':>10}"
        if case == "single":
            hdr += f" {'ctypes/pkl5':>12}"
        if case == "many":
            hdr += f" {'raw-multi':>10} {'ours/multi':>11}"
        lines.append(hdr + "  targets")
        for s in sizes:
            ours = best.get(("mpicd", case, "ours", s))
            raw = best.get(("mpicd", "single", "raw", s))
            pkl5 = best.get(("mpi4py", case, "pkl5", s))
            multi = best.get(("mpicd", case, "raw-multi", s))
            r_raw = ours / raw if raw else None
            r_pkl5 = ours / pkl5 if pkl5 else None
            verdicts = []
            if s >= TARGET_RAW_FROM and r_raw is not None:
                good = r_raw >= TARGET_RAW_RATIO
                ok_all &= good
                verdicts.append(f"raw {'ok' if good else 'MISSED'}")
            if s >= TARGET_PKL5_FROM and r_pkl5 is not None:
                good = r_pkl5 >= 1.0
                ok_all &= good
                verdicts.append(f"pkl5 {'ok' if good else 'MISSED'}")
            fmt = lambda v, w, p=0: (f"{v:{w}.{p}f}" if v is not None else f"{'-':>{w}}")
            line = (f"{human(s):>9} {fmt(ours, 10)} {fmt(raw, 9)} {fmt(r_raw, 9, 2)} "
                    f"{fmt(pkl5, 9)} {fmt(r_pkl5, 10, 2)}")
            if case == "single":
                slow = best.get(("mpicd", case, "ours-ctypes", s))
                line += f" {fmt(slow and pkl5 and slow / pkl5, 12, 2)}"
            if case == "many":
                line += f" {fmt(multi, 10)} {fmt(multi and ours / multi, 11, 2)}"
            lines.append(line + "  " + ", ".join(verdicts))
    lines.append(
        f"\ntargets: ours >= {TARGET_RAW_RATIO} x raw from {human(TARGET_RAW_FROM)}, "
        f">= pkl5 from {human(TARGET_PKL5_FROM)}: {'all met' if ok_all else 'NOT all met'}"
    )
    return "\n".join(lines), ok_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--csv", required=True)
    ap.add_argument("--png", required=True)
    args = ap.parse_args()
    best = load(args.inputs)
    write_csv(best, args.csv)
    plot(best, args.png)
    text, _ = report(best)
    print(text)
    print(f"\nwrote {args.csv} and {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
