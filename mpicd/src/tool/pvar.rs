//! The performance variables: counters the engine keeps as it works ([`Counter`], bumped
//! under the engine's lock, so a bump is a plain load and store, no atomic read-modify-write)
//! and the sessions and handles through which a tool reads them.
//!
//! Counters (`MPI_T_PVAR_CLASS_COUNTER`) are not continuous: a handle starts stopped, counts
//! what happens while it is started, and can be reset, written, and read and reset in one
//! step. Levels and the high watermark are continuous and read-only: a handle always shows the
//! engine's value (the watermark: the highest level since the process started).
//! Every variable is one `unsigned long long` bound to no object.

use super::{initialized, Fault, FaultKind, Handle, HandleKind, ToolResult, Verbosity};
use crate::config::Layer;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// A number the engine keeps for the tools.
#[derive(Debug)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Counter {
        Counter(AtomicU64::new(0))
    }

    /// Adds `n`. Only the engine, under its lock, changes a counter: a load and a store.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        let v = self.0.load(Ordering::Relaxed);
        self.0.store(v.wrapping_add(n), Ordering::Relaxed);
    }

    /// Sets the value (a level).
    #[inline]
    pub(crate) fn set(&self, n: u64) {
        self.0.store(n, Ordering::Relaxed);
    }

    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Messages of contiguous kind (contiguous and derived-typed; point-to-point, and those of
/// collectives) this process sent.
pub(crate) static MESSAGES_SENT: Counter = Counter::new();
/// Their bytes.
pub(crate) static BYTES_SENT: Counter = Counter::new();
/// Messages of contiguous kind this process received.
pub(crate) static MESSAGES_RECEIVED: Counter = Counter::new();
/// Their bytes.
pub(crate) static BYTES_RECEIVED: Counter = Counter::new();
/// Custom-typed sends started.
pub(crate) static CUSTOM_SENDS: Counter = Counter::new();
/// Custom-typed messages whose lead carried them whole.
static CUSTOM_INLINE: Counter = Counter::new();
/// Regions custom-typed messages sent zero-copy, each as its own message.
static CUSTOM_ZCOPY_REGIONS: Counter = Counter::new();

/// Records the plan of a custom-typed send: the private messages that follow its lead, of
/// which `zcopy_regions` are regions sent zero-copy.
#[inline]
pub(crate) fn custom_plan(private_messages: u64, zcopy_regions: u64) {
    if private_messages == 0 {
        CUSTOM_INLINE.add(1);
    }
    CUSTOM_ZCOPY_REGIONS.add(zcopy_regions);
}

/// Operations in the engine's request table now.
static REQUESTS: Counter = Counter::new();
/// The most there were.
static REQUESTS_PEAK: Counter = Counter::new();
/// Processes of the job known failed.
pub(crate) static PEERS_FAILED: Counter = Counter::new();

/// Records the number of operations in the engine's request table.
#[inline]
pub(crate) fn requests(n: usize) {
    let n = n as u64;
    REQUESTS.set(n);
    if n > REQUESTS_PEAK.get() {
        REQUESTS_PEAK.set(n);
    }
}

/// The class of a performance variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PvarClass {
    /// A level (`MPI_T_PVAR_CLASS_LEVEL`): how many of something there are now.
    Level,
    /// The highest level seen (`MPI_T_PVAR_CLASS_HIGHWATERMARK`).
    HighWatermark,
    /// Occurrences counted (`MPI_T_PVAR_CLASS_COUNTER`).
    Counter,
}

/// One performance variable.
#[derive(Debug)]
pub struct Pvar {
    pub name: &'static str,
    pub desc: &'static str,
    pub layer: Layer,
    pub class: PvarClass,
    pub verbosity: Verbosity,
    counter: &'static Counter,
}

impl Pvar {
    /// Whether it can be neither written nor reset.
    pub fn readonly(&self) -> bool {
        self.class != PvarClass::Counter
    }

    /// Whether it is always started (cannot be started or stopped).
    pub fn continuous(&self) -> bool {
        self.class != PvarClass::Counter
    }

    /// Whether it can be read and reset in one step.
    pub fn atomic(&self) -> bool {
        self.class == PvarClass::Counter
    }
}

const fn counter(name: &'static str, desc: &'static str, c: &'static Counter) -> Pvar {
    Pvar {
        name,
        desc,
        layer: Layer::Engine,
        class: PvarClass::Counter,
        verbosity: Verbosity::UserBasic,
        counter: c,
    }
}

