# mpicd: build, test and benchmark entry points.
#
#   make demo   installs what is missing, builds, runs the p2p benchmark on 2 local ranks
#   make test   installs what is missing, builds, runs the Rust tests and the multi-rank tests
#
# Open MPI's mpirun is the launcher of the tests and benchmarks. As root it refuses to start
# without OMPI_ALLOW_RUN_AS_ROOT*, and it will not start more ranks than cores (4 ranks on a
# 2-core machine) without --oversubscribe. MPIRUN carries both and is exported to the scripts;
# override it on the command line (make test MPIRUN="srun --mpi=pmix") to use another launcher.
# Nothing else was needed on Debian 12 (Open MPI 4.1.4, UCX 1.13.1) in a container: vader's CMA
# single-copy and UCX's cma transport both work between processes of the same user.

MPIRUN ?= env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe
export MPIRUN

CARGO ?= cargo
MPICC ?= mpicc
CFLAGS_PEERS ?= -O2 -Wall -Wextra

# rustup installs cargo here; a non-login shell (CI) may not have it on PATH.
ifneq ($(wildcard $(HOME)/.cargo/bin),)
export PATH := $(HOME)/.cargo/bin:$(PATH)
endif

DEPS_STAMP := target/.deps-ok
OMPI_PINGPONG := target/bench/ompi_pingpong

.PHONY: all deps build test test-mpi4py test-mpi4py-spawn test-mpi4py-abi test-soak test-slurm test-memcheck install demo doc bench bench-coll bench-coll-cycle bench-coll-noise bench-ddt bench-fairness bench-p2p bench-python bench-rma fuzz fmt clean

# Where `make install` puts libmpi, mpi.h, mpicc and the pkg-config files. Not /usr/local: its
# include/mpi.h would shadow Open MPI's for a plain cc.
PREFIX ?= /opt/mpicd

all: build

# deps: installs the Debian packages and checks for cargo (scripts/install-deps.sh). The stamp
# makes the second run instant; it is redone when the script changes or dpkg's database does
# (a package was removed or added), and cargo is looked for every time.
deps: $(DEPS_STAMP)
	@command -v $(CARGO) >/dev/null || { echo "deps: cargo not found: install Rust >= 1.75 (rustup)" >&2; exit 1; }

$(DEPS_STAMP): scripts/install-deps.sh $(wildcard /var/lib/dpkg/status)
	@bash scripts/install-deps.sh
	@mkdir -p $(@D) && touch $@

# build: the whole workspace in release mode, with the examples (the mpi_* test programs).
build: deps
	$(CARGO) build --release --workspace
	$(CARGO) build --release --workspace --examples

# test: Rust unit and integration tests, then every mpi_* program under mpirun with 2 and 4 ranks,
# over shared memory and over UCX_TLS=tcp (tests/run-mpi-tests.sh), then the C programs of
# tests/c built with our mpicc against libmpi (tests/run-c-tests.sh), the C++ tests of cpp/ (CMake,
# ctest), an install into a temporary prefix used through mpicc, pkg-config and libmpi_abi, the
# profiling interface (tests/run-pmpi-test.sh: a PMPI_ twin for each MPI_ function, a counting
# tool attached by LD_PRELOAD, by link order and statically), and
# the Python package's pytest suite under mpirun (python/run-tests.sh: pip-installs pytest, numpy
# and the package with its C extension; one run through its ctypes fallback),
# the real mpi4py's own suite at 1-3 ranks (tests/run-mpi4py.sh, see test-mpi4py), and a smoke run
# of every benchmark (tiny sizes, data checked, nothing timed); `make doc` checks the docs' links.
test: build
	$(CARGO) test --release --workspace
	$(MAKE) doc
	bash tests/run-mpi-tests.sh
# A peer lost through the network alone (two network namespaces, link cut) fails operations in 10 s.
	bash tests/run-unreachable-test.sh
	bash tests/run-unreachable-test.sh kill
# A rank dies: every survivor's calls on it fail in seconds, over shm and tcp; a killed mpirun
# leaves no rank behind.
	bash tests/run-fault-tests.sh
	bash tests/run-orphan-test.sh
	bash tests/run-c-tests.sh
	bash cpp/run-tests.sh
	bash tests/run-install-test.sh
	bash tests/run-pmpi-test.sh
	bash python/run-tests.sh
	bash tests/run-mpi4py.sh
	bash bench/run-all.sh --smoke

