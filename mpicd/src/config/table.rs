//! The rows of the configuration table: every `MPICD_*` environment variable any part of mpicd
//! reads (the runtime, Python, the compiler wrappers, the test and benchmark scripts) and every
//! UCX setting mpicd applies. Data only: parsing, printing and the typed [`super::Config`] live
//! in the parent module. A doc is one line of plain ASCII without `|` (it is also a cell of the
//! README's tables, which a test keeps equal to these rows).

use super::{Apply, Kind, Knob, Layer, UcxSetting, MAX_INLINE_BYTES};

/// No upper bound.
const ANY: usize = usize::MAX;

pub const INLINE_BYTES: Knob = Knob {
    name: "MPICD_INLINE_BYTES",
    default: "4000",
    layer: Layer::Plan,
    kind: Kind::Bytes {
        min: 0,
        max: MAX_INLINE_BYTES,
    },
    doc: "The longest packed stream a custom-typed message carries whole in its lead message \
          (at most 8128, so that the lead stays within 8 KiB): such a message is one eager UCX \
          message. A longer stream goes in a body message.",
};

pub const INLINE_SPLIT: Knob = Knob {
    name: "MPICD_INLINE_SPLIT",
    default: "0",
    layer: Layer::Plan,
    kind: Kind::Bytes {
        min: 0,
        max: MAX_INLINE_BYTES,
    },
    doc: "Stream bytes the lead carries when a body message follows (at most \
          MPICD_INLINE_BYTES; more when that keeps the body under UCX's 64 KiB eager limit). \
          0: bytes in the lead would only be copied into it and out of it once more.",
};

pub const ZCOPY_THRESHOLD: Knob = Knob {
    name: "MPICD_ZCOPY_THRESHOLD",
    default: "262144",
    layer: Layer::Plan,
    kind: Kind::Bytes { min: 1, max: ANY },
    doc: "Smallest region sent zero-copy as its own UCX message to a receiver on another node \
          (or on any node with MPICD_NODE_LOCAL=0); smaller regions are copied into the stream.",
};

pub const ZCOPY_DEPTH: Knob = Knob {
    name: "MPICD_ZCOPY_DEPTH",
    default: "16",
    layer: Layer::Ops,
    kind: Kind::Count { min: 1, max: ANY },
    doc: "Zero-copy region messages in flight per operation, on each side: more are posted, in \
          order, as these complete. Each counts 4096 bytes in the memory bound.",
};

pub const NODE_LOCAL: Knob = Knob {
    name: "MPICD_NODE_LOCAL",
    default: "1",
    layer: Layer::Engine,
    kind: Kind::Switch,
    doc: "1: every region for a receiver on this node is copied into the stream. 0 treats \
          every peer as remote: regions from MPICD_ZCOPY_THRESHOLD up travel as their own \
          messages on this node too (the tests' tcp and remote modes).",
};

pub const LOCAL_STREAM: Knob = Knob {
    name: "MPICD_LOCAL_STREAM",
    default: "2097152",
    layer: Layer::Engine,
    kind: Kind::Bytes { min: 0, max: ANY },
    doc: "Contiguous point-to-point messages of this many bytes and more to a process on this \
          node travel through UCX's shared-memory segments, the sender copying the next while \
          the receiver copies the last out; shorter ones, all of them where the node has more \
          processes than cores (MPICD_WAIT not resolved to spin: such a message moves only while \
          both processes run), and a collective's (its members send and receive at once) go by \
          UCX's cma rendezvous (the receiver copies once, alone). From 2 \
          MiB the two copies in a pipeline beat cma's one (osu_bw 2-8 MiB: 10.9-11.5 GB/s \
          against 8.9-9.0); below, cma's wins (64-512 KiB: osu_latency 4.7-26 us against \
          12-46). 0: always cma. When the host puts the two cores far apart, a cache line \
          takes ~170 ns instead of ~40 and the segments' copies slow down: the sender then \
          switches to non-temporal stores (5-11 GB/s; cma 6-10).",
};

