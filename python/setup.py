"""Build hook: records where this source checkout is, so that an installed copy of the package
can find the checkout's build tree (target/release/libmpi.so) without MPICD_LIBMPI.

Nothing is compiled. The recorded path is only a hint: the loader checks that the file exists
and is mpicd's libmpi, and falls back to the installed locations otherwise.
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)


class build_py_with_tree(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "mpicd", "_build_tree.py")
        with open(target, "w", encoding="utf-8") as f:
            f.write('"""Generated at install: the mpicd checkout this package was built from."""\n')
            f.write(f"SOURCE_TREE = {CHECKOUT!r}\n")


setup(cmdclass={"build_py": build_py_with_tree})
