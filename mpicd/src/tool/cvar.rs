//! The control variables: one per row of the configuration table ([`crate::config::KNOBS`],
//! then [`crate::config::UCX_SETTINGS`]), in that order, under the same names, with the row's
//! doc as description. A number knob is an `unsigned long long`, a switch an `int` (0 or 1),
//! `MPICD_WAIT` an `int` described by the enumeration [`WAIT_ENUM`], any other text knob and
//! every UCX setting a string.
//!
//! The runtime reads its knobs once, when it starts: from then on (after its finalize too) a
//! read gives the values it took ([`record_in_effect`]); before, the values the environment
//! gives now, which a start would take. The knobs that can change while the runtime runs
//! ([`WRITABLE`]) can be written then: the layer that owns one gives the function that applies
//! a new value ([`make_writable`]) when the runtime starts, and a read gives the value written
//! last. The others never change while the process runs (the runtime would not see it), so a
//! write fails with `CvarSetNever`.

use super::{initialized, Fault, FaultKind, Handle, HandleKind, ToolResult, Verbosity};
use crate::config::{Entry, Kind, Knob, Layer, COLL_ALGORITHMS, KNOBS, UCX_SETTINGS, WAIT};
use std::sync::{Mutex, OnceLock};

/// An enumeration: the named values of an `int` variable.
#[derive(Debug, PartialEq, Eq)]
pub struct Enumeration {
    pub name: &'static str,
    /// Each item's value and name.
    pub items: &'static [(i32, &'static str)],
}

/// The policies of `MPICD_WAIT`, as the values of its `int` variable.
pub static WAIT_ENUM: Enumeration = Enumeration {
    name: "MPICD_WAIT",
    items: &[(0, "spin"), (1, "yield"), (2, "sleep"), (3, "auto")],
};

/// Every enumeration, by index (the C handle of one is made from its index).
pub static ENUMS: &[&Enumeration] = &[&WAIT_ENUM];

/// The C type of a control variable's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CvarType {
    /// `int`.
    Int,
    /// `int` with named values.
    Choice(&'static Enumeration),
    /// `unsigned long long`.
    UnsignedLongLong,
    /// A string of `char`.
    Text,
}

/// Whether a control variable may change while the process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CvarScope {
    /// Never changes (`MPI_T_SCOPE_CONSTANT`): read by a program other than the runtime.
    Constant,
    /// Read-only, but a runtime started again reads it anew (`MPI_T_SCOPE_READONLY`).
    Readonly,
    /// Writable while the runtime runs, to the same value on every process
    /// (`MPI_T_SCOPE_ALL_EQ`).
    AllEq,
}

/// The knobs a tool can write while the runtime runs: the forced collective algorithms (all
/// processes must write the same value between the same collectives).
pub const WRITABLE: &[&str] = &[COLL_ALGORITHMS.name];

/// The longest value of a writable text variable, terminating NUL included (its count).
pub const WRITABLE_TEXT_MAX: usize = 256;

/// One control variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cvar {
    pub name: &'static str,
    pub desc: &'static str,
    pub layer: Layer,
    pub ty: CvarType,
    pub verbosity: Verbosity,
    pub scope: CvarScope,
    /// The row of the configuration table (for a number or a switch: how to parse it).
    knob: Option<&'static crate::config::Knob>,
}

/// A control variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CvarValue {
    Int(i32),
    UnsignedLongLong(u64),
    Text(String),
}

/// Whether the runtime reads variables of `layer` (the others are read by other programs).
fn read_by_runtime(layer: Layer) -> bool {
    matches!(
        layer,
        Layer::Transport | Layer::Plan | Layer::Ops | Layer::Engine
    )
}

