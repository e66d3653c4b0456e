//! The tool information interface (MPI_T): what a tool can learn about and measure in this
//! runtime, independent of the C binding. It owns
//!
//! - the interface's own life ([`init`], [`finalize`]): reference-counted, usable before the
//!   runtime starts and after it ends, and the table of the objects a tool allocates
//!   (variable handles, sessions, event registrations), which the last finalize frees;
//! - [`cvar`]: the control variables, one per row of [`crate::config`]'s table;
//! - [`pvar`]: the performance variables, counters the engine keeps, and their sessions;
//! - [`event`]: the timestamp source and the event types with their registrations;
//! - the categories that group all of them by the layer that uses them ([`categories`]).
//!
//! Errors are [`Fault`]s: the MPI_T return codes are their own space (`MPI_T_ERR_*`), never
//! passed to an error handler, so they do not go through [`crate::Error`].

pub mod cvar;
pub mod event;
pub mod pvar;

use crate::config::Layer;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard};

/// Why an MPI_T call failed (each is one `MPI_T_ERR_*` class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The interface is not initialized (`MPI_T_ERR_NOT_INITIALIZED`).
    NotInitialized,
    /// No variable, category, enumeration item, event type or source of that index.
    InvalidIndex,
    /// The handle names no live object of its kind (or not one of that session).
    InvalidHandle,
    /// The session names no live session.
    InvalidSession,
    /// No variable, category or event type of that name.
    InvalidName,
    /// This control variable can never be written.
    CvarSetNever,
    /// This control variable can be written only while the runtime runs.
    CvarSetNotNow,
    /// This performance variable is read-only: it cannot be written or reset.
    PvarNoWrite,
    /// This performance variable is continuous: it cannot be started or stopped.
    PvarNoStartStop,
    /// This performance variable cannot be read and reset in one step.
    PvarNoAtomic,
    /// A bad argument otherwise (a null buffer, an unknown safety level).
    Invalid,
}

/// A failed MPI_T call: its class and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub detail: String,
}

impl Fault {
    /// A fault of `kind` explained by `detail`.
    pub fn new(kind: FaultKind, detail: impl Into<String>) -> Fault {
        Fault {
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

/// The result of an MPI_T operation.
pub type ToolResult<T> = std::result::Result<T, Fault>;

/// The value of a handle a tool holds: never 0 (the null handles) nor 1
/// (`MPI_T_PVAR_ALL_HANDLES`), never reused, each kind in its own range.
pub type Handle = usize;

/// The kinds of handle, each with its own range of values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HandleKind {
    Cvar = 0xC,
    Session = 0xD,
    Pvar = 0xE,
    Registration = 0xF,
}

/// The objects a tool allocated, while the interface is initialized.
#[derive(Default)]
struct Objects {
    /// `MPI_T_init_thread` calls not yet matched by `MPI_T_finalize`.
    inits: u32,
    /// The last handle number given (handles are never reused).
    last: usize,
    /// Control variable handles: the variable's index and the handle's count of elements.
    cvars: BTreeMap<Handle, (usize, usize)>,
    /// Performance variable sessions and their handles.
    sessions: BTreeMap<Handle, pvar::Session>,
    /// Event registrations.
    registrations: BTreeMap<Handle, event::Registration>,
}

impl Objects {
    /// A new handle of `kind`.
    fn handle(&mut self, kind: HandleKind) -> Handle {
        self.last += 1;
        ((kind as usize) << 44) | self.last
    }
}

static OBJECTS: Mutex<Objects> = Mutex::new(Objects {
    inits: 0,
    last: 0,
    cvars: BTreeMap::new(),
    sessions: BTreeMap::new(),
    registrations: BTreeMap::new(),
});

fn objects() -> MutexGuard<'static, Objects> {
    OBJECTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The objects, if the interface is initialized.
fn initialized() -> ToolResult<MutexGuard<'static, Objects>> {
    let o = objects();
    if o.inits == 0 {
        return Err(Fault::new(
            FaultKind::NotInitialized,
            "MPI_T_init_thread has not been called (or every call was finalized)",
        ));
    }
    Ok(o)
}

/// Fails unless the interface is initialized.
pub fn check_initialized() -> ToolResult<()> {
    initialized().map(drop)
}

/// Initializes the interface (once more); the number of initializations now open.
pub fn init() -> u32 {
    let mut o = objects();
    o.inits = o.inits.saturating_add(1);
    o.inits
}

/// Ends one initialization; the last one frees every handle, session and registration.
pub fn finalize() -> ToolResult<()> {
    let mut o = initialized()?;
    o.inits -= 1;
    if o.inits == 0 {
        o.cvars.clear();
        o.sessions.clear();
        event::forget(std::mem::take(&mut o.registrations).len());
    }
    Ok(())
}

/// A category: variables and event types of one layer of mpicd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub name: String,
    pub desc: &'static str,
    pub layer: Layer,
    /// Indices of its control variables, performance variables and event types.
    pub cvars: Vec<usize>,
    pub pvars: Vec<usize>,
    pub events: Vec<usize>,
}

