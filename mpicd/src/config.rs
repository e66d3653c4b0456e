//! The configuration of mpicd: one table ([`KNOBS`], rows in `config/table.rs`) of every
//! `MPICD_*` environment variable, with its default, meaning, the layer that reads it and the
//! parser that checks it, and one table ([`UCX_SETTINGS`]) of the UCX variables mpicd sets when
//! the user has not, with the reason of each. The runtime's knobs are read once, at init, into
//! the typed [`Config`] that is passed down; [`dump`] and [`render`] show every row with its
//! current value (`mpicd-info`, `MPIX_Config_string`), and [`warn_unknown_once`] reports
//! `MPICD_*` variables that match no row, which catches typos.
//!
//! This module sits at the bottom of the crate: it imports only [`crate::error`], and knows
//! nothing of the layers that use its values (it cannot see the wire format, so the one limit
//! it shares with it, [`MAX_INLINE_BYTES`], is stated here and checked by the wire layer).

mod table;

pub use table::{
    COLL_ALGORITHMS, COLL_NODE, CONNECT_TIMEOUT, FAULT_AGREE_EXIT, INLINE_BYTES, INLINE_SPLIT,
    KNOBS, LOCAL_STREAM, NODE_LOCAL, PARENT_PORT, PEER_ERRORS, UCX_SETTINGS, WAIT, ZCOPY_DEPTH,
    ZCOPY_THRESHOLD,
};

use crate::error::{Error, Result};
use std::fmt;
use std::sync::Once;

/// The prefix of every mpicd variable.
pub const PREFIX: &str = "MPICD_";

/// The most stream bytes a lead message can carry: the 8 KiB lead less its 64-byte header. The
/// wire layer owns both numbers; its unit test checks that this equals `LEAD_MAX -
/// HEADER_BYTES`.
pub const MAX_INLINE_BYTES: usize = 8192 - 64;

/// The part of mpicd that reads a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// UCX context, worker and endpoints.
    Transport,
    /// The wire plan of a custom-typed message.
    Plan,
    /// The send and receive operations.
    Ops,
    /// Matching, routes to peers, progress.
    Engine,
    /// The Python package (which reads its own variables, at import).
    Python,
    /// The compiler wrappers and the install script.
    Tools,
    /// Test scripts and test programs.
    Tests,
    /// Benchmark scripts.
    Bench,
}

impl Layer {
    /// The name printed in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Transport => "transport",
            Layer::Plan => "plan",
            Layer::Ops => "ops",
            Layer::Engine => "engine",
            Layer::Python => "python",
            Layer::Tools => "tools",
            Layer::Tests => "tests",
            Layer::Bench => "bench",
        }
    }
}

/// What a variable's value may be, and how it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A decimal number of bytes within `min..=max`.
    Bytes { min: usize, max: usize },
    /// A decimal count within `min..=max`.
    Count { min: usize, max: usize },
    /// `0` or `1`.
    Switch,
    /// Any text; its reader checks it.
    Text,
}

impl Kind {
    /// What the values may be, in words.
    pub fn describe(self) -> String {
        let range = |unit: &str, min: usize, max: usize| match (min, max) {
            (0, usize::MAX) => unit.to_string(),
            (min, usize::MAX) => format!("{unit}, at least {min}"),
            (min, max) => format!("{unit}, {min} to {max}"),
        };
        match self {
            Kind::Bytes { min, max } => range("bytes", min, max),
            Kind::Count { min, max } => range("count", min, max),
            Kind::Switch => "0 or 1".to_string(),
            Kind::Text => "text".to_string(),
        }
    }
}

/// One row of the table: an `MPICD_*` variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    /// The full name, prefix included.
    pub name: &'static str,
    /// The value when the variable is unset, as text (empty: none; the doc says what then).
    pub default: &'static str,
    /// Who reads it.
    pub layer: Layer,
    /// How its value is checked.
    pub kind: Kind,
    /// What it means (one line).
    pub doc: &'static str,
}

