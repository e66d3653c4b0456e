//! Communicator handles: the table (with MPI_COMM_WORLD and MPI_COMM_SELF at their predefined
//! values), each communicator's error handler, and the communicator calls, on intra- and
//! inter-communicators (those that make and merge inter-communicators are in `intercomm.rs`).

use crate::abi::*;
use crate::env::{check_live, new_comm_out, out, require};
use crate::errors::{fail, run, write_c_string, CResult, Errh};
use crate::handles::{Table, COMM_BASE};
use mpicd::topology::Topology;
use mpicd::{Communicator, Comparison, Info, SplitType};
use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// A live communicator, its error handler, the name MPI_Comm_set_name gave it, its process
/// topology (`topo.rs`), its info hints (`comm_dup.rs`) and the session it derives from.
pub(crate) struct CommEntry {
    pub comm: Arc<Communicator>,
    pub errh: Errh,
    pub name: Option<String>,
    pub topo: Option<Arc<Topology>>,
    pub info: Info,
    /// The session (its handle value) whose group made this communicator, or the communicator
    /// it was made from; none in the world model. Buffered sends use that session's buffer
    /// when the communicator has none (`bsend.rs`).
    pub session: Option<usize>,
}

impl CommEntry {
    pub(crate) fn new(comm: Arc<Communicator>, errh: Errh) -> CommEntry {
        CommEntry {
            comm,
            errh,
            name: None,
            topo: None,
            info: Info::new(),
            session: None,
        }
    }
}

pub(crate) static COMMS: Table<CommEntry> = Table::new(COMM_BASE);

/// The communicator of a handle.
pub(crate) fn get(h: MPI_Comm) -> CResult<Arc<Communicator>> {
    check_live()?;
    if h == MPI_COMM_NULL || h.is_null() {
        return Err(fail(MPI_ERR_COMM, "MPI_COMM_NULL is not a communicator"));
    }
    match COMMS.with(h as usize, |e| Arc::clone(&e.comm)) {
        Some(comm) => Ok(comm),
        // A communicator of MPI_Comm_idup enters the table at its first use after completion.
        None => crate::comm_dup::materialize(h),
    }
}

/// The error handler of errors not tied to a communicator: MPI_COMM_SELF's (or
/// MPI_COMM_WORLD's, see `errhandlers.rs`), MPI_ERRORS_ARE_FATAL before init and after
/// finalize.
pub(crate) fn default_errh() -> Errh {
    match DEFAULT_ERRH.load(Ordering::Relaxed) {
        PREDEFINED_FATAL => Errh::Fatal,
        PREDEFINED_RETURN => Errh::Return,
        PREDEFINED_ABORT => Errh::Abort,
        _ => looked_up_default_errh(),
    }
}

/// [`default_errh`] when it is a predefined handler, so that the calls on no object (waits,
/// tests) find it without a table lookup; [`LOOK_UP`] for a user's handler. Refreshed by
/// [`refresh_default_errh`] whenever the handler of MPI_COMM_WORLD or MPI_COMM_SELF changes.
static DEFAULT_ERRH: AtomicU8 = AtomicU8::new(LOOK_UP);
const LOOK_UP: u8 = 0;
const PREDEFINED_FATAL: u8 = 1;
const PREDEFINED_RETURN: u8 = 2;
const PREDEFINED_ABORT: u8 = 3;

fn looked_up_default_errh() -> Errh {
    let h = crate::errhandlers::unbound_errors_comm() as usize;
    COMMS.with(h, |e| e.errh.bound_to(h)).unwrap_or(Errh::Fatal)
}

/// Records [`default_errh`] anew: after init, finalize, or a change of the handler of
/// MPI_COMM_WORLD or MPI_COMM_SELF.
pub(crate) fn refresh_default_errh() {
    let code = match looked_up_default_errh() {
        Errh::Fatal => PREDEFINED_FATAL,
        Errh::Return => PREDEFINED_RETURN,
        Errh::Abort => PREDEFINED_ABORT,
        Errh::User(_) => LOOK_UP,
    };
    DEFAULT_ERRH.store(code, Ordering::Relaxed);
}

