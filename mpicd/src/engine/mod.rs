//! The engine: one UCX worker, the peers (endpoints made on first use), and the table of
//! operations in flight. It posts operations, runs the progress loop, and turns finished UCX
//! requests into MPI completions. Argument checking happens above it, in [`crate::comm`]; how a
//! custom-typed message travels is the operations' business ([`crate::ops`]), which the engine
//! advances through a narrow [`Context`] and never the other way round.
//!
//! - [`table`]: the request table ([`OpId`], [`Op`]);
//! - [`contiguous`]: contiguous sends and receives, probes, matched messages;
//! - [`custom`]: custom-typed operations: starting them, polling them when UCX files a notice;
//! - [`progress`]: the progress loop, peer failures, tests and cancels;
//! - [`schedule`]: runs of collective plans;
//! - [`agree`]: non-blocking agreements on a new communicator's context id;
//! - [`failed`]: failed members of communicators and their acknowledgment (ULFM);
//! - [`revoke`]: revoked communicators and the notices that tell their members (ULFM);
//! - [`abort`]: collectives given up because the members' arguments differ, and their notices;
//! - [`rma`]: what windows use: the worker and peers' endpoints;
//! - [`helper`]: the background progress thread that serves unmapped windows' targets;
//! - [`foreign`]: processes of other jobs (dynamic processes), ports and the launcher's
//!   spawn and name service.
//!
//! The engine lives behind one mutex ([`Shared`]); every public call takes the lock for a short
//! step (post, or progress and test) and releases it, so several threads may use the runtime.

mod abort;
mod agree;
mod contiguous;
mod custom;
mod failed;
pub(crate) use abort::{disagrees, tag_of};
pub(crate) use failed::any_failed;
pub(crate) use revoke::any_revoked;
mod finish;
mod foreign;
mod helper;
mod idle;
mod peers;
mod progress;
mod revoke;
mod rma;
mod schedule;
mod table;

pub(crate) use crate::route::Route;
pub(crate) use helper::{exposed, Enlisted};
pub use idle::Idle;
pub(crate) use idle::{WaitPolicy, SLEEP_AFTER};
pub(crate) use table::OpId;
use table::{Op, Table};

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::liveness::{Identity, Watch};
use crate::ops::{Context, Stranded};
use crate::plan::{CustomConfig, Reach};
use crate::status::Status;
use crate::transport::{Endpoint, MessageHandle, RecvInfo, Worker, WorkerSettings};
use crate::wire::{HEADER_BYTES, LEAD_MAX};
use std::collections::BTreeSet;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

const ADDRESS_KEY: &str = "mpicd.ucx.address";
const IDENTITY_KEY: &str = "mpicd.identity";

/// The launcher key of `base` for the runtime of `generation` (the first runtime of a process
/// is 0; a runtime started again after a finalize publishes under new keys, which no process
/// can confuse with the old ones).
fn launch_key(base: &str, generation: u32) -> String {
    match generation {
        0 => base.to_string(),
        g => format!("{base}.{g}"),
    }
}

/// The engine state.
pub(crate) struct Engine {
    // Field order matters: operations are released before the endpoints and the worker.
    table: Table,
    /// Drains of discarded matched messages, finished in the background.
    orphans: Vec<OpId>,
    /// Custom-typed operations in flight.
    custom_active: Vec<OpId>,
    /// Tokens of the custom ops to poll at the next progress call: filed by UCX when one of
    /// their requests completed, or added when they started or were aborted.
    noticed: Vec<usize>,
    /// Collective plans being run (after the table: their messages point into them).
    schedules: Vec<(OpId, Box<schedule::Run>)>,
    /// Non-blocking context agreements (each runs plans of its own, in `schedules`).
    agreements: Vec<(OpId, agree::Agreement)>,
    /// What a wait does when progress finds nothing to do (`MPICD_WAIT`).
    wait: WaitPolicy,
    /// Progress calls, for the periodic poll of every custom op.
    progress_calls: u32,
    /// Progress calls in a row that found nothing to do (see `progress::YIELD_AFTER`).
    idle_streak: u32,
    /// `progress_calls` as the background helper reads it without the lock (see [`helper`]).
    beat: Arc<AtomicU32>,
    /// The background helper found the transport active since the last progress call.
    background_active: bool,
    /// Per communicator context: how many of the failures found (`Net::lost`) it
    /// acknowledged (ULFM's failure_ack).
    acked: std::collections::HashMap<u32, usize>,
    /// Revoked communicators and the engine's own operations that serve them.
    revocations: revoke::Revocations,
    /// Collectives given up because the members' arguments differ.
    aborts: abort::Aborts,
    net: Net,
}