/// Every performance variable, by index.
pub static PVARS: &[Pvar] = &[
    counter(
        "mpicd_messages_sent",
        "Messages sent from contiguous or derived-typed buffers, point-to-point and inside \
         collectives (custom-typed sends are counted by mpicd_custom_sends)",
        &MESSAGES_SENT,
    ),
    counter(
        "mpicd_bytes_sent",
        "Bytes of the messages of mpicd_messages_sent (of a derived type: its packed size)",
        &BYTES_SENT,
    ),
    counter(
        "mpicd_messages_received",
        "Messages received into contiguous or derived-typed buffers, point-to-point and \
         inside collectives",
        &MESSAGES_RECEIVED,
    ),
    counter(
        "mpicd_bytes_received",
        "Bytes of the messages of mpicd_messages_received",
        &BYTES_RECEIVED,
    ),
    counter(
        "mpicd_custom_sends",
        "Custom-typed point-to-point sends started",
        &CUSTOM_SENDS,
    ),
    counter(
        "mpicd_custom_sends_inline",
        "Custom-typed sends whose lead message carried them whole (one eager UCX message; the \
         others add a body, region table or zero-copy region messages)",
        &CUSTOM_INLINE,
    ),
    counter(
        "mpicd_custom_zcopy_regions",
        "Regions custom-typed sends sent zero-copy, each as its own UCX message (UCX's \
         rendezvous from UCX_RNDV_THRESH up)",
        &CUSTOM_ZCOPY_REGIONS,
    ),
    Pvar {
        name: "mpicd_requests_pending",
        desc: "Operations in flight in the engine (requests not yet completed, internal ones \
               of collectives included)",
        layer: Layer::Engine,
        class: PvarClass::Level,
        verbosity: Verbosity::TunerBasic,
        counter: &REQUESTS,
    },
    Pvar {
        name: "mpicd_requests_pending_peak",
        desc: "The most operations in flight in the engine at once since the process started",
        layer: Layer::Engine,
        class: PvarClass::HighWatermark,
        verbosity: Verbosity::TunerBasic,
        counter: &REQUESTS_PEAK,
    },
    Pvar {
        name: "mpicd_peers_failed",
        desc: "Processes of the job this process knows failed",
        layer: Layer::Engine,
        class: PvarClass::Level,
        verbosity: Verbosity::UserBasic,
        counter: &PEERS_FAILED,
    },
];

/// The performance variable at `index`.
pub fn pvar(index: usize) -> ToolResult<&'static Pvar> {
    PVARS.get(index).ok_or_else(|| {
        Fault::new(
            FaultKind::InvalidIndex,
            format!("no performance variable {index}"),
        )
    })
}

/// The index of the performance variable named `name` of class `class`.
pub fn index_of(name: &str, class: PvarClass) -> ToolResult<usize> {
    let names = PVARS
        .iter()
        .map(|p| if p.class == class { p.name } else { "" });
    super::find_name(names, name, "performance variable of that class")
}

/// A handle's state in its session.
#[derive(Debug, Clone)]
struct PvarHandle {
    index: usize,
    running: bool,
    /// What it counted while started before (or what was written).
    kept: u64,
    /// The counter's value when it last started.
    base: u64,
}

impl PvarHandle {
    fn pvar(&self) -> &'static Pvar {
        &PVARS[self.index]
    }

    fn value(&self) -> u64 {
        let now = self.pvar().counter.get();
        match self.pvar().class {
            PvarClass::Counter if self.running => self.kept.wrapping_add(now - self.base),
            PvarClass::Counter => self.kept,
            PvarClass::Level | PvarClass::HighWatermark => now,
        }
    }

    fn set(&mut self, v: u64) {
        self.kept = v;
        self.base = self.pvar().counter.get();
    }
}

/// A session: handles of performance variables, independent of other sessions'.
#[derive(Debug, Default)]
pub(super) struct Session {
    handles: BTreeMap<Handle, PvarHandle>,
}

/// Which handles of a session an operation applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    One(Handle),
    /// `MPI_T_PVAR_ALL_HANDLES`: those for which it makes sense.
    All,
}

/// A new session.
pub fn session_create() -> ToolResult<Handle> {
    let mut o = initialized()?;
    let h = o.handle(HandleKind::Session);
    o.sessions.insert(h, Session::default());
    Ok(h)
}

/// Frees a session and its handles.
pub fn session_free(session: Handle) -> ToolResult<()> {
    let mut o = initialized()?;
    o.sessions
        .remove(&session)
        .map(drop)
        .ok_or_else(|| bad_session(session))
}

fn bad_session(session: Handle) -> Fault {
    Fault::new(
        FaultKind::InvalidSession,
        format!("{session:#x} is not a performance variable session"),
    )
}

fn bad_handle(handle: Handle) -> Fault {
    Fault::new(
        FaultKind::InvalidHandle,
        format!("{handle:#x} is not a performance variable handle of this session"),
    )
}