/// The error handler of `h`, or the default one for an invalid handle.
pub(crate) fn errh(h: MPI_Comm) -> Errh {
    COMMS
        .with(h as usize, |e| e.errh.bound_to(h as usize))
        .or_else(|| crate::comm_dup::pending_errh(h))
        .unwrap_or_else(default_errh)
}

/// Runs a call on communicator `comm` under its error handler.
pub(crate) fn run_on(
    name: &'static str,
    comm: MPI_Comm,
    body: impl FnOnce(Arc<Communicator>) -> CResult<()>,
) -> c_int {
    run_on_with(name, comm, |c, _| body(c))
}

/// [`run_on`], the body also given the communicator's error handler (what a request it makes
/// reports its failures to), found in the same lookup.
pub(crate) fn run_on_with(
    name: &'static str,
    comm: MPI_Comm,
    body: impl FnOnce(Arc<Communicator>, Errh) -> CResult<()>,
) -> c_int {
    // The usual case in one lookup: a live communicator's handler and object.
    let live = crate::env::check_live().ok().and_then(|()| {
        COMMS.with(comm as usize, |e| {
            (e.errh.bound_to(comm as usize), Arc::clone(&e.comm))
        })
    });
    match live {
        Some((errh, c)) => run(name, errh, |_| body(c, errh)),
        None => {
            let errh = errh(comm);
            run(name, errh, |_| body(get(comm)?, errh))
        }
    }
}

/// The handle of a communicator made from `parent`: it takes `parent`'s error handler and
/// the session `parent` derives from (every constructor with a parent comes here).
pub(crate) fn insert(comm: Communicator, parent: MPI_Comm) -> MPI_Comm {
    insert_with(comm, parent, None)
}

/// [`insert`], with the new communicator's topology.
pub(crate) fn insert_with(
    comm: Communicator,
    parent: MPI_Comm,
    topo: Option<Arc<Topology>>,
) -> MPI_Comm {
    insert_new(comm, errh(parent), session_of(parent), topo)
}

/// The handle of a new communicator with error handler `errh`, deriving from `session`.
pub(crate) fn insert_new(
    comm: Communicator,
    errh: Errh,
    session: Option<usize>,
    topo: Option<Arc<Topology>>,
) -> MPI_Comm {
    let mut entry = CommEntry::new(Arc::new(comm), errh);
    entry.topo = topo;
    entry.session = session;
    crate::errhandlers::retain(errh); // the new communicator uses its handler
    COMMS.insert(entry) as MPI_Comm
}

/// The session `comm` derives from (see [`CommEntry::session`]).
pub(crate) fn session_of(comm: MPI_Comm) -> Option<usize> {
    COMMS
        .with(comm as usize, |e| e.session)
        .or_else(|| crate::comm_dup::pending_session(comm))
        .flatten()
}

/// This process's rank in `comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
    run_on("Comm_rank", comm, |c| out(rank, c.rank()))
}

/// The number of processes in `comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    run_on("Comm_size", comm, |c| out(size, c.size()))
}

/// A new communicator with the same group (collective); it inherits the error handler, the
/// topology, the info hints and the attributes that their copy callbacks copy (if one fails, so does the dup,
/// with its code, and `*newcomm` is MPI_COMM_NULL). The dup of an inter-communicator is an inter-communicator with the same two groups.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    run_on("Comm_dup", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let dup = c.dup()?;
        let (topo, info) = COMMS
            .with(comm as usize, |e| (e.topo.clone(), e.info.clone()))
            .unwrap_or_default();
        let made = insert_with(dup, comm, topo);
        COMMS.with(made as usize, |e| e.info = info);
        // Attributes (attrs/comm.rs): the copy callbacks; a failed one frees `made`.
        if let Err(e) = crate::attrs::comm::inherit(comm, made) {
            let _ = out(newcomm, MPI_COMM_NULL);
            return Err(e);
        }
        out(newcomm, made)
    })
}