/// This process's side of the transport: the worker, the peers, and what operations may use.
struct Net {
    // Field order matters: stranded requests and endpoints are released before the worker.
    stranded: Vec<Stranded>,
    peers: Vec<Peer>,
    worker: Worker,
    boot: Bootstrap,
    rank: u32,
    size: u32,
    next_seq: u64,
    custom: CustomConfig,
    /// Contiguous sends from this size to a process on this node stream (`MPICD_LOCAL_STREAM`;
    /// 0: none do).
    local_stream: usize,
    /// Processes outnumber cores here (the wait policy is not spin): a message moves through
    /// the shared-memory segments only while both its processes run.
    shares_cores: bool,
    /// Most bytes a member puts in a blocking collective through the node's shared memory
    /// (`MPICD_COLL_NODE`; 0: none do).
    coll_node: usize,
    contexts: crate::route::ContextIds,
    /// Which runtime of this process this is (see [`launch_key`]).
    generation: u32,
    identity: Identity,
    watch: Watch,
    /// World ranks known failed, in the order they were found (see [`Peer::failed`]).
    lost: Vec<u32>,
    /// This job's namespace (see [`foreign`]).
    namespace: String,
    /// The ids of the foreign processes met, by (namespace, rank).
    foreign_ids: std::collections::HashMap<(String, u32), u32>,
    /// The last number given to a port or a handshake ([`Engine::next_dynamic_tag`]).
    dynamic_tags: u32,
    /// The ports of this process that are open.
    ports: BTreeSet<u32>,
}

/// A process-to-process connection, made when first needed.
struct Peer {
    endpoint: Option<Endpoint>,
    /// The peer's pid when it runs on this node (watched by [`crate::liveness`]).
    local_pid: Option<u32>,
    /// Its identity was read from the launcher (`local_pid` is then known).
    identified: bool,
    failed: bool,
    /// A process of another job: its descriptor (see [`foreign`]); `None` for a world rank.
    foreign: Option<Box<foreign::Foreign>>,
}

