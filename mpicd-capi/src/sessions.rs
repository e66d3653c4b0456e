//! Sessions (MPI 4.1 section 11.3): the table of session handles, `MPI_Session_init` and
//! `_finalize` (users of the runtime, see `env.rs`), the process sets `mpi://WORLD` and
//! `mpi://SELF` (`_get_num_psets`, `_get_nth_pset`, `_get_pset_info`,
//! `MPI_Group_from_session_pset`), `_get_info`, and a session's error handler
//! (`MPI_Session_create_errhandler`, `_set_`, `_get_`, `_call_errhandler`). Communicators are
//! made from a session's groups by `comm_from_group.rs`.
//!
//! Every thread level is provided (the engine serializes the calls); a session's info says
//! the level it was asked for (`mpi_thread_support_level`, and MPI 4.0's `thread_level`), or
//! MPI_THREAD_MULTIPLE if none was (the standard leaves the default to the implementation: a
//! library that starts its session from any thread can count on it, as MPICH's can).

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, read_arg, require};
use crate::errhandlers::{self, ObjKind, UserFn};
use crate::errors::{fail, raise, run, write_c_string, CResult, Errh};
use crate::handles::{Table, SESSION_BASE};
use mpicd::session::PROCESS_SETS;
use mpicd::Info;
use std::ffi::{c_char, c_int, CStr};

/// A live session: the runtime it uses, its error handler and its info.
struct SessionEntry {
    core: mpicd::Session,
    errh: Errh,
    info: Info,
}

static SESSIONS: Table<SessionEntry> = Table::new(SESSION_BASE);

/// The info keys of a session's thread level (MPI 4.1's, then MPI 4.0's).
const THREAD_KEYS: [&str; 2] = ["mpi_thread_support_level", "thread_level"];
const LEVELS: [&str; 4] = [
    "MPI_THREAD_SINGLE",
    "MPI_THREAD_FUNNELED",
    "MPI_THREAD_SERIALIZED",
    "MPI_THREAD_MULTIPLE",
];

/// Forgets every session (the runtime was finalized).
pub(crate) fn forget_all() {
    for s in SESSIONS.drain() {
        errhandlers::release(s.errh);
    }
}

pub(crate) fn invalid() -> crate::errors::Fail {
    fail(
        MPI_ERR_SESSION,
        "MPI_SESSION_NULL, or an unknown or finalized session",
    )
}

/// The error handler of session `h` (the default one for an invalid handle).
pub(crate) fn errh(h: MPI_Session) -> Errh {
    SESSIONS
        .with(h as usize, |s| s.errh.bound_to(h as usize))
        .unwrap_or_else(default_errh)
}

/// Runs a call on session `h` under its error handler, with its runtime handle.
pub(crate) fn run_on(
    name: &'static str,
    h: MPI_Session,
    body: impl FnOnce(&mpicd::Session) -> CResult<()>,
) -> c_int {
    run(name, errh(h), |_| {
        let core = SESSIONS
            .with(h as usize, |s| s.core.clone())
            .ok_or_else(invalid)?;
        body(&core)
    })
}

/// A C string argument of at most `max` bytes before its NUL.
///
/// # Safety
/// `ptr` is null or a NUL-terminated string.
pub(crate) unsafe fn string_arg(ptr: *const c_char, max: c_int, what: &str) -> CResult<String> {
    require(ptr, what)?;
    // SAFETY: non-null; MPI requires a NUL-terminated string.
    let text = unsafe { CStr::from_ptr(ptr) };
    if text.to_bytes().len() >= max as usize {
        return Err(fail(
            MPI_ERR_ARG,
            format!("{what} is longer than {} bytes", max - 1),
        ));
    }
    Ok(text.to_string_lossy().into_owned())
}

