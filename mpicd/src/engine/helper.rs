//! The background progress helper: a thread that serves passive-target one-sided
//! communication while the application computes outside MPI.
//!
//! A window that is not mapped ([`crate::window`]) goes through UCX's remote memory access,
//! and UCX 1.13 emulates puts, gets and atomics in software on transports without them (tcp;
//! shared memory for some operations): the target's `ucp_worker_progress` serves them. So
//! that an origin's lock, put, accumulate or unlock never waits for the target to call MPI,
//! the process runs this thread while it has at least one such window (any member: every
//! member of a window decides the same way). It wakes every [`PERIOD`]; if no application
//! thread called the engine's progress since its last wake (the engine's beat, a counter the
//! progress loop publishes with one relaxed store), it takes the engine's lock without
//! waiting for it ([`std::sync::Mutex::try_lock`]: a held lock means an application thread is
//! in the engine) and progresses the worker while that finds something to do (at most
//! [`BURST`] calls).
//!
//! It never runs user code: it skips its turn while any custom-typed operation is in flight
//! (their stream callbacks pack and unpack through the user's callbacks), and it only calls the
//! worker's progress, never the engine's (no collective step, no user reduction). What its
//! progress completes is seen by the application's next progress call: UCX's callbacks file
//! completions and peer failures in the worker's queues, and the engine is told the transport
//! was active ([`Engine::background_active`]), so that failures are handled then. The worker's
//! progress reports no error of its own.
//!
//! The thread starts with the first such window of the runtime and is joined when the last is
//! freed, and at finalize before the engine goes ([`super::Shared::shut_down`]); a runtime
//! without such a window has no thread at all.

use super::{Engine, Shared};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the helper looks at the engine.
const PERIOD: Duration = Duration::from_millis(1);

/// Unmapped windows this process has open (counted by their claims, [`Enlisted`]).
static EXPOSED: AtomicUsize = AtomicUsize::new(0);

/// Whether this process has a window that UCX's remote memory access reaches: the origins'
/// operations may then wait on this process's progress, so its blocking waits do not sleep
/// (see [`super::idle`]).
pub(crate) fn exposed() -> bool {
    EXPOSED.load(Ordering::Relaxed) > 0
}

/// Most worker progress calls of one turn (it stops earlier at the first idle one).
const BURST: u32 = 64;

/// The helper of one runtime.
pub(super) struct Helper {
    state: Mutex<HelperState>,
    /// Progress calls of the application's threads (see [`Engine::progress`]).
    pub(super) beat: Arc<AtomicU32>,
}

/// Whether the helper's thread runs.
enum HelperState {
    /// No window needs it.
    Idle,
    /// `windows` unmapped windows need it.
    Running {
        windows: usize,
        stop: Arc<AtomicBool>,
        thread: JoinHandle<()>,
    },
    /// The runtime is finalized: never again.
    Finished,
}

/// What one turn of the helper did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// An application thread progressed meanwhile, or holds the engine.
    NotNeeded,
    /// A custom-typed operation is in flight: its callbacks are user code.
    UserCode,
    /// The worker was progressed.
    Progressed,
    /// The engine is gone (finalized).
    Gone,
}