impl Knob {
    /// The value of this number knob: `text` (from the environment) or the default.
    pub fn number(&self, text: Option<&str>) -> Result<usize> {
        let text = text.unwrap_or(self.default);
        let name = self.name;
        let (min, max, what) = match self.kind {
            Kind::Bytes { min, max } => (min, max, "a number of bytes"),
            Kind::Count { min, max } => (min, max, "a count"),
            Kind::Switch | Kind::Text => {
                return Err(Error::InvalidArgument(format!(
                    "{name} is not a number knob"
                )))
            }
        };
        let v: usize = text
            .trim()
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("{name}={text} is not {what}")))?;
        if v < min {
            return Err(Error::InvalidArgument(format!(
                "{name}={v} is below the minimum {min}"
            )));
        }
        if v > max {
            return Err(Error::InvalidArgument(format!(
                "{name}={v} is above the maximum {max}"
            )));
        }
        Ok(v)
    }

    /// The value of this switch: `text` (from the environment) or the default.
    pub fn switch(&self, text: Option<&str>) -> Result<bool> {
        let text = text.unwrap_or(self.default);
        let name = self.name;
        if self.kind != Kind::Switch {
            return Err(Error::InvalidArgument(format!("{name} is not a switch")));
        }
        match text.trim() {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(Error::InvalidArgument(format!(
                "{name}={text} is neither 0 nor 1"
            ))),
        }
    }

    /// Checks `text` against this knob's kind.
    pub fn check(&self, text: &str) -> Result<()> {
        match self.kind {
            Kind::Bytes { .. } | Kind::Count { .. } => self.number(Some(text)).map(drop),
            Kind::Switch => self.switch(Some(text)).map(drop),
            Kind::Text => Ok(()),
        }
    }
}

/// How mpicd applies a UCX setting the user has not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apply {
    /// Set in this process's environment before UCX starts: UCX reads transport settings only
    /// from there, when it opens a transport.
    Environment,
    /// Given to the UCP context's configuration (`ucp_config_modify`, without the `UCX_`
    /// prefix), only when [`PEER_ERRORS`] is on.
    ContextWithPeerErrors,
}

/// One UCX variable mpicd sets when the environment does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UcxSetting {
    /// The full name, `UCX_` prefix included.
    pub name: &'static str,
    /// The value mpicd gives it.
    pub value: &'static str,
    /// Where mpicd sets it.
    pub apply: Apply,
    /// Why (one line).
    pub reason: &'static str,
}

impl UcxSetting {
    /// The name without `UCX_`, as `ucp_config_modify` takes it.
    pub fn context_name(&self) -> &'static str {
        self.name.strip_prefix("UCX_").unwrap_or(self.name)
    }
}

/// The runtime's knobs, read once at init and passed down to the layers that use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The longest stream a lead message carries whole ([`INLINE_BYTES`]).
    pub inline_bytes: usize,
    /// Stream bytes the lead carries when a body follows ([`INLINE_SPLIT`]).
    pub inline_split: usize,
    /// Smallest region sent zero-copy to a remote receiver ([`ZCOPY_THRESHOLD`]).
    pub zcopy_threshold: usize,
    /// Zero-copy region messages in flight per operation ([`ZCOPY_DEPTH`]).
    pub zcopy_depth: usize,
    /// Coalesce every region for receivers on this node ([`NODE_LOCAL`]).
    pub node_local: bool,
    /// Contiguous sends from this size to this node go through the stream datatype
    /// ([`LOCAL_STREAM`]; 0: none).
    pub local_stream: usize,
    /// Most bytes a member puts in a blocking collective through the node's shared memory
    /// ([`COLL_NODE`]; 0: none go that way).
    pub coll_node: usize,
    /// Detect dead peers through UCX ([`PEER_ERRORS`]).
    pub peer_errors: bool,
    /// What progress does when idle ([`WAIT`]).
    pub wait: Wait,
}

/// What a process does when progress finds nothing to do ([`WAIT`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Poll again at once.
    Spin,
    /// Give the core away first (`sched_yield`).
    Yield,
    /// Yield, then sleep on the transport's event descriptor when a wait stays idle.
    Sleep,
    /// Sleep when the node's processes outnumber its cores, else spin.
    Auto,
}

impl Wait {
    fn parse(text: Option<&str>) -> Result<Wait> {
        match text.map(str::trim).unwrap_or(WAIT.default) {
            "spin" => Ok(Wait::Spin),
            "yield" => Ok(Wait::Yield),
            "sleep" => Ok(Wait::Sleep),
            "auto" => Ok(Wait::Auto),
            other => Err(Error::InvalidArgument(format!(
                "{}={other} is not spin, yield, sleep or auto",
                WAIT.name
            ))),
        }
    }
}

