//! Events: the one timestamp source (a monotonic clock in nanoseconds since the process first
//! asked for the time), the event types ([`EVENTS`]), the registrations a tool makes for them
//! and the delivery of an event to their callbacks.
//!
//! An event is raised by the engine while it holds its lock, so its callbacks run where they
//! may call no MPI function but the restricted ones (`MPI_T_CB_REQUIRE_MPI_RESTRICTED`): each
//! registration's callback of the least safety level that is at least that one is called with
//! that requirement. A registration that has none for it loses the event; it is counted, and
//! its dropped handler, if it has one, is called at once with the number lost.

use super::{initialized, objects, Fault, FaultKind, Handle, HandleKind, ToolResult, Verbosity};
use crate::config::Layer;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// The timestamp source.
#[derive(Debug)]
pub struct Source {
    pub name: &'static str,
    pub desc: &'static str,
    /// Ticks in a second.
    pub ticks_per_second: i64,
    /// The largest tick count before the clock wraps.
    pub max_ticks: i64,
}

/// Every source, by index: a timestamp of source 0 orders every event of the process.
pub static SOURCES: &[Source] = &[Source {
    name: "mpicd_clock",
    desc: "Monotonic clock of this process (CLOCK_MONOTONIC), in nanoseconds since the first \
           timestamp the process took; the timestamps of all events of the process",
    ticks_per_second: 1_000_000_000,
    max_ticks: i64::MAX,
}];

/// The source at `index`.
pub fn source(index: usize) -> ToolResult<&'static Source> {
    SOURCES
        .get(index)
        .ok_or_else(|| Fault::new(FaultKind::InvalidIndex, format!("no source {index}")))
}

/// The current time of source `index`.
pub fn timestamp(index: usize) -> ToolResult<i64> {
    source(index)?;
    Ok(now())
}

fn now() -> i64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let nanos = ORIGIN.get_or_init(Instant::now).elapsed().as_nanos();
    i64::try_from(nanos).unwrap_or(i64::MAX)
}

/// The C type of an element of an event's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// `int`.
    Int,
}

impl Element {
    /// Its size in bytes.
    pub fn size(self) -> usize {
        match self {
            Element::Int => 4,
        }
    }
}

/// An event type.
#[derive(Debug)]
pub struct EventType {
    pub name: &'static str,
    pub desc: &'static str,
    pub layer: Layer,
    pub verbosity: Verbosity,
    /// The elements of its data, in order, packed.
    pub elements: &'static [Element],
}

impl EventType {
    /// The offset of each element in the data.
    pub fn displacements(&self) -> Vec<usize> {
        let mut at = 0;
        self.elements
            .iter()
            .map(|e| {
                let here = at;
                at += e.size();
                here
            })
            .collect()
    }
}

/// Index of the event type "a peer failed" in [`EVENTS`].
const PEER_FAILED: usize = 0;

/// Every event type, by index.
pub static EVENTS: &[EventType] = &[EventType {
    name: "mpicd_peer_failed",
    desc: "This process found that a process of the job failed (its endpoint reported an \
           error or, on this node, its pid is gone); data: the failed process's rank in \
           MPI_COMM_WORLD (int)",
    layer: Layer::Engine,
    verbosity: Verbosity::UserBasic,
    elements: &[Element::Int],
}];

/// The event type at `index`.
pub fn event_type(index: usize) -> ToolResult<&'static EventType> {
    EVENTS
        .get(index)
        .ok_or_else(|| Fault::new(FaultKind::InvalidIndex, format!("no event type {index}")))
}

/// The index of the event type named `name`.
pub fn index_of(name: &str) -> ToolResult<usize> {
    super::find_name(EVENTS.iter().map(|e| e.name), name, "event type")
}

/// The safety levels of callbacks, from the least to the most demanding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Safety {
    None,
    MpiRestricted,
    ThreadSafe,
    AsyncSignalSafe,
}

const LEVELS: usize = 4;

/// One occurrence of an event, as its callbacks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub event: usize,
    pub timestamp: i64,
    pub source: usize,
    /// The elements, packed as [`EventType::displacements`] says.
    pub data: Vec<u8>,
}

/// A callback of a registration: called with the instance, the registration's handle and the
/// safety the call requires.
pub type Callback = Arc<dyn Fn(&Instance, Handle, Safety) + Send + Sync>;
/// A dropped handler: called with the number of events lost, the registration's handle, the
/// source index, the safety the call requires and the user data of the registration's last
/// callback.
pub type Dropped = Arc<dyn Fn(u64, Handle, usize, Safety, usize) + Send + Sync>;

/// A tool's registration for an event type.
pub(super) struct Registration {
    event: usize,
    callbacks: [Option<Callback>; LEVELS],
    dropped: Option<Dropped>,
    /// The user data given with the last callback (an address the tool owns).
    user_data: usize,
}

