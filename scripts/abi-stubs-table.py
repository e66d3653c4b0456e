#!/usr/bin/env python3
"""Writes the table of the MPI-5 standard ABI's constants that mpicd-capi/tests/abi_constants.rs
checks our include/mpi.h against, from the mpi.h of the MPI Forum's mpi-abi-stubs.

Usage: scripts/abi-stubs-table.py STUBS_MPI_H COMMIT > mpicd-capi/tests/abi_stubs_constants.txt

One constant a line, `NAME KIND VALUE`: KIND is `int` for the integer constants (macros and
enum members) and the C type of the cast for handles and pointer sentinels (`MPI_Comm`,
`void*`, `MPI_Copy_function*`, ...); VALUE is decimal. Aliases (`#define MPI_C_COMPLEX
MPI_C_FLOAT_COMPLEX`) get their target's kind and value. The first line names the source.
"""

import re
import sys

INT = r"-?(?:0[xX][0-9a-fA-F]+|\d+)"
# #define NAME 512   |   #define NAME ((MPI_Comm)0x00000101)   |   #define NAME ((int*)10)
DEFINE_INT = re.compile(rf"^#define\s+(MPIX?_\w+)\s+\(?({INT})\)?\s*(?:/\*.*)?$")
DEFINE_CAST = re.compile(rf"^#define\s+(MPIX?_\w+)\s+\(\(([\w\s]+\**)\)\s*\(?({INT})\)?\)\s*(?:/\*.*)?$")
DEFINE_ALIAS = re.compile(r"^#define\s+(MPIX?_\w+)\s+(MPIX?_\w+)\s*(?:/\*.*)?$")
ENUM_MEMBER = re.compile(rf"^\s*(MPIX?_\w+)\s*=\s*({INT})\s*,?\s*(?:/\*.*)?$")


def parse(text):
    """The constants of `text` in order: a list of (name, kind, value)."""
    out = {}
    in_enum = False
    for line in text.splitlines():
        stripped = line.strip()
        if re.match(r"^(typedef\s+)?enum\b", stripped):
            in_enum = True
        if in_enum:
            m = ENUM_MEMBER.match(line)
            if m:
                out[m.group(1)] = ("int", int(m.group(2), 0))
            if "}" in stripped:
                in_enum = False
            continue
        m = DEFINE_CAST.match(stripped)
        if m:
            kind = re.sub(r"\s+", "", m.group(2))
            out[m.group(1)] = (kind, int(m.group(3), 0))
            continue
        m = DEFINE_INT.match(stripped)
        if m:
            out[m.group(1)] = ("int", int(m.group(2), 0))
            continue
        m = DEFINE_ALIAS.match(stripped)
        if m and m.group(2) in out:
            out[m.group(1)] = out[m.group(2)]
    return [(name, kind, value) for name, (kind, value) in out.items()]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, commit = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        constants = parse(f.read())
    print(f"# mpi-abi-stubs mpi.h at {commit} (github.com/mpi-forum/mpi-abi-stubs);"
          f" {len(constants)} constants; written by scripts/abi-stubs-table.py")
    for name, kind, value in constants:
        print(f"{name} {kind} {value}")


if __name__ == "__main__":
    main()