impl Config {
    /// The table's defaults overridden by the environment's `MPICD_*` variables.
    pub fn from_env() -> Result<Config> {
        Config::from_lookup(env_text)
    }

    /// The table's defaults overridden by what `lookup` returns for a variable's name.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let number = |k: &Knob| k.number(lookup(k.name).as_deref());
        let switch = |k: &Knob| k.switch(lookup(k.name).as_deref());
        if let Some(text) = lookup(COLL_ALGORITHMS.name) {
            check_pairs(&COLL_ALGORITHMS, &text)?;
        }
        // Read where they are used (crate::dynamic), checked here with the others.
        number(&CONNECT_TIMEOUT)?;
        number(&FAULT_AGREE_EXIT)?;
        if let Some(text) = lookup(PARENT_PORT.name) {
            if !text.is_empty() && !text.starts_with("mpicd-port:") {
                return Err(Error::InvalidArgument(format!(
                    "{}={text} is not a port name",
                    PARENT_PORT.name
                )));
            }
        }
        Ok(Config {
            inline_bytes: number(&INLINE_BYTES)?,
            inline_split: number(&INLINE_SPLIT)?,
            zcopy_threshold: number(&ZCOPY_THRESHOLD)?,
            zcopy_depth: number(&ZCOPY_DEPTH)?,
            node_local: switch(&NODE_LOCAL)?,
            local_stream: number(&LOCAL_STREAM)?,
            coll_node: number(&COLL_NODE)?,
            peer_errors: switch(&PEER_ERRORS)?,
            wait: Wait::parse(lookup(WAIT.name).as_deref())?,
        })
    }
}

impl Default for Config {
    /// The table's defaults.
    fn default() -> Config {
        Config::from_lookup(|_| None).expect("the table's defaults parse (checked by its tests)")
    }
}

/// Checks that `text` is `name=value` pairs separated by commas (the collectives check the
/// names themselves when they start).
fn check_pairs(knob: &Knob, text: &str) -> Result<()> {
    let word = |w: &str| {
        !w.trim().is_empty()
            && w.trim()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let bad = text
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .find(|p| !p.split_once('=').is_some_and(|(a, b)| word(a) && word(b)));
    match bad {
        Some(p) => Err(Error::InvalidArgument(format!(
            "{}: `{p}` is not name=value",
            knob.name
        ))),
        None => Ok(()),
    }
}

/// A variable's value in this process's environment (lossy for text that is not UTF-8).
fn env_text(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// One row of the dump: a variable of either table with its current value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    /// The environment's value; `None` when unset (the default applies).
    pub value: Option<String>,
    /// The default (for a UCX variable: the value mpicd gives it).
    pub default: &'static str,
    pub layer: Layer,
    /// What the values may be (for a UCX variable: how mpicd sets it).
    pub values: String,
    pub doc: &'static str,
    /// Why the environment's value is rejected, if it is.
    pub problem: Option<String>,
}

impl Entry {
    /// The value in effect: the environment's, or the default.
    pub fn current(&self) -> &str {
        self.value.as_deref().unwrap_or(self.default)
    }
}

/// Every row of both tables with its value in this process's environment.
pub fn dump() -> Vec<Entry> {
    dump_from(env_text)
}

fn dump_from(lookup: impl Fn(&str) -> Option<String>) -> Vec<Entry> {
    let knobs = KNOBS.iter().map(|k| {
        let value = lookup(k.name);
        let problem = value.as_deref().and_then(|v| k.check(v).err());
        Entry {
            name: k.name,
            value,
            default: k.default,
            layer: k.layer,
            values: k.kind.describe(),
            doc: k.doc,
            problem: problem.map(|e| match e {
                Error::InvalidArgument(why) => why,
                other => other.to_string(),
            }),
        }
    });
    let ucx = UCX_SETTINGS.iter().map(|s| Entry {
        name: s.name,
        value: lookup(s.name),
        default: s.value,
        layer: Layer::Transport,
        values: match s.apply {
            Apply::Environment => "UCX, set before UCX starts".to_string(),
            Apply::ContextWithPeerErrors => "UCX, set with MPICD_PEER_ERRORS=1".to_string(),
        },
        doc: s.reason,
        problem: None,
    });
    knobs.chain(ucx).collect()
}

/// The dump as text, one `NAME=value` line per variable (`doc`: each preceded by `#` lines
/// with its layer, default, values and meaning), then one `#` line per unknown `MPICD_*`
/// variable of the environment. What `mpicd-info` prints and `MPIX_Config_string` returns.
pub fn render(doc: bool) -> String {
    let names = env_names();
    let unknown = unknown(names.iter().map(String::as_str));
    render_entries(&dump(), &unknown, doc)
}

/// Width of the wrapped doc lines.
const DOC_WIDTH: usize = 96;

fn render_entries(entries: &[Entry], unknown: &[Unknown<'_>], doc: bool) -> String {
    let mut out = String::new();
    for e in entries {
        if doc {
            let default = if e.default.is_empty() { "-" } else { e.default };
            out += &format!(
                "# {} [{}] default {default}; {}\n",
                e.name,
                e.layer.name(),
                e.values
            );
            for line in wrap(e.doc, DOC_WIDTH - 4) {
                out += &format!("#   {line}\n");
            }
        }
        out += &format!("{}={}", e.name, e.current());
        if let Some(problem) = &e.problem {
            out += &format!("  # invalid: {problem}");
        }
        out.push('\n');
        if doc {
            out.push('\n');
        }
    }
    for u in unknown {
        out += &format!("# {u}\n");
    }
    out
}

/// `text` cut at spaces into lines of at most `width` characters (longer words stay whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// An `MPICD_*` variable that matches no row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown<'a> {
    pub name: &'a str,
    /// The known name it is likely a typo of.
    pub closest: Option<&'static str>,
}

impl fmt::Display for Unknown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not an mpicd variable", self.name)?;
        if let Some(known) = self.closest {
            write!(f, " (did you mean {known}?)")?;
        }
        Ok(())
    }
}