/// The layers, in the order of their categories.
const LAYERS: [(Layer, &str); 8] = [
    (
        Layer::Transport,
        "UCX context, worker and endpoints; the UCX settings mpicd applies",
    ),
    (Layer::Plan, "the wire plan of a custom-typed message"),
    (Layer::Ops, "the send and receive operations"),
    (
        Layer::Engine,
        "matching, routes to peers, progress, requests, peer failures",
    ),
    (
        Layer::Python,
        "the Python package (it reads its variables at import)",
    ),
    (Layer::Tools, "the compiler wrappers and the install script"),
    (Layer::Tests, "test scripts and test programs"),
    (Layer::Bench, "benchmark scripts"),
];

/// Every category (one per layer that has a variable or an event type), in index order. The
/// categories never change while the process runs.
pub fn categories() -> &'static [Category] {
    static CATEGORIES: std::sync::OnceLock<Vec<Category>> = std::sync::OnceLock::new();
    CATEGORIES.get_or_init(|| {
        LAYERS
            .iter()
            .map(|&(layer, desc)| Category {
                name: format!("mpicd_{}", layer.name()),
                desc,
                layer,
                cvars: indices(cvar::cvars().iter().map(|c| c.layer), layer),
                pvars: indices(pvar::PVARS.iter().map(|p| p.layer), layer),
                events: indices(event::EVENTS.iter().map(|e| e.layer), layer),
            })
            .filter(|c| !(c.cvars.is_empty() && c.pvars.is_empty() && c.events.is_empty()))
            .collect()
    })
}

/// The positions of `layer` among `layers`.
fn indices(layers: impl Iterator<Item = Layer>, layer: Layer) -> Vec<usize> {
    layers
        .enumerate()
        .filter(|&(_, l)| l == layer)
        .map(|(i, _)| i)
        .collect()
}

/// The category at `index`.
pub fn category(index: usize) -> ToolResult<&'static Category> {
    categories()
        .get(index)
        .ok_or_else(|| Fault::new(FaultKind::InvalidIndex, format!("no category {index}")))
}

/// The index of the category named `name`.
pub fn category_index(name: &str) -> ToolResult<usize> {
    categories()
        .iter()
        .position(|c| c.name == name)
        .ok_or_else(|| Fault::new(FaultKind::InvalidName, format!("no category {name}")))
}

/// How much detail a variable or event type is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    UserBasic,
    UserDetail,
    TunerBasic,
    TunerDetail,
    MpidevBasic,
    MpidevAll,
}

/// The index of `name` among `names` (of objects of kind `what`), or an invalid-name fault.
pub(crate) fn find_name<'a>(
    names: impl Iterator<Item = &'a str>,
    name: &str,
    what: &str,
) -> ToolResult<usize> {
    names
        .into_iter()
        .position(|n| n == name)
        .ok_or_else(|| Fault::new(FaultKind::InvalidName, format!("no {what} named {name}")))
}

#[cfg(test)]
mod tests;