/// Runs `f` on the session `session`.
fn with_session<R>(
    session: Handle,
    f: impl FnOnce(&mut Session) -> ToolResult<R>,
) -> ToolResult<R> {
    let mut o = initialized()?;
    let s = o
        .sessions
        .get_mut(&session)
        .ok_or_else(|| bad_session(session))?;
    f(s)
}

/// Runs `f` on handle `handle` of session `session`.
fn with_handle<R>(
    session: Handle,
    handle: Handle,
    f: impl FnOnce(&mut PvarHandle) -> ToolResult<R>,
) -> ToolResult<R> {
    with_session(session, |s| {
        f(s.handles
            .get_mut(&handle)
            .ok_or_else(|| bad_handle(handle))?)
    })
}

/// A handle on the variable at `index` in `session` (bound to no object), and its number of
/// elements (1).
pub fn handle_alloc(session: Handle, index: usize) -> ToolResult<(Handle, usize)> {
    let p = pvar(index)?;
    let mut o = initialized()?;
    if !o.sessions.contains_key(&session) {
        return Err(bad_session(session));
    }
    let h = o.handle(HandleKind::Pvar);
    let state = PvarHandle {
        index,
        running: p.continuous(),
        kept: 0,
        base: p.counter.get(),
    };
    if let Some(s) = o.sessions.get_mut(&session) {
        s.handles.insert(h, state);
    }
    Ok((h, 1))
}

/// Frees a handle of `session`.
pub fn handle_free(session: Handle, handle: Handle) -> ToolResult<()> {
    with_session(session, |s| {
        s.handles
            .remove(&handle)
            .map(drop)
            .ok_or_else(|| bad_handle(handle))
    })
}

fn no_start_stop(h: &PvarHandle) -> Fault {
    Fault::new(
        FaultKind::PvarNoStartStop,
        format!("{} is continuous", h.pvar().name),
    )
}

fn no_write(h: &PvarHandle) -> Fault {
    Fault::new(
        FaultKind::PvarNoWrite,
        format!("{} is read-only", h.pvar().name),
    )
}

/// Applies `f` to the target's handles; with [`Target::All`], to those `applies` accepts.
fn apply(
    session: Handle,
    target: Target,
    applies: fn(&Pvar) -> bool,
    f: impl Fn(&mut PvarHandle) -> ToolResult<()>,
) -> ToolResult<()> {
    match target {
        Target::One(h) => with_handle(session, h, f),
        Target::All => with_session(session, |s| {
            s.handles
                .values_mut()
                .filter(|h| applies(h.pvar()))
                .try_for_each(f)
        }),
    }
}

/// Starts counting (a started handle stays started).
pub fn start(session: Handle, target: Target) -> ToolResult<()> {
    apply(
        session,
        target,
        |p| !p.continuous(),
        |h| {
            if h.pvar().continuous() {
                return Err(no_start_stop(h));
            }
            if !h.running {
                h.running = true;
                h.base = h.pvar().counter.get();
            }
            Ok(())
        },
    )
}

/// Stops counting, keeping what was counted.
pub fn stop(session: Handle, target: Target) -> ToolResult<()> {
    apply(
        session,
        target,
        |p| !p.continuous(),
        |h| {
            if h.pvar().continuous() {
                return Err(no_start_stop(h));
            }
            if h.running {
                h.kept = h.value();
                h.running = false;
            }
            Ok(())
        },
    )
}

/// Sets the count back to 0.
pub fn reset(session: Handle, target: Target) -> ToolResult<()> {
    apply(
        session,
        target,
        |p| !p.readonly(),
        |h| {
            if h.pvar().readonly() {
                return Err(no_write(h));
            }
            h.set(0);
            Ok(())
        },
    )
}

/// The value of a handle.
pub fn read(session: Handle, handle: Handle) -> ToolResult<u64> {
    with_handle(session, handle, |h| Ok(h.value()))
}

/// The value of a handle, which is reset to 0 in the same step.
pub fn readreset(session: Handle, handle: Handle) -> ToolResult<u64> {
    with_handle(session, handle, |h| {
        if h.pvar().readonly() {
            return Err(no_write(h));
        }
        if !h.pvar().atomic() {
            return Err(Fault::new(
                FaultKind::PvarNoAtomic,
                format!("{} cannot be read and reset at once", h.pvar().name),
            ));
        }
        let v = h.value();
        h.set(0);
        Ok(v)
    })
}

/// Sets the value of a handle (what it counts from).
pub fn write(session: Handle, handle: Handle, value: u64) -> ToolResult<()> {
    with_handle(session, handle, |h| {
        if h.pvar().readonly() {
            return Err(no_write(h));
        }
        h.set(value);
        Ok(())
    })
}

/// The variable a handle of `session` is for.
pub fn handle_pvar(session: Handle, handle: Handle) -> ToolResult<&'static Pvar> {
    with_handle(session, handle, |h| Ok(h.pvar()))
}
