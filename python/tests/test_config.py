"""mpicd's configuration table (``MPIX_Config_string``, the text ``mpicd-info`` prints) declares
every ``MPICD_*`` variable the package reads, with the defaults the package uses (checked in a
fresh interpreter without those variables: the package reads them once, at import)."""

import os
import re
import subprocess
import sys

import mpicd
from mpicd import _libmpi as L

# The package's number knobs: the module and the value it reads at import.
NUMERIC = {
    "MPICD_OOB_THRESHOLD": ("mpicd._objparts", "THRESHOLD"),
    "MPICD_RECV_POOL_BYTES": ("mpicd._recvpool", "LIMIT"),
    "MPICD_RECV_POOL_MIN": ("mpicd._recvpool", "MIN_POOLED"),
}


def table():
    """name -> (layer, default) of every MPICD_* row."""
    rows = re.findall(r"^# (MPICD_\w+) \[(\w+)\] default (\S+);", L.config_string(doc=True), re.M)
    return {name: (layer, default) for name, layer, default in rows}


def fresh(code, env_changes):
    """Runs ``code`` in a fresh interpreter, without the launcher's and the package's variables."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("OMPI_", "PMIX_")) and k not in NUMERIC
    }
    env.update(env_changes)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_python_defaults_match_the_table(comm):
    if comm.rank != 0:
        return
    rows = table()
    code = "import importlib\n" + "".join(
        f"print({name!r}, getattr(importlib.import_module({mod!r}), {attr!r}))\n"
        for name, (mod, attr) in NUMERIC.items()
    )
    used = dict(line.split() for line in fresh(code, {}).splitlines())
    for name in NUMERIC:
        assert rows[name] == ("python", used[name]), name


def test_every_variable_the_package_reads_is_a_row(comm):
    if comm.rank != 0:
        return
    rows = table()
    package = os.path.dirname(mpicd.__file__)
    read = set()
    for f in os.listdir(package):
        if f.endswith(".py"):
            with open(os.path.join(package, f)) as source:
                read |= set(re.findall(r"MPICD_[A-Z0-9_]+", source.read()))
    assert set(NUMERIC) <= read
    assert read <= set(rows), sorted(read - set(rows))
    python_rows = {name for name, (layer, _) in rows.items() if layer == "python"}
    assert python_rows <= read, sorted(python_rows - read)


def test_values_in_effect_and_typos(comm):
    if comm.rank != 0:
        return
    code = "import mpicd._libmpi as L; print(L.config_string(), end='')"
    out = fresh(code, {"MPICD_OOB_THRESHOLD": "1234", "MPICD_OOB_TRESHOLD": "1"}).splitlines()
    assert "MPICD_OOB_THRESHOLD=1234" in out
    assert "MPICD_RECV_POOL_MIN=65536" in out
    assert out[-1] == ("# MPICD_OOB_TRESHOLD is not an mpicd variable "
                       "(did you mean MPICD_OOB_THRESHOLD?)")