pub const COLL_NODE: Knob = Knob {
    name: "MPICD_COLL_NODE",
    default: "131072",
    layer: Layer::Engine,
    kind: Kind::Bytes {
        min: 0,
        max: 1 << 20,
    },
    doc: "Blocking collectives whose members all run on this node go through a shared-memory \
          area of the communicator when a member puts at most this many bytes in it (its \
          operand, its block, or all its blocks for an all-to-all): every member writes its \
          part once and reads the others' where they lie, with no message. The members agree \
          on the smallest value at a communicator's first blocking collective, at most 4 MiB / \
          (8 x members), and a process maps at most 256 MiB of areas in all (communicators \
          agreeing past it use messages). Their waits spin, or yield the core where processes \
          outnumber cores (MPICD_WAIT). 0: always messages.",
};

pub const PEER_ERRORS: Knob = Knob {
    name: "MPICD_PEER_ERRORS",
    default: "1",
    layer: Layer::Transport,
    kind: Kind::Switch,
    doc: "0 turns off dead-peer detection through UCX (error-handling endpoints to peers on \
          other nodes, and UCX_KEEPALIVE_INTERVAL); processes on this node are still watched \
          by pid.",
};

/// Every `MPICD_*` variable, in the order `mpicd-info` and the README list them.
pub const WAIT: Knob = Knob {
    name: "MPICD_WAIT",
    default: "auto",
    layer: Layer::Engine,
    kind: Kind::Text,
    doc: "What a process does when progress finds nothing to do: spin (poll again at once), \
          yield (give the core to another process once 16 progress calls in a row found \
          nothing, as Open MPI's mpi_yield_when_idle does at every one), \
          sleep (yield, and a blocking wait that saw no event for 100 us sleeps on the UCX \
          worker's event descriptor, 2 ms at most at a time), or auto: sleep when this node \
          runs more of the job's processes than it has cores, else spin.",
};

pub const COLL_ALGORITHMS: Knob = Knob {
    name: "MPICD_COLL_ALGORITHMS",
    default: "",
    layer: Layer::Engine,
    kind: Kind::Text,
    doc: "Collective algorithms forced for experiments, as collective=algorithm pairs separated \
          by commas, e.g. bcast=binomial,allreduce=ring (barrier: dissemination linear fan; bcast: \
          linear binomial scatter_allgather; reduce: binomial linear; allreduce: \
          recursive_doubling ring rabenseifner linear; allgather: linear ring; alltoall: linear \
          pairwise; gather and scatter: linear binomial; reduce_scatter: ring reduce_scatterv \
          linear; scan: chain recursive_doubling). Unnamed \
          ones are chosen by message and communicator size.",
};

pub const CONNECT_TIMEOUT: Knob = Knob {
    name: "MPICD_CONNECT_TIMEOUT",
    default: "30",
    layer: Layer::Engine,
    kind: Kind::Count { min: 1, max: 86400 },
    doc: "Seconds MPI_Comm_connect waits for an accept on its port (then MPI_ERR_PORT), and \
          either side of a handshake for the other once it began; a spawn waits four times as \
          long for its children to connect (then MPI_ERR_SPAWN).",
};

pub const FAULT_AGREE_EXIT: Knob = Knob {
    name: "MPICD_FAULT_AGREE_EXIT",
    default: "0",
    layer: Layer::Engine,
    kind: Kind::Count { min: 0, max: ANY },
    doc: "Fault injection for tests: a process that decides a ULFM agreement (its coordinator) \
          exits at once, like a crash, before it sends its decision to the N-th member (1: \
          before telling any; 0: never). tests/faults/agree_crash.c uses it.",
};

pub const PARENT_PORT: Knob = Knob {
    name: "MPICD_PARENT_PORT",
    default: "",
    layer: Layer::Engine,
    kind: Kind::Text,
    doc: "Set by MPI_Comm_spawn in the environment of the processes it starts: the port their \
          MPI_Init connects to (MPI_Comm_get_parent). Not for users to set.",
};

