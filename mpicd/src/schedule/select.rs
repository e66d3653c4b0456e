//! Which algorithm each collective uses: one table of rules by message size (bytes one member
//! contributes or receives) and communicator size, as Open MPI's tuned component and MPICH's
//! selection do, each overridable by name through `MPICD_COLL_ALGORITHMS`
//! (`bcast=binomial,allreduce=ring`) for experiments, or at run time through that MPI_T control
//! variable ([`install_text`]). The thresholds come from
//! `make bench-coll` on a 2-core node (see bench/README.md).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

/// The collectives with a choice of algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collective {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Allgather,
    Alltoall,
    /// Gather and scatter of equal blocks (the v forms are always linear).
    Gather,
    ReduceScatter,
    /// Scan and exscan.
    Scan,
}

/// The algorithms, by the name `MPICD_COLL_ALGORITHMS` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Binomial tree (bcast, gather, scatter).
    Binomial,
    /// Binomial scatter then ring allgather (long bcast).
    ScatterAllgather,
    /// Recursive doubling (allreduce).
    RecursiveDoubling,
    /// Ring (allreduce as reduce-scatter + allgather, allgather, reduce-scatter).
    Ring,
    /// Reduce-scatter by recursive halving, then allgather by recursive doubling (allreduce).
    Rabenseifner,
    /// Every message in one round (barrier, bcast, reduce, allreduce, reduce-scatter,
    /// allgather, alltoall, gather, scatter); the reductions then combine locally in rank order
    /// ([`super::few`]).
    Linear,
    /// ⌈log2 p⌉ rounds, each member signalling rank + 2^k (barrier).
    Dissemination,
    /// Every member to member 0, then member 0 to every member (barrier).
    Fan,
    /// p - 1 rounds of pairwise exchange (alltoall).
    Pairwise,
    /// Reduce to member 0 in rank order, then scatter (reduce-scatter of a non-commutative op).
    ReduceScatterv,
    /// The members in rank order, each passing on the reduction of the members up to itself
    /// (scan).
    Chain,
}

/// Which collectives may run which algorithm, by name.
const NAMES: &[(Collective, &str, Algorithm)] = &[
    (
        Collective::Barrier,
        "dissemination",
        Algorithm::Dissemination,
    ),
    (Collective::Barrier, "linear", Algorithm::Linear),
    (Collective::Barrier, "fan", Algorithm::Fan),
    (Collective::Reduce, "binomial", Algorithm::Binomial),
    (Collective::Reduce, "linear", Algorithm::Linear),
    (Collective::Allreduce, "linear", Algorithm::Linear),
    (Collective::ReduceScatter, "linear", Algorithm::Linear),
    (Collective::Bcast, "binomial", Algorithm::Binomial),
    (Collective::Bcast, "linear", Algorithm::Linear),
    (
        Collective::Bcast,
        "scatter_allgather",
        Algorithm::ScatterAllgather,
    ),
    (
        Collective::Allreduce,
        "recursive_doubling",
        Algorithm::RecursiveDoubling,
    ),
    (Collective::Allreduce, "ring", Algorithm::Ring),
    (
        Collective::Allreduce,
        "rabenseifner",
        Algorithm::Rabenseifner,
    ),
    (Collective::Allgather, "linear", Algorithm::Linear),
    (Collective::Allgather, "ring", Algorithm::Ring),
    (Collective::Alltoall, "linear", Algorithm::Linear),
    (Collective::Alltoall, "pairwise", Algorithm::Pairwise),
    (Collective::Gather, "linear", Algorithm::Linear),
    (Collective::Gather, "binomial", Algorithm::Binomial),
    (Collective::ReduceScatter, "ring", Algorithm::Ring),
    (
        Collective::ReduceScatter,
        "reduce_scatterv",
        Algorithm::ReduceScatterv,
    ),
    (
        Collective::Scan,
        "recursive_doubling",
        Algorithm::RecursiveDoubling,
    ),
    (Collective::Scan, "chain", Algorithm::Chain),
];