impl Engine {
    /// Starts the transport and publishes this process's address through the launcher, for
    /// the runtime of `generation` (see [`launch_key`]).
    pub(crate) fn start(generation: u32) -> Result<Engine> {
        crate::config::warn_unknown_once();
        let config = crate::config::Config::from_env()?;
        crate::tool::cvar::record_in_effect();
        let (custom, peer_errors) = (CustomConfig::from(&config), config.peer_errors);

        // The collectives' forced algorithms: a text knob the collectives parse.
        let forced = std::env::var(crate::config::COLL_ALGORITHMS.name).unwrap_or_default();
        crate::schedule::select::install(crate::schedule::select::Forced::parse(&forced)?);
        let mut boot = Bootstrap::acquire()?;
        if boot.size() > crate::tag::MAX_PROCESSES {
            return Err(Error::Launch(format!(
                "{} processes exceed the limit of {}",
                boot.size(),
                crate::tag::MAX_PROCESSES
            )));
        }
        let wait = match config.wait {
            crate::config::Wait::Spin => WaitPolicy::Spin,
            crate::config::Wait::Yield => WaitPolicy::Yield,
            crate::config::Wait::Sleep => WaitPolicy::Sleep,
            crate::config::Wait::Auto => {
                // The node's cores, not this process's affinity mask: a launcher that binds
                // each process to its own core leaves one in each mask.
                // SAFETY: sysconf has no preconditions.
                let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
                let cores = usize::try_from(online).unwrap_or(1).max(1);
                match boot.local_size().is_some_and(|n| n as usize > cores) {
                    true => WaitPolicy::Sleep,
                    false => WaitPolicy::Spin,
                }
            }
        };
        // A message through the segments moves only while both processes run: not where
        // processes outnumber cores (see `config::LOCAL_STREAM`).
        let local_stream = match wait {
            WaitPolicy::Spin => config.local_stream,
            WaitPolicy::Yield | WaitPolicy::Sleep => 0,
        };
        let worker = Worker::new(WorkerSettings {
            peer_errors,
            wakeup: wait == WaitPolicy::Sleep,
            lead_capacity: LEAD_MAX,
            header_keep: HEADER_BYTES,
        })?;
        boot.put(&launch_key(ADDRESS_KEY, generation), &worker.address()?)?;
        boot.put(
            &launch_key(IDENTITY_KEY, generation),
            &Identity::current().encode(),
        )?;
        boot.fence()?;
        let (rank, size) = (boot.rank(), boot.size());
        let namespace = boot.namespace();
        crate::tool::cvar::make_writable(
            &crate::config::COLL_ALGORITHMS,
            crate::schedule::select::install_text,
        );
        let mut engine = Engine {
            table: Table::default(),
            orphans: Vec::new(),
            custom_active: Vec::new(),
            noticed: Vec::new(),
            schedules: Vec::new(),
            agreements: Vec::new(),
            wait,
            progress_calls: 0,
            idle_streak: 0,
            beat: Arc::default(),
            background_active: false,
            acked: std::collections::HashMap::new(),
            revocations: revoke::Revocations::new(size),
            aborts: abort::Aborts::default(),
            net: Net {
                stranded: Vec::new(),
                peers: (0..size)
                    .map(|_| Peer {
                        endpoint: None,
                        local_pid: None,
                        identified: false,
                        failed: false,
                        foreign: None,
                    })
                    .collect(),
                worker,
                boot,
                rank,
                size,
                next_seq: 0,
                custom,
                local_stream,
                shares_cores: wait != WaitPolicy::Spin,
                coll_node: config.coll_node,
                contexts: crate::route::ContextIds::default(),
                generation,
                identity: Identity::current(),
                watch: Watch::new(),
                lost: Vec::new(),
                namespace,
                foreign_ids: std::collections::HashMap::new(),
                dynamic_tags: 0,
                ports: BTreeSet::new(),
            },
        };
        engine.listen_for_notices()?;
        Ok(engine)
    }

    /// This process's world rank.
    pub(crate) fn rank(&self) -> u32 {
        self.net.rank
    }

    /// The number of processes in the world.
    pub(crate) fn size(&self) -> u32 {
        self.net.size
    }

    /// The context ids of this process (see [`crate::route::ContextIds`]).
    pub(crate) fn contexts(&mut self) -> &mut crate::route::ContextIds {
        &mut self.net.contexts
    }

