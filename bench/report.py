#!/usr/bin/env python3
"""report: turns the RESULT lines of bench/run-all.sh into CSV files, PNG plots and summary.md.

Input: a directory of RESULT files (one per benchmark run), each line
    RESULT <impl> <metric> <bytes> <value>
from
    datatypes / rsmpi-datatypes   metric <kind>.<latency|bandwidth|memory...>, value us | MB/s | B
    ddtbench (both builds)        metric <test> (median) or <test>.mean, value MB/s
and criterion's estimates (target/criterion/<group>/<bench>/new/estimates.json).

Output (in --out): datatypes.csv, memory.csv, ddtbench.csv, criterion.csv, summary.md and, unless
--no-plots, plots/*.png: one per Rust benchmark (latency or bandwidth against size, one line per
method, as the paper's figures 1-7), memory.png, ddtbench.png (figure 10: bandwidth per kernel and
method, with mpicd's own derived datatypes beside Open MPI's) and criterion.png.

The targets (issue 6) are evaluated on ratios of the same run:
  double-vec (1 KiB sub-vectors): custom bandwidth >= 2x packed from 1 MiB up, and >= 0.7x rsmpi
      sending the same raw bytes (from 1 MiB up);
  struct-simple: custom >= 1.5x rsmpi's derived datatype from 64 KiB up (bandwidth);
  struct-vec: custom >= rsmpi's derived datatype at every size (bandwidth and latency);
  DDTBench: the better of custom and custom_regions >= Open MPI's mpi_ddt on every kernel
      (geometric mean over its configurations), geometric mean over the kernels >= 1.2x;
      reported beside it, not a target: mpicd's derived datatypes (mpicd_ddt) against Open MPI's
      (mpi_ddt) and against mpicd's custom method, per configuration and as geometric means;
  memory: the custom path's extra peak RSS <= CustomConfig::memory_bound_for(shape) at every
  size (the engine's fixed bound plus the message's region list).
Standard library only, except matplotlib for the plots.
"""
import argparse
import csv
import glob
import json
import math
import os
import sys
from collections import defaultdict

MIB = 1 << 20
KIB = 1 << 10

METHOD_ORDER = ["custom", "packed", "serde", "serde-region", "bytes", "rsmpi-ddt", "rsmpi-bytes"]
DDT_ORDER = ["reference", "manual", "mpi_ddt", "mpi_pack_ddt", "mpicd_reference", "mpicd_manual",
             "mpicd_ddt", "mpicd_pack_ddt", "custom", "custom_regions"]
# The kernels of the paper's figure 10 (DDTBench's own figure leaves out the rest).
PAPER_KERNELS = ["LAMMPS_full", "MILC_su3_zd", "NAS_LU_x", "NAS_LU_y", "NAS_MG_x", "NAS_MG_y",
                 "NAS_MG_z", "WRF_x_vec", "WRF_y_vec"]


def parse(raw_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(raw_dir, "*.txt"))):
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 5 and p[0] == "RESULT":
                    try:
                        rows.append((os.path.basename(path)[:-4], p[1], p[2], int(p[3]),
                                     float(p[4])))
                    except ValueError:
                        pass
    return rows


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def human(n):
    if n >= MIB and n % MIB == 0:
        return f"{n // MIB} MiB"
    if n >= KIB and n % KIB == 0:
        return f"{n // KIB} KiB"
    return f"{n} B"


def fmt(x, digits=2):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


class Data:
    def __init__(self, rows):
        # datatypes[(kind, test)][method][bytes] = value
        self.dt = defaultdict(lambda: defaultdict(dict))
        self.mem = defaultdict(lambda: defaultdict(dict))  # mem[kind][method][bytes]
        self.bound = {}  # bound[kind][bytes]: CustomConfig::memory_bound_for
        self.ddt = defaultdict(lambda: defaultdict(dict))  # ddt[test][bytes][method] = median
        self.ddt_mean = defaultdict(lambda: defaultdict(dict))
        for source, impl, metric, nbytes, value in rows:
            if source.startswith("ddtbench"):
                if metric.endswith(".mean"):
                    self.ddt_mean[metric[:-5]][nbytes][impl] = value
                else:
                    self.ddt[metric][nbytes][impl] = value
                continue
            kind, _, test = metric.partition(".")
            if test == "memory":
                if impl == "bound":
                    self.bound.setdefault(kind, {})[nbytes] = value
                else:
                    self.mem[kind][impl][nbytes] = value
            elif test in ("latency", "bandwidth"):
                self.dt[(kind, test)][impl][nbytes] = value

    def bound_at(self, kind, nbytes):
        """The engine's memory bound for a message of `kind` and size (a bound reported for size 0
        holds at every size)."""
        b = self.bound.get(kind, {})
        return b.get(nbytes, b.get(0))