/// Starts a session (and the runtime, if no session nor the world model runs), whose errors
/// go to `errhandler`. `info` may ask for a thread level (`mpi_thread_support_level` or
/// `thread_level`: "MPI_THREAD_SINGLE" ... "MPI_THREAD_MULTIPLE"); every level is provided,
/// MPI_THREAD_MULTIPLE where none is asked for.
/// A session may start before MPI_Init, or after MPI_Finalize; after the last user of the
/// runtime ended, a new one starts, which every process of the job must then start too.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_init(
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    session: *mut MPI_Session,
) -> c_int {
    let given = errhandlers::resolve_for(errhandler, ObjKind::Session);
    run(
        "Session_init",
        given.clone().unwrap_or_else(|_| default_errh()),
        |_| {
            let handler = given?;
            require(session, "session")?;
            let mut level = LEVELS[3];
            if info != MPI_INFO_NULL {
                crate::info::with(info, |i| {
                    for key in THREAD_KEYS {
                        if let Ok(Some(v)) = i.get(key) {
                            level = LEVELS
                                .iter()
                                .find(|l| l.as_bytes().eq_ignore_ascii_case(v))
                                .ok_or_else(|| {
                                    fail(
                                        MPI_ERR_INFO_VALUE,
                                        format!("{key} is not one of {}", LEVELS.join(", ")),
                                    )
                                })?;
                        }
                    }
                    Ok::<(), crate::errors::Fail>(())
                })??;
            }
            let mut kept = Info::new();
            for key in THREAD_KEYS {
                kept.set(key, level)?;
            }
            // A session's threads may call MPI beside the world model's.
            crate::pinned::allow_concurrent_calls();
            let core = crate::env::start_session()?;
            errhandlers::retain(handler);
            let h = SESSIONS.insert(SessionEntry {
                core,
                errh: handler,
                info: kept,
            });
            out(session, h as MPI_Session)
        },
    )
}

/// Ends a session and sets the handle to MPI_SESSION_NULL, once the buffered sends from its
/// buffer completed (the buffer is then detached); the last user of the runtime finalizes it
/// (its pending operations are then reported as MPI_ERR_PENDING). Free the session's
/// communicators and groups first.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_finalize(session: *mut MPI_Session) -> c_int {
    let h = if session.is_null() {
        MPI_SESSION_NULL
    } else {
        // SAFETY: non-null; MPI requires a valid pointer.
        unsafe { *session }
    };
    run("Session_finalize", errh(h), |_| {
        SESSIONS.with(h as usize, |_| ()).ok_or_else(invalid)?;
        crate::bsend::release(crate::bsend::Owner::Session(h as usize));
        let entry = SESSIONS.remove(h as usize).ok_or_else(invalid)?;
        errhandlers::release(entry.errh);
        out(session, MPI_SESSION_NULL)?;
        crate::env::end_session()
    })
}

/// The number of process sets: 2 (`mpi://WORLD`, `mpi://SELF`). `info` (which may be
/// MPI_INFO_NULL) asks for nothing mpicd knows.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_get_num_psets(
    session: MPI_Session,
    info: MPI_Info,
    npset_names: *mut c_int,
) -> c_int {
    run_on("Session_get_num_psets", session, |_| {
        check_info(info)?;
        out(npset_names, PROCESS_SETS.len() as c_int)
    })
}

/// The name of process set `n` (0: `mpi://WORLD`, 1: `mpi://SELF`). With `*pset_len` 0 only
/// its length (its NUL included) is set; else up to `*pset_len` bytes (the NUL included) are
/// written to `pset_name` and `*pset_len` is set to the name's whole length.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_get_nth_pset(
    session: MPI_Session,
    info: MPI_Info,
    n: c_int,
    pset_len: *mut c_int,
    pset_name: *mut c_char,
) -> c_int {
    run_on("Session_get_nth_pset", session, |_| {
        check_info(info)?;
        let room = read_arg(pset_len, "pset_len")?;
        let name = usize::try_from(n)
            .ok()
            .and_then(|n| PROCESS_SETS.get(n))
            .ok_or_else(|| fail(MPI_ERR_ARG, format!("no process set {n}")))?;
        if room > 0 {
            require(pset_name, "pset_name")?;
            // SAFETY: MPI requires `*pset_len` writable bytes at `pset_name`.
            unsafe { write_c_string(pset_name, room as usize, name) };
        } else if room < 0 {
            return Err(fail(MPI_ERR_ARG, format!("negative pset_len {room}")));
        }
        out(pset_len, name.len() as c_int + 1)
    })
}