/// Splits by color, ordered by key (collective); MPI_UNDEFINED gives MPI_COMM_NULL. On an
/// inter-communicator each group splits, and a color's processes in one group are joined to
/// the other group's of that color (MPI_COMM_NULL if the other group has none).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Comm_split", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        if color < 0 && color != MPI_UNDEFINED {
            return Err(fail(MPI_ERR_ARG, format!("negative color {color}")));
        }
        let color = if color == MPI_UNDEFINED {
            mpicd::UNDEFINED
        } else {
            color
        };
        let made = match c.split(color, key)? {
            Some(split) => insert(split, comm),
            None => MPI_COMM_NULL,
        };
        out(newcomm, made)
    })
}

/// Splits by where the processes run (collective): MPI_COMM_TYPE_SHARED groups the processes
/// of each node; MPI_COMM_TYPE_HW_GUIDED and MPI_COMM_TYPE_RESOURCE_GUIDED do so for the info
/// hint `mpi_hw_resource_type` = `mpi_shared_memory` and give MPI_COMM_NULL for other hints;
/// MPI_COMM_TYPE_HW_UNGUIDED gives the node's processes if they are fewer than `comm`'s (and
/// sets that hint in `info`), else MPI_COMM_NULL; MPI_UNDEFINED gives MPI_COMM_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Comm_split_type", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        // The hint `mpi_hw_resource_type` = `mpi_shared_memory` (and a check of the handle).
        let shared_hint = info != MPI_INFO_NULL
            && crate::info::with(info, |i| {
                i.get(HW_RESOURCE_TYPE)
                    .map(|v| v == Some(SHARED_MEMORY.as_bytes()))
            })??;
        let kind = match split_type {
            MPI_COMM_TYPE_SHARED => SplitType::Shared,
            MPI_COMM_TYPE_HW_UNGUIDED => SplitType::SharedStrict,
            MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED if shared_hint => {
                SplitType::Shared
            }
            MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED | MPI_UNDEFINED => {
                SplitType::Undefined
            }
            other => return Err(fail(MPI_ERR_ARG, format!("unknown split_type {other}"))),
        };
        let made = match c.split_type(kind, key)? {
            Some(split) => {
                if kind == SplitType::SharedStrict && info != MPI_INFO_NULL {
                    // The standard asks to say which resource the split followed.
                    let _ = crate::info::with_mut(info, |i| i.set(HW_RESOURCE_TYPE, SHARED_MEMORY));
                }
                insert(split, comm)
            }
            None => MPI_COMM_NULL,
        };
        out(newcomm, made)
    })
}

/// The info key of MPI_Comm_split_type's hardware hints, and its standard value for shared
/// memory.
const HW_RESOURCE_TYPE: &str = "mpi_hw_resource_type";
const SHARED_MEMORY: &str = "mpi_shared_memory";

/// A communicator of `group`'s members (collective over `comm`, whose subgroup `group` must
/// be; processes may pass disjoint groups); MPI_COMM_NULL for processes not in their group.
/// On an inter-communicator, each group's members pass the same subgroup of their own group,
/// and the result is an inter-communicator between the two subgroups (MPI_COMM_NULL where
/// either is empty).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(
    comm: MPI_Comm,
    group: MPI_Group,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Comm_create", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let g = crate::groups::get(group)?;
        let made = match c.create(&g)? {
            Some(created) => insert(created, comm),
            None => MPI_COMM_NULL,
        };
        out(newcomm, made)
    })
}

/// A communicator of `group`'s members, made by them alone (collective over `group`, a
/// subgroup of `comm`'s; concurrent calls on `comm` use different tags); MPI_COMM_NULL, at
/// once, for a process not in `group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Comm_create_group", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let g = crate::groups::get(group)?;
        let made = match c.create_group(&g, tag)? {
            Some(created) => insert(created, comm),
            None => MPI_COMM_NULL,
        };
        out(newcomm, made)
    })
}