pub static KNOBS: &[Knob] = &[
    INLINE_BYTES,
    INLINE_SPLIT,
    ZCOPY_THRESHOLD,
    ZCOPY_DEPTH,
    NODE_LOCAL,
    LOCAL_STREAM,
    COLL_NODE,
    PEER_ERRORS,
    WAIT,
    COLL_ALGORITHMS,
    CONNECT_TIMEOUT,
    FAULT_AGREE_EXIT,
    PARENT_PORT,
    Knob {
        name: "MPICD_OOB_THRESHOLD",
        default: "65536",
        layer: Layer::Python,
        kind: Kind::Bytes { min: 0, max: ANY },
        doc: "Pickled buffers (PickleBuffer, NumPy arrays) of at least this many bytes travel \
              out of band, as regions of the message; smaller ones go in the pickle stream.",
    },
    Knob {
        name: "MPICD_RECV_POOL_BYTES",
        default: "1073741824",
        layer: Layer::Python,
        kind: Kind::Bytes { min: 0, max: ANY },
        doc: "Most bytes one thread's pool of receive buffers keeps (0 turns the pool off).",
    },
    Knob {
        name: "MPICD_RECV_POOL_MIN",
        default: "65536",
        layer: Layer::Python,
        kind: Kind::Bytes { min: 0, max: ANY },
        doc: "Smallest receive buffer taken from the pool; smaller ones are allocated each time.",
    },
    Knob {
        name: "MPICD_PY_FAST",
        default: "1",
        layer: Layer::Python,
        kind: Kind::Switch,
        doc: "1: the blocking object calls (send, recv, sendrecv, Message.recv) go through the \
              package's C extension when it is built (the custom datatype's callbacks in C); \
              0: through ctypes and Python callbacks, as when it is not built.",
    },
    Knob {
        name: "MPICD_LIBMPI",
        default: "",
        layer: Layer::Python,
        kind: Kind::Text,
        doc: "Path of the libmpi.so that the Python package loads (an error if set but \
              unusable); unset: the build tree, then the installed location.",
    },
    Knob {
        name: "MPICD_HOME",
        default: "",
        layer: Layer::Tools,
        kind: Kind::Text,
        doc: "The mpicd checkout or install prefix where bin/mpicc, bin/mpicxx and the Python \
              package look for headers and libmpi (default for the wrappers: their parent \
              directory).",
    },
    Knob {
        name: "MPICD_LIBDIR",
        default: "",
        layer: Layer::Tools,
        kind: Kind::Text,
        doc: "bin/mpicc: the directory of libmpi.so (default: MPICD_HOME/lib if it holds \
              libmpi.so, else MPICD_HOME/target/release).",
    },
    Knob {
        name: "MPICD_CC",
        default: "",
        layer: Layer::Tools,
        kind: Kind::Text,
        doc: "bin/mpicc: the C compiler (default: CC unless it names an MPI wrapper, then cc).",
    },
    Knob {
        name: "MPICD_CXX",
        default: "",
        layer: Layer::Tools,
        kind: Kind::Text,
        doc: "bin/mpicxx: the C++ compiler (default: CXX unless it names an MPI wrapper, then \
              c++).",
    },
    Knob {
        name: "MPICD_LANG",
        default: "c",
        layer: Layer::Tools,
        kind: Kind::Text,
        doc: "bin/mpicc: the language compiled, c or c++ (bin/mpicxx sets c++).",
    },
    Knob {
        name: "MPICD_PC_ALIASES",
        default: "1",
        layer: Layer::Tools,
        kind: Kind::Text,
        doc: "scripts/install.sh: 0 skips the pkg-config aliases mpi.pc, mpi-c.pc and \
              mpi-cxx.pc.",
    },
    Knob {
        name: "MPICD_C_TESTS_VALGRIND",
        default: "0",
        layer: Layer::Tests,
        kind: Kind::Text,
        doc: "tests/run-c-tests.sh: 1 runs every rank under valgrind's memcheck (memory \
              errors fail the run), leaks fails it on definite leaks too.",
    },
    Knob {
        name: "MPICD_C_TESTS_ASAN",
        default: "0",
        layer: Layer::Tests,
        kind: Kind::Text,
        doc: "tests/run-c-tests.sh: 1 builds the C tests with AddressSanitizer and UBSan.",
    },
    Knob {
        name: "MPICD_CPP_TESTS_VALGRIND",
        default: "0",
        layer: Layer::Tests,
        kind: Kind::Text,
        doc: "cpp/run-tests.sh: 1 runs every rank of the C++ tests under valgrind's memcheck.",
    },
    Knob {
        name: "MPICD_TEST_NO_ABORT",
        default: "0",
        layer: Layer::Tests,
        kind: Kind::Text,
        doc: "Python tests: 1 lets the job go on after a failed test instead of aborting it.",
    },
    Knob {
        name: "MPICD_UPDATE_HEADER",
        default: "",
        layer: Layer::Tests,
        kind: Kind::Text,
        doc: "mpicd-capi's header test: when set, it rewrites include/mpi.h instead of \
              checking that it is fresh.",
    },
    Knob {
        name: "MPICD_BIG_TEST",
        default: "0",
        layer: Layer::Tests,
        kind: Kind::Text,
        doc: "The mpi_custom_memory example: 1 also sends a region over 4 GiB (it needs about \
              10 GiB of memory).",
    },
    Knob {
        name: "MPICD_BIG_TEST_BYTES",
        default: "4294971393",
        layer: Layer::Tests,
        kind: Kind::Bytes { min: 0, max: ANY },
        doc: "The mpi_custom_memory example: bytes of that region.",
    },
    Knob {
        name: "MPICD_PINGPONG",
        default: "target/release/pingpong",
        layer: Layer::Bench,
        kind: Kind::Text,
        doc: "bench/pingpong-compare.sh: mpicd's pingpong program.",
    },
    Knob {
        name: "MPICD_PINGPONG_ARGS",
        default: "",
        layer: Layer::Bench,
        kind: Kind::Text,
        doc: "bench/pingpong-compare.sh: more arguments for that program.",
    },
];