fn check_info(info: MPI_Info) -> CResult<()> {
    match info {
        MPI_INFO_NULL => Ok(()),
        h => crate::info::with(h, |_| ()),
    }
}

/// A new info object with the session's hints: its thread level (see [`MPI_Session_init`]).
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_get_info(
    session: MPI_Session,
    info_used: *mut MPI_Info,
) -> c_int {
    run_on("Session_get_info", session, |_| {
        require(info_used, "info_used")?;
        let info = SESSIONS
            .with(session as usize, |s| s.info.clone())
            .ok_or_else(invalid)?;
        out(info_used, crate::info::insert(info))
    })
}

/// A new info object about a process set: `mpi_size`, its number of processes. An unknown
/// name fails with MPI_ERR_ARG.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_get_pset_info(
    session: MPI_Session,
    pset_name: *const c_char,
    info: *mut MPI_Info,
) -> c_int {
    run_on("Session_get_pset_info", session, |core| {
        require(info, "info")?;
        let group = pset_group(core, pset_name)?;
        let mut about = Info::new();
        about.set("mpi_size", group.size().to_string())?;
        out(info, crate::info::insert(about))
    })
}

/// The group of process set `pset_name` (`mpi://WORLD` or `mpi://SELF`, in any case); an
/// unknown name fails with MPI_ERR_ARG.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_from_session_pset(
    session: MPI_Session,
    pset_name: *const c_char,
    newgroup: *mut MPI_Group,
) -> c_int {
    run_on("Group_from_session_pset", session, |core| {
        require(newgroup, "newgroup")?;
        let group = pset_group(core, pset_name)?;
        out(
            newgroup,
            crate::groups::insert(group, Some(session as usize)),
        )
    })
}

fn pset_group(core: &mpicd::Session, pset_name: *const c_char) -> CResult<mpicd::Group> {
    // SAFETY: MPI requires a NUL-terminated string.
    let name = unsafe { string_arg(pset_name, MPI_MAX_PSET_NAME_LEN, "pset_name") }?;
    core.pset_group(&name)
        .ok_or_else(|| fail(MPI_ERR_ARG, format!("no process set named \"{name}\"")))
}

/// A new error handler for sessions that calls `session_errhandler_fn` with a pointer to the
/// session's handle and a pointer to the error code.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_create_errhandler(
    session_errhandler_fn: MPI_Session_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run("Session_create_errhandler", default_errh(), |_| {
        let f = session_errhandler_fn.ok_or_else(|| fail(MPI_ERR_ARG, "null function"))?;
        require(errhandler, "errhandler")?;
        out(errhandler, errhandlers::create(UserFn::Session(f)))
    })
}

/// Attaches an error handler (predefined, or made by MPI_Session_create_errhandler) to a
/// session.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_set_errhandler(
    session: MPI_Session,
    errhandler: MPI_Errhandler,
) -> c_int {
    run_on("Session_set_errhandler", session, |_| {
        let new = errhandlers::resolve_for(errhandler, ObjKind::Session)?;
        errhandlers::retain(new);
        let Some(old) = SESSIONS.with(session as usize, |s| std::mem::replace(&mut s.errh, new))
        else {
            errhandlers::release(new);
            return Err(invalid());
        };
        errhandlers::release(old);
        Ok(())
    })
}

/// The error handler of a session (a user handler's handle counts as a reference: free it
/// with MPI_Errhandler_free).
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_get_errhandler(
    session: MPI_Session,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run_on("Session_get_errhandler", session, |_| {
        require(errhandler, "errhandler")?;
        let e = errh(session);
        errhandlers::retain(e);
        out(errhandler, e.handle())
    })
}

/// Applies the session's error handler to `errorcode`, as if a call on the session had
/// failed with it; MPI_SUCCESS when the handler returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_call_errhandler(
    session: MPI_Session,
    errorcode: c_int,
) -> c_int {
    run_on("Session_call_errhandler", session, |_| {
        let what = fail(errorcode, "raised by MPI_Session_call_errhandler");
        raise("Session_call_errhandler", errh(session), what);
        Ok(())
    })
}