def ratios(num, den, sizes):
    """[(size, num/den)] over sizes where both exist."""
    return [(s, num[s] / den[s]) for s in sizes if s in num and s in den and den[s] > 0]


def target_line(name, pairs, threshold, direction="bw"):
    """A summary row: the worst ratio over the sizes and whether every size meets `threshold`."""
    if not pairs:
        return (name, "no data", "", "MISSING")
    worst = min(pairs, key=lambda p: p[1])
    ok = all(r >= threshold for _, r in pairs)
    detail = ", ".join(f"{human(s)}: {r:.2f}" for s, r in pairs)
    return (name, f"min {worst[1]:.2f} at {human(worst[0])} (target >= {threshold})", detail,
            "met" if ok else f"MISSED by {100 * (1 - worst[1] / threshold):.0f}% at worst")


def evaluate(d):
    rows = []
    # double-vec
    bw = d.dt.get(("double-vec", "bandwidth"), {})
    big = sorted(s for s in bw.get("custom", {}) if s >= MIB)
    rows.append(target_line("double-vec: custom / packed bandwidth, >= 1 MiB",
                            ratios(bw.get("custom", {}), bw.get("packed", {}), big), 2.0))
    rows.append(target_line("double-vec: custom / rsmpi raw bytes bandwidth, >= 1 MiB",
                            ratios(bw.get("custom", {}), bw.get("rsmpi-bytes", {}), big), 0.7))
    # struct-simple
    bw = d.dt.get(("struct-simple", "bandwidth"), {})
    sizes = sorted(s for s in bw.get("custom", {}) if s >= 64 * KIB)
    rows.append(target_line("struct-simple: custom / rsmpi derived datatype bandwidth, >= 64 KiB",
                            ratios(bw.get("custom", {}), bw.get("rsmpi-ddt", {}), sizes), 1.5))
    # struct-vec
    for test in ("bandwidth", "latency"):
        t = d.dt.get(("struct-vec", test), {})
        sizes = sorted(t.get("custom", {}))
        if test == "bandwidth":
            pairs = ratios(t.get("custom", {}), t.get("rsmpi-ddt", {}), sizes)
        else:  # lower is better: rsmpi / custom
            pairs = ratios(t.get("rsmpi-ddt", {}), t.get("custom", {}), sizes)
        rows.append(target_line(f"struct-vec: custom vs rsmpi derived datatype {test} "
                                f"({'custom/rsmpi' if test == 'bandwidth' else 'rsmpi/custom'}), "
                                "every size", pairs, 1.0))
    # memory
    for kind in sorted(d.mem):
        custom = d.mem[kind].get("custom", {})
        bounds = {s: d.bound_at(kind, s) for s in custom}
        if custom and all(bounds.values()):
            worst = max(custom.items(), key=lambda kv: kv[1] / bounds[kv[0]])
            ok = all(v <= bounds[s] for s, v in custom.items())
            lo, hi = min(bounds.values()), max(bounds.values())
            span = (f"{lo / MIB:.2f} MiB" if f"{lo / MIB:.2f}" == f"{hi / MIB:.2f}"
                    else f"{lo / MIB:.2f}-{hi / MIB:.2f} MiB")
            rows.append((f"memory: {kind} custom extra peak RSS <= memory_bound_for(shape) ({span})",
                         f"max {worst[1] / MIB:.2f} MiB at {human(worst[0])} "
                         f"(bound {bounds[worst[0]] / MIB:.2f} MiB)",
                         ", ".join(f"{human(s)}: {v / KIB:.0f} KiB" for s, v in sorted(custom.items())),
                         "met" if ok else
                         f"MISSED: {worst[1] / bounds[worst[0]]:.1f}x the bound at worst"))
    return rows