/// Every control variable, by index.
pub fn cvars() -> &'static [Cvar] {
    static CVARS: OnceLock<Vec<Cvar>> = OnceLock::new();
    CVARS.get_or_init(|| {
        let knobs = KNOBS.iter().map(|k| {
            let ty = match k.kind {
                _ if k.name == WAIT.name => CvarType::Choice(&WAIT_ENUM),
                Kind::Bytes { .. } | Kind::Count { .. } => CvarType::UnsignedLongLong,
                Kind::Switch => CvarType::Int,
                Kind::Text => CvarType::Text,
            };
            let (verbosity, scope) = match k.layer {
                _ if WRITABLE.contains(&k.name) => (Verbosity::TunerBasic, CvarScope::AllEq),
                Layer::Engine if k.name == WAIT.name => (Verbosity::UserBasic, CvarScope::Readonly),
                l if read_by_runtime(l) => (Verbosity::TunerBasic, CvarScope::Readonly),
                Layer::Python | Layer::Tools => (Verbosity::UserDetail, CvarScope::Constant),
                _ => (Verbosity::MpidevAll, CvarScope::Constant),
            };
            Cvar {
                name: k.name,
                desc: k.doc,
                layer: k.layer,
                ty,
                verbosity,
                scope,
                knob: Some(k),
            }
        });
        let ucx = UCX_SETTINGS.iter().map(|s| Cvar {
            name: s.name,
            desc: s.reason,
            layer: Layer::Transport,
            ty: CvarType::Text,
            verbosity: Verbosity::TunerDetail,
            scope: CvarScope::Readonly,
            knob: None,
        });
        knobs.chain(ucx).collect()
    })
}

/// The control variable at `index`.
pub fn cvar(index: usize) -> ToolResult<&'static Cvar> {
    cvars().get(index).ok_or_else(|| {
        Fault::new(
            FaultKind::InvalidIndex,
            format!("no control variable {index}"),
        )
    })
}

/// The index of the control variable named `name`.
pub fn index_of(name: &str) -> ToolResult<usize> {
    super::find_name(cvars().iter().map(|c| c.name), name, "control variable")
}

/// The values the runtime took when it last started (the configuration dump's, in order).
static IN_EFFECT: Mutex<Option<Vec<Entry>>> = Mutex::new(None);

/// Records the configuration the runtime starts with: what reads give from now on.
pub(crate) fn record_in_effect() {
    *IN_EFFECT.lock().unwrap_or_else(|e| e.into_inner()) = Some(crate::config::dump());
    WRITTEN.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// A function that gives a running runtime a new value of a knob.
pub(crate) type Apply = fn(&str) -> crate::error::Result<()>;

/// The writers of the [`WRITABLE`] knobs, while a runtime runs.
static WRITERS: Mutex<Vec<(&'static str, Apply)>> = Mutex::new(Vec::new());

/// The values tools wrote since the runtime started, by variable index.
static WRITTEN: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());

/// Makes `knob` writable (it must be one of [`WRITABLE`]): a write calls `apply`.
pub(crate) fn make_writable(knob: &Knob, apply: Apply) {
    let mut w = WRITERS.lock().unwrap_or_else(|e| e.into_inner());
    w.retain(|(n, _)| *n != knob.name);
    w.push((knob.name, apply));
}

/// Ends the writes: the runtime finalizes.
pub(crate) fn end_writes() {
    WRITERS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The text in effect of the variable at `index`: the one a tool wrote last, else the
/// runtime's if it started and reads the variable, else the environment's now (or the
/// default).
fn text_in_effect(index: usize, cvar: &Cvar) -> String {
    let written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, text)) = written.iter().find(|(i, _)| *i == index) {
        return text.clone();
    }
    drop(written);
    let taken = IN_EFFECT.lock().unwrap_or_else(|e| e.into_inner());
    let from = |entries: &[Entry]| entries.get(index).map(|e| e.current().to_string());
    let runtime = taken
        .as_deref()
        .filter(|_| read_by_runtime(cvar.layer))
        .and_then(from);
    runtime
        .or_else(|| from(&crate::config::dump()))
        .unwrap_or_default()
}