const COLLECTIVE_NAMES: &[(&str, Collective)] = &[
    ("barrier", Collective::Barrier),
    ("reduce", Collective::Reduce),
    ("bcast", Collective::Bcast),
    ("allreduce", Collective::Allreduce),
    ("allgather", Collective::Allgather),
    ("alltoall", Collective::Alltoall),
    ("gather", Collective::Gather),
    ("scatter", Collective::Gather),
    ("reduce_scatter", Collective::ReduceScatter),
    ("scan", Collective::Scan),
];

/// The algorithms forced by `MPICD_COLL_ALGORITHMS`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forced(Vec<(Collective, Algorithm)>);

impl Forced {
    /// Parses `collective=algorithm` pairs separated by commas (empty: none forced).
    pub fn parse(text: &str) -> Result<Forced> {
        let mut forced = Vec::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || {
                Error::InvalidArgument(format!(
                    "MPICD_COLL_ALGORITHMS: `{pair}` is not collective=algorithm with a known pair"
                ))
            };
            let (coll, alg) = pair.split_once('=').ok_or_else(bad)?;
            let coll = COLLECTIVE_NAMES
                .iter()
                .find(|(n, _)| *n == coll.trim())
                .map(|(_, c)| *c)
                .ok_or_else(bad)?;
            let alg = NAMES
                .iter()
                .find(|(c, n, _)| *c == coll && *n == alg.trim())
                .map(|(_, _, a)| *a)
                .ok_or_else(bad)?;
            forced.push((coll, alg));
        }
        Ok(Forced(forced))
    }

    fn get(&self, coll: Collective) -> Option<Algorithm> {
        self.0
            .iter()
            .rev()
            .find(|(c, _)| *c == coll)
            .map(|(_, a)| *a)
    }
}

static FORCED: RwLock<Forced> = RwLock::new(Forced(Vec::new()));

/// Set while some algorithm is forced: a collective reads [`FORCED`] only then.
static ANY_FORCED: AtomicBool = AtomicBool::new(false);

/// Installs the process's forced algorithms (when the runtime starts, from the environment).
pub(crate) fn install(forced: Forced) {
    let mut slot = FORCED.write().unwrap_or_else(|e| e.into_inner());
    ANY_FORCED.store(!forced.0.is_empty(), Ordering::Release);
    *slot = forced;
}

/// Parses and installs forced algorithms: what a tool's write of the `MPICD_COLL_ALGORITHMS`
/// control variable does (every process must write the same value between the same
/// collectives, as `MPI_T_SCOPE_ALL_EQ` says).
pub(crate) fn install_text(text: &str) -> Result<()> {
    install(Forced::parse(text)?);
    Ok(())
}

/// True if an algorithm is forced for `coll` (a collective that could go through the node's
/// shared memory then runs the forced algorithm instead).
pub(crate) fn forced(coll: Collective) -> bool {
    ANY_FORCED.load(Ordering::Acquire)
        && FORCED
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(coll)
            .is_some()
}

/// What a rule looks at.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Bytes of the whole message one member contributes (bcast, allreduce: the buffer;
    /// allgather, alltoall, gather: one block).
    pub bytes: usize,
    pub members: i32,
    /// The reduction may combine in any order.
    pub commutative: bool,
}

/// The algorithm for `coll` on `shape`: the forced one if it applies, else the table's.
pub fn choose(coll: Collective, shape: Shape) -> Algorithm {
    let forced = match ANY_FORCED.load(Ordering::Acquire) {
        true => FORCED.read().unwrap_or_else(|e| e.into_inner()).get(coll),
        false => None,
    };
    let ring_needs_commutative = matches!(coll, Collective::Allreduce | Collective::ReduceScatter);
    match forced {
        Some(Algorithm::Ring | Algorithm::Rabenseifner)
            if ring_needs_commutative && !shape.commutative => {}
        Some(a) => return a,
        None => {}
    }
    rule(coll, shape)
}