/// The names among `names` that carry the `MPICD_` prefix but match no row, each with the
/// closest known name when it is a likely typo.
pub fn unknown<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Unknown<'a>> {
    names
        .into_iter()
        .filter(|n| n.starts_with(PREFIX) && !KNOBS.iter().any(|k| k.name == *n))
        .map(|name| Unknown {
            name,
            closest: closest(name),
        })
        .collect()
}

/// The known name nearest to `name` (case aside) if it is a few edits away: one edit for a
/// name of up to 7 characters after the prefix, one more per 4 characters, at most 3.
fn closest(name: &str) -> Option<&'static str> {
    let suffix = name[PREFIX.len()..].to_ascii_uppercase();
    let allowed = (suffix.len() / 4).clamp(1, 3);
    KNOBS
        .iter()
        .map(|k| {
            (
                edits(suffix.as_bytes(), &k.name.as_bytes()[PREFIX.len()..]),
                k.name,
            )
        })
        .filter(|&(d, _)| d <= allowed)
        .min_by_key(|&(d, _)| d)
        .map(|(_, known)| known)
}

/// Edits (insertions, deletions, substitutions, swaps of neighbours) that turn `a` into `b`.
fn edits(a: &[u8], b: &[u8]) -> usize {
    let width = b.len() + 1;
    // Three rows of the distance matrix: two back, one back, current.
    let mut rows = vec![vec![0usize; width]; 3];
    for (j, cell) in rows[1].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[2][0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[1][j] + 1)
                .min(rows[2][j - 1] + 1)
                .min(rows[1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[0][j - 2] + 1);
            }
            rows[2][j] = d;
        }
        rows.rotate_left(1);
    }
    rows[1][b.len()]
}

/// Names of this process's environment variables that carry the `MPICD_` prefix.
fn env_names() -> Vec<String> {
    std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .filter(|name| name.starts_with(PREFIX))
        .collect()
}

/// Prints one line on stderr per unknown `MPICD_*` variable of the environment, the first
/// time it is called in this process.
pub fn warn_unknown_once() {
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        let names = env_names();
        for u in unknown(names.iter().map(String::as_str)) {
            eprintln!("mpicd: warning: {u} (mpicd-info --doc lists them)");
        }
    });
}

#[cfg(test)]
mod tests;