# test-mpi4py: the real mpi4py (4.1.2 from PyPI) built with our mpicc, and its own test suite at
# 1-3 ranks over shm and tcp (tests/run-mpi4py.sh; about 5 minutes to build it the first time
# and after mpi.h changes, then about 3 minutes of runs). Also part of `make test`.
test-mpi4py: build
	bash tests/run-mpi4py.sh

# test-mpi4py-spawn: mpi4py's spawning tests (test_spawn and the spawn cases of test_dynproc)
# at 1-2 ranks over shm (about 6 minutes; a spawned child can stall in Open MPI 4.1.4's
# launcher, see tests/run-mpi4py.sh). Not part of `make test`.
test-mpi4py-spawn: build
	MPI4PY_SPAWN=1 MPI4PY_RUNS="1:shm 2:shm" bash tests/run-mpi4py.sh -i test_spawn -i test_dynproc

# test-soak: load and resources over about 10 minutes (tests/run-soak.sh): 10^6 messages of
# random sizes and modes, 10^4 communicators made and freed, 10^5 requests outstanding and an
# unexpected-message flood of 10^5, every rank's RSS printed and required flat after warm-up;
# 2 ranks over shm, then 3 over tcp at a fifth of the counts. Not part of `make test`.
test-soak: build
	bash tests/run-soak.sh

# test-mpi4py-abi: the same mpi4py built once in the MPI-5 standard-ABI mode against the MPI
# Forum's mpi-abi-stubs (fetched with git at the commit of mpicd-capi/tests/abi_stubs_constants.txt
# into target/mpi4py-abi; MPI_ABI_STUBS_GIT=<clone or mirror> to fetch from elsewhere) and run on
# our libmpi_abi.so.1 through LD_LIBRARY_PATH (strict: no stand-ins for missing functions,
# MPI4PY_ABI_STRICT=0 for them), at 1-3 ranks over shm and tcp (about 5 minutes to
# build, then about 3 of runs). The functions libmpi still lacks are listed in
# target/mpi4py-abi/missing-*.txt. Not part of `make test`.
MPI_ABI_STUBS_GIT ?= https://github.com/mpi-forum/mpi-abi-stubs.git
test-mpi4py-abi: build
	MPI4PY_ABI=1 MPI4PY_ABI_STRICT=$${MPI4PY_ABI_STRICT:-1} MPI_ABI_STUBS_GIT=$(MPI_ABI_STUBS_GIT) bash tests/run-mpi4py.sh

# test-memcheck: the C tests on 1-4 ranks over shm and tcp (~4 min) and the C++ tests on 2 ranks
# (~1 min), every rank under valgrind.
test-memcheck: build
	MPICD_C_TESTS_VALGRIND=1 bash tests/run-c-tests.sh
	MPICD_CPP_TESTS_VALGRIND=1 CPP_TEST_RANKS=2 bash cpp/run-tests.sh

# install: libmpi (+ libmpi_abi.so.1), mpi.h, mpicd/custom.hpp, mpicc/mpicxx, pkg-config files.
install: build
	bash scripts/install.sh $(PREFIX)

# test-slurm: the same test programs under Slurm's srun --mpi=pmix, on a one-node Slurm cluster
# made on this machine (installs slurm-wlm and munge, starts their daemons; not part of `test`).
test-slurm: build
	bash tests/slurm/run.sh

# The Open MPI peer of the ping-pong benchmark, built with Open MPI's own mpicc.
$(OMPI_PINGPONG): bench/peers/ompi_pingpong.c | deps
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS_PEERS) -o $@ $<

# demo: builds, then the p2p comparison: mpicd beside ucx_perftest and Open MPI, best of 3.
demo: build $(OMPI_PINGPONG)
	bash bench/pingpong-compare.sh

# bench: the paper's evaluation on 2 local ranks (bench/run-all.sh, about 10-15 minutes): datatype
# benchmarks against rsmpi on Open MPI, DDTBench against Open MPI's derived datatypes, criterion,
# peak memory, then the collectives against Open MPI at 2-4 ranks (bench-coll's run, about 1.5
# minutes more); CSVs, plots and summary.md in bench/results/.
bench: build $(OMPI_PINGPONG)
	bash bench/run-all.sh