/// The table.
fn rule(coll: Collective, s: Shape) -> Algorithm {
    const KIB: usize = 1024;
    // Few members, short messages: one round, however many messages (see `super::few`; at 2
    // members every algorithm is one exchange).
    let few = s.members <= 4;
    match coll {
        // 3-4 members: through member 0, which leaves first, so that a collective from member
        // 0 that follows (a broadcast) has its data on the way when the others leave (run.py's
        // bcast after a barrier, 3-4 ranks, small: 0.66 -> 6.0 and 0.62 -> 4.8 times Open
        // MPI); the barrier itself costs about what dissemination does there. 2 members: one
        // exchange (the fan would take two latencies).
        Collective::Barrier if few && s.members > 2 => Algorithm::Fan,
        Collective::Barrier => Algorithm::Dissemination,
        // Not linear even for few members: reductions called back to back let the members
        // other than the root run ahead, and p - 1 of them at once flood it (4 ranks on 2 cores,
        // 8 B, MPI_Reduce in a loop: 50-90 us a call against 9-30 binomial).
        Collective::Reduce => Algorithm::Binomial,
        // On this 2-core node, binomial beats scatter-allgather at 3 and 4 members for every
        // size (each rank reads a whole block once through shared memory, against 2(p - 1)
        // steps); the split pays off with more members.
        Collective::Bcast if s.members >= 8 && s.bytes >= 512 * KIB => Algorithm::ScatterAllgather,
        // Few members, short buffers: one hop for everyone (3-4 ranks on 2 cores, 8 B: 13.5 ->
        // 8 us at 4, 2.7 -> 0.7 us at 3).
        Collective::Bcast if s.members <= 4 && s.bytes < 256 * KIB => Algorithm::Linear,
        Collective::Bcast => Algorithm::Binomial,
        // Two members: the ring halves the reduction work from 64 KiB (4 MiB: 3.35 -> 2.42 ms,
        // Open MPI 2.41); more members on 2 cores: from 256 KiB.
        Collective::Allreduce
            if s.commutative && s.bytes >= if s.members == 2 { 64 * KIB } else { 256 * KIB } =>
        {
            Algorithm::Ring
        }
        // 4 members on 2 cores, short buffers: one round (64 B: 8.6 -> 7.4 us); at 3 the
        // recursive doubling's fold sends fewer messages and does better (64 B: 6.1 against
        // 6.6 us, 1 KiB: 7.0 against 7.7).
        Collective::Allreduce if s.members == 4 && s.bytes <= 4 * KIB => Algorithm::Linear,
        Collective::Allreduce => Algorithm::RecursiveDoubling,
        Collective::Allgather if s.bytes * s.members as usize <= 64 * KIB => Algorithm::Linear,
        Collective::Allgather => Algorithm::Ring,
        Collective::Alltoall if s.members <= 8 || s.bytes <= 4 * KIB => Algorithm::Linear,
        Collective::Alltoall => Algorithm::Pairwise,
        Collective::Gather if s.members > 4 && s.bytes <= 16 * KIB => Algorithm::Binomial,
        Collective::Gather => Algorithm::Linear,
        // Few members: every member sends each other its block at once and reduces what it
        // gets, the same bytes as the ring's p - 1 steps in one round (2-4 ranks on 2 cores,
        // 32 KiB-4 MiB: 1.2-1.6x faster than the ring).
        Collective::ReduceScatter if few => Algorithm::Linear,
        Collective::ReduceScatter if s.commutative => Algorithm::Ring,
        Collective::ReduceScatter => Algorithm::ReduceScatterv,
        // Each member's data crosses one hop and one combination, where recursive doubling
        // moves and combines every block ⌈log2 p⌉ times, with copies to keep the rank order
        // (1 MiB: 2 ranks 1.4 ms -> 72-78 us, Open MPI 190-230; 3 ranks 2.7-3.0 ms -> 0.51, Open MPI 0.41-0.43; 4 ranks 2.5-3.0 -> 0.59-0.69, Open MPI 0.65-0.73); the p - 1 hops follow each
        // other, so only for few members, and short messages only at 2.
        Collective::Scan if s.members == 2 || (few && s.bytes >= 64 * KIB) => Algorithm::Chain,
        Collective::Scan => Algorithm::RecursiveDoubling,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_algorithms_parse_and_bad_ones_are_refused() {
        let f = Forced::parse(" bcast=binomial, allreduce=ring ,scatter=binomial").unwrap();
        assert_eq!(f.get(Collective::Bcast), Some(Algorithm::Binomial));
        assert_eq!(f.get(Collective::Allreduce), Some(Algorithm::Ring));
        assert_eq!(f.get(Collective::Gather), Some(Algorithm::Binomial));
        assert_eq!(f.get(Collective::Alltoall), None);
        assert_eq!(Forced::parse("").unwrap(), Forced::default());
        for bad in [
            "bcast",
            "bcast=ring",
            "reduce=ring",
            "allreduce=binomial",
            "barrier=ring",
        ] {
            assert!(Forced::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_table_picks_by_size() {
        let shape = |bytes, members, commutative| Shape {
            bytes,
            members,
            commutative,
        };
        let big = 4 << 20;
        // Scans: a chain at 2 members, and for long messages among few.
        for (bytes, members, alg) in [
            (8, 2, Algorithm::Chain),
            (8, 4, Algorithm::RecursiveDoubling),
            (big, 4, Algorithm::Chain),
            (big, 5, Algorithm::RecursiveDoubling),
        ] {
            assert_eq!(rule(Collective::Scan, shape(bytes, members, false)), alg);
        }
        assert_eq!(
            rule(Collective::Bcast, shape(8, 4, true)),
            Algorithm::Linear
        );
        assert_eq!(
            rule(Collective::Bcast, shape(8, 5, true)),
            Algorithm::Binomial
        );
        assert_eq!(
            rule(Collective::Bcast, shape(big, 4, true)),
            Algorithm::Binomial
        );
        assert_eq!(
            rule(Collective::Bcast, shape(big, 8, true)),
            Algorithm::ScatterAllgather
        );
        assert_eq!(
            rule(Collective::Allreduce, shape(big, 4, false)),
            Algorithm::RecursiveDoubling
        );
        assert_eq!(
            rule(Collective::Allreduce, shape(big, 4, true)),
            Algorithm::Ring
        );
        assert_eq!(
            rule(Collective::ReduceScatter, shape(big, 3, false)),
            Algorithm::Linear
        );
        assert_eq!(
            rule(Collective::ReduceScatter, shape(big, 5, false)),
            Algorithm::ReduceScatterv
        );
        assert_eq!(
            rule(Collective::ReduceScatter, shape(big, 5, true)),
            Algorithm::Ring
        );
        assert_eq!(
            rule(Collective::ReduceScatter, shape(8, 3, false)),
            Algorithm::Linear
        );
        assert_eq!(
            rule(Collective::Allreduce, shape(8, 4, false)),
            Algorithm::Linear
        );
        assert_eq!(
            rule(Collective::Allreduce, shape(8, 2, true)),
            Algorithm::RecursiveDoubling
        );
        assert_eq!(
            rule(Collective::Allreduce, shape(8, 3, true)),
            Algorithm::RecursiveDoubling
        );
        assert_eq!(rule(Collective::Barrier, shape(0, 4, true)), Algorithm::Fan);
        assert_eq!(
            rule(Collective::Barrier, shape(0, 2, true)),
            Algorithm::Dissemination
        );
        assert_eq!(
            rule(Collective::Barrier, shape(0, 5, true)),
            Algorithm::Dissemination
        );
    }
}