/// The value in effect of the variable at `index` (a value the runtime would refuse reads as
/// the default).
pub fn value(index: usize) -> ToolResult<CvarValue> {
    let cvar = cvar(index)?;
    let text = text_in_effect(index, cvar);
    let default = cvar.knob.map_or("", |k| k.default);
    Ok(match (cvar.ty, cvar.knob) {
        (CvarType::Choice(e), _) => {
            let pick = |t: &str| e.items.iter().find(|(_, n)| *n == t.trim()).map(|i| i.0);
            CvarValue::Int(pick(&text).or_else(|| pick(default)).unwrap_or(0))
        }
        (CvarType::Int, Some(k)) => {
            let on = k.switch(Some(&text)).or_else(|_| k.switch(None));
            CvarValue::Int(i32::from(on.unwrap_or(false)))
        }
        (CvarType::UnsignedLongLong, Some(k)) => {
            let n = k.number(Some(&text)).or_else(|_| k.number(None));
            CvarValue::UnsignedLongLong(n.unwrap_or(0) as u64)
        }
        _ => CvarValue::Text(text),
    })
}

/// The number of elements of the variable at `index`: 1, or for a string the bytes of its
/// value with the terminating NUL (for a writable one, at least [`WRITABLE_TEXT_MAX`]).
pub fn count(index: usize) -> ToolResult<usize> {
    let writable = WRITABLE.contains(&cvar(index)?.name);
    Ok(match value(index)? {
        CvarValue::Text(t) if writable => (t.len() + 1).max(WRITABLE_TEXT_MAX),
        CvarValue::Text(t) => t.len() + 1,
        _ => 1,
    })
}

/// A handle on the variable at `index` (bound to no object) and its number of elements.
pub fn handle_alloc(index: usize) -> ToolResult<(Handle, usize)> {
    let count = count(index)?;
    let mut o = initialized()?;
    let h = o.handle(HandleKind::Cvar);
    o.cvars.insert(h, (index, count));
    Ok((h, count))
}

/// Frees a handle.
pub fn handle_free(handle: Handle) -> ToolResult<()> {
    let mut o = initialized()?;
    o.cvars
        .remove(&handle)
        .map(drop)
        .ok_or_else(|| bad_handle(handle))
}

fn bad_handle(handle: Handle) -> Fault {
    Fault::new(
        FaultKind::InvalidHandle,
        format!("{handle:#x} is not a control variable handle"),
    )
}

/// The index of the variable `handle` is for.
pub fn handle_index(handle: Handle) -> ToolResult<usize> {
    let o = initialized()?;
    o.cvars
        .get(&handle)
        .map(|&(i, _)| i)
        .ok_or_else(|| bad_handle(handle))
}

/// The number of elements of `handle`, given when it was allocated.
pub fn handle_count(handle: Handle) -> ToolResult<usize> {
    let o = initialized()?;
    o.cvars
        .get(&handle)
        .map(|&(_, n)| n)
        .ok_or_else(|| bad_handle(handle))
}

/// Writes `text` to the variable of `handle`, which must be one of [`WRITABLE`], while the
/// runtime runs; a value the runtime refuses fails with `Invalid`.
pub fn write(handle: Handle, text: &str) -> ToolResult<()> {
    let index = handle_index(handle)?;
    let name = cvars()[index].name;
    if !WRITABLE.contains(&name) {
        return Err(Fault::new(
            FaultKind::CvarSetNever,
            format!("{name} is read once, when the runtime starts: set it in the environment"),
        ));
    }
    let apply = WRITERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, a)| a);
    let apply = apply.ok_or_else(|| {
        Fault::new(
            FaultKind::CvarSetNotNow,
            format!("{name} can be written only while the runtime runs"),
        )
    })?;
    apply(text).map_err(|e| Fault::new(FaultKind::Invalid, e.to_string()))?;
    let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    written.retain(|(i, _)| *i != index);
    written.push((index, text.to_string()));
    Ok(())
}