# bench-ddt: DDTBench's derived-datatype methods, Open MPI and mpicd run alternately 3 times
# (bench/ddtbench/interleave.py, about 4 minutes): medians and ratios in
# bench/results/ddtbench-interleaved.md, steadier than one run on a shared machine.
bench-ddt: build
	mkdir -p target/bench
	$(MPICC) -O2 -Wall -Wextra -o target/bench/ddtbench-ompi bench/ddtbench/*.c
	bin/mpicc -O2 -Wall -Wextra -DMPICD_CUSTOM -o target/bench/ddtbench-mpicd bench/ddtbench/*.c
	python3 bench/ddtbench/interleave.py --rounds 3 --out bench/results/ddtbench-interleaved.md

# bench-coll: collectives (Allreduce, Bcast, Allgather, Alltoall, Reduce_scatter_block; 8 B-4 MiB)
# of mpicd against Open MPI at 2, 3 and 4 ranks, 5 interleaved rounds, medians and ratios
# (bench/coll/run.py, about 1.5 minutes on 2 cores; BENCH_COLL_ARGS=--quick: one round of 10
# sizes, about 20 s): bench/results/collectives.{csv,md}, plots/collectives-*.png. Every result
# is checked; a wrong result, a crash or a hang (300 s per run) is reported and fails the target.
# Then bench/coll/gather_shapes.sh (about 10 s): a gather of differently shaped objects (a
# vector; a sparse-matrix block of three arrays) as one custom-typed MPI_Gather against Probe +
# Recv per array and rank (bench/results/gather-shapes.md).
# Not part of `make test`.
bench-coll: build
	python3 bench/coll/run.py $(BENCH_COLL_ARGS)
	bash bench/coll/gather_shapes.sh

# bench-coll-cycle: the collectives benchmark timing each call together with the MPI_Barrier
# before it (bench/coll/run.py --cycle, about 1.5 minutes), in bench/results/cycle/: where ranks
# share cores, which rank leaves a barrier first decides how long the others wait inside the
# call timed alone; the cycle does not move with it. Not part of `make bench`.
bench-coll-cycle: build
	python3 bench/coll/run.py --cycle --out bench/results/cycle $(BENCH_COLL_ARGS)

# bench-coll-noise: the collectives benchmark with each implementation against itself (A/A,
# bench/coll/noise.py, about 2 minutes): how many of its rows fall below 1.0, 0.9 and 0.8 with
# nothing different, in bench/results/collectives-noise.{csv,md}. Not part of `make bench`.
bench-coll-noise: build
	python3 bench/coll/noise.py

# bench-fairness: progress when ranks outnumber cores (bench/fairness/run.py, about 3 minutes):
# a randomized message rate (0 B-1 MiB, wildcard receives, data checked) of mpicd and Open MPI
# at 2 ranks over shm and tcp and 3 and 4 ranks on the cores, 3 interleaved rounds, medians and
# ratios; and the CPU a rank blocked 10 s in MPI_Recv, then in MPI_Barrier, uses:
# bench/results/fairness.{csv,md}.
bench-fairness: build
	python3 bench/fairness/run.py $(BENCH_FAIRNESS_ARGS)

# bench-rma: one-sided latency (put, get, accumulate, fetch-and-op, compare-and-swap, 8 B with a
# flush each) and put/get bandwidth of mpicd against Open MPI (--mca osc ucx) and raw UCX
# (ucx_perftest), best of 3 rounds (bench/rma/run.sh, about 1 minute): bench/results/rma.md.
bench-rma: build
	bash bench/rma/run.sh

# bench-python: Python objects ping-pong, mpicd vs mpi4py on Open MPI (python/bench/run.sh, 3-6 min):
# CSV and plot in python/bench/results/.
bench-python: build
	bash python/bench/run.sh

# bench-p2p: the same comparison alone (table on stdout, rows in bench/results/p2p.csv).
bench-p2p: build $(OMPI_PINGPONG)
	bash bench/pingpong-compare.sh

# fuzz: the wire decoders (a peer's lead, header and region table) under cargo-fuzz, FUZZ_SECONDS
# per target (default 120, so about 5 minutes with the build); installs Rust nightly and
# cargo-fuzz when missing; the seed corpus comes from real leads (scripts/fuzz.sh). Reports the
# executions and any finding (input kept in fuzz/artifacts/); not part of `make test`, whose unit
# tests run the same entry points on every seed, truncated and bit-flipped.
FUZZ_SECONDS ?= 120
fuzz: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# doc: the developer documentation of the runtime and the C ABI, private items included (the
# module docs describe the internals), in target/doc; fails on a link that does not resolve.
doc: deps
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --document-private-items -p mpicd -p mpicd-capi

# fmt: formats the Rust code.
fmt:
	$(CARGO) fmt --all

# clean: removes build outputs, test logs and raw benchmark runs (keeps bench/results/p2p.csv).
clean:
	rm -rf target bench/results/tmp python/bench/results/tmp python/build