/// Frees a communicator and sets the handle to MPI_COMM_NULL; pending operations complete.
/// Its attributes are deleted first, the last set first (if a delete callback fails, so does
/// the free, with its code).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut MPI_Comm) -> c_int {
    let h = if comm.is_null() {
        MPI_COMM_NULL
    } else {
        // SAFETY: non-null; MPI requires a valid pointer.
        unsafe { *comm }
    };
    run_on("Comm_free", h, |_| {
        if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
            return Err(fail(
                MPI_ERR_COMM,
                "predefined communicators cannot be freed",
            ));
        }
        // Attributes (attrs/comm.rs): the delete callbacks run while `h` is still valid.
        crate::attrs::comm::release(h)?;
        if let Some(entry) = COMMS.remove(h as usize) {
            crate::errhandlers::release(entry.errh);
        }
        out(comm, MPI_COMM_NULL)
    })
}

/// MPI_IDENT (same handle), MPI_CONGRUENT (same members in the same order), MPI_SIMILAR (same
/// members) or MPI_UNEQUAL; two inter-communicators compare by both their local and their
/// remote groups, and an inter-communicator is unequal to any intra-communicator.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_compare(
    comm1: MPI_Comm,
    comm2: MPI_Comm,
    result: *mut c_int,
) -> c_int {
    run_on("Comm_compare", comm1, |a| {
        let b = get(comm2)?;
        let local = a.group().compare(&b.group());
        let both = match (a.remote_group(), b.remote_group()) {
            (None, None) => local,
            (Some(ra), Some(rb)) => match (local, ra.compare(&rb)) {
                (Comparison::Ident, Comparison::Ident) => Comparison::Ident,
                (Comparison::Unequal, _) | (_, Comparison::Unequal) => Comparison::Unequal,
                _ => Comparison::Similar,
            },
            _ => Comparison::Unequal,
        };
        let verdict = match both {
            _ if comm1 == comm2 => MPI_IDENT,
            Comparison::Ident => MPI_CONGRUENT,
            Comparison::Similar => MPI_SIMILAR,
            Comparison::Unequal => MPI_UNEQUAL,
        };
        out(result, verdict)
    })
}

/// Names a communicator (for printing; a dup does not inherit it). The name is cut to
/// MPI_MAX_OBJECT_NAME - 1 bytes when read.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> c_int {
    run_on("Comm_set_name", comm, |_| {
        require(comm_name, "comm_name")?;
        // SAFETY: non-null; MPI requires a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(comm_name) }
            .to_string_lossy()
            .into_owned();
        COMMS
            .with(comm as usize, |e| e.name = Some(name))
            .ok_or_else(|| fail(MPI_ERR_COMM, "unknown or freed communicator"))
    })
}

/// The name of a communicator: the one MPI_Comm_set_name gave it, else "MPI_COMM_WORLD" or
/// "MPI_COMM_SELF" for those, else the empty string; MPI_COMM_NULL is "MPI_COMM_NULL" (MPI-4.1
/// lets the get_name calls take the null handles). `comm_name` needs MPI_MAX_OBJECT_NAME
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_name(
    comm: MPI_Comm,
    comm_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    run("Comm_get_name", errh(comm), |_| {
        check_live()?;
        require(comm_name, "comm_name")?;
        require(resultlen, "resultlen")?;
        let given = match comm {
            MPI_COMM_NULL => Some("MPI_COMM_NULL".to_string()),
            _ => {
                get(comm)?;
                COMMS
                    .with(comm as usize, |e| e.name.clone())
                    .ok_or_else(|| fail(MPI_ERR_COMM, "unknown or freed communicator"))?
            }
        };
        let name = given.unwrap_or_else(|| {
            match comm {
                MPI_COMM_WORLD => "MPI_COMM_WORLD",
                MPI_COMM_SELF => "MPI_COMM_SELF",
                _ => "",
            }
            .to_string()
        });
        // SAFETY: MPI requires MPI_MAX_OBJECT_NAME writable bytes at `comm_name`.
        let n = unsafe { write_c_string(comm_name, MPI_MAX_OBJECT_NAME as usize, &name) };
        out(resultlen, n as c_int)
    })
}
