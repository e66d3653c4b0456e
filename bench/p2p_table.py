#!/usr/bin/env python3
"""p2p_table: turns the RESULT lines of bench/pingpong-compare.sh into a table, ratios and a CSV.

Input lines (any other line is ignored):
    RESULT <impl> latency <bytes> <usec>
    RESULT <impl> bandwidth <bytes> <MBps>      (MB = 1e6 bytes)
    RESULT <impl> rate <bytes> <MBps>           (the small-message windows: 64 in flight)

Each implementation ran several times; the best run counts (lowest latency, highest bandwidth),
because the machine is shared and noise only ever makes a run slower. Before taking the best, a run
more than 2x away from the median of its implementation's runs is dropped: such a value is a broken
clock, not a fast run (ucx_perftest measures the TSC frequency for 1 ms at start-up, and a VM's
preemption during that millisecond can scale all its numbers by several times).

Standard library only.
"""
import argparse
import csv
import statistics
import sys

# Rows in this order first; any other implementation follows in the order first seen.
ORDER = ["ucx_perftest", "openmpi", "openmpi-ucx", "mpicd"]
TARGET_LAT = 1.3  # mpicd latency <= 1.3x raw UCX
TARGET_BW = 0.9  # mpicd bandwidth >= 0.9x raw UCX


def parse(lines):
    """{(impl, metric): {"bytes": n, "values": [..]}} and the order implementations appeared in."""
    results, seen = {}, []
    for line in lines:
        fields = line.split()
        if len(fields) != 5 or fields[0] != "RESULT" or fields[2] not in ("latency", "bandwidth", "rate"):
            continue
        impl, metric = fields[1], fields[2]
        try:
            size, value = int(fields[3]), float(fields[4])
        except ValueError:
            continue
        if value <= 0:
            continue
        entry = results.setdefault((impl, metric), {"bytes": size, "values": []})
        entry["values"].append(value)
        if impl not in seen:
            seen.append(impl)
    return results, seen


def best(entry, metric):
    """Best of the runs that agree with their median within 2x, and how many runs that was."""
    if entry is None:
        return None, 0
    values = entry["values"]
    median = statistics.median(values)
    sane = [v for v in values if median / 2 <= v <= median * 2]
    return (min(sane) if metric == "latency" else max(sane)), len(sane)


def fmt(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None else a / b


def size_label(n):
    if n is None:
        return "?"
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", help="file with the RESULT lines of all runs")
    ap.add_argument("--csv", help="write the table rows to this CSV file")
    ap.add_argument("--title", default="p2p ping-pong")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    with open(args.raw, encoding="utf-8", errors="replace") as f:
        results, seen = parse(f)
    if not results:
        print("p2p: no results at all", file=sys.stderr)
        return 1

    impls = [i for i in ORDER if i in seen] + [i for i in seen if i not in ORDER]
    lat_bytes = next((e["bytes"] for (i, m), e in results.items() if m == "latency"), None)
    bw_bytes = next((e["bytes"] for (i, m), e in results.items() if m == "bandwidth"), None)
    rate_bytes = next((e["bytes"] for (i, m), e in results.items() if m == "rate"), None)

    rows = []
    for impl in impls:
        lat, lat_n = best(results.get((impl, "latency")), "latency")
        bw, bw_n = best(results.get((impl, "bandwidth")), "bandwidth")
        rate, rate_n = best(results.get((impl, "rate")), "rate")
        rows.append({"impl": impl, "lat": lat, "bw": bw, "rate": rate, "runs": max(lat_n, bw_n, rate_n)})

    lat_head = f"latency {size_label(lat_bytes)} (us)"
    bw_head = f"bandwidth {size_label(bw_bytes)} (MB/s)"
    rate_head = f"windowed {size_label(rate_bytes)} (MB/s)"
    print(f"{args.title} (best of {args.runs})")
    print(f"{'impl':<14} {lat_head:<18} {bw_head:<24} {rate_head}")
    for r in rows:
        print(f"{r['impl']:<14} {fmt(r['lat'], 3):<18} {fmt(r['bw'], 0):<24} {fmt(r['rate'], 1)}")

    by = {r["impl"]: r for r in rows}
    mpicd, ucx = by.get("mpicd"), by.get("ucx_perftest")
    if mpicd is None:
        print("ratios: no mpicd result")
    else:
        parts = []
        if ucx is not None:
            rl, rb = ratio(mpicd["lat"], ucx["lat"]), ratio(mpicd["bw"], ucx["bw"])
            parts.append(
                f"mpicd/ucx latency {fmt(rl, 2)}x (target <= {TARGET_LAT}x{mark(rl, lambda x: x <= TARGET_LAT)}), "
                f"mpicd/ucx bandwidth {fmt(rb, 2)}x (target >= {TARGET_BW}x{mark(rb, lambda x: x >= TARGET_BW)})"
            )
        for peer in ("openmpi", "openmpi-ucx"):
            if peer in by:
                rl, rb = ratio(mpicd["lat"], by[peer]["lat"]), ratio(mpicd["bw"], by[peer]["bw"])
                rr = ratio(mpicd["rate"], by[peer]["rate"])
                parts.append(f"vs {peer}: latency {fmt(rl, 2)}x, bandwidth {fmt(rb, 2)}x, "
                             f"windowed {fmt(rr, 2)}x")
        if ucx is not None:
            parts.append(f"mpicd/ucx windowed {fmt(ratio(mpicd['rate'], ucx['rate']), 2)}x")
        print("ratios: " + ", ".join(parts))

    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["impl", "latency_bytes", "latency_us", "bandwidth_bytes", "bandwidth_MBps",
                        "rate_bytes", "rate_MBps", "runs"])
            for r in rows:
                w.writerow([r["impl"], lat_bytes, fmt(r["lat"], 3), bw_bytes, fmt(r["bw"], 1),
                            rate_bytes, fmt(r["rate"], 2), r["runs"]])
    return 0


def mark(value, ok):
    """': met' or ': MISSED' after a target, nothing when the ratio is unknown."""
    if value is None:
        return ""
    return ": met" if ok(value) else ": MISSED"


if __name__ == "__main__":
    sys.exit(main())
