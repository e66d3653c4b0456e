#!/usr/bin/env python3
"""Lists the functions of the MPI-5 standard ABI that our library does not export yet, as the
Markdown table of README.md ("Standard ABI names still missing").

Usage: scripts/abi-missing.py STUBS_MPI_H LIBMPI_SO

STUBS_MPI_H is the mpi.h of the MPI Forum's mpi-abi-stubs (`make test-mpi4py-abi` fetches it
into target/mpi4py-abi/mpi-abi-stubs/include/); LIBMPI_SO is our libmpi.so or libmpi_abi.so.1.
Every `MPI_` function the header declares and `nm -D` does not list is missing; a `_c`
(large-count) twin is shown beside its function as `name{,_c}`. The table groups them by family.
"""

import re
import subprocess
import sys

PROTOTYPE = re.compile(r"^[A-Za-z][\w\s\*]*?\b(MPI_\w+)\s*\(")

# (family, predicate on the name), first match wins.
FAMILIES = [
    ("Tool information interface (MPI_T)", lambda n: n.startswith("MPI_T_")),
    ("Parallel I/O", lambda n: n.startswith("MPI_File_") or n.startswith("MPI_Register_datarep")),
    ("One-sided communication", lambda n: n.startswith("MPI_Win_") or re.match(
        r"MPI_(Put|Get|Accumulate|Get_accumulate|Rput|Rget|Raccumulate|Rget_accumulate"
        r"|Compare_and_swap|Fetch_and_op)(_c)?$", n)),
    ("Dynamic processes", lambda n: re.match(
        r"MPI_(Comm_(spawn\w*|accept|connect|disconnect|get_parent|join)|Open_port|Close_port"
        r"|(Publish|Unpublish|Lookup)_name)$", n)),
    ("Fortran information of the ABI", lambda n: n.startswith("MPI_Abi_")),
    ("Other", lambda n: True),
]


def declared(path):
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("typedef"):
                continue
            m = PROTOTYPE.match(line)
            if m:
                names.add(m.group(1))
    return names


def exported(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def folded(names):
    """`MPI_X` and `MPI_X_c` as `MPI_X{,_c}`."""
    out = []
    for n in sorted(names):
        if n.endswith("_c") and n[:-2] in names:
            continue
        out.append(f"{n}{{,_c}}" if n + "_c" in names else n)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    stubs = declared(sys.argv[1])
    missing = stubs - exported(sys.argv[2])
    print(f"{len(missing)} of the {len(stubs)} functions of the stubs' `mpi.h`"
          f" (plus their `PMPI_` names):\n")
    print("| family | missing | names |")
    print("|---|---|---|")
    left = set(missing)
    for family, pred in FAMILIES:
        mine = {n for n in left if pred(n)}
        left -= mine
        if mine:
            names = ", ".join(f"`{n}`" for n in folded(mine))
            print(f"| {family} | {len(mine)} | {names} |")


if __name__ == "__main__":
    main()