/// Registrations alive (a raise with none returns at once).
static REGISTERED: AtomicUsize = AtomicUsize::new(0);

/// A registration for event type `index` (bound to no object).
pub fn handle_alloc(index: usize) -> ToolResult<Handle> {
    event_type(index)?;
    let mut o = initialized()?;
    let h = o.handle(HandleKind::Registration);
    let r = Registration {
        event: index,
        callbacks: [None, None, None, None],
        dropped: None,
        user_data: 0,
    };
    o.registrations.insert(h, r);
    REGISTERED.fetch_add(1, Ordering::Relaxed);
    Ok(h)
}

fn bad_registration(handle: Handle) -> Fault {
    Fault::new(
        FaultKind::InvalidHandle,
        format!("{handle:#x} is not an event registration"),
    )
}

/// Runs `f` on the registration `handle`.
fn with_registration<R>(handle: Handle, f: impl FnOnce(&mut Registration) -> R) -> ToolResult<R> {
    let mut o = initialized()?;
    let r = o
        .registrations
        .get_mut(&handle)
        .ok_or_else(|| bad_registration(handle))?;
    Ok(f(r))
}

/// Checks that `handle` is a live registration.
pub fn check_registration(handle: Handle) -> ToolResult<()> {
    with_registration(handle, |_| ())
}

/// Frees a registration: no callback of it is called afterwards.
pub fn handle_free(handle: Handle) -> ToolResult<()> {
    let mut o = initialized()?;
    o.registrations
        .remove(&handle)
        .ok_or_else(|| bad_registration(handle))?;
    REGISTERED.fetch_sub(1, Ordering::Relaxed);
    Ok(())
}

/// Notes that `n` registrations were freed all at once (by the last finalize).
pub(super) fn forget(n: usize) {
    REGISTERED.fetch_sub(n, Ordering::Relaxed);
}

/// Sets (or with `None` removes) the callback of safety `safety`, given with `user_data`.
pub fn set_callback(
    handle: Handle,
    safety: Safety,
    cb: Option<Callback>,
    user_data: usize,
) -> ToolResult<()> {
    with_registration(handle, |r| {
        r.callbacks[safety as usize] = cb;
        r.user_data = user_data;
    })
}

/// Sets (or removes) the dropped handler.
pub fn set_dropped(handle: Handle, dropped: Option<Dropped>) -> ToolResult<()> {
    with_registration(handle, |r| r.dropped = dropped)
}

thread_local! {
    /// The instances this thread's callbacks are running with (the only ones a tool may read).
    static CURRENT: RefCell<Vec<*const Instance>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on the instance at address `at`, if a callback of this thread runs with it.
pub fn with_instance<R>(at: usize, f: impl FnOnce(&Instance) -> R) -> ToolResult<R> {
    let live = CURRENT.with(|c| c.borrow().iter().any(|&p| p as usize == at));
    if !live {
        return Err(Fault::new(
            FaultKind::InvalidHandle,
            format!("{at:#x} is not an event instance of a running callback"),
        ));
    }
    // SAFETY: `at` is on this thread's list, so it is the address of the instance `deliver`
    // owns and lends to the callback running on this thread now; it outlives this call.
    Ok(f(unsafe { &*(at as *const Instance) }))
}

/// Reports that process `rank` of the world failed.
pub(crate) fn peer_failed(rank: u32) {
    if REGISTERED.load(Ordering::Relaxed) == 0 {
        return;
    }
    deliver(Instance {
        event: PEER_FAILED,
        timestamp: now(),
        source: 0,
        data: (rank as i32).to_ne_bytes().to_vec(),
    });
}

/// Calls the callbacks of every registration for the instance's event type, with the
/// restricted safety of the engine (see the module's doc).
pub(crate) fn deliver(instance: Instance) {
    let context = Safety::MpiRestricted;
    enum Call {
        Event(Callback, Handle),
        Dropped(Dropped, Handle, usize),
    }
    let calls: Vec<Call> = {
        let o = objects();
        if o.inits == 0 {
            return;
        }
        o.registrations
            .iter()
            .filter(|(_, r)| r.event == instance.event)
            .filter_map(|(&h, r)| {
                let cb = r.callbacks[context as usize..].iter().flatten().next();
                match (cb, &r.dropped) {
                    (Some(cb), _) => Some(Call::Event(cb.clone(), h)),
                    (None, Some(d)) => Some(Call::Dropped(d.clone(), h, r.user_data)),
                    (None, None) => None,
                }
            })
            .collect()
    };
    let at = &instance as *const Instance;
    CURRENT.with(|c| c.borrow_mut().push(at));
    for call in calls {
        match call {
            Call::Event(cb, h) => cb(&instance, h, context),
            Call::Dropped(d, h, data) => d(1, h, instance.source, context, data),
        }
    }
    CURRENT.with(|c| c.borrow_mut().retain(|&p| p != at));
}