/// The UCX settings mpicd applies unless the environment sets them, with the reason of each.
pub static UCX_SETTINGS: &[UcxSetting] = &[
    UcxSetting {
        name: "UCX_KEEPALIVE_INTERVAL",
        value: "1s",
        apply: Apply::ContextWithPeerErrors,
        reason: "Dead peers on other nodes are noticed within seconds instead of UCX's \
                 default 20 s.",
    },
    UcxSetting {
        name: "UCX_TCP_TX_SEG_SIZE",
        value: "64K",
        apply: Apply::Environment,
        reason: "tcp sends a custom-typed body (a generic datatype, packed into UCX's send \
                 buffers) in segments of this size; UCX's 8 KiB segments cap its bandwidth \
                 well below a contiguous message's (bench/wire-options.sh).",
    },
    UcxSetting {
        name: "UCX_RNDV_THRESH",
        value: "65536",
        apply: Apply::Environment,
        reason: "Messages up to 64 KiB go eagerly (UCX's default switches to rendezvous, one \
                 more round trip before any data moves, at 8 KiB); a receiver holds at most \
                 64 KiB of an unexpected message's data.",
    },
    UcxSetting {
        name: "UCX_POSIX_SEG_SIZE",
        value: "16448",
        apply: Apply::Environment,
        reason: "Shared memory moves a message in FIFO segments of this size (8 KiB by \
                 default): a custom-typed body, packed straight into them, needs half as \
                 many. Segments over 64 KiB are not an option (a custom body then hangs in \
                 UCX 1.13).",
    },
    UcxSetting {
        name: "UCX_SYSV_SEG_SIZE",
        value: "16448",
        apply: Apply::Environment,
        reason: "The same as UCX_POSIX_SEG_SIZE, for System V shared memory.",
    },
];
