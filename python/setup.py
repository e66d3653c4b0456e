"""Build hook: records where this source checkout is, so that an installed copy of the package
can find the checkout's build tree (target/release/libmpi.so) without MPICD_LIBMPI, and builds
the optional C extension ``mpicd._mpicd_fast`` (the blocking object calls with the custom
datatype's callbacks in C, see ``src/mpicd/_fast.py``).

The extension needs a C compiler, the Python headers and the checkout's ``include/mpi.h`` (for
the types only: it does not link against libmpi, it calls the functions of the library the
package loads). When any is missing, or the build fails, the package installs without it and
uses ctypes for everything (scripts/common.sh's install_python_package checks that it was built).
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
INCLUDE = os.path.join(CHECKOUT, "include")


class build_py_with_tree(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "mpicd", "_build_tree.py")
        with open(target, "w", encoding="utf-8") as f:
            f.write('"""Generated at install: the mpicd checkout this package was built from."""\n')
            f.write(f"SOURCE_TREE = {CHECKOUT!r}\n")


class optional_build_ext(build_ext):
    """Builds the extension if it can; else says why and leaves the ctypes path."""

    def run(self):
        try:
            super().run()
        except Exception as e:  # noqa: BLE001 - setuptools raises several kinds
            self._skip(e)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001
            self._skip(e)

    def _skip(self, e):
        sys.stderr.write(f"mpicd: the C extension was not built ({e}); the package uses "
                         "ctypes only\n")


ext_modules = []
if os.path.exists(os.path.join(INCLUDE, "mpi.h")):
    ext_modules.append(Extension(
        "mpicd._mpicd_fast",
        sources=["src/mpicd/_mpicd_fast.c", "src/mpicd/_mpicd_fast_callbacks.c"],
        depends=["src/mpicd/_mpicd_fast.h"],
        include_dirs=[INCLUDE],
        extra_compile_args=["-O2", "-Wall", "-Wextra"],
    ))
else:
    sys.stderr.write(f"mpicd: {INCLUDE}/mpi.h not found: the C extension is not built\n")

setup(cmdclass={"build_py": build_py_with_tree, "build_ext": optional_build_ext},
      ext_modules=ext_modules)