    /// Shuts down: cancels what is left, synchronizes with the other processes, flushes and
    /// closes endpoints (bounded in time), and reports operations that were still pending.
    pub(crate) fn finalize(mut self) -> Result<()> {
        crate::tool::cvar::end_writes();
        let pending = self.pending();
        // The orphans (drains of collectives given up on a death) stay posted through the
        // fence: a live member's long message to one of them completes only once it is taken,
        // and that member reaches the fence only then.
        self.cancel_all(false);
        self.settle_ops(false, Duration::from_secs(5));
        // Synchronize so nobody tears down connections others still use, unless a process is
        // known dead or dies meanwhile: the launcher could then wait for it forever. With a
        // process lost, finalizing succeeds without that synchronization (as in ULFM).
        let fence = self.net.finalize_fence();
        // Drains whose message never came (its sender died before it sent).
        self.cancel_all(true);
        self.settle_ops(true, Duration::from_secs(1));
        let net = &mut self.net;
        net.discard_unexpected();
        let endpoints: Vec<(Endpoint, bool)> = net
            .peers
            .iter_mut()
            .filter_map(|p| Some((p.endpoint.take()?, p.failed)))
            .collect();
        for (ep, lost) in endpoints {
            net.worker.close(ep, Duration::from_secs(2), lost);
        }
        // The launcher connection stays for a runtime started later (see `Bootstrap::park`).
        std::mem::replace(&mut net.boot, Bootstrap::detached()).park();
        fence?;
        if pending > 0 {
            return Err(Error::PendingOperations(pending));
        }
        Ok(())
    }

    /// Watches every member of a group (the members of a communicator whose collectives wait on
    /// all of them, directly or not): a dead one then fails them.
    pub(crate) fn watch_members(&mut self, members: &[u32]) {
        self.net.identify_all(members);
    }

    /// What this process offers for the blocking collectives of a communicator of `members`
    /// (world ranks) through the node's shared memory: the most bytes a member may put there,
    /// or 0 if some member runs on another node.
    pub(crate) fn node_offer(&mut self, members: &[u32]) -> usize {
        if self.net.coll_node == 0 {
            return 0;
        }
        self.net.identify_all(members);
        let peers = &self.net.peers;
        let me = self.net.rank;
        let local = |m: &u32| {
            *m == me
                || peers
                    .get(*m as usize)
                    .is_some_and(|p| p.local_pid.is_some())
        };
        match members.iter().all(local) {
            true => self.net.coll_node,
            false => 0,
        }
    }

    /// What a blocking wait does when it finds nothing to do (`MPICD_WAIT`, resolved).
    pub(crate) fn wait_policy(&self) -> WaitPolicy {
        self.wait
    }

    /// True when no launcher started this process.
    pub(crate) fn is_singleton(&self) -> bool {
        self.net.boot.is_singleton()
    }

    /// What the launcher says of this job: this process's application number and the
    /// universe size (see [`crate::Runtime::launch_facts`]).
    pub(crate) fn launch_facts(&self) -> (Option<u32>, Option<u32>) {
        (self.net.boot.appnum(), self.net.boot.universe_size())
    }

    /// Terminates the whole job.
    pub(crate) fn abort(&self, code: i32, message: &str) -> ! {
        self.net.boot.abort(code, message)
    }
}

impl Net {
    /// The endpoint to `peer` if one was made and the peer is alive.
    fn existing_endpoint(&self, peer: u32) -> Option<&Endpoint> {
        self.peers
            .get(peer as usize)
            .filter(|p| !p.failed)
            .and_then(|p| p.endpoint.as_ref())
    }

    /// True if world rank `peer` is known to have failed.
    fn has_failed(&self, peer: u32) -> bool {
        self.peers.get(peer as usize).is_some_and(|p| p.failed)
    }

    /// Where world rank `peer` (connected) runs, for the wire plan of a custom-typed message:
    /// on this node (unless node-local plans are turned off; with its cores shared or not), or
    /// elsewhere.
    fn reach(&self, peer: u32) -> Reach {
        match self.peers.get(peer as usize).and_then(|p| p.local_pid) {
            Some(_) if self.custom.node_local && self.shares_cores => Reach::NodeShared,
            Some(_) if self.custom.node_local => Reach::NodeLocal,
            _ => Reach::Remote,
        }
    }

