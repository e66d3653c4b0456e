//! The runtime handle: init, the predefined communicators, finalize and abort. One runtime at
//! a time per process, as in MPI: a second `init` fails, and nothing made by a runtime works
//! after its `finalize`. A new runtime may start after that one ended ([`restart`], for MPI's
//! sessions model, which may initialize again), with new handles.

use crate::comm::Communicator;
use crate::engine::{Engine, Shared};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::route::{SELF_CONTEXT, WORLD_CONTEXT};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

const UNINITIALIZED: u8 = 0;
const ACTIVE: u8 = 1;
const FINALIZED: u8 = 2;

/// Where this process is in the MPI lifecycle.
static LIFECYCLE: AtomicU8 = AtomicU8::new(UNINITIALIZED);
/// How many runtimes this process started.
static STARTED: AtomicU32 = AtomicU32::new(0);

/// The running MPI environment of this process.
pub struct Runtime {
    shared: Arc<Shared>,
    rank: u32,
    size: u32,
}

/// Starts mpicd: connects to the launcher (or runs as a singleton) and the transport.
pub fn init() -> Result<Runtime> {
    start_from(UNINITIALIZED)
}

/// Starts a new runtime after the last one was finalized (MPI's sessions model may initialize
/// again): every process of the job must do it as many times (they exchange their addresses
/// again). Fails while a runtime runs, and before any did ([`init`] starts the first).
pub fn restart() -> Result<Runtime> {
    start_from(FINALIZED)
}

fn start_from(state: u8) -> Result<Runtime> {
    match LIFECYCLE.compare_exchange(state, ACTIVE, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {}
        Err(ACTIVE) => return Err(Error::AlreadyInitialized),
        Err(UNINITIALIZED) => return Err(Error::NotInitialized),
        Err(_) => return Err(Error::Finalized),
    }
    let generation = STARTED.load(Ordering::Acquire);
    match Engine::start(generation) {
        Ok(engine) => {
            STARTED.fetch_add(1, Ordering::AcqRel);
            let (rank, size) = (engine.rank(), engine.size());
            Ok(Runtime {
                shared: Shared::new(engine),
                rank,
                size,
            })
        }
        Err(e) => {
            LIFECYCLE.store(state, Ordering::Release);
            Err(e)
        }
    }
}

/// True between a successful [`init`] and finalize.
pub fn is_initialized() -> bool {
    LIFECYCLE.load(Ordering::Acquire) != UNINITIALIZED
}

/// True once finalize has run.
pub fn is_finalized() -> bool {
    LIFECYCLE.load(Ordering::Acquire) == FINALIZED
}

impl Runtime {
    /// All processes of the job.
    pub fn world(&self) -> Communicator {
        Communicator::new(
            Arc::clone(&self.shared),
            WORLD_CONTEXT,
            Group::world(self.size),
            self.rank as i32,
        )
    }

    /// Only this process.
    pub fn self_comm(&self) -> Communicator {
        Communicator::new(
            Arc::clone(&self.shared),
            SELF_CONTEXT,
            Group::from_members(vec![self.rank]),
            0,
        )
    }

    /// A handle for MPI's sessions model: process sets and communicators made from groups.
    pub fn session(&self) -> crate::session::Session {
        crate::session::Session {
            shared: Arc::clone(&self.shared),
            rank: self.rank,
            size: self.size,
        }
    }

    /// True when the program runs without a launcher (a job of one process).
    pub fn is_singleton(&self) -> Result<bool> {
        self.shared.with(|e| Ok(e.is_singleton()))
    }

    /// What the launcher says of this job, each `None` when it does not say: this process's
    /// application number (MPMD launches number their applications from 0) and the universe
    /// size (how many processes the launcher's allocation can hold).
    pub fn launch_facts(&self) -> Result<(Option<u32>, Option<u32>)> {
        self.shared.with(|e| Ok(e.launch_facts()))
    }

    /// Shuts down: synchronizes with the other processes, flushes and closes connections, and
    /// reports operations that were still pending. Never hangs on a dead peer.
    pub fn finalize(self) -> Result<()> {
        self.shared
            .shut_down(finalize)
            .unwrap_or(Err(Error::Finalized))
    }

    /// Terminates every process of the job with `code`.
    pub fn abort(&self, code: i32, message: &str) -> Result<()> {
        self.shared.with(|e| e.abort(code, message))
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = self.shared.shut_down(finalize);
    }
}

fn finalize(engine: Engine) -> Result<()> {
    LIFECYCLE.store(FINALIZED, Ordering::Release);
    engine.finalize()
}
