//! Error handlers: the table of user error handlers (`MPI_Comm_create_errhandler`; reference
//! counted, so a handler lives while a handle or a communicator uses it), attaching handlers
//! to communicators (`MPI_Comm_set_errhandler`, `MPI_Comm_get_errhandler`),
//! `MPI_Comm_call_errhandler` and `MPI_Errhandler_free`. [`crate::errors::raise`] applies them.
//!
//! Which handler an error goes to (MPI 4.1 section 9.3):
//! - a call on a communicator: that communicator's (a new communicator inherits its parent's);
//! - a call on a request or a message: its communicator's, as it was when the request or the
//!   message was made;
//! - errors tied to no object (datatypes, ops, groups, info, error codes, an invalid
//!   communicator handle): MPI_COMM_SELF's, as MPI 4 says; but as long as only MPI_COMM_WORLD's
//!   handler was ever set, MPI_COMM_WORLD's, which is what MPI 3.1 said and what MPICH keeps
//!   for the programs written for it;
//! - before `MPI_Init` and after `MPI_Finalize`: the initial handler, MPI_ERRORS_ARE_FATAL.
//!
//! Sessions have theirs (`sessions.rs`), windows theirs (`win/`), files theirs (`file/`): a
//! [`UserFn`] variant for their `MPI_<X>_errhandler_function`, made by
//! `MPI_<X>_create_errhandler`, checked by [`resolve_for`] when `MPI_<X>_set_errhandler` attaches
//! it, and called by [`UserErrh::call`] with the object's handle.

use crate::abi::*;
use crate::comms::{self, default_errh, run_on, COMMS};
use crate::env::{check_live, out, read_arg};
use crate::errors::{fail, raise, run, CResult, Errh};
use crate::handles::{Table, ERRHANDLER_BASE};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

/// The C function of a user error handler, by the kind of object it handles.
#[derive(Debug, Clone, Copy)]
pub(crate) enum UserFn {
    Comm(unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...)),
    Session(unsafe extern "C" fn(*mut MPI_Session, *mut c_int, ...)),
    Win(unsafe extern "C" fn(*mut MPI_Win, *mut c_int, ...)),
    File(unsafe extern "C" fn(*mut MPI_File, *mut c_int, ...)),
}

/// The kinds of object a user error handler is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjKind {
    Comm,
    Session,
    Win,
    File,
}

impl UserFn {
    fn kind(self) -> ObjKind {
        match self {
            UserFn::Comm(_) => ObjKind::Comm,
            UserFn::Session(_) => ObjKind::Session,
            UserFn::Win(_) => ObjKind::Win,
            UserFn::File(_) => ObjKind::File,
        }
    }
}

/// A user error handler attached to an object: its handle (what `MPI_Comm_get_errhandler`
/// gives), its function (kept here, so that an error is handled even after the handle was
/// freed) and the handle value of the object whose errors it handles.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserErrh {
    pub handle: usize,
    pub func: UserFn,
    pub obj: usize,
}

impl UserErrh {
    /// Calls the user's function on error `code` of the object.
    pub(crate) fn call(&self, code: c_int) {
        let mut code = code;
        match self.func {
            UserFn::Comm(f) => {
                let mut comm = self.obj as MPI_Comm;
                // SAFETY: `f` is the function the user gave MPI_Comm_create_errhandler, of type
                // MPI_Comm_errhandler_function; both pointers are valid for the call.
                unsafe { f(&mut comm, &mut code) }
            }
            UserFn::Session(f) => {
                let mut session = self.obj as MPI_Session;
                // SAFETY: as above, with MPI_Session_create_errhandler's function.
                unsafe { f(&mut session, &mut code) }
            }
            UserFn::Win(f) => {
                let mut win = self.obj as MPI_Win;
                // SAFETY: as above, with MPI_Win_create_errhandler's function.
                unsafe { f(&mut win, &mut code) }
            }
            UserFn::File(f) => {
                let mut file = self.obj as MPI_File;
                // SAFETY: as above, with MPI_File_create_errhandler's function.
                unsafe { f(&mut file, &mut code) }
            }
        }
    }
}