    /// Whether a contiguous send of `len` bytes to `peer` goes through the stream datatype
    /// (as a derived-typed send of one dense run: see `config::LOCAL_STREAM`).
    fn streams_contiguous(&self, peer: u32, len: usize) -> bool {
        self.local_stream != 0 && len >= self.local_stream && self.reach(peer) == Reach::NodeLocal
    }

    /// What an operation on `peer` may use while the engine advances it.
    fn context(&mut self, peer: Option<u32>) -> Context<'_> {
        let endpoint = peer
            .and_then(|p| self.peers.get(p as usize))
            .filter(|p| !p.failed)
            .and_then(|p| p.endpoint.as_ref());
        Context {
            worker: &self.worker,
            config: &self.custom,
            rank: self.tag_source(peer),
            endpoint,
            next_seq: &mut self.next_seq,
            stranded: &mut self.stranded,
        }
    }
}

/// A posted operation: in flight, or already complete.
pub(crate) enum Posted {
    Pending(OpId),
    Done(Result<Status>),
}

impl Posted {
    /// What an operation with the null process comes to: done at once, moving nothing.
    pub(crate) fn null() -> Posted {
        Posted::Done(Ok(Status::empty()))
    }
}

/// A message taken by a matched probe, waiting for its receive.
pub(crate) enum Matched {
    Contiguous {
        handle: MessageHandle,
        info: RecvInfo,
        route: Route,
    },
    Custom(OpId),
}

/// The engine behind its lock, shared by every handle of one runtime.
pub(crate) struct Shared {
    engine: Mutex<Option<Engine>>,
    /// The background progress helper (see [`helper`]).
    helper: helper::Helper,
}

impl Shared {
    pub(crate) fn new(engine: Engine) -> Arc<Shared> {
        let helper = helper::Helper::new(Arc::clone(&engine.beat));
        Arc::new(Shared {
            engine: Mutex::new(Some(engine)),
            helper,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Option<Engine>> {
        self.engine
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the live engine; `Finalized` once it is gone.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Engine) -> Result<R>) -> Result<R> {
        match self.lock().as_mut() {
            Some(engine) => {
                engine.settle_background();
                f(engine)
            }
            None => Err(Error::Finalized),
        }
    }

    /// Takes the engine out and runs `f` (finalize) on it while still holding the lock, so that
    /// once any handle sees `Finalized` the engine is gone and no operation touches memory any
    /// more (request scopes rely on this). `None` if it was already taken.
    /// The background helper is stopped and joined first.
    pub(crate) fn shut_down<R>(&self, f: impl FnOnce(Engine) -> R) -> Option<R> {
        self.stop_helper();
        let mut engine = self.lock();
        engine.take().map(f)
    }

    /// Progresses until `ready` returns a value (a blocking wait: see [`idle`]).
    pub(crate) fn progress_until<R>(
        &self,
        mut ready: impl FnMut(&mut Engine) -> Result<Option<R>>,
    ) -> Result<R> {
        let mut idle = Idle::default();
        loop {
            let step = self.with(|e| {
                if let Some(r) = ready(e)? {
                    return Ok(Ok(r));
                }
                let active = e.progress();
                // What progress just completed is seen without letting the lock go.
                if active {
                    if let Some(r) = ready(e)? {
                        return Ok(Ok(r));
                    }
                }
                Ok(Err(e.idle(&mut idle, active)))
            })?;
            match step {
                Ok(r) => return Ok(r),
                Err(Some(nap)) => nap.take(),
                Err(None) => {}
            }
        }
    }

    /// One step of a blocking wait on something `ready` cannot see (several requests, work
    /// outside the engine): progresses once, then sleeps if the wait has been idle long
    /// enough (see [`idle`]).
    pub(crate) fn wait_step(&self, idle: &mut Idle) -> Result<()> {
        let nap = self.with(|e| {
            let active = e.progress();
            Ok(e.idle(idle, active))
        })?;
        if let Some(nap) = nap {
            nap.take();
        }
        Ok(())
    }
}