impl Helper {
    pub(super) fn new(beat: Arc<AtomicU32>) -> Helper {
        Helper {
            state: Mutex::new(HelperState::Idle),
            beat,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HelperState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A window's claim on the helper: it runs while one exists (see [`Shared::enlist`]).
pub(crate) struct Enlisted {
    shared: Arc<Shared>,
    /// It is counted in [`HelperState::Running`] (not when no thread could be had).
    counted: bool,
}

impl Drop for Enlisted {
    fn drop(&mut self) {
        EXPOSED.fetch_sub(1, Ordering::Relaxed);
        if self.counted {
            self.shared.delist();
        }
    }
}

impl Shared {
    /// Starts the helper for an unmapped window (or counts one more); the claim stops it when
    /// the last one is dropped. No thread after finalize.
    pub(crate) fn enlist(self: &Arc<Shared>) -> Enlisted {
        EXPOSED.fetch_add(1, Ordering::Relaxed);
        let mut state = self.helper.lock();
        let counted = match &mut *state {
            HelperState::Running { windows, .. } => {
                *windows += 1;
                true
            }
            HelperState::Finished => false,
            HelperState::Idle => {
                let stop = Arc::new(AtomicBool::new(false));
                let (weak, flag) = (Arc::downgrade(self), Arc::clone(&stop));
                let spawned = std::thread::Builder::new()
                    .name("mpicd-progress".into())
                    .spawn(move || serve(weak, flag));
                // Without a thread (the system refuses one) the window still works, served
                // when the target calls MPI: said on stderr, not an error of the
                // collective creation (the other members could not know of it).
                match spawned {
                    Ok(thread) => {
                        *state = HelperState::Running {
                            windows: 1,
                            stop,
                            thread,
                        };
                        true
                    }
                    Err(e) => {
                        eprintln!(
                            "mpicd: warning: no background progress thread ({e}): one-sided \
                             targets progress only when they call MPI"
                        );
                        false
                    }
                }
            }
        };
        Enlisted {
            shared: Arc::clone(self),
            counted,
        }
    }

    /// One counted window fewer: the thread is stopped and joined after the last (a finalize
    /// may have stopped it already).
    fn delist(&self) {
        let mut state = self.helper.lock();
        if let HelperState::Running { windows, .. } = &mut *state {
            *windows -= 1;
            if *windows == 0 {
                let last = std::mem::replace(&mut *state, HelperState::Idle);
                drop(state);
                join(last);
            }
        }
    }

    /// Stops the helper for good (finalize): joined before the engine is taken.
    pub(super) fn stop_helper(&self) {
        let mut state = self.helper.lock();
        let last = std::mem::replace(&mut *state, HelperState::Finished);
        drop(state);
        join(last);
    }

    /// One turn of the helper: progresses the worker unless the application did since
    /// `seen` (the beat at the previous turn) or user code could run.
    fn turn(&self, seen: u32) -> Turn {
        let mut guard = match self.engine.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Turn::NotNeeded,
        };
        let Some(engine) = guard.as_mut() else {
            return Turn::Gone;
        };
        if self.helper.beat.load(Ordering::Relaxed) != seen {
            return Turn::NotNeeded;
        }
        engine.serve_in_background()
    }
}

/// Stops a running helper's thread and waits for it (never under the engine's lock: the
/// thread only tries that lock, so it ends within one period either way).
fn join(state: HelperState) {
    if let HelperState::Running { stop, thread, .. } = state {
        stop.store(true, Ordering::Release);
        thread.thread().unpark();
        // A panic on that thread is a bug; it touched nothing since, and there is no one to
        // report it to here but the panic message it already printed.
        let _ = thread.join();
    }
}

/// The helper's thread.
fn serve(shared: Weak<Shared>, stop: Arc<AtomicBool>) {
    let mut seen: Option<u32> = None;
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(PERIOD);
        if stop.load(Ordering::Acquire) {
            break;
        }
        let Some(shared) = shared.upgrade() else {
            break;
        };
        let beat = shared.helper.beat.load(Ordering::Relaxed);
        if seen == Some(beat) && shared.turn(beat) == Turn::Gone {
            break;
        }
        seen = Some(beat);
    }
}

impl Engine {
    /// What an application thread does first when it takes the engine, if the helper found
    /// the transport active since its last progress call: the peer failures UCX reported
    /// during the helper's progress are handled now (on this thread: they may notify the
    /// tools' event callbacks), before anything looks at a request that failed with them.
    pub(super) fn settle_background(&mut self) {
        if self.background_active {
            self.handle_failures();
        }
    }

    /// The helper's progress (see the module's documentation), under the engine's lock.
    fn serve_in_background(&mut self) -> Turn {
        if !self.custom_active.is_empty() || self.table.has_custom() {
            return Turn::UserCode;
        }
        for _ in 0..BURST {
            if !self.net.worker.progress() {
                break;
            }
            self.background_active = true;
        }
        Turn::Progressed
    }
}