/// A user error handler: its function and the references to it (the user's handle, each
/// communicator it is attached to, each handle `MPI_Comm_get_errhandler` gave out).
struct Handler {
    func: UserFn,
    refs: usize,
}

static HANDLERS: Table<Handler> = Table::new(ERRHANDLER_BASE);

/// Whether a handler was set on MPI_COMM_SELF and on MPI_COMM_WORLD (see the module doc).
static SET_ON_SELF: AtomicBool = AtomicBool::new(false);
static SET_ON_WORLD: AtomicBool = AtomicBool::new(false);

/// The communicator whose handler takes the errors tied to no object (see the module doc).
pub(crate) fn unbound_errors_comm() -> MPI_Comm {
    if SET_ON_WORLD.load(Ordering::Relaxed) && !SET_ON_SELF.load(Ordering::Relaxed) {
        MPI_COMM_WORLD
    } else {
        MPI_COMM_SELF
    }
}

/// The handler of handle `h` for an object of `kind`, not yet bound to an object: a
/// predefined handler, or a user's made for that kind (MPI_ERR_ARG for another kind).
pub(crate) fn resolve_for(h: MPI_Errhandler, kind: ObjKind) -> CResult<Errh> {
    let e = resolve(h)?;
    match e {
        Errh::User(u) if u.func.kind() != kind => Err(fail(
            MPI_ERR_ARG,
            format!(
                "an error handler made for {:?} objects, not {kind:?} ones",
                u.func.kind()
            ),
        )),
        _ => Ok(e),
    }
}

/// The handler of handle `h`, not yet bound to an object, whatever its kind.
fn resolve(h: MPI_Errhandler) -> CResult<Errh> {
    if let Some(e) = Errh::from_handle(h) {
        return Ok(e);
    }
    if h == MPI_ERRHANDLER_NULL {
        return Err(fail(
            MPI_ERR_ERRHANDLER,
            "MPI_ERRHANDLER_NULL is not an error handler",
        ));
    }
    let func = HANDLERS
        .with(h as usize, |e| e.func)
        .ok_or_else(|| fail(MPI_ERR_ERRHANDLER, "unknown or freed error handler"))?;
    Ok(Errh::User(UserErrh {
        handle: h as usize,
        func,
        obj: 0,
    }))
}

/// A new user error handler calling `func` (the create_errhandler calls of each kind).
pub(crate) fn create(func: UserFn) -> MPI_Errhandler {
    HANDLERS.insert(Handler { func, refs: 1 }) as MPI_Errhandler
}

/// Counts one more use of `e` (nothing for the predefined handlers).
pub(crate) fn retain(e: Errh) {
    if let Errh::User(u) = e {
        HANDLERS.with(u.handle, |h| h.refs += 1);
    }
}

/// Counts one use of `e` less; the last one frees the handler.
pub(crate) fn release(e: Errh) {
    if let Errh::User(u) = e {
        release_handle(u.handle);
    }
}

/// Drops a reference to the user handler of handle value `h`; false if there is none.
fn release_handle(h: usize) -> bool {
    let left = HANDLERS.with(h, |e| {
        e.refs = e.refs.saturating_sub(1);
        e.refs
    });
    if left == Some(0) {
        HANDLERS.remove(h);
    }
    left.is_some()
}

/// A new error handler for communicators that calls `comm_errhandler_fn` with a pointer to the
/// communicator's handle and a pointer to the error code.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_errhandler(
    comm_errhandler_fn: MPI_Comm_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run("Comm_create_errhandler", default_errh(), |_| {
        check_live()?;
        let f = comm_errhandler_fn.ok_or_else(|| fail(MPI_ERR_ARG, "null function"))?;
        if errhandler.is_null() {
            return Err(fail(MPI_ERR_ARG, "null errhandler"));
        }
        let h = HANDLERS.insert(Handler {
            func: UserFn::Comm(f),
            refs: 1,
        });
        out(errhandler, h as MPI_Errhandler)
    })
}