def ddt_ratios(d):
    """Per test: [(bytes, best custom method, best custom MB/s, mpi_ddt MB/s, ratio)]."""
    out = {}
    for test in sorted(d.ddt):
        rows = []
        for nbytes in sorted(d.ddt[test]):
            m = d.ddt[test][nbytes]
            cands = [(m[k], k) for k in ("custom", "custom_regions") if k in m]
            if not cands or "mpi_ddt" not in m or m["mpi_ddt"] <= 0:
                continue
            best, which = max(cands)
            rows.append((nbytes, which, best, m["mpi_ddt"], best / m["mpi_ddt"]))
        if rows:
            out[test] = rows
    return out


def ddt_derived(d):
    """Per test: [(bytes, Open MPI mpi_ddt, mpicd_ddt, custom, mpicd_ddt / mpi_ddt,
    mpicd_ddt / custom)], MB/s or None where a method is missing; a configuration is listed when
    mpicd_ddt or mpi_ddt ran."""
    out = {}
    for test in sorted(d.ddt):
        rows = []
        for nbytes in sorted(d.ddt[test]):
            m = d.ddt[test][nbytes]
            ompi, ours, cust = m.get("mpi_ddt"), m.get("mpicd_ddt"), m.get("custom")
            if ompi is None and ours is None:
                continue
            r_ompi = ours / ompi if ours is not None and ompi else None
            r_cust = ours / cust if ours is not None and cust else None
            rows.append((nbytes, ompi, ours, cust, r_ompi, r_cust))
        if rows:
            out[test] = rows
    return out


def ddt_derived_geomeans(dd):
    """Per test: (geomean mpicd_ddt / mpi_ddt, geomean mpicd_ddt / custom) over its configurations
    (nan where no configuration has both), and the same over the kernels."""
    per = {}
    for test, rows in dd.items():
        per[test] = (geomean([r[4] for r in rows if r[4] is not None]),
                     geomean([r[5] for r in rows if r[5] is not None]))
    overall = tuple(geomean([g[i] for g in per.values() if not math.isnan(g[i])])
                    for i in range(2))
    return per, overall


def write_csvs(d, out, crit):
    with open(os.path.join(out, "datatypes.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "test", "method", "bytes", "value", "unit"])
        for (kind, test), methods in sorted(d.dt.items()):
            for method in sorted(methods, key=order_key):
                for s, v in sorted(methods[method].items()):
                    w.writerow([kind, test, method, s, v, "us" if test == "latency" else "MB/s"])
    with open(os.path.join(out, "memory.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "method", "bytes", "extra_peak_rss_bytes", "memory_bound_bytes"])
        for kind in sorted(d.mem):
            for method in sorted(d.mem[kind]):
                for s, v in sorted(d.mem[kind][method].items()):
                    w.writerow([kind, method, s, int(v), int(d.bound_at(kind, s) or 0)])
    with open(os.path.join(out, "ddtbench.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["test", "bytes", "method", "MBps_median", "MBps_mean"])
        for test in sorted(d.ddt):
            for nbytes in sorted(d.ddt[test]):
                for method in sorted(d.ddt[test][nbytes], key=ddt_key):
                    w.writerow([test, nbytes, method, d.ddt[test][nbytes][method],
                                d.ddt_mean[test][nbytes].get(method, "")])
    with open(os.path.join(out, "criterion.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["group", "benchmark", "parameter", "mean_ns", "throughput", "unit"])
        for row in crit:
            w.writerow(row)


def order_key(m):
    return (METHOD_ORDER.index(m) if m in METHOD_ORDER else 99, m)


def ddt_key(m):
    return (DDT_ORDER.index(m) if m in DDT_ORDER else 99, m)


def read_criterion(root):
    """[(group, bench, param, mean_ns, throughput, unit)] from criterion's estimates."""
    rows = []
    for est in sorted(glob.glob(os.path.join(root, "**", "new", "estimates.json"), recursive=True)):
        bench_dir = os.path.dirname(os.path.dirname(est))
        rel = os.path.relpath(bench_dir, root).split(os.sep)
        if rel[0] == "report":
            continue
        try:
            with open(est) as f:
                mean = json.load(f)["mean"]["point_estimate"]
            with open(os.path.join(os.path.dirname(est), "benchmark.json")) as f:
                meta = json.load(f)
        except (OSError, KeyError, ValueError):
            continue
        group = meta.get("group_id", rel[0])
        func = meta.get("function_id") or ""
        param = meta.get("value_str") or ""
        thr = meta.get("throughput") or {}
        if "Bytes" in thr:
            rows.append((group, func, param, mean, thr["Bytes"] / mean * 1e9 / 1e6, "MB/s"))
        elif "Elements" in thr:
            rows.append((group, func, param, mean, thr["Elements"] / mean * 1e9, "elements/s"))
        else:
            rows.append((group, func, param, mean, "", ""))
    return rows


def plots(d, out, crit):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.lines  # noqa: F401 (the DDTBench legend)
    import matplotlib.pyplot as plt

    pdir = os.path.join(out, "plots")
    os.makedirs(pdir, exist_ok=True)
    made = []
    for (kind, test), methods in sorted(d.dt.items()):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for method in sorted(methods, key=order_key):
            pts = sorted(methods[method].items())
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=method,
                    color=f"C{order_key(method)[0] % 10}",
                    linestyle="--" if method.startswith("rsmpi") else "-")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("latency (us, half a round trip)" if test == "latency"
                      else "bandwidth (MB/s of payload)")
        ax.set_title(f"{kind} {test}" + (" (1 KiB sub-vectors)" if kind == "double-vec" else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"{kind}-{test}.png"
        fig.savefig(os.path.join(pdir, name), dpi=110)
        plt.close(fig)
        made.append(name)
    if d.mem:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for kind in sorted(d.mem):
            for method in sorted(d.mem[kind]):
                pts = sorted(d.mem[kind][method].items())
                ax.plot([p[0] for p in pts], [p[1] / KIB for p in pts], marker="o", ms=3,
                        label=f"{kind} {method}", linestyle="-" if method == "custom" else ":")
        for kind in sorted(d.bound):
            pts = sorted((s, d.bound_at(kind, s)) for s in
                         {s for m in d.mem.get(kind, {}).values() for s in m})
            if pts:
                ax.plot([p[0] for p in pts], [p[1] / KIB for p in pts], color="red",
                        linestyle="--", lw=1, label=f"{kind} bound (memory_bound_for)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=4)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("extra peak RSS per rank (KiB)")
        ax.set_title("peak memory of one exchange (VmHWM growth)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(pdir, "memory.png"), dpi=110)
        plt.close(fig)
        made.append("memory.png")
    if d.ddt:
        # One colour per method family, dashed on Open MPI and solid on mpicd, so that each
        # Open MPI method sits beside its mpicd counterpart; the compared three (mpi_ddt,
        # mpicd_ddt, custom) drawn thicker.
        colors = {"reference": "C7", "mpicd_reference": "C7", "manual": "C1",
                  "mpicd_manual": "C1", "mpi_ddt": "C3", "mpicd_ddt": "C3",
                  "mpi_pack_ddt": "C4", "mpicd_pack_ddt": "C4", "custom": "C0",
                  "custom_regions": "C2"}
        widths = {"mpi_ddt": 2.2, "mpicd_ddt": 2.2, "custom": 2.2}
        tests = sorted(d.ddt)
        cols = 4
        nrows = (len(tests) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), squeeze=False)
        for i, test in enumerate(tests):
            ax = axes[i // cols][i % cols]
            methods = sorted({m for b in d.ddt[test].values() for m in b}, key=ddt_key)
            for method in methods:
                pts = sorted((b, v[method]) for b, v in d.ddt[test].items() if method in v)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=method,
                        color=colors.get(method), lw=widths.get(method, 1.0),
                        linestyle="--" if not method.startswith(("mpicd", "custom")) else "-")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(test, fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(True, which="both", alpha=0.3)
        for j in range(len(tests), nrows * cols):
            axes[j // cols][j % cols].axis("off")
        present = [m for m in DDT_ORDER if any(m in b for t in d.ddt.values() for b in t.values())]
        handles = [matplotlib.lines.Line2D([], [], color=colors[m], marker="o", ms=3,
                                           lw=widths.get(m, 1.0),
                                           linestyle="--" if not m.startswith(("mpicd", "custom"))
                                           else "-") for m in present]
        fig.legend(handles, present, loc="lower center", ncol=(len(present) + 1) // 2,
                   fontsize=8)
        fig.suptitle("DDTBench: bandwidth (MB/s, median round trip) against message bytes; "
                     "dashed: Open MPI, solid: mpicd; one colour per method (mpi_ddt and mpicd_ddt "
                     "red)")
        fig.tight_layout(rect=(0, 0.06, 1, 1))
        fig.savefig(os.path.join(pdir, "ddtbench.png"), dpi=100)
        plt.close(fig)
        made.append("ddtbench.png")
    if crit:
        fig, ax = plt.subplots(figsize=(8, 0.28 * len(crit) + 1.2))
        labels = [f"{g}/{b}" + (f"/{p}" if p else "") for g, b, p, *_ in crit]
        ax.barh(range(len(crit)), [c[3] / 1000 for c in crit])
        ax.set_yticks(range(len(crit)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("time per message (us), singleton self messages")
        ax.set_title("engine CPU costs (criterion)")
        ax.invert_yaxis()
        fig.tight_layout()
        fig.savefig(os.path.join(pdir, "criterion.png"), dpi=100)
        plt.close(fig)
        made.append("criterion.png")
    return made


def summary(d, out, crit, made, args):
    L = []
    L.append("# mpicd benchmark summary\n")
    if args.smoke:
        L.append("**Smoke run**: one iteration of tiny sizes, correctness only; the numbers and "
                 "the target rows below mean nothing.\n")
    L.append(f"Generated by `bench/run-all.sh` on {os.cpu_count()} cores "
             f"(load average {args.load_start} at start, {args.load_end} at the end; "
             "a busy machine slows every method, so read ratios). Bandwidths are MB/s "
             "(1e6 bytes) of payload; latencies half a round trip in us. "
             f"mpicd measured: {args.engine}.\n")
    L.append("## Targets (issue 6)\n")
    L.append("| target | measured (worst) | status |")
    L.append("|---|---|---|")
    evaluated = evaluate(d)
    for name, worst, _detail, status in evaluated:
        L.append(f"| {name} | {worst} | {status} |")
    dr = ddt_ratios(d)
    if dr:
        per_kernel = {t: geomean([r[4] for r in rows]) for t, rows in dr.items()}
        overall = geomean(list(per_kernel.values()))
        losers = [t for t, g in per_kernel.items() if g < 1.0]
        L.append(f"| DDTBench: best custom / Open MPI mpi_ddt on every kernel (geomean of its "
                 f"configurations) | min {min(per_kernel.values()):.2f} "
                 f"({min(per_kernel, key=per_kernel.get)}) | "
                 + ("met" if not losers else f"MISSED on {len(losers)} of {len(per_kernel)}: "
                    + ", ".join(f"{t} {per_kernel[t]:.2f}" for t in sorted(losers))) + " |")
        L.append(f"| DDTBench: geometric mean over the kernels >= 1.2 | {overall:.2f} | "
                 + ("met" if overall >= 1.2 else f"MISSED by {100 * (1 - overall / 1.2):.0f}%")
                 + " |")
        paper = [per_kernel[t] for t in PAPER_KERNELS if t in per_kernel]
        if paper:
            L.append(f"| (the paper's figure-10 kernels only: geometric mean) | "
                     f"{geomean(paper):.2f} | for reference |")
    dd = ddt_derived(d)
    if dd:
        _per, (g_ompi, g_cust) = ddt_derived_geomeans(dd)
        L.append(f"| DDTBench: mpicd_ddt / Open MPI mpi_ddt, geometric mean over the kernels | "
                 f"{fmt(g_ompi)} | for reference (no target) |")
        L.append(f"| DDTBench: mpicd_ddt / mpicd custom, geometric mean over the kernels | "
                 f"{fmt(g_cust)} | for reference (no target) |")
    L.append("")
    L.append("Per-size ratios of the targets:\n")
    for name, _w, detail, _s in evaluated:
        if detail:
            L.append(f"- {name}: {detail}")
    L.append("")

    # Rust tables
    for (kind, test), methods in sorted(d.dt.items()):
        L.append(f"## {kind} {test} ({'us' if test == 'latency' else 'MB/s'})\n")
        ms = sorted(methods, key=order_key)
        sizes = sorted({s for m in ms for s in methods[m]})
        L.append("| size | " + " | ".join(ms) + " |")
        L.append("|---|" + "---|" * len(ms))
        for s in sizes:
            L.append(f"| {human(s)} | " + " | ".join(fmt(methods[m].get(s), 1 if test == 'bandwidth' else 2)
                                               for m in ms) + " |")
        if f"{kind}-{test}.png" in made:
            L.append(f"\n![{kind} {test}](plots/{kind}-{test}.png)")
        L.append("")

    if d.mem:
        L.append("## Memory: extra peak RSS of one exchange (KiB, the larger rank)\n")
        for kind in sorted(d.mem):
            ms = sorted(d.mem[kind])
            sizes = sorted({s for m in ms for s in d.mem[kind][m]})
            b = [d.bound_at(kind, s) or 0 for s in sizes]
            L.append(f"{kind} (bound {min(b) / KIB:.0f}-{max(b) / KIB:.0f} KiB: "
                     "CustomConfig::memory_bound_for, the fixed part plus the region list):\n")
            L.append("| size | " + " | ".join(ms) + " |")
            L.append("|---|" + "---|" * len(ms))
            for s in sizes:
                L.append(f"| {human(s)} | " + " | ".join(
                    fmt(d.mem[kind][m].get(s, float('nan')) / KIB, 0) for m in ms) + " |")
            L.append("")
        if "memory.png" in made:
            L.append("![memory](plots/memory.png)\n")

    if dr or dd:
        L.append("## DDTBench: derived datatypes on mpicd and Open MPI, and the custom methods\n")
        L.append("Bandwidth (MB/s) from the median round trip (DDTBench's mean is in ddtbench.csv). "
                 "`mpi_ddt`: Open MPI with DDTBench's derived datatype; `mpicd_ddt`: mpicd with the "
                 "same datatype (the same construction code); `custom`: mpicd's custom datatype "
                 "with pack/unpack callbacks; best custom: the better of `custom` and "
                 "`custom_regions` (the target's numerator). `ref` = mpicd_reference / Open MPI "
                 "reference: the transports' own ratio on contiguous data of the same size.\n")
        L.append("| test | bytes | Open MPI mpi_ddt | mpicd_ddt | mpicd custom | "
                 "mpicd ddt / Open MPI ddt | mpicd ddt / mpicd custom | best custom | "
                 "best custom / mpi_ddt | manual (mpicd) / manual (Open MPI) | ref ratio |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|")
        best = {(t, r[0]): r for t, rows in dr.items() for r in rows}
        tests = sorted(set(dd) | set(dr))
        for test in tests:
            sizes = sorted({r[0] for r in dd.get(test, [])} | {r[0] for r in dr.get(test, [])})
            der = {r[0]: r for r in dd.get(test, [])}
            for nbytes in sizes:
                m = d.ddt[test][nbytes]
                _b, ompi, ours, cust, r_ompi, r_cust = der.get(
                    nbytes, (nbytes, m.get("mpi_ddt"), None, m.get("custom"), None, None))
                b = best.get((test, nbytes))
                man = (m.get("mpicd_manual", 0) / m["manual"]) if m.get("manual") else None
                ref = (m.get("mpicd_reference", 0) / m["reference"]) if m.get("reference") \
                    else None
                L.append(f"| {test} | {nbytes} | {fmt(ompi, 0)} | {fmt(ours, 0)} | "
                         f"{fmt(cust, 0)} | {fmt(r_ompi)} | {fmt(r_cust)} | "
                         f"{b[1] + ' ' + fmt(b[2], 0) if b else 'n/a'} | "
                         f"{fmt(b[4]) if b else 'n/a'} | {fmt(man)} | {fmt(ref)} |")
        L.append("")
        per_d, (g_ompi, g_cust) = ddt_derived_geomeans(dd) if dd else ({}, (None, None))
        per_b = {t: geomean([r[4] for r in rows]) for t, rows in dr.items()}
        L.append("Geometric means over each kernel's configurations, and over the kernels:\n")
        L.append("| kernel | configurations | mpicd ddt / Open MPI ddt | mpicd ddt / mpicd custom | "
                 "best custom / mpi_ddt |")
        L.append("|---|---|---|---|---|")
        for test in tests:
            n = max(len(dd.get(test, [])), len(dr.get(test, [])))
            g = per_d.get(test, (None, None))
            L.append(f"| {test} | {n} | {fmt(g[0])} | {fmt(g[1])} | {fmt(per_b.get(test))} |")
        g_best = geomean(list(per_b.values())) if per_b else None
        L.append(f"| **geomean over the kernels** | {len(tests)} kernels | **{fmt(g_ompi)}** | "
                 f"**{fmt(g_cust)}** | **{fmt(g_best)}** |")
        L.append("")
        if "ddtbench.png" in made:
            L.append("![DDTBench](plots/ddtbench.png)\n")
        L.append("DDTBench: T. Schneider, R. Gerstenberger, T. Hoefler, *Micro-Applications for "
                 "Communication Data Access Patterns and MPI Datatypes*, EuroMPI'12 (LNCS 7490). "
                 "bench/ddtbench is a re-implementation of its kernels from a specification.\n")

    if crit:
        L.append("## Engine CPU costs (criterion, singleton self messages)\n")
        L.append("| group | benchmark | parameter | time per message | throughput |")
        L.append("|---|---|---|---|---|")
        for g, b, p, mean, thr, unit in crit:
            t = f"{mean / 1000:.2f} us" if mean >= 1000 else f"{mean:.0f} ns"
            th = f"{thr:.1f} {unit}" if thr != "" else ""
            L.append(f"| {g} | {b} | {p} | {t} | {th} |")
        L.append("")
        if "criterion.png" in made:
            L.append("![criterion](plots/criterion.png)\n")
    L += collectives_section(out, args)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    return evaluated


def collectives_section(out, args):
    """The geomean table of collectives.md (bench/coll/run.py, run before this report), if any."""
    path = os.path.join(out, "collectives.md")
    if args.smoke or not os.path.exists(path):
        return []
    lines = open(path).read().splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith("## Geometric mean"))
    except StopIteration:
        return []
    table = []
    for l in lines[start + 1:]:
        if l.startswith("|"):
            table.append(l)
        elif table:
            break
    made = next((l for l in lines if l.startswith("Made by")), "")
    return ["## Collectives (mpicd against Open MPI, 2-4 ranks)\n",
            "Geometric mean over the sizes of Open MPI's time / mpicd's time (above 1: mpicd "
            "faster); every size, the failures and the method in [collectives.md](collectives.md). "
            + made.strip() + "\n", *table, ""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", required=True, help="directory of RESULT files")
    ap.add_argument("--out", required=True)
    ap.add_argument("--criterion", default="target/criterion")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="a smoke run: correctness only, the numbers mean nothing")
    ap.add_argument("--engine", default="?", help="which mpicd was measured")
    ap.add_argument("--load-start", default="?")
    ap.add_argument("--load-end", default="?")
    args = ap.parse_args()
    rows = parse(args.raw)
    if not rows:
        print("report: no RESULT lines", file=sys.stderr)
        return 1
    d = Data(rows)
    os.makedirs(args.out, exist_ok=True)
    crit = read_criterion(args.criterion)
    write_csvs(d, args.out, crit)
    made = []
    if not args.no_plots:
        try:
            made = plots(d, args.out, crit)
        except ImportError:
            print("report: matplotlib missing: no plots", file=sys.stderr)
    evaluated = summary(d, args.out, crit, made, args)
    print(f"report: {len(rows)} results; wrote {args.out}/summary.md, CSVs"
          + (f" and {len(made)} plots" if made else ""))
    if args.smoke:
        print("report: smoke run (one iteration of tiny sizes): every benchmark checked its data; "
              "targets are evaluated by the full run only")
        return 0
    for name, worst, _detail, status in evaluated:
        print(f"  {status:>10}  {name}: {worst}")
    dr = ddt_ratios(d)
    if dr:
        per = {t: geomean([r[4] for r in rows]) for t, rows in dr.items()}
        print(f"  DDTBench geomean(best custom / mpi_ddt) = {geomean(list(per.values())):.2f}; "
              "kernels below 1: " + (", ".join(f"{t} {g:.2f}" for t, g in sorted(per.items())
                                              if g < 1) or "none"))
    dd = ddt_derived(d)
    if dd:
        _per, (g_ompi, g_cust) = ddt_derived_geomeans(dd)
        print(f"  DDTBench geomean(mpicd_ddt / mpi_ddt) = {fmt(g_ompi)}, "
              f"geomean(mpicd_ddt / custom) = {fmt(g_cust)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