/// Attaches an error handler (predefined or made by `MPI_Comm_create_errhandler`) to `comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_errhandler(
    comm: MPI_Comm,
    errhandler: MPI_Errhandler,
) -> c_int {
    // Not `run_on`: this local call also works on the handle of an MPI_Comm_idup in flight.
    run("Comm_set_errhandler", comms::errh(comm), |_| {
        check_live()?;
        let new = resolve_for(errhandler, ObjKind::Comm)?;
        retain(new);
        let old = COMMS
            .with(comm as usize, |e| std::mem::replace(&mut e.errh, new))
            .or_else(|| crate::comm_dup::replace_pending_errh(comm, new));
        let Some(old) = old else {
            release(new);
            return Err(fail(MPI_ERR_COMM, "unknown or freed communicator"));
        };
        release(old);
        match comm {
            MPI_COMM_SELF => SET_ON_SELF.store(true, Ordering::Relaxed),
            MPI_COMM_WORLD => SET_ON_WORLD.store(true, Ordering::Relaxed),
            _ => {}
        }
        if comm == MPI_COMM_SELF || comm == MPI_COMM_WORLD {
            comms::refresh_default_errh();
        }
        Ok(())
    })
}

/// The error handler of `comm`. A user handler's handle counts as a reference: free it with
/// `MPI_Errhandler_free` (freeing a predefined one is allowed too, and does nothing).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_errhandler(
    comm: MPI_Comm,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run("Comm_get_errhandler", comms::errh(comm), |_| {
        check_live()?;
        if COMMS.with(comm as usize, |_| ()).is_none()
            && crate::comm_dup::pending_errh(comm).is_none()
        {
            return Err(fail(MPI_ERR_COMM, "unknown or freed communicator"));
        }
        if errhandler.is_null() {
            return Err(fail(MPI_ERR_ARG, "null errhandler"));
        }
        let e = comms::errh(comm);
        retain(e);
        out(errhandler, e.handle())
    })
}

/// Applies `comm`'s error handler to `errorcode`, as if a call on `comm` had failed with it:
/// a user handler is called, MPI_ERRORS_RETURN does nothing, MPI_ERRORS_ARE_FATAL and
/// MPI_ERRORS_ABORT end the job. Returns MPI_SUCCESS when the handler returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> c_int {
    run_on("Comm_call_errhandler", comm, |_| {
        let what = fail(errorcode, "raised by MPI_Comm_call_errhandler");
        raise("Comm_call_errhandler", comms::errh(comm), what);
        Ok(())
    })
}

/// Frees an error handler handle and sets it to MPI_ERRHANDLER_NULL. The handler itself lives
/// on while communicators use it. The predefined handlers stay valid (freeing them is allowed
/// and does nothing); MPI_ERRHANDLER_NULL or an unknown handle fails with MPI_ERR_ERRHANDLER.
#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_free(errhandler: *mut MPI_Errhandler) -> c_int {
    run("Errhandler_free", default_errh(), |_| {
        check_live()?;
        let h = read_arg(errhandler, "errhandler")?;
        if Errh::from_handle(h).is_none() {
            if h == MPI_ERRHANDLER_NULL {
                return Err(fail(
                    MPI_ERR_ERRHANDLER,
                    "MPI_ERRHANDLER_NULL cannot be freed",
                ));
            }
            if !release_handle(h as usize) {
                return Err(fail(MPI_ERR_ERRHANDLER, "unknown or freed error handler"));
            }
        }
        out(errhandler, MPI_ERRHANDLER_NULL)
    })
}
